//! The answers of a tax registration that its ELSTER XML does not carry, for an operator to
//! enter in ELSTER's own questionnaire by hand (the case's `elster_xml.not_in_xml`, the summary
//! PDF's last section, the console's case page).
//!
//! An element is written only where a public source gives its name and place (docs/elster.md,
//! "Only what has a public source"): a wrong element makes ERiC refuse the whole document. What
//! the corporation's questionnaire asks and has no such element, what has an element but no
//! public value format (a loss, an address or a phone number abroad), and what the form needs
//! but the caller did not send is listed here, each with the portal's sub-page and line where
//! it is entered (`fse-kapg-portal-pages`, docs/elster.md "The questionnaire, sub-page by
//! sub-page").

use domain::gbr::GbrTaxRegistration;
use domain::tax::{
    AuthorizedRecipient, CommercialRegister, FormationType, PostalAddress, TaxAdvisor,
    TaxRegistration,
};
use serde::Serialize;

/// Why an answer is not in the XML.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ManualReason {
    /// No public source gives the element (or its children): the reference names it in its
    /// order lists at most.
    NoPublicElement,
    /// The element is public, the code for this answer is not (an in-kind formation).
    NoPublicCode,
    /// The element is public, the value's form is not (a loss, an address or number abroad).
    NoPublicFormat,
    /// The questionnaire asks for it and the request did not send it.
    NotGiven,
    /// The whole document's element names are ours (a partnership's): nothing in it is
    /// checked against a public source.
    UnverifiedDocument,
}

/// An answer for an operator to enter in ELSTER's portal by hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ManualEntry {
    /// The request field, e.g. `tax_advisor`.
    #[cfg_attr(feature = "openapi", schema(example = "tax_advisor"))]
    pub field: String,
    /// The answer as a clerk reads it (German formats); `null` when nothing was sent.
    #[cfg_attr(
        feature = "openapi",
        schema(example = "Steuerkanzlei Rhein, Rheinweg 3, 50667 Köln, Tel. +49 221 123456")
    )]
    pub value: Option<String>,
    /// The sub-page of ELSTER's questionnaire (fsekapg-202401) where it is entered.
    #[cfg_attr(feature = "openapi", schema(example = "5 Steuerliche Beratung"))]
    pub sub_page: String,
    /// Its line numbers there, where the portal numbers them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(example = "24-30"))]
    pub line: Option<String>,
    pub reason: ManualReason,
}

pub(crate) fn entry(
    field: impl Into<String>,
    value: Option<String>,
    sub_page: &str,
    line: Option<&str>,
    reason: ManualReason,
) -> ManualEntry {
    ManualEntry {
        field: field.into(),
        value,
        sub_page: sub_page.to_owned(),
        line: line.map(str::to_owned),
        reason,
    }
}

/// One line of an address as a clerk writes it: street, second line, postal code and place,
/// and the German country name abroad.
pub fn address_line(a: &PostalAddress) -> String {
    let mut parts = vec![a.street.trim().to_owned()];
    if let Some(second) = a.street_second_line.as_deref().map(str::trim)
        && !second.is_empty()
    {
        parts.push(second.to_owned());
    }
    parts.push(format!("{} {}", a.zip.trim(), a.city.trim()));
    if !a.country.is_germany() {
        parts.push(a.country.german_name().to_owned());
    }
    parts.join(", ")
}

/// Whole euros in German notation: `-20.000 €`.
pub(crate) fn euros(amount: i64) -> String {
    format!("{} €", domain::money::grouped_euros(amount))
}

fn with_phone(text: String, phone: Option<&str>) -> String {
    match phone {
        Some(p) => format!("{text}, Tel. {p}"),
        None => text,
    }
}

fn person(first: &str, last: &str, a: &PostalAddress, phone: Option<&str>) -> String {
    with_phone(format!("{first} {last}, {}", address_line(a)), phone)
}

fn firm(name: &str, a: &PostalAddress, phone: Option<&str>) -> String {
    with_phone(format!("{name}, {}", address_line(a)), phone)
}

/// What the corporation's XML leaves out of `reg`, in the questionnaire's order.
pub fn not_in_xml(reg: &TaxRegistration) -> Vec<ManualEntry> {
    use ManualReason::*;
    let mut out = Vec::new();
    // 1 Allgemeine Angaben: the seat (line 3; `SitzKapGes` has no public content).
    out.push(entry(
        "address.city",
        Some(reg.address.city.trim().to_owned()),
        "1 Allgemeine Angaben",
        Some("3"),
        NoPublicElement,
    ));
    if let Some(phone) = &reg.phone
        && !matches!(
            domain::phone::parts(phone),
            domain::phone::PhoneParts::German { .. }
        )
    {
        out.push(entry(
            "phone",
            Some(phone.clone()),
            "1 Allgemeine Angaben",
            None,
            NoPublicFormat,
        ));
    }
    if let Some(b) = &reg.po_box {
        out.push(entry(
            "po_box",
            Some(format!("Postfach {}, {} {}", b.number, b.zip, b.city)),
            "1 Allgemeine Angaben",
            Some("7"),
            NoPublicElement,
        ));
    }
    if let Some(own) = reg.manages_own_assets_only {
        out.push(entry(
            "manages_own_assets_only",
            Some(if own { "ja" } else { "nein" }.to_owned()),
            "1 Allgemeine Angaben",
            Some("14"),
            NoPublicElement,
        ));
    }
    if !reg.address.country.is_germany() {
        out.push(entry(
            "address",
            Some(address_line(&reg.address)),
            "1 Allgemeine Angaben",
            Some("4-6"),
            NoPublicFormat,
        ));
    }
    if let Some(a) = &reg.place_of_management {
        out.push(entry(
            "place_of_management",
            Some(address_line(a)),
            "2 Ort der Geschäftsleitung",
            Some("8-10"),
            NoPublicElement,
        ));
    }
    for (i, d) in reg.directors.iter().enumerate() {
        if !d.address.country.is_germany() {
            out.push(entry(
                format!("directors[{i}].address"),
                Some(address_line(&d.address)),
                "4 Gesetzlicher Vertreter",
                None,
                NoPublicFormat,
            ));
        }
    }
    if let Some(t) = &reg.tax_advisor {
        let value = match t {
            TaxAdvisor::Person(p) => {
                person(&p.first_name, &p.last_name, &p.address, p.phone.as_deref())
            }
            TaxAdvisor::Firm(f) => firm(&f.name, &f.address, f.phone.as_deref()),
        };
        out.push(entry(
            "tax_advisor",
            Some(value),
            "5 Steuerliche Beratung",
            Some("24-30"),
            NoPublicElement,
        ));
    }
    if let Some(r) = &reg.authorized_recipient {
        let value = match r {
            AuthorizedRecipient::TaxAdvisor => "die steuerliche Beratung (Seite 5)".to_owned(),
            AuthorizedRecipient::Person(p) => {
                person(&p.first_name, &p.last_name, &p.address, p.phone.as_deref())
            }
            AuthorizedRecipient::Firm(f) => firm(&f.name, &f.address, f.phone.as_deref()),
        };
        out.push(entry(
            "authorized_recipient",
            Some(value),
            "6 Empfangsbevollmächtigte(r)",
            Some("41-48"),
            NoPublicElement,
        ));
    }
    if let Some(iban) = &reg.iban {
        let value = match &reg.bic {
            Some(bic) => format!("IBAN {iban}, BIC {bic}"),
            None => format!("IBAN {iban}"),
        };
        out.push(entry(
            "iban",
            Some(value),
            "7 Bankverbindung",
            Some("49-51"),
            NoPublicElement,
        ));
        out.push(entry(
            "bank_account_holder",
            Some(
                reg.bank_account_holder
                    .clone()
                    .unwrap_or_else(|| format!("die Gesellschaft ({})", reg.name.trim())),
            ),
            "7 Bankverbindung",
            Some("52-53"),
            NoPublicElement,
        ));
    }
    if let CommercialRegister::Registered {
        registration_application_date: None,
        ..
    } = reg.commercial_register
    {
        out.push(entry(
            "commercial_register.registration_application_date",
            None,
            "8 Gesellschaftsvertrag, Handelsregister",
            Some("55"),
            NotGiven,
        ));
    }
    if let Some(n) = &reg.notary
        && !n.address.country.is_germany()
    {
        out.push(entry(
            "notary.address",
            Some(address_line(&n.address)),
            "8 Gesellschaftsvertrag, Handelsregister",
            Some("57-62"),
            NoPublicFormat,
        ));
    }
    // 10 Anteilseigner: the shares' running numbers in the list of shareholders
    // (`ZeichnerNummer`), which only the caller knows.
    let numbers = (reg
        .shareholders
        .individuals
        .iter()
        .map(|s| &s.share_numbers))
    .chain(reg.shareholders.entities.iter().map(|s| &s.share_numbers));
    let paths = (0..reg.shareholders.individuals.len())
        .map(|i| format!("shareholders.individuals[{i}].share_numbers"))
        .chain(
            (0..reg.shareholders.entities.len())
                .map(|i| format!("shareholders.entities[{i}].share_numbers")),
        );
    for (path, numbers) in paths.zip(numbers) {
        if numbers.is_none() {
            out.push(entry(path, None, "10 Anteilseigner", None, NotGiven));
        }
    }
    for (i, s) in reg.shareholders.individuals.iter().enumerate() {
        if !s.address.country.is_germany() {
            out.push(entry(
                format!("shareholders.individuals[{i}].address"),
                Some(address_line(&s.address)),
                "10 Anteilseigner",
                Some("67a"),
                NoPublicFormat,
            ));
        }
    }
    for (i, s) in reg.shareholders.entities.iter().enumerate() {
        if !s.address.country.is_germany() {
            out.push(entry(
                format!("shareholders.entities[{i}].address"),
                Some(address_line(&s.address)),
                "10 Anteilseigner",
                Some("67a"),
                NoPublicFormat,
            ));
        }
    }
    if reg.formation_type != FormationType::Cash {
        use domain::tax::ConversionType::*;
        let what = match (reg.formation_type, reg.conversion_type) {
            (FormationType::InKind, _) => "Sachgründung",
            (_, Some(Merger)) => "Umwandlung: Verschmelzung",
            (_, Some(Division)) => "Umwandlung: Spaltung",
            (_, Some(FormChange)) => "Umwandlung: Formwechsel",
            (_, Some(AssetTransfer)) => "Umwandlung: Vermögensübertragung",
            _ => "Umwandlung",
        };
        let what = what.to_owned();
        out.push(entry(
            "formation_type",
            Some(what),
            "11 Gründung",
            None,
            NoPublicCode,
        ));
    }
    if reg.is_holding == Some(true) {
        out.push(entry(
            "is_holding",
            Some("Holding".to_owned()),
            "14 Organschaft, Konzern",
            Some("144-152"),
            NoPublicElement,
        ));
    }
    for (field, estimate) in [
        (
            "financial_estimates.formation_year.profit_amount",
            reg.financial_estimates.formation_year,
        ),
        (
            "financial_estimates.following_year.profit_amount",
            reg.financial_estimates.following_year,
        ),
    ] {
        if estimate.profit_amount < 0 {
            out.push(entry(
                field,
                Some(euros(estimate.profit_amount)),
                "15 Vorauszahlungen",
                Some("165"),
                NoPublicFormat,
            ));
        }
    }
    if let Some(a) = &reg.payroll_establishment {
        out.push(entry(
            "payroll_establishment",
            Some(address_line(a)),
            "16 Lohnsteuer",
            Some("174-177"),
            NoPublicElement,
        ));
    }
    if reg.vat.sells_via_online_marketplaces {
        out.push(entry(
            "vat.sells_via_online_marketplaces",
            Some("ja".to_owned()),
            "20 Internethandel",
            Some("217"),
            NoPublicElement,
        ));
    }
    if reg.attachments.articles_of_association.is_none() {
        out.push(entry(
            "attachments.articles_of_association",
            None,
            "22 Beigefügte Unterlagen",
            Some("227"),
            NotGiven,
        ));
    }
    out
}

/// A partnership's XML: every element name is ours, so the case says so in one entry.
pub fn persg_not_in_xml(_reg: &GbrTaxRegistration) -> Vec<ManualEntry> {
    vec![entry(
        "*",
        None,
        "the whole questionnaire (fsepersg)",
        None,
        ManualReason::UnverifiedDocument,
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn euros_in_german_notation() {
        assert_eq!(euros(-20_000), "-20.000 €");
        assert_eq!(euros(0), "0 €");
        assert_eq!(euros(1_234_567), "1.234.567 €");
        assert_eq!(euros(999), "999 €");
    }
}

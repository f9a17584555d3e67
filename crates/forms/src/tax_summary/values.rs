//! How the summary writes values: amounts, shares, addresses, names and forms.

use domain::country::CountryCode;
use domain::gbr::PartnershipLegalForm;
use domain::tax::{
    ConversionType, FormationType, KapLegalForm, Percentage, PostalAddress, TaxRegistration,
};

use crate::{format_date, street_zip_city};

/// Whole euros with a thousands dot: `25.000 €`, `-1.500 €`.
pub(super) fn euros(amount: i64) -> String {
    format!("{}\u{a0}€", domain::money::grouped_euros(amount))
}

/// `33,3333 %`: the exact decimal with a German decimal comma.
pub(super) fn percent(p: Percentage) -> String {
    format!("{}\u{a0}%", p.to_decimal_string().replace('.', ","))
}

pub(super) fn yes_no(b: bool) -> &'static str {
    if b { "ja" } else { "nein" }
}

pub(super) fn country(c: &CountryCode) -> &'static str {
    c.german_name()
}

/// All parts of an address on one line: street, second line, zip city, state, country.
pub(super) fn address_line(a: &PostalAddress) -> String {
    let mut parts = street_zip_city(&a.street, a.street_second_line.as_deref(), &a.zip, &a.city);
    if let Some(s) = a.state.as_deref().filter(|s| !s.trim().is_empty()) {
        parts.push(s.to_owned());
    }
    parts.push(country(&a.country).to_owned());
    parts.join(", ")
}

/// The address as lines (for the company's seat).
pub(super) fn address_lines(a: &PostalAddress) -> String {
    let mut lines = street_zip_city(&a.street, a.street_second_line.as_deref(), &a.zip, &a.city);
    match a.state.as_deref().filter(|s| !s.trim().is_empty()) {
        Some(state) => lines.push(format!("{state}, {}", country(&a.country))),
        None => lines.push(country(&a.country).to_owned()),
    }
    lines.join("\n")
}

pub(super) fn legal_form(f: KapLegalForm) -> &'static str {
    match f {
        KapLegalForm::Ug => "UG (haftungsbeschränkt)",
        KapLegalForm::Gmbh => "GmbH",
    }
}

pub(super) fn formation(reg: &TaxRegistration) -> String {
    match reg.formation_type {
        FormationType::Cash => "Bargründung".to_owned(),
        FormationType::InKind => "Sachgründung".to_owned(),
        FormationType::Conversion => match reg.conversion_type {
            Some(c) => format!(
                "Umwandlung: {}",
                match c {
                    ConversionType::Merger => "Verschmelzung",
                    ConversionType::Division => "Spaltung",
                    ConversionType::FormChange => "Formwechsel",
                    ConversionType::AssetTransfer => "Vermögensübertragung",
                }
            ),
            None => "Umwandlung".to_owned(),
        },
    }
}

pub(super) fn tax_id(id: Option<&domain::tax::TaxId>) -> String {
    match id {
        Some(id) => id.0.clone(),
        None => "nicht angegeben".to_owned(),
    }
}

/// Spaces every four characters, as IBANs are printed.
pub(super) fn iban_grouped(iban: &str) -> String {
    let compact: Vec<char> = iban.chars().filter(|c| !c.is_whitespace()).collect();
    compact
        .chunks(4)
        .map(|c| c.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn director_name(d: &domain::tax::Director) -> String {
    match d.middle_name.as_deref().filter(|m| !m.trim().is_empty()) {
        Some(m) => format!("{} {} {}", d.first_name, m, d.last_name),
        None => format!("{} {}", d.first_name, d.last_name),
    }
}

pub(super) fn fiscal_year(deviates: bool, start: Option<time::Date>) -> String {
    if deviates {
        match start {
            Some(d) => format!("abweichend vom Kalenderjahr, Beginn am {}", format_date(d)),
            None => "abweichend vom Kalenderjahr".to_owned(),
        }
    } else {
        "Kalenderjahr".to_owned()
    }
}

/// An individual holder's value: name, birth and tax id, address, share.
pub(super) fn person_text(
    first_name: &str,
    last_name: &str,
    dob: time::Date,
    tax_identification_number: Option<&domain::tax::TaxId>,
    address: &PostalAddress,
    share: Percentage,
) -> String {
    format!(
        "{first_name} {last_name}\ngeboren am {}, Steuer-IdNr.: {}\n{}\nAnteil: {}",
        format_date(dob),
        tax_id(tax_identification_number),
        address_line(address),
        percent(share)
    )
}

/// An entity holder's value: name, seat, share.
pub(super) fn entity_text(name: &str, address: &PostalAddress, share: Percentage) -> String {
    format!(
        "{name}\n{}\nAnteil: {}",
        address_line(address),
        percent(share)
    )
}

pub(super) fn partnership_legal_form(f: PartnershipLegalForm) -> &'static str {
    match f {
        PartnershipLegalForm::Gbr => "Gesellschaft bürgerlichen Rechts (GbR)",
        PartnershipLegalForm::Egbr => "eingetragene Gesellschaft bürgerlichen Rechts (eGbR)",
    }
}

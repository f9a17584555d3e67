//! The sections of the summary, in the questionnaire's order, as blocks of the flow.

use domain::gbr::GbrTaxRegistration;
use domain::sole_proprietor::SoleProprietorTaxRegistration;
use domain::tax::{
    AccountingMethod, BalanceType, CommercialRegister, FinancialEstimates, Payroll, Percentage,
    PostalAddress, ReturnFrequency, ReverseChargeServiceType, TaxPackage, TaxRegistration, Vat,
    VatRegime,
};

use crate::{TaxSummaryContext, format_date};

use super::values::*;
use super::*;

/// Title, the kind of company, the office, the reference and the package.
pub(super) fn head(
    flow: &mut Flow,
    kind: &str,
    ctx: &TaxSummaryContext,
    tax_office_number: Option<&str>,
    client_reference: Option<&str>,
    package: TaxPackage,
) {
    flow.para(true, 16.0, BLACK, "Fragebogen zur steuerlichen Erfassung");
    flow.para(
        false,
        9.5,
        GREY,
        &format!(
            "Zusammenfassung der Angaben \u{2013} {kind}, erstellt am {}",
            format_date(ctx.created_on)
        ),
    );
    flow.blocks.push(Block::Space(8.0));
    match (&ctx.tax_office, tax_office_number) {
        (Some((number, name)), _) => flow.row("Finanzamt", &format!("{name} ({number})")),
        (None, Some(number)) => flow.row("Finanzamt", &format!("Finanzamtsnummer {number}")),
        (None, None) => {}
    }
    if let (Some((number, _)), Some(sent)) = (&ctx.tax_office, tax_office_number)
        && number != sent
    {
        flow.row("Angegebene Finanzamtsnummer", sent);
    }
    if let Some(r) = client_reference.filter(|r| !r.trim().is_empty()) {
        flow.row_with("Mandantenreferenz", r, true);
    }
    flow.row_with(
        "Leistungspaket",
        match package {
            TaxPackage::SelfService => "Selbstständige Übermittlung (self)",
            TaxPackage::Guided => "Begleitete Übermittlung (guided)",
        },
        true,
    );
}

/// What a corporation's and a partnership's registration file alike, under the same names.
pub(super) struct Common<'a> {
    tax_office_number: Option<&'a str>,
    client_reference: Option<&'a str>,
    package: TaxPackage,
    name: &'a str,
    address: &'a PostalAddress,
    purpose: &'a str,
    start: time::Date,
    fiscal_year: (bool, Option<time::Date>),
    iban: Option<&'a str>,
    bic: Option<&'a str>,
    estimates: &'a FinancialEstimates,
    vat: &'a Vat,
    has_employees: bool,
    payroll: Option<&'a Payroll>,
}

/// The [`Common`] values of a [`TaxRegistration`] or a [`GbrTaxRegistration`].
macro_rules! common {
    ($reg:expr) => {{
        let reg = $reg;
        Common {
            tax_office_number: reg.tax_office_number.as_deref(),
            client_reference: reg.client_reference.as_deref(),
            package: reg.package,
            name: &reg.name,
            address: &reg.address,
            purpose: &reg.purpose,
            start: reg.operational_activity_start_date,
            fiscal_year: (
                reg.fiscal_year_deviates_from_calendar,
                reg.fiscal_year_deviating_start_date,
            ),
            iban: reg.iban.as_deref(),
            bic: reg.bic.as_deref(),
            estimates: &reg.financial_estimates,
            vat: &reg.vat,
            has_employees: reg.has_employees,
            payroll: reg.payroll.as_ref(),
        }
    }};
}

/// The head and the rows of section 1 that every company has: its name (under `name_label`),
/// legal form, seat, purpose, start and fiscal year.
pub(super) fn opening(
    flow: &mut Flow,
    ctx: &TaxSummaryContext,
    c: &Common,
    kind: &str,
    (name_label, legal_form): (&str, &str),
) {
    head(
        flow,
        kind,
        ctx,
        c.tax_office_number,
        c.client_reference,
        c.package,
    );

    // 1. Allgemeine Angaben.
    flow.heading("1. Allgemeine Angaben");
    flow.row(name_label, c.name);
    flow.row("Rechtsform", legal_form);
    flow.row("Sitz / Anschrift", &address_lines(c.address));
    flow.row("Gegenstand des Unternehmens", c.purpose);
    flow.row("Beginn der Tätigkeit", &format_date(c.start));
    let (deviates, fiscal_start) = c.fiscal_year;
    flow.row("Wirtschaftsjahr", &fiscal_year(deviates, fiscal_start));
}

/// The sections every company has after its own: bank, estimates, VAT and payroll, numbered
/// from `first`.
pub(super) fn finances(flow: &mut Flow, c: &Common, first: u8) {
    bank(flow, &first.to_string(), c.iban, c.bic);
    estimates(flow, &(first + 1).to_string(), c.estimates);
    vat(flow, &(first + 2).to_string(), c.vat, c.estimates);
    payroll(flow, &(first + 3).to_string(), c.has_employees, c.payroll);
}

/// The rows of a register status; `prefix` names the register (`HRB`, `GsR`).
pub(super) fn register_rows(flow: &mut Flow, register: &CommercialRegister, prefix: &str) {
    match register {
        CommercialRegister::NotApplied => {
            flow.row("Status", "Eintragung noch nicht beantragt");
        }
        CommercialRegister::ApplicationFiled {
            registration_application_date,
        } => {
            flow.row("Status", "Eintragung beantragt");
            flow.row(
                "Datum des Antrags",
                &format_date(*registration_application_date),
            );
        }
        CommercialRegister::Registered {
            registration_application_date,
            registration_number,
            registration_date,
            registration_court,
        } => {
            flow.row("Status", "eingetragen");
            flow.row(
                "Datum des Antrags",
                &registration_application_date
                    .map(format_date)
                    .unwrap_or_else(|| "nicht angegeben".to_owned()),
            );
            flow.row("Datum der Eintragung", &format_date(*registration_date));
            flow.row("Registergericht", registration_court);
            flow.row("Registernummer", &format!("{prefix} {registration_number}"));
        }
    }
}

pub(super) fn bank(flow: &mut Flow, n: &str, iban: Option<&str>, bic: Option<&str>) {
    flow.heading(&format!("{n}. Bankverbindung"));
    flow.row(
        "IBAN",
        &iban
            .map(iban_grouped)
            .unwrap_or_else(|| "keine Angabe".to_owned()),
    );
    flow.row("BIC", bic.unwrap_or("keine Angabe"));
}

pub(super) fn estimates(flow: &mut Flow, n: &str, fe: &FinancialEstimates) {
    flow.heading(&format!("{n}. Voraussichtliche Umsätze und Gewinne"));
    for (year, e) in [
        ("Gründungsjahr", &fe.formation_year),
        ("Folgejahr", &fe.following_year),
    ] {
        flow.row(&format!("Umsatz im {year}"), &euros(e.revenue_amount));
        flow.row(&format!("Gewinn im {year}"), &euros(e.profit_amount));
    }
}

pub(super) fn vat(flow: &mut Flow, n: &str, vat: &Vat, estimates: &FinancialEstimates) {
    flow.heading(&format!("{n}. Umsatzsteuer"));
    flow.row(
        "Gewählte Besteuerung",
        match vat.regime {
            // Above the thresholds a `regime` sent has no effect (and is no waiver).
            _ if !estimates.small_business_election_available() => {
                "keine Wahl (Kleinunternehmerregelung nicht möglich)"
            }
            Some(VatRegime::SmallBusiness) => "Kleinunternehmerregelung",
            Some(VatRegime::Standard) => {
                "Regelbesteuerung (Verzicht nach §\u{a0}19\u{a0}Abs.\u{a0}2\u{a0}UStG)"
            }
            None => "keine Wahl (Kleinunternehmerregelung nicht möglich)",
        },
    );
    flow.row(
        "Kleinunternehmerregelung (§\u{a0}19\u{a0}UStG)",
        if vat.small_business {
            "ja, die Kleinunternehmerregelung wird angewendet"
        } else {
            "nein"
        },
    );
    if let Some(m) = vat.accounting_method {
        flow.row(
            "Versteuerung",
            match m {
                AccountingMethod::Accrual => "Sollversteuerung (nach vereinbarten Entgelten)",
                AccountingMethod::Cash => "Istversteuerung (nach vereinnahmten Entgelten)",
            },
        );
    }
    if vat.estimated_balance_type.is_some() || vat.estimated_balance_amount.is_some() {
        let kind = match vat.estimated_balance_type {
            Some(BalanceType::Payable) => "Zahllast",
            Some(BalanceType::Refundable) => "Erstattung",
            None => "Betrag",
        };
        let amount = vat
            .estimated_balance_amount
            .map(euros)
            .unwrap_or_else(|| "ohne Betrag".to_owned());
        flow.row(
            "Voraussichtliche Umsatzsteuer",
            &format!("{kind}: {amount}"),
        );
    }
    if let Some(f) = vat.return_frequency {
        flow.row(
            "Voranmeldungszeitraum",
            match f {
                ReturnFrequency::Monthly => "monatlich",
                ReturnFrequency::Quarterly => "vierteljährlich",
            },
        );
    }
    flow.row("USt-IdNr. beantragt", yes_no(vat.request_vat_id));
    flow.row(
        "Verkauf über Online-Marktplätze",
        yes_no(vat.sells_via_online_marketplaces),
    );
    let certificate = if vat.request_reverse_charge_certificate {
        match vat.reverse_charge_service_type {
            Some(ReverseChargeServiceType::Construction) => "beantragt für Bauleistungen",
            Some(ReverseChargeServiceType::BuildingCleaning) => {
                "beantragt für Gebäudereinigungsleistungen"
            }
            Some(ReverseChargeServiceType::Both) => {
                "beantragt für Bauleistungen und Gebäudereinigungsleistungen"
            }
            None => "beantragt",
        }
    } else {
        "nicht beantragt"
    };
    // The tax office's certificate for the recipient's reverse charge on construction and
    // building-cleaning services (§ 13b (5) UStG), form USt 1 TG; a "Freistellungsbescheinigung"
    // is the construction withholding tax's (§ 48b EStG), which is another matter.
    flow.row(
        "Nachweis USt\u{a0}1\u{a0}TG (§\u{a0}13b Abs.\u{a0}5\u{a0}UStG)",
        certificate,
    );
}

pub(super) fn payroll(flow: &mut Flow, n: &str, has_employees: bool, payroll: Option<&Payroll>) {
    flow.heading(&format!("{n}. Lohnsteuer"));
    flow.row("Arbeitnehmer beschäftigt", yes_no(has_employees));
    if let Some(p) = payroll {
        flow.row("Anzahl der Arbeitnehmer", &p.employee_count.to_string());
        flow.row(
            "davon Gesellschafter",
            &p.shareholder_employee_count.to_string(),
        );
        if let Some(m) = p.marginal_employee_count {
            flow.row("davon geringfügig Beschäftigte", &m.to_string());
        }
        flow.row(
            "Beginn der Lohnzahlungen",
            &format_date(p.payroll_start_date),
        );
        flow.row(
            "Voraussichtliche Lohnsteuer",
            &format!("{} jährlich", euros(p.estimated_annual_wage_tax)),
        );
    }
}

/// A person or firm on one line, with the phone.
fn party(name: &str, address: &PostalAddress, phone: Option<&str>) -> String {
    match phone {
        Some(p) => format!("{name}\n{}\nTelefon: {p}", address_line(address)),
        None => format!("{name}\n{}", address_line(address)),
    }
}

/// What the ELSTER XML does not carry, under its own heading: an operator enters it in the
/// portal by hand (none: no section).
/// The tax adviser as the summary writes it: name, address and phone, or "keine Angabe".
fn advisor(t: Option<&domain::tax::TaxAdvisor>) -> String {
    t.map(|t| match t {
        domain::tax::TaxAdvisor::Person(p) => party(
            &format!("{} {}", p.first_name, p.last_name),
            &p.address,
            p.phone.as_deref(),
        ),
        domain::tax::TaxAdvisor::Firm(f) => party(&f.name, &f.address, f.phone.as_deref()),
    })
    .unwrap_or_else(|| "keine Angabe".to_owned())
}

pub(super) fn manual(flow: &mut Flow, n: &str, rows: &[crate::ManualRow]) {
    if rows.is_empty() {
        return;
    }
    flow.heading(&format!(
        "{n}. Nicht in der XML-Datei (im ELSTER-Portal von Hand einzutragen)"
    ));
    for r in rows {
        let value = r.value.as_deref().unwrap_or("nicht angegeben");
        flow.row(&r.place, &format!("{value}\n({})", r.field));
    }
}

/// Place and date, and the signature with its caption: one block.
pub(super) fn signature(flow: &mut Flow, city: &str, created_on: time::Date, caption: &str) {
    flow.blocks.push(Block::Space(18.0));
    let place_date = wrap(
        flow.fonts,
        false,
        &format!("{city}, den {}", format_date(created_on)),
        WIDTH,
        PLACE_SIZE,
    );
    let caption = wrap(flow.fonts, false, caption, WIDTH, 8.0);
    flow.blocks.push(Block::Signature {
        place_date,
        caption,
    });
}

/// Shareholders or partners, numbered across both lists, and the sum of their shares.
pub(super) fn holder_rows(
    flow: &mut Flow,
    individuals: &[String],
    entities: &[String],
    shares: impl Iterator<Item = Percentage>,
) {
    let mut n = 0;
    for (heading, values) in [
        ("Natürliche Personen", individuals),
        ("Gesellschaften", entities),
    ] {
        if values.is_empty() {
            continue;
        }
        flow.sub_heading(heading);
        for value in values {
            n += 1;
            flow.row(&format!("{n}. Gesellschafter/in"), value);
        }
    }
    if n == 0 {
        flow.row("Gesellschafter", "keine Angabe");
    } else {
        let total: u64 = shares.map(|p| u64::from(p.0)).sum();
        let total = Percentage(u32::try_from(total).unwrap_or(u32::MAX));
        flow.row_with("Summe der Anteile", &percent(total), true);
    }
}

/// The partnership's summary: its own sections 1 to 3, then the ones it shares with a
/// corporation's.
pub(super) fn build_partnership(
    reg: &GbrTaxRegistration,
    ctx: &TaxSummaryContext,
    flow: &mut Flow,
) {
    let common = common!(reg);
    opening(
        flow,
        ctx,
        &common,
        &format!("Personengesellschaft ({})", reg.legal_form.german()),
        (
            "Name der Gesellschaft",
            partnership_legal_form(reg.legal_form),
        ),
    );
    flow.row(
        "Gesellschaftsvertrag vom",
        &format_date(reg.partnership_agreement_date),
    );

    // 2. Gesellschaftsregister.
    flow.heading("2. Gesellschaftsregister");
    match &reg.company_register {
        Some(register) => register_rows(flow, register, "GsR"),
        None => flow.row("Status", "nicht eingetragen (GbR)"),
    }

    // 3. Gesellschafter.
    flow.heading("3. Gesellschafter");
    let managing = |m: bool| format!("\nGeschäftsführung und Vertretung: {}", yes_no(m));
    let individuals: Vec<String> = reg
        .partners
        .individuals
        .iter()
        .map(|p| {
            person_text(
                &p.first_name,
                &p.last_name,
                p.dob,
                p.tax_identification_number.as_ref(),
                &p.address,
                p.share_percentage,
            ) + &managing(p.is_managing_partner)
        })
        .collect();
    let entities: Vec<String> = reg
        .partners
        .entities
        .iter()
        .map(|p| {
            entity_text(&p.name, &p.address, p.share_percentage) + &managing(p.is_managing_partner)
        })
        .collect();
    holder_rows(flow, &individuals, &entities, reg.partners.shares());
    let managers = reg.partners.managing_names();
    flow.row("Vertretungsberechtigt", &managers.join("\n"));

    finances(flow, &common, 4);
    manual(flow, "8", &ctx.not_in_xml);

    let caption = if managers.is_empty() {
        "Unterschrift (vertretungsberechtigte Gesellschafter)".to_owned()
    } else {
        format!(
            "Unterschrift vertretungsberechtigte Gesellschafter: {}",
            managers.join(", ")
        )
    };
    signature(flow, &reg.address.city, ctx.created_on, &caption);
}

pub(super) fn build(reg: &TaxRegistration, ctx: &TaxSummaryContext, flow: &mut Flow) {
    let common = common!(reg);
    opening(
        flow,
        ctx,
        &common,
        &format!("Kapitalgesellschaft ({})", legal_form(reg.legal_form)),
        ("Firma", legal_form(reg.legal_form)),
    );
    flow.row(
        "Notarielle Beurkundung am",
        &format_date(reg.notarization_date),
    );
    flow.row("Gründung", &formation(reg));
    flow.row(
        "Holdinggesellschaft",
        match reg.is_holding {
            Some(b) => yes_no(b),
            None => "keine Angabe",
        },
    );
    flow.row("Stammkapital", &euros(reg.capital));
    flow.row("Eingezahltes Kapital", &euros(reg.paid_in_capital));
    if let Some(p) = &reg.phone {
        flow.row("Telefon", p);
    }
    if let Some(w) = &reg.website {
        flow.row("Internetadresse", w);
    }
    if let Some(b) = &reg.po_box {
        flow.row(
            "Postfach",
            &format!("Postfach {}, {} {}", b.number, b.zip, b.city),
        );
    }
    if let Some(own) = reg.manages_own_assets_only {
        flow.row("Ausschließlich Verwaltung eigenen Vermögens", yes_no(own));
    }
    if let Some(a) = &reg.place_of_management {
        flow.row("Ort der Geschäftsleitung", &address_line(a));
    }

    // 2. Notar.
    flow.heading("2. Notar");
    match &reg.notary {
        Some(n) => {
            flow.row("Name", &format!("{} {}", n.first_name, n.last_name));
            flow.row("Anschrift", &address_line(&n.address));
        }
        None => flow.row("Notar", "keine Angabe"),
    }

    // 3. Handelsregister.
    flow.heading("3. Handelsregister");
    register_rows(flow, &reg.commercial_register, "HRB");

    // 4. Geschäftsführer.
    flow.heading("4. Geschäftsführer (gesetzliche Vertreter)");
    for (i, d) in reg.directors.iter().enumerate() {
        flow.sub_heading(&format!("Geschäftsführer/in {}", i + 1));
        flow.row("Name", &director_name(d));
        flow.row("Geburtsdatum", &format_date(d.dob));
        flow.row(
            "Steuer-IdNr.",
            &tax_id(d.tax_identification_number.as_ref()),
        );
        flow.row("Anschrift", &address_line(&d.address));
        let mut contact = Vec::new();
        if let Some(e) = d.email.as_deref().filter(|s| !s.trim().is_empty()) {
            contact.push(format!("E-Mail: {e}"));
        }
        if let Some(p) = d.phone.as_deref().filter(|s| !s.trim().is_empty()) {
            contact.push(format!("Telefon: {p}"));
        }
        if !contact.is_empty() {
            flow.row_with(
                "Kontakt (nicht Teil der Übermittlung)",
                &contact.join("\n"),
                true,
            );
        }
    }

    // 5. Gesellschafter.
    flow.heading("5. Gesellschafter");
    let individuals: Vec<String> = reg
        .shareholders
        .individuals
        .iter()
        .map(|s| {
            person_text(
                &s.first_name,
                &s.last_name,
                s.dob,
                s.tax_identification_number.as_ref(),
                &s.address,
                s.share_percentage,
            )
        })
        .collect();
    let entities: Vec<String> = reg
        .shareholders
        .entities
        .iter()
        .map(|s| entity_text(&s.name, &s.address, s.share_percentage))
        .collect();
    // Each share as the ELSTER XML files it: its nominal amount, and the share that amount is
    // of the capital (the percentage written beside it there).
    let filed = reg.filed_shares();
    let with_filed = |(text, (amount, share)): (String, &(i64, Percentage))| -> String {
        let text = text
            .rsplit_once("\nAnteil: ")
            .map_or(text.clone(), |(head, _)| {
                format!("{head}\nAnteil: {}", percent(*share))
            });
        format!("{text}, Nennbetrag {}", euros(*amount))
    };
    // And the shares' running numbers in the list of shareholders, where sent.
    let numbered = |(text, numbers): (String, &Option<String>)| match numbers {
        Some(n) => format!("{text}\nLfd. Nr. der Geschäftsanteile: {}", n.trim()),
        None => text,
    };
    let individuals: Vec<String> = individuals
        .into_iter()
        .zip(&filed)
        .map(with_filed)
        .zip(
            reg.shareholders
                .individuals
                .iter()
                .map(|s| &s.share_numbers),
        )
        .map(numbered)
        .collect();
    let entities: Vec<String> = entities
        .into_iter()
        .zip(&filed[individuals.len()..])
        .map(with_filed)
        .zip(reg.shareholders.entities.iter().map(|s| &s.share_numbers))
        .map(numbered)
        .collect();
    holder_rows(flow, &individuals, &entities, filed.iter().map(|(_, s)| *s));
    flow.row(
        "Treuhandverhältnisse",
        yes_no(reg.has_trust_relationships == Some(true)),
    );

    finances(flow, &common, 6);
    if let Some(holder) = &reg.bank_account_holder {
        // Beside the bank section's rows (the holder when it is not the company).
        flow.row("Kontoinhaber/in (nicht die Gesellschaft)", holder);
    }

    // 10. Weitere Angaben.
    flow.heading("10. Weitere Angaben");
    flow.row("Steuerliche Beratung", &advisor(reg.tax_advisor.as_ref()));
    flow.row(
        "Empfangsbevollmächtigte(r)",
        &reg.authorized_recipient
            .as_ref()
            .map(|r| match r {
                domain::tax::AuthorizedRecipient::TaxAdvisor => {
                    "die steuerliche Beratung".to_owned()
                }
                domain::tax::AuthorizedRecipient::Person(p) => party(
                    &format!("{} {}", p.first_name, p.last_name),
                    &p.address,
                    p.phone.as_deref(),
                ),
                domain::tax::AuthorizedRecipient::Firm(f) => {
                    party(&f.name, &f.address, f.phone.as_deref())
                }
            })
            .unwrap_or_else(|| "keine Angabe".to_owned()),
    );
    flow.row(
        "Freistellungsbescheinigung (§\u{a0}48b\u{a0}EStG)",
        if reg.request_construction_exemption_certificate {
            "beantragt"
        } else {
            "nicht beantragt"
        },
    );
    if let Some(a) = &reg.payroll_establishment {
        flow.row("Lohnabrechnende Betriebsstätte", &address_line(a));
    }
    let attached: Vec<&str> = [
        (
            reg.attachments.articles_of_association.is_some(),
            "Gesellschaftsvertrag",
        ),
        (
            reg.attachments.shareholder_list.is_some(),
            "Gesellschafterliste",
        ),
        (
            reg.attachments.sepa_mandate.is_some(),
            "SEPA-Lastschriftmandat",
        ),
    ]
    .into_iter()
    .filter_map(|(sent, name)| sent.then_some(name))
    .collect();
    flow.row(
        "Beigefügte Unterlagen",
        &if attached.is_empty() {
            "keine".to_owned()
        } else {
            attached.join(", ")
        },
    );
    manual(flow, "11", &ctx.not_in_xml);

    let signers: Vec<String> = reg.directors.iter().map(director_name).collect();
    let caption = if signers.is_empty() {
        "Unterschrift (gesetzliche/r Vertreter/in)".to_owned()
    } else {
        format!("Unterschrift Geschäftsführung: {}", signers.join(", "))
    };
    signature(flow, &reg.address.city, ctx.created_on, &caption);
}

/// The sole proprietor's summary: the owner and the activity, spouse and earlier
/// circumstances, then the sections every registration has, and the prepayment details.
pub(super) fn build_sole_proprietor(
    reg: &SoleProprietorTaxRegistration,
    ctx: &TaxSummaryContext,
    flow: &mut Flow,
) {
    use domain::sole_proprietor::{
        ActivityKind, CashAccountingReason, ProfitDetermination, Salutation, YearAmounts,
        religion_name,
    };
    let common = common!(reg);
    let kind = match reg.activity_kind {
        ActivityKind::Trade => "Einzelunternehmen (Gewerbebetrieb)",
        ActivityKind::LiberalProfession => "Einzelunternehmen (freiberufliche Tätigkeit)",
        ActivityKind::AgricultureForestry => "Einzelunternehmen (Land- und Forstwirtschaft)",
    };
    opening(
        flow,
        ctx,
        &common,
        kind,
        ("Name des Unternehmens", "Einzelunternehmen"),
    );
    flow.row(
        "Beginn einschließlich Vorbereitung",
        &format_date(reg.preparations_start_date),
    );
    flow.row("Betrieb in der Wohnung", yes_no(reg.runs_from_home()));

    // 2. Inhaber/in.
    flow.heading("2. Inhaber/in");
    let o = &reg.owner;
    let mut name = String::new();
    if let Some(s) = o.salutation {
        name.push_str(match s {
            Salutation::Mr => "Herr ",
            Salutation::Ms => "Frau ",
        });
    }
    if let Some(t) = &o.title {
        name.push_str(t.trim());
        name.push(' ');
    }
    name.push_str(&format!("{} {}", o.first_name, o.last_name));
    flow.row("Name", &name);
    if let Some(b) = &o.birth_name {
        flow.row("Geburtsname", b);
    }
    flow.row("Geburtsdatum", &format_date(o.dob));
    flow.row(
        "Steuer-IdNr.",
        &tax_id(o.tax_identification_number.as_ref()),
    );
    if let Some(b) = &o.occupation {
        flow.row("Ausgeübter Beruf", b);
    }
    flow.row(
        "Religion",
        &format!(
            "{} ({})",
            religion_name(&o.religion).unwrap_or("unbekannt"),
            o.religion
        ),
    );
    flow.row("Wohnanschrift", &address_lines(&o.address));
    let mut contact = Vec::new();
    if let Some(p) = &o.phone {
        contact.push(format!("Telefon: {p}"));
    }
    if let Some(e) = &o.email {
        contact.push(format!("E-Mail: {e}"));
    }
    if !contact.is_empty() {
        flow.row("Kontakt", &contact.join("\n"));
    }
    let status = match o.marital_status_since {
        Some(since) => format!("{} seit {}", o.marital_status.german(), format_date(since)),
        None => o.marital_status.german().to_owned(),
    };
    flow.row("Familienstand", &status);

    // 3. Ehegatte / Lebenspartner(in).
    flow.heading("3. Ehegatte / Lebenspartner(in)");
    match &reg.spouse {
        Some(s) => {
            flow.row("Name", &format!("{} {}", s.first_name, s.last_name));
            flow.row("Geburtsdatum", &format_date(s.dob));
            flow.row(
                "Steuer-IdNr.",
                &tax_id(s.tax_identification_number.as_ref()),
            );
            if let Some(r) = &s.religion {
                flow.row(
                    "Religion",
                    &format!("{} ({r})", religion_name(r).unwrap_or("unbekannt")),
                );
            }
        }
        None => flow.row("Ehegatte / Lebenspartner(in)", "keine Angabe"),
    }

    // 4. Bisherige Verhältnisse, steuerliche Beratung.
    flow.heading("4. Bisherige Verhältnisse und steuerliche Beratung");
    match &reg.earlier_circumstances {
        Some(e) => {
            if let Some(n) = &e.previous_tax_number {
                flow.row("Bisherige Steuernummer", n);
            }
            if let Some(n) = &e.previous_tax_office {
                flow.row("Bisheriges Finanzamt", n);
            }
            if let Some(a) = &e.previous_address {
                flow.row("Bisherige Anschrift", &address_line(a));
            }
            if let Some(b) = &e.previous_self_employment {
                flow.row("Frühere selbständige Tätigkeit", b);
            }
        }
        None => flow.row("Bisherige Verhältnisse", "keine Angabe"),
    }
    flow.row("Steuerliche Beratung", &advisor(reg.tax_advisor.as_ref()));

    finances(flow, &common, 5);

    // 9. Gewinnermittlung und Vorauszahlungen.
    flow.heading("9. Gewinnermittlung und Vorauszahlungen");
    flow.row(
        "Gewinnermittlung",
        match reg.profit_determination {
            ProfitDetermination::CashBasis => {
                "Einnahmenüberschussrechnung (§\u{a0}4 Abs.\u{a0}3 EStG)"
            }
            ProfitDetermination::BalanceSheet => "Betriebsvermögensvergleich (Bilanz)",
        },
    );
    if let Some(reason) = reg.cash_accounting_reason {
        flow.row(
            "Grund der Istversteuerung",
            match reason {
                CashAccountingReason::TurnoverBelowLimit => {
                    "Umsatz nicht über 800.000 € (§\u{a0}20 Satz\u{a0}1 Nr.\u{a0}1 UStG)"
                }
                CashAccountingReason::NoBookkeepingDuty => {
                    "Befreiung von der Buchführungspflicht (§\u{a0}20 Satz\u{a0}1 Nr.\u{a0}2 UStG)"
                }
                CashAccountingReason::LiberalProfession => {
                    "freiberufliche Tätigkeit (§\u{a0}20 Satz\u{a0}1 Nr.\u{a0}3 UStG)"
                }
            },
        );
    }
    let years = |y: &YearAmounts| {
        format!(
            "Gründungsjahr {}, Folgejahr {}",
            euros(y.formation_year),
            euros(y.following_year)
        )
    };
    let p = reg.prepayments.unwrap_or_default();
    for (label, amounts) in [
        (
            "Einkünfte aus nichtselbständiger Arbeit",
            p.employment_income,
        ),
        ("Einkünfte aus Kapitalvermögen", p.capital_income),
        ("Einkünfte aus Vermietung und Verpachtung", p.rental_income),
        ("Sonstige Einkünfte", p.other_income),
        ("Sonderausgaben", p.special_expenses),
    ] {
        if let Some(a) = amounts {
            flow.row(label, &years(&a));
        }
    }
    manual(flow, "10", &ctx.not_in_xml);
    signature(
        flow,
        &reg.address.city,
        ctx.created_on,
        &format!("Unterschrift Inhaber/in: {}", reg.owner_name()),
    );
}

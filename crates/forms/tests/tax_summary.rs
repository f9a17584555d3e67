//! Tax registration summary: every value in section order, paging, sandbox mark, determinism,
//! the drawn signature.

mod common;
/// The tax registrations of the ELSTER tests.
#[path = "../../elster/tests/fixtures/registrations.rs"]
mod registrations;

use common::*;
use domain::company::Environment;
use domain::signature::SignaturePath;
use domain::tax::*;
use forms::{TaxSummaryContext, render_tax_summary};
use lopdf::content::Content;
use registrations::pct;
use sha2::{Digest, Sha256};
use time::macros::date;

/// The GmbH of the ELSTER tests in production, with one director, a loss in the following
/// year, standard VAT and a reverse-charge certificate for construction.
fn gmbh() -> TaxRegistration {
    let mut reg = registrations::gmbh();
    reg.environment = Environment::Production;
    reg.signature_path =
        SignaturePath::parse("M 10 40 C 20 10 40 10 50 40 S 80 70 90 40 L 110 35").unwrap();
    reg.tax_office_number = Some("1129".into());
    reg.directors.truncate(1);
    reg.financial_estimates.following_year.profit_amount = -60_000;
    reg.vat.regime = Some(VatRegime::Standard);
    reg.vat.request_reverse_charge_certificate = true;
    reg.vat.reverse_charge_service_type = Some(ReverseChargeServiceType::Construction);
    reg
}

fn ug() -> TaxRegistration {
    let mut reg = gmbh();
    reg.legal_form = KapLegalForm::Ug;
    reg.package = TaxPackage::Guided;
    reg.environment = Environment::Sandbox;
    reg.client_reference = None;
    reg.tax_office_number = None;
    reg.name = "Kleinstadt Design UG (haftungsbeschränkt)".into();
    reg.capital = 1_000;
    reg.paid_in_capital = 1_000;
    reg.notary = None;
    reg.is_holding = None;
    reg.formation_type = FormationType::Conversion;
    reg.conversion_type = Some(ConversionType::FormChange);
    reg.fiscal_year_deviates_from_calendar = true;
    reg.fiscal_year_deviating_start_date = Some(date!(2025 - 07 - 01));
    reg.directors[0].middle_name = None;
    reg.directors[0].email = None;
    reg.directors[0].phone = None;
    reg.directors[0].tax_identification_number = None;
    reg.shareholders.individuals.truncate(1);
    reg.shareholders.individuals[0].share_percentage = Percentage::HUNDRED;
    reg.shareholders.entities.clear();
    reg.commercial_register = CommercialRegister::ApplicationFiled {
        registration_application_date: date!(2025 - 02 - 14),
    };
    reg.iban = None;
    reg.bic = None;
    // Within the small-business thresholds, as the rule it files requires.
    reg.financial_estimates = FinancialEstimates {
        formation_year: Estimate {
            revenue_amount: 18_000,
            profit_amount: 2_000,
        },
        following_year: Estimate {
            revenue_amount: 60_000,
            profit_amount: 10_000,
        },
    };
    reg.vat = Vat {
        sells_via_online_marketplaces: true,
        ..Vat::small_business()
    };
    reg.has_employees = false;
    reg.payroll = None;
    reg
}

/// 99 shareholders with distinct names (98 individuals, 1 entity).
fn many() -> TaxRegistration {
    let mut reg = gmbh();
    let template = reg.shareholders.individuals[0].clone();
    reg.shareholders.individuals = (1..=98)
        .map(|i| IndividualShareholder {
            first_name: format!("Vorname{i:02}"),
            last_name: format!("Nachname{i:02}"),
            share_percentage: pct("1.01"),
            ..template.clone()
        })
        .collect();
    reg.shareholders.entities[0].share_percentage = pct("1.02");
    reg
}

fn ctx() -> TaxSummaryContext {
    TaxSummaryContext {
        not_in_xml: Vec::new(),
        tax_office: Some((
            "1129".into(),
            "Finanzamt für Körperschaften I Berlin".into(),
        )),
        created_on: timestamp().date(),
        timestamp: timestamp(),
    }
}

fn pages(pdf: &[u8]) -> usize {
    page_count(pdf)
}

/// Text in drawing order (labels before their values, not interleaved by position), its
/// whitespace squashed.
fn raw_text(pdf: &[u8]) -> String {
    squash(&common::raw_text(pdf))
}

/// Asserts that `values` occur in `text` in this order.
fn assert_in_order(text: &str, values: &[&str]) {
    let mut from = 0;
    for v in values {
        match text[from..].find(v) {
            Some(at) => from += at + v.len(),
            None => panic!(
                "{v:?} missing (or out of order) after byte {from} in:\n{}",
                &text[from.min(text.len())..]
            ),
        }
    }
}

#[test]
fn gmbh_every_value_in_section_order() {
    let pdf = render_tax_summary(&gmbh(), &ctx()).unwrap();
    assert!(page_sizes(&pdf).iter().all(|&size| size == A4));
    assert_eq!(
        title(&pdf).as_deref(),
        Some("Fragebogen zur steuerlichen Erfassung - Zusammenfassung - Mustermann Software GmbH")
    );
    let fonts = fonts(&pdf);
    assert!(
        !fonts.is_empty() && fonts.iter().all(|f| f.contains("NotoSans")),
        "{fonts:?}"
    );
    let text = raw_text(&pdf);
    assert_in_order(
        &text,
        &[
            "Fragebogen zur steuerlichen Erfassung",
            "Finanzamt für Körperschaften I Berlin (1129)",
            "crm-4711",
            "Allgemeine Angaben",
            "Firma Mustermann Software GmbH",
            "Rechtsform GmbH",
            "Musterstraße 1",
            "Hinterhaus, 3. OG",
            "10115 Berlin",
            "Berlin, Deutschland",
            "Entwicklung und Vertrieb von Software sowie IT-Beratung",
            "Beginn der Tätigkeit 01.03.2025",
            "Kalenderjahr",
            "Notarielle Beurkundung am 10.02.2025",
            "Bargründung",
            "Holdinggesellschaft nein",
            "Stammkapital 25.000 €",
            "Eingezahltes Kapital 12.500 €",
            "Notar",
            "Norbert Notar",
            "Kurfürstendamm 100, 10709 Berlin, Deutschland",
            "Handelsregister",
            "eingetragen",
            "20.02.2025",
            "Amtsgericht Charlottenburg",
            "HRB 245789B",
            "Geschäftsführer",
            "Erika Maria Mustermann",
            "12.08.1984",
            "86095742719",
            "Heidestraße 17, 51147 Köln, Deutschland",
            "Kontakt (nicht Teil der Übermittlung)",
            "erika@mustermann-software.de",
            "+49 170 1234567",
            "Gesellschafter",
            "Natürliche Personen",
            "Erika Mustermann",
            "geboren am 12.08.1984, Steuer-IdNr.: 86095742719",
            "Anteil: 33,332 %, Nennbetrag 8.333 €",
            "Lfd. Nr. der Geschäftsanteile: 1",
            "Max Mustermann",
            "geboren am 01.03.1982, Steuer-IdNr.: nicht angegeben",
            "Rue de Rivoli 10, 75001 Paris, Frankreich",
            "Anteil: 33,332 %, Nennbetrag 8.333 €",
            "Lfd. Nr. der Geschäftsanteile: 2",
            "Gesellschaften",
            "Beteiligungs-UG (haftungsbeschränkt)",
            "Hafenstraße 5a, 20457 Hamburg, Deutschland",
            "Anteil: 33,336 %, Nennbetrag 8.334 €",
            "Lfd. Nr. der Geschäftsanteile: 3",
            "Summe der Anteile 100 %",
            "Bankverbindung",
            "DE89 3704 0044 0532 0130 00",
            "COBADEFFXXX",
            "Voraussichtliche Umsätze und Gewinne",
            "120.000 €",
            "15.000 €",
            "300.000 €",
            "-60.000 €",
            "Umsatzsteuer",
            // `standard` was sent, but above 25,000 euros there is nothing to choose.
            "Gewählte Besteuerung keine Wahl",
            "Kleinunternehmerregelung (§ 19 UStG) nein",
            "Sollversteuerung",
            "Voraussichtliche Umsatzsteuer Erstattung: 12.000 €",
            "Voranmeldungszeitraum monatlich",
            "USt-IdNr. beantragt ja",
            "Online-Marktplätze nein",
            "Nachweis USt 1 TG (§ 13b Abs. 5 UStG) beantragt für Bauleistungen",
            "Lohnsteuer",
            "Arbeitnehmer beschäftigt ja",
            "Anzahl der Arbeitnehmer 3",
            "davon Gesellschafter 1",
            "Beginn der Lohnzahlungen 01.04.2025",
            "Voraussichtliche Lohnsteuer 18.000 € jährlich",
            "Berlin, den 20.03.2025",
            "Unterschrift Geschäftsführung: Erika Maria Mustermann",
        ],
    );
    assert!(text.contains("Seite 1 von"), "{text}");
    assert!(!text.contains("MUSTER"), "production document has the mark");
}

#[test]
fn ug_small_business_without_payroll() {
    let pdf = render_tax_summary(&ug(), &ctx()).unwrap();
    let text = raw_text(&pdf);
    assert_in_order(
        &text,
        &[
            "Firma Kleinstadt Design UG (haftungsbeschränkt)",
            "Rechtsform UG (haftungsbeschränkt)",
            "abweichend vom Kalenderjahr, Beginn am 01.07.2025",
            "Umwandlung: Formwechsel",
            "Holdinggesellschaft keine Angabe",
            "Stammkapital 1.000 €",
            "Eintragung beantragt",
            "14.02.2025",
            "Erika Mustermann",
            "Steuer-IdNr. nicht angegeben",
            "Anteil: 100 %, Nennbetrag 1.000 €",
            "IBAN keine Angabe",
            "Kleinunternehmerregelung (§ 19 UStG) ja",
            "USt-IdNr. beantragt nein",
            "Online-Marktplätze ja",
            "Nachweis USt 1 TG (§ 13b Abs. 5 UStG) nicht beantragt",
            "Arbeitnehmer beschäftigt nein",
        ],
    );
    for absent in [
        "Voranmeldungszeitraum",
        "Sollversteuerung",
        "Beginn der Lohnzahlungen",
        "Kontakt (nicht Teil",
        "Norbert Notar",
        "Mandantenreferenz",
    ] {
        assert!(!text.contains(absent), "{absent:?} in:\n{text}");
    }
}

/// Within the thresholds `standard` is a waiver of the small-business rule, and says so.
#[test]
fn standard_regime_within_the_thresholds_is_shown_as_a_waiver() {
    let mut reg = ug();
    reg.vat = Vat {
        regime: Some(VatRegime::Standard),
        small_business: false,
        accounting_method: Some(AccountingMethod::Cash),
        estimated_balance_type: Some(BalanceType::Payable),
        estimated_balance_amount: Some(500),
        return_frequency: Some(ReturnFrequency::Quarterly),
        ..reg.vat
    };
    assert!(reg.financial_estimates.small_business_election_available());
    let text = raw_text(&render_tax_summary(&reg, &ctx()).unwrap());
    assert_in_order(
        &text,
        &[
            "Gewählte Besteuerung Regelbesteuerung (Verzicht nach § 19 Abs. 2 UStG)",
            "Kleinunternehmerregelung (§ 19 UStG) nein",
        ],
    );
    assert!(!text.contains("keine Wahl"), "{text}");
}

#[test]
fn sandbox_mark_on_every_page() {
    let mut reg = many();
    reg.environment = Environment::Sandbox;
    let pdf = render_tax_summary(&reg, &ctx()).unwrap();
    let n = pages(&pdf);
    assert!(n > 1);
    for p in 1..=n {
        let t = page_text(&pdf, p);
        assert!(t.contains("MUSTER - SANDBOX"), "page {p} without mark");
    }
}

#[test]
fn shareholders_page_break_cleanly() {
    let one = render_tax_summary(&gmbh(), &ctx()).unwrap();
    let reg = many();
    let pdf = render_tax_summary(&reg, &ctx()).unwrap();
    let (few, lots) = (pages(&one), pages(&pdf));
    assert!(lots >= few + 3, "{few} -> {lots} pages");
    let text = squash(&text_layout(&pdf));
    for s in &reg.shareholders.individuals {
        let name = format!("{} {}", s.first_name, s.last_name);
        assert!(text.contains(&name), "{name} missing");
    }
    // The share each nominal amount is of the capital, as the XML files it: 253 and 252 of
    // 25,000 euros for the 1.01 % shares, 255 for the 1.02 % one.
    assert!(text.contains("Anteil: 1,012 %"));
    assert!(text.contains("Anteil: 1,008 %"));
    assert!(text.contains("Anteil: 1,02 %"));
    for p in 1..=lots {
        let t = squash(&page_text(&pdf, p));
        assert!(
            t.contains(&format!("Seite {p} von {lots}")),
            "page {p}: {t}"
        );
    }
    // Nothing in the footer band or beyond the margins; no block split across pages: each
    // shareholder's name and share lie on the same page.
    let words = words(&pdf);
    for w in &words {
        assert!(
            w.x_min >= 50.0 && w.x_max <= 595.28 - 50.0,
            "{w:?} outside the margins"
        );
        assert!(w.y_max <= 841.89 - 20.0, "{w:?} below the footer");
    }
    for i in [1usize, 37, 98] {
        let first = format!("Vorname{i:02}");
        let at = words.iter().position(|w| w.text == first).unwrap();
        let page = words[at].page;
        let share = words[at..]
            .iter()
            .find(|w| w.text == "Anteil:")
            .expect("share");
        assert_eq!(share.page, page, "shareholder {i} split across pages");
    }
}

#[test]
fn long_values_wrap_inside_the_page() {
    let mut reg = gmbh();
    reg.purpose = "Entwicklung, Herstellung und Vertrieb von Software ".repeat(60);
    reg.name = "Sehr-lange-Firmenbezeichnung-ohne-Leerzeichen-".repeat(4) + "GmbH";
    let pdf = render_tax_summary(&reg, &ctx()).unwrap();
    for w in words(&pdf) {
        assert!(
            w.x_min >= 50.0 && w.x_max <= 595.28 - 50.0 && w.y_max <= 841.89 - 20.0,
            "{w:?} outside its box"
        );
    }
}

#[test]
fn deterministic_bytes() {
    let a = render_tax_summary(&gmbh(), &ctx()).unwrap();
    let b = render_tax_summary(&gmbh(), &ctx()).unwrap();
    assert_eq!(Sha256::digest(&a), Sha256::digest(&b));
    let mut other = ctx();
    other.timestamp = time::macros::datetime!(2025-03-21 09:30:00 UTC);
    let c = render_tax_summary(&gmbh(), &other).unwrap();
    assert_ne!(Sha256::digest(&a), Sha256::digest(&c));
}

#[test]
fn pdfa_metadata() {
    let pdf = render_tax_summary(&gmbh(), &ctx()).unwrap();
    let raw = String::from_utf8_lossy(&pdf);
    assert!(raw.contains("pdfaid:part"), "no PDF/A identification");
}

/// The signature's segments are stroked on the last page and nowhere else.
#[test]
fn signature_drawn_on_last_page() {
    let reg = many();
    let pdf = render_tax_summary(&reg, &ctx()).unwrap();
    let doc = lopdf::Document::load_mem(&pdf).unwrap();
    let ids = doc.get_pages();
    let count = |page: u32| {
        let content = Content::decode(&doc.get_page_content(ids[&page]).unwrap()).unwrap();
        // Curves only come from the signature (rules are straight lines).
        content
            .operations
            .iter()
            .filter(|o| o.operator == "c")
            .count()
    };
    let last = ids.len() as u32;
    let curves = reg
        .signature_path
        .segments()
        .iter()
        .filter(|s| matches!(s, domain::signature::Segment::CubicTo(..)))
        .count();
    assert!(curves > 0);
    assert_eq!(count(last), curves, "signature curves on the last page");
    for p in 1..last {
        assert_eq!(count(p), 0, "curves on page {p}");
    }
}

/// Writes the example PDFs to `$TAX_SUMMARY_OUT` (for the snapshot in docs/img:
/// `pdftoppm -r 80 -png -f 1 -l 1 gmbh.pdf`): `TAX_SUMMARY_OUT=/tmp/out cargo test -p forms
/// --test tax_summary -- --ignored write_examples`. A tool, not a test: ignored unless asked for.
#[test]
#[ignore = "writes the example PDFs for a look: TAX_SUMMARY_OUT=DIR and --ignored"]
fn write_examples_when_asked() {
    let dir = std::env::var_os("TAX_SUMMARY_OUT").expect("TAX_SUMMARY_OUT names a folder");
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, reg) in [("gmbh", gmbh()), ("ug", ug()), ("many", many())] {
        let pdf = render_tax_summary(&reg, &ctx()).unwrap();
        std::fs::write(dir.join(format!("{name}.pdf")), pdf).unwrap();
    }
}

// ---- partnerships (GbR, eGbR) ------------------------------------------------------------

/// The example request of `examples/tax-registration-{name}.json`, validated by the API's
/// parser.
fn partnership(name: &str) -> domain::gbr::GbrTaxRegistration {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!(
        "../../examples/{}tax-registration-{name}.json",
        example_folder(name)
    ));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    domain::gbr_request::parse(
        &json,
        date!(2026 - 01 - 10),
        &domain::offices::is_known_tax_office,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
    .registration
}

fn gbr_ctx() -> TaxSummaryContext {
    TaxSummaryContext {
        not_in_xml: Vec::new(),
        tax_office: Some(("2333".into(), "Finanzamt Lüneburg".into())),
        created_on: timestamp().date(),
        timestamp: timestamp(),
    }
}

#[test]
fn gbr_every_value_in_section_order() {
    let reg = partnership("gbr");
    let pdf = forms::render_partnership_tax_summary(&reg, &gbr_ctx()).unwrap();
    let title = title(&pdf).unwrap_or_default();
    assert!(
        title.ends_with("Zusammenfassung - Heide & Partner Hofladen GbR"),
        "{title}"
    );
    let text = raw_text(&pdf);
    assert_in_order(
        &text,
        &[
            "Fragebogen zur steuerlichen Erfassung",
            "Personengesellschaft (GbR)",
            "Finanzamt Lüneburg (2333)",
            "Begleitete Übermittlung (guided)",
            "Allgemeine Angaben",
            "Name der Gesellschaft Heide & Partner Hofladen GbR",
            "Rechtsform Gesellschaft bürgerlichen Rechts (GbR)",
            "Am Sande 12",
            "21335 Lüneburg",
            "Verkauf regionaler Lebensmittel im Hofladen",
            "Beginn der Tätigkeit 01.05.2025",
            "Wirtschaftsjahr Kalenderjahr",
            "Gesellschaftsvertrag vom 01.04.2025",
            "Gesellschaftsregister",
            "nicht eingetragen (GbR)",
            "3. Gesellschafter",
            "Natürliche Personen",
            "Jana Heide",
            "geboren am 14.06.1988, Steuer-IdNr.: 65929970489",
            "Anteil: 33,33 %",
            "Geschäftsführung und Vertretung: ja",
            "Ole Brandt",
            "Anteil: 33,33 %",
            "Geschäftsführung und Vertretung: ja",
            "Søren Ørsted",
            "Nørregade 4, 1165 København, Dänemark",
            "Anteil: 33,34 %",
            "Geschäftsführung und Vertretung: nein",
            "Summe der Anteile 100 %",
            "Vertretungsberechtigt Jana Heide",
            "Ole Brandt",
            "4. Bankverbindung",
            "IBAN keine Angabe",
            "5. Voraussichtliche Umsätze und Gewinne",
            "18.000 €",
            "6. Umsatzsteuer",
            "Kleinunternehmerregelung (§ 19 UStG) ja",
            "7. Lohnsteuer",
            "Arbeitnehmer beschäftigt nein",
            "Lüneburg, den 20.03.2025",
            "Unterschrift vertretungsberechtigte Gesellschafter: Jana Heide, Ole Brandt",
        ],
    );
    for absent in [
        "Stammkapital",
        "Notar",
        "Handelsregister",
        "Geschäftsführer/in",
        "Kapitalgesellschaft",
        "Mandantenreferenz",
        "Beginn der Lohnzahlungen",
        "MUSTER",
    ] {
        assert!(!text.contains(absent), "{absent:?} in:\n{text}");
    }
}

#[test]
fn egbr_register_entities_payroll_and_sandbox_mark() {
    let reg = partnership("egbr");
    let ctx = TaxSummaryContext {
        not_in_xml: Vec::new(),
        tax_office: Some(("5215".into(), "Finanzamt Köln-Mitte".into())),
        ..gbr_ctx()
    };
    let pdf = forms::render_partnership_tax_summary(&reg, &ctx).unwrap();
    let text = raw_text(&pdf);
    assert_in_order(
        &text,
        &[
            "Personengesellschaft (eGbR)",
            "Finanzamt Köln-Mitte (5215)",
            "crm-0815",
            "Rechtsform eingetragene Gesellschaft bürgerlichen Rechts (eGbR)",
            "Gesellschaftsvertrag vom 15.01.2025",
            "Gesellschaftsregister",
            "Status eingetragen",
            "Datum der Eintragung 10.02.2025",
            "Registergericht Amtsgericht Köln",
            "Registernummer GsR 1234",
            "Katharina Rhein",
            "Anteil: 40 %",
            "Geschäftsführung und Vertretung: ja",
            "Paul Rhein",
            "Anteil: 35 %",
            "Geschäftsführung und Vertretung: nein",
            "Gesellschaften",
            "Rhein Verwaltungs GmbH",
            "Hohenzollernring 55, 50672 Köln, Deutschland",
            "Anteil: 25 %",
            "Geschäftsführung und Vertretung: ja",
            "Summe der Anteile 100 %",
            "Vertretungsberechtigt Katharina Rhein",
            "Rhein Verwaltungs GmbH",
            "DE89 3704 0044 0532 0130 00",
            "Voranmeldungszeitraum monatlich",
            "Anzahl der Arbeitnehmer 2",
            "davon Gesellschafter 0",
            "Voraussichtliche Lohnsteuer 6.000 € jährlich",
            "Köln, den 20.03.2025",
            "Unterschrift vertretungsberechtigte Gesellschafter: Katharina Rhein, Rhein Verwaltungs GmbH",
        ],
    );
    assert!(!text.contains("Registernummer HRB"), "{text}");
    for p in 1..=pages(&pdf) {
        assert!(page_text(&pdf, p).contains("MUSTER - SANDBOX"), "page {p}");
    }
}

#[test]
fn ninety_nine_partners_page_cleanly_and_deterministically() {
    let mut reg = partnership("gbr");
    let template = reg.partners.individuals[0].clone();
    reg.partners.individuals = (1..=99)
        .map(|i| domain::gbr::IndividualPartner {
            first_name: format!("Vorname{i:02}"),
            last_name: format!("Nachname{i:02}"),
            share_percentage: pct(if i == 99 { "1.0102" } else { "1.0101" }),
            is_managing_partner: i == 1,
            ..template.clone()
        })
        .collect();
    let pdf = forms::render_partnership_tax_summary(&reg, &gbr_ctx()).unwrap();
    let n = pages(&pdf);
    assert!(n >= 4, "{n} pages");
    let words = words(&pdf);
    for w in &words {
        assert!(
            w.x_min >= 50.0 && w.x_max <= 595.28 - 50.0 && w.y_max <= 841.89 - 20.0,
            "{w:?} outside its box"
        );
    }
    for i in [1usize, 50, 99] {
        let first = format!("Vorname{i:02}");
        let at = words.iter().position(|w| w.text == first).unwrap();
        let flag = words[at..]
            .iter()
            .find(|w| w.text == "Vertretung:")
            .expect("managing flag");
        assert_eq!(flag.page, words[at].page, "partner {i} split across pages");
    }
    let again = forms::render_partnership_tax_summary(&reg, &gbr_ctx()).unwrap();
    assert_eq!(Sha256::digest(&pdf), Sha256::digest(&again));
}

/// The examples these tests were written against: the UG and GbR requests are production cases
/// (`examples/production/`), the GmbH and eGbR ones sandbox cases (`examples/`).
fn example_folder(name: &str) -> &'static str {
    if matches!(name, "ug" | "gbr") {
        "production/"
    } else {
        ""
    }
}

//! The GewA 1 as the trade office files it (issue 49): one Anmeldung per legal person with its
//! further representatives on supplementary sheets, the 2024 wording, relocations (field 17),
//! "(in Gründung)", field 1 against field 3, and no placeholder on a production power of
//! attorney. Each test renders the form and reads it back. The server's tests
//! (`crates/server/tests/gewa1_filing.rs`) drive the same through the HTTP app.

mod common;

use common::*;
use domain::country::CountryCode;
use domain::trade::{Environment, Gender, LegalForm, Owner, PostalAddress, Reason};
use forms::{RenderError, render_gewa1, render_power_of_attorney};

/// The self example (a GmbH with one managing director) with a second director, Polish.
fn two_directors() -> forms::TradeRegistration {
    let mut reg = example("trade-registration-self");
    let mut second: Owner = reg.owners[0].clone();
    second.first_name = "Jan".into();
    second.last_name = "Łukasiewicz".into();
    second.birth_name = None;
    second.gender = Gender::Male;
    second.nationality = CountryCode::parse("PL").unwrap();
    second.residence_permit = None;
    second.has_employment_restrictions = None;
    second.phone = "+49 171 7654321".into();
    second.email = "jan@example.de".into();
    reg.owners.push(second);
    reg
}

/// The text of page `page` (1-based) with runs of white space as one.
fn page(pdf: &[u8], page: usize) -> String {
    squash(&page_text(pdf, page))
}

#[test]
fn a_gmbh_with_two_directors_files_one_form_with_a_sheet_for_the_second() {
    let reg = two_directors();
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    // Every owner is on the same form.
    assert_eq!(render_gewa1(&reg, 1, &gewa1_ctx()).unwrap(), pdf);
    assert_eq!(page_count(&pdf), 3);
    assert_eq!(
        title(&pdf).as_deref(),
        Some("GewA 1 - Mustermann Software GmbH")
    );
    // Fields 4 and 5 hold the first representative, field 12 counts both.
    assert_eq!(gewa1_box_text(&pdf, "4"), "Mustermann");
    assert_eq!(gewa1_box_text(&pdf, "5"), "Erika");
    assert_eq!(gewa1_box_text(&pdf, "12"), "2");
    let sheet = page(&pdf, 3);
    for want in [
        "Beiblatt zur Gewerbe-Anmeldung (GewA 1)",
        "Weiterer gesetzlicher Vertreter (2 von 2), Felder 4 bis 11, 30 und 31, zum Vordruck für Mustermann Software GmbH, vom 20.03.2025",
        "Feld 4 – Name Łukasiewicz",
        "Feld 5 – Vornamen Jan",
        "Feld 6 – Geschlecht männlich",
        "Feld 8 – Geburtsdatum 12.08.1984",
        "Feld 9 – Geburtsort und -land Wien, Österreich",
        "Feld 10 – Staatsangehörigkeit(en) polnisch",
        "Feld 11 – Anschrift der Wohnung Heidestraße 17 51147 Köln",
        "Feld 11 – (Mobil-)Telefonnummer +49 171 7654321",
        "Feld 11 – E-Mail-Adresse jan@example.de",
        "Feld 32 – Datum 20.03.2025",
        "Feld 33 – Unterschrift",
        "Beiblatt, Seite 1 von 1",
    ] {
        assert!(sheet.contains(want), "{want:?} not on the sheet: {sheet}");
    }
    // Neither permit field for a Polish director (he needs no residence title).
    assert!(!sheet.contains("Feld 30"), "{sheet}");
    assert!(!sheet.contains("Feld 31"), "{sheet}");
    // His own signature is drawn under the label: ink in the sheet's signature box.
    let ink = dark_pixels_below(&pdf, 2, "Feld 33 – Unterschrift");
    assert!(
        ink > 20,
        "no signature drawn on the sheet ({ink} dark pixels)"
    );
}

#[test]
fn a_gbr_with_two_managing_partners_files_two_forms() {
    let reg = example("trade-registration-assisted");
    assert_eq!(reg.legal_form, LegalForm::Gbr);
    let first = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    let second = render_gewa1(&reg, 1, &gewa1_ctx()).unwrap();
    assert_ne!(first, second);
    for pdf in [&first, &second] {
        assert_eq!(page_count(pdf), 2);
    }
    assert_eq!(
        gewa1_box_text(&first, "5"),
        reg.owners[0].first_name.as_str()
    );
    assert_eq!(
        gewa1_box_text(&second, "5"),
        reg.owners[1].first_name.as_str()
    );
}

/// A move from another office's district: field 17 holds the former establishment, field 25
/// ticks the box in the wording of the model of 11.12.2024.
#[test]
fn a_relocation_prints_the_former_establishment_and_the_2024_wording() {
    let mut reg = example("trade-registration-self");
    reg.reason = Reason::ReopeningAfterRelocation;
    reg.previous_establishment = Some(PostalAddress {
        street: "Leopoldstraße 10".into(),
        street_second_line: None,
        zip: "80802".into(),
        city: "München".into(),
        state: None,
        country: CountryCode::DE,
    });
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(gewa1_box_text(&pdf, "17"), "Leopoldstraße 10 80802 München");
    assert_eq!(gewa1_box_text(&pdf, "25_relocation"), "X");
    let page2 = page(&pdf, 2);
    assert!(
        page2.contains("Verlegung des Betriebs aus einem anderen Meldebezirk"),
        "{page2}"
    );
    assert!(!page2.contains("Wiedereröffnung"), "{page2}");
    // A move from abroad adds the country.
    reg.previous_establishment.as_mut().unwrap().country = CountryCode::parse("AT").unwrap();
    reg.previous_establishment.as_mut().unwrap().zip = "1010".into();
    reg.previous_establishment.as_mut().unwrap().city = "Wien".into();
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(
        gewa1_box_text(&pdf, "17"),
        "Leopoldstraße 10 1010 Wien Österreich"
    );
}

/// The 2024 wording is the form's own, on every form (not only a relocation's).
#[test]
fn every_form_carries_the_2024_wording_and_names_its_model() {
    let pdf = render_gewa1(&example("trade-registration-self"), 0, &gewa1_ctx()).unwrap();
    assert!(page(&pdf, 2).contains("Verlegung des Betriebs aus einem anderen Meldebezirk"));
    assert_eq!(gewa1_box_text(&pdf, "17"), "");
    let raw = String::from_utf8_lossy(&pdf);
    assert!(
        raw.contains(forms::GEWA1_FORM_VERSION),
        "the metadata name the model"
    );
}

#[test]
fn a_legal_person_before_its_entry_is_in_formation() {
    let mut reg = example("trade-registration-self");
    reg.registration_number = None;
    reg.registration_court = None;
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(
        gewa1_box_text(&pdf, "1"),
        "Mustermann Software GmbH (in Gründung) Rechtsform: GmbH"
    );
    assert_eq!(gewa1_box_text(&pdf, "2"), "");
    // A name that says so already is not said twice.
    for name in [
        "Mustermann Software GmbH i. G.",
        "Mustermann Software GmbH i.G.",
        "Mustermann Software GmbH (in Gründung)",
    ] {
        reg.name = name.into();
        let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
        assert_eq!(
            gewa1_box_text(&pdf, "1"),
            format!("{name} Rechtsform: GmbH")
        );
    }
    // A UG too; a partnership is not a legal person.
    for (form, name, in_formation) in [
        (LegalForm::Ug, "Spree UG (haftungsbeschränkt)", true),
        (LegalForm::Ohg, "Spree OHG", false),
    ] {
        reg.legal_form = form;
        reg.name = name.into();
        let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
        assert_eq!(
            gewa1_box_text(&pdf, "1").contains("(in Gründung)"),
            in_formation,
            "{form:?}"
        );
    }
}

/// Field 1 is the name entered in a register; a business name without one is field 3.
#[test]
fn a_sole_traders_business_name_is_field_3() {
    let mut reg = example("trade-registration-self");
    reg.legal_form = LegalForm::Einzelunternehmen;
    reg.name = "Erikas Softwareschmiede".into();
    reg.registration_number = None;
    reg.registration_court = None;
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(gewa1_box_text(&pdf, "1"), "");
    assert_eq!(gewa1_box_text(&pdf, "3"), "Erikas Softwareschmiede");
    // An e. K. is entered: field 1.
    reg.legal_form = LegalForm::EinzelkaufmannEk;
    reg.name = "Erikas Softwareschmiede e. K.".into();
    reg.registration_number = Some("HRA 12345 B".into());
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(
        gewa1_box_text(&pdf, "1"),
        "Erikas Softwareschmiede e. K. Rechtsform: eingetragener Kaufmann (e. K.)"
    );
    assert_eq!(gewa1_box_text(&pdf, "3"), "");
}

/// A GbR is entered in no register: its name is field 3, and field 1 names the other
/// partners as its label asks.
#[test]
fn a_gbrs_name_is_field_3_and_field_1_names_the_other_partners() {
    let reg = example("trade-registration-assisted");
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    let other = &reg.owners[1];
    assert_eq!(
        gewa1_box_text(&pdf, "1"),
        format!(
            "Rechtsform: GbR Weitere Gesellschafter: {} {}",
            other.first_name, other.last_name
        )
    );
    assert_eq!(gewa1_box_text(&pdf, "3"), reg.name);
}

#[test]
fn a_production_power_of_attorney_names_a_configured_operator_or_none() {
    let mut reg = example("trade-registration-assisted");
    let mut ctx = poa_ctx();
    ctx.operator = None;
    assert_eq!(
        render_power_of_attorney(&reg, 0, &ctx),
        Err(RenderError::OperatorNotConfigured)
    );
    // The sandbox names its placeholder, under the sandbox mark.
    reg.environment = Environment::Sandbox;
    let pdf = render_power_of_attorney(&reg, 0, &ctx).unwrap();
    let text = squash(&text_layout(&pdf));
    assert!(text.contains("Sandbox-Betreiber"), "{text}");
    assert!(text.contains("MUSTER - SANDBOX"), "{text}");
    assert!(!text.contains("nicht konfiguriert"), "{text}");
}

/// Dark pixels in the 6 cm x 2 cm box under the first line of page `page` (0-based) that
/// starts with `label`, at 72 dpi.
fn dark_pixels_below(pdf: &[u8], page: usize, label: &str) -> usize {
    let first = label.split_whitespace().next().unwrap();
    let words = words(pdf);
    let label_word = words
        .iter()
        .filter(|w| w.page == page && w.text == first)
        .find(|w| {
            let line: String = words
                .iter()
                .filter(|o| o.page == page && (o.y_min - w.y_min).abs() < 1.0 && o.x_min >= w.x_min)
                .map(|o| o.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            line.starts_with(label)
        })
        .unwrap_or_else(|| panic!("no {label:?} on page {page}"));
    let pixels = read_back::gray_pixels(pdf, page, 72.0);
    // A4 at 72 dpi: 595 or 596 pixels wide, however the renderer rounds.
    let width = [595usize, 596]
        .into_iter()
        .find(|w| [841, 842].contains(&(pixels.len() / w)) && pixels.len().is_multiple_of(*w))
        .expect("an A4 page");
    let (x0, y0) = (label_word.x_min as usize, label_word.y_max as usize + 2);
    let mut dark = 0;
    for y in y0..(y0 + 57).min(pixels.len() / width) {
        for x in x0..(x0 + 180).min(width) {
            if pixels.get(y * width + x).is_some_and(|&p| p < 128) {
                dark += 1;
            }
        }
    }
    dark
}

/// With `GEWA1_FILING_OUT` set, writes the two-director GmbH's form and a relocation's for
/// review and for the pictures in docs/img (`pdftoppm -r 80 -png`); a no-op otherwise.
#[test]
fn write_examples() {
    let Some(dir) = std::env::var_os("GEWA1_FILING_OUT") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let pdf = render_gewa1(&two_directors(), 0, &gewa1_ctx()).unwrap();
    std::fs::write(dir.join("gewa1-two-directors.pdf"), pdf).unwrap();
    let mut reg = example("trade-registration-self");
    reg.reason = Reason::ReopeningAfterRelocation;
    reg.registration_number = None;
    reg.registration_court = None;
    reg.previous_establishment = Some(PostalAddress {
        street: "Leopoldstraße 10".into(),
        street_second_line: None,
        zip: "80802".into(),
        city: "München".into(),
        state: None,
        country: CountryCode::DE,
    });
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    std::fs::write(dir.join("gewa1-relocation.pdf"), pdf).unwrap();
}

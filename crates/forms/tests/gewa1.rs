//! GewA 1 rendering: content, order, page format, determinism, sandbox mark, errors.

mod common;

use common::*;
use domain::trade::{Environment, LegalForm, UploadedDocument};
use forms::{RenderError, render_gewa1};
use sha2::{Digest, Sha256};

#[test]
fn examples_deserialise() {
    let own = example("trade-registration-self");
    assert_eq!(own.owners.len(), 1);
    assert_eq!(own.legal_form, LegalForm::Gmbh);
    assert!(own.industrial_license.is_some());
    assert!(own.employees.is_some());
    assert!(own.owners[0].residence_permit.is_some());
    let assisted = example("trade-registration-assisted");
    assert_eq!(assisted.owners.len(), 2);
    assert_eq!(
        assisted.client_preferred_language,
        domain::trade::Language::En
    );
    assert!(
        assisted
            .owners
            .iter()
            .all(|o| o.signatures.power_of_attorney.is_some())
    );
}

#[test]
fn two_a4_pages_with_title() {
    let pdf = render_gewa1(&example("trade-registration-self"), 0, &gewa1_ctx()).unwrap();
    assert_eq!(page_sizes(&pdf), [A4, A4]);
    // A GmbH files one form for the company (its legal representative on it).
    assert_eq!(
        title(&pdf).as_deref(),
        Some("GewA 1 - Mustermann Software GmbH")
    );
    assert!(pdf.starts_with(b"%PDF-"));
}

/// Every value of the request appears, in the order of the boxes on the form.
#[test]
fn every_value_in_box_order() {
    let reg = example("trade-registration-self");
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    let page1 = squash(&page_text(&pdf, 1));
    let page2 = squash(&page_text(&pdf, 2));
    let in_order = |text: &str, values: &[&str]| {
        let mut from = 0;
        for v in values {
            let v = squash(v);
            match text[from..].find(&v) {
                Some(i) => from += i + v.len(),
                None => panic!("{v:?} missing or out of order after byte {from} in:\n{text}"),
            }
        }
    };
    in_order(
        &page1,
        &[
            "Bezirksamt Mitte von Berlin, Gewerbeamt",
            "11000000",
            "Amtsgericht Charlottenburg, HRB 245789 B",
            "Mustermann Software GmbH",
            "Rechtsform: GmbH",
            "Mustermann",
            "Erika",
            "weiblich X",
            "Gabler",
            "12.08.1984",
            "Wien, Österreich",
            "andere: türkisch",
            "+49 170 1234567",
            "Heidestraße 17",
            "51147 Köln",
            "erika.mustermann@example.de",
            "1",
            "nein X",
            "+49 30 12345678",
            "Musterstraße 1",
            "Hinterhaus, 3. OG",
            "kontakt@mustermann-software.de",
            "10115 Berlin",
        ],
    );
    in_order(
        &page2,
        &[
            "Entwicklung und Vertrieb von Software",
            "nein X",
            "01.04.2025",
            "Handel X",
            "Sonstiges X",
            "Vollzeit 3",
            "Teilzeit 6-10",
            "Hauptniederlassung X",
            "Neugründung X",
            "ja X",
            "14.02.2025, Bezirksamt Mitte von Berlin, Ordnungsamt, 13353 Berlin",
            "ja X",
            "09.03.2021, Landesamt für Einwanderung Berlin",
            "nein X",
            "20.03.2025",
        ],
    );
    // Nothing ticked that should not be.
    assert!(!page1.contains("männlich X"));
    assert!(!page1.contains("deutsch X"), "nationality is TR");
    assert!(!page2.contains("keine X"), "employees were given");
}

#[test]
fn partnership_lists_other_partners_and_foreign_main_office() {
    let reg = example("trade-registration-assisted");
    let pdf = render_gewa1(&reg, 1, &gewa1_ctx()).unwrap();
    let page1 = squash(&page_text(&pdf, 1));
    for v in [
        "Mustermann & Łukasiewicz Gastronomie GbR",
        "Weitere Gesellschafter: Max Mustermann",
        "Łukasiewicz",
        "Zofia",
        "divers X",
        "28.02.1990",
        "Kraków, Polen",
        "deutsch X andere: polnisch",
        "ul. Floriańska 12",
        "31-019 Kraków",
        // Field 16: the main office abroad for a branch.
        "Rue de la Paix 8",
        "75002 Paris",
        "Frankreich",
    ] {
        assert!(page1.contains(v), "{v:?} missing in:\n{page1}");
    }
    let page2 = squash(&page_text(&pdf, 2));
    assert!(page2.contains("ja X"), "secondary occupation ticks 19 ja");
    assert!(page2.contains("keine X"), "no employees ticks keine");
    assert!(page2.contains("eine Zweigniederlassung X"), "{page2}");
    // The first owner is German: "deutsch" ticked, the other partner listed.
    let pdf0 = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    let p0 = squash(&page_text(&pdf0, 1));
    assert!(p0.contains("deutsch X"), "{p0}");
    assert!(p0.contains("Weitere Gesellschafter: Zofia Łukasiewicz"));
    // Owner without address: the establishment is the residential address.
    assert!(p0.matches("Friedrichstraße 101").count() >= 2, "{p0}");
}

#[test]
fn empty_head_when_unknown() {
    let mut ctx = gewa1_ctx();
    ctx.trade_office_name = None;
    ctx.municipality_key = None;
    let pdf = render_gewa1(&example("trade-registration-self"), 0, &ctx).unwrap();
    let text = text_layout(&pdf);
    assert!(!text.contains("11000000"));
    assert!(!text.contains("Gewerbeamt"));
}

#[test]
fn deterministic_bytes_also_across_threads() {
    let reg = example("trade-registration-self");
    let a = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    let b = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    let c = std::thread::spawn(move || render_gewa1(&reg, 0, &gewa1_ctx()).unwrap())
        .join()
        .unwrap();
    assert_eq!(Sha256::digest(&a), Sha256::digest(&b));
    assert_eq!(Sha256::digest(&a), Sha256::digest(&c));
    // A different timestamp changes the metadata, hence the bytes.
    let mut ctx = gewa1_ctx();
    ctx.timestamp += time::Duration::seconds(1);
    let d = render_gewa1(&example("trade-registration-self"), 0, &ctx).unwrap();
    assert_ne!(Sha256::digest(&a), Sha256::digest(&d));
}

#[test]
fn sandbox_mark_on_every_page() {
    let mut reg = example("trade-registration-self");
    let production = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert!(!text_layout(&production).contains("SANDBOX"));
    reg.environment = Environment::Sandbox;
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    for page in 1..=2 {
        let text = squash(&page_text(&pdf, page));
        assert!(text.contains("MUSTER - SANDBOX"), "page {page}: {text}");
    }
}

#[test]
fn pdfa_2b_metadata() {
    let pdf = render_gewa1(&example("trade-registration-self"), 0, &gewa1_ctx()).unwrap();
    // The declaration; tests/pdfa.rs holds the file to the PDF/A-2b rules.
    let raw = String::from_utf8_lossy(&pdf);
    assert!(
        raw.contains("<pdfaid:part>2</pdfaid:part>"),
        "PDF/A part missing"
    );
    assert!(raw.contains("<pdfaid:conformance>B</pdfaid:conformance>"));
    assert!(raw.contains("/OutputIntents"));
    assert!(raw.contains("GewA 1 - Mustermann Software GmbH"));
}

#[test]
fn errors_for_missing_owner_uploaded_pdf_and_missing_signature() {
    let mut reg = example("trade-registration-self");
    assert_eq!(
        render_gewa1(&reg, 5, &gewa1_ctx()),
        Err(RenderError::NoSuchOwner(5))
    );
    reg.owners[0].documents.gewa_1 = Some(UploadedDocument {
        file: "gewa1_erika".into(),
    });
    assert_eq!(
        render_gewa1(&reg, 0, &gewa1_ctx()),
        Err(RenderError::SignedDocumentSupplied(0))
    );
    reg.owners[0].documents.gewa_1 = None;
    reg.owners[0].signatures.gewa_1 = None;
    assert_eq!(
        render_gewa1(&reg, 0, &gewa1_ctx()),
        Err(RenderError::MissingSignature(0))
    );
}

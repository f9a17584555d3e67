//! Sample trade licence (sandbox): content read back, the mark in every
//! environment, one page at the limits, determinism.

mod common;

use common::*;
use domain::trade::Environment;
use forms::{TradeLicenceContext, render_trade_licence};
use sha2::{Digest, Sha256};

fn ctx() -> TradeLicenceContext {
    trade_licence_ctx()
}

#[test]
fn names_business_owners_establishment_activity_office_and_fee() {
    let mut reg = example("trade-registration-assisted");
    reg.environment = Environment::Sandbox;
    let pdf = render_trade_licence(&reg, &ctx()).unwrap();
    assert_eq!(forms::check_pdf(&pdf), Ok(1));
    assert_eq!(page_sizes(&pdf), [A4]);
    assert_eq!(
        title(&pdf).as_deref(),
        Some(
            "Gewerbeanmeldung – Empfangsbescheinigung (Muster) - Mustermann & Łukasiewicz Gastronomie GbR"
        )
    );
    let text = squash(&text_layout(&pdf));
    for v in [
        "MUSTER - SANDBOX",
        "Gewerbeanmeldung – Empfangsbescheinigung (Muster)",
        "§ 15 Abs. 1 der Gewerbeordnung",
        "Gewerbeamt Musterstadt (Sandbox)",
        "Musterplatz 1, 12345 Musterstadt",
        "ist am 18.03.2025 bei der oben genannten Behörde eingegangen",
        "SANDBOX-0196A1B2",
        "20.03.2025",
        "Mustermann & Łukasiewicz Gastronomie GbR",
        "Rechtsform: GbR",
        // A partnership: the partners carry on the trade themselves.
        "Gewerbetreibende",
        "Max Mustermann, geboren am 02.11.1979",
        "Zofia Łukasiewicz, geboren am 28.02.1990",
        "Friedrichstraße 101, 10117 Berlin",
        "Gemeindekennzahl: 11000000",
        "Betrieb eines Cafés mit Konditorei",
        "Handel, Handwerk",
        "Beginn der Tätigkeit 15.05.2025",
        "26,00 EUR (bezahlt)",
        "von keiner Behörde ausgestellt",
    ] {
        assert!(text.contains(v), "{v:?} missing in:\n{text}");
    }
}

#[test]
fn a_legal_person_lists_its_representatives_and_optional_values_read_plainly() {
    let reg = example("trade-registration-self");
    let mut c = ctx();
    c.received_on = None;
    c.fee_cents = None;
    c.trade_office_address = None;
    c.municipality_key = None;
    let text = squash(&text_layout(&render_trade_licence(&reg, &c).unwrap()));
    for v in [
        "Mustermann Software GmbH",
        "Vertretungsberechtigte",
        "Erika Mustermann, geboren am 12.08.1984",
        "Musterstraße 1, Hinterhaus, 3. OG, 10115 Berlin",
        "Der Empfang der Gewerbeanzeige (Vordruck GewA 1)",
        "Gebühr nicht festgesetzt",
        "Handel, Sonstiges",
    ] {
        assert!(text.contains(v), "{v:?} missing in:\n{text}");
    }
    assert!(!text.contains("Gemeindekennzahl"), "{text}");
    assert!(!text.contains("eingegangen."), "{text}");
}

#[test]
fn always_marked_even_for_a_production_registration() {
    let reg = example("trade-registration-self");
    assert_eq!(reg.environment, Environment::Production);
    let pdf = render_trade_licence(&reg, &ctx()).unwrap();
    assert!(squash(&text_layout(&pdf)).contains("MUSTER - SANDBOX"));
}

#[test]
fn deterministic_for_the_same_input_and_timestamp() {
    let reg = example("trade-registration-assisted");
    let a = render_trade_licence(&reg, &ctx()).unwrap();
    let b = render_trade_licence(&reg, &ctx()).unwrap();
    assert_eq!(Sha256::digest(&a), Sha256::digest(&b));
    let mut later = ctx();
    later.fee_paid = false;
    let c = render_trade_licence(&reg, &later).unwrap();
    assert_ne!(Sha256::digest(&a), Sha256::digest(&c));
    assert!(squash(&text_layout(&c)).contains("26,00 EUR (offen)"));
}

#[test]
fn nine_owners_with_long_names_stay_on_one_page() {
    let mut reg = example("trade-registration-assisted");
    let template = reg.owners[0].clone();
    reg.owners = (0..9)
        .map(|i| {
            let mut o = template.clone();
            o.first_name = format!("Vorname{i} {}", "Langername".repeat(6));
            o.last_name = format!("Nachname{i} {}", "Doppelname".repeat(6));
            o
        })
        .collect();
    reg.name = format!("Firma {}", "Sehrlangerfirmenname ".repeat(5))
        .chars()
        .take(120)
        .collect();
    reg.purpose = "Tätigkeit ".repeat(20).chars().take(200).collect();
    reg.registered_office.street = "Straße ".repeat(10).chars().take(72).collect();
    let pdf = render_trade_licence(&reg, &ctx()).unwrap();
    assert_eq!(page_count(&pdf), 1);
    let all = words(&pdf);
    for w in &all {
        assert!(
            w.y_max <= 841.89 && w.x_max <= 595.28 && w.x_min >= 0.0,
            "{w:?} off the page"
        );
    }
    let text = squash(&text_layout(&pdf));
    for i in 0..9 {
        assert!(
            text.contains(&format!("Nachname{i}")),
            "owner {i} in {text}"
        );
    }
    assert!(text.contains("ohne Unterschrift"), "the last line is drawn");
}

/// `TRADE_LICENCE_OUT=/tmp/out cargo test -p forms --test trade_licence -- --ignored
/// write_example` writes the example for a look (`pdftoppm -r 80 -png`). A tool, not a test:
/// ignored unless asked for.
#[test]
#[ignore = "writes the example for a look: TRADE_LICENCE_OUT=DIR and --ignored"]
fn write_example_when_asked() {
    let dir = std::env::var_os("TRADE_LICENCE_OUT").expect("TRADE_LICENCE_OUT names a folder");
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut reg = example("trade-registration-assisted");
    reg.environment = Environment::Sandbox;
    let pdf = render_trade_licence(&reg, &ctx()).unwrap();
    std::fs::write(dir.join("trade-licence.pdf"), pdf).unwrap();
}

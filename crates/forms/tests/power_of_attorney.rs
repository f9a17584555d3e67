//! Power of attorney: content, translation, page format, sandbox mark, determinism, errors.

mod common;

use common::*;
use domain::trade::{Environment, Language};
use forms::{RenderError, render_power_of_attorney};
use sha2::{Digest, Sha256};

#[test]
fn names_owner_company_operator_and_matter() {
    let reg = example("trade-registration-assisted");
    let pdf = render_power_of_attorney(&reg, 1, &poa_ctx()).unwrap();
    assert_eq!(page_sizes(&pdf), [A4]);
    assert_eq!(
        title(&pdf).as_deref(),
        Some("Vollmacht - Zofia Łukasiewicz")
    );
    let text = squash(&text_layout(&pdf));
    for v in [
        "Vollmacht zur Einreichung der Gewerbeanmeldung",
        "Zofia Łukasiewicz",
        "geboren am 28.02.1990",
        "ul. Floriańska 12, m. 4, 31-019 Kraków, Polen",
        "Mustermann & Łukasiewicz Gastronomie GbR",
        "Rechtsform: GbR",
        "Friedrichstraße 101, 10117 Berlin",
        // Operator from the context, not a literal.
        "Muster Filing Services GmbH",
        "Beispielweg 5, 10117 Berlin",
        "Beginn der Tätigkeit am 15.05.2025",
        "entgegenzunehmen",
        // Place defaults to the owner's city.
        "Kraków, den 20.03.2025",
        "Unterschrift Zofia Łukasiewicz",
    ] {
        assert!(text.contains(v), "{v:?} missing in:\n{text}");
    }
    // English courtesy translation below the German text.
    let german = text
        .find("Hiermit bevollmächtige ich")
        .expect("German body");
    let english = text.find("Courtesy translation").expect("translation note");
    assert!(english > german);
    assert!(text.contains("Only the German text above is binding"));
    assert!(text.contains("hereby authorise"));
}

#[test]
fn translations_per_language_and_none_for_german() {
    let mut reg = example("trade-registration-assisted");
    for (lang, marker) in [
        (Language::Fr, "Traduction de courtoisie"),
        (Language::It, "Traduzione di cortesia"),
        (Language::Es, "Traducción de cortesía"),
        (Language::En, "Courtesy translation"),
    ] {
        reg.client_preferred_language = lang;
        let text = squash(&text_layout(
            &render_power_of_attorney(&reg, 0, &poa_ctx()).unwrap(),
        ));
        assert!(text.contains(marker), "{lang:?}: {text}");
    }
    reg.client_preferred_language = Language::De;
    let text = squash(&text_layout(
        &render_power_of_attorney(&reg, 0, &poa_ctx()).unwrap(),
    ));
    for marker in ["translation", "Traduction", "Traduzione", "Traducción"] {
        assert!(!text.contains(marker), "German document has {marker:?}");
    }
    // Explicit place and an owner without address.
    let mut ctx = poa_ctx();
    ctx.place = Some("Potsdam".into());
    let text = squash(&text_layout(
        &render_power_of_attorney(&reg, 0, &ctx).unwrap(),
    ));
    assert!(text.contains("Potsdam, den 20.03.2025"));
    assert!(text.contains("Max Mustermann"));
}

#[test]
fn sandbox_deterministic_and_errors() {
    let mut reg = example("trade-registration-assisted");
    let a = render_power_of_attorney(&reg, 0, &poa_ctx()).unwrap();
    let b = render_power_of_attorney(&reg, 0, &poa_ctx()).unwrap();
    assert_eq!(Sha256::digest(&a), Sha256::digest(&b));
    assert!(!text_layout(&a).contains("SANDBOX"));
    reg.environment = Environment::Sandbox;
    let s = render_power_of_attorney(&reg, 0, &poa_ctx()).unwrap();
    assert!(squash(&text_layout(&s)).contains("MUSTER - SANDBOX"));
    assert_eq!(
        render_power_of_attorney(&reg, 2, &poa_ctx()),
        Err(RenderError::NoSuchOwner(2))
    );
    reg.owners[0].signatures.power_of_attorney = None;
    assert_eq!(
        render_power_of_attorney(&reg, 0, &poa_ctx()),
        Err(RenderError::MissingSignature(0))
    );
}

/// The fonts prepared once per process hold every glyph of a power of attorney whose facts are
/// German and Latin letters, in every language: such a document carries no font subset of
/// its own (`/D0`, `/D1`), which is what makes it cheap to write. A name beyond them adds one.
#[test]
fn prepared_fonts_cover_the_common_documents() {
    let mut reg = example("trade-registration-assisted");
    reg.name = "Mustermann Gastronomie GbR".into();
    for lang in Language::ALL {
        reg.client_preferred_language = lang;
        for env in [Environment::Production, Environment::Sandbox] {
            reg.environment = env;
            let pdf = render_power_of_attorney(&reg, 0, &poa_ctx()).unwrap();
            let raw = String::from_utf8_lossy(&pdf);
            assert!(
                !raw.contains("/D0 ") && !raw.contains("/D1 "),
                "{lang:?} {env:?}: a font of its own"
            );
            assert!(squash(&text_layout(&pdf)).contains("Mustermann Gastronomie GbR"));
        }
    }
    reg.owners[0].last_name = "Ðorđević".into();
    let pdf = render_power_of_attorney(&reg, 0, &poa_ctx()).unwrap();
    assert!(String::from_utf8_lossy(&pdf).contains("/D0 "));
    assert!(squash(&text_layout(&pdf)).contains("Max Ðorđević"));
}

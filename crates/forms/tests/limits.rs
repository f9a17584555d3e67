//! Maximum-length values and DIN 91379 edge cases: everything renders, nothing leaves its box.

mod common;

use common::*;
use domain::country::CountryCode;
use domain::trade::{IndustrialLicense, ResidencePermit, ResidentialAddress, TradeRegistration};
use forms::{gewa1_field_boxes, render_gewa1, render_power_of_attorney};

/// Letters from DIN 91379 including sequences with combining marks.
const DIN_SAMPLES: &[&str] = &[
    "é", "ł", "ŉ", "L̥", "Ǹ", "ǹ", "ß", "Ø", "Ŧ", "ĳ", "Ə", "ǅ", "Ḱ", "ẞ", "Ç̆", "ṑ", "Ŀ", "ſ",
];

/// `len` characters of marker words ("Qz" + letters, at most 11 characters per word).
fn filler(len: usize, seed: usize) -> String {
    let mut out = String::new();
    let mut i = seed;
    while out.chars().count() < len {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str("Qz");
        for k in 0..6 {
            if (i + k).is_multiple_of(3) {
                out.push_str(DIN_SAMPLES[(i + k) % DIN_SAMPLES.len()]);
            } else {
                out.push(char::from(b'a' + ((i * 7 + k) % 26) as u8));
            }
        }
        i += 1;
    }
    let mut s: String = out.chars().take(len).collect();
    // Do not end on a space or a lone "Q" (the marker check wants whole "Qz" prefixes).
    while s.ends_with(' ') || s.ends_with('Q') {
        s.pop();
        s.push('x');
    }
    s
}

fn max_registration() -> TradeRegistration {
    let mut reg = example("trade-registration-self");
    reg.name = filler(120, 1);
    reg.registration_number = Some(filler(30, 2));
    reg.registration_court = Some("Amtsgericht Bad Homburg v.d. Höhe".into());
    reg.establishment_type = domain::trade::EstablishmentType::DependentBranch;
    reg.authorized_representative = Some(domain::trade::PersonName {
        first_name: filler(72, 19),
        last_name: filler(72, 20),
    });
    reg.main_establishment = Some(domain::trade::MainEstablishment {
        address: domain::trade::PostalAddress {
            street: filler(72, 21),
            street_second_line: Some(filler(72, 22)),
            zip: "123456789012".into(),
            city: filler(72, 23),
            state: Some(filler(72, 24)),
            country: CountryCode::parse("VC").unwrap(),
        },
        phone: Some("+49 (0) 30 1234 5678 9012 34/5-6".into()),
        email: Some("qzverylongmailboxnameforafirm.department.division@example-domain.de".into()),
    });
    reg.reason = domain::trade::Reason::Takeover;
    reg.previous_business = Some(domain::trade::PreviousBusiness {
        name: filler(120, 25),
        accident_insurer: Some(filler(120, 26)),
        accident_insurance_number: Some(filler(30, 27)),
    });
    reg.business_type.push(domain::trade::BusinessType::Craft);
    reg.craft_card = Some(domain::trade::CraftCard {
        held: true,
        issue_date: Some(time::macros::date!(2024 - 12 - 31)),
        chamber: Some(filler(120, 28)),
    });
    reg.purpose = filler(200, 3);
    reg.registered_office.street = filler(72, 4);
    reg.registered_office.street_second_line = Some(filler(72, 5));
    reg.registered_office.city = filler(72, 6);
    reg.phone = "+49 (0) 30 1234 5678 9012 34/5-6".into();
    reg.email = "qzverylongmailboxnameforafirm.department.division@example-domain.de".into();
    reg.industrial_license = Some(IndustrialLicense {
        issue_date: time::macros::date!(2024 - 12 - 31),
        issuing_authority: filler(120, 7),
        zip: "12345".into(),
        location: filler(72, 8),
    });
    let o = &mut reg.owners[0];
    o.first_name = filler(72, 9);
    o.last_name = filler(72, 10);
    o.birth_name = Some(filler(72, 11));
    o.place_of_birth = filler(72, 12);
    o.phone = "+49 (0) 170 1234 5678 9012 3/4-5".into();
    o.email = "qzerika.mustermann.with.a.very.long.mailbox.name@example-domain.de".into();
    o.residence_permit = Some(ResidencePermit {
        issue_date: time::macros::date!(2020 - 01 - 01),
        issuing_authority: filler(120, 13),
    });
    o.has_employment_restrictions = Some(true);
    o.employment_restriction_details = Some(filler(200, 18));
    o.other_nationalities = ["ST", "VC", "BA"]
        .iter()
        .map(|c| CountryCode::parse(c).unwrap())
        .collect();
    o.address = Some(ResidentialAddress {
        street: filler(72, 14),
        street_second_line: Some(filler(72, 15)),
        zip: "123456789012".into(),
        city: filler(72, 16),
        state: Some(filler(72, 17)),
        country: CountryCode::parse("ST").unwrap(),
    });
    reg
}

#[test]
fn filler_has_the_requested_length() {
    assert_eq!(filler(120, 1).chars().count(), 120);
    assert_eq!(filler(72, 5).chars().count(), 72);
}

#[test]
fn maximum_lengths_stay_inside_their_boxes() {
    let reg = max_registration();
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).expect("renders");
    if let Ok(dir) = std::env::var("FORMS_DUMP") {
        std::fs::write(format!("{dir}/max.pdf"), &pdf).unwrap();
    }
    // The value boxes (check marks are centred in their boxes by construction).
    let boxes: Vec<_> = gewa1_field_boxes()
        .into_iter()
        .filter(|b| {
            !["_yes", "_no", "_unknown", "_german"]
                .iter()
                .any(|s| b.0.ends_with(s))
        })
        .collect();
    let words = words(&pdf);
    assert!(words.len() > 100);
    let tolerance = 0.6;
    let mut checked = 0;
    for w in &words {
        let cx = (w.x_min + w.x_max) / 2.0;
        let cy = (w.y_min + w.y_max) / 2.0;
        let home = boxes.iter().find(|(_, page, x, y, bw, bh)| {
            *page == w.page && cx >= *x && cx <= x + bw && cy >= *y && cy <= y + bh
        });
        if w.text.contains("Qz") || w.text.contains("qz") {
            assert!(
                home.is_some(),
                "value word {w:?} is not inside any value box"
            );
        }
        if let Some((name, _, x, y, bw, bh)) = home {
            checked += 1;
            assert!(
                w.x_min >= x - tolerance
                    && w.x_max <= x + bw + tolerance
                    && w.y_min >= y - tolerance
                    && w.y_max <= y + bh + tolerance,
                "word {:?} ({}, {})-({}, {}) leaves box {name} ({x}, {y}, {bw} x {bh})",
                w.text,
                w.x_min,
                w.y_min,
                w.x_max,
                w.y_max
            );
        }
    }
    assert!(checked > 80, "only {checked} words checked");
    // No text below the 6 pt floor: what does not fit is on the supplementary sheet.
    let smallest = smallest_text_size(&pdf);
    assert!(smallest >= 6.0 - 1e-3, "text drawn at {smallest} pt");
    assert_eq!(page_count(&pdf), 3);
    // Nothing was cut off: every value word of the request is in the text.
    let all = no_space(&raw_text(&pdf));
    let values = [
        reg.name.clone(),
        reg.purpose.clone(),
        reg.owners[0].last_name.clone(),
        reg.owners[0].first_name.clone(),
        reg.industrial_license
            .as_ref()
            .unwrap()
            .issuing_authority
            .clone(),
        reg.owners[0]
            .residence_permit
            .as_ref()
            .unwrap()
            .issuing_authority
            .clone(),
        reg.owners[0].birth_name.clone().unwrap(),
        reg.owners[0].place_of_birth.clone(),
        reg.owners[0]
            .employment_restriction_details
            .clone()
            .unwrap(),
        reg.registered_office.street.clone(),
        reg.registration_number.clone().unwrap(),
        reg.authorized_representative
            .as_ref()
            .unwrap()
            .last_name
            .clone(),
        reg.main_establishment
            .as_ref()
            .unwrap()
            .address
            .city
            .clone(),
        reg.previous_business.as_ref().unwrap().name.clone(),
        reg.previous_business
            .as_ref()
            .unwrap()
            .accident_insurer
            .clone()
            .unwrap(),
        reg.craft_card.as_ref().unwrap().chamber.clone().unwrap(),
    ];
    for v in values {
        for word in v.split(' ') {
            assert!(all.contains(word), "word {word:?} of {v:?} missing");
        }
    }
    assert!(all.contains("SãoToméundPríncipe"));
}

/// Nine partners of a GbR with names at their maximum length, every other field at its
/// maximum too: field 1 lists eight other partners, far more than its box holds at 6 pt. The
/// form still renders, nothing is drawn under 6 pt, and every value is readable in full on the
/// supplementary sheet, over as many pages as it takes.
#[test]
fn nine_partners_at_maximum_length_fill_the_sheet() {
    let mut reg = max_registration();
    reg.legal_form = domain::trade::LegalForm::Gbr;
    reg.name = format!("{} GbR", filler(116, 40));
    let first = reg.owners[0].clone();
    reg.owners = (0..9)
        .map(|i| {
            let mut o = first.clone();
            o.first_name = filler(72, 50 + i);
            o.last_name = filler(72, 60 + i);
            o
        })
        .collect();
    let pdf = render_gewa1(&reg, 4, &gewa1_ctx()).expect("renders");
    let smallest = smallest_text_size(&pdf);
    assert!(smallest >= 6.0 - 1e-3, "text drawn at {smallest} pt");
    let pages = page_count(&pdf);
    assert!(pages >= 3, "{pages} pages");
    let all = no_space(&raw_text(&pdf));
    for (i, o) in reg.owners.iter().enumerate() {
        for word in o.first_name.split(' ').chain(o.last_name.split(' ')) {
            assert!(all.contains(word), "owner {i}: {word:?} missing");
        }
    }
    let last_sheet = squash(&page_text(&pdf, pages));
    let want = format!("Beiblatt, Seite {} von {}", pages - 2, pages - 2);
    assert!(last_sheet.contains(&want), "{want:?} not in {last_sheet}");
}

#[test]
fn din_91379_sequences_render_and_extract() {
    let mut reg = example("trade-registration-self");
    reg.owners[0].last_name = "Łukasiewicz-Ǹǹ L̥ŉ".into();
    reg.owners[0].first_name = "Zoë Ḱ̆ Ç̆".into();
    reg.name = "Ŀéon Ǆ ẞ GmbH".into();
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    let text = no_space(&raw_text(&pdf));
    for s in ["Łukasiewicz-ǸǹL̥ŉ", "ZoëḰ̆Ç̆", "ĿéonǄẞGmbH"] {
        assert!(
            text.contains(&no_space(s)),
            "{s:?} not extracted from:\n{text}"
        );
    }
}

#[test]
fn power_of_attorney_with_maximum_lengths_fits_one_page() {
    let mut reg = max_registration();
    reg.client_preferred_language = domain::trade::Language::Fr;
    reg.owners[0].signatures.power_of_attorney = reg.owners[0].signatures.gewa_1.clone();
    let pdf = render_power_of_attorney(&reg, 0, &poa_ctx()).unwrap();
    assert_eq!(page_count(&pdf), 1);
    for w in words(&pdf) {
        assert!(
            w.x_min >= 0.0 && w.x_max <= 595.28 && w.y_min >= 0.0 && w.y_max <= 841.89,
            "{w:?} off the page"
        );
    }
    let all = no_space(&raw_text(&pdf));
    for word in reg.name.split(' ') {
        assert!(all.contains(word), "{word:?} missing");
    }
}

/// Text outside DIN 91379 is the validator's business, but the renderer must not panic on it.
#[test]
fn hostile_text_does_not_panic() {
    let samples = [
        "שלום עולם مرحبا",
        "\u{202e}reversed\u{202c} \u{200d}\u{200b}",
        "emoji 👩‍👩‍👧‍👦 🇩🇪",
        "tab\tnew\nline\r\u{0}nul",
        "\u{301}\u{301}\u{301} leading marks",
        "क्षत्रिय ไทย 中文",
        "",
        " ",
        "averyveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryverylongword",
    ];
    let mut reg = example("trade-registration-assisted");
    for s in samples {
        reg.name = s.to_owned();
        reg.purpose = s.repeat(5);
        reg.registered_office.street = s.to_owned();
        reg.owners[0].last_name = s.to_owned();
        reg.owners[0].first_name = s.to_owned();
        reg.owners[0].place_of_birth = s.to_owned();
        render_gewa1(&reg, 0, &gewa1_ctx()).expect("renders");
        render_power_of_attorney(&reg, 0, &poa_ctx()).expect("renders");
    }
}

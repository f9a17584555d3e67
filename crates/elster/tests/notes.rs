//! The transliteration notes of a case: every field they name reaches the XML spelled as they
//! say, and every text the XML spells differently is named.

mod el;
mod fixtures;

use domain::tax::{CommercialRegister, PostalAddress};
use el::El;
use elster::{transliterations, write, write_persg};
use fixtures::{ctx, egbr, gmbh};

fn mark(a: &mut PostalAddress, n: &mut u32) {
    let mut next = |s: &str| {
        *n += 1;
        format!("Ł{s}{n}")
    };
    a.street = format!("{} 1", next("str"));
    a.street_second_line = Some(next("erg"));
    a.city = next("ort");
    a.state = Some(next("state"));
}

/// Every text leaf of the document.
fn leaves(doc: &El) -> Vec<String> {
    let mut all = Vec::new();
    doc.walk(&mut all);
    all.iter()
        .filter(|e| e.children.is_empty())
        .map(|e| e.text().to_owned())
        .collect()
}

fn check(record: serde_json::Value, xml: Vec<u8>, expected_fields: usize) {
    let notes = transliterations(&record);
    assert_eq!(notes.len(), expected_fields, "{notes:#?}");
    let leaves = leaves(&El::parse(&xml));
    for n in &notes {
        assert!(n.value.contains('Ł'), "{n:?}");
        assert!(!n.xml_value.contains('Ł'));
        // A street is written split into its name and number.
        let written = if n.field.ends_with(".street") {
            elster::split_street(&n.xml_value).street.to_owned()
        } else {
            n.xml_value.clone()
        };
        assert!(leaves.contains(&written), "{n:?} not in the XML");
    }
    // Every marked text in the XML is named by a note (its street name is the split `Str`).
    for leaf in leaves
        .iter()
        .filter(|l| l.starts_with('L') && l.ends_with(char::is_numeric))
    {
        assert!(
            notes
                .iter()
                .any(|n| n.xml_value == *leaf || n.xml_value.starts_with(&format!("{leaf} "))),
            "{leaf} is transliterated but not noted"
        );
    }
    // Contact details, the reference and the state never reach the XML.
    assert!(notes.iter().all(|n| !n.field.contains("state")
        && !n.field.contains("email")
        && !n.field.contains("client_reference")));
}

#[test]
fn corporation_notes_name_every_transliterated_field() {
    let mut reg = gmbh();
    let mut n = 0;
    reg.name = "Łname GmbH".into();
    reg.purpose = "Łpurpose".into();
    reg.client_reference = Some("Łref".into());
    mark(&mut reg.address, &mut n);
    let notary = reg.notary.as_mut().unwrap();
    notary.first_name = "Łnf".into();
    notary.last_name = "Łnl".into();
    mark(&mut notary.address, &mut n);
    for d in &mut reg.directors {
        n += 1;
        d.first_name = format!("Łdf{n}");
        d.middle_name = None;
        d.last_name = format!("Łdl{n}");
        d.email = Some("Ł@example.org".into());
        mark(&mut d.address, &mut n);
    }
    for s in &mut reg.shareholders.individuals {
        n += 1;
        s.first_name = format!("Łsf{n}");
        s.last_name = format!("Łsl{n}");
        mark(&mut s.address, &mut n);
    }
    for s in &mut reg.shareholders.entities {
        n += 1;
        s.name = format!("Łse{n}");
        mark(&mut s.address, &mut n);
    }
    reg.commercial_register = CommercialRegister::Registered {
        registration_application_date: None,
        registration_number: "245789B".into(),
        registration_date: time::macros::date!(2025 - 02 - 20),
        registration_court: "Łcourt".into(),
    };
    let xml = write(&reg, &ctx(true)).unwrap();
    elster::validate(&xml).unwrap();
    // name, purpose, court; the notary's 2 names; 3 directors and 2 individuals with 2 names
    // each; an entity's name; the 6 addresses in Germany of 3 texts each (the 2 abroad are
    // not written, so not noted).
    let record = serde_json::to_value(&reg).unwrap();
    check(record, xml, 3 + 2 + 5 * 2 + 1 + 6 * 3);
}

#[test]
fn partnership_notes_name_every_transliterated_field() {
    let mut reg = egbr();
    let mut n = 0;
    reg.name = "Łname eGbR".into();
    reg.purpose = "Łpurpose".into();
    mark(&mut reg.address, &mut n);
    for p in &mut reg.partners.individuals {
        n += 1;
        p.first_name = format!("Łpf{n}");
        p.last_name = format!("Łpl{n}");
        mark(&mut p.address, &mut n);
    }
    for p in &mut reg.partners.entities {
        n += 1;
        p.name = format!("Łpe{n}");
        mark(&mut p.address, &mut n);
    }
    let xml = write_persg(&reg, &ctx(true)).unwrap();
    elster::validate(&xml).unwrap();
    let record = serde_json::to_value(&reg).unwrap();
    check(record, xml, 2 + 2 * 2 + 1 + 4 * 3);
}

#[test]
fn a_record_in_iso_8859_15_has_no_notes() {
    let record = serde_json::to_value(gmbh()).unwrap();
    assert_eq!(transliterations(&record), []);
    let mut reg = gmbh();
    reg.directors[1].last_name = "Erdoğan".into();
    let notes = transliterations(&serde_json::to_value(&reg).unwrap());
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].field, "directors[1].last_name");
    assert_eq!(notes[0].value, "Erdoğan");
    assert_eq!(notes[0].xml_value, "Erdogan");
}

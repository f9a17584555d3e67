//! The written corporation documents: validity under the bundled schemas (libxml2 and
//! xmllint), rejection of broken documents, the envelope, escaping, transliteration and the
//! context; the values of `FsE_KapG` are checked in `xml_kapg.rs`.

mod el;
mod fixtures;

use domain::tax::TaxRegistration;
use el::{El, kapg, replace_once};
use elster::{XmlContext, validate, write, write_validated};
use fixtures::{ctx, gmbh, gmbh_99, kapg_xml as xml, ug};

fn xmllint(doc: &[u8]) -> Result<(), String> {
    el::xmllint(doc, "elster-v11-fse-kapg.xsd")
}

fn fixtures() -> Vec<(&'static str, TaxRegistration)> {
    vec![("gmbh", gmbh()), ("ug", ug()), ("gmbh-99", gmbh_99())]
}

#[test]
fn every_fixture_validates_with_libxml2() {
    for (name, reg) in fixtures() {
        for sandbox in [true, false] {
            let doc = xml(&reg, sandbox);
            if let Err(errs) = validate(&doc) {
                panic!("{name}: {errs:#?}\n{}", String::from_utf8_lossy(&doc));
            }
            assert_eq!(write_validated(&reg, &ctx(sandbox)).unwrap(), doc);
        }
    }
}

#[test]
fn validation_works_on_other_threads() {
    let handles: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..3 {
                    validate(&xml(&gmbh(), true)).unwrap();
                    assert!(validate(&xml(&gmbh(), true)[..200]).is_err());
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

// ---- xmllint ---------------------------------------------------------------------------

#[test]
fn every_fixture_validates_with_xmllint() {
    for (name, reg) in fixtures() {
        for sandbox in [true, false] {
            if let Err(e) = xmllint(&xml(&reg, sandbox)) {
                panic!("{name}: {e}");
            }
        }
    }
}

// ---- broken documents are rejected ----------------------------------------------------

/// Each case breaks the valid GmbH document in one way; both validators must reject it.
fn broken_documents() -> Vec<(&'static str, String)> {
    // Without the indentation, so that each edit is one plain replacement.
    let good = el::compact(&String::from_utf8(xml(&gmbh(), true)).unwrap());
    let long_name = "A".repeat(73);
    let mut cases = el::edits(
        &good,
        &[
            (
                "missing required element (ArtTaet/GewerbeArt)",
                "<GewerbeArt>Entwicklung und Vertrieb von Software sowie IT-Beratung</GewerbeArt>",
                "",
            ),
            (
                "the activity as text directly under ArtTaet",
                "<ArtTaet><GewerbeArt>Entwicklung und Vertrieb von Software sowie IT-Beratung</GewerbeArt></ArtTaet>",
                "<ArtTaet>Entwicklung und Vertrieb von Software sowie IT-Beratung</ArtTaet>",
            ),
            (
                "the legal form as text (no RechtsformId)",
                "<Rechtsform><RechtsformId>350</RechtsformId></Rechtsform>",
                "<Rechtsform>GmbH</Rechtsform>",
            ),
            (
                "unknown RechtsformId",
                "<RechtsformId>350</RechtsformId>",
                "<RechtsformId>351</RechtsformId>",
            ),
            (
                "Nominal with cents",
                "<Nominal>8334.00</Nominal>",
                "<Nominal>8333.35</Nominal>",
            ),
            (
                "ProzentAnteil without four decimals",
                "<ProzentAnteil>33.3360</ProzentAnteil>",
                "<ProzentAnteil>33.336</ProzentAnteil>",
            ),
            (
                "no Treuhandverhaeltnisse",
                "<Treuhandverhaeltnisse><Treuhand>false</Treuhand></Treuhandverhaeltnisse>",
                "",
            ),
            (
                "no small-business flag",
                "<KleinunternehmerRegelung><KleinUnternUStVerzicht>true</KleinUnternUStVerzicht></KleinunternehmerRegelung>",
                "",
            ),
            (
                "the old reverse-charge elements",
                "</UStIdNr>",
                "</UStIdNr><SteuerschuldnerschaftLE><MerkerAntragBescheinigung>true</MerkerAntragBescheinigung><ArtLeistung>1</ArtLeistung></SteuerschuldnerschaftLE>",
            ),
            (
                "a name outside ISO 8859-15",
                "<Name>Berg</Name>",
                "<Name>Łukasiewicz</Name>",
            ),
            (
                "a quarterly VoranmeldungMonatlich false",
                "<VoranmeldungMonatlich>true</VoranmeldungMonatlich>",
                "<VoranmeldungMonatlich>false</VoranmeldungMonatlich>",
            ),
            (
                "missing required envelope element (HerstellerID)",
                "<HerstellerID>74931</HerstellerID>",
                "",
            ),
            (
                "wrong order (Verfahren after DatenArt)",
                "<Verfahren>ElsterFSE</Verfahren><DatenArt>KapG</DatenArt>",
                "<DatenArt>KapG</DatenArt><Verfahren>ElsterFSE</Verfahren>",
            ),
            (
                "an element without a public source (SitzKapGes)",
                "<Firmenname>Mustermann Software GmbH</Firmenname>",
                "<Firmenname>Mustermann Software GmbH</Firmenname><SitzKapGes>Berlin</SitzKapGes>",
            ),
            (
                "an element without a public source (BankKonto)",
                "<NotarVertrag>",
                "<BankKonto><IBAN>DE89370400440532013000</IBAN></BankKonto><NotarVertrag>",
            ),
            (
                "an address abroad in the old form (AuslPlz, Staat)",
                "<Plz>10709</Plz><Ort>Berlin</Ort>",
                "<AuslPlz>1010</AuslPlz><Ort>Wien</Ort><Staat>Österreich</Staat>",
            ),
            (
                "a loss with a sign",
                "<GruendJahr>15000</GruendJahr>",
                "<GruendJahr>-15000</GruendJahr>",
            ),
            (
                "an in-kind formation's code (not public)",
                "<AuswahlBarSach>1</AuswahlBarSach>",
                "<AuswahlBarSach>2</AuswahlBarSach>",
            ),
            (
                "wrong order (Komm before Adrkette)",
                "<Firmenname>Mustermann Software GmbH</Firmenname>",
                "<Firmenname>Mustermann Software GmbH</Firmenname><Komm><Web><Adresse>https://a.example</Adresse></Web></Komm>",
            ),
            (
                "a telephone without its area code",
                "<NatVorw>30</NatVorw>",
                "",
            ),
            (
                "bad date format (ISO date)",
                "<DatumGVertrag>10.02.2025</DatumGVertrag>",
                "<DatumGVertrag>2025-02-10</DatumGVertrag>",
            ),
            (
                "bad date (month 13)",
                "<Betriebsbeginn>01.03.2025</Betriebsbeginn>",
                "<Betriebsbeginn>01.13.2025</Betriebsbeginn>",
            ),
            (
                "bad BUFA (3 digits)",
                r#"<Empfaenger id="F">1130</Empfaenger>"#,
                r#"<Empfaenger id="F">113</Empfaenger>"#,
            ),
            (
                "unknown enumeration value (AuswahlSollIstVerst 3)",
                "<AuswahlSollIstVerst>1</AuswahlSollIstVerst>",
                "<AuswahlSollIstVerst>3</AuswahlSollIstVerst>",
            ),
            (
                "unknown enumeration value (FragebogenTyp)",
                "<FragebogenTyp>GRNDKPG</FragebogenTyp>",
                "<FragebogenTyp>GRNDEU</FragebogenTyp>",
            ),
            (
                "an element our schema leaves out (AnredeId: the API has no salutation)",
                "<Vorname>Jonas</Vorname>",
                "<AnredeId>9</AnredeId><Vorname>Jonas</Vorname>",
            ),
            (
                "too-long name (73 characters)",
                "<Name>Berg</Name>",
                &format!("<Name>{long_name}</Name>"),
            ),
            ("bad German PLZ", "<Plz>10709</Plz>", "<Plz>1070</Plz>"),
            (
                "bad boolean",
                "<MerkerAbwWirtschaftsjahr>false</MerkerAbwWirtschaftsjahr>",
                "<MerkerAbwWirtschaftsjahr>0</MerkerAbwWirtschaftsjahr>",
            ),
            (
                "amount with decimals",
                "<Grundstammkapital>25000</Grundstammkapital>",
                "<Grundstammkapital>25000.00</Grundstammkapital>",
            ),
            (
                "percentage with 5 decimals",
                "<ProzentAnteil>33.3360</ProzentAnteil>",
                "<ProzentAnteil>33.33605</ProzentAnteil>",
            ),
            (
                "director e-mail (no Komm in NatPers)",
                "<GebDat>05.01.1979</GebDat>",
                "<GebDat>05.01.1979</GebDat><Komm>jonas@example.org</Komm>",
            ),
            (
                "both small-business flags",
                "<KleinUnternUStVerzicht>true</KleinUnternUStVerzicht>",
                "<KleinUnternUSt>true</KleinUnternUSt><KleinUnternUStVerzicht>true</KleinUnternUStVerzicht>",
            ),
            (
                "wrong payload namespace",
                "http://finkonsens.de/elster/elsterfse/kapg/v202401",
                "http://finkonsens.de/elster/elsterfse/kapg/v202301",
            ),
            (
                "wrong Testmerker",
                "<Testmerker>700000004</Testmerker>",
                "<Testmerker>000000000</Testmerker>",
            ),
            ("not well-formed", "</Elster>", "</Elste>"),
        ],
    );
    cases.extend([
        (
            "questionnaire data without the KapG wrapper",
            replace_once(&replace_once(&good, "<KapG>", ""), "</KapG>", ""),
        ),
        (
            "bad IdNr (10 digits)",
            good.replace(
                "<PersIdNr>86095742719</PersIdNr>",
                "<PersIdNr>8609574271</PersIdNr>",
            ),
        ),
    ]);
    cases
}

el::broken_documents_are_rejected!("elster-v11-fse-kapg.xsd");

#[test]
fn violations_name_the_problem() {
    let good = String::from_utf8(xml(&gmbh(), true)).unwrap();
    let bad = replace_once(
        &good,
        "<DatumGVertrag>10.02.2025</DatumGVertrag>",
        "<DatumGVertrag>2025-02-10</DatumGVertrag>",
    );
    el::assert_violation_named(&bad, "DatumGVertrag");
}

// ---- values and order ------------------------------------------------------------------

#[test]
fn envelope_header_and_addressee() {
    let sandbox = El::parse(&xml(&gmbh(), true));
    assert_eq!(sandbox.name, "Elster");
    assert_eq!(
        sandbox.attr("xmlns"),
        Some("http://www.elster.de/elsterxml/schema/v11")
    );
    let th = sandbox.child("TransferHeader");
    assert_eq!(th.attr("version"), Some("11"));
    th.assert_children(&[
        ("Verfahren", Some("ElsterFSE")),
        ("DatenArt", Some("KapG")),
        ("Vorgang", Some("send-Auth")),
        ("Testmerker", Some("700000004")),
        ("HerstellerID", Some("74931")),
        ("DatenLieferant", None),
        ("Datei", None),
    ]);
    let ndh = sandbox.at("DatenTeil/Nutzdatenblock/NutzdatenHeader");
    assert_eq!(ndh.child("Empfaenger").attr("id"), Some("F"));
    assert_eq!(ndh.child("Empfaenger").text(), "1130");
    assert_eq!(ndh.child("NutzdatenTicket").text(), "0195f1e2a7c4");
    let fse = sandbox.at("DatenTeil/Nutzdatenblock/Nutzdaten/FsE_KapG");
    assert_eq!(
        fse.attr("xmlns"),
        Some("http://finkonsens.de/elster/elsterfse/kapg/v202401")
    );
    assert_eq!(fse.attr("version"), Some("202401"));
    fse.assert_names("KapG");

    let production = El::parse(&xml(&gmbh(), false));
    assert!(!production.child("TransferHeader").has("Testmerker"));
    assert_eq!(production.at("TransferHeader/HerstellerID").text(), "40417");
    assert!(
        !String::from_utf8(xml(&gmbh(), false))
            .unwrap()
            .contains("700000004")
    );
}

#[test]
fn document_starts_with_the_declaration() {
    let doc = xml(&ug(), false);
    assert!(doc.starts_with(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Elster "));
}

#[test]
fn special_characters_are_escaped_by_the_writer() {
    let mut reg = gmbh();
    reg.name = r#"Müller & Söhne <Tech> "Quote" 'Apo' GmbH"#.into();
    reg.directors[0].last_name = "O'Brien & <Co>".into();
    reg.shareholders.entities[0].name = "A&B \"Holding\" UG (haftungsbeschränkt)".into();
    let bytes = xml(&reg, true);
    validate(&bytes).unwrap();
    xmllint(&bytes).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(text.contains("Müller &amp; Söhne &lt;Tech&gt;"), "{text}");
    assert!(!text.contains("<Tech>"));
    let doc = El::parse(&bytes);
    let k = kapg(&doc);
    assert_eq!(k.at("AllgAngaben/Firmenname").text(), reg.name);
    assert_eq!(k.at("AllgAngaben/Vertreter/Name").text(), "O'Brien & <Co>");
    let entity = k.child("Gesellschafter").all("Anteilseigner")[2];
    assert_eq!(
        entity.at("NNatPers/Firmenname").text(),
        "A&B \"Holding\" UG (haftungsbeschränkt)"
    );
}

#[test]
fn output_is_deterministic() {
    for (name, reg) in fixtures() {
        let first = xml(&reg, true);
        for _ in 0..3 {
            assert_eq!(xml(&reg.clone(), true), first, "{name}");
        }
    }
}

#[test]
fn every_element_has_text_or_children() {
    let doc = El::parse(&xml(&gmbh(), true));
    el::assert_no_empty_elements(&doc);
}

#[test]
fn context_is_checked() {
    let reg = gmbh();
    let bad = |f: fn(&mut XmlContext)| {
        let mut c = ctx(true);
        f(&mut c);
        write(&reg, &c).unwrap_err()
    };
    assert!(matches!(
        bad(|c| c.tax_office_number = "113".into()),
        elster::XmlError::Context(_)
    ));
    assert!(matches!(
        bad(|c| c.hersteller_id = "7493".into()),
        elster::XmlError::Context(_)
    ));
    assert!(matches!(
        bad(|c| c.nutzdaten_ticket = String::new()),
        elster::XmlError::Context(_)
    ));
    assert!(matches!(
        bad(|c| c.daten_lieferant = " ".into()),
        elster::XmlError::Context(_)
    ));
    assert!(matches!(
        bad(|c| c.daten_lieferant = "Łódź Filing".into()),
        elster::XmlError::Context(_)
    ));
}

/// ELSTER's test manufacturer id belongs to documents with a Testmerker: a production
/// document never carries it, for any registration.
#[test]
fn no_production_document_carries_the_test_manufacturer_id() {
    let mut c = ctx(false);
    c.hersteller_id = elster::TEST_HERSTELLER_ID.into();
    for (name, reg) in fixtures() {
        match write(&reg, &c) {
            Err(elster::XmlError::Context(m)) => assert!(m.contains("74931"), "{m}"),
            other => panic!("{name}: {other:?}"),
        }
        assert!(write_validated(&reg, &c).is_err());
    }
    for reg in [fixtures::gbr(), fixtures::egbr()] {
        assert!(matches!(
            elster::write_persg(&reg, &c),
            Err(elster::XmlError::Context(_))
        ));
    }
    // With a Testmerker it is fine.
    c.sandbox = true;
    let doc = String::from_utf8(write(&gmbh(), &c).unwrap()).unwrap();
    assert!(doc.contains("<Testmerker>700000004</Testmerker>"));
    assert!(doc.contains("<HerstellerID>74931</HerstellerID>"));
}

/// Names outside ISO 8859-15 are transliterated in the XML (docs/elster.md, "Characters"); the
/// document stays valid and the record keeps the name as given.
#[test]
fn text_outside_iso_8859_15_is_transliterated() {
    let mut reg = gmbh();
    reg.name = "Łukasiewicz & Đorđević GmbH".into();
    reg.directors[1].first_name = "Ştefan".into();
    reg.directors[1].last_name = "Erdoğan".into();
    // An address in Germany (one abroad is not written).
    reg.shareholders.individuals[0].address.street = "Łukasiewicz-Allee 17".into();
    reg.shareholders.individuals[0].address.city = "Großräschen Ōst".into();
    reg.purpose = "Beratung zu ½ und ¼ Anteilen ‚Qualität‘".into();
    let bytes = xml(&reg, false);
    validate(&bytes).unwrap();
    xmllint(&bytes).unwrap();
    let doc = El::parse(&bytes);
    let k = kapg(&doc);
    assert_eq!(
        k.at("AllgAngaben/Firmenname").text(),
        "Lukasiewicz & Dordevic GmbH"
    );
    let v = k.child("AllgAngaben").all("Vertreter");
    assert_eq!(v[1].child("Vorname").text(), "Stefan");
    assert_eq!(v[1].child("Name").text(), "Erdogan");
    let street = k.at("Gesellschafter/Anteilseigner/NatPers/Adrkette/StrAdr");
    assert_eq!(street.child("Str").text(), "Lukasiewicz-Allee");
    assert_eq!(street.child("Ort").text(), "Großräschen Ost");
    assert_eq!(
        k.at("AllgAngaben/ArtTaet/GewerbeArt").text(),
        "Beratung zu 1/2 und 1/4 Anteilen 'Qualität'"
    );
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        text.chars()
            .all(|c| c.is_ascii() || domain::latin9::is_elster_char(c))
    );
    assert_eq!(reg.name, "Łukasiewicz & Đorđević GmbH");
}

#[test]
fn a_schema_violation_of_the_writer_surfaces_in_write_validated() {
    // A name over the schema's 120 characters (the request rules would have refused it).
    let mut reg = gmbh();
    reg.name = "X".repeat(121);
    assert!(write(&reg, &ctx(true)).is_ok());
    match write_validated(&reg, &ctx(true)) {
        Err(elster::XmlError::SchemaViolations(v)) => {
            assert!(v.iter().any(|e| e.contains("Firmenname")), "{v:?}")
        }
        other => panic!("{other:?}"),
    }
}

//! The written documents: validity under the bundled schemas (libxml2 and xmllint), rejection
//! of broken documents, and the values and order of key elements read back with quick-xml.

mod el;
mod fixtures;

use domain::tax::TaxRegistration;
use el::{El, replace_once};
use elster::{XmlContext, validate, write, write_validated};
use fixtures::{ctx, gmbh, gmbh_99, ug};

fn xmllint(doc: &[u8]) -> Result<(), String> {
    el::xmllint(doc, "elster-v11-fse-kapg.xsd")
}

fn xml(reg: &TaxRegistration, sandbox: bool) -> Vec<u8> {
    write(reg, &ctx(sandbox)).expect("write")
}

/// The questionnaire's data: `FsE_KapG/KapG`.
fn kapg(doc: &El) -> &El {
    doc.at("DatenTeil/Nutzdatenblock/Nutzdaten/FsE_KapG/KapG")
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
    vec![
        (
            "missing required element (ArtTaet/GewerbeArt)",
            replace_once(
                &good,
                "<GewerbeArt>Entwicklung und Vertrieb von Software sowie IT-Beratung</GewerbeArt>",
                "",
            ),
        ),
        (
            "the activity as text directly under ArtTaet",
            replace_once(
                &good,
                "<ArtTaet><GewerbeArt>Entwicklung und Vertrieb von Software sowie IT-Beratung</GewerbeArt></ArtTaet>",
                "<ArtTaet>Entwicklung und Vertrieb von Software sowie IT-Beratung</ArtTaet>",
            ),
        ),
        (
            "questionnaire data without the KapG wrapper",
            replace_once(&replace_once(&good, "<KapG>", ""), "</KapG>", ""),
        ),
        (
            "the legal form as text (no RechtsformId)",
            replace_once(
                &good,
                "<Rechtsform><RechtsformId>350</RechtsformId></Rechtsform>",
                "<Rechtsform>GmbH</Rechtsform>",
            ),
        ),
        (
            "unknown RechtsformId",
            replace_once(
                &good,
                "<RechtsformId>350</RechtsformId>",
                "<RechtsformId>351</RechtsformId>",
            ),
        ),
        (
            "Nominal with cents",
            replace_once(
                &good,
                "<Nominal>8334.00</Nominal>",
                "<Nominal>8333.35</Nominal>",
            ),
        ),
        (
            "ProzentAnteil without four decimals",
            replace_once(
                &good,
                "<ProzentAnteil>33.3334</ProzentAnteil>",
                "<ProzentAnteil>33.334</ProzentAnteil>",
            ),
        ),
        (
            "no Treuhandverhaeltnisse",
            replace_once(
                &good,
                "<Treuhandverhaeltnisse><Treuhand>false</Treuhand></Treuhandverhaeltnisse>",
                "",
            ),
        ),
        (
            "no small-business flag",
            replace_once(
                &good,
                "<KleinunternehmerRegelung><KleinUnternUStVerzicht>true</KleinUnternUStVerzicht></KleinunternehmerRegelung>",
                "",
            ),
        ),
        (
            "the old reverse-charge elements",
            replace_once(
                &good,
                "</UStIdNr>",
                "</UStIdNr><SteuerschuldnerschaftLE><MerkerAntragBescheinigung>true</MerkerAntragBescheinigung><ArtLeistung>1</ArtLeistung></SteuerschuldnerschaftLE>",
            ),
        ),
        (
            "a name outside ISO 8859-15",
            replace_once(&good, "<Name>Berg</Name>", "<Name>Łukasiewicz</Name>"),
        ),
        (
            "a quarterly VoranmeldungMonatlich false",
            replace_once(
                &good,
                "<VoranmeldungMonatlich>true</VoranmeldungMonatlich>",
                "<VoranmeldungMonatlich>false</VoranmeldungMonatlich>",
            ),
        ),
        (
            "missing required envelope element (HerstellerID)",
            replace_once(&good, "<HerstellerID>74931</HerstellerID>", ""),
        ),
        (
            "wrong order (Verfahren after DatenArt)",
            replace_once(
                &good,
                "<Verfahren>ElsterFSE</Verfahren><DatenArt>KapG</DatenArt>",
                "<DatenArt>KapG</DatenArt><Verfahren>ElsterFSE</Verfahren>",
            ),
        ),
        (
            "wrong order (Firmenname after SitzKapGes)",
            replace_once(
                &good,
                "<Firmenname>Mustermann Software GmbH</Firmenname><SitzKapGes>Berlin</SitzKapGes>",
                "<SitzKapGes>Berlin</SitzKapGes><Firmenname>Mustermann Software GmbH</Firmenname>",
            ),
        ),
        (
            "bad date format (ISO date)",
            replace_once(
                &good,
                "<DatumGVertrag>10.02.2025</DatumGVertrag>",
                "<DatumGVertrag>2025-02-10</DatumGVertrag>",
            ),
        ),
        (
            "bad date (month 13)",
            replace_once(
                &good,
                "<Betriebsbeginn>01.03.2025</Betriebsbeginn>",
                "<Betriebsbeginn>01.13.2025</Betriebsbeginn>",
            ),
        ),
        (
            "bad BUFA (3 digits)",
            replace_once(
                &good,
                r#"<Empfaenger id="F">1130</Empfaenger>"#,
                r#"<Empfaenger id="F">113</Empfaenger>"#,
            ),
        ),
        (
            "unknown enumeration value (AuswahlSollIstVerst 3)",
            replace_once(
                &good,
                "<AuswahlSollIstVerst>1</AuswahlSollIstVerst>",
                "<AuswahlSollIstVerst>3</AuswahlSollIstVerst>",
            ),
        ),
        (
            "unknown enumeration value (FragebogenTyp)",
            replace_once(
                &good,
                "<FragebogenTyp>GRNDKPG</FragebogenTyp>",
                "<FragebogenTyp>GRNDEU</FragebogenTyp>",
            ),
        ),
        (
            "an element our schema leaves out (AnredeId: the API has no salutation)",
            replace_once(
                &good,
                "<Vorname>Jonas</Vorname>",
                "<AnredeId>9</AnredeId><Vorname>Jonas</Vorname>",
            ),
        ),
        (
            "too-long name (73 characters)",
            replace_once(
                &good,
                "<Name>Berg</Name>",
                &format!("<Name>{long_name}</Name>"),
            ),
        ),
        (
            "bad IdNr (10 digits)",
            good.replace(
                "<PersIdNr>86095742719</PersIdNr>",
                "<PersIdNr>8609574271</PersIdNr>",
            ),
        ),
        (
            "bad German PLZ",
            replace_once(&good, "<Plz>10709</Plz>", "<Plz>1070</Plz>"),
        ),
        (
            "bad boolean",
            replace_once(
                &good,
                "<MerkerAbwWirtschaftsjahr>false</MerkerAbwWirtschaftsjahr>",
                "<MerkerAbwWirtschaftsjahr>0</MerkerAbwWirtschaftsjahr>",
            ),
        ),
        (
            "amount with decimals",
            replace_once(
                &good,
                "<Grundstammkapital>25000</Grundstammkapital>",
                "<Grundstammkapital>25000.00</Grundstammkapital>",
            ),
        ),
        (
            "percentage with 5 decimals",
            replace_once(
                &good,
                "<ProzentAnteil>33.3334</ProzentAnteil>",
                "<ProzentAnteil>33.33345</ProzentAnteil>",
            ),
        ),
        (
            "director e-mail (no Komm in NatPers)",
            replace_once(
                &good,
                "<GebDat>05.01.1979</GebDat>",
                "<GebDat>05.01.1979</GebDat><Komm>jonas@example.org</Komm>",
            ),
        ),
        (
            "both small-business flags",
            replace_once(
                &good,
                "<KleinUnternUStVerzicht>true</KleinUnternUStVerzicht>",
                "<KleinUnternUSt>true</KleinUnternUSt><KleinUnternUStVerzicht>true</KleinUnternUStVerzicht>",
            ),
        ),
        (
            "wrong payload namespace",
            replace_once(
                &good,
                "http://finkonsens.de/elster/elsterfse/kapg/v202401",
                "http://finkonsens.de/elster/elsterfse/kapg/v202301",
            ),
        ),
        (
            "wrong Testmerker",
            replace_once(
                &good,
                "<Testmerker>700000004</Testmerker>",
                "<Testmerker>000000000</Testmerker>",
            ),
        ),
        (
            "not well-formed",
            replace_once(&good, "</Elster>", "</Elste>"),
        ),
    ]
}

#[test]
fn broken_documents_are_rejected_by_libxml2() {
    el::assert_rejected_by_libxml2(broken_documents());
}

#[test]
fn broken_documents_are_rejected_by_xmllint() {
    el::assert_rejected_by_xmllint(broken_documents(), "elster-v11-fse-kapg.xsd");
}

#[test]
fn violations_name_the_problem() {
    let good = String::from_utf8(xml(&gmbh(), true)).unwrap();
    let bad = replace_once(
        &good,
        "<DatumGVertrag>10.02.2025</DatumGVertrag>",
        "<DatumGVertrag>2025-02-10</DatumGVertrag>",
    );
    let errs = validate(bad.as_bytes()).unwrap_err();
    assert!(
        errs.iter()
            .any(|e| e.contains("DatumGVertrag") && e.starts_with("line ")),
        "{errs:?}"
    );
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
    assert_eq!(
        th.names(),
        [
            "Verfahren",
            "DatenArt",
            "Vorgang",
            "Testmerker",
            "HerstellerID",
            "DatenLieferant",
            "Datei"
        ]
    );
    assert_eq!(th.child("Verfahren").text(), "ElsterFSE");
    assert_eq!(th.child("DatenArt").text(), "KapG");
    assert_eq!(th.child("Vorgang").text(), "send-Auth");
    assert_eq!(th.child("Testmerker").text(), "700000004");
    assert_eq!(th.child("HerstellerID").text(), "74931");
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
    assert_eq!(fse.names(), ["KapG"]);

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
fn fse_kapg_order_and_company_values() {
    let doc = El::parse(&xml(&gmbh(), true));
    let k = kapg(&doc);
    assert_eq!(
        k.names(),
        [
            "FragebogenTyp",
            "Ordnungskriterium",
            "AllgAngaben",
            "Gesellschafter",
            "Gruendung",
            "FestsetzungsAngaben",
            "LohnberechnungsStelle",
            "Umsatzsteuer"
        ]
    );
    let a = k.child("AllgAngaben");
    assert_eq!(
        a.names(),
        [
            "Firmenname",
            "SitzKapGes",
            "Adrkette",
            "ArtTaet",
            "Vertreter",
            "Vertreter",
            "Vertreter",
            "BankKonto",
            "NotarVertrag",
            "Rechtsform",
            "BeginnTaetigkeit",
            "GewinnErmittlgsAngaben",
            "HoeheGrundStammkapital"
        ]
    );
    assert_eq!(a.child("Firmenname").text(), "Mustermann Software GmbH");
    assert_eq!(a.at("Rechtsform/RechtsformId").text(), "350");
    assert_eq!(
        a.at("ArtTaet/GewerbeArt").text(),
        "Entwicklung und Vertrieb von Software sowie IT-Beratung"
    );
    assert_eq!(a.at("BeginnTaetigkeit/Betriebsbeginn").text(), "01.03.2025");
    let seat = a.at("Adrkette/StrAdr");
    assert_eq!(seat.names(), ["Str", "HausNr", "AdressErg", "Plz", "Ort"]);
    assert_eq!(seat.child("Str").text(), "Musterstraße");
    assert_eq!(seat.child("HausNr").text(), "1");
    assert_eq!(seat.child("AdressErg").text(), "Hinterhaus, 3. OG");
    let hrg = a.at("NotarVertrag/HrgAngaben");
    assert_eq!(
        hrg.names(),
        [
            "HrgAntragGestellt",
            "HrgEintragVorhanden",
            "TagDerEintragung",
            "HandelsregisterGericht",
            "HrgRegisterbezeichnung",
            "HrgRegisternummer"
        ]
    );
    assert_eq!(hrg.child("HrgAntragGestellt").text(), "true");
    assert_eq!(hrg.child("HrgEintragVorhanden").text(), "true");
    assert_eq!(hrg.child("TagDerEintragung").text(), "20.02.2025");
    assert_eq!(hrg.child("HrgRegisterbezeichnung").text(), "HRB");
    assert_eq!(hrg.child("HrgRegisternummer").text(), "245789B");
    assert_eq!(a.at("NotarVertrag/DatumGVertrag").text(), "10.02.2025");
    assert_eq!(
        a.at("NotarVertrag/GruendungsNotar/Adrkette/StrAdr/Str")
            .text(),
        "Kurfürstendamm"
    );
    assert_eq!(a.at("BankKonto/IBAN").text(), "DE89370400440532013000");
    assert_eq!(
        a.at("HoeheGrundStammkapital/Grundstammkapital").text(),
        "25000"
    );
    assert_eq!(
        a.at("HoeheGrundStammkapital/Eingezahlteskapital").text(),
        "12500"
    );
    assert_eq!(
        a.at("GewinnErmittlgsAngaben/MerkerAbwWirtschaftsjahr")
            .text(),
        "false"
    );
    assert!(!a.child("GewinnErmittlgsAngaben").has("AbwWJ_ab"));

    let lohn = k.child("LohnberechnungsStelle");
    assert_eq!(lohn.child("AnzahlBeschaeftigteArbeitnehmer").text(), "3");
    assert_eq!(lohn.child("BeginnLohnzahlungen").text(), "01.04.2025");
    assert_eq!(lohn.child("VoraussichtlicheLohnsteuer").text(), "18000");

    let ust = k.child("Umsatzsteuer");
    // Above 25,000 euros founding-year revenue the small-business rule is waived formally.
    assert_eq!(
        ust.names(),
        [
            "GesUmsatz",
            "KleinunternehmerRegelung",
            "ZahllastUeberschuss",
            "SollIstVersteuerung",
            "UStIdNr"
        ]
    );
    assert_eq!(
        ust.at("KleinunternehmerRegelung").names(),
        ["KleinUnternUStVerzicht"]
    );
    assert_eq!(ust.at("ZahllastUeberschuss/Auswahl").text(), "2");
    assert_eq!(ust.at("ZahllastUeberschuss/Betrag").text(), "12000");
    assert_eq!(
        ust.at("ZahllastUeberschuss/VoranmeldungMonatlich").text(),
        "true"
    );
    assert_eq!(
        ust.at("SollIstVersteuerung").names(),
        ["AuswahlSollIstVerst"]
    );
    assert_eq!(
        ust.at("SollIstVersteuerung/AuswahlSollIstVerst").text(),
        "1"
    );
    assert_eq!(ust.at("UStIdNr/MerkerAntragUStId").text(), "true");
    assert_eq!(ust.at("GesUmsatz/GruendJahr").text(), "120000");
}

/// The most directors a request may name (9) are all filed, and the XSD takes them.
#[test]
fn nine_directors_are_nine_vertreter() {
    let mut reg = gmbh();
    let first = reg.directors[0].clone();
    reg.directors = (0..9)
        .map(|i| {
            let mut d = first.clone();
            d.last_name = format!(
                "Mustermann{}",
                ["", "a", "b", "c", "d", "e", "f", "g", "h"][i]
            );
            d
        })
        .collect();
    let bytes = xml(&reg, true);
    validate(&bytes).unwrap();
    let doc = El::parse(&bytes);
    let v = kapg(&doc).child("AllgAngaben").all("Vertreter");
    assert_eq!(v.len(), 9);
    assert_eq!(v[8].child("Name").text(), "Mustermannh");
}

#[test]
fn directors_are_vertreter_with_middle_names_and_without_contact_details() {
    let bytes = xml(&gmbh(), true);
    let doc = El::parse(&bytes);
    let a = kapg(&doc).child("AllgAngaben");
    let v = a.all("Vertreter");
    assert_eq!(v.len(), 3);
    assert_eq!(v[0].child("Vorname").text(), "Erika Maria");
    assert_eq!(v[0].child("Name").text(), "Mustermann");
    assert_eq!(v[0].child("GebDat").text(), "12.08.1984");
    assert_eq!(v[0].child("PersIdNr").text(), "86095742719");
    assert_eq!(v[1].child("Vorname").text(), "Jonas");
    assert!(!v[1].has("PersIdNr"));
    assert_eq!(v[1].child("GebDat").text(), "05.01.1979");
    let markt = v[1].at("Adrkette/StrAdr");
    assert_eq!(markt.child("Str").text(), "Am Markt");
    assert_eq!(markt.child("HausNr").text(), "12");
    assert_eq!(markt.child("HausNrZu").text(), "-14");
    assert_eq!(markt.child("Plz").text(), "04109");
    // Abroad: the foreign postal code, the place and the state's German name.
    let wien = v[2].at("Adrkette/StrAdr");
    assert_eq!(wien.names(), ["Str", "HausNr", "AuslPlz", "Ort", "Staat"]);
    assert_eq!(wien.child("Str").text(), "Kärntner Straße");
    assert_eq!(wien.child("AuslPlz").text(), "1010");
    assert_eq!(wien.child("Staat").text(), "Österreich");
    for vertreter in v {
        assert_eq!(
            vertreter.names(),
            if vertreter.has("PersIdNr") {
                vec!["Vorname", "Name", "GebDat", "PersIdNr", "Adrkette"]
            } else {
                vec!["Vorname", "Name", "GebDat", "Adrkette"]
            }
        );
    }
    let text = String::from_utf8(bytes).unwrap();
    for contact in [
        "erika@mustermann-software.de",
        "jonas@",
        "1234567",
        "Komm",
        "@",
    ] {
        assert!(!text.contains(contact), "{contact} in the filing");
    }
}

#[test]
fn shareholders_with_percentages_and_nominal_amounts() {
    let doc = El::parse(&xml(&gmbh(), true));
    let g = kapg(&doc).child("Gesellschafter");
    assert_eq!(
        g.names(),
        [
            "Anteilseigner",
            "Anteilseigner",
            "Anteilseigner",
            "Treuhandverhaeltnisse"
        ]
    );
    assert_eq!(g.at("Treuhandverhaeltnisse/Treuhand").text(), "false");
    let a = g.all("Anteilseigner");
    assert_eq!(a.len(), 3);
    let numbers: Vec<_> = a.iter().map(|e| e.child("ZeichnerNummer").text()).collect();
    assert_eq!(numbers, ["1", "2", "3"]);
    assert_eq!(a[0].names(), ["ZeichnerNummer", "NatPers", "Beteiligung"]);
    assert_eq!(a[2].names(), ["ZeichnerNummer", "NNatPers", "Beteiligung"]);
    let pct: Vec<_> = a
        .iter()
        .map(|e| e.at("Beteiligung/ProzentAnteil").text())
        .collect();
    assert_eq!(pct, ["33.3333", "33.3333", "33.3334"]);
    let nominal: Vec<_> = a
        .iter()
        .map(|e| e.at("Beteiligung/Nominal").text())
        .collect();
    // Whole euros by largest remainder, summing to the capital (8333.33 + 8333.33 + 8333.35
    // was 25,000.01).
    assert_eq!(nominal, ["8333.00", "8333.00", "8334.00"]);
    assert_eq!(a[0].at("NatPers/Vorname").text(), "Erika");
    assert_eq!(a[0].at("NatPers/GebDat").text(), "12.08.1984");
    let paris = a[1].at("NatPers/Adrkette/StrAdr");
    assert_eq!(paris.child("Str").text(), "Rue de Rivoli");
    assert_eq!(paris.child("Staat").text(), "Frankreich");
    let entity = a[2].child("NNatPers");
    assert_eq!(
        entity.child("Firmenname").text(),
        "Beteiligungs-UG (haftungsbeschränkt)"
    );
    let hafen = entity.at("Adrkette/StrAdr");
    assert_eq!(hafen.child("Str").text(), "Hafenstraße");
    assert_eq!(hafen.child("HausNr").text(), "5");
    assert_eq!(hafen.child("HausNrZu").text(), "a");
}

#[test]
fn ug_small_business_application_filed_no_payroll() {
    let doc = El::parse(&xml(&ug(), false));
    let k = kapg(&doc);
    assert!(!k.has("LohnberechnungsStelle"));
    let a = k.child("AllgAngaben");
    assert!(!a.has("BankKonto"));
    assert!(!a.child("NotarVertrag").has("GruendungsNotar"));
    assert_eq!(a.at("Rechtsform/RechtsformId").text(), "370");
    let hrg = a.at("NotarVertrag/HrgAngaben");
    assert_eq!(
        hrg.names(),
        ["HrgAntragGestellt", "TagDesAntrags", "HrgEintragVorhanden"]
    );
    assert_eq!(hrg.child("HrgAntragGestellt").text(), "true");
    assert_eq!(hrg.child("TagDesAntrags").text(), "05.05.2025");
    assert_eq!(hrg.child("HrgEintragVorhanden").text(), "false");
    let gj = a.child("GewinnErmittlgsAngaben");
    assert_eq!(gj.child("MerkerAbwWirtschaftsjahr").text(), "true");
    assert_eq!(gj.child("AbwWJ_ab").text(), "01.07.2025");
    assert_eq!(
        k.at("FestsetzungsAngaben/Gewinn/GruendJahr").text(),
        "-2500"
    );
    let ust = k.child("Umsatzsteuer");
    // Under § 19 UStG: the flag, and ZahllastUeberschuss still written as payable 0; no VAT
    // id requested, so no UStIdNr.
    assert_eq!(
        ust.names(),
        [
            "GesUmsatz",
            "KleinunternehmerRegelung",
            "ZahllastUeberschuss",
            "SteuerschuldnerschaftLE",
            "Onlinehandel"
        ]
    );
    assert_eq!(
        ust.at("KleinunternehmerRegelung").names(),
        ["KleinUnternUSt"]
    );
    assert_eq!(
        ust.at("KleinunternehmerRegelung/KleinUnternUSt").text(),
        "true"
    );
    let zu = ust.child("ZahllastUeberschuss");
    assert_eq!(zu.names(), ["Auswahl", "Betrag"]);
    assert_eq!(zu.child("Auswahl").text(), "1");
    assert_eq!(zu.child("Betrag").text(), "0");
    let le = ust.child("SteuerschuldnerschaftLE");
    assert_eq!(le.names(), ["NachweisBeantragt", "UmfangGebaeudereinigung"]);
    assert_eq!(le.child("NachweisBeantragt").text(), "true");
    assert_eq!(le.child("UmfangGebaeudereinigung").text(), "true");
    assert_eq!(ust.at("Onlinehandel/MerkerOnlinehandel").text(), "true");
    let share = k.at("Gesellschafter/Anteilseigner/Beteiligung");
    assert_eq!(share.child("ProzentAnteil").text(), "100.0000");
    assert_eq!(share.child("Nominal").text(), "1000.00");
}

/// `reg` with `vat.regime: standard` and the fields that then belong to it (a payable balance
/// of 500 euros, quarterly returns), written and XSD-validated.
fn standard_regime(reg: &mut TaxRegistration, method: domain::tax::AccountingMethod) -> El {
    reg.vat.regime = Some(domain::tax::VatRegime::Standard);
    reg.vat.small_business = false;
    reg.vat.accounting_method = Some(method);
    reg.vat.estimated_balance_type = Some(domain::tax::BalanceType::Payable);
    reg.vat.estimated_balance_amount = Some(500);
    reg.vat.return_frequency = Some(domain::tax::ReturnFrequency::Quarterly);
    let bytes = xml(reg, false);
    validate(&bytes).unwrap();
    El::parse(&bytes)
}

/// Where the election is not open (founding-year revenue above 25,000, or the following year's
/// above 100,000) the regular regime applies, and the filing carries the waiver flag all the
/// same: exactly one of the two flags is always present, as the reference builder adds
/// `KleinUnternUStVerzicht` above 25,000 euros (K:620-640).
#[test]
fn above_the_thresholds_the_waiver_flag_is_written() {
    for (founding, following) in [(25_001, 50_000), (120_000, 300_000), (20_000, 100_001)] {
        let mut reg = ug();
        reg.financial_estimates.formation_year.revenue_amount = founding;
        reg.financial_estimates.formation_year.profit_amount = 0;
        reg.financial_estimates.following_year.revenue_amount = following;
        reg.financial_estimates.following_year.profit_amount = 0;
        let doc = standard_regime(&mut reg, domain::tax::AccountingMethod::Accrual);
        let ust = kapg(&doc).child("Umsatzsteuer");
        assert_eq!(
            ust.at("KleinunternehmerRegelung").names(),
            ["KleinUnternUStVerzicht"],
            "{founding}/{following}"
        );
        assert_eq!(ust.at("ZahllastUeberschuss/Auswahl").text(), "1");
    }
}

#[test]
fn standard_regime_chosen_is_a_waiver() {
    let doc = standard_regime(&mut ug(), domain::tax::AccountingMethod::Cash);
    let ust = kapg(&doc).child("Umsatzsteuer");
    assert_eq!(
        ust.at("KleinunternehmerRegelung/KleinUnternUStVerzicht")
            .text(),
        "true"
    );
    assert_eq!(ust.at("ZahllastUeberschuss/Auswahl").text(), "1");
    // Quarterly: no VoranmeldungMonatlich (the reference's "ablehnen" writes nothing).
    assert_eq!(ust.at("ZahllastUeberschuss").names(), ["Auswahl", "Betrag"]);
    // Cash accounting with its reason, the turnover limit.
    let si = ust.child("SollIstVersteuerung");
    assert_eq!(
        si.names(),
        ["AuswahlSollIstVerst", "IstVerstUStGrundUmsatz"]
    );
    assert_eq!(si.child("AuswahlSollIstVerst").text(), "2");
    assert_eq!(si.child("IstVerstUStGrundUmsatz").text(), "true");
}

#[test]
fn reverse_charge_scopes() {
    use domain::tax::ReverseChargeServiceType as T;
    for (kind, scopes) in [
        (
            T::Construction,
            vec!["NachweisBeantragt", "UmfangBauleistungen"],
        ),
        (
            T::BuildingCleaning,
            vec!["NachweisBeantragt", "UmfangGebaeudereinigung"],
        ),
        (
            T::Both,
            vec![
                "NachweisBeantragt",
                "UmfangBauleistungen",
                "UmfangGebaeudereinigung",
            ],
        ),
    ] {
        let mut reg = gmbh();
        reg.vat.request_reverse_charge_certificate = true;
        reg.vat.reverse_charge_service_type = Some(kind);
        let bytes = xml(&reg, false);
        validate(&bytes).unwrap();
        let doc = El::parse(&bytes);
        let le = kapg(&doc).at("Umsatzsteuer/SteuerschuldnerschaftLE");
        assert_eq!(le.names(), scopes, "{kind:?}");
        assert!(le.children.iter().all(|c| c.text() == "true"));
    }
}

#[test]
fn not_applied_register_and_other_formations() {
    use domain::tax::{CommercialRegister, ConversionType, FormationType};
    for (formation, code) in [
        (FormationType::InKind, "2"),
        (FormationType::Conversion, "3"),
    ] {
        let mut reg = gmbh();
        reg.commercial_register = CommercialRegister::NotApplied;
        reg.formation_type = formation;
        if formation == FormationType::Conversion {
            reg.conversion_type = Some(ConversionType::FormChange);
        }
        let bytes = xml(&reg, true);
        validate(&bytes).unwrap();
        let doc = El::parse(&bytes);
        let k = kapg(&doc);
        assert_eq!(k.at("Gruendung/AuswahlBarSach").text(), code);
        let hrg = k.at("AllgAngaben/NotarVertrag/HrgAngaben");
        assert_eq!(hrg.names(), ["HrgAntragGestellt", "HrgEintragVorhanden"]);
        assert_eq!(hrg.child("HrgAntragGestellt").text(), "false");
        assert_eq!(hrg.child("HrgEintragVorhanden").text(), "false");
    }
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
fn ninety_nine_shareholders() {
    let bytes = xml(&gmbh_99(), true);
    validate(&bytes).unwrap();
    let doc = El::parse(&bytes);
    let a = kapg(&doc).child("Gesellschafter").all("Anteilseigner");
    assert_eq!(a.len(), 99);
    assert_eq!(a[98].child("ZeichnerNummer").text(), "99");
    assert_eq!(a[98].at("Beteiligung/ProzentAnteil").text(), "1.0102");
    assert_eq!(a[0].at("Beteiligung/ProzentAnteil").text(), "1.0101");
    // 252.525 euros each, 252.55 for the last: 99 × 252 leaves 52 euros, one each to the 52
    // largest fractions (the last share's .55 first, then the earliest 51 of the .525s).
    let nominal: Vec<i64> = a
        .iter()
        .map(|e| {
            let n = e.at("Beteiligung/Nominal").text();
            n.strip_suffix(".00").unwrap().parse().unwrap()
        })
        .collect();
    assert_eq!(nominal.iter().sum::<i64>(), 25_000);
    assert_eq!(nominal[98], 253);
    assert_eq!(nominal[..51], [253; 51]);
    assert_eq!(nominal[51..98], [252; 47]);
    assert_eq!(a[98].at("NatPers/Adrkette/StrAdr/HausNr").text(), "99");

    // A hundredth shareholder exceeds the schema's limit.
    let text = String::from_utf8(bytes).unwrap();
    let first = &text[text.find("<Anteilseigner>").unwrap()..];
    let first = &first[..first.find("</Anteilseigner>").unwrap() + "</Anteilseigner>".len()];
    let extra = text.replacen(first, &format!("{first}{first}"), 1);
    assert!(validate(extra.as_bytes()).is_err());
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
    reg.shareholders.individuals[0].address.city = "Łódź".into();
    reg.shareholders.individuals[0].address.country =
        domain::country::CountryCode::parse("PL").unwrap();
    reg.shareholders.individuals[0].address.zip = "90-001".into();
    reg.shareholders.individuals[0].address.street = "Ulica Piotrkowska 17".into();
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
    assert_eq!(
        k.at("Gesellschafter/Anteilseigner/NatPers/Adrkette/StrAdr/Ort")
            .text(),
        "Lódz"
    );
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

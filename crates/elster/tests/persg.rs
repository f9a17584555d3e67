//! The partnership documents (DatenArt PersG, `FsE_PersG`): validity under the bundled schemas
//! (libxml2 and xmllint), rejection of broken documents and of documents of the other kind,
//! and the values and order of key elements read back.

mod el;
mod fixtures;

use domain::gbr::GbrTaxRegistration;
use domain::tax::CommercialRegister;
use el::{El, replace_once};
use elster::{XmlError, validate, write_persg, write_persg_validated};
use fixtures::{ctx, egbr, gbr, gbr_99};
use time::macros::date;

const ENVELOPE: &str = "elster-v11-fse-persg.xsd";

fn xml(reg: &GbrTaxRegistration, sandbox: bool) -> Vec<u8> {
    write_persg(reg, &ctx(sandbox)).expect("write")
}

fn text(reg: &GbrTaxRegistration, sandbox: bool) -> String {
    String::from_utf8(xml(reg, sandbox)).unwrap()
}

/// The questionnaire's data: `FsE_PersG/PersG`.
fn persg(doc: &El) -> &El {
    doc.at("DatenTeil/Nutzdatenblock/Nutzdaten/FsE_PersG/PersG")
}

fn application_filed() -> GbrTaxRegistration {
    let mut reg = egbr();
    reg.company_register = Some(CommercialRegister::ApplicationFiled {
        registration_application_date: date!(2025 - 01 - 20),
    });
    reg
}

fn fixtures() -> Vec<(&'static str, GbrTaxRegistration)> {
    vec![
        ("gbr", gbr()),
        ("egbr", egbr()),
        ("egbr-application-filed", application_filed()),
        ("gbr-99", gbr_99()),
    ]
}

#[test]
fn every_fixture_validates_with_libxml2_and_xmllint() {
    for (name, reg) in fixtures() {
        for sandbox in [true, false] {
            let doc = xml(&reg, sandbox);
            if let Err(errs) = validate(&doc) {
                panic!("{name}: {errs:#?}\n{}", String::from_utf8_lossy(&doc));
            }
            if let Err(e) = el::xmllint(&doc, ENVELOPE) {
                panic!("{name}: {e}");
            }
            assert_eq!(write_persg_validated(&reg, &ctx(sandbox)).unwrap(), doc);
        }
    }
}

// ---- broken documents and the other kind are rejected ---------------------------------

/// The first `<Beteiligter>...</Beteiligter>` of `doc`.
fn first_partner(doc: &str) -> &str {
    let start = doc.find("<Beteiligter>").unwrap();
    let end = doc[start..].find("</Beteiligter>").unwrap() + start + "</Beteiligter>".len();
    &doc[start..end]
}

/// Each case breaks the valid eGbR document in one way; both validators must reject it.
fn broken_documents() -> Vec<(&'static str, String)> {
    // Without the indentation, so that each edit is one plain replacement.
    let good = el::compact(&text(&egbr(), true));
    let gbr_doc = el::compact(&text(&gbr(), false));
    let kapg_doc = el::compact(
        &String::from_utf8(elster::write(&fixtures::gmbh(), &ctx(true)).unwrap()).unwrap(),
    );
    let partner = first_partner(&good).to_owned();
    let beteiligte_start = good.find("<Beteiligte>").unwrap() + "<Beteiligte>".len();
    let beteiligte_end = good.find("</Beteiligte>").unwrap();
    let mut cases = el::edits(
        &good,
        &[
            (
                "missing managing flag",
                "<MerkerGeschaeftsfuehrung>false</MerkerGeschaeftsfuehrung>",
                "",
            ),
            (
                "managing flag not a boolean",
                "<MerkerGeschaeftsfuehrung>false</MerkerGeschaeftsfuehrung>",
                "<MerkerGeschaeftsfuehrung>nein</MerkerGeschaeftsfuehrung>",
            ),
            (
                "a corporation's legal form",
                "<RechtsformId>eGbR</RechtsformId>",
                "<RechtsformId>350</RechtsformId>",
            ),
            (
                "the legal form as text (no RechtsformId)",
                "<Rechtsform><RechtsformId>eGbR</RechtsformId></Rechtsform>",
                "<Rechtsform>eGbR</Rechtsform>",
            ),
            (
                "the activity as text directly under ArtTaet",
                "<ArtTaet><GewerbeArt>Vermietung und Verwaltung eigener Wohnimmobilien</GewerbeArt></ArtTaet>",
                "<ArtTaet>Vermietung und Verwaltung eigener Wohnimmobilien</ArtTaet>",
            ),
            (
                "no small-business flag",
                "<KleinunternehmerRegelung><KleinUnternUStVerzicht>true</KleinUnternUStVerzicht></KleinunternehmerRegelung>",
                "",
            ),
            (
                "the commercial register's name",
                "<GsrRegisterbezeichnung>GsR</GsrRegisterbezeichnung>",
                "<GsrRegisterbezeichnung>HRB</GsrRegisterbezeichnung>",
            ),
            (
                "a register number with its prefix",
                "<GsrRegisternummer>1234</GsrRegisternummer>",
                "<GsrRegisternummer>GsR 1234</GsrRegisternummer>",
            ),
            (
                "a corporation's element (Nominal)",
                "<ProzentAnteil>40.0000</ProzentAnteil>",
                "<Nominal>10.00</Nominal><ProzentAnteil>40.0000</ProzentAnteil>",
            ),
            (
                "a corporation's block (Vertreter)",
                "<GesVertrag>",
                "<Vertreter><Vorname>A</Vorname><Name>B</Name><GebDat>01.01.1990</GebDat></Vertreter><GesVertrag>",
            ),
            (
                "wrong order (BeginnTaetigkeit before Rechtsform)",
                "<Rechtsform><RechtsformId>eGbR</RechtsformId></Rechtsform><BeginnTaetigkeit><Betriebsbeginn>01.03.2025</Betriebsbeginn></BeginnTaetigkeit>",
                "<BeginnTaetigkeit><Betriebsbeginn>01.03.2025</Betriebsbeginn></BeginnTaetigkeit><Rechtsform><RechtsformId>eGbR</RechtsformId></Rechtsform>",
            ),
            (
                "bad date format (ISO date)",
                "<DatumGVertrag>15.01.2025</DatumGVertrag>",
                "<DatumGVertrag>2025-01-15</DatumGVertrag>",
            ),
            (
                "unknown FragebogenTyp (the corporation's)",
                "<FragebogenTyp>GRNDPG</FragebogenTyp>",
                "<FragebogenTyp>GRNDKPG</FragebogenTyp>",
            ),
            (
                "DatenArt KapG around a PersG payload",
                "<DatenArt>PersG</DatenArt>",
                "<DatenArt>KapG</DatenArt>",
            ),
            (
                "wrong payload namespace",
                "http://finkonsens.de/elster/elsterfse/persg/v202401",
                "http://finkonsens.de/elster/elsterfse/persg/v202301",
            ),
            ("not well-formed", "</Elster>", "</Elste>"),
        ],
    );
    cases.extend([
        (
            "only one partner",
            format!(
                "{}{partner}{}",
                &good[..beteiligte_start],
                &good[beteiligte_end..]
            ),
        ),
        ("a hundredth partner", {
            let gbr99 = text(&gbr_99(), true);
            let p = first_partner(&gbr99).to_owned();
            gbr99.replacen(&p, &format!("{p}{p}"), 1)
        }),
        (
            "questionnaire data without the PersG wrapper",
            replace_once(&replace_once(&good, "<PersG>", ""), "</PersG>", ""),
        ),
        (
            "percentage with 5 decimals",
            replace_once(
                &gbr_doc,
                "<ProzentAnteil>33.3400</ProzentAnteil>",
                "<ProzentAnteil>33.33999</ProzentAnteil>",
            ),
        ),
        (
            "percentage without four decimals",
            replace_once(
                &gbr_doc,
                "<ProzentAnteil>33.3400</ProzentAnteil>",
                "<ProzentAnteil>33.34</ProzentAnteil>",
            ),
        ),
        (
            "DatenArt PersG around a KapG payload",
            replace_once(
                &kapg_doc,
                "<DatenArt>KapG</DatenArt>",
                "<DatenArt>PersG</DatenArt>",
            ),
        ),
    ]);
    cases
}

// A KapG payload is checked by xmllint against the PersG envelope here, which refuses it as
// well (its DatenArt and payload are the wrong kind).
el::broken_documents_are_rejected!(ENVELOPE);

#[test]
fn violations_name_the_problem() {
    let bad = replace_once(
        &text(&egbr(), true),
        "<RechtsformId>eGbR</RechtsformId>",
        "<RechtsformId>GmbH</RechtsformId>",
    );
    el::assert_violation_named(&bad, "RechtsformId");
}

// ---- values and order ------------------------------------------------------------------

#[test]
fn envelope_header_names_persg() {
    let doc = El::parse(&xml(&egbr(), true));
    let th = doc.child("TransferHeader");
    assert_eq!(th.child("Verfahren").text(), "ElsterFSE");
    assert_eq!(th.child("DatenArt").text(), "PersG");
    assert_eq!(th.child("Vorgang").text(), "send-Auth");
    assert_eq!(th.child("Testmerker").text(), "700000004");
    let ndh = doc.at("DatenTeil/Nutzdatenblock/NutzdatenHeader");
    assert_eq!(ndh.child("Empfaenger").text(), "1130");
    let p = doc.at("DatenTeil/Nutzdatenblock/Nutzdaten/FsE_PersG");
    assert_eq!(
        p.attr("xmlns"),
        Some("http://finkonsens.de/elster/elsterfse/persg/v202401")
    );
    assert_eq!(p.attr("version"), Some("202401"));
    p.assert_names("PersG");
    let production = El::parse(&xml(&egbr(), false));
    assert!(!production.child("TransferHeader").has("Testmerker"));
}

#[test]
fn fse_persg_order_and_partnership_values() {
    let doc = El::parse(&xml(&egbr(), true));
    let p = persg(&doc);
    p.assert_names(
        "FragebogenTyp Ordnungskriterium AllgAngaben Beteiligte FestsetzungsAngaben \
         LohnberechnungsStelle Umsatzsteuer",
    );
    assert_eq!(p.child("FragebogenTyp").text(), "GRNDPG");
    let a = p.child("AllgAngaben");
    a.assert_names(
        "Firmenname SitzPersGes Adrkette ArtTaet BankKonto GesVertrag Rechtsform \
         BeginnTaetigkeit GewinnErmittlgsAngaben",
    );
    assert_eq!(a.child("Firmenname").text(), "Rheinblick Immobilien eGbR");
    assert_eq!(a.child("SitzPersGes").text(), "Köln");
    assert_eq!(a.at("Rechtsform/RechtsformId").text(), "eGbR");
    assert_eq!(a.at("BeginnTaetigkeit/Betriebsbeginn").text(), "01.03.2025");
    assert_eq!(
        a.at("ArtTaet/GewerbeArt").text(),
        "Vermietung und Verwaltung eigener Wohnimmobilien"
    );
    assert_eq!(a.at("Adrkette/StrAdr/AdressErg").text(), "2. OG");
    assert_eq!(a.at("BankKonto/BIC").text(), "COBADEFFXXX");
    assert_eq!(a.at("GesVertrag/DatumGVertrag").text(), "15.01.2025");
    let gsr = a.at("GesVertrag/GsrAngaben");
    gsr.assert_names(
        "GsrAntragGestellt GsrEintragVorhanden TagDerEintragung \
         GesellschaftsregisterGericht GsrRegisterbezeichnung GsrRegisternummer",
    );
    assert_eq!(gsr.child("TagDerEintragung").text(), "10.02.2025");
    assert_eq!(
        gsr.child("GesellschaftsregisterGericht").text(),
        "Amtsgericht Köln"
    );
    assert_eq!(gsr.child("GsrRegisterbezeichnung").text(), "GsR");
    assert_eq!(gsr.child("GsrRegisternummer").text(), "1234");
    let gj = a.child("GewinnErmittlgsAngaben");
    assert_eq!(gj.child("MerkerAbwWirtschaftsjahr").text(), "true");
    assert_eq!(gj.child("AbwWJ_ab").text(), "01.07.2025");

    // Shared with the corporation's questionnaire: profit, payroll, VAT, written by the same
    // functions.
    assert_eq!(p.at("FestsetzungsAngaben/Gewinn/FolgeJahr").text(), "60000");
    let lohn = p.child("LohnberechnungsStelle");
    assert_eq!(lohn.child("AnzahlBeschaeftigteArbeitnehmer").text(), "2");
    assert_eq!(lohn.child("AnzahlGesellschafterBeschaeftigte").text(), "0");
    assert_eq!(lohn.child("VoraussichtlicheLohnsteuer").text(), "6000");
    let ust = p.child("Umsatzsteuer");
    ust.assert_names(
        "GesUmsatz KleinunternehmerRegelung ZahllastUeberschuss SollIstVersteuerung \
         UStIdNr SteuerschuldnerschaftLE",
    );
    assert_eq!(
        ust.at("KleinunternehmerRegelung/KleinUnternUStVerzicht")
            .text(),
        "true"
    );
    assert_eq!(
        ust.at("ZahllastUeberschuss/VoranmeldungMonatlich").text(),
        "true"
    );
    ust.at("SteuerschuldnerschaftLE")
        .assert_names("NachweisBeantragt UmfangBauleistungen");
}

#[test]
fn partners_are_beteiligte_with_exact_shares_and_the_managing_flag() {
    let doc = El::parse(&xml(&egbr(), true));
    let b = persg(&doc).child("Beteiligte").all("Beteiligter");
    assert_eq!(b.len(), 3);
    let numbers: Vec<_> = b
        .iter()
        .map(|e| e.child("BeteiligtenNummer").text())
        .collect();
    assert_eq!(numbers, ["1", "2", "3"]);
    assert_eq!(
        b[0].names(),
        [
            "BeteiligtenNummer",
            "NatPers",
            "Beteiligung",
            "MerkerGeschaeftsfuehrung"
        ]
    );
    assert_eq!(
        b[2].names(),
        [
            "BeteiligtenNummer",
            "NNatPers",
            "Beteiligung",
            "MerkerGeschaeftsfuehrung"
        ]
    );
    assert_eq!(b[0].at("NatPers/Vorname").text(), "Katharina");
    assert_eq!(b[0].at("NatPers/PersIdNr").text(), "57549285017");
    assert!(!b[1].child("NatPers").has("PersIdNr"));
    assert_eq!(
        b[2].at("NNatPers/Firmenname").text(),
        "Rhein Verwaltungs GmbH"
    );
    assert_eq!(
        b[2].at("NNatPers/Adrkette/StrAdr/Str").text(),
        "Hohenzollernring"
    );
    let shares: Vec<_> = b
        .iter()
        .map(|e| e.at("Beteiligung/ProzentAnteil").text())
        .collect();
    assert_eq!(shares, ["40.0000", "35.0000", "25.0000"]);
    // No capital, so no nominal amount.
    assert!(
        b.iter()
            .all(|e| e.child("Beteiligung").names() == ["ProzentAnteil"])
    );
    let managing: Vec<_> = b
        .iter()
        .map(|e| e.child("MerkerGeschaeftsfuehrung").text())
        .collect();
    assert_eq!(managing, ["true", "false", "true"]);

    let doc = El::parse(&xml(&gbr(), false));
    let b = persg(&doc).child("Beteiligte").all("Beteiligter");
    let shares: Vec<_> = b
        .iter()
        .map(|e| e.at("Beteiligung/ProzentAnteil").text())
        .collect();
    assert_eq!(shares, ["33.3300", "33.3300", "33.3400"]);
    let abroad = b[2].at("NatPers/Adrkette/StrAdr");
    abroad.assert_names("Str HausNr AuslPlz Ort Staat");
    assert_eq!(abroad.child("Staat").text(), "Dänemark");
}

#[test]
fn gbr_is_unregistered_small_business_without_payroll() {
    let doc = El::parse(&xml(&gbr(), false));
    let p = persg(&doc);
    assert!(!p.has("LohnberechnungsStelle"));
    let a = p.child("AllgAngaben");
    assert!(!a.has("BankKonto"));
    assert_eq!(a.at("Rechtsform/RechtsformId").text(), "GbR");
    let gsr = a.at("GesVertrag/GsrAngaben");
    gsr.assert_names("GsrAntragGestellt GsrEintragVorhanden");
    assert_eq!(gsr.child("GsrAntragGestellt").text(), "false");
    assert_eq!(gsr.child("GsrEintragVorhanden").text(), "false");
    assert_eq!(
        p.at("FestsetzungsAngaben/Gewinn/GruendJahr").text(),
        "-1500"
    );
    assert_eq!(
        p.at("Umsatzsteuer/KleinunternehmerRegelung/KleinUnternUSt")
            .text(),
        "true"
    );
    let zu = p.at("Umsatzsteuer/ZahllastUeberschuss");
    assert_eq!(zu.child("Auswahl").text(), "1");
    assert_eq!(zu.child("Betrag").text(), "0");

    let doc = El::parse(&xml(&application_filed(), true));
    let gsr = persg(&doc).at("AllgAngaben/GesVertrag/GsrAngaben");
    gsr.assert_names("GsrAntragGestellt TagDesAntrags GsrEintragVorhanden");
    assert_eq!(gsr.child("TagDesAntrags").text(), "20.01.2025");
}

#[test]
fn ninety_nine_partners() {
    let doc = El::parse(&xml(&gbr_99(), true));
    let b = persg(&doc).child("Beteiligte").all("Beteiligter");
    assert_eq!(b.len(), 99);
    assert_eq!(b[98].child("BeteiligtenNummer").text(), "99");
    assert_eq!(b[98].at("Beteiligung/ProzentAnteil").text(), "1.0102");
    assert_eq!(b[0].child("MerkerGeschaeftsfuehrung").text(), "true");
    assert_eq!(b[1].child("MerkerGeschaeftsfuehrung").text(), "false");
}

#[test]
fn special_characters_are_escaped_and_output_is_deterministic() {
    let mut reg = gbr();
    reg.name = r#"Müller & Söhne <Hof> "Laden" GbR"#.into();
    reg.partners.individuals[0].last_name = "O'Brien & <Co>".into();
    let bytes = xml(&reg, true);
    validate(&bytes).unwrap();
    el::xmllint(&bytes, ENVELOPE).unwrap();
    let doc = El::parse(&bytes);
    assert_eq!(persg(&doc).at("AllgAngaben/Firmenname").text(), reg.name);
    assert_eq!(
        persg(&doc).at("Beteiligte/Beteiligter/NatPers/Name").text(),
        "O'Brien & <Co>"
    );
    for (name, reg) in fixtures() {
        assert_eq!(xml(&reg, true), xml(&reg.clone(), true), "{name}");
    }
}

#[test]
fn every_element_has_text_or_children() {
    let doc = El::parse(&xml(&egbr(), true));
    el::assert_no_empty_elements(&doc);
}

#[test]
fn a_schema_violation_of_the_writer_surfaces_in_write_persg_validated() {
    // A name over the schema's 120 characters (the request rules would have refused it).
    let mut reg = gbr();
    reg.name = "X".repeat(121);
    assert!(write_persg(&reg, &ctx(true)).is_ok());
    match write_persg_validated(&reg, &ctx(true)) {
        Err(XmlError::SchemaViolations(v)) => {
            assert!(v.iter().any(|e| e.contains("Firmenname")), "{v:?}")
        }
        other => panic!("{other:?}"),
    }
}

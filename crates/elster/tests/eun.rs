//! The sole proprietor's documents (DatenArt EUn, `FsE_EUn`), from the example requests through
//! the API's own parser: every element read back against the reference
//! (docs/elster-eun-reference.md) for a trader and a freelancer, under § 19 UStG and not, with
//! and without employees; validity under the bundled schemas (libxml2 and xmllint); rejection
//! of broken documents and of the other kinds; golden files (`UPDATE_GOLDEN=1` rewrites them);
//! the answers left for the operator; and every written element cited in docs/elster.md.

mod el;
mod fixtures;

use std::path::PathBuf;

use domain::latin9::is_elster_char;
use domain::sole_proprietor::SoleProprietorTaxRegistration;
use el::El;
use elster::{ManualReason, eun_not_in_xml, validate, write_eun, write_eun_validated};
use serde_json::{Value, json};
use time::macros::date;

const ENVELOPE: &str = "elster-v11-fse-eun.xsd";

fn example(production: bool) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!(
        "../../examples/{}tax-registration-sole-proprietor.json",
        if production { "production/" } else { "" }
    ));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The sandbox freelancer: married, standard VAT with cash accounting for a liberal
/// profession, a monthly refund, employees, from home.
fn freelancer() -> Value {
    example(false)
}

/// The production trader: single, § 19 UStG, no employees, a loss in the second year, a
/// business address of its own.
fn trader() -> Value {
    example(true)
}

fn with(mut v: Value, edits: &[(&str, Value)]) -> Value {
    for (pointer, value) in edits {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        let target = if parent.is_empty() {
            &mut v
        } else {
            v.pointer_mut(parent).unwrap()
        };
        let m = target.as_object_mut().unwrap();
        if value.is_null() {
            m.remove(key);
        } else {
            m.insert(key.to_owned(), value.clone());
        }
    }
    v
}

fn reg(request: &Value) -> SoleProprietorTaxRegistration {
    domain::sole_proprietor_request::parse(
        request,
        date!(2026 - 01 - 10),
        &domain::offices::is_known_tax_office,
    )
    .unwrap_or_else(|e| panic!("{e}\n{request:#}"))
    .registration
}

fn xml(request: &Value) -> Vec<u8> {
    let r = reg(request);
    write_eun(
        &r,
        &fixtures::ctx(r.environment == domain::company::Environment::Sandbox),
    )
    .unwrap()
}

fn eun(doc: &El) -> &El {
    doc.at("DatenTeil/Nutzdatenblock/Nutzdaten/FsE_EUn/EUn")
}

fn assert_valid(name: &str, doc: &[u8]) {
    if let Err(e) = validate(doc) {
        panic!("{name}: {e:#?}\n{}", String::from_utf8_lossy(doc));
    }
    if let Err(e) = el::xmllint(doc, ENVELOPE) {
        panic!("{name}: {e}");
    }
    let text = std::str::from_utf8(doc).unwrap();
    assert!(
        text.chars().all(|c| c == '\n' || is_elster_char(c)),
        "{name}: a character outside ISO 8859-15"
    );
    el::assert_no_empty_elements(&El::parse(doc));
}

/// A freelancer and a trader, under § 19 and not, with and without employees, at home and
/// not, each kind of activity and reason for cash accounting.
fn variations() -> Vec<(&'static str, Value)> {
    vec![
        ("freelancer", freelancer()),
        ("trader", trader()),
        (
            "freelancer-small-business",
            with(
                freelancer(),
                &[
                    (
                        "/financial_estimates/formation_year/revenue_amount",
                        json!(20_000),
                    ),
                    (
                        "/financial_estimates/following_year/revenue_amount",
                        json!(60_000),
                    ),
                    (
                        "/financial_estimates/following_year/profit_amount",
                        json!(40_000),
                    ),
                    ("/vat", json!({"regime": "small-business"})),
                    ("/cash_accounting_reason", Value::Null),
                    ("/has_employees", json!(false)),
                    ("/employee_count", Value::Null),
                    ("/shareholder_employee_count", Value::Null),
                    ("/marginal_employee_count", Value::Null),
                    ("/payroll_start_date", Value::Null),
                    ("/estimated_annual_wage_tax", Value::Null),
                ],
            ),
        ),
        (
            "trader-waives-small-business-with-employees",
            with(
                trader(),
                &[
                    (
                        "/vat",
                        json!({"regime": "standard", "accounting_method": "cash",
                               "estimated_balance_type": "payable", "estimated_balance_amount": 2000}),
                    ),
                    ("/cash_accounting_reason", json!("turnover-below-limit")),
                    (
                        "/financial_estimates/following_year/profit_amount",
                        json!(15_000),
                    ),
                    ("/has_employees", json!(true)),
                    ("/employee_count", json!(1)),
                    ("/shareholder_employee_count", json!(0)),
                    ("/payroll_start_date", json!("2025-07-01")),
                    ("/estimated_annual_wage_tax", json!(1200)),
                ],
            ),
        ),
        (
            "farmer-accrual-balance-sheet",
            with(
                trader(),
                &[
                    ("/activity_kind", json!("agriculture-forestry")),
                    ("/profit_determination", json!("balance-sheet")),
                    ("/fiscal_year_deviates_from_calendar", json!(true)),
                    ("/fiscal_year_deviating_start_date", json!("2025-07-01")),
                    (
                        "/financial_estimates/formation_year/revenue_amount",
                        json!(150_000),
                    ),
                    (
                        "/vat",
                        json!({"accounting_method": "accrual", "estimated_balance_type": "payable",
                               "estimated_balance_amount": 5000}),
                    ),
                ],
            ),
        ),
        (
            "freelancer-exempt-from-bookkeeping-abroad-office",
            with(
                freelancer(),
                &[
                    ("/cash_accounting_reason", json!("no-bookkeeping-duty")),
                    (
                        "/address",
                        json!({"street": "Calle Mayor 5", "zip": "28013", "city": "Madrid", "country": "ES"}),
                    ),
                    ("/business_address", Value::Null),
                    ("/owner/salutation", Value::Null),
                    ("/owner/title", Value::Null),
                ],
            ),
        ),
    ]
}

#[test]
fn every_variation_validates_with_libxml2_and_xmllint() {
    for (name, request) in variations() {
        let doc = xml(&request);
        assert_valid(name, &doc);
        let r = reg(&request);
        let ctx = fixtures::ctx(r.environment == domain::company::Environment::Sandbox);
        assert_eq!(write_eun_validated(&r, &ctx).unwrap(), doc, "{name}");
    }
}

#[test]
fn the_freelancer_reads_back_element_by_element() {
    let doc = El::parse(&xml(&freelancer()));
    let header = doc.at("TransferHeader");
    assert_eq!(header.child("DatenArt").text(), "EUn");
    assert_eq!(header.child("Verfahren").text(), "ElsterFSE");
    assert_eq!(header.child("Testmerker").text(), "700000004");
    let payload = doc.at("DatenTeil/Nutzdatenblock/Nutzdaten/FsE_EUn");
    assert_eq!(payload.attr("xmlns"), Some(elster::FSE_EUN_NS));
    assert_eq!(payload.attr("version"), Some("202401"));
    let e = eun(&doc);
    // The root order of E:27-38, with what this case writes.
    e.assert_names(
        "FragebogenTyp Ordnungskriterium AllgAngaben Betrieb FestsetzungsAngaben GewinnErmittlgsAngaben Umsatzsteuer",
    );
    assert_eq!(e.child("FragebogenTyp").text(), "AUFNTAET");
    e.child("Ordnungskriterium")
        .assert_children(&[("OrdNrArt", Some("O"))]);
    let a = e.child("AllgAngaben");
    a.assert_names("Inhaber ArtTaet");
    a.at("Inhaber/NatPers").assert_children(&[
        ("AnredeId", Some("2")),
        ("Vorname", Some("Lena")),
        ("Name", Some("Vogt")),
        ("Titel", Some("Dr.")),
        ("GebDat", Some("19.05.1987")),
        ("Religion", Some("03")),
        ("Adrkette", None),
    ]);
    a.at("Inhaber/NatPers/Adrkette/StrAdr").assert_children(&[
        ("Str", Some("Lindenstraße")),
        ("HausNr", Some("24")),
        ("Plz", Some("50674")),
        ("Ort", Some("Köln")),
    ]);
    assert_eq!(
        a.at("ArtTaet/GewerbeArt").text(),
        "Übersetzungen Deutsch-Englisch-Spanisch und Dolmetschen für Behörden und Unternehmen; Aufbau eines Übersetzungsbüros mit Technik und Software"
    );
    let b = e.child("Betrieb");
    b.assert_names("Unternehmen BetrBeginn Gruendungsangaben");
    // Run from home: the flag, no second address (E:192-203).
    b.child("Unternehmen")
        .assert_children(&[("EntsprichtWohnanschrift", Some("true"))]);
    b.child("BetrBeginn")
        .assert_children(&[("Betriebsbeginn", Some("10.02.2025"))]);
    b.at("Gruendungsangaben/GruendungsForm").assert_children(&[
        ("GruendungsArt", Some("1")),
        ("UebertrStichtag", Some("01.03.2025")),
    ]);
    // A liberal profession's income: EinkSelbst, the taxpayer's column (St111).
    e.at("FestsetzungsAngaben/VoraussichtlicheEinkuenfte")
        .assert_names("EinkSelbst");
    e.at("FestsetzungsAngaben/VoraussichtlicheEinkuenfte/EinkSelbst")
        .assert_children(&[
            ("GruendJahrA", Some("15000")),
            ("FolgeJahrA", Some("60000")),
        ]);
    e.child("GewinnErmittlgsAngaben")
        .assert_children(&[("GewinnErmittlung", Some("01"))]);
    let u = e.child("Umsatzsteuer");
    // Above the § 19 thresholds: no small-business flag, the balance as sent (not the source's
    // overwrite to payable 0), Ist for a liberal profession.
    u.assert_names("GesUmsatz ZahllastUeberschuss SollIstVersteuerung UStIdNr");
    u.child("GesUmsatz").assert_children(&[
        ("GruendJahr", Some("120000")),
        ("FolgeJahr", Some("300000")),
    ]);
    u.child("ZahllastUeberschuss").assert_children(&[
        ("Auswahl", Some("2")),
        ("Betrag", Some("12000")),
        ("VoranmeldungMonatlich", Some("true")),
    ]);
    u.child("SollIstVersteuerung").assert_children(&[
        ("AuswahlSollIstVerst", Some("2")),
        ("IstVerstUStGrundFreierBeruf", Some("true")),
    ]);
    assert_eq!(u.at("UStIdNr/UStIdAntrag/MerkerAntragUStId").text(), "true");
    // No element the source only names: the spouse, the bank account, the adviser, the IdNr,
    // the payroll (listed for the operator instead).
    let text = String::from_utf8(xml(&freelancer())).unwrap();
    for absent in [
        "Ehegatte",
        "BankKonto",
        "Steuerberater",
        "PersIdNr",
        "AngabenLohnsteuer",
        "LohnberechnungsStelle",
        "StandEhe",
        "GebName",
        "Komm",
    ] {
        assert!(!text.contains(&format!("<{absent}")), "{absent}");
    }
}

#[test]
fn the_trader_reads_back_element_by_element() {
    let doc = El::parse(&xml(&trader()));
    assert!(!doc.at("TransferHeader").has("Testmerker"), "production");
    let e = eun(&doc);
    let person = e.at("AllgAngaben/Inhaber/NatPers");
    // No title; the salutation Herr; not subject to church tax.
    person.assert_children(&[
        ("AnredeId", Some("1")),
        ("Vorname", Some("Emre")),
        ("Name", Some("Yilmaz")),
        ("GebDat", Some("27.02.1994")),
        ("Religion", Some("11")),
        ("Adrkette", None),
    ]);
    // The business elsewhere: its own address, the house number split (S:34-73).
    e.at("Betrieb/Unternehmen/Adrkette/StrAdr")
        .assert_children(&[
            ("Str", Some("Bahnhofstraße")),
            ("HausNr", Some("8")),
            ("HausNrZu", Some("a")),
            ("Plz", Some("21335")),
            ("Ort", Some("Lüneburg")),
        ]);
    // Trade income; the following year's loss is left out (no sign in the source).
    e.at("FestsetzungsAngaben/VoraussichtlicheEinkuenfte/EinkGewBetr")
        .assert_children(&[("GruendJahrA", Some("6000"))]);
    let u = e.child("Umsatzsteuer");
    // § 19 UStG: the flag and the balance payable 0 (E:230-244); no Soll/Ist, no VAT id.
    u.assert_names("GesUmsatz KleinunternehmerRegelung ZahllastUeberschuss");
    u.child("KleinunternehmerRegelung")
        .assert_children(&[("KleinUnternUSt", Some("true"))]);
    u.child("ZahllastUeberschuss")
        .assert_children(&[("Auswahl", Some("1")), ("Betrag", Some("0"))]);
}

#[test]
fn waiver_reasons_and_farming_read_back() {
    let all = variations();
    let get = |name: &str| {
        let (_, r) = all.iter().find(|(n, _)| *n == name).unwrap();
        El::parse(&xml(r))
    };
    // Waived § 19 (the election was open): the waiver flag, Ist under the turnover limit.
    let doc = get("trader-waives-small-business-with-employees");
    let u = eun(&doc).child("Umsatzsteuer");
    u.child("KleinunternehmerRegelung")
        .assert_children(&[("KleinUnternUStVerzicht", Some("true"))]);
    u.child("ZahllastUeberschuss")
        .assert_children(&[("Auswahl", Some("1")), ("Betrag", Some("2000"))]);
    u.child("SollIstVersteuerung").assert_children(&[
        ("AuswahlSollIstVerst", Some("2")),
        ("IstVerstUStGrundUmsatz", Some("true")),
    ]);
    // Farming: no income element is public, so none; Bilanz (02); accrual above § 19.
    let doc = get("farmer-accrual-balance-sheet");
    let e = eun(&doc);
    assert!(!e.has("FestsetzungsAngaben"));
    e.child("GewinnErmittlgsAngaben")
        .assert_children(&[("GewinnErmittlung", Some("02"))]);
    let u = e.child("Umsatzsteuer");
    assert!(!u.has("KleinunternehmerRegelung"), "above the thresholds");
    u.child("SollIstVersteuerung")
        .assert_children(&[("AuswahlSollIstVerst", Some("1"))]);
    // Exempted from bookkeeping, the business abroad: IstVerstUStGrundAO, no Unternehmen.
    let doc = get("freelancer-exempt-from-bookkeeping-abroad-office");
    let e = eun(&doc);
    e.child("Betrieb")
        .assert_names("BetrBeginn Gruendungsangaben");
    e.at("AllgAngaben/Inhaber/NatPers")
        .assert_names("Vorname Name GebDat Religion Adrkette");
    assert!(
        e.at("Umsatzsteuer/SollIstVersteuerung")
            .has("IstVerstUStGrundAO")
    );
}

#[test]
fn the_operator_gets_every_answer_the_xml_leaves_out() {
    let f = eun_not_in_xml(&reg(&freelancer()));
    let fields: Vec<&str> = f.iter().map(|e| e.field.as_str()).collect();
    for want in [
        "owner.tax_identification_number",
        "owner.birth_name",
        "owner.marital_status",
        "owner.phone",
        "spouse",
        "iban",
        "tax_advisor",
        "earlier_circumstances",
        "name",
        "prepayments.employment_income",
        "prepayments.special_expenses",
        "payroll",
    ] {
        assert!(fields.contains(&want), "{want}: {fields:?}");
    }
    let spouse = f.iter().find(|e| e.field == "spouse").unwrap();
    assert_eq!(spouse.sub_page, "2 Ehegatte / Lebenspartner(in)");
    assert_eq!(
        spouse.value.as_deref(),
        Some("Jonas Vogt, geb. 02.11.1985, IdNr 86095742719, Religion 11")
    );
    assert_eq!(spouse.reason, ManualReason::NoPublicElement);

    let t = eun_not_in_xml(&reg(&trader()));
    let loss = t
        .iter()
        .find(|e| e.field == "financial_estimates.following_year.profit_amount")
        .unwrap();
    assert_eq!(loss.value.as_deref(), Some("-2.000 €"));
    assert_eq!(loss.reason, ManualReason::NoPublicFormat);
    assert!(
        !t.iter()
            .any(|e| e.field == "spouse" || e.field == "payroll")
    );
    // Without an IdNr the operator is told it is missing.
    let no_id = eun_not_in_xml(&reg(&with(
        trader(),
        &[("/owner/tax_identification_number", Value::Null)],
    )));
    let id = no_id
        .iter()
        .find(|e| e.field == "owner.tax_identification_number")
        .unwrap();
    assert_eq!(
        (id.value.as_deref(), id.reason),
        (None, ManualReason::NotGiven)
    );
}

#[test]
fn broken_documents_and_other_kinds_are_rejected() {
    let good = el::compact(&String::from_utf8(xml(&freelancer())).unwrap());
    let cases = el::edits(
        &good,
        &[
            (
                "an unknown questionnaire type",
                "<FragebogenTyp>AUFNTAET<",
                "<FragebogenTyp>GRNDKPG<",
            ),
            ("an unknown religion code", "<Religion>03<", "<Religion>01<"),
            (
                "an invented element",
                "<BetrBeginn>",
                "<Ehegatte>x</Ehegatte><BetrBeginn>",
            ),
            (
                "a profit determination code not public",
                "<GewinnErmittlung>01<",
                "<GewinnErmittlung>03<",
            ),
            (
                "a date in ISO form",
                "<GebDat>19.05.1987<",
                "<GebDat>1987-05-19<",
            ),
            ("a negative amount", "<Betrag>12000<", "<Betrag>-12000<"),
            (
                "two reasons",
                "<IstVerstUStGrundFreierBeruf>true</IstVerstUStGrundFreierBeruf>",
                "<IstVerstUStGrundFreierBeruf>true</IstVerstUStGrundFreierBeruf><IstVerstUStGrundAO>true</IstVerstUStGrundAO>",
            ),
            ("the wrong DatenArt", "<DatenArt>EUn<", "<DatenArt>KapG<"),
        ],
    );
    el::assert_rejected_by_libxml2(cases.clone());
    el::assert_rejected_by_xmllint(cases, ENVELOPE);
    // A corporation's document does not pass as an EUn one, nor the reverse.
    let kapg = elster::write(&fixtures::gmbh(), &fixtures::ctx(true)).unwrap();
    assert!(el::xmllint(&kapg, ENVELOPE).is_err());
    assert!(el::xmllint(&xml(&freelancer()), "elster-v11-fse-kapg.xsd").is_err());
}

#[test]
fn golden_files_byte_for_byte() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    for (name, request) in [
        ("eun-freelancer", freelancer()),
        ("eun-trader-small-business", trader()),
    ] {
        let doc = xml(&request);
        assert_valid(name, &doc);
        let file = dir.join(format!("{name}.xml"));
        if update {
            std::fs::write(&file, &doc).unwrap();
            continue;
        }
        let golden = std::fs::read(&file)
            .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", file.display()));
        assert!(
            golden == doc,
            "{name}: the XML differs from {}:\n{}",
            file.display(),
            String::from_utf8_lossy(&doc)
        );
    }
}

/// The rows `| \`path\` | source |` of docs/elster.md's section on the EUn.
fn cited() -> Vec<(String, String)> {
    let docs = include_str!("../../../docs/elster.md");
    let section = docs
        .split("\n## ")
        .find(|s| s.starts_with("The sole proprietor's FsE_EUn, element by element\n"))
        .expect("docs/elster.md has a section on the EUn");
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim().split('|').map(str::trim).collect();
            let path = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((path.to_owned(), cells.get(2)?.to_string()))
        })
        .collect()
}

fn paths(el: &El, prefix: &str, out: &mut Vec<String>) {
    let path = if prefix.is_empty() {
        el.name.clone()
    } else {
        format!("{prefix}/{}", el.name)
    };
    let shown = match path.find("/Adrkette") {
        Some(i) => format!("*{}", &path[i..]),
        None => path.clone(),
    };
    if !out.contains(&shown) {
        out.push(shown);
    }
    for c in &el.children {
        paths(c, &path, out);
    }
}

/// Every element the EUn writer writes in any variation is cited in docs/elster.md with its
/// line in the public source (`E:`, `St..:`), and no row cites one it never writes.
#[test]
fn every_written_element_has_a_cited_public_source() {
    let rows = cited();
    let mut written = Vec::new();
    for (_, request) in variations() {
        let doc = El::parse(&xml(&request));
        for c in &eun(&doc).children {
            paths(c, "", &mut written);
        }
    }
    let missing: Vec<&String> = written
        .iter()
        .filter(|p| {
            !rows
                .iter()
                .any(|(row, source)| row == *p && (source.contains("E:") || source.contains("St")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "written without a cited source: {missing:?}"
    );
    let stale: Vec<&String> = rows
        .iter()
        .map(|(p, _)| p)
        .filter(|p| !written.contains(p))
        .collect();
    assert!(stale.is_empty(), "cited but never written: {stale:?}");
}

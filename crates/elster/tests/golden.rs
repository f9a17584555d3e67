//! Golden files: the XML of each example request, byte for byte (`tests/golden/*.xml`), and the
//! XML of every variation of the examples a request may take (each VAT, register, formation,
//! address and payroll branch), valid under the bundled schemas with libxml2 and xmllint.
//!
//! The requests go through the API's own parsers (`domain::tax_request::parse`,
//! `domain::gbr_request::parse`), so what is tested is what a create writes. After a deliberate
//! change of the XML, `UPDATE_GOLDEN=1 cargo test -p elster --test golden` rewrites the files;
//! review their diff like code.

mod el;
mod fixtures;

use std::path::PathBuf;

use domain::latin9::is_elster_char;
use el::El;
use serde_json::{Value, json};
use time::macros::date;

fn example(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!(
        "../../examples/{}tax-registration-{name}.json",
        example_folder(name)
    ));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Sets the value at a JSON pointer (the parent must exist).
fn set(v: &mut Value, pointer: &str, new: Value) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let target = if parent.is_empty() {
        &mut *v
    } else {
        v.pointer_mut(parent).unwrap()
    };
    match target {
        Value::Object(m) => {
            if new.is_null() {
                m.remove(key);
            } else {
                m.insert(key.to_owned(), new);
            }
        }
        other => panic!("cannot set {pointer} in {other}"),
    }
}

fn with(mut v: Value, edits: &[(&str, Value)]) -> Value {
    for (pointer, value) in edits {
        set(&mut v, pointer, value.clone());
    }
    v
}

/// The XML a create writes for `request`: a corporation's or a partnership's, for the sandbox
/// or production as the request says.
fn xml_of(request: &Value) -> Vec<u8> {
    let today = date!(2026 - 01 - 10);
    let known = domain::offices::is_known_tax_office;
    let partnership = matches!(request["legal_form"].as_str(), Some("gbr" | "egbr"));
    let sandbox = request["environment"] == "sandbox";
    let ctx = fixtures::ctx(sandbox);
    if partnership {
        let r = domain::gbr_request::parse(request, today, &known)
            .unwrap_or_else(|e| panic!("{e}\n{request:#}"));
        elster::write_persg(&r.registration, &ctx).unwrap()
    } else {
        let r = domain::tax_request::parse(request, today, &known)
            .unwrap_or_else(|e| panic!("{e}\n{request:#}"));
        elster::write(&r.registration, &ctx).unwrap()
    }
}

fn envelope(request: &Value) -> &'static str {
    match request["legal_form"].as_str() {
        Some("gbr" | "egbr") => "elster-v11-fse-persg.xsd",
        _ => "elster-v11-fse-kapg.xsd",
    }
}

fn assert_valid(name: &str, request: &Value, xml: &[u8]) {
    if let Err(e) = elster::validate(xml) {
        panic!("{name}: {e:#?}\n{}", String::from_utf8_lossy(xml));
    }
    if let Err(e) = el::xmllint(xml, envelope(request)) {
        panic!("{name}: {e}");
    }
    let text = std::str::from_utf8(xml).unwrap();
    assert!(
        text.chars().all(|c| c == '\n' || is_elster_char(c)),
        "{name}: a character outside ISO 8859-15"
    );
}

/// 99 individual shareholders of the GmbH example: 98 of 1.0101 % and one of 1.0102 %.
fn gmbh_99() -> Value {
    let mut v = example("gmbh");
    let template = v["shareholders"]["individuals"][0].clone();
    let people: Vec<Value> = (0..99)
        .map(|i| {
            let mut p = template.clone();
            // Names have no digits (DIN 91379 type A): Aa, Ab, ... by the shareholder's number.
            let letters: String = [b'A' + (i / 26) as u8, b'a' + (i % 26) as u8]
                .iter()
                .map(|b| *b as char)
                .collect();
            p["first_name"] = json!(letters);
            p["last_name"] = json!("Teilhaber");
            p.as_object_mut()
                .unwrap()
                .remove("tax_identification_number");
            p["address"]["street"] = json!(format!("Allee {}", i + 1));
            p["share_percentage"] = json!(if i == 98 { 1.0102 } else { 1.0101 });
            p["share_numbers"] = json!((i + 1).to_string());
            p
        })
        .collect();
    v["shareholders"] = json!({ "individuals": people });
    v
}

/// The four golden documents.
fn golden_cases() -> Vec<(&'static str, Value)> {
    vec![
        ("ug-small-business", example("ug")),
        (
            "gmbh-payroll-reverse-charge",
            with(
                example("gmbh"),
                &[
                    ("/vat/request_reverse_charge_certificate", json!(true)),
                    ("/vat/reverse_charge_service_type", json!("both")),
                    ("/vat/sells_via_online_marketplaces", json!(true)),
                ],
            ),
        ),
        ("gmbh-99-shareholders", gmbh_99()),
        ("egbr", example("egbr")),
    ]
}

#[test]
fn golden_files_byte_for_byte() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    for (name, request) in golden_cases() {
        let xml = xml_of(&request);
        assert_valid(name, &request, &xml);
        let file = dir.join(format!("{name}.xml"));
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&file, &xml).unwrap();
            continue;
        }
        let golden = std::fs::read(&file)
            .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", file.display()));
        if golden != xml {
            let (g, x) = (
                String::from_utf8_lossy(&golden),
                String::from_utf8_lossy(&xml),
            );
            let line = g
                .lines()
                .zip(x.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(g.lines().count().min(x.lines().count()));
            panic!(
                "{name}: the XML differs from {} at line {}:\n golden: {:?}\n now:    {:?}",
                file.display(),
                line + 1,
                g.lines().nth(line),
                x.lines().nth(line)
            );
        }
    }
}

/// Nominal amounts of every example (and the 99 shareholders) are whole euros that sum to the
/// capital.
#[test]
fn nominal_amounts_of_every_example_sum_to_the_capital() {
    for (name, request) in [
        ("gmbh", example("gmbh")),
        ("ug", example("ug")),
        ("gmbh-99", gmbh_99()),
    ] {
        let doc = El::parse(&xml_of(&request));
        let k = doc.at("DatenTeil/Nutzdatenblock/Nutzdaten/FsE_KapG/KapG");
        let capital: i64 = k
            .at("AllgAngaben/HoeheGrundStammkapital/Grundstammkapital")
            .text()
            .parse()
            .unwrap();
        let sum: i64 = k
            .child("Gesellschafter")
            .all("Anteilseigner")
            .iter()
            .map(|a| {
                let n = a.at("Beteiligung/Nominal").text();
                let euros = n
                    .strip_suffix(".00")
                    .unwrap_or_else(|| panic!("{name}: {n}"));
                euros.parse::<i64>().unwrap()
            })
            .sum();
        assert_eq!(sum, capital, "{name}");
    }
}

/// Every branch a request can take writes a document both validators accept.
/// Every variation of the examples a request may take: each VAT, register, formation,
/// address, notary, bank and payroll branch.
fn variations() -> Vec<(String, Value)> {
    let standard = [
        ("/vat/regime", json!("standard")),
        ("/vat/accounting_method", json!("cash")),
        ("/vat/estimated_balance_type", json!("payable")),
        ("/vat/estimated_balance_amount", json!(500)),
    ];
    let above = [
        (
            "/financial_estimates/formation_year/revenue_amount",
            json!(30_000),
        ),
        ("/vat/regime", Value::Null),
        ("/vat/accounting_method", json!("accrual")),
        ("/vat/estimated_balance_type", json!("refundable")),
        ("/vat/estimated_balance_amount", json!(9_500)),
        ("/vat/return_frequency", json!("monthly")),
    ];
    let mut cases: Vec<(String, Value)> = Vec::new();
    for base in ["gmbh", "ug", "gbr", "egbr"] {
        let b = example(base);
        cases.push((base.into(), b.clone()));
        for env in ["sandbox", "production"] {
            cases.push((
                format!("{base} {env}"),
                with(b.clone(), &[("/environment", json!(env))]),
            ));
        }
        for kind in ["construction", "building-cleaning", "both"] {
            cases.push((
                format!("{base} reverse charge {kind}"),
                with(
                    b.clone(),
                    &[
                        ("/vat/request_reverse_charge_certificate", json!(true)),
                        ("/vat/reverse_charge_service_type", json!(kind)),
                    ],
                ),
            ));
        }
        cases.push((
            format!("{base} VAT id, marketplaces"),
            with(
                b.clone(),
                &[
                    ("/vat/request_vat_id", json!(true)),
                    ("/vat/sells_via_online_marketplaces", json!(true)),
                ],
            ),
        ));
        cases.push((
            format!("{base} fiscal year"),
            with(
                b.clone(),
                &[
                    ("/fiscal_year_deviates_from_calendar", json!(true)),
                    ("/fiscal_year_deviating_start_date", json!("2025-07-01")),
                ],
            ),
        ));
        cases.push((
            format!("{base} abroad"),
            with(
                b.clone(),
                &[
                    ("/address/street", json!("Kärntner Straße 3")),
                    ("/address/zip", json!("1010")),
                    ("/address/city", json!("Wien")),
                    ("/address/country", json!("AT")),
                    ("/address/state", Value::Null),
                ],
            ),
        ));
        cases.push((
            format!("{base} DIN 91379 names"),
            with(
                b.clone(),
                &[
                    ("/address/street", json!("Ulica Łąkowa 7")),
                    ("/address/street_second_line", json!("Ǻ-Flügel, Ĳsselkant")),
                    ("/purpose", json!("Vermietung zu ½ und ¼ in Łódź’s Mitte")),
                ],
            ),
        ));
    }
    // The small-business examples (ug, gbr) with the rule waived, and above the thresholds.
    for base in ["ug", "gbr"] {
        cases.push((
            format!("{base} standard regime"),
            with(example(base), &standard),
        ));
        cases.push((
            format!("{base} above the thresholds"),
            with(example(base), &above),
        ));
        cases.push((
            format!("{base} quarterly payable"),
            with(
                example(base),
                &[
                    ("/vat/regime", json!("standard")),
                    ("/vat/accounting_method", json!("accrual")),
                    ("/vat/estimated_balance_type", json!("payable")),
                    ("/vat/estimated_balance_amount", json!(0)),
                    ("/vat/return_frequency", json!("quarterly")),
                ],
            ),
        ));
    }
    // The corporation's register, formation, notary, bank and payroll branches.
    for (what, edits) in [
        ("not applied", vec![("/commercial_register", Value::Null)]),
        (
            "application filed",
            vec![(
                "/commercial_register",
                json!({"status": "application-filed", "registration_application_date": "2025-02-15"}),
            )],
        ),
        ("in kind", vec![("/formation_type", json!("in-kind"))]),
        (
            "conversion",
            vec![
                ("/formation_type", json!("conversion")),
                ("/conversion_type", json!("form-change")),
            ],
        ),
        ("no notary", vec![("/notary", Value::Null)]),
        (
            "no bank",
            vec![("/iban", Value::Null), ("/bic", Value::Null)],
        ),
        (
            "no employees",
            vec![
                ("/has_employees", json!(false)),
                ("/employee_count", Value::Null),
                ("/shareholder_employee_count", Value::Null),
                ("/marginal_employee_count", Value::Null),
                ("/payroll_start_date", Value::Null),
                ("/estimated_annual_wage_tax", Value::Null),
            ],
        ),
    ] {
        cases.push((format!("gmbh {what}"), with(example("gmbh"), &edits)));
    }
    cases.push(("gmbh 99".into(), gmbh_99()));
    cases
}

#[test]
fn every_variation_of_the_examples_is_valid() {
    let cases = variations();
    for (name, request) in &cases {
        assert_valid(name, request, &xml_of(request));
    }
    assert!(cases.len() > 50, "{}", cases.len());
}

/// The rows `| \`path\` | source |` of docs/elster.md's section "Every element and its
/// source".
fn cited_sources() -> Vec<(String, String)> {
    let docs = include_str!("../../../docs/elster.md");
    let section = docs
        .split("\n## ")
        .find(|s| s.starts_with("Every element and its source\n"))
        .expect("docs/elster.md has a section \"Every element and its source\"");
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim().split('|').map(str::trim).collect();
            let path = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((path.to_owned(), cells.get(2)?.to_string()))
        })
        .collect()
}

/// An element's path below the questionnaire's wrapper or the attachments block, as the docs
/// cite it: an address's elements below `*/Adrkette` wherever the address stands.
fn cited_path(path: &str) -> String {
    match path.find("/Adrkette") {
        Some(i) => format!("*{}", &path[i..]),
        None => path.to_owned(),
    }
}

fn paths(el: &El, prefix: &str, out: &mut Vec<String>) {
    let path = if prefix.is_empty() {
        el.name.clone()
    } else {
        format!("{prefix}/{}", el.name)
    };
    let cited = cited_path(&path);
    if !out.contains(&cited) {
        out.push(cited);
    }
    for c in &el.children {
        paths(c, &path, out);
    }
}

/// "Only what has a public source goes into the XML": every element the corporation's XML
/// writes, in any variation of the examples and in the attachments block, is cited in
/// docs/elster.md with its public source (a file and line of the reference implementation);
/// none is marked ours. A new element without a row, or a row without a source, fails here.
#[test]
fn every_written_element_has_a_cited_public_source() {
    let cited = cited_sources();
    assert!(cited.len() > 40, "{} rows", cited.len());
    let mut written: Vec<String> = Vec::new();
    let mut documents: Vec<Vec<u8>> = variations()
        .iter()
        .filter(|(_, r)| !matches!(r["legal_form"].as_str(), Some("gbr" | "egbr")))
        .map(|(_, r)| xml_of(r))
        .collect();
    // The further answers and the attachments block.
    let mut reg = fixtures::gmbh();
    reg.request_construction_exemption_certificate = true;
    let attachment = elster::Attachment {
        name: "Gesellschaftsvertrag".into(),
        content_type: "application/pdf".into(),
        bytes: b"%PDF-1.7 x".to_vec(),
    };
    documents.push(elster::write_with(&reg, &fixtures::ctx(true), &[attachment]).unwrap());
    for xml in &documents {
        let doc = El::parse(xml);
        let nutzdaten = doc.at("DatenTeil/Nutzdatenblock/Nutzdaten");
        paths(nutzdaten.at("FsE_KapG/KapG"), "", &mut written);
        if nutzdaten.has("Anhaenge") {
            paths(nutzdaten.child("Anhaenge"), "", &mut written);
        }
    }
    let mut missing = Vec::new();
    for path in &written {
        match cited.iter().find(|(p, _)| p == path) {
            None => missing.push(format!("{path}: no row")),
            Some((_, source)) if source.is_empty() || source.to_lowercase().contains("ours") => {
                missing.push(format!("{path}: no public source ({source:?})"))
            }
            Some(_) => {}
        }
    }
    assert!(
        missing.is_empty(),
        "written without a cited public source:\n{}",
        missing.join("\n")
    );
    // And no row cites an element the writer never writes (a stale row hides a removed one).
    let stale: Vec<&String> = cited
        .iter()
        .map(|(p, _)| p)
        .filter(|p| !written.contains(p))
        .collect();
    assert!(stale.is_empty(), "cited but never written: {stale:?}");
}

/// The examples these tests were written against: the UG and GbR requests are production cases
/// (`examples/production/`), the GmbH and eGbR ones sandbox cases (`examples/`).
fn example_folder(name: &str) -> &'static str {
    if matches!(name, "ug" | "gbr") {
        "production/"
    } else {
        ""
    }
}

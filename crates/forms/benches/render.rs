//! Rendering benchmarks: one GewA 1 (two pages), a GmbH's with a second managing director on a
//! supplementary sheet, one power of attorney (the same owner each time,
//! and a new owner each time), one tax registration summary (the GmbH example, two pages) and
//! one sample trade licence (sandbox, one page).
//!
//! ```sh
//! cargo bench -p forms --bench render
//! ```

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "../examples/contexts/mod.rs"]
mod contexts;
use forms::{TaxSummaryContext, TradeLicenceContext, TradeRegistration};

fn example(name: &str) -> TradeRegistration {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/production")
        .join(format!("{name}.json"));
    let json = std::fs::read_to_string(path).expect("example file");
    serde_json::from_str(&json).expect("example parses")
}

/// The tax registration example request, read into the model (the request's payroll fields are
/// flat, the model's are a block; the business address is not part of the model).
fn tax_example() -> domain::tax::TaxRegistration {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/tax-registration-gmbh.json");
    let json = std::fs::read_to_string(path).expect("example file");
    let mut v: serde_json::Value = serde_json::from_str(&json).expect("example parses");
    let o = v.as_object_mut().expect("object");
    o.remove("business_address");
    let payroll = serde_json::json!({
        "employee_count": o.remove("employee_count"),
        "shareholder_employee_count": o.remove("shareholder_employee_count"),
        "payroll_start_date": o.remove("payroll_start_date"),
        "estimated_annual_wage_tax": o.remove("estimated_annual_wage_tax"),
    });
    o.insert("payroll".into(), payroll);
    o["vat"]["small_business"] = serde_json::Value::Bool(false);
    o["commercial_register"]["registration_number"] = "245789B".into();
    serde_json::from_value(v).expect("example fits the model")
}

/// Owner names for `gewa1_varied`, each with letters the others lack.
const NAMES: [(&str, &str); 8] = [
    ("Ömer", "Yılmaz"),
    ("Zoë", "Kowalczyk"),
    ("Jürgen", "Quast"),
    ("Łucja", "Wróbel"),
    ("Bjørn", "Håkansson"),
    ("Fatoş", "Çelik"),
    ("Vítězslav", "Dvořák"),
    ("Ægidius", "Þórsson"),
];

fn bench(c: &mut Criterion) {
    let timestamp = time::macros::datetime!(2025-03-20 09:30:00 UTC);
    let own = example("trade-registration-self");
    let assisted = example("trade-registration-assisted");
    let gewa1_ctx = contexts::gewa1(timestamp);
    let poa_ctx = contexts::power_of_attorney(timestamp);
    let tax = tax_example();
    let tax_ctx = TaxSummaryContext {
        not_in_xml: Vec::new(),
        tax_office: Some((
            "1129".into(),
            "Finanzamt für Körperschaften I Berlin".into(),
        )),
        created_on: timestamp.date(),
        timestamp,
    };
    print_size(
        "gewa1",
        &forms::render_gewa1(&own, 0, &gewa1_ctx).expect("renders"),
    );
    c.bench_function("gewa1", |b| {
        b.iter(|| forms::render_gewa1(&own, 0, &gewa1_ctx).expect("renders"))
    });
    // The same form for owners with different names, in turn: every document needs a different
    // set of value glyphs, as in production, so nothing can be reused from the previous render.
    let varied: Vec<TradeRegistration> = NAMES
        .iter()
        .map(|(first, last)| {
            let mut reg = own.clone();
            reg.owners[0].first_name = (*first).into();
            reg.owners[0].last_name = (*last).into();
            reg
        })
        .collect();
    let mut turn = 0usize;
    c.bench_function("gewa1_varied", |b| {
        b.iter(|| {
            turn = (turn + 1) % varied.len();
            forms::render_gewa1(&varied[turn], 0, &gewa1_ctx).expect("renders")
        })
    });
    // A GmbH with two managing directors: one GewA 1 for the company, the second director on
    // its supplementary sheet (two documents until 2026-11-30: twice `gewa1`).
    let mut two = own.clone();
    let mut second = two.owners[0].clone();
    second.first_name = "Jan".into();
    second.last_name = "Łukasiewicz".into();
    two.owners.push(second);
    print_size(
        "gewa1_two_directors",
        &forms::render_gewa1(&two, 0, &gewa1_ctx).expect("renders"),
    );
    c.bench_function("gewa1_two_directors", |b| {
        b.iter(|| forms::render_gewa1(&two, 0, &gewa1_ctx).expect("renders"))
    });
    let poa = forms::render_power_of_attorney(&assisted, 1, &poa_ctx).expect("renders");
    print_size("power_of_attorney", &poa);
    c.bench_function("power_of_attorney", |b| {
        b.iter(|| forms::render_power_of_attorney(&assisted, 1, &poa_ctx).expect("renders"))
    });
    // Every document for an owner never seen before (a counter in the name), as under load:
    // the paragraphs holding the name and address cannot come from the run cache whole.
    let mut fresh = assisted.clone();
    let mut count = 0u64;
    c.bench_function("power_of_attorney_new_names", |b| {
        b.iter(|| {
            count += 1;
            let (first, last) = NAMES[(count % NAMES.len() as u64) as usize];
            fresh.owners[1].first_name = format!("{first}{count}");
            fresh.owners[1].last_name = (*last).into();
            forms::render_power_of_attorney(&fresh, 1, &poa_ctx).expect("renders")
        })
    });
    print_size(
        "tax_summary",
        &forms::render_tax_summary(&tax, &tax_ctx).expect("renders"),
    );
    c.bench_function("tax_summary", |b| {
        b.iter(|| forms::render_tax_summary(&tax, &tax_ctx).expect("renders"))
    });
    let licence_ctx = TradeLicenceContext {
        trade_office_name: "Gewerbeamt Musterstadt (Sandbox)".into(),
        trade_office_address: Some("Musterplatz 1, 12345 Musterstadt".into()),
        municipality_key: Some("11000000".into()),
        reference: "SANDBOX-0196A1B2".into(),
        received_on: Some(timestamp.date()),
        issued_on: timestamp.date(),
        fee_cents: Some(2600),
        fee_paid: true,
        timestamp,
    };
    let licence = forms::render_trade_licence(&assisted, &licence_ctx).expect("renders");
    print_size("trade_licence", &licence);
    c.bench_function("trade_licence", |b| {
        b.iter(|| forms::render_trade_licence(&assisted, &licence_ctx).expect("renders"))
    });
}

/// Prints the size of the document a benchmark renders (the "output size" of BENCHMARKS.md).
fn print_size(name: &str, pdf: &[u8]) {
    println!("{name}: one document is {} bytes", pdf.len());
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! Writing and validating the ElsterXML of the test fixtures.
//!
//! `cargo bench -p elster --bench xml`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "../tests/fixtures/mod.rs"]
mod fixtures;

fn bench(c: &mut Criterion) {
    let ctx = fixtures::ctx(true);
    for (name, reg) in [
        ("gmbh", fixtures::gmbh()),
        ("ug", fixtures::ug()),
        ("gmbh-99", fixtures::gmbh_99()),
    ] {
        let xml = elster::write(&reg, &ctx).unwrap();
        elster::validate(&xml).unwrap();
        c.bench_function(&format!("write/{name}"), |b| {
            b.iter(|| elster::write(black_box(&reg), black_box(&ctx)).unwrap())
        });
        c.bench_function(&format!("validate/{name}"), |b| {
            b.iter(|| elster::validate(black_box(&xml)).unwrap())
        });
    }
    // The sole proprietor's FsE_EUn, from the example requests through the API's parser.
    for (name, json) in [
        (
            "eun-freelancer",
            include_str!("../../../examples/tax-registration-sole-proprietor.json"),
        ),
        (
            "eun-trader",
            include_str!("../../../examples/production/tax-registration-sole-proprietor.json"),
        ),
    ] {
        let request: serde_json::Value = serde_json::from_str(json).unwrap();
        let reg = domain::sole_proprietor_request::parse(
            &request,
            time::macros::date!(2026 - 01 - 10),
            &domain::offices::is_known_tax_office,
        )
        .unwrap()
        .registration;
        let xml = elster::write_eun(&reg, &ctx).unwrap();
        elster::validate(&xml).unwrap();
        c.bench_function(&format!("write/{name}"), |b| {
            b.iter(|| elster::write_eun(black_box(&reg), black_box(&ctx)).unwrap())
        });
        c.bench_function(&format!("validate/{name}"), |b| {
            b.iter(|| elster::validate(black_box(&xml)).unwrap())
        });
    }
    // The first validation in a thread compiles both schemas.
    c.bench_function("compile-schemas+validate/gmbh", |b| {
        let xml = elster::write(&fixtures::gmbh(), &ctx).unwrap();
        b.iter(|| {
            let xml = xml.clone();
            std::thread::spawn(move || elster::validate(&xml).unwrap())
                .join()
                .unwrap()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

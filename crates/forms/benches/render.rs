//! Rendering benchmarks: one GewA 1 (two pages) and one power of attorney.
//!
//! ```sh
//! CARGO_TARGET_DIR=/root/.cache/forms-target cargo bench -p forms --bench render
//! ```

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use forms::{Gewa1Context, Operator, PowerOfAttorneyContext, TradeRegistration};

fn example(name: &str) -> TradeRegistration {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(format!("{name}.json"));
    let json = std::fs::read_to_string(path).expect("example file");
    serde_json::from_str(&json).expect("example parses")
}

fn bench(c: &mut Criterion) {
    let timestamp = time::macros::datetime!(2025-03-20 09:30:00 UTC);
    let own = example("trade-registration-self");
    let assisted = example("trade-registration-assisted");
    let gewa1_ctx = Gewa1Context {
        trade_office_name: Some("Bezirksamt Mitte von Berlin, Gewerbeamt".into()),
        municipality_key: Some("11000000".into()),
        created_on: timestamp.date(),
        timestamp,
    };
    let poa_ctx = PowerOfAttorneyContext {
        operator: Operator {
            name: "Muster Filing Services GmbH".into(),
            address: "Beispielweg 5, 10117 Berlin".into(),
        },
        place: None,
        created_on: timestamp.date(),
        timestamp,
    };
    c.bench_function("gewa1", |b| {
        b.iter(|| forms::render_gewa1(&own, 0, &gewa1_ctx).expect("renders"))
    });
    c.bench_function("power_of_attorney", |b| {
        b.iter(|| forms::render_power_of_attorney(&assisted, 1, &poa_ctx).expect("renders"))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

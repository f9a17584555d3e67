//! Reference data on the command line: importing the trade office directory from CSV, and
//! describing the bundled data sets (`filing data`).

use std::path::Path;

use anyhow::{Context, anyhow};
use serde_json::{Value, json};
use store::TradeOfficeEntry;

use crate::routes::offices::TradeOfficeInput;

const COLUMNS: [&str; 6] = ["key", "name", "address", "email", "phone", "website"];

/// Reads and validates every row; any invalid row fails the whole import (naming the line and
/// field), so a file is imported completely or not at all.
pub fn read_csv(path: &Path) -> anyhow::Result<Vec<TradeOfficeEntry>> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_path(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let headers: Vec<String> = reader
        .headers()
        .context("the CSV file has no header row")?
        .iter()
        .map(str::to_lowercase)
        .collect();
    if headers != COLUMNS {
        return Err(anyhow!(
            "the header must be exactly `{}`, found `{}`",
            COLUMNS.join(","),
            headers.join(",")
        ));
    }
    let mut entries = Vec::new();
    let mut problems = Vec::new();
    for (i, row) in reader.records().enumerate() {
        let line = i + 2;
        let row = row.with_context(|| format!("line {line} is not valid CSV"))?;
        let cell = |n: usize| {
            let v = row.get(n).unwrap_or("").to_string();
            (!v.is_empty()).then_some(v)
        };
        let key = cell(0).unwrap_or_default();
        let input = TradeOfficeInput {
            name: cell(1).unwrap_or_default(),
            address: cell(2),
            email: cell(3),
            phone: cell(4),
            website: cell(5),
        };
        match input.into_entry(&key, "") {
            Ok(e) => entries.push(e),
            Err(v) => problems.push(format!("line {line}: {v}")),
        }
    }
    if !problems.is_empty() {
        return Err(anyhow!(
            "nothing imported; fix these rows:\n{}",
            problems.join("\n")
        ));
    }
    Ok(entries)
}

/// What `filing data` prints: each bundled data set, its edition, licence, and how to refresh it.
pub fn data_sources() -> Value {
    let stats = domain::offices::index_stats();
    json!({
        "data_sets": [
            {
                "name": "postal code -> municipality",
                "file": "crates/domain/data/offices/ (from plz-municipality.csv)",
                "source": "OpenStreetMap via suche-postleitzahl.org",
                "licence": "ODbL 1.0, © OpenStreetMap contributors (see NOTICE)",
                "rows": stats.postcode_rows,
                "postal_codes": stats.postal_codes,
            },
            {
                "name": "municipality register (AGS, Gemeindeverband, Finanzamtsbezirk)",
                "file": "crates/domain/data/offices/ (from GV100AD)",
                "source": "Statistisches Bundesamt (Destatis), GV100AD",
                "licence": "© Statistisches Bundesamt (Destatis), reproduction with source",
                "municipalities": stats.municipalities,
                "verbaende": stats.verbaende,
            },
            {
                "name": "tax office directory",
                "file": "crates/domain/data/offices/ (from finanzaemter.json)",
                "source": "BZSt GemFA export via kontist/finanzamt",
                "licence": "MIT",
                "offices": stats.tax_offices,
            },
        ],
        "editions": include_str!("../../domain/data/offices/SOURCES.txt").lines().collect::<Vec<_>>(),
        "refresh": "python3 crates/domain/tools/offices/refresh.py --gv100 GV100AD_<date>.txt --plz plz-municipality.csv --offices finanzaemter.json --out crates/domain/data/offices && cargo test -p domain offices; see docs/offices.md",
        "index_heap_bytes": stats.heap_bytes,
    })
}

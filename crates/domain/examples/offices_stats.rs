//! Figures of `domain::offices`: index build time and heap, unique-resolution shares.
//!
//! `cargo run -p domain --example offices_stats --release` prints the figures quoted in
//! docs/offices.md. With arguments `ZIP CITY` it prints the lookups for one address instead;
//! with `berlin`, the figures of the district resolver over every address of Berlin's register
//! (BENCHMARKS.md, "Offices at district level").

use std::time::Instant;

use domain::offices::{self, Resolution, TaxOfficeLookup, TradeOfficeLookup};

/// Resident set size in KiB from /proc (Linux); the workspace forbids unsafe code, so no counting
/// allocator: RSS growth is the outside measurement, the structural estimate the inside one.
fn rss_kib() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("berlin") {
        berlin();
        return;
    }
    if args.first().map(String::as_str) == Some("forms") {
        by_legal_form();
        return;
    }
    if args.len() >= 2 {
        let (zip, city) = (&args[0], args[1..].join(" "));
        println!("{:#?}", offices::municipalities_for(zip, &city));
        println!("{:#?}", offices::trade_office_for(zip, &city));
        println!("{:#?}", offices::tax_office_for(zip, &city));
        return;
    }
    let rss_before = rss_kib();
    let start = Instant::now();
    let stats = offices::index_stats();
    let elapsed = start.elapsed();
    let rss_after = rss_kib();
    println!(
        "index build (first use, with the names index of the address checks): {:.1} ms",
        elapsed.as_secs_f64() * 1000.0
    );
    println!(
        "heap of the indexes (estimated from the structures): {:.2} MiB, names index {:.2} MiB",
        mib(stats.heap_bytes),
        mib(stats.names_heap_bytes)
    );
    if let (Some(a), Some(b)) = (rss_before, rss_after) {
        println!(
            "resident set growth during the build (indexes, build temporaries, data pages touched): {:.2} MiB",
            (b.saturating_sub(a)) as f64 / 1024.0
        );
    }
    println!(
        "data: {} municipalities ({} Verbände), {} postal codes, {} postal code rows, {} tax offices",
        stats.municipalities,
        stats.verbaende,
        stats.postal_codes,
        stats.postcode_rows,
        stats.tax_offices
    );

    let codes: Vec<String> = offices::postal_codes().collect();
    let n = codes.len() as f64;
    let share = |count: usize| {
        format!(
            "{count} of {} ({:.1} %)",
            codes.len(),
            count as f64 * 100.0 / n
        )
    };

    // Postal code alone (no city given).
    let start = Instant::now();
    let unique_municipality = codes
        .iter()
        .filter(|z| {
            matches!(
                offices::municipalities_for(z, ""),
                Resolution::Unique { .. }
            )
        })
        .count();
    let unique_trade = codes
        .iter()
        .filter(|z| match offices::trade_office_for(z, "") {
            TradeOfficeLookup::Found { .. } => true,
            TradeOfficeLookup::Ambiguous { candidates }
            | TradeOfficeLookup::DistrictNotDetermined { candidates, .. } => {
                candidates.iter().all(|c| c.key == candidates[0].key)
            }
            TradeOfficeLookup::NotFound => false,
        })
        .count();
    let tax_determined = codes
        .iter()
        .filter(|z| {
            matches!(
                offices::tax_office_for(z, ""),
                TaxOfficeLookup::Determined { .. }
            )
        })
        .count();
    let per_lookup = start.elapsed().as_secs_f64() * 1e6 / (3.0 * n);
    println!("postal code only:");
    println!("  exactly one municipality: {}", share(unique_municipality));
    println!("  exactly one trade office: {}", share(unique_trade));
    println!(
        "  tax office determined (no confirmation): {}",
        share(tax_determined)
    );

    // Postal code and the right city name: every (postal code, municipality) pair, named as
    // OpenStreetMap names it. A postal code counts when every one of its municipalities resolves.
    let mut pairs = 0;
    let mut pairs_resolved = 0;
    let mut codes_resolved = 0;
    let mut tax_codes = 0;
    for z in &codes {
        let candidates = offices::municipalities_for(z, "").candidates();
        let mut all = true;
        let mut all_tax = true;
        for m in &candidates {
            pairs += 1;
            let ok = offices::municipalities_for(z, m.name).municipality() == Some(*m);
            pairs_resolved += usize::from(ok);
            all &= ok;
            all_tax &= !offices::tax_office_for(z, m.name).needs_confirmation();
        }
        codes_resolved += usize::from(all);
        tax_codes += usize::from(all_tax);
    }
    let mut reasons = std::collections::BTreeMap::<String, usize>::new();
    for z in &codes {
        if let TaxOfficeLookup::NeedsConfirmation { reasons: rs, .. } =
            offices::tax_office_for(z, "")
        {
            for r in rs {
                let json = serde_json::to_value(&r).unwrap_or_default();
                let kind = json["reason"].as_str().unwrap_or("?").to_owned();
                *reasons.entry(kind).or_default() += 1;
            }
        }
    }
    println!("  confirmation reasons (postal codes; one code may have several):");
    for (kind, count) in &reasons {
        println!("    {kind}: {count}");
    }
    println!("postal code and the municipality's register name as city:");
    println!(
        "  (postal code, municipality) pairs resolved: {pairs_resolved} of {pairs} ({:.1} %)",
        pairs_resolved as f64 * 100.0 / pairs as f64
    );
    println!(
        "  postal codes whose every municipality resolves: {}",
        share(codes_resolved)
    );
    println!(
        "  postal codes whose every municipality has a determined tax office: {}",
        share(tax_codes)
    );
    println!("mean lookup time: {per_lookup:.1} µs");
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Berlin's addresses (the register the resolver is derived from, in the repository): how many
/// get their trade office and a corporation's tax office without confirmation, how long a
/// lookup takes, and what the index costs.
fn berlin() {
    use std::io::Read;
    let rss_before = rss_kib();
    let start = Instant::now();
    let streets = offices::district::warm_up();
    let build = start.elapsed();
    let rss_after = rss_kib();
    println!(
        "Berlin index: {streets} streets by postal code, built in {:.1} ms on first use",
        build.as_secs_f64() * 1000.0
    );
    if let (Some(a), Some(b)) = (rss_before, rss_after) {
        println!(
            "  resident set growth during the build: {:.2} MiB",
            b.saturating_sub(a) as f64 / 1024.0
        );
    }
    let gz = include_bytes!("../data/offices/berlin/adressen-2023-06.csv.gz");
    let mut csv = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut csv)
        .expect("gzip");
    let addresses: Vec<(String, String)> = csv
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            (!f[0].is_empty()).then(|| (f[3].to_owned(), format!("{} {}{}", f[2], f[0], f[1])))
        })
        .collect();
    let n = addresses.len();
    let pct = |k: usize| format!("{k} of {n} ({:.3} %)", k as f64 * 100.0 / n as f64);
    // Spelled as people do: "Str." for "Straße".
    let abbreviated: Vec<(String, String)> = addresses
        .iter()
        .map(|(z, s)| {
            (
                z.clone(),
                s.replace("straße", "str.").replace("Straße", "Str."),
            )
        })
        .collect();
    for (label, list) in [
        ("as in the register", &addresses),
        ("with Str. for Straße", &abbreviated),
    ] {
        let start = Instant::now();
        let trade = list
            .iter()
            .filter(|(z, s)| {
                matches!(
                    offices::trade_office_at(z, "Berlin", s),
                    TradeOfficeLookup::Found { .. }
                )
            })
            .count();
        let trade_time = start.elapsed();
        let start = Instant::now();
        let corporations = list
            .iter()
            .filter(|(z, s)| {
                matches!(
                    offices::tax_office_at(&offices::TaxOfficeQuery {
                        address: offices::OfficeAddress {
                            zip: z,
                            city: "Berlin",
                            street: Some(s),
                        },
                        family: offices::LegalFamily::Corporation,
                        group: false,
                    }),
                    TaxOfficeLookup::Determined { .. }
                )
            })
            .count();
        let tax_time = start.elapsed();
        let start = Instant::now();
        let located = list
            .iter()
            .filter(|(z, s)| {
                offices::district::locate(offices::district::BERLIN, z, s)
                    .and_then(|l| l.locality())
                    .is_some()
            })
            .count();
        let locate_time = start.elapsed();
        println!("Berlin addresses, {label}:");
        println!("  located in their Bezirk and Ortsteil: {}", pct(located));
        println!("  trade office determined: {}", pct(trade));
        println!("  corporation tax office determined: {}", pct(corporations));
        println!(
            "  mean time per lookup: locate {:.2} µs, trade office {:.2} µs, tax office {:.2} µs",
            locate_time.as_secs_f64() * 1e6 / n as f64,
            trade_time.as_secs_f64() * 1e6 / n as f64,
            tax_time.as_secs_f64() * 1e6 / n as f64
        );
    }
}

/// The lookup the creates make, per legal form: `tax_office_at` for every postal code (city
/// empty) as a corporation and as a partnership, and for the addresses of the research
/// (shared reference `rules-2026-12.md`: imprints with tax numbers), with the office the
/// evidence shows. BENCHMARKS.md, "Offices by legal form".
fn by_legal_form() {
    use offices::LegalFamily::{Corporation, Partnership};
    offices::index_stats();
    let codes: Vec<String> = offices::postal_codes().collect();
    let n = codes.len();
    for (label, family) in [("corporation", Corporation), ("partnership", Partnership)] {
        let start = Instant::now();
        let mut determined = 0;
        for _ in 0..5 {
            determined = codes
                .iter()
                .filter(|z| {
                    matches!(
                        offices::tax_office_at(&offices::TaxOfficeQuery {
                            address: offices::OfficeAddress {
                                zip: z,
                                city: "",
                                street: None,
                            },
                            family,
                            group: false,
                        }),
                        TaxOfficeLookup::Determined { .. }
                    )
                })
                .count();
        }
        let per = start.elapsed().as_secs_f64() * 1e6 / (5 * n) as f64;
        println!(
            "{label}: postal codes with a determined office: {determined} of {n} ({:.1} %); mean tax_office_at {per:.2} µs",
            determined as f64 * 100.0 / n as f64
        );
    }
    // (zip, city, street, family, the office the evidence shows)
    let samples: &[(&str, &str, &str, offices::LegalFamily, &str)] = &[
        ("04229", "Leipzig", "Klingenstraße 22", Partnership, "3232"),
        (
            "01307",
            "Dresden",
            "Blasewitzer Str. 41",
            Corporation,
            "3203",
        ),
        ("81243", "München", "Leienfelsstr. 21b", Partnership, "9143"),
        ("82152", "Planegg", "", Corporation, "9143"),
        ("85716", "Unterschleißheim", "", Corporation, "9143"),
        (
            "60327",
            "Frankfurt am Main",
            "Heinrichstraße 9",
            Corporation,
            "2614",
        ),
        ("60325", "Frankfurt am Main", "", Corporation, "2614"),
        ("60486", "Frankfurt am Main", "", Corporation, "2614"),
        ("10961", "Berlin", "Blücherstraße 22", Corporation, "1129"),
        ("50733", "Köln", "Wartburgstr. 12", Corporation, "5217"),
        ("40595", "Düsseldorf", "", Corporation, "5106"),
        (
            "40239",
            "Düsseldorf",
            "Mülheimer Str. 7",
            Corporation,
            "5103",
        ),
        ("30159", "Hannover", "Prinzenstr. 3", Partnership, "2325"),
        ("22763", "Hamburg", "", Corporation, "2242"),
    ];
    let mut determined = [0, 0];
    let mut agree = [0, 0];
    let mut total = [0, 0];
    for (zip, city, street, family, evidence) in samples {
        let i = usize::from(*family == Partnership);
        total[i] += 1;
        let lookup = offices::tax_office_at(&offices::TaxOfficeQuery {
            address: offices::OfficeAddress {
                zip,
                city,
                street: (!street.is_empty()).then_some(*street),
            },
            family: *family,
            group: false,
        });
        let got = lookup.office().map(|o| o.number);
        if let Some(number) = got {
            determined[i] += 1;
            agree[i] += usize::from(number == *evidence);
        }
        println!(
            "  {zip} {city} {street} ({family:?}): {} (evidence {evidence})",
            got.unwrap_or("needs confirmation")
        );
    }
    for (i, label) in ["corporation", "partnership"].iter().enumerate() {
        println!(
            "research sample addresses, {label}: determined {} of {}, of them as the evidence shows {}",
            determined[i], total[i], agree[i]
        );
    }
}

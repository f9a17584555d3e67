//! `filing-load`: the HTTP load benchmark of BENCHMARKS.md.
//!
//! Starts the release `filing` server on a fresh data directory (SQLite, or a fresh PostgreSQL
//! database), creates a provider key with the CLI, seeds cases (optionally a million copies with
//! `filing seed-trade-copies`), then runs each scenario at each connection count for a fixed time
//! and prints one table row per run: requests per second, p50/p99/max latency, errors, and the
//! server's resident set size.

mod bodies;
mod run;
mod server;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use bytes::Bytes;
use clap::{Parser, ValueEnum};
use hyper::Method;
use run::{Call, Measured};
use serde_json::{Value, json};
use sqlx::Connection;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Backend {
    Sqlite,
    Postgres,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Scenario {
    /// `GET /healthz`: the ceiling of the machine (one `SELECT 1`, no key).
    Healthz,
    /// `GET /v1/trade-registration/{id}`.
    TradeGet,
    /// `GET` of a GewA 1 download link (signed URL, 43 KB PDF from disk; 147 KB before 2026-11-24).
    Download,
    /// `POST /v1/trade-registration`, package self, one owner, generated GewA 1.
    TradeSelf,
    /// `POST /v1/trade-registration`, package assisted, three owners, multipart with one
    /// uploaded 1 MB PDF (two GewA 1 and three powers of attorney generated).
    TradeAssisted,
    /// `POST /v1/tax-registration`, GmbH with three directors and five shareholders.
    TaxGmbh,
    /// `GET /v1/trade-registration`: the newest 20 of the provider's cases.
    TradeList,
    /// `GET /v1/trade-registration?cursor=...`: 20 cases from the middle of the seeded ones.
    TradeListDeep,
    /// The deep page again, filtered by status and environment (which every seeded case has).
    TradeListDeepFiltered,
    /// `GET /v1/trade-registration?status=submitted`: the one assisted case among the seeded
    /// ones (a filter that matches almost nothing).
    TradeListRare,
    /// `POST /v1/trade-registration`, package self, multipart with the owner's signed GewA 1
    /// uploaded as a 50 MB PDF: the server's memory under big uploads (not in the default set).
    TradeUpload,
}

#[derive(Debug, Parser)]
#[command(
    name = "filing-load",
    about = "HTTP load benchmark of the filing server"
)]
struct Args {
    /// Databases to measure, in this order.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "sqlite,postgres"
    )]
    backend: Vec<Backend>,
    /// PostgreSQL server to create a fresh database on (dropped afterwards).
    #[arg(
        long,
        env = "TEST_DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    database_url: String,
    /// The server binary; by default `filing` next to this one (`cargo build --release`).
    #[arg(long)]
    server: Option<PathBuf>,
    /// Seconds per run.
    #[arg(long, default_value_t = 20)]
    duration: u64,
    /// Connection counts, each a run of every scenario.
    #[arg(long, value_delimiter = ',', default_value = "1,8,32")]
    connections: Vec<usize>,
    /// Scenarios, in this order.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "healthz,trade-get,download,trade-self,trade-assisted,tax-gmbh"
    )]
    scenarios: Vec<Scenario>,
    /// Copies of a trade registration inserted before the runs (with `filing seed-trade-copies`).
    #[arg(long, default_value_t = 0)]
    seed_cases: u64,
    /// Write the figures as JSON lines to this file as well.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Keep the data directory (and PostgreSQL database) instead of deleting it.
    #[arg(long)]
    keep: bool,
}

// One thread: the tool shares the two cores with the server and PostgreSQL, and a second worker
// only added wake-ups between its threads (a single-threaded tool measured more of the
// same server: BENCHMARKS.md, "Targets"). One thread keeps up with 32 connections: it is mostly waiting.
#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let binary = match &args.server {
        Some(p) => p.clone(),
        None => std::env::current_exe()?
            .parent()
            .context("no folder of the executable")?
            .join("filing"),
    };
    if !binary.exists() {
        bail!(
            "no server binary at {} (build it: cargo build --release -p server -p load)",
            binary.display()
        );
    }
    println!(
        "| backend | cases in db | scenario | connections | requests/s | p50 ms | p99 ms | max ms | errors | server RSS max MiB |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &backend in &args.backend {
        bench_backend(&args, &binary, backend).await?;
    }
    Ok(())
}

async fn bench_backend(
    args: &Args,
    binary: &std::path::Path,
    backend: Backend,
) -> anyhow::Result<()> {
    let data_dir =
        std::env::temp_dir().join(format!("filing-load-{}", uuid::Uuid::now_v7().simple()));
    std::fs::create_dir_all(&data_dir)?;
    let (database_url, pg_db) = match backend {
        Backend::Sqlite => (format!("sqlite://{}/filing.db", data_dir.display()), None),
        Backend::Postgres => {
            let name = format!("filing_load_{}", uuid::Uuid::now_v7().simple());
            let mut conn = sqlx::PgConnection::connect(&args.database_url).await?;
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut conn)
                .await?;
            let mut url = url_without_path(&args.database_url);
            url.push('/');
            url.push_str(&name);
            (url, Some(name))
        }
    };
    let setup = server::Setup {
        binary: binary.to_path_buf(),
        data_dir: data_dir.clone(),
        database_url,
        addr: free_addr()?,
    };
    let result = bench_setup(args, &setup, backend).await;
    if !args.keep {
        let _ = std::fs::remove_dir_all(&data_dir);
        if let Some(name) = pg_db {
            let mut conn = sqlx::PgConnection::connect(&args.database_url).await?;
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
            )))
            .execute(&mut conn)
            .await?;
        }
    } else {
        eprintln!("kept {} ({})", data_dir.display(), setup.database_url);
    }
    result
}

async fn bench_setup(args: &Args, setup: &server::Setup, backend: Backend) -> anyhow::Result<()> {
    setup.cli(&["migrate", "--init"])?;
    let provider = setup.cli(&["providers", "create", "--name", "Load Test GmbH"])?;
    let key = provider["api_key"]
        .as_str()
        .context("providers create printed no api_key")?
        .to_string();
    let mut srv = setup.start().await?;
    let addr = setup.addr;

    let trade_self = bodies::trade_self();
    let pdf = bodies::pdf_of_size(1 << 20);
    let assisted = bodies::trade_assisted_multipart(&pdf);
    let tax = bodies::tax_gmbh();
    let post = |path: &str, ct: &str, body: &bodies::Body| Call {
        method: Method::POST,
        path: path.into(),
        content_type: Some(ct.into()),
        body: body.clone(),
        bearer: Some(key.clone()),
        expect: 201,
    };
    let create_self = post("/v1/trade-registration", "application/json", &trade_self);
    let create_assisted = post(
        "/v1/trade-registration",
        &format!("multipart/form-data; boundary={}", bodies::BOUNDARY),
        &assisted,
    );
    let create_tax = post("/v1/tax-registration", "application/json", &tax);
    // Built only when asked for: 50 MB.
    let create_upload = args.scenarios.contains(&Scenario::TradeUpload).then(|| {
        let big = bodies::trade_self_upload_multipart(&bodies::pdf_of_size(50_000_000));
        post(
            "/v1/trade-registration",
            &format!("multipart/form-data; boundary={}", bodies::BOUNDARY),
            &big,
        )
    });

    // The case that GET and download read, and a check that every create body is accepted.
    let template = checked(addr, &create_self).await?;
    checked(addr, &create_assisted).await?;
    checked(addr, &create_tax).await?;
    let case_id = template["trade_registration_id"]
        .as_str()
        .context("no trade_registration_id")?
        .to_string();
    let link = template["owners"][0]["documents"]["gewa_1"]["download_url"]
        .as_str()
        .context("no GewA 1 download_url")?;
    let download_path = link
        .find("/v1/")
        .map(|i| link[i..].to_string())
        .context("download_url without /v1/")?;

    let mut cases = 3u64;
    // Where the deep list pages start: the middle of the seeding, as a list cursor (the
    // base64url of a case key, docs/api/lists.md; the benchmark knows the format, clients
    // only pass `next_cursor` back). Without seeding, the newest case.
    let mut middle = uuid::Uuid::now_v7();
    if args.seed_cases > 0 {
        srv.stop()?;
        let seeding = std::time::SystemTime::now();
        let seeded = setup.cli(&[
            "seed-trade-copies",
            "--from",
            &case_id,
            "--count",
            &args.seed_cases.to_string(),
        ])?;
        eprintln!("seeded: {seeded}");
        let took = seeding.elapsed()?;
        let at = seeding + took / 2;
        let since = at.duration_since(std::time::UNIX_EPOCH)?;
        middle = uuid::Uuid::new_v7(uuid::Timestamp::from_unix(
            uuid::NoContext,
            since.as_secs(),
            since.subsec_nanos(),
        ));
        cases += args.seed_cases;
        if backend == Backend::Postgres {
            // A million fresh rows set off autovacuum, which would otherwise run during the first
            // measurements; a database that has held them for a while has long been vacuumed.
            let started = std::time::Instant::now();
            let mut conn = sqlx::PgConnection::connect(&setup.database_url).await?;
            sqlx::raw_sql("VACUUM (ANALYZE)").execute(&mut conn).await?;
            eprintln!(
                "vacuumed and analyzed in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
        srv = setup.start().await?;
    }

    let get = |path: String, bearer: Option<String>| Call {
        method: Method::GET,
        path,
        content_type: None,
        body: bodies::Body::Same(Bytes::new()),
        bearer,
        expect: 200,
    };
    let backend_name = match backend {
        Backend::Sqlite => "SQLite",
        Backend::Postgres => "PostgreSQL",
    };
    for &scenario in &args.scenarios {
        let call = match scenario {
            Scenario::Healthz => get("/healthz".into(), None),
            Scenario::TradeGet => get(
                format!("/v1/trade-registration/{case_id}"),
                Some(key.clone()),
            ),
            Scenario::Download => get(download_path.clone(), None),
            Scenario::TradeSelf => create_self.clone(),
            Scenario::TradeAssisted => create_assisted.clone(),
            Scenario::TaxGmbh => create_tax.clone(),
            Scenario::TradeUpload => create_upload.clone().context("upload body")?,
            Scenario::TradeList => get("/v1/trade-registration".into(), Some(key.clone())),
            Scenario::TradeListDeep => get(
                format!("/v1/trade-registration?cursor={}", list_cursor(middle)),
                Some(key.clone()),
            ),
            Scenario::TradeListDeepFiltered => get(
                format!(
                    "/v1/trade-registration?status=form-rendered&environment=production&cursor={}",
                    list_cursor(middle)
                ),
                Some(key.clone()),
            ),
            Scenario::TradeListRare => get(
                "/v1/trade-registration?status=submitted".into(),
                Some(key.clone()),
            ),
        };
        for &connections in &args.connections {
            let (m, rss_max) = measured_run(&srv, addr, call.clone(), connections, args).await?;
            if matches!(
                scenario,
                Scenario::TradeSelf
                    | Scenario::TradeAssisted
                    | Scenario::TaxGmbh
                    | Scenario::TradeUpload
            ) {
                cases += m.ok;
            }
            let name = format!("{scenario:?}");
            println!(
                "| {backend_name} | {cases} | {name} | {connections} | {:.0} | {:.2} | {:.2} | {:.1} | {} | {:.0} |",
                m.rps(),
                m.p50_ms,
                m.p99_ms,
                m.max_ms,
                m.errors,
                rss_max
            );
            if let Some(e) = &m.first_error {
                eprintln!("  first error: {e}");
            }
            if let Some(path) = &args.json {
                use std::io::Write;
                let line = json!({
                    "backend": backend_name, "cases": cases, "scenario": name,
                    "connections": connections, "requests": m.requests, "seconds": m.seconds,
                    "rps": m.rps(), "p50_ms": m.p50_ms, "p99_ms": m.p99_ms, "max_ms": m.max_ms,
                    "errors": m.errors, "rss_max_mib": rss_max,
                });
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?;
                writeln!(f, "{line}")?;
            }
        }
    }
    if let Some((_, hwm)) = server::rss_mib(srv.pid()) {
        eprintln!("{backend_name}: server peak RSS over the whole run (VmHWM): {hwm:.0} MiB");
    }
    srv.stop()?;
    Ok(())
}

/// One run, with the server's RSS sampled every 50 ms; returns the largest sample.
async fn measured_run(
    srv: &server::Server,
    addr: SocketAddr,
    call: Call,
    connections: usize,
    args: &Args,
) -> anyhow::Result<(Measured, f64)> {
    let pid = srv.pid();
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        tokio::spawn(async move {
            let mut max = 0.0f64;
            while !done.load(Ordering::Relaxed) {
                if let Some((rss, _)) = server::rss_mib(pid) {
                    max = max.max(rss);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            max
        })
    };
    let m = run::run(addr, call, connections, Duration::from_secs(args.duration)).await?;
    done.store(true, Ordering::Relaxed);
    Ok((m, sampler.await?))
}

/// Sends `call` once and requires its expected status; returns the response's `response`.
async fn checked(addr: SocketAddr, call: &Call) -> anyhow::Result<Value> {
    let (status, body) = run::once(addr, call).await?;
    if status != call.expect {
        bail!(
            "{} {} answered {status}: {}",
            call.method,
            call.path,
            String::from_utf8_lossy(&body)
        );
    }
    let v: Value = serde_json::from_slice(&body)?;
    Ok(v.get("response").cloned().unwrap_or(v))
}

fn free_addr() -> anyhow::Result<SocketAddr> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?)
}

/// A case list cursor at `key`: base64url without padding of its 16 bytes.
fn list_cursor(key: uuid::Uuid) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let n = key.as_u128();
    // 22 characters of 6 bits: the 128 bits and 4 zero bits.
    (0..22)
        .map(|i| {
            let end = 6 * (i + 1);
            let bits = if end <= 128 {
                n >> (128 - end)
            } else {
                n << (end - 128)
            } & 0x3f;
            ALPHABET[bits as usize] as char
        })
        .collect()
}

/// `postgres://user@host:port/db?x` -> `postgres://user@host:port`.
fn url_without_path(url: &str) -> String {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => url[..after_scheme + i].to_string(),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn list_cursors_are_base64url() {
        assert_eq!(
            super::list_cursor(uuid::Uuid::max()),
            "_____________________w"
        );
        let key = uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        // base64url of the bytes 01 23 45 67 89 ab cd ef (twice), without padding.
        assert_eq!(super::list_cursor(key), "ASNFZ4mrze8BI0VniavN7w");
    }
}

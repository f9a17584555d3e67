//! Crash safety: the real `filing` binary under concurrent create load is killed with SIGKILL at
//! random moments, restarted on the same data folder and database, and then
//!
//! - every create that answered 201 is readable (by its provider and by an operator), in the
//!   status it was created with, and every document it lists downloads whole (a PDF from
//!   `%PDF-` to `%%EOF`, an ELSTER XML that parses and validates; an uploaded PDF byte for byte);
//! - nothing half-written is visible: every case the operator lists answer has all its
//!   documents, and belongs to a request the load sent;
//! - a create that got no answer exists completely or not at all, and never twice;
//! - a create retried with its `Idempotency-Key` after the restart replays the stored 201 or
//!   creates the case once; a key still "in use" (claimed by the killed process) belongs to a
//!   create that did not happen.
//!
//! Without settings it is the short run CI does (3 kills per backend, SQLite always, PostgreSQL
//! when `TEST_DATABASE_URL` is set). Longer runs (`scripts/crash-test`):
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `FILING_CRASH_ROUNDS` | `3` | how many times the server is killed |
//! | `FILING_CRASH_KILL_MS` | `50-1500` | the kill comes this many ms (random) after the load starts |
//! | `FILING_CRASH_TASKS` | `4` | concurrent clients (each sends one kind of create) |
//! | `FILING_CRASH_SEED` | random | seed of the kill delays (printed by every run) |
//! | `FILING_CRASH_SETTLE` | `false` | `true`: at the end, wait until claims of killed requests expire and retry them: each must then create its case once |

#[path = "../common/mod.rs"]
mod common;
mod deployment;
mod load;
mod verify;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{Backend, fresh_database};
use deployment::{Deployment, Server};
use futures::StreamExt;
use load::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reqwest::multipart::{Form, Part};
use serde_json::Value;
use tokio::process::{Child, Command};
use uuid::Uuid;
use verify::*;

/// `FILING_REQUEST_TIMEOUT_SECS` of the server in a settling run: a claim of a killed request is
/// taken over after this plus 30 s (docs/api/idempotency.md).
const SETTLE_REQUEST_TIMEOUT_SECS: u64 = 5;

#[derive(Debug, Clone)]
struct Settings {
    rounds: usize,
    kill_after_ms: (u64, u64),
    tasks: usize,
    seed: u64,
    settle: bool,
}

fn env_var<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a valid value")),
        _ => default,
    }
}

impl Settings {
    fn from_env() -> Self {
        let kill = std::env::var("FILING_CRASH_KILL_MS").unwrap_or_else(|_| "50-1500".into());
        let kill_after_ms = kill
            .split_once('-')
            .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)))
            .filter(|(a, b)| a <= b)
            .unwrap_or_else(|| {
                panic!("FILING_CRASH_KILL_MS={kill:?}: expected MIN-MAX in milliseconds")
            });
        let random_seed = rand::rng().random::<u64>();
        let settle: String = env_var("FILING_CRASH_SETTLE", "false".to_string());
        Settings {
            rounds: env_var("FILING_CRASH_ROUNDS", 3usize).max(1),
            kill_after_ms,
            tasks: env_var("FILING_CRASH_TASKS", 4usize).max(1),
            seed: env_var("FILING_CRASH_SEED", random_seed),
            settle: matches!(settle.as_str(), "true" | "1" | "yes"),
        }
    }
}

/// The creates of the load; each task sends one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `trade-registration-self.json` as JSON: one rendered GewA 1.
    TradeSelf,
    /// `trade-registration-assisted.json` as multipart, owner 0 with an uploaded signed GewA 1:
    /// two GewA 1 and two powers of attorney.
    TradeUpload,
    /// `tax-registration-gmbh.json`: ELSTER XML and summary PDF.
    TaxGmbh,
    /// `tax-registration-gbr.json` through `/v1/tax-registration/gbr`.
    TaxGbr,
}

impl Kind {
    const ALL: [Kind; 4] = [
        Kind::TradeSelf,
        Kind::TradeUpload,
        Kind::TaxGmbh,
        Kind::TaxGbr,
    ];

    fn create_path(self) -> &'static str {
        match self {
            Kind::TradeSelf | Kind::TradeUpload => "/v1/trade-registration",
            Kind::TaxGmbh => "/v1/tax-registration",
            Kind::TaxGbr => "/v1/tax-registration/gbr",
        }
    }

    fn is_trade(self) -> bool {
        matches!(self, Kind::TradeSelf | Kind::TradeUpload)
    }

    fn read_path(self, id: Uuid) -> String {
        if self.is_trade() {
            format!("/v1/trade-registration/{id}")
        } else {
            format!("/v1/tax-registration/{id}")
        }
    }

    fn id_field(self) -> &'static str {
        if self.is_trade() {
            "trade_registration_id"
        } else {
            "tax_registration_id"
        }
    }

    fn created_status(self) -> &'static str {
        match self {
            Kind::TradeSelf => "form-rendered",
            Kind::TradeUpload => "submitted",
            Kind::TaxGmbh | Kind::TaxGbr => "validated",
        }
    }

    /// The document types a complete case of this kind has, sorted. A tax case whose office
    /// is not determined yet (the GmbH example's seat spans several offices) has no XML until an
    /// operator assigns one.
    fn documents(self, has_tax_office: bool) -> Vec<&'static str> {
        match self {
            Kind::TradeSelf => vec!["trade-licence-application"],
            Kind::TradeUpload => vec![
                "power-of-attorney",
                "power-of-attorney",
                "trade-licence-application",
                "trade-licence-application",
            ],
            Kind::TaxGmbh | Kind::TaxGbr if has_tax_office => {
                vec!["tax-registration-summary", "tax-registration-xml"]
            }
            Kind::TaxGmbh | Kind::TaxGbr => vec!["tax-registration-summary"],
        }
    }
}

async fn run(backend: Backend) {
    server::webhooks::install_tls();
    let settings = Settings::from_env();
    println!(
        "crash test ({backend:?}): seed {} (rerun with FILING_CRASH_SEED={}), {} rounds, kill after {}-{} ms, {} tasks, settle {}",
        settings.seed,
        settings.seed,
        settings.rounds,
        settings.kill_after_ms.0,
        settings.kill_after_ms.1,
        settings.tasks,
        settings.settle
    );
    let mut rng = StdRng::seed_from_u64(settings.seed);
    let fixtures = Arc::new(Fixtures::load());
    let deployment = Deployment::new(backend, settings.settle).await;
    let operator = deployment
        .cli(&["operators", "create", "--init", "--name", "Crash Check"])
        .await;
    let operator_key = operator["api_key"]
        .as_str()
        .expect("operator key")
        .to_string();
    let mut ledger = Ledger::default();
    let checked = Checked {
        deployment: &deployment,
        operator_key: &operator_key,
        fixtures: &fixtures,
    };
    let test_started = Instant::now();

    for round in 1..=settings.rounds {
        let server = deployment.start(&format!("round {round}")).await;
        if round > 1 {
            check(
                &format!("after restart {}", round - 1),
                checked,
                &server,
                &mut ledger,
            )
            .await;
        }
        // A provider key made with the CLI while the server runs.
        let provider = deployment
            .cli(&[
                "providers",
                "create",
                "--name",
                &format!("Crash Provider {round}"),
            ])
            .await;
        let provider_key = provider["api_key"]
            .as_str()
            .expect("provider key")
            .to_string();

        let kill_after = Duration::from_millis(
            rng.random_range(settings.kill_after_ms.0..=settings.kill_after_ms.1),
        );
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = Vec::new();
        for t in 0..settings.tasks {
            let kind = Kind::ALL[t % Kind::ALL.len()];
            let (client, base) = (server.client.clone(), server.base.clone());
            let (fixtures, stop, provider_key) =
                (fixtures.clone(), stop.clone(), provider_key.clone());
            let seed = settings.seed;
            tasks.push(tokio::spawn(async move {
                let mut sent = Vec::new();
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    n += 1;
                    let reference = format!("crash-r{round}-t{t}-{n}");
                    // Every other create carries a key, so both paths are crossed by the kill.
                    let key = (n % 2 == 0).then(|| format!("crash-{seed}-r{round}-t{t}-{n}"));
                    let attempt = fixtures.attempt(kind, reference, key, &provider_key);
                    let result = attempt.send(&client, &base, &fixtures).await;
                    sent.push((attempt, result));
                }
                sent
            }));
        }
        tokio::time::sleep(kill_after).await;
        stop.store(true, Ordering::SeqCst);
        server.kill().await;
        let (before_created, before_unanswered) = (ledger.created.len(), ledger.unanswered.len());
        for task in tasks {
            for (attempt, result) in task.await.expect("load task") {
                ledger.record(attempt, result, round);
            }
        }
        println!(
            "round {round}: SIGKILL after {} ms of load: {} answered 201, {} got no answer, {} other answers",
            kill_after.as_millis(),
            ledger.created.len() - before_created,
            ledger.unanswered.len() - before_unanswered,
            ledger.unexpected.len()
        );
    }

    let server = deployment.start("final").await;
    let mut tally = check(
        &format!("after restart {}", settings.rounds),
        checked,
        &server,
        &mut ledger,
    )
    .await;
    if settings.settle && tally.key_in_use > 0 {
        // The claims of killed requests expire after the request timeout plus 30 s; then each
        // retry must create its case, once.
        let wait = Duration::from_secs(SETTLE_REQUEST_TIMEOUT_SECS + 32);
        println!(
            "settling: waiting {} s for {} stale claims to expire",
            wait.as_secs(),
            tally.key_in_use
        );
        tokio::time::sleep(wait).await;
        tally = check("after the claims expired", checked, &server, &mut ledger).await;
        assert_eq!(
            tally.key_in_use, 0,
            "claims of killed requests did not expire"
        );
    }
    let (files, staging) = debris(&deployment);
    println!(
        "{backend:?}: {} creates answered 201, {} got no answer, {} kills, {} cases, {} documents; \
         {} files in the document folder ({} unowned, {} unfinished staging files) in {:.1} s",
        ledger.created.len(),
        ledger.unanswered.len(),
        settings.rounds,
        tally.cases,
        tally.documents,
        files,
        files.saturating_sub(tally.documents),
        staging,
        test_started.elapsed().as_secs_f64()
    );
    assert!(
        !ledger.created.is_empty(),
        "no create answered 201 in {} rounds: the load never reached the server",
        settings.rounds
    );
    // The load stops only when the kill comes, so each kill should cut requests off. Without
    // one the checks of unanswered creates (exist completely or not at all, never twice; a
    // retry with the key) checked nothing.
    assert!(
        !ledger.unanswered.is_empty(),
        "no kill hit a request in flight in {} rounds: nothing was cut off mid-request",
        settings.rounds
    );
    server.kill().await;

    // The debris goes with `filing documents sweep` (no server runs now, so every file is
    // old enough): afterwards each file is a document of a listed case, and each of those
    // documents still has its file (the checks above downloaded all of them).
    let swept = deployment
        .cli(&["documents", "sweep", "--older-than", "0", "--force"])
        .await;
    let (after, staging_after) = debris(&deployment);
    println!(
        "{backend:?}: the sweep removed {} unowned files and {} staging files",
        swept["removed"].as_array().map_or(0, Vec::len),
        swept["staging_removed"]
    );
    assert_eq!(staging_after, 0, "staging files left: {swept}");
    assert_eq!(
        (after, swept["kept"].as_u64()),
        (tally.documents, Some(tally.documents as u64)),
        "files after the sweep vs. documents of the listed cases: {swept}"
    );
    assert_eq!(
        swept["removed"].as_array().map_or(0, Vec::len) + staging,
        files - after,
        "{swept}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_under_create_load_sqlite() {
    run(Backend::Sqlite).await;
}

#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_under_create_load_postgres() {
    run(Backend::Postgres).await;
}

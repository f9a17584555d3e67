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

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{Backend, fresh_database, pg_base_url};
use futures::StreamExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reqwest::multipart::{Form, Part};
use serde_json::Value;
use tokio::process::{Child, Command};
use uuid::Uuid;

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

/// The example payloads and the PDF owner 0 uploads.
struct Fixtures {
    payloads: HashMap<&'static str, Value>,
    signed_pdf: Vec<u8>,
}

impl Fixtures {
    fn load() -> Self {
        use domain::rule_cases::example;
        let mut upload = example("assisted");
        upload["owners"][0]["documents"] = serde_json::json!({"gewa_1": {"file": "signed0"}});
        upload["owners"][0]["signatures"]
            .as_object_mut()
            .expect("signatures")
            .remove("gewa_1");
        let signed_pdf = common::signed_gewa1_pdf();
        let payloads = HashMap::from([
            ("self", example("self")),
            ("upload", upload),
            ("gmbh", example("gmbh")),
            ("gbr", example("gbr")),
        ]);
        Fixtures {
            payloads,
            signed_pdf,
        }
    }

    /// A create of `kind` marked with `reference` (its `client_reference`).
    fn attempt(
        &self,
        kind: Kind,
        reference: String,
        idempotency_key: Option<String>,
        provider_key: &str,
    ) -> Attempt {
        let name = match kind {
            Kind::TradeSelf => "self",
            Kind::TradeUpload => "upload",
            Kind::TaxGmbh => "gmbh",
            Kind::TaxGbr => "gbr",
        };
        let mut data = self.payloads[name].clone();
        data["client_reference"] = Value::from(reference.clone());
        Attempt {
            kind,
            reference,
            idempotency_key,
            provider_key: provider_key.to_string(),
            data: Arc::new(data.to_string()),
        }
    }
}

/// One create as sent; kept so that a retry sends the same request.
#[derive(Debug, Clone)]
struct Attempt {
    kind: Kind,
    reference: String,
    idempotency_key: Option<String>,
    provider_key: String,
    /// The payload, serialised once: a retry sends the same bytes.
    data: Arc<String>,
}

struct Answer {
    status: u16,
    replayed: bool,
    body: Value,
}

impl Attempt {
    /// `Err` when no complete answer came back.
    async fn send(
        &self,
        client: &reqwest::Client,
        base: &str,
        fixtures: &Fixtures,
    ) -> Result<Answer, reqwest::Error> {
        let mut rb = client
            .post(format!("{base}{}", self.kind.create_path()))
            .bearer_auth(&self.provider_key);
        if let Some(key) = &self.idempotency_key {
            rb = rb.header("idempotency-key", key);
        }
        rb = if self.kind == Kind::TradeUpload {
            let form = Form::new().text("data", self.data.to_string()).part(
                "signed0",
                Part::bytes(fixtures.signed_pdf.clone())
                    .file_name("signed0.pdf")
                    .mime_str("application/pdf")?,
            );
            rb.multipart(form)
        } else {
            rb.header("content-type", "application/json")
                .body(self.data.to_string())
        };
        let res = rb.send().await?;
        let status = res.status().as_u16();
        let replayed = res
            .headers()
            .get("idempotent-replayed")
            .is_some_and(|v| v == "true");
        let bytes = res.bytes().await?;
        let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
            Value::from(format!("(not JSON) {}", String::from_utf8_lossy(&bytes)))
        });
        Ok(Answer {
            status,
            replayed,
            body,
        })
    }
}

/// A create that answered 201.
#[derive(Debug, Clone)]
struct Created {
    attempt: Attempt,
    id: Uuid,
    status: String,
    round: usize,
}

/// What a create that got no answer turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fate {
    /// Not known yet (without a key: decided by what the lists show).
    Open,
    /// Retried with its key: the retry answered 409 `IDEMPOTENCY_KEY_IN_USE` (the killed
    /// process's claim), so the create must not exist.
    KeyInUse,
    /// Retried with its key: 201 (replayed, or created by the retry).
    Retried { id: Uuid, replayed: bool },
}

#[derive(Debug, Clone)]
struct Unanswered {
    attempt: Attempt,
    round: usize,
    fate: Fate,
}

#[derive(Default)]
struct Ledger {
    created: Vec<Created>,
    unanswered: Vec<Unanswered>,
    /// Answers other than 201 from a running server: each is a failure.
    unexpected: Vec<String>,
    /// Every reference sent, with its kind.
    sent: HashMap<String, Kind>,
}

impl Ledger {
    fn record(&mut self, attempt: Attempt, result: Result<Answer, reqwest::Error>, round: usize) {
        self.sent.insert(attempt.reference.clone(), attempt.kind);
        match result {
            Ok(a) if a.status == 201 => {
                let r = &a.body["response"];
                let id = r[attempt.kind.id_field()]
                    .as_str()
                    .and_then(|s| Uuid::parse_str(s).ok());
                match id {
                    Some(id) => self.created.push(Created {
                        status: r["status"].as_str().unwrap_or("").to_string(),
                        attempt,
                        id,
                        round,
                    }),
                    None => self.unexpected.push(format!(
                        "{}: 201 without an id: {}",
                        attempt.reference, a.body
                    )),
                }
            }
            Ok(a) => self.unexpected.push(format!(
                "{} ({:?}): answered {} {}",
                attempt.reference, attempt.kind, a.status, a.body
            )),
            Err(_) => self.unanswered.push(Unanswered {
                attempt,
                round,
                fate: Fate::Open,
            }),
        }
    }
}

/// The data folder and database all rounds share, and the server's log.
struct Deployment {
    dir: tempfile::TempDir,
    database_url: String,
    log: PathBuf,
    request_timeout_secs: Option<u64>,
}

struct Server {
    child: Child,
    base: String,
    client: reqwest::Client,
}

impl Deployment {
    async fn new(backend: Backend, settle: bool) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let database_url = match backend {
            Backend::Sqlite => format!("sqlite://{}", dir.path().join("data/filing.db").display()),
            Backend::Postgres => fresh_database(backend, dir.path())
                .await
                .expect("TEST_DATABASE_URL is set"),
        };
        let log = dir.path().join("server.log");
        Deployment {
            dir,
            database_url,
            log,
            request_timeout_secs: settle.then_some(SETTLE_REQUEST_TIMEOUT_SECS),
        }
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn command(&self) -> Command {
        let mut cmd = common::filing_process(self.dir.path());
        cmd.env("DATABASE_URL", &self.database_url)
            // As a production deployment: production tax cases get their XML at create.
            .env("FILING_ELSTER_HERSTELLER_ID", "40417");
        if let Some(secs) = self.request_timeout_secs {
            cmd.env("FILING_REQUEST_TIMEOUT_SECS", secs.to_string());
        }
        cmd
    }

    /// Runs a command of the CLI; returns the JSON object it printed.
    async fn cli(&self, args: &[&str]) -> Value {
        let out = self
            .command()
            .args(args)
            .output()
            .await
            .expect("run filing");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "filing {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("{args:?} printed {stdout:?}: {e}"))
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Starts `filing serve` on a free port and waits until `/healthz` answers 200.
    async fn start(&self, label: &str) -> Server {
        for _ in 0..5 {
            let port = common::free_port();
            let mut log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.log)
                .expect("server log");
            use std::io::Write;
            writeln!(log, "---- {label}: starting on port {port}").unwrap();
            let mut child = self
                .command()
                .arg("serve")
                .env("FILING_LISTEN", format!("127.0.0.1:{port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::from(log))
                .spawn()
                .expect("start filing serve");
            let (base, client) = common::served_on(port, Duration::from_secs(120));
            let started = Instant::now();
            loop {
                if let Some(status) = child.try_wait().expect("child status") {
                    if self.log_tail().contains("cannot listen") {
                        break; // someone took the port meanwhile: another one
                    }
                    panic!(
                        "{label}: the server exited at start ({status}):\n{}",
                        self.log_tail()
                    );
                }
                let ok = client
                    .get(format!("{base}/healthz"))
                    .timeout(Duration::from_secs(2))
                    .send()
                    .await
                    .is_ok_and(|r| r.status() == 200);
                if ok {
                    return Server {
                        child,
                        base,
                        client,
                    };
                }
                assert!(
                    started.elapsed() < Duration::from_secs(120),
                    "{label}: /healthz did not answer 200 within 120 s:\n{}",
                    self.log_tail()
                );
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
        panic!("{label}: no free port to listen on");
    }
}

impl Server {
    /// SIGKILL, and checks that it was the signal that ended the process.
    async fn kill(mut self) {
        use std::os::unix::process::ExitStatusExt;
        self.child.start_kill().expect("SIGKILL");
        let status = self.child.wait().await.expect("wait for the server");
        assert_eq!(
            status.signal(),
            Some(9),
            "the server ended by itself ({status}), not by the kill"
        );
    }

    async fn get_json(&self, path: &str, key: &str) -> Result<(u16, Value), String> {
        let res = self
            .client
            .get(format!("{}{path}", self.base))
            .bearer_auth(key)
            .send()
            .await
            .map_err(|e| format!("GET {path}: {e}"))?;
        let status = res.status().as_u16();
        let text = res.text().await.map_err(|e| format!("GET {path}: {e}"))?;
        let v = serde_json::from_str(&text)
            .map_err(|e| format!("GET {path}: not JSON ({e}): {text:?}"))?;
        Ok((status, v))
    }
}

/// What a listed case looked like when read back.
#[derive(Debug)]
struct Seen {
    trade: bool,
    status: String,
    reference: Option<String>,
    documents: Vec<String>,
    has_tax_office: bool,
}

/// The `client_reference` of a case as read back (trade: top level; tax: in `registration`).
fn reference_of(r: &Value) -> Option<String> {
    r["client_reference"]
        .as_str()
        .or_else(|| r["registration"]["client_reference"].as_str())
        .map(str::to_string)
}

/// Every case of one operator list (all pages).
/// The ids an operator list shows, sandbox and production cases alike (a list shows one
/// environment at a time).
async fn list_ids(server: &Server, operator_key: &str, path: &str) -> Result<Vec<Uuid>, String> {
    let mut ids = Vec::new();
    for environment in ["production", "sandbox"] {
        ids.extend(list_environment(server, operator_key, path, environment).await?);
    }
    Ok(ids)
}

async fn list_environment(
    server: &Server,
    operator_key: &str,
    path: &str,
    environment: &str,
) -> Result<Vec<Uuid>, String> {
    let mut ids = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let query = match &after {
            Some(a) => format!("{path}?environment={environment}&limit=500&after={a}"),
            None => format!("{path}?environment={environment}&limit=500"),
        };
        let (status, v) = server.get_json(&query, operator_key).await?;
        if status != 200 {
            return Err(format!("GET {query}: {status} {v}"));
        }
        for c in v["response"]["cases"].as_array().into_iter().flatten() {
            let id = c["id"]
                .as_str()
                .and_then(|s| Uuid::parse_str(s).ok())
                .ok_or_else(|| format!("{path}: a case without an id: {c}"))?;
            ids.push(id);
        }
        match v["response"]["next_cursor"].as_str() {
            Some(c) => after = Some(c.to_string()),
            None => return Ok(ids),
        }
    }
}

/// Reads a case and downloads every document; any failure or incomplete file is an `Err`.
async fn read_case(
    server: &Server,
    operator_key: &str,
    trade: bool,
    id: Uuid,
    fixtures: &Fixtures,
) -> Result<Seen, String> {
    let path = if trade {
        format!("/v1/trade-registration/{id}")
    } else {
        format!("/v1/tax-registration/{id}")
    };
    let (status, v) = server.get_json(&path, operator_key).await?;
    if status != 200 {
        return Err(format!(
            "listed case {id}: GET {path} answered {status} {v}"
        ));
    }
    let r = &v["response"];
    let docs = r["documents"]
        .as_array()
        .ok_or_else(|| format!("{id}: no documents array: {r}"))?;
    let mut types = Vec::new();
    let mut uploaded_found = false;
    for d in docs {
        let kind = d["type"].as_str().unwrap_or("").to_string();
        let url = d["download_url"]
            .as_str()
            .ok_or_else(|| format!("{id}: a document without download_url: {d}"))?;
        let res = server
            .client
            .get(url)
            .send()
            .await
            .map_err(|e| format!("{id}: download {kind}: {e}"))?;
        let status = res.status().as_u16();
        let bytes = res
            .bytes()
            .await
            .map_err(|e| format!("{id}: download {kind}: {e}"))?;
        if status != 200 {
            return Err(format!(
                "{id}: document {kind} answered {status}: {}",
                String::from_utf8_lossy(&bytes)
            ));
        }
        if kind == "tax-registration-xml" {
            elster::validate(&bytes)
                .map_err(|e| format!("{id}: the XML does not parse and validate: {e:?}"))?;
        } else {
            let whole = bytes.starts_with(b"%PDF-") && bytes.trim_ascii_end().ends_with(b"%%EOF");
            if !whole {
                return Err(format!(
                    "{id}: document {kind} ({} bytes) is not a whole PDF",
                    bytes.len()
                ));
            }
            uploaded_found |= bytes.as_ref() == fixtures.signed_pdf.as_slice();
        }
        types.push(kind);
    }
    types.sort();
    if trade && r["package"] == "assisted" && !uploaded_found {
        return Err(format!(
            "{id}: the uploaded signed GewA 1 is not among the documents"
        ));
    }
    Ok(Seen {
        trade,
        status: r["status"].as_str().unwrap_or("").to_string(),
        reference: reference_of(r),
        documents: types,
        has_tax_office: !r["tax_office"].is_null(),
    })
}

#[derive(Debug, Default)]
struct Tally {
    cases: usize,
    documents: usize,
    retried_replayed: usize,
    retried_created: usize,
    key_in_use: usize,
    unanswered_present: usize,
    unanswered_absent: usize,
}

/// Checks everything against the running server; returns the problems found.
async fn verify(
    server: &Server,
    operator_key: &str,
    ledger: &mut Ledger,
    fixtures: &Fixtures,
) -> (Vec<String>, Tally) {
    let mut problems = Vec::new();
    let mut tally = Tally::default();

    // Creates that got no answer and carry a key: the retry replays or creates once.
    for u in ledger.unanswered.iter_mut() {
        if u.attempt.idempotency_key.is_none() || matches!(u.fate, Fate::Retried { .. }) {
            continue;
        }
        match u.attempt.send(&server.client, &server.base, fixtures).await {
            Ok(a) if a.status == 201 => {
                let id = a.body["response"][u.attempt.kind.id_field()]
                    .as_str()
                    .and_then(|s| Uuid::parse_str(s).ok());
                match id {
                    Some(id) => {
                        u.fate = Fate::Retried {
                            id,
                            replayed: a.replayed,
                        }
                    }
                    None => problems.push(format!(
                        "{}: retry answered 201 without an id: {}",
                        u.attempt.reference, a.body
                    )),
                }
            }
            Ok(a) if a.status == 409 && a.body["response"]["code"] == "IDEMPOTENCY_KEY_IN_USE" => {
                u.fate = Fate::KeyInUse;
            }
            Ok(a) => problems.push(format!(
                "{}: the retry with its Idempotency-Key answered {} {}",
                u.attempt.reference, a.status, a.body
            )),
            Err(e) => problems.push(format!(
                "{}: the retry got no answer: {e}",
                u.attempt.reference
            )),
        }
    }

    // Everything the operator lists show: readable, complete, and sent by the load.
    let mut listed: Vec<(bool, Uuid)> = Vec::new();
    for (trade, path) in [
        (true, "/v1/operator/trade-registrations"),
        (false, "/v1/operator/tax-registrations"),
    ] {
        match list_ids(server, operator_key, path).await {
            Ok(ids) => listed.extend(ids.into_iter().map(|id| (trade, id))),
            Err(e) => problems.push(e),
        }
    }
    let results: Vec<(Uuid, Result<Seen, String>)> = futures::stream::iter(listed)
        .map(|(trade, id)| async move {
            (
                id,
                read_case(server, operator_key, trade, id, fixtures).await,
            )
        })
        .buffer_unordered(6)
        .collect()
        .await;
    let mut seen: HashMap<Uuid, Seen> = HashMap::new();
    for (id, r) in results {
        match r {
            Ok(s) => {
                seen.insert(id, s);
            }
            Err(e) => problems.push(e),
        }
    }
    tally.cases = seen.len();
    let mut by_reference: BTreeMap<String, Vec<Uuid>> = BTreeMap::new();
    for (id, s) in &seen {
        tally.documents += s.documents.len();
        let Some(reference) = &s.reference else {
            problems.push(format!("{id}: a case without client_reference"));
            continue;
        };
        by_reference.entry(reference.clone()).or_default().push(*id);
        let Some(kind) = ledger.sent.get(reference) else {
            problems.push(format!(
                "{id}: a case with reference {reference:?}, which the load never sent"
            ));
            continue;
        };
        if kind.is_trade() != s.trade {
            problems.push(format!("{id}: listed as the wrong kind of case"));
        }
        let expected = kind.documents(s.has_tax_office);
        if s.documents != expected {
            problems.push(format!(
                "{id} ({reference}): half-written? documents {:?}, expected {expected:?}",
                s.documents,
            ));
        }
        if s.status != kind.created_status() {
            problems.push(format!(
                "{id} ({reference}): status {:?}, expected {:?}",
                s.status,
                kind.created_status()
            ));
        }
    }
    for (reference, ids) in &by_reference {
        if ids.len() > 1 {
            problems.push(format!(
                "{reference}: {} cases for one create: {ids:?}",
                ids.len()
            ));
        }
    }

    // Every 201: listed, the same case, the status it was created with, readable by its provider.
    for c in &ledger.created {
        let Some(s) = seen.get(&c.id) else {
            problems.push(format!(
                "{} (round {}, {:?}) answered 201 with id {} but is not listed or not readable",
                c.attempt.reference, c.round, c.attempt.kind, c.id
            ));
            continue;
        };
        if s.reference.as_deref() != Some(c.attempt.reference.as_str()) {
            problems.push(format!(
                "{}: the case {} has reference {:?}",
                c.attempt.reference, c.id, s.reference
            ));
        }
        if c.status != c.attempt.kind.created_status() || s.status != c.status {
            problems.push(format!(
                "{}: created as {:?}, read back as {:?}",
                c.attempt.reference, c.status, s.status
            ));
        }
        match server
            .get_json(&c.attempt.kind.read_path(c.id), &c.attempt.provider_key)
            .await
        {
            Ok((200, v)) if v["response"][c.attempt.kind.id_field()] == c.id.to_string() => {}
            Ok((status, v)) => problems.push(format!(
                "{}: its provider reads {} as {status} {v}",
                c.attempt.reference, c.id
            )),
            Err(e) => problems.push(e),
        }
    }

    // No answer: complete or absent (checked above for what exists), and what the retry says
    // matches what exists.
    for u in &ledger.unanswered {
        let ids = by_reference
            .get(&u.attempt.reference)
            .cloned()
            .unwrap_or_default();
        // Whether the create itself happened (a case a retry made does not count).
        let happened = match &u.fate {
            Fate::Retried { replayed, .. } => *replayed,
            _ => !ids.is_empty(),
        };
        if happened {
            tally.unanswered_present += 1;
        } else {
            tally.unanswered_absent += 1;
        }
        match &u.fate {
            Fate::Open => {}
            Fate::KeyInUse => {
                tally.key_in_use += 1;
                if !ids.is_empty() {
                    problems.push(format!(
                        "{} (round {}): the case {ids:?} exists, but its Idempotency-Key is still \
                         claimed by the killed request (409 IDEMPOTENCY_KEY_IN_USE): once the claim \
                         expires, a retry creates it a second time",
                        u.attempt.reference, u.round
                    ));
                }
            }
            Fate::Retried { id, replayed } => {
                if *replayed {
                    tally.retried_replayed += 1;
                } else {
                    tally.retried_created += 1;
                }
                if ids != [*id] {
                    problems.push(format!(
                        "{} (round {}): the retry answered 201 with {id} (replayed: {replayed}), \
                         the lists show {ids:?}",
                        u.attempt.reference, u.round
                    ));
                }
            }
        }
    }
    (problems, tally)
}

/// Files in the document folder that no listed case owns, and object_store's unfinished
/// staging files: debris of killed creates, invisible through the API.
fn debris(deployment: &Deployment) -> (usize, usize) {
    fn walk(dir: &std::path::Path, files: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                walk(&p, files);
            } else {
                files.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&deployment.data_dir().join("documents"), &mut files);
    let staging = files
        .iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains('#'))
        })
        .count();
    (files.len(), staging)
}

/// What [`check`] needs of the run besides its server and ledger.
#[derive(Clone, Copy)]
struct Checked<'a> {
    deployment: &'a Deployment,
    operator_key: &'a str,
    fixtures: &'a Fixtures,
}

async fn check(label: &str, run: Checked<'_>, server: &Server, ledger: &mut Ledger) -> Tally {
    let Checked {
        deployment,
        operator_key,
        fixtures,
    } = run;
    let started = Instant::now();
    let (problems, tally) = verify(server, operator_key, ledger, fixtures).await;
    println!(
        "{label}: checked {} cases, {} documents in {:.1} s; no-answer creates: {} present, {} absent; \
         retried with key: {} replayed, {} created, {} key still in use",
        tally.cases,
        tally.documents,
        started.elapsed().as_secs_f64(),
        tally.unanswered_present,
        tally.unanswered_absent,
        tally.retried_replayed,
        tally.retried_created,
        tally.key_in_use,
    );
    assert!(
        problems.is_empty() && ledger.unexpected.is_empty(),
        "{label}: {} problems:\n{}\nanswers other than 201 under load:\n{}\nserver log:\n{}",
        problems.len(),
        problems.join("\n"),
        ledger.unexpected.join("\n"),
        deployment.log_tail()
    );
    tally
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
        .cli(&["operators", "create", "--name", "Crash Check"])
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_under_create_load_postgres() {
    if pg_base_url().is_none() {
        eprintln!("skipped: TEST_DATABASE_URL is not set");
        return;
    }
    run(Backend::Postgres).await;
}

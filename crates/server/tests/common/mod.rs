//! `TestApp`: the real application on a real port (0), with a real SQLite file or a fresh
//! PostgreSQL database, and helpers to talk HTTP to it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use serde_json::Value;
use server::app::AppState;
use server::config::{CommonArgs, Config, OperatorArgs, ServeArgs, StorageArgs};
use tempfile::TempDir;
use tokio::sync::oneshot;
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// POSTs the trade registration `body` with `key` to the server at `base` (one this test
/// started as a process).
pub async fn post_trade(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    body: &Value,
) -> reqwest::Response {
    client
        .post(format!("{base}/v1/trade-registration"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap()
}

/// Every file below `dir`, at any depth (none when `dir` does not exist).
pub fn files_below(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|e| {
            let p = e.path();
            if p.is_dir() { files_below(&p) } else { vec![p] }
        })
        .collect()
}

/// The `filing` binary as an operator runs it: in `dir`, with `<dir>/data` and `database_url`
/// and nothing else from the test's environment (add what a test needs).
pub fn filing_command(dir: &std::path::Path, database_url: &str) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_filing"));
    command
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("FILING_DATA_DIR", dir.join("data"))
        .env("DATABASE_URL", database_url)
        .env("FILING_RATE_LIMIT_PER_SECOND", "0")
        .env("FILING_ADDRESS_RATE_LIMIT_PER_MINUTE", "0");
    command
}

/// Whether `base/healthz` answers 200 within 20 s (a `filing serve` just started).
pub async fn healthz_answers(base: &str, client: &reqwest::Client) -> bool {
    for _ in 0..400 {
        if client
            .get(format!("{base}/healthz"))
            .send()
            .await
            .is_ok_and(|r| r.status() == 200)
        {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}

/// A port on 127.0.0.1 that was free when asked (another process may take it before use).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The `filing` binary as a deployment runs it, as a child of the test (killed when dropped):
/// in `dir` with `<dir>/data`, log level `warn`, the operator's name and address, no standard
/// input, and nothing else from the test's environment (add what a test needs).
pub fn filing_process(dir: &std::path::Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_filing"));
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("FILING_DATA_DIR", dir.join("data"))
        .env("FILING_LOG", "warn")
        .env("FILING_OPERATOR_NAME", "Muster Filing GmbH")
        .env("FILING_OPERATOR_ADDRESS", "Beispielweg 5, 10117 Berlin")
        // Load and crash tests send thousands of requests a second as one provider: the
        // default rate limits (on since issue 52.5) are tested in `limits.rs`, which removes
        // these two.
        .env("FILING_RATE_LIMIT_PER_SECOND", "0")
        .env("FILING_ADDRESS_RATE_LIMIT_PER_MINUTE", "0")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    cmd
}

/// The base URL of a `filing serve` on `port` and a client whose requests give up after
/// `timeout`.
pub fn served_on(port: u16, timeout: std::time::Duration) -> (String, reqwest::Client) {
    let client = reqwest::Client::builder().timeout(timeout).build().unwrap();
    (format!("http://127.0.0.1:{port}"), client)
}

/// A real PDF to upload as a signed GewA 1: the form rendered from the `self` example.
pub fn signed_gewa1_pdf() -> Vec<u8> {
    let reg: domain::trade::TradeRegistration =
        serde_json::from_value(domain::rule_cases::example("self")).expect("self example");
    forms::render_gewa1(
        &reg,
        0,
        &forms::Gewa1Context {
            trade_office_name: None,
            municipality_key: None,
            main_office: None,
            created_on: time::macros::date!(2025 - 01 - 02),
            timestamp: time::macros::datetime!(2025-01-02 0:00 UTC),
        },
    )
    .expect("render the PDF to upload")
}

/// Another connection to the SQLite database at `url` that takes the write lock (`BEGIN
/// EXCLUSIVE`) and keeps it until [`release_sqlite_lock`].
pub async fn hold_sqlite_lock(url: &str) -> sqlx::SqliteConnection {
    use sqlx::Connection;
    let mut locker = sqlx::SqliteConnection::connect(url).await.unwrap();
    sqlx::raw_sql("BEGIN EXCLUSIVE")
        .execute(&mut locker)
        .await
        .unwrap();
    locker
}

/// Gives the write lock of [`hold_sqlite_lock`] back (`ROLLBACK`).
pub async fn release_sqlite_lock(locker: &mut sqlx::SqliteConnection) {
    sqlx::raw_sql("ROLLBACK").execute(locker).await.unwrap();
}

/// Runs `command` to its end: its exit code (`None` when a signal ended it), standard output
/// and standard error.
pub fn output_of(command: &mut std::process::Command) -> (Option<i32>, String, String) {
    let out = command.output().expect("run filing");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The PostgreSQL server tests use, in `TEST_DATABASE_URL` (see [`test_server`]).
pub fn pg_base_url() -> String {
    test_server("TEST_DATABASE_URL")
}

/// The address of a test server in `variable`.
///
/// A test that needs the server is `#[ignore]`d when the variable is unset at build time (the
/// cfg `build.rs` sets), so cargo reports it as not run. A test that runs without the variable
/// all the same (`--ignored`, or a test binary built with it and run by hand without it) cannot
/// do what it is for, and must not pass as one that did: it fails here.
fn test_server(variable: &str) -> String {
    std::env::var(variable)
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| panic!("{variable} is not set: this test needs it (docs/testing.md)"))
}

/// A database URL of its own for one test: an SQLite file in `dir`, or a new PostgreSQL
/// database (`filing_t_<pid>_<uuid>`) on the test server. Always `Some` (a missing
/// `TEST_DATABASE_URL` fails the test in [`pg_base_url`]).
pub async fn fresh_database(backend: Backend, dir: &std::path::Path) -> Option<String> {
    match backend {
        Backend::Sqlite => Some(format!("sqlite://{}", dir.join("filing.db").display())),
        Backend::Postgres => {
            use sqlx::Connection;
            let base = pg_base_url();
            let name = format!(
                "filing_t_{}_{}",
                std::process::id(),
                Uuid::new_v4().simple()
            );
            let mut conn = sqlx::PgConnection::connect(&base)
                .await
                .expect("TEST_DATABASE_URL must reach a PostgreSQL server");
            drop_databases_of_ended_runs(&mut conn).await;
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut conn)
                .await
                .expect("create test database");
            let (without_query, query) = match base.split_once('?') {
                Some((a, q)) => (a.to_string(), format!("?{q}")),
                None => (base.clone(), String::new()),
            };
            let slash = without_query.rfind('/').expect("database URL with a path");
            let scheme_end = without_query.find("://").map(|i| i + 3).unwrap_or(0);
            let server = if slash >= scheme_end {
                &without_query[..slash]
            } else {
                &without_query[..]
            };
            Some(format!("{server}/{name}{query}"))
        }
    }
}

/// Drops, once per test process, the test databases whose process has ended.
///
/// A test's database outlives the test: servers of several `TestApp`s share it, and `Drop` can't
/// wait for PostgreSQL. The name carries the creating process's id instead, so the next run
/// removes what earlier runs (passed, failed or killed) left, and never a database that a test
/// process running beside it still uses. Names without a process id come from older test
/// binaries. Linux only: elsewhere there is no `/proc` to ask, and nothing is dropped.
async fn drop_databases_of_ended_runs(conn: &mut sqlx::PgConnection) {
    use std::sync::atomic::{AtomicBool, Ordering};
    static SWEPT: AtomicBool = AtomicBool::new(false);
    if !cfg!(target_os = "linux") || SWEPT.swap(true, Ordering::SeqCst) {
        return;
    }
    let names: Vec<String> =
        sqlx::query_scalar("SELECT datname FROM pg_database WHERE datname LIKE 'filing\\_t\\_%'")
            .fetch_all(&mut *conn)
            .await
            .expect("list test databases");
    for name in names {
        let pid = name
            .strip_prefix("filing_t_")
            .and_then(|rest| rest.split_once('_'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok());
        if pid.is_some_and(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists()) {
            continue;
        }
        // Another process may be dropping it at the same moment; either way it goes.
        let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
        )))
        .execute(&mut *conn)
        .await;
    }
}

/// The S3-compatible server tests use, in `TEST_S3_ENDPOINT` (`.ci/run` starts moto's, from
/// PyPI, on 127.0.0.1:5900; see [`test_server`]).
pub fn s3_endpoint() -> String {
    // The tests' own S3 requests use reqwest with rustls, which needs the provider.
    server::webhooks::install_tls();
    test_server("TEST_S3_ENDPOINT")
        .trim_end_matches('/')
        .to_owned()
}

/// A new, empty bucket of its own for one test, on `endpoint` (the S3 test server, or a proxy
/// in front of it), with documents below `docs/`.
pub async fn fresh_bucket(endpoint: &str) -> store::documents::S3Settings {
    let server = s3_endpoint();
    let bucket = format!("filing-t-{}", Uuid::new_v4().simple());
    let res = reqwest::Client::new()
        .put(format!("{server}/{bucket}"))
        .send()
        .await
        .expect("TEST_S3_ENDPOINT must reach an S3-compatible server");
    assert!(res.status().is_success(), "create bucket: {}", res.status());
    store::documents::S3Settings {
        bucket,
        prefix: "docs".into(),
        endpoint: Some(endpoint.to_owned()),
        region: Some("us-east-1".into()),
        credentials: Some(("test".into(), "test".into())),
        allow_http: true,
        timeout: std::time::Duration::from_secs(5),
    }
}

/// App options that keep the documents in the bucket of `settings`.
pub fn on_bucket(settings: store::documents::S3Settings) -> Options {
    Options {
        tweak: Box::new(move |c| c.storage.documents_s3 = Some(settings)),
        ..Default::default()
    }
}

/// The objects in a test bucket as `(key, ETag)`, sorted by key: `ListObjectsV2` straight
/// against the S3 server (listing needs no signature there, reading an object does). For a
/// plain `PUT` the ETag is the MD5 of the bytes, which [`md5_hex`] gives for a download.
pub async fn bucket_objects(bucket: &str) -> Vec<(String, String)> {
    let server = s3_endpoint();
    let xml = reqwest::get(format!("{server}/{bucket}?list-type=2"))
        .await
        .expect("list bucket")
        .text()
        .await
        .unwrap();
    let field = |entry: &str, name: &str| {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        entry
            .split_once(&open)
            .and_then(|(_, rest)| rest.split_once(&close))
            .map(|(v, _)| v.replace("&quot;", "").replace('"', ""))
            .unwrap_or_default()
    };
    let mut objects: Vec<(String, String)> = xml
        .split("<Contents>")
        .skip(1)
        .map(|entry| (field(entry, "Key"), field(entry, "ETag")))
        .collect();
    objects.sort();
    objects
}

/// The keys of [`bucket_objects`].
pub async fn bucket_keys(bucket: &str) -> Vec<String> {
    bucket_objects(bucket)
        .await
        .into_iter()
        .map(|(k, _)| k)
        .collect()
}

/// The SHA-256 digest of `bytes` as lowercase hex (a document's `sha256` in a GET).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub fn md5_hex(bytes: &[u8]) -> String {
    use md5::Digest;
    md5::Md5::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub struct TestApp {
    pub addr: SocketAddr,
    pub base: String,
    pub state: Arc<AppState>,
    pub client: reqwest::Client,
    pub database_url: String,
    pub dir: Arc<TempDir>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    worker: Option<server::webhooks::WorkerHandle>,
}

/// The manufacturer id the test apps are configured with (made up; not ELSTER's test id).
pub const TEST_HERSTELLER_ID: &str = "40417";

pub struct Options {
    pub extra_routes: Option<Router<Arc<AppState>>>,
    pub tweak: Box<dyn FnOnce(&mut Config) + Send>,
}

impl Options {
    /// The default options, with the config changed by `tweak`.
    pub fn tweak(tweak: impl FnOnce(&mut Config) + Send + 'static) -> Self {
        Self {
            tweak: Box::new(tweak),
            ..Default::default()
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            extra_routes: None,
            tweak: Box::new(|_| {}),
        }
    }
}

impl TestApp {
    /// An app on a fresh database of `backend` (always `Some`: see [`fresh_database`]).
    pub async fn spawn(backend: Backend) -> Option<Self> {
        Self::spawn_with(backend, Options::default()).await
    }

    pub async fn spawn_with(backend: Backend, options: Options) -> Option<Self> {
        let dir = Arc::new(tempfile::tempdir().expect("temp dir"));
        let url = fresh_database(backend, dir.path()).await?;
        Some(Self::spawn_on(url, dir, options).await)
    }

    /// A server on an existing database and data folder (a second instance, or after a CLI
    /// command).
    pub async fn spawn_on(database_url: String, dir: Arc<TempDir>, options: Options) -> Self {
        let common = CommonArgs {
            storage: StorageArgs {
                data_dir: dir.path().join("data"),
                database_url: Some(database_url.clone()),
                ..StorageArgs::default()
            },
            operator: OperatorArgs {
                operator_name: Some("Muster Filing GmbH".into()),
                operator_address: Some("Beispielweg 5, 10117 Berlin".into()),
            },
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind port 0");
        let addr = listener.local_addr().unwrap();
        let serve = ServeArgs {
            listen: addr,
            ..ServeArgs::default()
        };
        let mut config = Config::from_args(&common, &serve).expect("valid test config");
        // Receivers in tests listen on 127.0.0.1; a short poll keeps webhook tests quick.
        config.webhooks.allow_private_targets = true;
        config.webhooks.poll_interval = std::time::Duration::from_millis(50);
        // Revocation takes effect at once in tests; `foundation.rs` tests the key cache itself.
        config.key_cache = std::time::Duration::ZERO;
        // Directory entries written around the app (the CLI) are read at once in tests;
        // `offices.rs` tests the directory cache itself.
        config.directory_cache = std::time::Duration::ZERO;
        // Tests send hundreds of requests a second as one provider and many without a key;
        // `limits.rs` tests the default limits (on by default since issue 52.5) themselves.
        config.rate_limit = None;
        config.address_rate_limit = None;
        // Production tax XML needs a manufacturer id of one's own (a made-up one here);
        // `tax_registration.rs` tests the service without one.
        config.elster.hersteller_id =
            Some(server::config::HerstellerId::parse(TEST_HERSTELLER_ID).unwrap());
        (options.tweak)(&mut config);
        let state = server::app::build_state(config).await.expect("state");
        // As `app::serve` does at start.
        server::cases::pending_xml::spawn_pending_writer(state.clone());
        let serve_options = server::app::ServeOptions::from_config(&state.config);
        let router = server::app::router(state.clone(), options.extra_routes);
        let worker = state
            .config
            .webhooks
            .worker
            .then(|| server::webhooks::spawn_worker(state.clone()).expect("webhook worker"));
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            server::app::serve_router(router, listener, serve_options, async {
                let _ = rx.await;
            })
            .await
            .expect("server runs");
        });
        TestApp {
            addr,
            base: format!("http://{addr}"),
            state,
            client: reqwest::Client::new(),
            database_url,
            dir,
            shutdown: Some(tx),
            task: Some(task),
            worker,
        }
    }

    /// Stops the server, waiting for in-flight requests.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        if let Some(worker) = self.worker.take() {
            worker.stop().await;
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub fn get(&self, path: &str, key: Option<&str>) -> reqwest::RequestBuilder {
        let rb = self.client.get(self.url(path));
        match key {
            Some(k) => rb.bearer_auth(k),
            None => rb,
        }
    }

    pub fn post(&self, path: &str, key: Option<&str>) -> reqwest::RequestBuilder {
        let rb = self.client.post(self.url(path));
        match key {
            Some(k) => rb.bearer_auth(k),
            None => rb,
        }
    }

    /// POSTs `body` as JSON with `key`: the status and the parsed body.
    pub async fn post_json(&self, path: &str, key: &str, body: &Value) -> (u16, Value) {
        json(self.post(path, Some(key)).json(body).send().await.unwrap()).await
    }

    /// GETs `path` with `key`: the status and the parsed body.
    pub async fn get_json(&self, path: &str, key: &str) -> (u16, Value) {
        json(self.get(path, Some(key)).send().await.unwrap()).await
    }

    /// Creates a case at `path` from `body` with `key`, which must answer 201: its id as the
    /// answer names it (`trade_registration_id` or `tax_registration_id`).
    pub async fn create(&self, path: &str, key: &str, body: &Value) -> String {
        let (s, b) = self.post_json(path, key, body).await;
        assert_eq!(s, 201, "{b}");
        let r = &b["response"];
        r["trade_registration_id"]
            .as_str()
            .or(r["tax_registration_id"].as_str())
            .unwrap()
            .to_string()
    }

    /// GETs `path` with `key`, which must answer 200: the `response` object.
    pub async fn read(&self, path: &str, key: &str) -> Value {
        let (s, b) = self.get_json(path, key).await;
        assert_eq!(s, 200, "{b}");
        b["response"].clone()
    }

    /// A provider company and its key, made the way `filing providers create` makes them.
    pub async fn provider(&self, name: &str) -> (Uuid, String) {
        let company = self.state.repo.create_provider(name).await.unwrap();
        let key = server::auth::issue_key(
            self.state.repo.as_ref(),
            domain::auth::KeyKind::Provider,
            company.id,
        )
        .await
        .unwrap();
        (company.id, key.api_key)
    }

    /// A client company of `provider` (environment production, a GmbH) and a key for it.
    pub async fn client_company(&self, provider: Uuid, name: &str) -> (Uuid, String) {
        self.client_company_as(provider, name, "gmbh").await
    }

    /// A client company with the name and legal form a create naming it must repeat, e.g. of
    /// an example body: `client_company_like(p, &example("ug"))`.
    pub async fn client_company_like(
        &self,
        provider: Uuid,
        body: &serde_json::Value,
    ) -> (Uuid, String) {
        let (name, form) = (
            body["name"].as_str().unwrap(),
            body["legal_form"].as_str().unwrap(),
        );
        self.client_company_as(provider, name, form).await
    }

    pub async fn client_company_as(
        &self,
        provider: Uuid,
        name: &str,
        legal_form: &str,
    ) -> (Uuid, String) {
        let company = self
            .state
            .repo
            .create_client_company(store::NewClientCompany {
                provider_id: provider,
                name: name.into(),
                environment: domain::company::Environment::Production,
                legal_form: Some(legal_form.into()),
                registration_number: None,
                business_address: None,
            })
            .await
            .unwrap();
        let key = server::auth::issue_key(
            self.state.repo.as_ref(),
            domain::auth::KeyKind::Client,
            company.id,
        )
        .await
        .unwrap();
        (company.id, key.api_key)
    }

    pub async fn operator(&self, name: &str) -> (Uuid, String) {
        let op = self.state.repo.create_operator(name).await.unwrap();
        let key = server::auth::issue_key(
            self.state.repo.as_ref(),
            domain::auth::KeyKind::Operator,
            op.id,
        )
        .await
        .unwrap();
        (op.id, key.api_key)
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// The forms crate's reader of PDFs (text with positions, pages, title), shared so that the
/// server's documents are read back the same way.
#[path = "../../../forms/tests/common/read_back.rs"]
pub mod read_back;

/// The text of a PDF in layout order: lines top to bottom, pages separated by a form feed.
pub fn pdf_text(bytes: &[u8]) -> String {
    read_back::read(bytes).all_layout_text()
}

/// A tax request whose seat no rule places in a tax office: an unknown street in a Berlin
/// postal code that straddles Mitte and Pankow (10119), so the case waits for an operator.
pub fn office_undetermined(mut request: Value) -> Value {
    let seat = serde_json::json!({
        "street": "Musterstraße 1", "zip": "10119", "city": "Berlin", "country": "DE"
    });
    request["address"] = seat.clone();
    if request.get("business_address").is_some() {
        request["business_address"] = seat;
    }
    request
}

/// Status and parsed JSON body of a response.
pub async fn json(res: reqwest::Response) -> (u16, Value) {
    let status = res.status().as_u16();
    let text = res.text().await.expect("body");
    let value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("body is not JSON ({e}): {text:?}"));
    (status, value)
}

/// Asserts an error envelope with `status` and `code`; returns the inner `response` object.
pub fn assert_error(status: u16, body: &Value, want_status: u16, want_code: &str) -> Value {
    assert_eq!(status, want_status, "body: {body}");
    let r = &body["response"];
    assert_eq!(r["result"], "error", "body: {body}");
    assert_eq!(r["code"], want_code, "body: {body}");
    assert!(
        r["message"].as_str().is_some_and(|m| !m.is_empty()),
        "body: {body}"
    );
    assert!(
        r["request_id"].as_str().is_some_and(|m| !m.is_empty()),
        "body: {body}"
    );
    r.clone()
}

/// The `(field, code)` pairs of an error's `errors` (`r` is the `response` object).
pub fn field_codes(r: &Value) -> Vec<(String, String)> {
    r["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["field"].as_str().unwrap().to_string(),
                e["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The app on `backend`, which must be available.
pub async fn app(backend: Backend) -> TestApp {
    TestApp::spawn(backend).await.expect("backend available")
}

/// A tax registration case (UG, GmbH, GbR, eGbR) read back with `key`.
pub async fn tax_case(app: &TestApp, key: &str, id: &str) -> Value {
    app.read(&format!("/v1/tax-registration/{id}"), key).await
}

/// A tax create at `path` of `body` naming the client company `company` of `provider` and its
/// own id `id`, sent with the provider's `key`: 201 with both. Then the ids that do not fit:
/// the same again (409 `DUPLICATE_ID`), and under a new id (409 `COMPANY_ALREADY_REGISTERED`).
/// `body` is left with the new id.
pub async fn create_with_company_and_id(
    app: &TestApp,
    path: &str,
    key: &str,
    body: &mut Value,
    company: Uuid,
    id: Uuid,
) {
    body["company_id"] = serde_json::json!(company);
    body["tax_registration_id"] = serde_json::json!(id);
    let (s, b) = app.post_json(path, key, body).await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(b["response"]["tax_registration_id"], id.to_string());
    assert_eq!(b["response"]["company_id"], company.to_string());

    // The same company again; the same id for another company; unknown and foreign companies.
    let (s, b) = app.post_json(path, key, body).await;
    assert_error(s, &b, 409, "DUPLICATE_ID");
    body["tax_registration_id"] = serde_json::json!(Uuid::new_v4());
    let (s, b) = app.post_json(path, key, body).await;
    assert_error(s, &b, 409, "COMPANY_ALREADY_REGISTERED");
}

/// After [`create_with_company_and_id`]: `body` for another company of `provider` under the
/// case's id `id` (409 `DUPLICATE_ID`), in the sandbox for that production company (409
/// `ENVIRONMENT_MISMATCH`), for an unknown company and for a company of `other_provider` (404
/// `COMPANY_NOT_FOUND`).
pub async fn assert_other_companies_refused(
    app: &TestApp,
    path: &str,
    key: &str,
    body: &mut Value,
    (provider, other_provider): (Uuid, Uuid),
    id: Uuid,
) {
    let (company2, _) = app.client_company_like(provider, body).await;
    body["company_id"] = serde_json::json!(company2);
    body["tax_registration_id"] = serde_json::json!(id);
    let (s, b) = app.post_json(path, key, body).await;
    assert_error(s, &b, 409, "DUPLICATE_ID");
    body.as_object_mut().unwrap().remove("tax_registration_id");
    body["environment"] = serde_json::json!("sandbox");
    let (s, b) = app.post_json(path, key, body).await;
    assert_error(s, &b, 409, "ENVIRONMENT_MISMATCH");
    body["company_id"] = serde_json::json!(Uuid::new_v4());
    let (s, b) = app.post_json(path, key, body).await;
    assert_error(s, &b, 404, "COMPANY_NOT_FOUND");
    let (foreign, _) = app.client_company(other_provider, "F").await;
    body["company_id"] = serde_json::json!(foreign);
    body["environment"] = serde_json::json!("production");
    let (s, b) = app.post_json(path, key, body).await;
    assert_error(s, &b, 404, "COMPANY_NOT_FOUND");
}

/// Runs each test body against SQLite, and against PostgreSQL when `TEST_DATABASE_URL` is set
/// (otherwise the PostgreSQL half is ignored). Attributes before a test (an `ignore` of its own)
/// go to both halves.
#[macro_export]
macro_rules! backend_tests {
    ($($(#[$attr:meta])* async fn $name:ident($app:ident) $body:block)*) => {
        mod sqlite {
            #[allow(unused_imports)]
            use super::*;
            $(
                $(#[$attr])*
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let backend = $crate::common::Backend::Sqlite;
                    let $app = backend;
                    $body
                }
            )*
        }
        mod postgres {
            #[allow(unused_imports)]
            use super::*;
            $(
                $(#[$attr])*
                // A test with an `ignore` of its own has two when both variables are unset;
                // cargo shows the first.
                #[allow(unused_attributes)]
                #[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let backend = $crate::common::Backend::Postgres;
                    let $app = backend;
                    $body
                }
            )*
        }
    };
}

/// The document of type `kind` of a case as read back (`documents[].type`).
pub fn case_document<'a>(case: &'a Value, kind: &str) -> Option<&'a Value> {
    case["documents"]
        .as_array()
        .expect("documents")
        .iter()
        .find(|d| d["type"] == kind)
}

/// Downloads a document through its signed link (no key needed).
pub async fn download(app: &TestApp, doc: &Value) -> Vec<u8> {
    let res = app
        .client
        .get(doc["download_url"].as_str().expect("download_url"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    res.bytes().await.unwrap().to_vec()
}

/// The ELSTER XML is valid for the bundled schemas with libxml2 (the elster crate) and with
/// xmllint against `envelope`, a file of crates/elster/schemas (`elster-v11-fse-kapg.xsd` for a
/// UG/GmbH, `elster-v11-fse-persg.xsd` for a GbR/eGbR).
pub fn assert_valid_elster_xml(xml: &[u8], envelope: &str) {
    elster::validate(xml).unwrap_or_else(|e| panic!("libxml2: {e:?}"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fse.xml");
    std::fs::write(&file, xml).unwrap();
    let schema = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../elster/schemas")
        .join(envelope);
    assert!(schema.exists(), "{}", schema.display());
    let out = std::process::Command::new("xmllint")
        .args([
            "--noout",
            "--schema",
            schema.to_str().unwrap(),
            file.to_str().unwrap(),
        ])
        .output()
        .expect("xmllint (libxml2-utils)");
    assert!(
        out.status.success(),
        "xmllint: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The response bodies kept for idempotent replay, straight from the database.
pub async fn stored_answers(url: &str) -> Vec<Vec<u8>> {
    use sqlx::Connection;
    let sql = "SELECT response_body FROM idempotency_keys WHERE response_body IS NOT NULL";
    if url.starts_with("sqlite:") {
        let mut c = sqlx::SqliteConnection::connect(url).await.unwrap();
        sqlx::query_scalar(sql).fetch_all(&mut c).await.unwrap()
    } else {
        let mut c = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::query_scalar(sql).fetch_all(&mut c).await.unwrap()
    }
}

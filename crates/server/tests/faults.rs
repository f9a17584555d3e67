//! Storage faults, made for real against the running app: a read-only documents directory
//! (`chattr +i`), a full documents disk (a small tmpfs), an SQLite database whose write lock another connection holds, a PostgreSQL
//! server that drops and refuses connections or accepts them and never answers (a TCP proxy in
//! the test that is cut, stalled and restored), a PostgreSQL database that turns read-only, and
//! a document bucket (S3) that is cut and stalled the same way. Each time: while the fault lasts,
//! a create is answered 503 `SERVICE_UNAVAILABLE` (with `Retry-After` and a request id) and no
//! half case or stray file is left; once it clears, the same request succeeds without
//! restarting the app.

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Backend, Options, TestApp, assert_error, json};
use domain::rule_cases::example;
use serde_json::Value;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::AbortHandle;

const PATH: &str = "/v1/trade-registration";

/// The database timeout the tests configure: a request waits this long for a connection or a
/// lock before it is answered 503.
const DB_TIMEOUT: Duration = Duration::from_secs(1);

/// The database timeout of [`DB_TIMEOUT`], and API keys remembered as in production: a create
/// then authenticates from the cache during a fault and reaches its own statements (the
/// transaction through the pool), instead of stopping at the key lookup (a read on
/// `ReadConnections`).
fn short_db_timeout() -> Options {
    Options::tweak(|c| {
        c.db_timeout = DB_TIMEOUT;
        c.key_cache = Duration::from_secs(300);
    })
}

/// Status, body and `Retry-After` of a trade registration create (the `self` example, which
/// creates its client company in the same transaction).
async fn create(
    app: &TestApp,
    key: &str,
    idempotency_key: Option<&str>,
) -> (u16, Value, Option<u64>) {
    let mut rb = app.post(PATH, Some(key)).json(&example("self"));
    if let Some(k) = idempotency_key {
        rb = rb.header("idempotency-key", k);
    }
    let res = rb.send().await.expect("the app answers");
    let retry_after = res.headers().get("retry-after").map(|v| {
        v.to_str()
            .unwrap()
            .parse::<u64>()
            .expect("Retry-After in seconds")
    });
    let (status, body) = json(res).await;
    (status, body, retry_after)
}

fn assert_unavailable(status: u16, body: &Value, retry_after: Option<u64>) {
    let r = assert_error(status, body, 503, "SERVICE_UNAVAILABLE");
    let message = r["message"].as_str().unwrap();
    assert!(
        !message.contains("sqlx") && !message.contains("error:"),
        "internals leak: {message}"
    );
    assert!(
        retry_after.is_some_and(|s| s >= 1),
        "503 without Retry-After"
    );
}

/// Trade registrations as the operator API lists them.
async fn listed_cases(app: &TestApp, operator_key: &str) -> usize {
    let (s, b) = app
        .get_json("/v1/operator/trade-registrations?limit=100", operator_key)
        .await;
    assert_eq!(s, 200, "{b}");
    b["response"]["cases"].as_array().unwrap().len()
}

/// A create while the fault lasts: 503 as [`assert_unavailable`] wants it, within the
/// database timeout and a few seconds.
async fn create_is_503_in_time(app: &TestApp, key: &str, fault: &str) {
    let started = Instant::now();
    let (s, b, retry) = create(app, key, None).await;
    assert_unavailable(s, &b, retry);
    eprintln!("{fault}: 503 after {:?}", started.elapsed());
    assert!(
        started.elapsed() < DB_TIMEOUT + Duration::from_secs(4),
        "503 only after {:?}",
        started.elapsed()
    );
}

/// An app on `backend` with `options`, a provider, an operator and one case the provider
/// created: what a fault must leave as it found it.
struct Before {
    app: TestApp,
    key: String,
    operator: String,
    /// The answer to the create before the fault.
    created: Value,
    docs: PathBuf,
    files: usize,
}

impl Before {
    async fn new(backend: Backend, options: Options) -> Self {
        let app = TestApp::spawn_with(backend, options).await.unwrap();
        let (_, key) = app.provider("Plattform GmbH").await;
        let (_, operator) = app.operator("Ops").await;
        let (s, b, _) = create(&app, &key, None).await;
        assert_eq!(s, 201, "{b}");
        let docs = documents_dir(&app);
        let files = files_in(&docs);
        Before {
            app,
            key,
            operator,
            created: b,
            docs,
            files,
        }
    }

    /// No file of a failed create is left, and the operator lists `cases` cases, no half one.
    async fn assert_nothing_left(&self, cases: usize) {
        assert_eq!(
            files_in(&self.docs),
            self.files,
            "files of the failed create were left"
        );
        assert_eq!(listed_cases(&self.app, &self.operator).await, cases);
    }
}

fn files_in(dir: &Path) -> usize {
    common::files_below(dir).len()
}

fn documents_dir(app: &TestApp) -> PathBuf {
    app.state.config.storage.documents_dir.clone()
}

// --- The documents directory turns read-only -------------------------------------------------

/// `chattr -R +i` on a directory tree, undone on drop (even when the test fails, so the
/// temporary folder can be removed).
struct Immutable(PathBuf);

impl Immutable {
    /// `None` (with the reason) when this filesystem or sandbox cannot make it read-only for
    /// root.
    fn set(dir: &Path) -> Result<Self, String> {
        let out = std::process::Command::new("chattr")
            .args(["-R", "+i"])
            .arg(dir)
            .output()
            .map_err(|e| format!("chattr cannot run: {e}"))?;
        let guard = Immutable(dir.to_path_buf());
        if !out.status.success() {
            return Err(format!(
                "chattr +i failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        // Root ignores permission bits but not the immutable flag; check that it took.
        let probe = dir.join("probe");
        if std::fs::create_dir(&probe).is_ok() {
            let _ = std::fs::remove_dir(&probe);
            return Err("the immutable flag does not stop root here".into());
        }
        Ok(guard)
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .args(["-R", "-i"])
            .arg(&self.0)
            .status();
    }
}

backend_tests! {
    async fn read_only_documents_directory_is_503_and_passes(backend) {
        let before = Before::new(backend, Options::default()).await;
        let Before { app, key, operator, docs, files, .. } = &before;
        assert!(*files > 0);

        let guard = match Immutable::set(&docs) {
            Ok(g) => g,
            Err(why) => {
                eprintln!("skipped: cannot make the documents directory read-only: {why}");
                return;
            }
        };
        let (s, b, retry) = create(&app, &key, None).await;
        assert_unavailable(s, &b, retry);
        // Nothing of the failed create: no case, no file; what was stored still reads.
        before.assert_nothing_left(1).await;
        let (s, _) = json(app.get("/healthz", None).send().await.unwrap()).await;
        assert_eq!(s, 200, "the database is fine");

        drop(guard);
        let (s, b, _) = create(&app, &key, None).await;
        assert_eq!(s, 201, "after the fault: {b}");
        assert_eq!(listed_cases(&app, &operator).await, 2);
        assert!(files_in(docs) > *files);
    }
}

// --- The documents disk is full ---------------------------------------------------------------

/// A small tmpfs mounted for the test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Result<Self, String> {
        std::fs::create_dir_all(dir).unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| format!("mount cannot run: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(Tmpfs(dir.to_path_buf()))
    }

    /// Writes a file until the filesystem is full.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.0.join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        let block = vec![0u8; 64 * 1024];
        while f.write_all(&block).and_then(|()| f.flush()).is_ok() {}
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_documents_disk_is_503_and_passes() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let docs = dir.path().join("small-disk");
    let disk = match Tmpfs::mount(&docs, "8m") {
        Ok(d) => d,
        Err(why) => {
            eprintln!("skipped: cannot mount a tmpfs here: {why}");
            return;
        }
    };
    let url = common::fresh_database(Backend::Sqlite, dir.path())
        .await
        .unwrap();
    let docs_for_app = docs.clone();
    let app = TestApp::spawn_on(
        url,
        dir,
        Options::tweak(move |c| c.storage.documents_dir = docs_for_app),
    )
    .await;
    let (_, key) = app.provider("Plattform GmbH").await;
    let (_, operator) = app.operator("Ops").await;
    let (s, b, _) = create(&app, &key, None).await;
    assert_eq!(s, 201, "{b}");
    let files = files_in(&docs);

    let filler = disk.fill();
    let (s, b, retry) = create(&app, &key, None).await;
    assert_unavailable(s, &b, retry);
    assert_eq!(listed_cases(&app, &operator).await, 1);
    assert_eq!(files_in(&docs), files + 1, "only the filler is new");

    std::fs::remove_file(filler).unwrap();
    let (s, b, _) = create(&app, &key, None).await;
    assert_eq!(s, 201, "after space was freed: {b}");
    assert_eq!(listed_cases(&app, &operator).await, 2);
    drop(app);
}

// --- SQLite: another connection holds the write lock ----------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_write_lock_is_503_and_nothing_is_left() {
    let before = Before::new(Backend::Sqlite, short_db_timeout()).await;
    let Before {
        app, key, operator, ..
    } = &before;
    let first = before.created["response"]["trade_registration_id"]
        .as_str()
        .unwrap();

    // Another process-like connection takes the write lock and keeps it.
    let mut locker = common::hold_sqlite_lock(&app.database_url).await;

    create_is_503_in_time(app, key, "write lock held").await;
    // With an Idempotency-Key the claim itself cannot be written: 503 too, and no claim stays
    // behind to block the retry.
    let (s, b, retry) = create(&app, &key, Some("retry-me")).await;
    assert_unavailable(s, &b, retry);

    // The PDFs it had written are gone again; reads still work (WAL) and show no half case.
    before.assert_nothing_left(1).await;
    let (s, _) = app.get_json(&format!("{PATH}/{first}"), &key).await;
    assert_eq!(s, 200);

    common::release_sqlite_lock(&mut locker).await;
    let (s, b, _) = create(&app, &key, Some("retry-me")).await;
    assert_eq!(s, 201, "after the lock is released: {b}");
    let (s, b, _) = create(&app, &key, None).await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(listed_cases(&app, &operator).await, 3);
}

// --- PostgreSQL: the server goes away --------------------------------------------------------

/// A TCP proxy between the app and PostgreSQL (or the S3 test server) that can be cut (open
/// connections dropped, new ones refused: nothing listens) and restored on the same port, or
/// slowed down.
struct Proxy {
    addr: SocketAddr,
    target: SocketAddr,
    /// The task accepting connections (forwarding them, or holding them during a stall).
    accept: Mutex<Option<tokio::task::JoinHandle<()>>>,
    conns: Arc<Mutex<Vec<AbortHandle>>>,
    /// For new connections: the server's answers pass in pieces of this many bytes with this
    /// pause after each (a slow link); `None` forwards at full speed.
    throttle: Arc<Mutex<Option<(usize, Duration)>>>,
}

impl Proxy {
    async fn start(target: SocketAddr) -> Arc<Self> {
        let listener = Self::bind("127.0.0.1:0".parse().unwrap());
        let proxy = Arc::new(Proxy {
            addr: listener.local_addr().unwrap(),
            target,
            accept: Mutex::new(None),
            conns: Arc::new(Mutex::new(Vec::new())),
            throttle: Arc::new(Mutex::new(None)),
        });
        proxy.serve(listener);
        proxy
    }

    fn bind(addr: SocketAddr) -> TcpListener {
        let socket = TcpSocket::new_v4().unwrap();
        socket.set_reuseaddr(true).unwrap();
        socket.bind(addr).unwrap();
        socket.listen(64).unwrap()
    }

    fn serve(&self, listener: TcpListener) {
        let target = self.target;
        let conns = self.conns.clone();
        let throttle = self.throttle.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    continue;
                };
                let throttle = *throttle.lock().unwrap();
                let handle = tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(target).await else {
                        return;
                    };
                    match throttle {
                        None => {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                        Some((piece, pause)) => {
                            use tokio::io::{AsyncReadExt, AsyncWriteExt};
                            let (mut client_read, mut client_write) = client.into_split();
                            let (mut server_read, mut server_write) = server.into_split();
                            let upstream = tokio::spawn(async move {
                                let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
                            });
                            let mut buf = vec![0u8; piece];
                            while let Ok(n) = server_read.read(&mut buf).await {
                                if n == 0 || client_write.write_all(&buf[..n]).await.is_err() {
                                    break;
                                }
                                tokio::time::sleep(pause).await;
                            }
                            upstream.abort();
                        }
                    }
                });
                conns.lock().unwrap().push(handle.abort_handle());
            }
        });
        *self.accept.lock().unwrap() = Some(task);
    }

    /// Ends the accepting task and waits until it is gone, with its listener and whatever
    /// connections it held.
    async fn stop_accepting(&self) {
        let accepting = self.accept.lock().unwrap().take();
        if let Some(task) = accepting {
            task.abort();
            let _ = task.await;
        }
    }

    /// Stops listening and drops every open connection.
    async fn cut(&self) {
        self.stop_accepting().await;
        for c in self.conns.lock().unwrap().drain(..) {
            c.abort();
        }
        // Let the aborted tasks drop their sockets.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            TcpStream::connect(self.addr).await.is_err(),
            "the cut proxy still accepts"
        );
    }

    /// New connections pass the server's answers `piece` bytes at a time, pausing after each.
    fn throttle(&self, piece: usize, pause: Duration) {
        *self.throttle.lock().unwrap() = Some((piece, pause));
    }

    /// Listens and forwards again on the same port, after a cut or a stall.
    async fn restore(&self) {
        self.stop_accepting().await;
        self.serve(Self::bind(self.addr));
    }

    /// Drops every open connection, then accepts new ones and never answers on them (a server
    /// that hangs, or a network that swallows packets). [`Proxy::restore`] ends it.
    async fn stall(&self) {
        self.cut().await;
        let listener = Self::bind(self.addr);
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        *self.accept.lock().unwrap() = Some(task);
    }
}

/// An app on a fresh PostgreSQL database reached through a [`Proxy`], with a provider key and
/// one trade case created (`case` is its path); `None` (skipped) without `TEST_DATABASE_URL`.
struct Proxied {
    app: TestApp,
    proxy: Arc<Proxy>,
    direct: String,
    key: String,
    case: String,
}

impl Proxied {
    async fn start() -> Option<Self> {
        if common::pg_base_url().is_none() {
            eprintln!("skipped: TEST_DATABASE_URL is not set");
            return None;
        }
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let direct = common::fresh_database(Backend::Postgres, dir.path())
            .await
            .unwrap();
        let proxy = Proxy::start(pg_server(&direct)).await;
        let app = TestApp::spawn_on(via(&direct, proxy.addr), dir, short_db_timeout()).await;
        let (_, key) = app.provider("Plattform GmbH").await;
        let (s, b, _) = create(&app, &key, None).await;
        assert_eq!(s, 201, "{b}");
        let case = format!(
            "{PATH}/{}",
            b["response"]["trade_registration_id"].as_str().unwrap()
        );
        Some(Proxied {
            app,
            proxy,
            direct,
            key,
            case,
        })
    }
}

/// Status, body and `Retry-After` of a GET of `case`.
async fn read(app: &TestApp, case: &str, key: &str) -> (u16, Value, Option<u64>) {
    let res = app.get(case, Some(key)).send().await.unwrap();
    let retry = res
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().parse().unwrap());
    let (s, b) = json(res).await;
    (s, b, retry)
}

/// The same database URL with another host and port.
fn via(url: &str, addr: SocketAddr) -> String {
    let mut u = url::Url::parse(url).unwrap();
    u.set_host(Some(&addr.ip().to_string())).unwrap();
    u.set_port(Some(addr.port())).unwrap();
    u.to_string()
}

fn pg_server(url: &str) -> SocketAddr {
    let u = url::Url::parse(url).unwrap();
    let host = u.host_str().unwrap_or("127.0.0.1");
    let host = if host == "localhost" {
        "127.0.0.1"
    } else {
        host
    };
    format!("{host}:{}", u.port().unwrap_or(5432))
        .parse()
        .unwrap()
}

async fn count_rows(direct_url: &str, table: &str) -> i64 {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(direct_url).await.unwrap();
    sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
        .fetch_one(&mut conn)
        .await
        .unwrap()
}

/// `filing serve` started while PostgreSQL cannot be reached yet keeps trying (saying so) and
/// serves once the database is there; with `FILING_DB_STARTUP_WAIT_SECS=0` it gives up at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_not_up_yet_at_start_is_waited_for() {
    if common::pg_base_url().is_none() {
        eprintln!("skipped: TEST_DATABASE_URL is not set");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let direct = common::fresh_database(Backend::Postgres, dir.path())
        .await
        .unwrap();
    let proxy = Proxy::start(pg_server(&direct)).await;
    proxy.cut().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let serve = |wait: &str, log: &Path| {
        let log = std::fs::File::create(log).unwrap();
        tokio::process::Command::new(env!("CARGO_BIN_EXE_filing"))
            .arg("serve")
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("FILING_DATA_DIR", dir.path().join("data"))
            .env("DATABASE_URL", via(&direct, proxy.addr))
            .env("FILING_LISTEN", format!("127.0.0.1:{port}"))
            .env("FILING_DB_TIMEOUT_SECS", "1")
            .env("FILING_DB_STARTUP_WAIT_SECS", wait)
            .env("FILING_LOG", "warn")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .unwrap()
    };
    let healthz = format!("http://127.0.0.1:{port}/healthz");
    server::webhooks::install_tls();
    let client = reqwest::Client::new();

    // No wait: the start fails, naming the database.
    let log = dir.path().join("no-wait.log");
    let mut child = serve("0", &log);
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("gave up within 20 s")
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!status.success());
    assert!(text.contains("cannot open the database"), "{text}");

    // Waiting: the process stays up, says why, and serves once the database is reachable.
    let log = dir.path().join("wait.log");
    let mut child = serve("60", &log);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(child.try_wait().unwrap().is_none(), "exited while waiting");
    assert!(
        client.get(&healthz).send().await.is_err(),
        "listens without a database"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("cannot be reached yet"), "{text}");
    proxy.restore().await;
    let started = Instant::now();
    loop {
        if let Ok(r) = client.get(&healthz).send().await {
            assert_eq!(r.status(), 200);
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "not serving 30 s after the database came back: {}",
            std::fs::read_to_string(&log).unwrap()
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "exited: {}",
            std::fs::read_to_string(&log).unwrap()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    eprintln!(
        "serving {:?} after the database came back",
        started.elapsed()
    );
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_going_away_is_503_within_the_timeout_and_recovers() {
    let Some(p) = Proxied::start().await else {
        return;
    };
    let (_, operator) = p.app.operator("Ops").await;
    let files = files_in(&documents_dir(&p.app));
    // Reads use connections of their own (store::postgres::ReadConnections); leave one idle.
    let (s, b) = p.app.get_json(&p.case, &p.key).await;
    assert_eq!(s, 200, "{b}");

    p.proxy.cut().await;
    // The idle read connection is dead and a new one is refused.
    let started = Instant::now();
    let (s, b, retry) = read(&p.app, &p.case, &p.key).await;
    assert_unavailable(s, &b, retry);
    assert!(started.elapsed() < DB_TIMEOUT + Duration::from_secs(4));
    for _ in 0..2 {
        // The pooled connections are dead and new ones are refused.
        create_is_503_in_time(&p.app, &p.key, "database down").await;
    }
    let (s, b) = json(p.app.get("/healthz", None).send().await.unwrap()).await;
    assert_error(s, &b, 503, "SERVICE_UNAVAILABLE");
    assert_eq!(count_rows(&p.direct, "trade_registrations").await, 1);
    assert_eq!(files_in(&documents_dir(&p.app)), files);

    // The server is back: the pool reconnects by itself.
    p.proxy.restore().await;
    let (s, b) = p.app.get_json(&p.case, &p.key).await;
    assert_eq!(s, 200, "read after the outage: {b}");
    let (s, b, _) = create(&p.app, &p.key, None).await;
    assert_eq!(s, 201, "after the outage: {b}");
    let (s, _) = json(p.app.get("/healthz", None).send().await.unwrap()).await;
    assert_eq!(s, 200);
    assert_eq!(listed_cases(&p.app, &operator).await, 2);
}

/// PostgreSQL that accepts connections and never answers: reads (on their own connections) and
/// creates (through the pool) are 503 within the database timeout, not left waiting, and both
/// work again once it answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_not_answering_is_503_within_the_timeout() {
    let Some(p) = Proxied::start().await else {
        return;
    };

    p.proxy.stall().await;
    for _ in 0..2 {
        let started = Instant::now();
        let (s, b, retry) = read(&p.app, &p.case, &p.key).await;
        assert_unavailable(s, &b, retry);
        let waited = started.elapsed();
        eprintln!("read with the database hanging: 503 after {waited:?}");
        assert!(
            waited >= DB_TIMEOUT / 2 && waited < DB_TIMEOUT + Duration::from_secs(3),
            "{waited:?}"
        );

        create_is_503_in_time(&p.app, &p.key, "create with the database hanging").await;
    }
    assert_eq!(count_rows(&p.direct, "trade_registrations").await, 1);

    p.proxy.restore().await;
    let (s, b) = p.app.get_json(&p.case, &p.key).await;
    assert_eq!(s, 200, "read after the database answers again: {b}");
    let (s, b, _) = create(&p.app, &p.key, None).await;
    assert_eq!(s, 201, "create after the database answers again: {b}");
}

/// Sets `default_transaction_read_only` of the database and ends its sessions (waiting for
/// them to go), so the app's next connections get the new setting, as after a failover.
async fn set_read_only(direct_url: &str, on: bool) {
    use sqlx::Connection;
    let name = url::Url::parse(direct_url)
        .unwrap()
        .path()
        .trim_start_matches('/')
        .to_string();
    let mut admin = sqlx::PgConnection::connect(&common::pg_base_url().unwrap())
        .await
        .unwrap();
    let value = if on { "on" } else { "off" };
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "ALTER DATABASE {name} SET default_transaction_read_only = {value}"
    )))
    .execute(&mut admin)
    .await
    .unwrap();
    sqlx::query(
        "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity \
         WHERE datname = $1 AND pid <> pg_backend_pid()",
    )
    .bind(&name)
    .execute(&mut admin)
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_read_only_is_503_and_leaves_no_files() {
    if common::pg_base_url().is_none() {
        eprintln!("skipped: TEST_DATABASE_URL is not set");
        return;
    }
    let before = Before::new(Backend::Postgres, short_db_timeout()).await;
    let Before {
        app, key, operator, ..
    } = &before;

    set_read_only(&app.database_url, true).await;
    // Reads work, so the create gets as far as writing its PDFs; the transaction is refused.
    let (s, b, retry) = create(&app, &key, None).await;
    assert_unavailable(s, &b, retry);
    before.assert_nothing_left(1).await;

    set_read_only(&app.database_url, false).await;
    let (s, b, _) = create(&app, &key, None).await;
    assert_eq!(s, 201, "after the fault: {b}");
    assert_eq!(listed_cases(&app, &operator).await, 2);
}

// --- The document bucket goes away ------------------------------------------------------------

/// Documents in an S3 bucket reached through a [`Proxy`] (skipped without `TEST_S3_ENDPOINT`):
/// while the bucket is unreachable, and while it accepts connections and never answers, creates
/// and downloads are 503 within the configured bound, no case is left without its documents, and
/// both work again once it is back, without a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn document_bucket_going_away_is_503_and_recovers() {
    let Some(endpoint) = common::s3_endpoint() else {
        eprintln!("skipped: TEST_S3_ENDPOINT is not set");
        return;
    };
    let target = endpoint
        .strip_prefix("http://")
        .expect("an http:// test endpoint")
        .parse::<SocketAddr>()
        .expect("TEST_S3_ENDPOINT as http://IP:PORT");
    let proxy = Proxy::start(target).await;
    let mut settings = common::fresh_bucket(&format!("http://{}", proxy.addr))
        .await
        .unwrap();
    const BOUND: Duration = Duration::from_secs(2);
    settings.timeout = BOUND;
    let bucket = settings.bucket.clone();
    let before = Before::new(Backend::Sqlite, common::on_bucket(settings)).await;
    let Before {
        app, key, operator, ..
    } = &before;
    let link = before.created["response"]["owners"][0]["documents"]["gewa_1"]["download_url"]
        .as_str()
        .unwrap()
        .to_owned();
    let download = |link: String| {
        let client = app.client.clone();
        async move {
            let res = client.get(link).send().await.unwrap();
            let status = res.status().as_u16();
            let retry_after = res.headers().get("retry-after").is_some();
            (status, res.bytes().await.unwrap(), retry_after)
        }
    };
    let (s, pdf, _) = download(link.clone()).await;
    assert_eq!(s, 200);

    // A slow bucket that keeps sending: the download takes longer than the bound and still
    // arrives whole (the bound is per operation and, for a body, per silence).
    // A tenth of the file every 300 ms: about 3 s for the whole, whatever the PDF's size.
    proxy.throttle(pdf.len() / 10, Duration::from_millis(300));
    proxy.cut().await;
    proxy.restore().await;
    let started = Instant::now();
    let (s, slow, _) = download(link.clone()).await;
    let took = started.elapsed();
    eprintln!("slow bucket: {} bytes in {took:?}", slow.len());
    assert_eq!(s, 200);
    assert!(took > BOUND, "the download was not slowed down: {took:?}");
    assert_eq!(slow, pdf, "a slow download arrives whole");

    // A bucket that stops sending halfway through a download: the answer's head is out, so the
    // download ends cut short (the client sees a broken body, never a complete-looking file)
    // once the bound passes without data, instead of hanging.
    proxy.throttle(pdf.len() / 2, Duration::from_secs(3600));
    proxy.cut().await;
    proxy.restore().await;
    let started = Instant::now();
    let res = app.client.get(link.clone()).send().await.unwrap();
    assert_eq!(res.status(), 200);
    // A regression would hang here: bounded, so that it fails instead.
    let body = tokio::time::timeout(BOUND * 5, res.bytes())
        .await
        .expect("the stalled download never ended");
    let took = started.elapsed();
    eprintln!(
        "bucket stalled mid-body: {:?} after {took:?}",
        body.as_ref().map(|b| b.len())
    );
    assert!(
        body.is_err(),
        "a stalled download looked complete: {:?} bytes",
        body.map(|b| b.len())
    );
    assert!(
        took >= BOUND && took < BOUND + Duration::from_secs(3),
        "cut after {took:?}"
    );
    *proxy.throttle.lock().unwrap() = None;
    // Connections opened while throttled stay so: drop them.
    proxy.cut().await;
    proxy.restore().await;
    let (s, whole, _) = download(link.clone()).await;
    assert_eq!((s, whole), (200, pdf.clone()), "the next download is whole");

    for fault in ["refused", "not answering"] {
        if fault == "refused" {
            proxy.cut().await;
        } else {
            proxy.stall().await;
        }
        let started = Instant::now();
        let (s, b, retry) = create(&app, &key, None).await;
        assert_unavailable(s, &b, retry);
        let took = started.elapsed();
        eprintln!("bucket {fault}: create 503 after {took:?}");
        assert!(
            took < BOUND + Duration::from_secs(3),
            "{fault}: 503 after {took:?}"
        );
        let started = Instant::now();
        let (s, _, retry_after) = download(link.clone()).await;
        assert_eq!((s, retry_after), (503, true), "{fault}: download");
        assert!(started.elapsed() < BOUND + Duration::from_secs(3));
        assert_eq!(
            listed_cases(&app, &operator).await,
            1,
            "{fault}: no case without documents"
        );
        let (s, _) = json(app.get("/healthz", None).send().await.unwrap()).await;
        assert_eq!(s, 200, "{fault}: the database is fine");
        proxy.restore().await;
    }

    let (s, b, _) = create(&app, &key, None).await;
    assert_eq!(s, 201, "after the outage: {b}");
    assert_eq!(listed_cases(&app, &operator).await, 2);
    let (s, again, _) = download(link).await;
    assert_eq!((s, again), (200, pdf));
    assert_eq!(common::bucket_keys(&bucket).await.len(), 2);
}

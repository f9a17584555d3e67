//! The database: SQLite whose write lock another connection holds; PostgreSQL not up yet at
//! start, going away, not answering, and turning read-only.

use super::*;

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
    let (s, b, retry) = create(app, key, Some("retry-me")).await;
    assert_unavailable(s, &b, retry);

    // The PDFs it had written are gone again; reads still work (WAL) and show no half case.
    before.assert_nothing_left(1).await;
    let (s, _) = app.get_json(&format!("{PATH}/{first}"), key).await;
    assert_eq!(s, 200);

    common::release_sqlite_lock(&mut locker).await;
    let (s, b, _) = create(app, key, Some("retry-me")).await;
    assert_eq!(s, 201, "after the lock is released: {b}");
    let (s, b, _) = create(app, key, None).await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(listed_cases(app, operator).await, 3);
}

// --- PostgreSQL: the server goes away --------------------------------------------------------

/// An app on a fresh PostgreSQL database reached through a [`Proxy`], with a provider key and
/// one trade case created (`case` is its path).
struct Proxied {
    app: TestApp,
    proxy: Arc<Proxy>,
    direct: String,
    key: String,
    case: String,
}

impl Proxied {
    async fn start() -> Self {
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
        Proxied {
            app,
            proxy,
            direct,
            key,
            case,
        }
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
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_not_up_yet_at_start_is_waited_for() {
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
            .env("FILING_RATE_LIMIT_PER_SECOND", "0")
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

#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_going_away_is_503_within_the_timeout_and_recovers() {
    let p = Proxied::start().await;
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
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_not_answering_is_503_within_the_timeout() {
    let p = Proxied::start().await;

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
    let mut admin = sqlx::PgConnection::connect(&common::pg_base_url())
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

#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_read_only_is_503_and_leaves_no_files() {
    let before = Before::new(Backend::Postgres, short_db_timeout()).await;
    let Before {
        app, key, operator, ..
    } = &before;

    set_read_only(&app.database_url, true).await;
    // Reads work, so the create gets as far as writing its PDFs; the transaction is refused.
    let (s, b, retry) = create(app, key, None).await;
    assert_unavailable(s, &b, retry);
    before.assert_nothing_left(1).await;

    set_read_only(&app.database_url, false).await;
    let (s, b, _) = create(app, key, None).await;
    assert_eq!(s, 201, "after the fault: {b}");
    assert_eq!(listed_cases(app, operator).await, 2);
}

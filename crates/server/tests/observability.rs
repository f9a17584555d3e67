//! What an operator watches: `/livez` and `/readyz`, `GET /metrics` (operator keys on the main
//! listener, no key on `FILING_METRICS_LISTEN`), the JSON request log line, `FILING_LOG`
//! refused at start, and a start that cannot reach its database.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Backend, TestApp, app, assert_error, filing_command, filing_process, json};
use serde_json::Value;

const TRADE: &str = "/v1/trade-registration";

/// The metrics text as `key` gets it from the main listener: status, content type, body.
async fn scrape(app: &TestApp, key: Option<&str>) -> (u16, String, String) {
    let res = app.get("/metrics", key).send().await.unwrap();
    let status = res.status().as_u16();
    let kind = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    (status, kind, res.text().await.unwrap())
}

/// The value of the sample `series` (name and labels exactly as encoded) in `text`.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let value = line.strip_prefix(series)?.strip_prefix(' ')?;
        value.split(' ').next()?.parse().ok()
    })
}

/// `/readyz`: its status and `checks`.
async fn readyz(app: &TestApp) -> (u16, Value) {
    let (s, b) = json(app.get("/readyz", None).send().await.unwrap()).await;
    (s, b)
}

backend_tests! {
    async fn metrics_count_requests_and_cases_for_operator_keys_only(backend) {
        let app = app(backend).await;
        let (provider, key) = app.provider("Metrics Provider GmbH").await;
        let (operator, op_key) = app.operator("Ops").await;
        let (s, b) = app.post_json(TRADE, &key, &domain::rule_cases::example("self")).await;
        assert_eq!(s, 201, "{b}");
        let case = b["response"]["trade_registration_id"].as_str().unwrap().to_owned();
        let company = b["response"]["company_id"].as_str().unwrap().to_owned();
        let (s, _) = app.get_json(&format!("{TRADE}/{case}"), &key).await;
        assert_eq!(s, 200);
        let (s, _) = json(app.get("/no/such/route", Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 404);

        // Operator keys only on the main listener, as every operator route.
        let (s, _, body) = scrape(&app, None).await;
        assert_error(s, &serde_json::from_str(&body).unwrap(), 401, "UNAUTHORIZED");
        let (s, _, body) = scrape(&app, Some(&key)).await;
        assert_error(s, &serde_json::from_str(&body).unwrap(), 403, "FORBIDDEN");

        let (s, kind, text) = scrape(&app, Some(&op_key)).await;
        assert_eq!(s, 200, "{text}");
        assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
        assert!(text.ends_with("# EOF\n"), "{text}");
        let count = |series: &str| sample(&text, series).unwrap_or_else(|| panic!("no {series} in\n{text}"));
        // Requests by route template (never the raw path) and status; unknown paths as one.
        let created = r#"filing_http_request_duration_seconds_count{method="POST",route="/v1/trade-registration",status="201"}"#;
        assert_eq!(count(created), 1.0);
        let read = r#"filing_http_request_duration_seconds_count{method="GET",route="/v1/trade-registration/{trade_registration_id}",status="200"}"#;
        assert_eq!(count(read), 1.0);
        assert_eq!(count(r#"filing_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}"#), 1.0);
        assert!(text.contains(r#"filing_http_request_duration_seconds_bucket{le="0.001",method="POST",route="/v1/trade-registration",status="201"}"#)
            || text.contains(r#"filing_http_request_duration_seconds_bucket{method="POST",route="/v1/trade-registration",status="201",le="0.001"}"#),
            "{text}");
        assert_eq!(count(r#"filing_cases_created_total{kind="trade",environment="production"}"#), 1.0);
        // Read from the database: the new case, and zero for every other status.
        assert_eq!(count(r#"filing_cases{kind="trade",environment="production",status="form-rendered"}"#), 1.0);
        assert_eq!(count(r#"filing_cases{kind="tax",environment="sandbox",status="validated"}"#), 0.0);
        assert_eq!(count("filing_webhook_outbox_pending"), 0.0);
        assert_eq!(count("filing_webhook_outbox_oldest_age_seconds"), 0.0);
        assert_eq!(count("filing_upload_slots_in_use"), 0.0);
        assert_eq!(count("filing_upload_slots_max"), 16.0);
        assert!(count("process_resident_memory_bytes") > 1e6);
        let pools = match backend {
            Backend::Sqlite => ["writer", "reads"],
            Backend::Postgres => ["pool", "reads"],
        };
        for pool in pools {
            let max = count(&format!(r#"filing_db_connections_max{{pool="{pool}"}}"#));
            assert!(max >= 1.0, "{pool}");
            let in_use = count(&format!(r#"filing_db_connections{{pool="{pool}",state="in_use"}}"#));
            let idle = count(&format!(r#"filing_db_connections{{pool="{pool}",state="idle"}}"#));
            assert!(in_use + idle <= max, "{pool}: {in_use} + {idle} > {max}");
        }
        // No label names a provider, a company, an operator or a case.
        for id in [provider.to_string(), operator.to_string(), company, case] {
            assert!(!text.contains(&id), "{id} in the metrics");
        }
        // The scrape itself is counted too (its own route), as a 200 of an operator.
        let (_, _, again) = scrape(&app, Some(&op_key)).await;
        assert_eq!(sample(&again, r#"filing_http_request_duration_seconds_count{method="GET",route="/metrics",status="200"}"#), Some(1.0), "{again}");
    }

    async fn webhook_outbox_and_deliveries_show_in_the_metrics(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("Hooks GmbH").await;
        let (_, op_key) = app.operator("Ops").await;
        // An endpoint that refuses connections: every attempt fails and is retried later.
        let closed = common::free_port();
        let (s, b) = app
            .post_json("/v1/webhook-endpoints", &key, &serde_json::json!({"url": format!("http://127.0.0.1:{closed}/hook")}))
            .await;
        assert_eq!(s, 201, "{b}");
        let (s, b) = app.post_json(TRADE, &key, &domain::rule_cases::example("self")).await;
        assert_eq!(s, 201, "{b}");
        let retrying = r#"filing_webhook_deliveries_total{outcome="retrying"}"#;
        let started = Instant::now();
        let text = loop {
            let (_, _, text) = scrape(&app, Some(&op_key)).await;
            if sample(&text, retrying).is_some_and(|n| n >= 1.0) {
                break text;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "no failed attempt counted:\n{text}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(sample(&text, r#"filing_webhook_deliveries_total{outcome="delivered"}"#), None);
        // The database gauges are those of the first scrape (the outbox is read at most every 15 s): the
        // message was pending then, as it is still (retried in 5 s at the earliest).
        assert!(sample(&text, "filing_webhook_outbox_pending").unwrap() >= 1.0, "{text}");
        assert!(sample(&text, "filing_webhook_outbox_oldest_age_seconds").unwrap() >= 0.0);
    }

    async fn livez_and_readyz_say_what_fails(backend) {
        let app = app(backend).await;
        let (s, b) = json(app.get("/livez", None).send().await.unwrap()).await;
        assert_eq!((s, b["response"]["result"].as_str()), (200, Some("success")), "{b}");
        let (s, b) = readyz(&app).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["checks"], serde_json::json!({"database": "ok", "migrations": "ok", "documents": "ok"}));
        assert_eq!(b["response"]["message"], "ready");

        // The documents folder gone (an unmounted volume): not ready, naming it.
        let documents = app.state.config.storage.documents_dir.clone();
        let aside = documents.with_extension("aside");
        std::fs::rename(&documents, &aside).unwrap();
        let (s, b) = readyz(&app).await;
        assert_eq!(s, 503, "{b}");
        assert_eq!(b["response"]["result"], "error");
        assert_eq!(b["response"]["checks"]["documents"], "failed");
        assert_eq!(b["response"]["checks"]["database"], "ok");
        assert_eq!(b["response"]["message"], "not ready: documents");
        std::fs::rename(&aside, &documents).unwrap();
        assert_eq!(readyz(&app).await.0, 200);

        // A migration the binary bundles is not recorded (a database restored from an older
        // release's backup while this one runs): not ready.
        let last = forget_last_migration(&app.database_url).await;
        let (s, b) = readyz(&app).await;
        assert_eq!(s, 503, "{b}");
        assert_eq!(b["response"]["checks"]["migrations"], "failed");
        assert_eq!(b["response"]["message"], "not ready: migrations");
        let state = app.state.repo.migration_state().await.unwrap();
        assert_eq!(state.pending(), vec![last]);
        restore_migration(&app.database_url, last).await;
        assert_eq!(readyz(&app).await.0, 200);

        // PostgreSQL refusing connections: the database fails and the migrations are not
        // read; `/livez` does not ask the database.
        if backend == Backend::Postgres {
            let name = app.database_url.rsplit('/').next().unwrap().split('?').next().unwrap().to_owned();
            admin(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS false")).await;
            admin(&format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' AND pid <> pg_backend_pid()")).await;
            let (s, b) = readyz(&app).await;
            assert_eq!(s, 503, "{b}");
            assert_eq!(b["response"]["checks"], serde_json::json!({"database": "failed", "migrations": "unchecked", "documents": "ok"}));
            assert_eq!(b["response"]["message"], "not ready: database, migrations");
            let (s, _) = json(app.get("/livez", None).send().await.unwrap()).await;
            assert_eq!(s, 200);
            admin(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true")).await;
            let started = Instant::now();
            while readyz(&app).await.0 != 200 {
                assert!(started.elapsed() < Duration::from_secs(15), "not ready again");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

/// Runs `sql` on the PostgreSQL test server's own database.
async fn admin(sql: &str) {
    use sqlx::Connection;
    let mut c = sqlx::PgConnection::connect(&common::pg_base_url())
        .await
        .unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(&mut c)
        .await
        .unwrap();
}

/// Makes the newest migration look unapplied (its row's version negated); its version.
async fn forget_last_migration(url: &str) -> i64 {
    let sql = "UPDATE _sqlx_migrations SET version = -version \
               WHERE version = (SELECT MAX(version) FROM _sqlx_migrations) RETURNING -version";
    run(url, sql).await
}

/// Undoes [`forget_last_migration`].
async fn restore_migration(url: &str, version: i64) {
    let sql = format!(
        "UPDATE _sqlx_migrations SET version = -version WHERE version = -{version} RETURNING version"
    );
    assert_eq!(run::<i64>(url, &sql).await, version);
}

async fn run<T>(url: &str, sql: &str) -> T
where
    T: Send + Unpin,
    for<'r> T: sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite>,
    for<'r> T: sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres>,
{
    use sqlx::Connection;
    let sql = sqlx::AssertSqlSafe(sql.to_owned());
    if url.starts_with("sqlite:") {
        let mut c = sqlx::SqliteConnection::connect(url).await.unwrap();
        sqlx::query_scalar(sql).fetch_one(&mut c).await.unwrap()
    } else {
        let mut c = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::query_scalar(sql).fetch_one(&mut c).await.unwrap()
    }
}

/// `filing providers create` in `dir`: the company id and key.
fn provider(dir: &std::path::Path, url: &str) -> (String, String) {
    let (code, out, err) = common::output_of(filing_command(dir, url).args([
        "providers",
        "create",
        "--init",
        "--name",
        "Log GmbH",
    ]));
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(out.trim()).expect("one JSON object");
    (
        v["company_id"].as_str().unwrap().to_owned(),
        v["api_key"].as_str().unwrap().to_owned(),
    )
}

/// Waits for `base` to answer `/livez`.
async fn wait_up(client: &reqwest::Client, base: &str, child: &mut tokio::process::Child) {
    let started = Instant::now();
    while client.get(format!("{base}/livez")).send().await.is_err() {
        assert!(child.try_wait().unwrap().is_none(), "the server exited");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the server did not come up"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The binary with JSON logs and a metrics listener: each request line is JSON with the
/// latency as a number of milliseconds, the route template and the company of the key (never
/// the key); `/metrics` answers without a key on the metrics address only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_request_lines_and_the_metrics_listener() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("data/filing.db").display());
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let (company, key) = provider(dir.path(), &url);
    server::webhooks::install_tls();
    let (port, metrics_port) = (common::free_port(), common::free_port());
    let log = dir.path().join("serve.log");
    let mut child = filing_process(dir.path())
        .arg("serve")
        .env("DATABASE_URL", &url)
        .env("FILING_LISTEN", format!("127.0.0.1:{port}"))
        .env("FILING_METRICS_LISTEN", format!("127.0.0.1:{metrics_port}"))
        .env("FILING_LOG", "info")
        .env("FILING_LOG_FORMAT", "json")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let (base, client) = common::served_on(port, Duration::from_secs(10));
    let metrics = format!("http://127.0.0.1:{metrics_port}");
    wait_up(&client, &base, &mut child).await;

    let res = client
        .get(format!("{base}/v1/companies/{company}"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);

    // The metrics address: no key, /metrics only.
    let res = client
        .get(format!("{metrics}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let text = res.text().await.unwrap();
    let series = r#"filing_http_request_duration_seconds_count{method="GET",route="/v1/companies/{company_id}",status="200"}"#;
    assert_eq!(sample(&text, series), Some(1.0), "{text}");
    assert!(text.contains("# TYPE filing_cases gauge"), "{text}");
    let res = client
        .get(format!("{metrics}/v1/companies/{company}"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    // The main listener still wants an operator key.
    let res = client.get(format!("{base}/metrics")).send().await.unwrap();
    assert_eq!(res.status(), 401);

    // Stopped, so that every line is written.
    let pid = child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .unwrap()
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{text}");
    assert!(!text.contains(&key), "the key is in the log:\n{text}");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let answered: Vec<&Value> = lines
        .iter()
        .filter(|l| l["fields"]["message"] == "finished processing request")
        .collect();
    let line = answered
        .iter()
        .find(|l| l["span"]["route"] == "/v1/companies/{company_id}")
        .unwrap_or_else(|| panic!("no request line of the company read:\n{text}"));
    assert!(line["fields"]["latency_ms"].is_f64(), "{line}");
    assert_eq!(line["fields"]["status"], 200, "{line}");
    assert_eq!(line["span"]["company_id"], company.as_str(), "{line}");
    assert_eq!(
        line["span"]["path"],
        format!("/v1/companies/{company}"),
        "{line}"
    );
    // A request without a key names no company.
    let anonymous = answered
        .iter()
        .find(|l| l["span"]["route"] == "/metrics")
        .unwrap_or_else(|| panic!("no request line of /metrics:\n{text}"));
    assert!(anonymous["span"].get("company_id").is_none(), "{anonymous}");
    assert_eq!(anonymous["fields"]["status"], 401);
}

/// An invalid `FILING_LOG` stops the start like any other setting: exit code 2, a message
/// naming the variable.
#[test]
fn an_invalid_log_filter_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("data/filing.db").display());
    for (filter, says) in [
        ("inof", "is not a level"),
        ("info,server=loud", "FILING_LOG"),
    ] {
        let (code, _, err) = common::output_of(
            filing_command(dir.path(), &url)
                .arg("serve")
                .env("FILING_LOG", filter)
                .env("FILING_LISTEN", "127.0.0.1:0"),
        );
        assert_eq!(code, Some(2), "{filter}: {err}");
        assert!(
            err.contains("FILING_LOG") && err.contains(says),
            "{filter}: {err}"
        );
    }
    assert!(!dir.path().join("data").exists(), "started before refusing");
}

/// Runs `filing serve` against `database_url` with a startup wait of 2 s: how long it took to
/// exit, its exit code and its standard error.
fn start_against(database_url: &str) -> (Duration, Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (code, _, err) = common::output_of(
        filing_command(dir.path(), database_url)
            .arg("serve")
            .env("FILING_LISTEN", "127.0.0.1:0")
            .env("FILING_LOG", "warn")
            .env("FILING_DB_STARTUP_WAIT_SECS", "2"),
    );
    (started.elapsed(), code, err)
}

/// A PostgreSQL port where nothing listens: the start gives up within the wait and says where
/// it looked, what failed and what to check.
#[test]
fn an_unreachable_database_stops_the_start_within_the_wait() {
    let port = common::free_port();
    let (took, code, err) =
        start_against(&format!("postgres://filing:secret@127.0.0.1:{port}/filing"));
    assert_eq!(code, Some(1), "{err}");
    assert!(took < Duration::from_secs(4), "took {took:?}: {err}");
    assert!(
        took >= Duration::from_secs(2),
        "gave up before the wait: {took:?}: {err}"
    );
    let last = err.lines().last().unwrap_or("");
    for says in [
        "cannot open the database",
        &format!("PostgreSQL at 127.0.0.1:{port} (database filing)"),
        "Connection refused",
        "FILING_DB_STARTUP_WAIT_SECS=2",
        "check that PostgreSQL runs",
    ] {
        assert!(last.contains(says), "{says:?} not in {last:?}");
    }
    assert!(!err.contains("secret"), "the password is shown: {err}");
}

/// A server that accepts connections and never answers (a hung host, a firewall that drops):
/// each attempt gets only the time left, so the start still ends within the wait (before, one
/// attempt alone took FILING_DB_TIMEOUT_SECS, 5 s).
#[test]
fn a_database_that_never_answers_stops_the_start_within_the_wait() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = std::thread::spawn(move || {
        let mut open = Vec::new();
        for stream in listener.incoming().take(20) {
            open.push(stream);
        }
    });
    let (took, code, err) = start_against(&format!("postgres://filing@127.0.0.1:{port}/filing"));
    assert_eq!(code, Some(1), "{err}");
    assert!(took < Duration::from_secs(4), "took {took:?}: {err}");
    let last = err.lines().last().unwrap_or("");
    assert!(
        last.contains(&format!("127.0.0.1:{port}")) && last.contains("no answer within"),
        "{last}"
    );
    drop(held);
}

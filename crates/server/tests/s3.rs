//! Documents in an S3 bucket (`FILING_DOCUMENTS_URL=s3://BUCKET/PREFIX`), against a real
//! S3-compatible server: moto's, from PyPI, which `.ci/run` starts and names in
//! `TEST_S3_ENDPOINT`. Each test makes a bucket of its own; without the variable cargo reports
//! them as ignored, as the PostgreSQL tests without `TEST_DATABASE_URL`.
//!
//! The bucket outage (a proxy in front of the server that is cut and stalled) is in `faults/bucket.rs`.

mod common;

use std::sync::Arc;

use common::{
    Backend, TestApp, bucket_keys, bucket_objects, fresh_bucket, json, md5_hex, pdf_text,
    s3_endpoint,
};
use domain::rule_cases::example;
use reqwest::multipart::{Form, Part};
use serde_json::json;

/// An app whose documents live in a fresh bucket, and the bucket's name.
async fn app_on_bucket(backend: Backend) -> (TestApp, String) {
    let settings = fresh_bucket(&s3_endpoint()).await;
    let bucket = settings.bucket.clone();
    let app = TestApp::spawn_with(backend, common::on_bucket(settings))
        .await
        .unwrap();
    (app, bucket)
}

async fn download(app: &TestApp, url: &str) -> (u16, Vec<u8>) {
    let res = app.client.get(url).send().await.unwrap();
    (res.status().as_u16(), res.bytes().await.unwrap().to_vec())
}

/// The key of the object in the bucket whose ETag (MD5) matches `bytes`.
async fn key_holding(bucket: &str, bytes: &[u8]) -> Option<String> {
    let md5 = md5_hex(bytes);
    bucket_objects(bucket)
        .await
        .into_iter()
        .find(|(_, etag)| *etag == md5)
        .map(|(key, _)| key)
}

backend_tests! {
    #[cfg_attr(no_test_s3, ignore = "TEST_S3_ENDPOINT is not set")]
    async fn documents_are_written_to_and_served_from_the_bucket(backend) {
        let (app, bucket) = app_on_bucket(backend).await;
        let (_, key) = app.provider("Plattform GmbH").await;
        assert!(bucket_keys(&bucket).await.is_empty());

        // A generated GewA 1.
        let (s, b) = app.post_json("/v1/trade-registration", &key, &example("self")).await;
        assert_eq!(s, 201, "{b}");
        let keys = bucket_keys(&bucket).await;
        assert_eq!(keys.len(), 1, "{keys:?}");
        assert!(keys[0].starts_with("docs/"), "below the configured prefix: {keys:?}");
        let url = b["response"]["owners"][0]["documents"]["gewa_1"]["download_url"].as_str().unwrap();
        let (s, pdf) = download(&app, url).await;
        assert_eq!(s, 200);
        assert_eq!(key_holding(&bucket, &pdf).await.as_ref(), Some(&keys[0]), "served from the bucket");
        assert!(pdf_text(&pdf).contains("Gewerbe-Anmeldung"));

        // An uploaded signed PDF, two generated GewA 1 and powers of attorney.
        // A PDF of its own (not a copy of a stored one), so that finding it in the bucket by
        // its MD5 finds the upload.
        let signed = common::signed_gewa1_pdf();
        assert!(key_holding(&bucket, &signed).await.is_none());
        let mut data = example("assisted");
        data["owners"][0]["documents"] = json!({"gewa_1": {"file": "signed0"}});
        data["owners"][0]["signatures"].as_object_mut().unwrap().remove("gewa_1");
        let form = Form::new().text("data", data.to_string()).part(
            "signed0",
            Part::bytes(signed.clone()).file_name("signed0.pdf").mime_str("application/pdf").unwrap(),
        );
        let (s, b) = json(app.post("/v1/trade-registration", Some(&key)).multipart(form).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let keys = bucket_keys(&bucket).await;
        // Owner 0: the upload and a power of attorney; owner 1: a GewA 1 and a power of attorney.
        assert_eq!(keys.len(), 1 + 4, "{keys:?}");
        let owners = b["response"]["owners"].as_array().unwrap();
        let (s, got) = download(&app, owners[0]["documents"]["gewa_1"]["download_url"].as_str().unwrap()).await;
        assert_eq!((s, &got), (200, &signed), "the upload is stored as sent");
        assert!(key_holding(&bucket, &signed).await.is_some(), "the upload is in the bucket");
        for owner in owners {
            for doc in ["gewa_1", "power_of_attorney"] {
                let (s, got) = download(&app, owner["documents"][doc]["download_url"].as_str().unwrap()).await;
                assert_eq!(s, 200, "{owner}");
                assert!(key_holding(&bucket, &got).await.is_some(), "{doc} of {owner} is in the bucket");
            }
        }

        // The tax registration's XML, written at the create, and its summary PDF, written on
        // its first download.
        let mut gmbh = example("gmbh");
        gmbh["tax_office_number"] = json!("1127");
        let (s, b) = app.post_json("/v1/tax-registration", &key, &gmbh).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(bucket_keys(&bucket).await.len(), 6);
        let id = b["response"]["tax_registration_id"].as_str().unwrap();
        let (_, case) = app.get_json(&format!("/v1/tax-registration/{id}"), &key).await;
        let docs = case["response"]["documents"].as_array().unwrap();
        assert_eq!(docs.len(), 2, "{docs:?}");
        for doc in docs {
            let (s, got) = download(&app, doc["download_url"].as_str().unwrap()).await;
            assert_eq!(s, 200, "{doc}");
            assert!(key_holding(&bucket, &got).await.is_some(), "{doc} is in the bucket");
        }
        assert_eq!(bucket_keys(&bucket).await.len(), 7);

        // Nothing went to the local documents folder.
        let local = common::files_below(&app.state.config.storage.documents_dir);
        assert!(local.is_empty(), "{local:?}");
    }
}

/// A bucket that does not exist, or an endpoint that does not answer, stops the start with the
/// reason instead of failing the first create.
#[cfg_attr(no_test_s3, ignore = "TEST_S3_ENDPOINT is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_bucket_or_unreachable_endpoint_stops_the_start() {
    let endpoint = s3_endpoint();
    let mut settings = fresh_bucket(&endpoint).await;
    settings.bucket = format!("{}-missing", settings.bucket);
    // A refusal is final: not waited out, however long the start may wait.
    let error = start_error(settings.clone(), std::time::Duration::from_secs(60)).await;
    assert!(
        error.contains("cannot reach the document bucket"),
        "{error}"
    );
    assert!(error.contains("NoSuchBucket"), "{error}");

    // Nothing listens on a port held bound without listening (refused, and kept from others).
    let held = tokio::net::TcpSocket::new_v4().unwrap();
    held.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let closed = held.local_addr().unwrap();
    settings.endpoint = Some(format!("http://{closed}"));
    settings.timeout = std::time::Duration::from_secs(1);
    let error = start_error(settings, std::time::Duration::ZERO).await;
    assert!(
        error.contains("cannot reach the document bucket"),
        "{error}"
    );
}

/// A bucket service that comes up after the service (containers starting together): the start
/// waits for it, as it waits for PostgreSQL, and then serves. First nothing listens; then, in
/// the second test, a service that answers 503 while it initialises (as MinIO does).
#[cfg_attr(no_test_s3, ignore = "TEST_S3_ENDPOINT is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bucket_that_comes_up_later_is_waited_for_at_start() {
    late_bucket(false).await;
}

#[cfg_attr(no_test_s3, ignore = "TEST_S3_ENDPOINT is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bucket_that_answers_503_while_starting_is_waited_for() {
    late_bucket(true).await;
}

/// For its first 2 s the bucket's endpoint refuses connections (`unavailable`: answers every
/// request with 503), then forwards to the S3 test server; the start must wait and succeed.
async fn late_bucket(unavailable: bool) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let endpoint = s3_endpoint();
    let mut settings = fresh_bucket(&endpoint).await;
    // Bound but not listening: connections are refused, and no other process can take the
    // port before the bucket comes up (as one could with a port freed and bound again).
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let late = socket.local_addr().unwrap();
    settings.endpoint = Some(format!("http://{late}"));
    settings.timeout = std::time::Duration::from_secs(1);
    let target = endpoint
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let begin = tokio::time::Instant::now();
    let up_at = begin + std::time::Duration::from_secs(2);
    let refused = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let refusals = refused.clone();
    let forwarder = tokio::spawn(async move {
        if !unavailable {
            tokio::time::sleep_until(up_at).await;
        }
        let listener = socket.listen(64).unwrap();
        loop {
            let (mut inbound, _) = listener.accept().await.unwrap();
            let (target, refusals) = (target.clone(), refusals.clone());
            tokio::spawn(async move {
                if tokio::time::Instant::now() < up_at {
                    refusals.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let mut head = [0u8; 4096];
                    let _ = inbound.read(&mut head).await;
                    let _ = inbound
                        .write_all(
                            b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\
                              connection: close\r\n\r\n",
                        )
                        .await;
                    return;
                }
                let mut outbound = tokio::net::TcpStream::connect(&target).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            });
        }
    });
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = s3_config(&dir, &settings).await;
    config.db_startup_wait = std::time::Duration::from_secs(30);
    let state = server::app::build_state(config)
        .await
        .expect("started once the bucket answered");
    assert!(
        begin.elapsed() >= std::time::Duration::from_secs(2),
        "started before the bucket could answer: {:?}",
        begin.elapsed()
    );
    if unavailable {
        // The start really met the 503s (and waited them out), not only a slow answer.
        assert!(refused.load(std::sync::atomic::Ordering::SeqCst) > 0);
    }
    state
        .documents
        .put(
            "trade/x/late.pdf",
            axum::body::Bytes::from_static(b"%PDF-late"),
        )
        .await
        .unwrap();
    assert_eq!(
        bucket_keys(&settings.bucket).await,
        ["docs/trade/x/late.pdf"]
    );
    forwarder.abort();
}

/// The configuration of an app on SQLite in `dir` with its documents in the bucket of
/// `settings`, read the way `serve` reads it.
async fn s3_config(
    dir: &tempfile::TempDir,
    settings: &store::documents::S3Settings,
) -> server::config::Config {
    use server::config::{CommonArgs, Config, OperatorArgs, ServeArgs, StorageArgs};
    let url = common::fresh_database(Backend::Sqlite, dir.path())
        .await
        .unwrap();
    let common = CommonArgs {
        storage: StorageArgs {
            data_dir: dir.path().join("data"),
            database_url: Some(url),
            documents_url: Some(format!("s3://{}/docs", settings.bucket).parse().unwrap()),
            documents_timeout_secs: std::time::Duration::from_secs(1),
            ..StorageArgs::default()
        },
        operator: OperatorArgs {
            operator_name: Some("Muster Filing GmbH".into()),
            operator_address: Some("Beispielweg 5, 10117 Berlin".into()),
        },
    };
    let mut config = Config::from_args(&common, &ServeArgs::default()).expect("valid config");
    assert_eq!(
        config
            .storage
            .documents_s3
            .as_ref()
            .map(|s| (s.bucket.as_str(), s.prefix.as_str())),
        Some((settings.bucket.as_str(), "docs")),
        "FILING_DOCUMENTS_URL is read"
    );
    config.storage.documents_s3 = Some(settings.clone());
    config
}

async fn start_error(settings: store::documents::S3Settings, wait: std::time::Duration) -> String {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = s3_config(&dir, &settings).await;
    config.db_startup_wait = wait;
    let started = std::time::Instant::now();
    let error = match server::app::build_state(config).await {
        Ok(_) => panic!("the app started without its bucket"),
        Err(e) => format!("{e:#}"),
    };
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    error
}

/// `filing documents sweep` on a bucket, configured as an operator would: the bucket URL and
/// the `AWS_*` variables the README lists, nothing else. It removes the object no record names
/// and keeps the case's document.
#[cfg_attr(no_test_s3, ignore = "TEST_S3_ENDPOINT is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_reads_the_aws_variables_and_cleans_the_bucket() {
    let (app, bucket) = app_on_bucket(Backend::Sqlite).await;
    let (_, key) = app.provider("Plattform GmbH").await;
    let (s, b) = app
        .post_json("/v1/trade-registration", &key, &example("self"))
        .await;
    assert_eq!(s, 201, "{b}");
    let orphan = format!("trade/{}/orphan.pdf", uuid::Uuid::now_v7());
    app.state
        .documents
        .put(&orphan, bytes::Bytes::from_static(b"%PDF-1.7 orphan"))
        .await
        .unwrap();
    assert_eq!(bucket_keys(&bucket).await.len(), 2);

    let endpoint = s3_endpoint();
    let out = common::filing_command(app.dir.path(), &app.database_url)
        .args(["documents", "sweep", "--older-than", "0", "--force"])
        .env("FILING_DOCUMENTS_URL", format!("s3://{bucket}/docs"))
        .env("AWS_ENDPOINT", &endpoint)
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .output()
        .expect("run filing");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(v["checked"], 2, "{v}");
    assert_eq!(v["removed"], json!([orphan]), "{v}");
    let left = bucket_keys(&bucket).await;
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(!left[0].ends_with("orphan.pdf"), "{left:?}");
}

/// A bucket deleted while the app runs is the document store being unavailable (503 with
/// `Retry-After`, nothing created), not a server error; once it is back, creates work again.
#[cfg_attr(no_test_s3, ignore = "TEST_S3_ENDPOINT is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bucket_deleted_under_the_app_is_503_until_it_is_back() {
    let (app, bucket) = app_on_bucket(Backend::Sqlite).await;
    let (_, key) = app.provider("Plattform GmbH").await;
    let server = s3_endpoint();
    let http = reqwest::Client::new();
    let res = http
        .delete(format!("{server}/{bucket}"))
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "delete bucket: {}", res.status());

    let create = || async {
        let res = app
            .post("/v1/trade-registration", Some(&key))
            .json(&example("self"))
            .send()
            .await
            .unwrap();
        let retry_after = res.headers().contains_key("retry-after");
        let (s, b) = json(res).await;
        (s, b, retry_after)
    };
    let (s, b, retry_after) = create().await;
    common::assert_error(s, &b, 503, "SERVICE_UNAVAILABLE");
    assert!(retry_after, "{b}");

    let res = http.put(format!("{server}/{bucket}")).send().await.unwrap();
    assert!(
        res.status().is_success(),
        "recreate bucket: {}",
        res.status()
    );
    let (s, b, _) = create().await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(bucket_keys(&bucket).await.len(), 1);
}

//! The document bucket (S3) goes away.

use super::*;

// --- The document bucket goes away ------------------------------------------------------------

/// Documents in an S3 bucket reached through a [`Proxy`] (ignored without `TEST_S3_ENDPOINT`):
/// while the bucket is unreachable, and while it accepts connections and never answers, creates
/// and downloads are 503 within the configured bound, no case is left without its documents, and
/// both work again once it is back, without a restart.
#[cfg_attr(no_test_s3, ignore = "TEST_S3_ENDPOINT is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn document_bucket_going_away_is_503_and_recovers() {
    let endpoint = common::s3_endpoint();
    let target = endpoint
        .strip_prefix("http://")
        .expect("an http:// test endpoint")
        .parse::<SocketAddr>()
        .expect("TEST_S3_ENDPOINT as http://IP:PORT");
    let proxy = Proxy::start(target).await;
    let mut settings = common::fresh_bucket(&format!("http://{}", proxy.addr)).await;
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
        let (s, b, retry) = create(app, key, None).await;
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
            listed_cases(app, operator).await,
            1,
            "{fault}: no case without documents"
        );
        let (s, _) = json(app.get("/healthz", None).send().await.unwrap()).await;
        assert_eq!(s, 200, "{fault}: the database is fine");
        proxy.restore().await;
    }

    let (s, b, _) = create(app, key, None).await;
    assert_eq!(s, 201, "after the outage: {b}");
    assert_eq!(listed_cases(app, operator).await, 2);
    let (s, again, _) = download(link).await;
    assert_eq!((s, again), (200, pdf));
    assert_eq!(common::bucket_keys(&bucket).await.len(), 2);
}

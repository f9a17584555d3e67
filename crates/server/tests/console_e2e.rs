//! The operator console in a real browser: Debian's headless chromium driven through its
//! chromedriver (WebDriver, with `fantoccini`) against the real server. The walk: sign
//! in, find a case by its client reference, open its GewA 1, block it with a reason, unblock
//! it, complete it with a licence upload; complete a tax case with a tax number; the webhooks
//! fired (checked with `standardwebhooks`) and the history names the operator.
//!
//! `CONSOLE_SCREENSHOTS=<dir>` saves the queue and a case page there (the README's pictures in
//! docs/img are made so: docs/console.md).

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::HeaderMap;
use common::{Backend, TestApp};
use domain::rule_cases::example;
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

/// A chromedriver on a free port, stopped with the test.
struct Driver {
    child: std::process::Child,
    port: u16,
}

impl Driver {
    fn start() -> Self {
        let port = common::free_port();
        let path = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "/usr/bin/chromedriver".into());
        let child = std::process::Command::new(path)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        Driver { child, port }
    }

    async fn browser(&self) -> Client {
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({"args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000", "--lang=de-DE"]}),
        );
        let url = format!("http://127.0.0.1:{}", self.port);
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        for _ in 0..50 {
            if let Ok(c) = fantoccini::ClientBuilder::new(connector.clone())
                .capabilities(caps.clone())
                .connect(&url)
                .await
            {
                return c;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!("chromedriver did not answer on {url}");
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every webhook the provider's endpoint got.
#[derive(Clone, Default)]
struct Receiver {
    got: Arc<Mutex<Vec<(HeaderMap, Bytes)>>>,
}

impl Receiver {
    async fn start() -> (Self, String) {
        let r = Receiver::default();
        let got = r.got.clone();
        let router = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let got = got.clone();
                async move {
                    got.lock().unwrap().push((headers, body));
                    "ok"
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        (r, format!("http://{addr}/hook"))
    }

    /// The event types received for `id`, each signature checked, once `want` arrived (20 s).
    async fn events_for(&self, secret: &str, id: &str, want: &[&str]) -> Vec<String> {
        let hook = standardwebhooks::Webhook::new(secret).unwrap();
        let mut types = vec![];
        for _ in 0..200 {
            types = self
                .got
                .lock()
                .unwrap()
                .iter()
                .filter_map(|(h, b)| {
                    hook.verify(b, h).expect("a valid signature");
                    let v: Value = serde_json::from_slice(b).unwrap();
                    let of = v["data"]["trade_registration_id"]
                        .as_str()
                        .or(v["data"]["tax_registration_id"].as_str())?;
                    (of == id).then(|| v["type"].as_str().unwrap().to_string())
                })
                .collect();
            if want.iter().all(|w| types.iter().any(|t| t == w)) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        types
    }
}

async fn click(c: &Client, css: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .click()
        .await
        .unwrap();
}

/// Clicks a button that sends a form and waits for the page that answers it (the old page's
/// elements go stale).
async fn submit(c: &Client, css: &str) {
    let old = c.find(Locator::Css("html")).await.unwrap();
    click(c, css).await;
    for _ in 0..200 {
        if old.tag_name().await.is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no new page after {css}");
}

async fn fill(c: &Client, css: &str, text: &str) {
    let e = c
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"));
    e.clear().await.unwrap();
    e.send_keys(text).await.unwrap();
}

/// The path of the page the browser shows.
async fn path_of(c: &Client) -> String {
    c.current_url().await.unwrap().path().to_string()
}

async fn text_of(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .text()
        .await
        .unwrap()
}

async fn screenshot(c: &Client, name: &str) {
    if let Ok(dir) = std::env::var("CONSOLE_SCREENSHOTS") {
        let png = c.screenshot().await.unwrap();
        std::fs::write(std::path::Path::new(&dir).join(name), png).unwrap();
    }
}

#[cfg_attr(
    no_chromedriver,
    ignore = "chromedriver is not installed (apt install chromium chromium-driver)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_works_a_trade_and_a_tax_case_in_the_browser() {
    let app = TestApp::spawn(Backend::Sqlite).await.unwrap();
    let (_, pkey) = app.provider("Gründerplattform AG").await;
    let (_, okey) = app.operator("Olga Operator").await;
    let (receiver, hook_url) = Receiver::start().await;
    let (s, b) = app
        .post_json("/v1/webhook-endpoints", &pkey, &json!({"url": hook_url}))
        .await;
    assert_eq!(s, 201, "{b}");
    let secret = b["response"]["secret"].as_str().unwrap().to_string();

    // Some cases around the one to find.
    for i in 0..3 {
        let mut other = example("self");
        other["client_reference"] = json!(format!("KD-ANDERE-{i}"));
        other["name"] = json!(format!("Andere {i} GmbH"));
        app.create("/v1/trade-registration", &pkey, &other).await;
    }
    let mut body = example("assisted");
    body["client_reference"] = json!("KD-E2E-4711");
    body["name"] = json!("Browser Bäckerei GmbH");
    let trade_id = app.create("/v1/trade-registration", &pkey, &body).await;
    let tax_id = app
        .create("/v1/tax-registration", &pkey, &example("ug"))
        .await;

    let driver = Driver::start();
    let c = driver.browser().await;

    // Sign in.
    c.goto(&app.url("/console/")).await.unwrap();
    assert!(path_of(&c).await.ends_with("/console/login"));
    fill(&c, "#key", &okey).await;
    submit(&c, "form.signin button[type=submit]").await;
    assert_eq!(path_of(&c).await, "/console/trade");
    assert!(text_of(&c, "header.top").await.contains("Olga Operator"));

    // Find the case by its client reference.
    fill(&c, "#q", "KD-E2E-4711").await;
    submit(&c, "form.filters button[type=submit]").await;
    screenshot(&c, "console-queue.png").await;
    let rows = c.find_all(Locator::Css("tbody tr")).await.unwrap();
    assert_eq!(rows.len(), 1, "only the case with that reference");
    submit(&c, "tbody tr a").await;
    let url = c.current_url().await.unwrap();
    assert_eq!(
        url.path(),
        format!("/console/trade/{trade_id}"),
        "the address names the case"
    );
    assert_eq!(text_of(&c, "#case-id").await, trade_id);

    // Open its GewA 1: the link opens the PDF in the browser with the session.
    let link = c
        .find(Locator::XPath(
            "//td[contains(., 'GewA')]/following-sibling::td/a[1]",
        ))
        .await
        .or(c
            .find(Locator::XPath(
                "//tr[td[1][text()='trade-licence-application']]//a[1]",
            ))
            .await)
        .expect("a GewA 1 row with an open link");
    let href = link.attr("href").await.unwrap().unwrap();
    let cookie = c.get_named_cookie("filing_console").await.unwrap();
    let pdf = app
        .client
        .get(app.url(&href))
        .header("cookie", format!("filing_console={}", cookie.value()))
        .send()
        .await
        .unwrap();
    assert_eq!(pdf.status(), 200);
    assert!(
        pdf.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .starts_with("inline")
    );
    let text = common::pdf_text(&pdf.bytes().await.unwrap());
    assert!(
        text.contains("Browser Bäckerei GmbH"),
        "the case's own form"
    );
    let without = app.client.get(app.url(&href)).send().await.unwrap();
    assert_eq!(
        without.url().path(),
        "/console/login",
        "not without the session"
    );
    c.goto(&app.url(&href)).await.unwrap();
    assert_eq!(path_of(&c).await, href.split('?').next().unwrap());
    c.goto(url.as_str()).await.unwrap();

    // Block with a reason, unblock.
    fill(
        &c,
        "#reason-blocked",
        "Gewerbeamt wartet auf die Handelsregisternummer",
    )
    .await;
    submit(&c, "#step-blocked").await;
    assert!(
        text_of(&c, ".flash.ok")
            .await
            .contains("eingereicht → blockiert")
    );
    assert_eq!(text_of(&c, "#case-status").await, "blockiert");
    screenshot(&c, "console-case.png").await;
    assert!(
        c.find(Locator::Css("#step-completed")).await.is_err(),
        "a blocked case is not completed"
    );
    submit(&c, "#step-submitted").await;
    assert_eq!(text_of(&c, "#case-status").await, "eingereicht");

    // Complete with the licence upload.
    let licence = std::fs::canonicalize("../../examples/gewerbeschein.pdf").unwrap();
    c.find(Locator::Css("#licence"))
        .await
        .unwrap()
        .send_keys(licence.to_str().unwrap())
        .await
        .unwrap();
    submit(&c, "#step-completed").await;
    assert_eq!(text_of(&c, "#case-status").await, "abgeschlossen");
    let history = text_of(&c, "#history").await;
    assert!(
        history.contains("Olga Operator"),
        "the history names the operator: {history}"
    );
    assert!(history.contains("Handelsregisternummer"));
    let case = app
        .read(&format!("/v1/trade-registration/{trade_id}"), &pkey)
        .await;
    assert_eq!(case["status"], "completed");
    assert!(
        case["documents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["type"] == "trade-licence")
    );
    let events = receiver
        .events_for(
            &secret,
            &trade_id,
            &["registration.blocked", "registration.completed"],
        )
        .await;
    for want in [
        "registration.blocked",
        "registration.submitted",
        "registration.completed",
    ] {
        assert!(events.iter().any(|e| e == want), "{want} in {events:?}");
    }
    // The case page lists those deliveries.
    c.goto(url.as_str()).await.unwrap();
    let deliveries = text_of(&c, "#deliveries").await;
    assert!(
        deliveries.contains("registration.blocked") && deliveries.contains("zugestellt"),
        "{deliveries}"
    );

    // A tax case: submitted, then completed with its tax number.
    c.goto(&app.url(&format!("/console/tax/{tax_id}")))
        .await
        .unwrap();
    submit(&c, "#step-submitted").await;
    assert_eq!(text_of(&c, "#case-status").await, "eingereicht");
    fill(&c, "#tax-number-input", "42/815/08152").await;
    submit(&c, "#step-completed").await;
    assert_eq!(text_of(&c, "#case-status").await, "abgeschlossen");
    assert_eq!(text_of(&c, "#tax-number").await, "2742081508152");
    assert!(text_of(&c, "#history").await.contains("Olga Operator"));
    let events = receiver
        .events_for(&secret, &tax_id, &["tax-registration.completed"])
        .await;
    assert!(
        events.iter().any(|e| e == "tax-registration.completed"),
        "{events:?}"
    );

    // Readable on a tablet: nothing wider than the window (tables scroll in their box).
    c.set_window_size(768, 1024).await.unwrap();
    for path in [
        "/console/trade".to_string(),
        format!("/console/trade/{trade_id}"),
        format!("/console/tax/{tax_id}"),
    ] {
        c.goto(&app.url(&path)).await.unwrap();
        let fits = c
            .execute(
                "return document.documentElement.scrollWidth <= window.innerWidth",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(fits, json!(true), "{path} is wider than 768 px");
    }
    c.set_window_size(1280, 1000).await.unwrap();

    // English, and sign out.
    submit(&c, "a.lang").await;
    assert_eq!(text_of(&c, "#case-status").await, "completed");
    submit(&c, "header.top form button").await;
    assert!(path_of(&c).await.ends_with("/console/login"));
    c.goto(&app.url("/console/trade")).await.unwrap();
    assert!(path_of(&c).await.ends_with("/console/login"));
    c.close().await.unwrap();
}

/// The API reference under its strict policy (issue 52.8): Swagger UI still loads the document
/// and draws its operations, so the policy blocks nothing the page needs.
#[cfg_attr(
    no_chromedriver,
    ignore = "chromedriver is not installed (apt install chromium chromium-driver)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_reference_renders_under_its_policy() {
    let app = TestApp::spawn(Backend::Sqlite).await.unwrap();
    let driver = Driver::start();
    let c = driver.browser().await;
    c.goto(&app.url("/docs/")).await.unwrap();
    let title = c
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css(".swagger-ui .info .title"))
        .await
        .expect("Swagger UI drew the document's title")
        .text()
        .await
        .unwrap();
    assert!(!title.trim().is_empty());
    let operations = c
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css(".swagger-ui .opblock"))
        .await;
    assert!(operations.is_ok(), "the operations are listed");
    c.close().await.unwrap();
}

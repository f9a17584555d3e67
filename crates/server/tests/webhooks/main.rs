//! Webhooks end to end: endpoints managed over HTTP, events written with every status change,
//! delivered by the worker to a real HTTP receiver in this process that checks each delivery
//! with the `standardwebhooks` crate; retries, give-up, restarts and two instances.

#[path = "../common/mod.rs"]
mod common;

mod delivery;
mod endpoints;
mod events;
mod fairness;
mod log;
mod sealing;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use common::{Options, TestApp, assert_error, json};
use domain::rule_cases::example;
use serde_json::{Value, json};
use server::webhooks::target::Lookup;

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Delivery {
    headers: HeaderMap,
    body: Bytes,
}

impl Delivery {
    fn id(&self) -> String {
        self.headers["webhook-id"].to_str().unwrap().to_string()
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
    /// Checks the signature the way a receiver would.
    fn verify(&self, secret: &str) -> Result<(), String> {
        standardwebhooks::Webhook::new(secret)
            .map_err(|e| e.to_string())?
            .verify(&self.body, &self.headers)
            .map_err(|e| e.to_string())
    }
}

/// How the receiver answers.
#[derive(Debug, Clone, Copy)]
enum Behaviour {
    Ok,
    /// 503 for the first `n` attempts of each message, then 200.
    FailFirst(usize),
    /// Always this status.
    Always(u16),
    /// A redirect to `/elsewhere`, which would answer 200.
    Redirect,
    /// The first attempt of each message gets its answer after 3 s; later ones at once.
    SlowFirst,
    /// Every attempt gets its answer (200) after this long: longer than the configured
    /// per-attempt timeout, a receiver that hangs.
    Hang(Duration),
    /// 503 for the first `n` requests, whichever their message, then 200: a receiver that is
    /// down for a while.
    DownFor(usize),
}

#[derive(Clone)]
struct Receiver {
    url: String,
    /// Every request to the hook path, in arrival order (failed attempts included).
    got: Arc<Mutex<Vec<Delivery>>>,
    /// Requests to `/elsewhere` (a followed redirect would land there).
    elsewhere: Arc<Mutex<usize>>,
}

impl Receiver {
    async fn start(behaviour: Behaviour) -> Self {
        let got: Arc<Mutex<Vec<Delivery>>> = Arc::default();
        let elsewhere: Arc<Mutex<usize>> = Arc::default();
        let attempts: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let (g, a) = (got.clone(), attempts.clone());
        let hook = move |headers: HeaderMap, body: Bytes| {
            let (g, a) = (g.clone(), a.clone());
            async move {
                let id = headers
                    .get("webhook-id")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                let requests = {
                    let mut g = g.lock().unwrap();
                    g.push(Delivery { headers, body });
                    g.len()
                };
                let n = {
                    let mut a = a.lock().unwrap();
                    let n = a.entry(id).or_default();
                    *n += 1;
                    *n
                };
                match behaviour {
                    Behaviour::Ok => StatusCode::OK.into_response(),
                    Behaviour::FailFirst(k) if n <= k => {
                        StatusCode::SERVICE_UNAVAILABLE.into_response()
                    }
                    Behaviour::FailFirst(_) => StatusCode::NO_CONTENT.into_response(),
                    Behaviour::Always(s) => StatusCode::from_u16(s).unwrap().into_response(),
                    Behaviour::Redirect => {
                        (StatusCode::FOUND, [("location", "/elsewhere")]).into_response()
                    }
                    Behaviour::SlowFirst => {
                        if n == 1 {
                            tokio::time::sleep(Duration::from_secs(3)).await;
                        }
                        StatusCode::OK.into_response()
                    }
                    Behaviour::DownFor(k) if requests <= k => {
                        StatusCode::SERVICE_UNAVAILABLE.into_response()
                    }
                    Behaviour::DownFor(_) => StatusCode::OK.into_response(),
                    Behaviour::Hang(d) => {
                        tokio::time::sleep(d).await;
                        StatusCode::OK.into_response()
                    }
                }
            }
        };
        let e = elsewhere.clone();
        let router = axum::Router::new()
            .route("/hook", axum::routing::post(hook))
            .route(
                "/elsewhere",
                axum::routing::any(move || {
                    let e = e.clone();
                    async move {
                        *e.lock().unwrap() += 1;
                        StatusCode::OK
                    }
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Receiver {
            url: format!("http://{addr}/hook"),
            got,
            elsewhere,
        }
    }

    fn deliveries(&self) -> Vec<Delivery> {
        self.got.lock().unwrap().clone()
    }

    /// Waits until `n` requests have arrived (at most 20 s), then returns them all.
    async fn wait_for(&self, n: usize) -> Vec<Delivery> {
        for _ in 0..400 {
            if self.got.lock().unwrap().len() >= n {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let got = self.deliveries();
        assert!(
            got.len() >= n,
            "expected {n} deliveries, got {}: {:?}",
            got.len(),
            got.iter().map(Delivery::json).collect::<Vec<_>>()
        );
        got
    }
}

/// Registers an endpoint; returns (id, secret).
async fn endpoint(
    app: &TestApp,
    key: &str,
    url: &str,
    events: Option<&[&str]>,
) -> (String, String) {
    let mut body = json!({"url": url});
    if let Some(ev) = events {
        body["events"] = json!(ev);
    }
    let (s, b) = json(
        app.post("/v1/webhook-endpoints", Some(key))
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 201, "{b}");
    let r = &b["response"];
    (
        r["id"].as_str().unwrap().to_string(),
        r["secret"].as_str().unwrap().to_string(),
    )
}

/// An app with `options`, a provider, a receiver behaving as `behaviour` registered for
/// `registration.initiated`, and a `self` trade case whose message goes to it.
struct OneReceiver {
    app: TestApp,
    provider: uuid::Uuid,
    pkey: String,
    receiver: Receiver,
    /// The endpoint's id and signing secret.
    eid: String,
    secret: String,
}

impl OneReceiver {
    async fn start(backend: common::Backend, options: Options, behaviour: Behaviour) -> Self {
        let app = TestApp::spawn_with(backend, options).await.unwrap();
        let (provider, pkey) = app.provider("P").await;
        let receiver = Receiver::start(behaviour).await;
        let events = Some(&["registration.initiated"][..]);
        let (eid, secret) = endpoint(&app, &pkey, &receiver.url, events).await;
        create_trade(&app, &pkey, "self").await;
        OneReceiver {
            app,
            provider,
            pkey,
            receiver,
            eid,
            secret,
        }
    }
}

/// The endpoint `eid` as stored: its signing secret `secret` is sealed, not in clear. Returns
/// the endpoint's id.
async fn assert_sealed_at_rest(app: &TestApp, eid: &str, secret: &str) -> uuid::Uuid {
    let id: uuid::Uuid = eid.parse().unwrap();
    let stored = app
        .state
        .repo
        .get_webhook_endpoint(id)
        .await
        .unwrap()
        .unwrap();
    assert!(stored.secret.starts_with("sealed:v1:"), "{}", stored.secret);
    assert!(!stored.secret.contains(secret.trim_start_matches("whsec_")));
    id
}

async fn create_trade(app: &TestApp, key: &str, which: &str) -> String {
    let (s, b) = json(
        app.post("/v1/trade-registration", Some(key))
            .json(&example(which))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 201, "{b}");
    b["response"]["trade_registration_id"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn transition(app: &TestApp, key: &str, path: String, body: Value) {
    let (s, b) = json(app.post(&path, Some(key)).json(&body).send().await.unwrap()).await;
    assert_eq!(s, 200, "{path}: {b}");
}

/// A sealing key of 32 bytes `byte`, as the variables take it (base64).
fn b64(byte: u8) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode([byte; 32])
}

/// The sealing key of [`b64`].
fn key(byte: u8) -> server::webhooks::SealingKey {
    server::webhooks::SealingKey::parse(&b64(byte)).unwrap()
}

/// `filing webhooks reseal` run as an operator would, with `env` and `args`: its exit code, the
/// JSON report it printed (null when it refused before any work) and its standard error.
fn reseal_cli(
    dir: &std::path::Path,
    url: &str,
    env: &[(&str, String)],
    args: &[&str],
) -> (Option<i32>, Value, String) {
    let mut command = common::filing_command(dir, url);
    command
        .args(["webhooks", "reseal"])
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    let (code, stdout, stderr) = common::output_of(&mut command);
    let report: Value = if stdout.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(stdout.trim()).unwrap_or_else(|_| panic!("{stdout}"))
    };
    (code, report, stderr)
}

/// The endpoint's deliveries once `done` holds for them: the worker records an attempt just
/// after the receiver has answered it, so a test that saw the request must wait for the record.
async fn deliveries_when(
    app: &TestApp,
    key: &str,
    eid: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let mut list = Vec::new();
    for _ in 0..100 {
        let (_, b) = json(
            app.get(
                &format!("/v1/webhook-endpoints/{eid}/deliveries"),
                Some(key),
            )
            .send()
            .await
            .unwrap(),
        )
        .await;
        list = b["response"]["deliveries"].as_array().unwrap().clone();
        if done(&list) {
            return list;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("deliveries never got there: {list:?}");
}

/// `first` stopped, and an instance on its data that allows no private targets and does not
/// retry (names resolved by `lookup` when given): an `assisted` case created there, and the
/// two deliveries of its messages to the endpoint `eid`.
async fn deliver_after_a_strict_restart(
    first: TestApp,
    pkey: &str,
    eid: &str,
    lookup: Option<Lookup>,
) -> (TestApp, Vec<Value>) {
    let (url, dir) = (first.database_url.clone(), first.dir.clone());
    first.stop().await;
    let strict = Options::tweak(|c| {
        c.webhooks.allow_private_targets = false;
        if let Some(lookup) = lookup {
            c.webhooks.lookup = lookup;
        }
        c.webhooks.retry_schedule = Vec::new();
    });
    let app = TestApp::spawn_on(url, dir, strict).await;
    create_trade(&app, pkey, "assisted").await;
    let list = deliveries_when(&app, pkey, eid, |l| l.len() == 2).await;
    (app, list)
}

fn schedule(secs: &'static str) -> Options {
    Options::tweak(move |c| {
        c.webhooks.retry_schedule = domain::webhook::parse_retry_schedule(secs).unwrap();
    })
}

/// `(type, status, previous_status)` of deliveries about `case`, in arrival order.
fn story(deliveries: &[Delivery], case: &str) -> Vec<(String, String, Option<String>)> {
    deliveries
        .iter()
        .map(Delivery::json)
        .filter(|v| {
            v["data"]["trade_registration_id"] == case || v["data"]["tax_registration_id"] == case
        })
        .map(|v| {
            (
                v["type"].as_str().unwrap().to_string(),
                v["data"]["status"].as_str().unwrap().to_string(),
                v["data"]["previous_status"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn s3(t: &str, s: &str, p: Option<&str>) -> (String, String, Option<String>) {
    (t.into(), s.into(), p.map(str::to_string))
}

/// A secret that signed nothing here.
fn crate_secret() -> String {
    server::webhooks::new_secret()
}

//! Webhooks end to end: endpoints managed over HTTP, events written with every status change,
//! delivered by the worker to a real HTTP receiver in this process that checks each delivery
//! with the `standardwebhooks` crate; retries, give-up, restarts and two instances.

mod common;

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
                g.lock().unwrap().push(Delivery { headers, body });
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

backend_tests! {
    async fn every_status_change_is_delivered_signed_and_in_order(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (pid, pkey) = app.provider("P").await;
        let (_, other_key) = app.provider("Other").await;
        let (_, okey) = app.operator("O").await;
        let all = Receiver::start(Behaviour::Ok).await;
        let completed_only = Receiver::start(Behaviour::Ok).await;
        let others = Receiver::start(Behaviour::Ok).await;
        let (all_id, secret) = endpoint(&app, &pkey, &all.url, None).await;
        let (_, secret2) = endpoint(&app, &pkey, &completed_only.url, Some(&["registration.completed"])).await;
        endpoint(&app, &other_key, &others.url, None).await;

        // A self case through its whole life: created (initiated, form-rendered), submitted by
        // the provider, blocked and resubmitted by an operator, completed with the licence.
        let trade = create_trade(&app, &pkey, "self").await;
        transition(&app, &pkey, format!("/v1/trade-registration/{trade}/mark-submitted"), json!({})).await;
        let op = format!("/v1/operator/trade-registrations/{trade}/transition");
        transition(&app, &okey, op.clone(), json!({"status": "blocked", "reason": "Personalausweis fehlt"})).await;
        transition(&app, &okey, op, json!({"status": "submitted", "reason": "nachgereicht"})).await;
        let g = json(app.get(&format!("/v1/trade-registration/{trade}"), Some(&pkey)).send().await.unwrap()).await.1;
        let gewa1 = g["response"]["documents"].as_array().unwrap().iter().find(|d| d["type"] == "trade-licence-application").unwrap()["download_url"].as_str().unwrap().to_string();
        let pdf = app.client.get(&gewa1).send().await.unwrap().bytes().await.unwrap().to_vec();
        let form = reqwest::multipart::Form::new().part("file", reqwest::multipart::Part::bytes(pdf).file_name("l.pdf").mime_str("application/pdf").unwrap());
        let (s, b) = json(app.post(&format!("/v1/operator/trade-registrations/{trade}/trade-licence"), Some(&okey)).multipart(form).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        // A tax case: validated, then submitted.
        let (s, b) = json(app.post("/v1/tax-registration", Some(&pkey)).json(&example("ug")).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let tax = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        transition(&app, &okey, format!("/v1/operator/tax-registrations/{tax}/transition"), json!({"status": "submitted"})).await;

        let got = all.wait_for(8).await;
        for d in &got {
            d.verify(&secret).unwrap_or_else(|e| panic!("signature of {:?}: {e}", d.json()));
            assert!(d.verify(&secret2).is_err(), "another endpoint's secret must not verify");
            assert_eq!(d.headers["content-type"], "application/json");
        }
        assert_eq!(story(&got, &trade), vec![
            s3("registration.initiated", "initiated", None),
            s3("registration.form-rendered", "form-rendered", Some("initiated")),
            s3("registration.submitted", "submitted", Some("form-rendered")),
            s3("registration.blocked", "blocked", Some("submitted")),
            s3("registration.submitted", "submitted", Some("blocked")),
            s3("registration.completed", "completed", Some("submitted")),
        ]);
        assert_eq!(story(&got, &tax), vec![
            s3("tax-registration.validated", "validated", None),
            s3("tax-registration.submitted", "submitted", Some("validated")),
        ]);
        let ids: std::collections::HashSet<String> = got.iter().map(Delivery::id).collect();
        assert_eq!(ids.len(), got.len(), "one message per event");
        let blocked = got.iter().map(Delivery::json).find(|v| v["type"] == "registration.blocked").unwrap();
        let company = g["response"]["company_id"].as_str().unwrap();
        assert_eq!(blocked["data"]["company_id"], company);
        assert_eq!(blocked["data"]["environment"], "production");
        assert_eq!(blocked["data"]["client_reference"], example("self")["client_reference"]);
        assert_eq!(blocked["data"]["reason"], "Personalausweis fehlt");
        assert!(blocked["timestamp"].as_str().unwrap().ends_with('Z'));

        // The filtered endpoint got the completion only; the other provider nothing.
        let only = completed_only.wait_for(1).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let only_now = completed_only.deliveries();
        assert_eq!(only_now.len(), 1, "{:?}", only_now.iter().map(Delivery::json).collect::<Vec<_>>());
        assert_eq!(only[0].json()["type"], "registration.completed");
        only[0].verify(&secret2).unwrap();
        assert!(others.deliveries().is_empty(), "no events of another provider's cases");
        assert_eq!(all.deliveries().len(), 8, "nothing delivered twice");

        // The attempts are listed, newest first.
        let (s, b) = json(app.get(&format!("/v1/webhook-endpoints/{all_id}/deliveries"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let list = b["response"]["deliveries"].as_array().unwrap();
        assert_eq!(list.len(), 8);
        // Newest first: for each case, its events in reverse. Across cases the attempts
        // interleave as the worker's batches take them (one message per case at a time).
        let newest_first = |prefix: &str| -> Vec<String> {
            list.iter().map(|d| d["event_type"].as_str().unwrap()).filter(|t| t.starts_with(prefix)).map(str::to_string).collect()
        };
        assert_eq!(newest_first("registration."), ["registration.completed", "registration.submitted", "registration.blocked", "registration.submitted", "registration.form-rendered", "registration.initiated"]);
        assert_eq!(newest_first("tax-registration."), ["tax-registration.submitted", "tax-registration.validated"]);
        for d in list {
            assert_eq!((d["status_code"].as_i64(), d["outcome"].as_str(), d["message_status"].as_str(), d["attempt"].as_i64()), (Some(200), Some("delivered"), Some("delivered"), Some(1)), "{d}");
        }
        let (_, p) = json(app.get(&format!("/v1/webhook-endpoints/{all_id}/deliveries?limit=5"), Some(&pkey)).send().await.unwrap()).await;
        let cursor = p["response"]["next_cursor"].as_str().unwrap().to_string();
        let (_, p2) = json(app.get(&format!("/v1/webhook-endpoints/{all_id}/deliveries?limit=5&before={cursor}"), Some(&pkey)).send().await.unwrap()).await;
        // The two pages are the whole list, in its order.
        let pages: Vec<Value> = [&p, &p2].iter().flat_map(|page| page["response"]["deliveries"].as_array().unwrap().clone()).collect();
        assert_eq!(p["response"]["deliveries"].as_array().unwrap().len(), 5);
        assert_eq!(&pages, list);
        let _ = pid;
    }

    async fn a_failing_receiver_gets_retries_until_it_answers(backend) {
        let OneReceiver { app, pkey, receiver: flaky, eid, secret, .. } = OneReceiver::start(backend, schedule("1,1,1"), Behaviour::FailFirst(2)).await;
        let got = flaky.wait_for(3).await;
        assert_eq!(got.len(), 3);
        let id = got[0].id();
        for d in &got {
            assert_eq!(d.id(), id, "the same webhook-id on every attempt");
            d.verify(&secret).unwrap();
            assert_eq!(d.body, got[0].body, "the same body on every attempt");
        }
        let list = deliveries_when(&app, &pkey, &eid, |l| l.len() == 3 && l[0]["message_status"] == "delivered").await;
        let summary: Vec<(i64, Option<i64>, &str, &str)> = list.iter().map(|d| (d["attempt"].as_i64().unwrap(), d["status_code"].as_i64(), d["outcome"].as_str().unwrap(), d["message_status"].as_str().unwrap())).collect();
        assert_eq!(summary, vec![(3, Some(204), "delivered", "delivered"), (2, Some(503), "retrying", "delivered"), (1, Some(503), "retrying", "delivered")]);
        assert_eq!(list[1]["error"], "HTTP 503");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(flaky.deliveries().len(), 3, "no attempt after success");
    }

    async fn messages_waiting_behind_a_failing_one_are_listed(backend) {
        // The first attempt fails; the next is a minute away, and the case's second event waits.
        let app = TestApp::spawn_with(backend, schedule("60")).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, other) = app.provider("Q").await;
        let down = Receiver::start(Behaviour::Always(500)).await;
        let (eid, _) = endpoint(&app, &pkey, &down.url, None).await;
        let case = create_trade(&app, &pkey, "assisted").await;
        down.wait_for(1).await;
        let get = |q: &str, key: &str| {
            let req = app.get(&format!("/v1/webhook-endpoints/{eid}/messages{q}"), Some(key));
            async move { json(req.send().await.unwrap()).await }
        };
        deliveries_when(&app, &pkey, &eid, |l| l.len() == 1).await;
        let (s, b) = get("", &pkey).await;
        assert_eq!(s, 200, "{b}");
        let list = b["response"]["messages"].as_array().unwrap();
        let summary: Vec<(&str, &str, i64)> = list.iter().map(|m| (m["event_type"].as_str().unwrap(), m["state"].as_str().unwrap(), m["attempts"].as_i64().unwrap())).collect();
        assert_eq!(summary, [("registration.submitted", "pending", 0), ("registration.initiated", "pending", 1)], "newest first");
        for m in list {
            assert_eq!(m["case_id"], case.as_str());
            assert!(m["next_attempt_at"].is_string() && m.get("finished_at").is_none(), "{m}");
        }
        let first = list[1]["message_id"].as_str().unwrap().to_string();
        let (_, b) = get("?state=pending&limit=1", &pkey).await;
        assert_eq!(b["response"]["messages"].as_array().unwrap().len(), 1);
        let cursor = b["response"]["next_cursor"].as_str().unwrap().to_string();
        let (_, b) = get(&format!("?state=pending&limit=1&before={cursor}"), &pkey).await;
        assert_eq!(b["response"]["messages"][0]["message_id"], first.as_str());
        assert!(b["response"].get("next_cursor").is_none(), "{b}");
        let (_, b) = get("?state=delivered", &pkey).await;
        assert_eq!(b["response"]["messages"], json!([]));

        let (s, b) = get("?state=queued&before=0&limit=501", &pkey).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let fields: Vec<&str> = r["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
        assert_eq!(fields, ["state", "before", "limit"]);
        let (s, b) = get("", &other).await;
        assert_error(s, &b, 404, "NOT_FOUND");
    }

    async fn a_message_given_up_on_can_be_retried_once_more(backend) {
        // Two attempts (now, and 1 s later), both refused; the third gets 204.
        let OneReceiver { app, provider, pkey, receiver: flaky, eid, secret } = OneReceiver::start(backend, schedule("1"), Behaviour::FailFirst(2)).await;
        let got = flaky.wait_for(1).await;
        let mid = got[0].id();
        let retry = |eid: &str, mid: &str, key: &str| {
            let req = app.post(&format!("/v1/webhook-endpoints/{eid}/messages/{mid}/retry"), Some(key));
            async move { json(req.send().await.unwrap()).await }
        };
        // Still in its schedule: already queued, nothing changes.
        let (s, b) = retry(&eid, &mid, &pkey).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["message_status"], "pending");
        assert_eq!(b["response"]["message_id"], mid.as_str());

        let deliveries = |eid: String| {
            let req = app.get(&format!("/v1/webhook-endpoints/{eid}/deliveries"), Some(&pkey));
            async move {
                let (_, b) = json(req.send().await.unwrap()).await;
                b["response"]["deliveries"].as_array().unwrap().clone()
            }
        };
        let mut list = Vec::new();
        for _ in 0..100 {
            list = deliveries(eid.clone()).await;
            if list.first().is_some_and(|d| d["message_status"] == "failed") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(list.len(), 2, "{list:?}");
        assert_eq!(list[0]["message_status"], "failed", "{list:?}");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(flaky.deliveries().len(), 2, "nothing after giving up");

        let (s, b) = retry(&eid, &mid, &pkey).await;
        assert_eq!(s, 200, "{b}");
        let got = flaky.wait_for(3).await;
        assert_eq!(got[2].id(), mid, "the same message, the same webhook-id");
        got[2].verify(&secret).unwrap();
        assert_eq!(got[2].body, got[0].body);
        for _ in 0..100 {
            list = deliveries(eid.clone()).await;
            if list.len() == 3 && list[0]["message_status"] == "delivered" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let summary: Vec<(i64, &str)> = list.iter().map(|d| (d["attempt"].as_i64().unwrap(), d["outcome"].as_str().unwrap())).collect();
        assert_eq!(summary, vec![(3, "delivered"), (2, "failed"), (1, "retrying")]);

        // Delivered: nothing to retry.
        let (s, b) = retry(&eid, &mid, &pkey).await;
        assert_error(s, &b, 409, "WEBHOOK_MESSAGE_DELIVERED");
        // Unknown, malformed, another endpoint's or another provider's: the same 404.
        let (other_eid, _) = endpoint(&app, &pkey, &flaky.url, None).await;
        let (_, other_pkey) = app.provider("Q").await;
        let unknown = uuid::Uuid::now_v7().to_string();
        for (e, m, k) in [(&eid, &unknown, &pkey), (&eid, &"not-a-uuid".to_string(), &pkey), (&other_eid, &mid, &pkey), (&eid, &mid, &other_pkey)] {
            let (s, b) = retry(e, m, k).await;
            assert_error(s, &b, 404, "NOT_FOUND");
        }
        // Only provider keys manage webhooks.
        let (_, ckey) = app.client_company(provider, "Kunde GmbH").await;
        let (s, b) = retry(&eid, &mid, &ckey).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        assert_eq!(flaky.deliveries().len(), 3);
    }

    async fn a_retried_message_that_fails_again_is_failed_again(backend) {
        let OneReceiver { app, pkey, receiver: down, eid, .. } = OneReceiver::start(backend, schedule("1"), Behaviour::Always(500)).await;
        let mid = down.wait_for(1).await[0].id();
        let failed_after = |n: usize| {
            let req = || app.get(&format!("/v1/webhook-endpoints/{eid}/deliveries"), Some(&pkey));
            async move {
                for _ in 0..100 {
                    let (_, b) = json(req().send().await.unwrap()).await;
                    let list = b["response"]["deliveries"].as_array().unwrap().clone();
                    if list.len() == n && list[0]["message_status"] == "failed" {
                        return list;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                panic!("not failed after {n} attempts");
            }
        };
        failed_after(2).await;
        let (s, b) = json(app.post(&format!("/v1/webhook-endpoints/{eid}/messages/{mid}/retry"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let list = failed_after(3).await;
        assert_eq!((list[0]["attempt"].as_i64(), list[0]["outcome"].as_str()), (Some(3), Some("failed")));
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(down.deliveries().len(), 3, "one attempt per retry, no new schedule");
    }

    async fn secrets_are_sealed_by_default_and_clear_ones_at_the_next_start(backend) {
        // No FILING_WEBHOOK_SECRETS_KEY: a key is generated into the data folder (0600).
        let app = TestApp::spawn(backend).await.unwrap();
        let key_file = app.dir.path().join("data").join(server::webhooks::SEALING_KEY_FILE);
        let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&key_file).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o600, "{key_file:?}");
        let (_, pkey) = app.provider("P").await;
        let receiver = Receiver::start(Behaviour::Ok).await;
        let (eid, secret) = endpoint(&app, &pkey, &receiver.url, Some(&["registration.initiated"])).await;
        let id = assert_sealed_at_rest(&app, &eid, &secret).await;
        create_trade(&app, &pkey, "self").await;
        receiver.wait_for(1).await[0].verify(&secret).unwrap();
        let (url, dir) = (app.database_url.clone(), app.dir.clone());
        app.stop().await;

        // A secret stored in clear, as versions before sealing by default left it.
        {
            use sqlx::Connection;
            if url.starts_with("sqlite:") {
                let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
                sqlx::query("UPDATE webhook_endpoints SET secret = ? WHERE id = ?").bind(&secret).bind(id).execute(&mut c).await.unwrap();
            } else {
                let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
                sqlx::query("UPDATE webhook_endpoints SET secret = $1 WHERE id = $2").bind(&secret).bind(id).execute(&mut c).await.unwrap();
            }
        }
        // The next start seals it, with the same key (the file is kept), and it still signs.
        let again = TestApp::spawn_on(url, dir, Options::default()).await;
        let stored = again.state.repo.get_webhook_endpoint(id).await.unwrap().unwrap();
        assert!(stored.secret.starts_with("sealed:v1:"), "{}", stored.secret);
        create_trade(&again, &pkey, "self").await;
        receiver.wait_for(2).await[1].verify(&secret).unwrap();
        again.stop().await;
    }

    async fn instances_sharing_the_signing_secret_share_the_sealing_key(backend) {
        // Two instances on separate data folders (two machines), no sealing key configured,
        // the signing secret shared as the README requires: what one seals, the other opens.
        let shared = |worker: bool| Options::tweak(move |c| {
            c.signing_secret = Some("s".repeat(40));
            c.webhooks.worker = worker;
        });
        let first = TestApp::spawn_with(backend, shared(false)).await.unwrap();
        let (_, pkey) = first.provider("P").await;
        let receiver = Receiver::start(Behaviour::Ok).await;
        let (eid, secret) = endpoint(&first, &pkey, &receiver.url, Some(&["registration.initiated"])).await;
        let issue = |app: &TestApp| app.post("/v1/webhook-endpoints", Some(&pkey)).header("idempotency-key", "ep-2").json(&json!({"url": receiver.url, "events": ["registration.completed"]})).send();
        let (s, kept) = json(issue(&first).await.unwrap()).await;
        assert_eq!(s, 201, "{kept}");
        // (The first folder is kept: on SQLite the database file lives there.)
        let (url, _first_dir) = (first.database_url.clone(), first.dir.clone());
        first.stop().await;
        let other_machine = Arc::new(tempfile::tempdir().unwrap());
        let second = TestApp::spawn_on(url, other_machine.clone(), shared(true)).await;
        assert!(!other_machine.path().join("data").join(server::webhooks::SEALING_KEY_FILE).exists());
        let stored = second.state.repo.get_webhook_endpoint(eid.parse().unwrap()).await.unwrap().unwrap();
        assert!(stored.secret.starts_with("sealed:v1:"), "{}", stored.secret);
        create_trade(&second, &pkey, "self").await;
        receiver.wait_for(1).await[0].verify(&secret).unwrap();
        let res = issue(&second).await.unwrap();
        assert_eq!(res.headers()["idempotent-replayed"], "true");
        let (s, replay) = json(res).await;
        assert_eq!((s, replay), (201, kept));
        second.stop().await;
    }

    async fn secrets_are_sealed_at_rest_when_a_key_is_set(backend) {
        use base64::Engine;
        let key = base64::engine::general_purpose::STANDARD.encode([42u8; 32]);
        let sealing = server::webhooks::SealingKey::parse(&key).unwrap();
        let with_key = move || {
            let sealing = sealing.clone();
            Options::tweak(move |c| c.webhooks.sealing = server::webhooks::SealingKeys::new(sealing))
        };
        let app = TestApp::spawn_with(backend, with_key()).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let receiver = Receiver::start(Behaviour::Ok).await;
        let (eid, secret) = endpoint(&app, &pkey, &receiver.url, Some(&["registration.initiated"])).await;
        let id = assert_sealed_at_rest(&app, &eid, &secret).await;

        // Stored answers for idempotent replay carry the secret too: sealed as well, and a
        // replay shows the same secret.
        let create = || app.post("/v1/webhook-endpoints", Some(&pkey)).header("idempotency-key", "ep-1").json(&json!({"url": receiver.url, "events": ["registration.completed"]}));
        let (s, first) = json(create().send().await.unwrap()).await;
        assert_eq!(s, 201, "{first}");
        let (s, replay) = json(create().send().await.unwrap()).await;
        assert_eq!((s, &replay["response"]["secret"]), (201, &first["response"]["secret"]));
        let shown = first["response"]["secret"].as_str().unwrap().trim_start_matches("whsec_").to_string();
        let answers = common::stored_answers(&app.database_url).await;
        assert!(!answers.is_empty());
        for a in &answers {
            assert!(a.starts_with(b"sealed:v1:"), "{}", String::from_utf8_lossy(a));
            assert!(!String::from_utf8_lossy(a).contains(&shown));
        }

        // Deliveries are signed with the secret the provider was shown.
        create_trade(&app, &pkey, "self").await;
        receiver.wait_for(1).await[0].verify(&secret).unwrap();
        // A rotation seals the new one; during the overlap both signatures verify.
        let (s, b) = json(app.post(&format!("/v1/webhook-endpoints/{eid}/rotate-secret"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let new_secret = b["response"]["secret"].as_str().unwrap().to_string();
        let stored = app.state.repo.get_webhook_endpoint(id).await.unwrap().unwrap();
        assert!(stored.secret.starts_with("sealed:v1:") && stored.previous_secret.as_deref().is_some_and(|p| p.starts_with("sealed:v1:")));
        create_trade(&app, &pkey, "assisted").await;
        let got = receiver.wait_for(2).await;
        got[1].verify(&new_secret).unwrap();
        got[1].verify(&secret).unwrap();

        // An instance without the key cannot sign: the attempt fails and says why.
        let (url, dir) = (app.database_url.clone(), app.dir.clone());
        app.stop().await;
        let keyless = TestApp::spawn_on(url.clone(), dir.clone(), Options::default()).await;
        let case = create_trade(&keyless, &pkey, "self").await;
        let mut error = String::new();
        for _ in 0..100 {
            let (_, b) = json(keyless.get(&format!("/v1/webhook-endpoints/{eid}/deliveries"), Some(&pkey)).send().await.unwrap()).await;
            if let Some(d) = b["response"]["deliveries"].as_array().unwrap().iter().find(|d| d["case_id"] == case.as_str()) {
                error = d["error"].as_str().unwrap_or_default().to_string();
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(error.contains("FILING_WEBHOOK_SECRETS_KEY"), "{error:?}");
        assert_eq!(receiver.deliveries().len(), 2, "nothing unsigned went out");
        keyless.stop().await;
        // With the key back, the same message is delivered on its next attempt.
        let again = TestApp::spawn_on(url, dir, {
            let mut o = with_key();
            let tweak = std::mem::replace(&mut o.tweak, Box::new(|_| {}));
            o.tweak = Box::new(move |c| {
                tweak(c);
                c.webhooks.retry_schedule = domain::webhook::parse_retry_schedule("1").unwrap();
            });
            o
        })
        .await;
        let got = receiver.wait_for(3).await;
        got[2].verify(&new_secret).unwrap();
        again.stop().await;
    }

    // A change of sealing key: the new key with the old one beside it serves at once,
    // `filing webhooks reseal` moves every stored secret to the new key, after which the old
    // key can go; a run with a key that opens nothing changes nothing and says so.
    async fn the_sealing_key_changes_with_reseal(backend) {
        use server::webhooks::{SealingKeys, open};
        let keys = |current: u8, old: Vec<u8>| SealingKeys { current: Some(key(current)), old: old.into_iter().map(key).collect() };
        let with = |k: SealingKeys| Options::tweak(move |c| {
            c.webhooks.sealing = k;
            c.webhooks.retry_schedule = domain::webhook::parse_retry_schedule("1").unwrap();
        });
        let app = TestApp::spawn_with(backend, with(keys(1, vec![]))).await.unwrap();
        let (pid, pkey) = app.provider("P").await;
        // An answer kept for replay (it carries a new API key) is sealed with the same key.
        let issue = |app: &TestApp| app.post(&format!("/v1/companies/{pid}/api-keys"), Some(&pkey)).header("idempotency-key", "issue-1").send();
        let (s, issued) = json(issue(&app).await.unwrap()).await;
        assert_eq!(s, 201, "{issued}");
        let replays = |app: &TestApp| {
            let res = issue(app);
            let issued = issued.clone();
            async move {
                let res = res.await.unwrap();
                assert_eq!(res.headers()["idempotent-replayed"], "true");
                let (s, b) = json(res).await;
                assert_eq!((s, b), (201, issued));
            }
        };
        let receiver = Receiver::start(Behaviour::Ok).await;
        let (rotated, first) = endpoint(&app, &pkey, &receiver.url, Some(&["registration.initiated"])).await;
        let (s, b) = json(app.post(&format!("/v1/webhook-endpoints/{rotated}/rotate-secret"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let second = b["response"]["secret"].as_str().unwrap().to_string();
        let (other_endpoint, _) = endpoint(&app, &pkey, &receiver.url, Some(&["registration.completed"])).await;
        let (url, dir) = (app.database_url.clone(), app.dir.clone());
        app.stop().await;

        // The new key, the old one beside it: secrets sealed with the old key still sign.
        let during = TestApp::spawn_on(url.clone(), dir.clone(), with(keys(2, vec![1]))).await;
        create_trade(&during, &pkey, "self").await;
        let got = receiver.wait_for(1).await;
        got[0].verify(&second).unwrap();
        got[0].verify(&first).unwrap();
        during.stop().await;

        let reseal = |env: &[(&str, String)]| reseal_cli(dir.path(), &url, env, &[]);
        let new_with_old = [("FILING_WEBHOOK_SECRETS_KEY", b64(2)), ("FILING_WEBHOOK_SECRETS_OLD_KEYS", b64(1))];
        let (code, report, err) = reseal(&new_with_old);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(report, json!({"endpoints": 2, "resealed": 2, "unchanged": 0, "unreadable": [],
            "answers": {"answers": 1, "resealed": 1, "unchanged": 0, "unreadable": 0}}));
        let repo = store::connect(&url).await.unwrap();
        let row = repo.get_webhook_endpoint(rotated.parse().unwrap()).await.unwrap().unwrap();
        let id = row.id;
        let previous = row.previous_secret.clone().unwrap();
        assert_eq!(open(&keys(2, vec![]), id, &row.secret).as_deref(), Some(second.as_str()));
        assert_eq!(open(&keys(2, vec![]), id, &previous).as_deref(), Some(first.as_str()));
        assert_eq!(open(&keys(1, vec![]), id, &row.secret), None, "still opens with the old key");
        assert_eq!(open(&keys(1, vec![]), id, &previous), None, "previous secret not re-sealed");
        let other = repo.get_webhook_endpoint(other_endpoint.parse().unwrap()).await.unwrap().unwrap();
        assert!(open(&keys(2, vec![]), other.id, &other.secret).is_some());
        // A second run finds nothing to do.
        let (code, report, err) = reseal(&new_with_old);
        assert_eq!((code, &report["resealed"], &report["unchanged"]), (Some(0), &json!(0), &json!(2)), "{err}");
        assert_eq!(report["answers"]["unchanged"], 1, "{report}");

        // A key that opens nothing: reported, nothing changed, exit 1.
        let (code, report, err) = reseal(&[("FILING_WEBHOOK_SECRETS_KEY", b64(3))]);
        assert_eq!(code, Some(1), "{report}");
        assert!(err.contains("FILING_WEBHOOK_SECRETS_OLD_KEYS"), "{err}");
        let mut unreadable: Vec<String> = report["unreadable"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
        unreadable.sort();
        let mut expected = vec![rotated.clone(), other_endpoint.clone()];
        expected.sort();
        assert_eq!(unreadable, expected);
        assert_eq!(report["answers"]["unreadable"], 1, "{report}");
        let unchanged = repo.get_webhook_endpoint(id).await.unwrap().unwrap();
        assert_eq!((&unchanged.secret, &unchanged.previous_secret), (&row.secret, &row.previous_secret));

        // The old key is gone: deliveries are still signed, the kept answer still replays.
        let after = TestApp::spawn_on(url.clone(), dir.clone(), with(keys(2, vec![]))).await;
        replays(&after).await;
        create_trade(&after, &pkey, "self").await;
        let got = receiver.wait_for(2).await;
        got[1].verify(&second).unwrap();
        after.stop().await;

        // Sealing cannot be turned off. A key left out by mistake changes nothing: with no key
        // in the data folder (every server so far had the variable) the command refuses.
        let (code, report, err) = reseal(&[("FILING_WEBHOOK_SECRETS_OLD_KEYS", b64(2))]);
        assert_eq!(code, Some(1), "{report}");
        assert!(err.contains("no sealing key here"), "{err}");
        assert!(open(&keys(2, vec![]), id, &repo.get_webhook_endpoint(id).await.unwrap().unwrap().secret).is_some());
        let (code, _, err) = reseal_cli(dir.path(), &url, &[], &["--unseal"]);
        assert_eq!(code, Some(2), "--unseal is refused by the parser: {err}");
        // A server without the variable generates the folder's key (and leaves sealed secrets
        // as they are); moving to it is the command's job, with the old key to open them.
        let keyless = TestApp::spawn_on(url.clone(), dir.clone(), Options::default()).await;
        keyless.stop().await;
        let (code, report, err) = reseal(&[("FILING_WEBHOOK_SECRETS_OLD_KEYS", b64(2))]);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(report["resealed"], 2, "{report}");
        let moved = repo.get_webhook_endpoint(id).await.unwrap().unwrap();
        assert!(moved.secret.starts_with("sealed:v1:"), "{}", moved.secret);
        assert_eq!(open(&keys(2, vec![]), id, &moved.secret), None, "still under key 2");
        let answers = common::stored_answers(&url).await;
        assert!(answers[0].starts_with(b"sealed:v1:"));
        // A server without the variable uses the folder's key: replays, and signs.
        let unsealed = TestApp::spawn_on(url.clone(), dir.clone(), Options::default()).await;
        replays(&unsealed).await;
        create_trade(&unsealed, &pkey, "self").await;
        receiver.wait_for(3).await[2].verify(&second).unwrap();
        unsealed.stop().await;
    }

    // An endpoint whose previous secret no key opens (sealed with a key dropped since): its
    // current secret still moves to the new key, the endpoint is reported, and what no key
    // opens stays as it was.
    async fn a_reseal_keeps_what_no_key_opens_and_reseals_the_rest(backend) {
        use server::webhooks::{SealingKeys, open};
        let with = |k: SealingKeys| Options::tweak(move |c| c.webhooks.sealing = k);
        let app = TestApp::spawn_with(backend, with(SealingKeys::new(key(1)))).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (eid, first) = endpoint(&app, &pkey, "https://example.com/hook", None).await;
        let (url, dir) = (app.database_url.clone(), app.dir.clone());
        app.stop().await;
        // Rotated under key 2: the previous secret keeps key 1's sealing.
        let app = TestApp::spawn_on(url.clone(), dir.clone(), with(SealingKeys { current: Some(key(2)), old: vec![key(1)] })).await;
        let (s, b) = json(app.post(&format!("/v1/webhook-endpoints/{eid}/rotate-secret"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let second = b["response"]["secret"].as_str().unwrap().to_string();
        let repo = app.state.repo.clone();
        let id: uuid::Uuid = eid.parse().unwrap();
        let before = repo.get_webhook_endpoint(id).await.unwrap().unwrap();
        app.stop().await;

        // Key 1 is gone from the configuration.
        let keys = [("FILING_WEBHOOK_SECRETS_KEY", b64(3)), ("FILING_WEBHOOK_SECRETS_OLD_KEYS", b64(2))];
        let (code, report, err) = reseal_cli(dir.path(), &url, &keys, &[]);
        assert_eq!(code, Some(1), "{err}");
        let nothing_kept = json!({"answers": 0, "resealed": 0, "unchanged": 0, "unreadable": 0});
        assert_eq!(report, json!({"endpoints": 1, "resealed": 1, "unchanged": 0, "unreadable": [eid], "answers": nothing_kept}));
        let after = store::connect(&url).await.unwrap().get_webhook_endpoint(id).await.unwrap().unwrap();
        assert_eq!(open(&SealingKeys::new(key(3)), id, &after.secret).as_deref(), Some(second.as_str()));
        assert_eq!(after.previous_secret, before.previous_secret, "what no key opens is kept");
        assert_eq!(open(&SealingKeys::new(key(1)), id, after.previous_secret.as_deref().unwrap()).as_deref(), Some(first.as_str()));
        // Again: nothing left to move, still reported.
        let (code, report, _) = reseal_cli(dir.path(), &url, &keys, &[]);
        assert_eq!(code, Some(1));
        assert_eq!(report, json!({"endpoints": 1, "resealed": 0, "unchanged": 0, "unreadable": [eid], "answers": nothing_kept}));
    }

    async fn a_receiver_that_does_not_answer_in_time_gets_a_retry(backend) {
        let options = Options::tweak(|c| {
            c.webhooks.timeout = Duration::from_secs(1);
            c.webhooks.retry_schedule = domain::webhook::parse_retry_schedule("1").unwrap();
        });
        let OneReceiver { app, pkey, receiver: slow, eid, .. } = OneReceiver::start(backend, options, Behaviour::SlowFirst).await;
        let got = slow.wait_for(2).await;
        assert_eq!(got[0].id(), got[1].id());
        // The receiver has the second attempt before the worker has recorded its answer.
        let mut b = Value::Null;
        for _ in 0..100 {
            b = json(app.get(&format!("/v1/webhook-endpoints/{eid}/deliveries"), Some(&pkey)).send().await.unwrap()).await.1;
            if b["response"]["deliveries"].as_array().unwrap().len() >= 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let list = b["response"]["deliveries"].as_array().unwrap();
        assert_eq!(list.len(), 2, "{b}");
        assert_eq!(list[1]["error"], "timed out", "{}", list[1]);
        assert!(list[1]["status_code"].is_null());
        assert!(list[1]["duration_ms"].as_i64().unwrap() < 2500, "the timeout cut the attempt short: {}", list[1]);
        assert_eq!(list[0]["outcome"], "delivered");
    }

    async fn delivery_gives_up_after_the_schedule_and_never_follows_redirects(backend) {
        let app = TestApp::spawn_with(backend, schedule("1")).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let down = Receiver::start(Behaviour::Always(500)).await;
        let moved = Receiver::start(Behaviour::Redirect).await;
        let (down_id, _) = endpoint(&app, &pkey, &down.url, Some(&["registration.initiated"])).await;
        let (moved_id, _) = endpoint(&app, &pkey, &moved.url, Some(&["registration.initiated"])).await;
        // Nobody listens here: connection refused.
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let (closed_id, _) = endpoint(&app, &pkey, &format!("http://{closed}/hook"), Some(&["registration.initiated"])).await;
        create_trade(&app, &pkey, "self").await;
        down.wait_for(2).await;
        moved.wait_for(2).await;
        let finished = |eid: String| {
            let app = &app;
            let pkey = pkey.clone();
            async move {
                for _ in 0..100 {
                    let (_, b) = json(app.get(&format!("/v1/webhook-endpoints/{eid}/deliveries"), Some(&pkey)).send().await.unwrap()).await;
                    let list = b["response"]["deliveries"].as_array().unwrap().clone();
                    if list.len() == 2 && list[0]["message_status"] == "failed" {
                        return list;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                panic!("endpoint {eid} did not give up after two attempts");
            }
        };
        let list = finished(down_id).await;
        assert_eq!((list[0]["outcome"].as_str(), list[1]["outcome"].as_str()), (Some("failed"), Some("retrying")));
        assert_eq!(list[0]["status_code"], 500);
        let list = finished(moved_id).await;
        assert_eq!(list[0]["status_code"], 302);
        assert_eq!(list[0]["error"], "HTTP 302 (redirects are not followed)");
        assert_eq!(*moved.elsewhere.lock().unwrap(), 0, "the redirect was not followed");
        let list = finished(closed_id).await;
        assert!(list[0]["status_code"].is_null());
        assert!(list[0]["error"].as_str().unwrap().starts_with("connection failed"), "{}", list[0]);
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(down.deliveries().len(), 2, "nothing after giving up");
    }

    async fn endpoints_are_managed_by_their_provider_only(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (pid, pkey) = app.provider("P").await;
        let (_, other) = app.provider("Other").await;
        let (_, ckey) = app.client_company(pid, "Client GmbH").await;
        let (_, okey) = app.operator("O").await;
        let rx = Receiver::start(Behaviour::Ok).await;

        let (s, b) = json(app.post("/v1/webhook-endpoints", Some(&pkey)).json(&json!({"url": "ftp://x.example/h", "events": ["registration.completed", "registration.done", "registration.completed"]})).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let fields: Vec<&str> = r["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
        assert_eq!(fields, ["url", "events[1]"]);
        for body in [json!({}), json!({"url": 5}), json!({"url": "https://a.example", "events": []}), json!({"url": "https://a.example", "secret": "x"})] {
            let (s, b) = json(app.post("/v1/webhook-endpoints", Some(&pkey)).json(&body).send().await.unwrap()).await;
            assert_error(s, &b, 422, "VALIDATION_FAILED");
        }
        for key in [&ckey, &okey] {
            let (s, b) = json(app.post("/v1/webhook-endpoints", Some(key)).json(&json!({"url": rx.url})).send().await.unwrap()).await;
            assert_error(s, &b, 403, "FORBIDDEN");
            let (s, b) = json(app.get("/v1/webhook-endpoints", Some(key)).send().await.unwrap()).await;
            assert_error(s, &b, 403, "FORBIDDEN");
        }

        // Events given twice are kept once.
        let (s, b) = json(app.post("/v1/webhook-endpoints", Some(&pkey)).json(&json!({"url": rx.url, "events": ["registration.completed", "registration.completed"]})).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["response"]["events"], json!(["registration.completed"]));
        let (id, old_secret) = endpoint(&app, &pkey, &rx.url, None).await;
        assert!(old_secret.starts_with("whsec_"));
        let (s, b) = json(app.get("/v1/webhook-endpoints", Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200);
        let list = b["response"]["endpoints"].as_array().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1]["id"], id.as_str());
        assert!(list[1]["events"].is_null());
        assert!(!b.to_string().contains("whsec_"), "secrets are shown once only");
        let (s, b) = json(app.get(&format!("/v1/webhook-endpoints/{id}"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!((s, b["response"]["url"].as_str()), (200, Some(rx.url.as_str())));
        let (s, b) = json(app.get(&format!("/v1/webhook-endpoints/{id}/deliveries?before=x&limit=0"), Some(&pkey)).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let fields: Vec<&str> = r["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
        assert_eq!(fields, ["before", "limit"]);
        for path in [format!("/v1/webhook-endpoints/{id}"), format!("/v1/webhook-endpoints/{id}/deliveries")] {
            let (s, b) = json(app.get(&path, Some(&other)).send().await.unwrap()).await;
            assert_error(s, &b, 404, "NOT_FOUND");
        }
        let (s, b) = json(app.client.delete(app.url(&format!("/v1/webhook-endpoints/{id}"))).bearer_auth(&other).send().await.unwrap()).await;
        assert_error(s, &b, 404, "NOT_FOUND");

        // Rotation: for 24 hours both secrets sign every delivery.
        let (s, b) = json(app.post(&format!("/v1/webhook-endpoints/{id}/rotate-secret"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let new_secret = b["response"]["secret"].as_str().unwrap().to_string();
        assert_ne!(new_secret, old_secret);
        let (_, g) = json(app.get(&format!("/v1/webhook-endpoints/{id}"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(g["response"]["previous_secret_expires_at"], b["response"]["previous_secret_expires_at"]);
        create_trade(&app, &pkey, "assisted").await;
        let got = rx.wait_for(2).await;
        for d in &got {
            let sig = d.headers["webhook-signature"].to_str().unwrap();
            assert_eq!(sig.split(' ').count(), 2, "{sig}");
            d.verify(&new_secret).unwrap();
            d.verify(&old_secret).unwrap();
            assert!(d.verify(&crate_secret()).is_err());
        }

        // Deleted: gone from the list, no more deliveries.
        let (s, b) = json(app.client.delete(app.url(&format!("/v1/webhook-endpoints/{id}"))).bearer_auth(&pkey).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = json(app.get(&format!("/v1/webhook-endpoints/{id}"), Some(&pkey)).send().await.unwrap()).await;
        assert_error(s, &b, 404, "NOT_FOUND");
        let (s, b) = json(app.client.delete(app.url(&format!("/v1/webhook-endpoints/{id}"))).bearer_auth(&pkey).send().await.unwrap()).await;
        assert_error(s, &b, 404, "NOT_FOUND");
        let before = rx.deliveries().len();
        create_trade(&app, &pkey, "self").await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(rx.deliveries().len(), before);

        // A create that read the endpoint just before the delete committed queues a message
        // the delete did not see to give up: the worker gives it up instead of sending it.
        let message = uuid::Uuid::now_v7();
        let endpoint: uuid::Uuid = id.parse().unwrap();
        let now = time::OffsetDateTime::now_utc();
        let insert = "INSERT INTO webhook_messages (id, endpoint_id, case_id, event_type, payload, state, \
                      next_attempt_us, created_at) VALUES ($1, $2, $3, 'registration.submitted', '{}', 'pending', $4, $5)";
        let state_of = "SELECT state FROM webhook_messages WHERE id = $1";
        let due = (now.unix_timestamp_nanos() / 1000) as i64;
        // The same statements on either database (their connection types differ).
        macro_rules! queue_and_watch {
            ($connection:ty) => {{
                use sqlx::Connection;
                let mut c = <$connection>::connect(&app.database_url).await.unwrap();
                sqlx::query(insert).bind(message).bind(endpoint).bind(uuid::Uuid::now_v7()).bind(due).bind(now).execute(&mut c).await.unwrap();
                app.state.wake_webhooks();
                let mut state = String::new();
                for _ in 0..50 {
                    state = sqlx::query_scalar(state_of).bind(message).fetch_one(&mut c).await.unwrap();
                    if state != "pending" { break; }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                state
            }};
        }
        let state = if app.database_url.starts_with("sqlite:") {
            queue_and_watch!(sqlx::SqliteConnection)
        } else {
            queue_and_watch!(sqlx::PgConnection)
        };
        assert_eq!(state, "failed");
        assert_eq!(rx.deliveries().len(), before);
    }

    async fn a_provider_has_at_most_twenty_endpoints_even_when_creates_race(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let rx = Receiver::start(Behaviour::Ok).await;
        let creates: Vec<_> = (0..26)
            .map(|_| app.post("/v1/webhook-endpoints", Some(&pkey)).json(&json!({"url": rx.url})).send())
            .collect();
        let mut statuses = std::collections::BTreeMap::new();
        for answer in futures::future::join_all(creates).await {
            let (s, b) = json(answer.unwrap()).await;
            if s == 409 {
                assert_error(s, &b, 409, "WEBHOOK_ENDPOINT_LIMIT");
            }
            *statuses.entry(s).or_insert(0) += 1;
        }
        assert_eq!(statuses, [(201, 20), (409, 6)].into());
        let (_, b) = json(app.get("/v1/webhook-endpoints", Some(&pkey)).send().await.unwrap()).await;
        let list = b["response"]["endpoints"].as_array().unwrap();
        assert_eq!(list.len(), 20);
        // Deleting one makes room for one.
        let first = list[0]["id"].as_str().unwrap();
        let (s, b) = json(app.client.delete(app.url(&format!("/v1/webhook-endpoints/{first}"))).bearer_auth(&pkey).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        endpoint(&app, &pkey, &rx.url, None).await;
        let (s, b) = json(app.post("/v1/webhook-endpoints", Some(&pkey)).json(&json!({"url": rx.url})).send().await.unwrap()).await;
        assert_error(s, &b, 409, "WEBHOOK_ENDPOINT_LIMIT");
    }

    async fn private_targets_are_refused_unless_allowed(backend) {
        let options = Options::tweak(|c| c.webhooks.allow_private_targets = false);
        let app = TestApp::spawn_with(backend, options).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        // The last five: 6to4 of 127.0.0.1 and of 169.254.169.254, IPv4-translated 127.0.0.1,
        // Teredo (server 0.0.0.0) and the discard-only block; then NAT64 of the metadata
        // address and an IPv4-mapped address (False in the IANA registry).
        for url in ["http://127.0.0.1:8080/hook", "http://[::1]/hook", "http://169.254.169.254/latest", "http://10.0.0.5/h", "http://localhost:3000/h", "http://intranet/h", "http://[2002:7f00:1::]/", "http://[2002:a9fe:a9fe::]/", "http://[::ffff:0:7f00:1]/", "http://[2001::]/", "http://[100::1]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[::ffff:8.8.8.8]/"] {
            let (s, b) = json(app.post("/v1/webhook-endpoints", Some(&pkey)).json(&json!({"url": url})).send().await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!(r["errors"][0]["field"], "url", "{url}");
        }
        // A public literal address is accepted (nothing is sent until an event happens), and
        // so are 6to4 and NAT64 forms of a public IPv4 address.
        for url in ["https://8.8.8.8/hook", "https://[2002:808:808::1]/hook", "https://[64:ff9b::808:808]/hook"] {
            let (s, b) = json(app.post("/v1/webhook-endpoints", Some(&pkey)).json(&json!({"url": url})).send().await.unwrap()).await;
            assert_eq!(s, 201, "{url}: {b}");
        }
    }

    async fn a_name_resolving_inside_is_refused_without_its_address(backend) {
        let options = Options::tweak(|c| {
            c.webhooks.allow_private_targets = false;
            c.webhooks.lookup = Lookup::fixed([
                ("billing.corp.example", &["10.20.30.40"][..]),
                ("mixed.example", &["8.8.8.8", "fd12:3456::7"][..]),
                ("sixtofour.example", &["2002:a9fe:a9fe::1"][..]),
                ("hooks.example", &["8.8.4.4"][..]),
            ]);
        });
        let app = TestApp::spawn_with(backend, options).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        for (url, inside) in [
            ("https://billing.corp.example/h", "10.20.30.40"),
            ("https://mixed.example/h", "fd12:3456::7"),
            ("https://sixtofour.example/h", "2002:a9fe:a9fe::1"),
        ] {
            let (s, b) = json(app.post("/v1/webhook-endpoints", Some(&pkey)).json(&json!({"url": url})).send().await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!(r["errors"][0]["field"], "url", "{url}");
            assert_eq!(r["errors"][0]["code"], "private_target", "{url}");
            let text = b.to_string();
            assert!(text.contains("resolves to an address that is not public"), "{b}");
            assert!(!text.contains(inside), "the answer names the inside address: {b}");
            assert!(!text.contains("169.254"), "the answer names the embedded address: {b}");
        }
        let (s, b) = json(app.post("/v1/webhook-endpoints", Some(&pkey)).json(&json!({"url": "https://hooks.example/h"})).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
    }

    async fn sandbox_simulations_are_delivered_like_operator_steps(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let rx = Receiver::start(Behaviour::Ok).await;
        let (_, secret) = endpoint(&app, &pkey, &rx.url, None).await;
        let mut body = example("assisted");
        body["environment"] = json!("sandbox");
        let (s, b) = json(app.post("/v1/trade-registration", Some(&pkey)).json(&body).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let trade = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let path = format!("/v1/sandbox/trade-registration/{trade}/transition");
        transition(&app, &pkey, path.clone(), json!({"status": "blocked", "reason": "Test"})).await;
        transition(&app, &pkey, path.clone(), json!({"status": "submitted"})).await;
        transition(&app, &pkey, path, json!({"status": "completed"})).await;
        let got = rx.wait_for(5).await;
        for d in &got {
            d.verify(&secret).unwrap();
            assert_eq!(d.json()["data"]["environment"], "sandbox");
        }
        let statuses: Vec<String> = story(&got, &trade).into_iter().map(|(_, s, _)| s).collect();
        assert_eq!(statuses, ["initiated", "submitted", "blocked", "submitted", "completed"]);
        let blocked = got.iter().map(Delivery::json).find(|v| v["type"] == "registration.blocked").unwrap();
        assert_eq!(blocked["data"]["reason"], "sandbox simulation: Test");
    }

    async fn partnership_tax_cases_produce_the_same_events(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let rx = Receiver::start(Behaviour::Ok).await;
        let (_, secret) = endpoint(&app, &pkey, &rx.url, Some(&["tax-registration.validated", "tax-registration.rejected"])).await;
        let (s, b) = json(app.post("/v1/tax-registration/gbr", Some(&pkey)).json(&example("egbr")).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        let op = format!("/v1/operator/tax-registrations/{id}/transition");
        let (s, g) = json(app.get(&format!("/v1/tax-registration/{id}"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{g}");
        if g["response"]["tax_office"].is_null() {
            let (s, b) = json(app.post(&format!("/v1/operator/tax-registrations/{id}/tax-office"), Some(&okey)).json(&json!({"tax_office_number": "1127"})).send().await.unwrap()).await;
            assert_eq!(s, 200, "{b}");
        }
        transition(&app, &okey, op.clone(), json!({"status": "submitted"})).await;
        transition(&app, &okey, op, json!({"status": "rejected", "reason": "Steuernummer unplausibel"})).await;
        let got = rx.wait_for(2).await;
        let types: Vec<String> = got.iter().map(|d| d.json()["type"].as_str().unwrap().to_string()).collect();
        assert_eq!(types, ["tax-registration.validated", "tax-registration.rejected"]);
        for d in &got {
            d.verify(&secret).unwrap();
            assert_eq!(d.json()["data"]["tax_registration_id"], id.as_str());
        }
        assert_eq!(got[1].json()["data"]["reason"], "Steuernummer unplausibel");
    }

    // Tax registration ids are unique per provider (docs/adr/0006-case-ids-per-provider.md):
    // provider B's case under the id of A's has a key of its own, and B's events, deliveries
    // and messages name it by the id B chose, never by that key; A hears nothing of B's case.
    async fn a_tax_id_another_provider_has_is_announced_as_chosen(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, a_key) = app.provider("A").await;
        let (_, b_key) = app.provider("B").await;
        let (_, okey) = app.operator("O").await;
        let (ra, rb) = (Receiver::start(Behaviour::Ok).await, Receiver::start(Behaviour::Ok).await);
        endpoint(&app, &a_key, &ra.url, None).await;
        let (b_endpoint, b_secret) = endpoint(&app, &b_key, &rb.url, None).await;
        let id = uuid::Uuid::new_v4().to_string();
        let mut companies = Vec::new();
        for (key, which) in [(&a_key, "ug"), (&b_key, "gmbh")] {
            let mut body = example(which);
            body["tax_registration_id"] = json!(id);
            body["tax_office_number"] = json!("1127");
            body["environment"] = json!("production");
            let (s, b) = json(app.post("/v1/tax-registration", Some(key)).json(&body).send().await.unwrap()).await;
            assert_eq!(s, 201, "{b}");
            assert_eq!(b["response"]["tax_registration_id"], id.as_str());
            companies.push(b["response"]["company_id"].as_str().unwrap().to_string());
        }
        // The operator works on B's case by its key: another office, then submitted.
        let (s, b) = json(app.get("/v1/operator/tax-registrations", Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let b_case = b["response"]["cases"].as_array().unwrap().iter().find(|c| c["public_id"] == id.as_str() && c["id"] != id.as_str()).expect("B's case under a key of its own").clone();
        let b_case_key = b_case["id"].as_str().unwrap().to_string();
        let (s, b) = json(app.post(&format!("/v1/operator/tax-registrations/{b_case_key}/tax-office"), Some(&okey)).json(&json!({"tax_office_number": "2742"})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!((b["response"]["tax_registration_id"].as_str(), b["response"]["case_id"].as_str()), (Some(id.as_str()), Some(b_case_key.as_str())));
        transition(&app, &okey, format!("/v1/operator/tax-registrations/{b_case_key}/transition"), json!({"status": "submitted"})).await;

        let got = rb.wait_for(3).await;
        let seen: Vec<(String, String, String)> = got.iter().map(|d| {
            d.verify(&b_secret).unwrap();
            let v = d.json();
            (v["type"].as_str().unwrap().to_string(), v["data"]["tax_registration_id"].as_str().unwrap().to_string(), v["data"]["company_id"].as_str().unwrap().to_string())
        }).collect();
        let want = |t: &str| (t.to_string(), id.clone(), companies[1].clone());
        assert_eq!(seen, [want("tax-registration.validated"), want("documents.updated"), want("tax-registration.submitted")]);
        let a_got = ra.wait_for(1).await;
        assert_eq!(a_got.len(), 1);
        assert_eq!((a_got[0].json()["data"]["tax_registration_id"].as_str(), a_got[0].json()["data"]["company_id"].as_str()), (Some(id.as_str()), Some(companies[0].as_str())));
        // B's lists of deliveries and messages name the case by the id B chose.
        let deliveries = deliveries_when(&app, &b_key, &b_endpoint, |l| l.len() == 3).await;
        assert!(deliveries.iter().all(|d| d["case_id"] == id.as_str()), "{deliveries:?}");
        let (s, b) = json(app.get(&format!("/v1/webhook-endpoints/{b_endpoint}/messages"), Some(&b_key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let messages = b["response"]["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3, "{b}");
        assert!(messages.iter().all(|m| m["case_id"] == id.as_str()), "{b}");
    }

    async fn documents_made_for_an_office_assigned_later_are_announced(backend) {
        // No polling within the test: every delivery must come from a wake, the assignments'
        // included (the last event is a tax office's, with nothing after it to wake the worker).
        // A failed attempt is retried at once (a look that attempted something looks again),
        // not in 5 s, when only a poll would find it.
        let no_poll = Options::tweak(|c| {
            c.webhooks.poll_interval = Duration::from_secs(600);
            c.webhooks.retry_schedule = domain::webhook::parse_retry_schedule("0,0,0,0,0").unwrap();
        });
        let app = TestApp::spawn_with(backend, no_poll).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let all = Receiver::start(Behaviour::Ok).await;
        let (_, secret) = endpoint(&app, &pkey, &all.url, None).await;
        let documents_only = Receiver::start(Behaviour::Ok).await;
        endpoint(&app, &pkey, &documents_only.url, Some(&["documents.updated"])).await;
        let statuses_only = Receiver::start(Behaviour::Ok).await;
        endpoint(&app, &pkey, &statuses_only.url, Some(&["registration.submitted", "tax-registration.submitted"])).await;
        let (s, _) = json(app.client.put(app.url("/v1/operator/trade-offices/072355007")).bearer_auth(&okey).json(&json!({"name": "Verbandsgemeindeverwaltung Trier-Land"})).send().await.unwrap()).await;
        assert_eq!(s, 200);

        // A self case whose postal code did not decide the office: its form has no head yet.
        let mut data = example("self");
        data["registered_office"]["zip"] = json!("54298");
        data["registered_office"]["city"] = json!("Musterdorf");
        data["client_reference"] = json!("crm-7");
        let (s, b) = json(app.post("/v1/trade-registration", Some(&pkey)).json(&data).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let trade = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let company = b["response"]["company_id"].as_str().unwrap().to_string();
        let old_form = b["response"]["owners"][0]["documents"]["gewa_1"]["id"].as_str().unwrap().to_string();
        let old_link = b["response"]["owners"][0]["documents"]["gewa_1"]["download_url"].as_str().unwrap().to_string();
        let path = format!("/v1/operator/trade-registrations/{trade}");
        let office = json!({"trade_office": {"key": "072355007", "municipality_key": "07235001"}});
        // Once the worker is idle (initiated and form-rendered delivered), only the
        // assignment's own wake can bring its event within `wait_for`'s 20 s.
        let idle = |n: usize| {
            let all = all.clone();
            async move {
                all.wait_for(n).await;
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        };
        idle(2).await;
        let (s, b) = json(app.client.patch(app.url(&path)).bearer_auth(&okey).json(&office).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        all.wait_for(3).await;
        let new_form = b["response"]["documents"].as_array().unwrap().iter().find(|d| d["type"] == "trade-licence-application").unwrap()["id"].as_str().unwrap().to_string();
        assert_ne!(new_form, old_form);
        assert_eq!(app.client.get(&old_link).send().await.unwrap().status(), 404, "the replaced form is gone");
        // The same office again replaces nothing, so announces nothing; the next status change
        // comes after the one update (one case's events arrive in order).
        let (s, b) = json(app.client.patch(app.url(&path)).bearer_auth(&okey).json(&office).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        transition(&app, &okey, format!("/v1/operator/trade-registrations/{trade}/transition"), json!({"status": "submitted"})).await;

        // A GmbH without an office: the office brings the XML (new) and a new summary.
        let (s, b) = json(app.post("/v1/tax-registration", Some(&pkey)).json(&common::office_undetermined(example("gmbh"))).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let tax = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        let (_, g) = json(app.get(&format!("/v1/tax-registration/{tax}"), Some(&pkey)).send().await.unwrap()).await;
        let old_summary = g["response"]["documents"].as_array().unwrap().iter().find(|d| d["type"] == "tax-registration-summary").unwrap()["id"].as_str().unwrap().to_string();
        let (s, g) = json(app.post(&format!("/v1/operator/tax-registrations/{tax}/tax-office"), Some(&okey)).json(&json!({"tax_office_number": "1127"})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{g}");
        let tax_docs: Vec<Value> = g["response"]["documents"].as_array().unwrap().clone();
        // The same tax office again leaves the documents as they are, and says nothing;
        // another office writes the XML and the summary anew, and says so.
        let assign = |number: &'static str| {
            let url = app.url(&format!("/v1/operator/tax-registrations/{tax}/tax-office"));
            let request = app.client.post(url).bearer_auth(&okey).json(&json!({"tax_office_number": number}));
            async move { json(request.send().await.unwrap()).await }
        };
        let (s, g) = assign("1127").await;
        assert_eq!(s, 200, "{g}");
        let ids = |docs: &[Value]| docs.iter().map(|d| d["id"].as_str().unwrap().to_string()).collect::<Vec<_>>();
        assert_eq!(ids(g["response"]["documents"].as_array().unwrap()), ids(&tax_docs), "the same office replaces nothing");
        idle(6).await;
        let (s, g) = assign("1129").await;
        assert_eq!(s, 200, "{g}");
        let again: Vec<Value> = g["response"]["documents"].as_array().unwrap().clone();

        // initiated, form-rendered, documents, submitted; validated, documents, documents.
        let got = all.wait_for(7).await;
        for d in &got {
            d.verify(&secret).unwrap();
        }
        let types = |c: &str| story(&got, c).into_iter().map(|(t, _, _)| t).collect::<Vec<_>>();
        assert_eq!(types(&trade), ["registration.initiated", "registration.form-rendered", "documents.updated", "registration.submitted"]);
        assert_eq!(types(&tax), ["tax-registration.validated", "documents.updated", "documents.updated"]);
        let updates = |c: &str| got.iter().map(Delivery::json).filter(|v| v["type"] == "documents.updated" && (v["data"]["trade_registration_id"] == c || v["data"]["tax_registration_id"] == c)).collect::<Vec<_>>();
        let t = updates(&trade)[0].clone();
        let at = time::OffsetDateTime::parse(t["timestamp"].as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap();
        assert!((time::OffsetDateTime::now_utc() - at).abs() < time::Duration::minutes(1), "{t}");
        assert_eq!(t["data"]["company_id"], company.as_str());
        assert!(t["data"].get("previous_status").is_none());
        assert_eq!(t["data"]["status"], "form-rendered");
        assert_eq!(t["data"]["reason"], "trade office assigned");
        assert_eq!(t["data"]["client_reference"], "crm-7");
        assert_eq!(t["data"]["environment"], "production");
        assert_eq!(t["data"]["documents"], json!([{"id": new_form, "type": "trade-licence-application", "owner_index": 0, "name": format!("GewA 1 - {} {}.pdf", data["owners"][0]["first_name"].as_str().unwrap(), data["owners"][0]["last_name"].as_str().unwrap()), "replaces": old_form}]));
        let x = updates(&tax)[0].clone();
        assert_eq!(x["data"]["status"], "validated");
        assert_eq!(x["data"]["reason"], "tax office assigned");
        let mut announced: Vec<(String, String, Value)> = x["data"]["documents"].as_array().unwrap().iter().map(|d| (d["type"].as_str().unwrap().to_string(), d["id"].as_str().unwrap().to_string(), d["replaces"].clone())).collect();
        announced.sort_by(|a, b| a.0.cmp(&b.0));
        let id_of = |t: &str| tax_docs.iter().find(|d| d["type"] == t).unwrap()["id"].as_str().unwrap().to_string();
        assert_eq!(announced, [
            ("tax-registration-summary".to_string(), id_of("tax-registration-summary"), json!(old_summary)),
            ("tax-registration-xml".to_string(), id_of("tax-registration-xml"), Value::Null),
        ]);
        let mut second: Vec<(String, String, Value)> = updates(&tax)[1]["data"]["documents"].as_array().unwrap().iter().map(|d| (d["type"].as_str().unwrap().to_string(), d["id"].as_str().unwrap().to_string(), d["replaces"].clone())).collect();
        second.sort_by(|a, b| a.0.cmp(&b.0));
        let again_of = |t: &str| again.iter().find(|d| d["type"] == t).unwrap()["id"].as_str().unwrap().to_string();
        assert_eq!(second, [
            ("tax-registration-summary".to_string(), again_of("tax-registration-summary"), json!(id_of("tax-registration-summary"))),
            ("tax-registration-xml".to_string(), again_of("tax-registration-xml"), json!(id_of("tax-registration-xml"))),
        ]);

        // Endpoints get what they subscribed to and nothing else.
        let only: Vec<Value> = documents_only.wait_for(3).await.iter().map(Delivery::json).collect();
        assert!(only.iter().all(|v| v["type"] == "documents.updated"), "{only:?}");
        let statuses = statuses_only.wait_for(1).await;
        assert!(statuses.iter().all(|d| d.json()["type"] != "documents.updated"));
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(documents_only.deliveries().len(), 3);
        assert_eq!(statuses_only.deliveries().len(), 1);
        assert_eq!(all.deliveries().len(), 7);
    }

    async fn deliveries_check_the_target_again(backend) {
        // Registered while private targets were allowed; the next instance does not allow them.
        let first = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = first.provider("P").await;
        let rx = Receiver::start(Behaviour::Ok).await;
        let (eid, _) = endpoint(&first, &pkey, &rx.url, None).await;
        let (app, list) = deliver_after_a_strict_restart(first, &pkey, &eid, None).await;
        for d in &list {
            assert_eq!(d["outcome"], "failed", "{d}");
            assert_eq!(d["error"], "refused: 127.0.0.1 is in 127.0.0.0/8 (Loopback, RFC 1122), which is not globally reachable", "{d}");
        }
        assert!(rx.deliveries().is_empty(), "nothing reached the private address");
        app.stop().await;
    }

    async fn deliveries_to_a_name_refuse_inside_addresses_without_naming_them(backend) {
        // The name resolved to a public address at registration; it now resolves inside.
        let rx = Receiver::start(Behaviour::Ok).await;
        let port = rx.url.split(':').nth(2).and_then(|p| p.split('/').next()).unwrap().to_string();
        let first = TestApp::spawn_with(backend, Options::tweak(|c| {
            c.webhooks.allow_private_targets = false;
            c.webhooks.lookup = Lookup::fixed([("receiver.example", &["8.8.8.8"][..])]);
        })).await.unwrap();
        let (_, pkey) = first.provider("P").await;
        let (eid, _) = endpoint(&first, &pkey, &format!("http://receiver.example:{port}/hook"), None).await;
        let inside = Lookup::fixed([("receiver.example", &["127.0.0.1"][..])]);
        let (app, list) = deliver_after_a_strict_restart(first, &pkey, &eid, Some(inside)).await;
        for d in &list {
            assert_eq!(d["outcome"], "failed", "{d}");
            let error = d["error"].as_str().unwrap();
            assert!(error.contains("receiver.example does not resolve to a public address"), "{d}");
            assert!(!error.contains("127.0.0.1"), "the log names the inside address: {d}");
        }
        assert!(rx.deliveries().is_empty(), "nothing reached the inside address");
        app.stop().await;
    }

    async fn events_survive_a_restart(backend) {
        // An instance without a worker acknowledges changes; they wait in the outbox.
        let no_worker = Options::tweak(|c| c.webhooks.worker = false);
        let first = TestApp::spawn_with(backend, no_worker).await.unwrap();
        let (_, pkey) = first.provider("P").await;
        let flaky = Receiver::start(Behaviour::FailFirst(1)).await;
        let (_, secret) = endpoint(&first, &pkey, &flaky.url, None).await;
        let trade = create_trade(&first, &pkey, "assisted").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(flaky.deliveries().is_empty());
        let (url, dir) = (first.database_url.clone(), first.dir.clone());
        first.stop().await;

        // The next instance delivers; its first attempts fail, then it is stopped before the
        // retry is due (3 s), and a third instance finishes the job.
        let second = TestApp::spawn_on(url.clone(), dir.clone(), schedule("3")).await;
        flaky.wait_for(1).await;
        second.stop().await;
        let third = TestApp::spawn_on(url, dir, schedule("3")).await;
        let got = flaky.wait_for(4).await;
        for d in &got {
            d.verify(&secret).unwrap();
        }
        // Each message was attempted twice (one failure, one success), in order per case.
        let mut per_id: HashMap<String, usize> = HashMap::new();
        for d in &got {
            *per_id.entry(d.id()).or_default() += 1;
        }
        assert_eq!(per_id.len(), 2);
        assert!(per_id.values().all(|n| *n == 2), "{per_id:?}");
        // One case's events in order: the submission only after the creation got through.
        let sequence: Vec<String> = got.iter().map(|d| d.json()["data"]["status"].as_str().unwrap().to_string()).collect();
        assert_eq!(sequence, ["initiated", "initiated", "submitted", "submitted"]);
        assert_eq!(got[0].json()["data"]["trade_registration_id"], trade.as_str());
        third.stop().await;
    }
}

/// A secret that signed nothing here.
fn crate_secret() -> String {
    server::webhooks::new_secret()
}

/// Two instances on one PostgreSQL database: every message is delivered once, and one case's
/// events in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_share_the_outbox_without_duplicates() {
    if common::pg_base_url().is_none() {
        eprintln!("skipped: TEST_DATABASE_URL is not set");
        return;
    }
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let url = common::fresh_database(common::Backend::Postgres, dir.path())
        .await
        .unwrap();
    let a = TestApp::spawn_on(url.clone(), dir.clone(), Options::default()).await;
    let b = TestApp::spawn_on(url, dir, Options::default()).await;
    let (_, pkey) = a.provider("P").await;
    let (_, okey) = a.operator("O").await;
    let rx = Receiver::start(Behaviour::Ok).await;
    endpoint(&a, &pkey, &rx.url, None).await;
    let mut cases = Vec::new();
    for i in 0..12 {
        let app = if i % 2 == 0 { &a } else { &b };
        let id = create_trade(app, &pkey, "self").await;
        let other = if i % 2 == 0 { &b } else { &a };
        transition(
            other,
            &okey,
            format!("/v1/operator/trade-registrations/{id}/transition"),
            json!({"status": "submitted"}),
        )
        .await;
        transition(
            app,
            &okey,
            format!("/v1/operator/trade-registrations/{id}/transition"),
            json!({"status": "blocked", "reason": "Rückfrage"}),
        )
        .await;
        cases.push(id);
    }
    let got = rx.wait_for(12 * 4).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got_now = rx.deliveries();
    assert_eq!(got_now.len(), got.len(), "late duplicates");
    let ids: std::collections::HashSet<String> = got.iter().map(Delivery::id).collect();
    assert_eq!(ids.len(), 48, "every message once");
    for case in &cases {
        let statuses: Vec<String> = story(&got, case).into_iter().map(|(_, s, _)| s).collect();
        assert_eq!(
            statuses,
            ["initiated", "form-rendered", "submitted", "blocked"],
            "{case}"
        );
    }
    a.stop().await;
    b.stop().await;
}

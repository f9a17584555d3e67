//! Fair delivery (issue 52, ADR 0029): one provider's hanging endpoints do not delay another
//! provider's deliveries, and an endpoint that keeps failing is left alone for a while.

use std::time::Instant;

use super::*;

/// The per-attempt timeout of these tests, and how long a hanging receiver takes (longer):
/// the production figures (15 s, 20 s) scaled down so a test takes seconds.
const TIMEOUT: Duration = Duration::from_secs(3);
const HANG: Duration = Duration::from_secs(4);

backend_tests! {
    async fn a_providers_hanging_endpoints_do_not_delay_another_provider(backend) {
        let app = TestApp::spawn_with(backend, Options::tweak(|c| c.webhooks.timeout = TIMEOUT)).await.unwrap();
        let (_, bkey) = app.provider("B").await;
        let (_, akey) = app.provider("A").await;
        let hanging = Receiver::start(Behaviour::Hang(HANG)).await;
        let initiated = Some(&["registration.initiated"][..]);
        for _ in 0..20 {
            endpoint(&app, &bkey, &hanging.url, initiated).await;
        }
        let quick = Receiver::start(Behaviour::Ok).await;
        let (_, secret) = endpoint(&app, &akey, &quick.url, initiated).await;
        // B's case: 20 messages, one per endpoint, whose attempts hang.
        create_trade(&app, &bkey, "self").await;
        hanging.wait_for(1).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let hung = hanging.deliveries().len();
        assert_eq!(hung, 8, "B's attempts in flight: FILING_WEBHOOK_MAX_IN_FLIGHT_PER_PROVIDER");

        let started = Instant::now();
        create_trade(&app, &akey, "self").await;
        let got = quick.wait_for(1).await;
        let latency = started.elapsed();
        eprintln!("A's delivery after {latency:?}, {hung} of B's attempts hanging");
        got[0].verify(&secret).unwrap();
        assert_eq!(got[0].json()["type"], "registration.initiated");
        assert!(latency < Duration::from_secs(1), "A's delivery took {latency:?} behind {hung} hanging attempts of B");
    }

    async fn an_endpoint_that_keeps_failing_is_left_alone_until_the_cool_down(backend) {
        // Two failures in a row open the circuit for 2 s; the message is retried after 1 s,
        // so without the breaker its third attempt would come within the open time.
        let cooldown = Duration::from_secs(2);
        let options = Options::tweak(move |c| {
            c.webhooks.retry_schedule = domain::webhook::parse_retry_schedule("1,1,1,1").unwrap();
            c.webhooks.breaker.failures = 2;
            c.webhooks.breaker.cooldown = cooldown;
        });
        let app = TestApp::spawn_with(backend, options).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let down = Receiver::start(Behaviour::DownFor(2)).await;
        let (eid, secret) = endpoint(&app, &pkey, &down.url, Some(&["registration.initiated"])).await;
        let view = async || {
            let (s, b) = json(app.get(&format!("/v1/webhook-endpoints/{eid}"), Some(&pkey)).send().await.unwrap()).await;
            assert_eq!(s, 200, "{b}");
            b["response"]["delivery_state"].clone()
        };
        assert_eq!(view().await, json!({"circuit": "closed", "consecutive_failures": 0}));
        create_trade(&app, &pkey, "self").await;

        // Open after the second failure: shown on the endpoint and in the metrics.
        down.wait_for(2).await;
        let mut state = view().await;
        for _ in 0..50 {
            if state["circuit"] == "open" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            state = view().await;
        }
        assert_eq!((state["circuit"].as_str(), state["consecutive_failures"].as_i64()), (Some("open"), Some(2)), "{state}");
        let until = time::OffsetDateTime::parse(state["open_until"].as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap();
        let (_, list) = json(app.get("/v1/webhook-endpoints", Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(list["response"]["endpoints"][0]["delivery_state"], state);
        let text = metrics(&app, &okey).await;
        assert_eq!(sample(&text, r#"filing_webhook_circuits{state="open"}"#), Some(1.0), "{text}");
        assert_eq!(sample(&text, r#"filing_webhook_circuit_transitions_total{to="open"}"#), Some(1.0), "{text}");
        assert_eq!(sample(&text, "filing_webhook_messages_held"), Some(1.0), "{text}");

        // Not tried while open (the retry fell due after 1 s), ...
        let before_end = until - time::Duration::milliseconds(300);
        let wait = before_end - time::OffsetDateTime::now_utc();
        if wait.is_positive() {
            tokio::time::sleep(wait.unsigned_abs()).await;
        }
        assert_eq!(down.deliveries().len(), 2, "an attempt while the circuit was open");
        // ... tried once after the cool-down, which succeeds and closes it.
        let got = down.wait_for(3).await;
        assert!(time::OffsetDateTime::now_utc() >= until, "tried before {until}");
        for d in &got {
            d.verify(&secret).unwrap();
            assert_eq!(d.id(), got[0].id(), "one message, three attempts");
        }
        let list = deliveries_when(&app, &pkey, &eid, |l| l.len() == 3 && l[0]["message_status"] == "delivered").await;
        let outcomes: Vec<&str> = list.iter().map(|d| d["outcome"].as_str().unwrap()).collect();
        assert_eq!(outcomes, ["delivered", "retrying", "retrying"]);
        assert_eq!(view().await, json!({"circuit": "closed", "consecutive_failures": 0}));
        let text = metrics(&app, &okey).await;
        assert_eq!(sample(&text, r#"filing_webhook_circuit_transitions_total{to="closed"}"#), Some(1.0), "{text}");
        tokio::time::sleep(cooldown).await;
        assert_eq!(down.deliveries().len(), 3, "nothing after the delivery");
    }
}

/// The metrics text as the operator key `key` gets it.
async fn metrics(app: &TestApp, key: &str) -> String {
    let res = app.get("/metrics", Some(key)).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.text().await.unwrap()
}

/// The value of the sample `series` (name and labels exactly as encoded) in `text`.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let value = line.strip_prefix(series)?.strip_prefix(' ')?;
        value.split(' ').next()?.parse().ok()
    })
}

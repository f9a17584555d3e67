//! Endpoints over HTTP: managed by their provider only, at most twenty, and no private or
//! inside targets, at registration and again at delivery.

use super::*;

/// The key of the provider `P`, whose endpoints they are, and the keys that may not manage
/// them: another provider's, a client company's of P, an operator's.
struct Keys {
    pkey: String,
    other: String,
    ckey: String,
    okey: String,
}

async fn keys(app: &TestApp) -> Keys {
    let (pid, pkey) = app.provider("P").await;
    let (_, other) = app.provider("Other").await;
    let (_, ckey) = app.client_company(pid, "Client GmbH").await;
    let (_, okey) = app.operator("O").await;
    Keys {
        pkey,
        other,
        ckey,
        okey,
    }
}

backend_tests! {
    async fn endpoints_are_managed_by_their_provider_only(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let Keys { pkey, other, ckey, okey } = keys(&app).await;
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

    // `POST /v1/webhook-endpoints/{id}/test`: a signed `ping` now, whichever events the
    // endpoint takes; the answer says what the receiver said; nothing is stored or retried;
    // another provider's endpoint is 404, other keys 403.
    async fn a_test_ping_is_signed_sent_now_and_answered_with_the_receivers_status(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let Keys { pkey, other, ckey, okey } = keys(&app).await;
        let rx = Receiver::start(Behaviour::Ok).await;
        let (eid, secret) = endpoint(&app, &pkey, &rx.url, Some(&["tax-registration.completed"])).await;
        let ping = |key: String, id: String| {
            let request = app.post(&format!("/v1/webhook-endpoints/{id}/test"), Some(&key));
            async move { json(request.send().await.unwrap()).await }
        };

        let (s, b) = ping(pkey.clone(), eid.clone()).await;
        assert_eq!(s, 200, "{b}");
        let r = &b["response"];
        assert_eq!((r["id"].as_str(), r["delivered"].as_bool(), r["status_code"].as_u64()), (Some(eid.as_str()), Some(true), Some(200)));
        assert!(r["error"].is_null());
        let got = rx.wait_for(1).await;
        assert_eq!(got.len(), 1);
        got[0].verify(&secret).expect("signed with the endpoint's secret");
        assert_eq!(got[0].id(), r["message_id"].as_str().unwrap());
        let body = got[0].json();
        assert_eq!(body["type"], "ping");
        assert_eq!(body["data"], json!({"endpoint_id": eid}));

        // Nothing stored: no delivery, no message.
        for list in ["deliveries", "messages"] {
            let (s, b) = json(app.get(&format!("/v1/webhook-endpoints/{eid}/{list}"), Some(&pkey)).send().await.unwrap()).await;
            assert_eq!(s, 200, "{b}");
            assert_eq!(b["response"][list], json!([]), "{list}");
        }

        // Another provider's endpoint is not found; client and operator keys are refused.
        let (s, b) = ping(other.clone(), eid.clone()).await;
        assert_error(s, &b, 404, "NOT_FOUND");
        for key in [&ckey, &okey] {
            let (s, b) = ping(key.clone(), eid.clone()).await;
            assert_error(s, &b, 403, "FORBIDDEN");
        }
        assert_eq!(rx.deliveries().len(), 1, "refused pings send nothing");

        // A receiver that does not take it: still 200, with its status and the reason.
        let failing = Receiver::start(Behaviour::Always(500)).await;
        let (eid2, _) = endpoint(&app, &pkey, &failing.url, None).await;
        let (s, b) = ping(pkey.clone(), eid2).await;
        assert_eq!(s, 200, "{b}");
        let r = &b["response"];
        assert_eq!((r["delivered"].as_bool(), r["status_code"].as_u64(), r["error"].as_str()), (Some(false), Some(500), Some("HTTP 500")));
        assert_eq!(failing.wait_for(1).await.len(), 1, "tried once, not retried");
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
}

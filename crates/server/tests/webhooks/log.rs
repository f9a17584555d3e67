//! `GET /v1/events`: the event log carries what the webhooks carried, byte for byte, also for
//! providers without an endpoint; it is newest first, pages with a cursor, filters by type,
//! case and environment, and shows each caller only its own events.

use super::*;

/// Every event of the log for `key` at `query`, following the cursor with pages of `limit`.
async fn all_events(app: &TestApp, key: &str, query: &str, limit: usize) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("/v1/events?limit={limit}{query}");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let (s, b) = json(app.get(&path, Some(key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{path}: {b}");
        let page = b["response"]["events"].as_array().unwrap().clone();
        assert!(page.len() <= limit);
        out.extend(page);
        match b["response"]["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return out,
        }
    }
}

backend_tests! {
    async fn the_log_carries_the_bodies_the_webhooks_carried(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let rx = Receiver::start(Behaviour::Ok).await;
        let (_, secret) = endpoint(&app, &pkey, &rx.url, None).await;
        let trade = create_trade(&app, &pkey, "assisted").await;
        let op = format!("/v1/operator/trade-registrations/{trade}/transition");
        transition(&app, &okey, op, json!({"status": "blocked", "reason": "Unterschrift fehlt"})).await;
        let self_case = create_trade(&app, &pkey, "self").await;
        let (s, b) = app.post_json(&format!("/v1/trade-registration/{self_case}/cancel"), &pkey, &json!({"reason": "abgesagt"})).await;
        assert_eq!(s, 200, "{b}");
        let got = rx.wait_for(6).await;
        for d in &got {
            d.verify(&secret).unwrap();
        }

        let log = all_events(&app, &pkey, "", 2).await;
        assert_eq!(log.len(), got.len(), "{log:?}");
        // Newest first; each entry's payload is a delivered body, exactly.
        let mut delivered: Vec<String> = got.iter().map(|d| String::from_utf8(d.body.to_vec()).unwrap()).collect();
        let mut logged: Vec<String> = log.iter().map(|e| serde_json::to_string(&e["payload"]).unwrap()).collect();
        delivered.sort();
        logged.sort();
        assert_eq!(logged, delivered);
        let types: Vec<&str> = log.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types, [
            "registration.cancelled", "registration.form-rendered", "registration.initiated",
            "registration.blocked", "registration.submitted", "registration.initiated",
        ]);
        for e in &log {
            assert_eq!(e["type"], e["payload"]["type"]);
            assert_eq!(e["environment"], "production");
        }
        let ids: std::collections::HashSet<&str> = log.iter().map(|e| e["id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), log.len());

        // Filters: a type, a case, an environment.
        let blocked = all_events(&app, &pkey, "&type=registration.blocked", 10).await;
        assert_eq!(blocked.len(), 1);
        assert_eq!(blocked[0]["payload"]["data"]["reason"], "Unterschrift fehlt");
        let of_case = all_events(&app, &pkey, &format!("&case_id={self_case}"), 10).await;
        let types: Vec<&str> = of_case.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["registration.cancelled", "registration.form-rendered", "registration.initiated"]);
        assert!(all_events(&app, &pkey, "&environment=sandbox", 10).await.is_empty());
        // Operators see every event.
        assert_eq!(all_events(&app, &okey, "", 100).await.len(), log.len());
    }

    async fn a_provider_without_endpoints_has_its_log_and_sees_only_its_own(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, a) = app.provider("A").await;
        let (_, b_key) = app.provider("B").await;
        let trade = create_trade(&app, &a, "self").await;
        let (s, b) = json(app.post("/v1/tax-registration", Some(&b_key)).json(&example("ug")).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let tax = b["response"]["tax_registration_id"].as_str().unwrap().to_string();

        let log_a = all_events(&app, &a, "", 100).await;
        let types: Vec<&str> = log_a.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["registration.form-rendered", "registration.initiated"]);
        assert!(log_a.iter().all(|e| e["case_id"] == trade.as_str()));
        let log_b = all_events(&app, &b_key, "", 100).await;
        assert_eq!(log_b.len(), 1);
        assert_eq!(log_b[0]["type"], "tax-registration.validated");
        assert_eq!(log_b[0]["payload"]["data"]["tax_registration_id"], tax.as_str());
        // Another provider's case filters to nothing, not an error.
        assert!(all_events(&app, &a, &format!("&case_id={tax}"), 10).await.is_empty());

        // A client company's key: its company's cases only.
        let company = log_a[0]["company_id"].as_str().unwrap();
        let (s, k) = json(app.post(&format!("/v1/companies/{company}/api-keys"), Some(&a)).send().await.unwrap()).await;
        assert_eq!(s, 201, "{k}");
        let ckey = k["response"]["api_key"].as_str().unwrap();
        assert_eq!(all_events(&app, ckey, "", 100).await.len(), 2);
        let other = create_trade(&app, &a, "assisted").await;
        assert_eq!(all_events(&app, &a, "", 100).await.len(), 4);
        assert_eq!(all_events(&app, ckey, "", 100).await.len(), 2);
        assert!(all_events(&app, ckey, &format!("&case_id={other}"), 10).await.is_empty());

        // Bad parameters, each named.
        let (s, b) = json(app.get("/v1/events?type=registration.nope&case_id=x&environment=live&cursor=abc&limit=0&colour=red", Some(&a)).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["field"], "colour", "{r}");
        let (s, b) = json(app.get("/v1/events?type=registration.nope&case_id=x&environment=live&cursor=abc&limit=0", Some(&a)).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let fields: Vec<&str> = r["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
        assert_eq!(fields, ["type", "case_id", "environment", "cursor", "limit"]);
        let (s, _) = json(app.get("/v1/events", None).send().await.unwrap()).await;
        assert_eq!(s, 401);
    }

    /// Issue 52.7: the log's cursor was its global sequence number, so B counted exactly how
    /// many events other tenants caused between two of its own. Now a cursor names B's own
    /// last event of the page: the same whatever A does, and another tenant's event as a
    /// cursor gives B nothing.
    async fn cursors_name_the_callers_own_event_and_count_no_one_elses(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, a) = app.provider("A").await;
        let (_, b) = app.provider("B").await;
        create_trade(&app, &b, "self").await;
        for _ in 0..3 {
            create_trade(&app, &a, "self").await;
        }
        create_trade(&app, &b, "self").await;
        let page = |key: String, query: String| {
            let app = &app;
            async move {
                let (s, body) = json(app.get(&format!("/v1/events{query}"), Some(&key)).send().await.unwrap()).await;
                assert_eq!(s, 200, "{query}: {body}");
                body["response"].clone()
            }
        };
        let first = page(b.clone(), "?limit=1".into()).await;
        let last_id = first["events"][0]["id"].as_str().unwrap();
        let cursor = first["next_cursor"].as_str().unwrap().to_string();
        assert_eq!(cursor.len(), 22, "{cursor}");
        assert!(cursor.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'), "{cursor}");
        // The cursor is B's own event's id, base64url: nothing of the log's position.
        let id = uuid::Uuid::parse_str(last_id).unwrap();
        use base64::Engine;
        assert_eq!(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id.as_bytes()), cursor);
        // Pages follow on from it as before: B's other three events.
        let rest = page(b.clone(), format!("?cursor={cursor}")).await;
        assert_eq!(rest["events"].as_array().unwrap().len(), 3, "{rest}");
        // A's event as B's cursor: an empty page, not A's position.
        let a_first = page(a.clone(), "?limit=1".into()).await;
        let a_cursor = a_first["next_cursor"].as_str().unwrap().to_string();
        let foreign = page(b.clone(), format!("?cursor={a_cursor}")).await;
        assert_eq!(foreign["events"].as_array().unwrap().len(), 0, "{foreign}");
        assert!(foreign.get("next_cursor").is_none(), "{foreign}");
        // The numeric cursors of before are refused, naming the parameter.
        let (s, body) = json(app.get("/v1/events?cursor=12", Some(&b)).send().await.unwrap()).await;
        let r = assert_error(s, &body, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["field"], "cursor");
    }
}

//! Keys restricted to one environment (docs/adr/0021-environment-restricted-keys.md): a
//! restricted key creates and sees only its environment's cases and client companies, defaults
//! a create's `environment` to its own, refuses the other with 409 `ENVIRONMENT_MISMATCH`, and
//! issues no key broader than itself. Unrestricted keys and operators see both. Every test runs
//! against SQLite and PostgreSQL, through the real application.

mod common;

use common::{TestApp, app, assert_error, case_document, download, json};
use domain::rule_cases::example;
use serde_json::{Value, json};
use uuid::Uuid;

/// An example request without its `environment` (so the key decides it).
fn without_environment(name: &str) -> Value {
    let mut body = example(name);
    body.as_object_mut().unwrap().remove("environment");
    body
}

/// The example in `environment`.
fn in_environment(name: &str, environment: &str) -> Value {
    let mut body = example(name);
    body["environment"] = json!(environment);
    body
}

/// `POST /v1/companies/{company}/api-keys` with `body` (`None`: no body): status and body.
async fn issue(app: &TestApp, company: Uuid, key: &str, body: Option<Value>) -> (u16, Value) {
    let rb = app.post(&format!("/v1/companies/{company}/api-keys"), Some(key));
    let rb = match body {
        Some(b) => rb.json(&b),
        None => rb,
    };
    json(rb.send().await.unwrap()).await
}

/// A key issued over HTTP that must succeed: the key.
async fn issued(app: &TestApp, company: Uuid, key: &str, body: Option<Value>) -> String {
    let (s, b) = issue(app, company, key, body).await;
    assert_eq!(s, 201, "{b}");
    b["response"]["api_key"].as_str().unwrap().to_string()
}

/// Creates a case of `kind` (`trade`, `tax`) with `body`: its id and its company's id.
async fn create(app: &TestApp, key: &str, kind: &str, body: &Value) -> (String, Uuid) {
    let (s, b) = app
        .post_json(&format!("/v1/{kind}-registration"), key, body)
        .await;
    assert_eq!(s, 201, "{b}");
    let id = b["response"][format!("{kind}_registration_id")]
        .as_str()
        .unwrap()
        .to_string();
    let company = b["response"]["company_id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    (id, company)
}

fn prefix_of(key: &str) -> String {
    domain::auth::parse_key(key).unwrap().prefix.to_string()
}

/// Every key-authenticated request on a case, a company and its keys that `key` must not see:
/// each the 404 of an unknown id, with the body of one.
async fn assert_all_hidden(app: &TestApp, key: &str, trade: &str, tax: &str, company: Uuid) {
    let unknown = Uuid::now_v7();
    let (s, b) = app
        .get_json(&format!("/v1/trade-registration/{unknown}"), key)
        .await;
    let want = assert_error(s, &b, 404, "NOT_FOUND")["message"].clone();
    let sandbox_office = json!({"tax_office_number": "1129"});
    let probes: Vec<(reqwest::RequestBuilder, &str)> = vec![
        (
            app.get(&format!("/v1/trade-registration/{trade}"), Some(key)),
            "GET trade",
        ),
        (
            app.get(&format!("/v1/tax-registration/{tax}"), Some(key)),
            "GET tax",
        ),
        (
            app.post(
                &format!("/v1/trade-registration/{trade}/mark-submitted"),
                Some(key),
            ),
            "mark-submitted",
        ),
        (
            app.post(&format!("/v1/trade-registration/{trade}/cancel"), Some(key))
                .json(&json!({"reason": "probe"})),
            "cancel trade",
        ),
        (
            app.post(&format!("/v1/tax-registration/{tax}/cancel"), Some(key))
                .json(&json!({"reason": "probe"})),
            "cancel tax",
        ),
        (
            app.post(
                &format!("/v1/sandbox/trade-registration/{trade}/transition"),
                Some(key),
            )
            .json(&json!({"status": "submitted"})),
            "sandbox trade step",
        ),
        (
            app.post(
                &format!("/v1/sandbox/tax-registration/{tax}/transition"),
                Some(key),
            )
            .json(&json!({"status": "submitted"})),
            "sandbox tax step",
        ),
        (
            app.post(
                &format!("/v1/sandbox/tax-registration/{tax}/tax-office"),
                Some(key),
            )
            .json(&sandbox_office),
            "sandbox tax office",
        ),
        (
            app.get(&format!("/v1/companies/{company}"), Some(key)),
            "GET company",
        ),
        (
            app.get(&format!("/v1/companies/{company}/api-keys"), Some(key)),
            "list the company's keys",
        ),
        (
            app.post(&format!("/v1/companies/{company}/api-keys"), Some(key)),
            "issue a key of the company",
        ),
    ];
    for (request, what) in probes {
        let (s, b) = json(request.send().await.unwrap()).await;
        let r = assert_error(s, &b, 404, "NOT_FOUND");
        assert_eq!(r["message"], want, "{what}: {b}");
    }
}

backend_tests! {
    async fn a_restricted_key_defaults_creates_to_its_environment_and_refuses_the_other(backend) {
        let app = app(backend).await;
        let (pid, open) = app.provider("P GmbH").await;
        let (s, b) = issue(&app, pid, &open, Some(json!({"environment": "sandbox"}))).await;
        assert_eq!(s, 201, "{b}");
        let r = &b["response"];
        assert_eq!(r["environment"], "sandbox");
        assert_eq!(r["key_type"], "provider");
        let test = r["api_key"].as_str().unwrap().to_string();
        assert!(test.starts_with("rfs_prv_test_"), "{test}");
        assert_eq!(r["key_prefix"], prefix_of(&test));

        // No `environment` (or null): the key's.
        let (trade, company) = create(&app, &test, "trade", &without_environment("self")).await;
        assert_eq!(app.read(&format!("/v1/trade-registration/{trade}"), &open).await["environment"], "sandbox");
        assert_eq!(app.read(&format!("/v1/companies/{company}"), &open).await["environment"], "sandbox");
        let mut body = example("ug");
        body["environment"] = Value::Null;
        let (tax, _) = create(&app, &test, "tax", &body).await;
        assert_eq!(app.read(&format!("/v1/tax-registration/{tax}"), &test).await["environment"], "sandbox");
        let (s, b) = app.post_json("/v1/tax-registration/gbr", &test, &without_environment("gbr")).await;
        assert_eq!(s, 201, "{b}");
        let gbr = b["response"]["tax_registration_id"].as_str().unwrap();
        assert_eq!(app.read(&format!("/v1/tax-registration/{gbr}"), &test).await["environment"], "sandbox");
        // Its own, named: as well.
        create(&app, &test, "trade", &in_environment("self", "sandbox")).await;

        // The other: 409 naming both, for every create, before anything is written.
        for (path, name) in [("/v1/trade-registration", "self"), ("/v1/tax-registration", "ug"), ("/v1/tax-registration/gbr", "gbr")] {
            let (s, b) = app.post_json(path, &test, &in_environment(name, "production")).await;
            let r = assert_error(s, &b, 409, "ENVIRONMENT_MISMATCH");
            assert_eq!(r["message"], "the API key is restricted to sandbox; the request is for production", "{path}");
        }
        // Not an environment at all: the validation's 422, as for any key.
        let (s, b) = app.post_json("/v1/trade-registration", &test, &in_environment("self", "staging")).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["field"], "environment", "{b}");

        // A production company named by the sandbox key: unknown to it (404), while the
        // unrestricted key hears of the mismatch (409) as before.
        let (_, prod_company) = create(&app, &open, "trade", &without_environment("self")).await;
        let mut named = without_environment("self");
        named["company_id"] = json!(prod_company);
        let (s, b) = app.post_json("/v1/trade-registration", &test, &named).await;
        assert_error(s, &b, 404, "COMPANY_NOT_FOUND");
        named["environment"] = json!("sandbox");
        let (s, b) = app.post_json("/v1/trade-registration", &open, &named).await;
        assert_error(s, &b, 409, "ENVIRONMENT_MISMATCH");
        // Its own environment's company, named: found (it has its trade registration already).
        let mut named = without_environment("self");
        named["company_id"] = json!(company);
        let (s, b) = app.post_json("/v1/trade-registration", &test, &named).await;
        assert_error(s, &b, 409, "COMPANY_ALREADY_REGISTERED");

        // A production key likewise, the other way round.
        let live = issued(&app, pid, &open, Some(json!({"environment": "production"}))).await;
        assert!(live.starts_with("rfs_prv_live_"), "{live}");
        let (id, _) = create(&app, &live, "trade", &without_environment("self")).await;
        assert_eq!(app.read(&format!("/v1/trade-registration/{id}"), &open).await["environment"], "production");
        let (s, b) = app.post_json("/v1/trade-registration", &live, &in_environment("self", "sandbox")).await;
        let r = assert_error(s, &b, 409, "ENVIRONMENT_MISMATCH");
        assert_eq!(r["message"], "the API key is restricted to production; the request is for sandbox");
    }

    async fn a_restricted_key_sees_nothing_of_the_other_environment(backend) {
        let app = app(backend).await;
        let (pid, open) = app.provider("P GmbH").await;
        let test = issued(&app, pid, &open, Some(json!({"environment": "sandbox"}))).await;
        let live = issued(&app, pid, &open, Some(json!({"environment": "production"}))).await;
        let (prod_trade, prod_company) = create(&app, &open, "trade", &in_environment("self", "production")).await;
        let (prod_tax, _) = create(&app, &open, "tax", &in_environment("ug", "production")).await;
        let (sb_trade, sb_company) = create(&app, &open, "trade", &in_environment("self", "sandbox")).await;
        let (sb_tax, _) = create(&app, &open, "tax", &in_environment("ug", "sandbox")).await;

        // Sandbox key vs production cases and company; production key vs sandbox ones.
        assert_all_hidden(&app, &test, &prod_trade, &prod_tax, prod_company).await;
        assert_all_hidden(&app, &live, &sb_trade, &sb_tax, sb_company).await;
        // Another provider, restricted or not: the same.
        let (qid, other) = app.provider("Q GmbH").await;
        let other_test = issued(&app, qid, &other, Some(json!({"environment": "sandbox"}))).await;
        assert_all_hidden(&app, &other, &sb_trade, &sb_tax, sb_company).await;
        assert_all_hidden(&app, &other_test, &sb_trade, &sb_tax, sb_company).await;

        // Its own environment: all there, documents included (their signed links come with the
        // case it may read; a key that may not read the case never gets one).
        let case = app.read(&format!("/v1/trade-registration/{sb_trade}"), &test).await;
        let doc = case_document(&case, "trade-licence-application").expect("the GewA 1");
        assert!(download(&app, doc).await.starts_with(b"%PDF-"));
        app.read(&format!("/v1/tax-registration/{sb_tax}"), &test).await;
        assert_eq!(app.read(&format!("/v1/companies/{sb_company}"), &test).await["environment"], "sandbox");
        assert_eq!(app.read(&format!("/v1/companies/{pid}"), &test).await["type"], "provider");
        let (s, b) = json(app.post(&format!("/v1/sandbox/tax-registration/{sb_tax}/tax-office"), Some(&test)).json(&json!({"tax_office_number": "1129"})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = json(app.post(&format!("/v1/trade-registration/{sb_trade}/mark-submitted"), Some(&test)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = json(app.post(&format!("/v1/trade-registration/{prod_trade}/mark-submitted"), Some(&live)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        app.read(&format!("/v1/tax-registration/{prod_tax}"), &live).await;

        // Unrestricted keys and operators see both.
        let (_, op) = app.operator("Olga").await;
        for key in [&open, &op] {
            for path in [format!("/v1/trade-registration/{prod_trade}"), format!("/v1/trade-registration/{sb_trade}"), format!("/v1/companies/{prod_company}"), format!("/v1/companies/{sb_company}")] {
                app.read(&path, key).await;
            }
        }
        for environment in ["production", "sandbox"] {
            let listed = app.read(&format!("/v1/operator/tax-registrations?environment={environment}"), &op).await;
            assert_eq!(listed["cases"].as_array().map(Vec::len), Some(1), "{listed}");
        }
    }

    async fn a_restricted_client_key_reads_its_own_company_only(backend) {
        let app = app(backend).await;
        let (pid, open) = app.provider("P GmbH").await;
        let test = issued(&app, pid, &open, Some(json!({"environment": "sandbox"}))).await;
        let (trade, company) = create(&app, &test, "trade", &without_environment("self")).await;
        let (other_trade, other_company) = create(&app, &test, "trade", &without_environment("assisted")).await;
        // A sandbox key issues sandbox keys: for a client company too.
        let (s, b) = issue(&app, company, &test, None).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["response"]["key_type"], "client");
        assert_eq!(b["response"]["environment"], "sandbox");
        let client = b["response"]["api_key"].as_str().unwrap().to_string();
        assert!(client.starts_with("rfs_cli_test_"), "{client}");

        app.read(&format!("/v1/trade-registration/{trade}"), &client).await;
        app.read(&format!("/v1/companies/{company}"), &client).await;
        for path in [format!("/v1/trade-registration/{other_trade}"), format!("/v1/companies/{other_company}"), format!("/v1/companies/{pid}")] {
            let (s, b) = app.get_json(&path, &client).await;
            assert_error(s, &b, 404, "NOT_FOUND");
        }
        // Client keys only read.
        let (s, b) = app.post_json("/v1/trade-registration", &client, &without_environment("self")).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let (s, b) = issue(&app, company, &client, None).await;
        assert_error(s, &b, 403, "FORBIDDEN");

        // A client company's key is of the company's environment: the unrestricted key asking
        // for the other gets 409.
        let (s, b) = issue(&app, company, &open, Some(json!({"environment": "production"}))).await;
        let r = assert_error(s, &b, 409, "ENVIRONMENT_MISMATCH");
        assert_eq!(r["message"], "the company is a sandbox company; the key would be restricted to production");
        let (s, b) = issue(&app, company, &open, Some(json!({"environment": "sandbox"}))).await;
        assert_eq!(s, 201, "{b}");
        assert!(b["response"]["key_prefix"].as_str().unwrap().starts_with("rfs_cli_test_"));
    }

    async fn a_restricted_key_issues_lists_and_revokes_no_key_broader_than_itself(backend) {
        let app = app(backend).await;
        let (pid, open) = app.provider("P GmbH").await;
        let test = issued(&app, pid, &open, Some(json!({"environment": "sandbox"}))).await;
        let live = issued(&app, pid, &open, Some(json!({"environment": "production"}))).await;

        // No body, `{}` or its own environment: a key of its own environment.
        for body in [None, Some(json!({})), Some(json!({"environment": "sandbox"})), Some(json!({"environment": null}))] {
            let key = issued(&app, pid, &test, body).await;
            assert!(key.starts_with("rfs_prv_test_"), "{key}");
        }
        // The other environment: 409; never an unrestricted key.
        let (s, b) = issue(&app, pid, &test, Some(json!({"environment": "production"}))).await;
        let r = assert_error(s, &b, 409, "ENVIRONMENT_MISMATCH");
        assert_eq!(r["message"], "the API key is restricted to sandbox; the request is for production");
        // Not an environment: 422 on the field.
        let (s, b) = issue(&app, pid, &open, Some(json!({"environment": "staging"}))).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["field"], "environment", "{b}");
        // An unrestricted key still issues an unrestricted key by default.
        let (s, b) = issue(&app, pid, &open, None).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["response"]["environment"], Value::Null);
        let open2 = b["response"]["api_key"].as_str().unwrap().to_string();
        assert_eq!(domain::auth::parse_key(&open2).unwrap().environment, None);

        // The listing shows each key's environment; a restricted key lists only the provider's
        // keys of its own environment.
        let page = app.read(&format!("/v1/companies/{pid}/api-keys"), &open).await;
        let all: Vec<(String, Value)> = page["api_keys"].as_array().unwrap().iter().map(|k| (k["key_prefix"].as_str().unwrap().to_string(), k["environment"].clone())).collect();
        assert_eq!(all.len(), 8, "{page}");
        assert!(all.contains(&(prefix_of(&open), Value::Null)));
        assert!(all.contains(&(prefix_of(&test), json!("sandbox"))));
        assert!(all.contains(&(prefix_of(&live), json!("production"))));
        let page = app.read(&format!("/v1/companies/{pid}/api-keys"), &test).await;
        let own: Vec<&Value> = page["api_keys"].as_array().unwrap().iter().collect();
        assert_eq!(own.len(), 5, "{page}");
        assert!(own.iter().all(|k| k["environment"] == "sandbox" && k["key_prefix"].as_str().unwrap().starts_with("rfs_prv_test_")), "{page}");
        // Paged: the cursor is a restricted prefix.
        let page = app.read(&format!("/v1/companies/{pid}/api-keys?limit=2"), &test).await;
        let cursor = page["next_cursor"].as_str().unwrap().to_string();
        assert!(cursor.starts_with("rfs_prv_test_"), "{cursor}");
        let next = app.read(&format!("/v1/companies/{pid}/api-keys?limit=10&after={cursor}"), &test).await;
        assert_eq!(next["api_keys"].as_array().unwrap().len(), 3, "{next}");

        // Revoking: a broader key or one of the other environment is unknown to it (404).
        let revoke = |prefix: String, key: String| {
            let app = &app;
            async move {
                app.client.delete(app.url(&format!("/v1/companies/{pid}/api-keys/{prefix}"))).bearer_auth(key).send().await.unwrap()
            }
        };
        for target in [&open, &live] {
            let (s, b) = json(revoke(prefix_of(target), test.clone()).await).await;
            assert_error(s, &b, 404, "NOT_FOUND");
        }
        app.read(&format!("/v1/companies/{pid}"), &open).await;
        app.read(&format!("/v1/companies/{pid}"), &live).await;
        // Its own and itself: yes. The unrestricted key revokes any.
        assert_eq!(revoke(prefix_of(&live), open.clone()).await.status(), 204);
        assert_eq!(revoke(prefix_of(&test), test.clone()).await.status(), 204);
        let (s, b) = app.get_json(&format!("/v1/companies/{pid}"), &test).await;
        assert_error(s, &b, 401, "UNAUTHORIZED");

        // Webhook endpoints receive both environments' events: restricted keys may not manage them.
        let other_test = issued(&app, pid, &open, Some(json!({"environment": "sandbox"}))).await;
        let (s, b) = app.post_json("/v1/webhook-endpoints", &other_test, &json!({"url": "https://hooks.example.com/filing"})).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let (s, b) = app.get_json("/v1/webhook-endpoints", &other_test).await;
        assert_error(s, &b, 403, "FORBIDDEN");
    }

    async fn a_restricted_key_is_never_handed_another_environments_kept_answer(backend) {
        let app = app(backend).await;
        let (pid, open) = app.provider("P GmbH").await;
        let test = issued(&app, pid, &open, Some(json!({"environment": "sandbox"}))).await;
        let body = without_environment("self");
        let send = |key: &str| {
            app.post("/v1/trade-registration", Some(key))
                .header("Idempotency-Key", "same-key-1")
                .json(&body)
                .send()
        };
        let (s, first) = json(send(&open).await.unwrap()).await;
        assert_eq!(s, 201, "{first}");
        let (s, again) = json(send(&open).await.unwrap()).await;
        assert_eq!(s, 201);
        assert_eq!(again["response"]["trade_registration_id"], first["response"]["trade_registration_id"], "a replay");
        // The same key and body from the sandbox key: a request of its own (a sandbox case),
        // not the production case's answer.
        let (s, other) = json(send(&test).await.unwrap()).await;
        assert_eq!(s, 201, "{other}");
        let id = other["response"]["trade_registration_id"].as_str().unwrap();
        assert_ne!(other["response"]["trade_registration_id"], first["response"]["trade_registration_id"]);
        assert_eq!(app.read(&format!("/v1/trade-registration/{id}"), &open).await["environment"], "sandbox");
        let (s, replay) = json(send(&test).await.unwrap()).await;
        assert_eq!(s, 201);
        assert_eq!(replay["response"]["trade_registration_id"], id);
    }

    async fn unrestricted_keys_keep_todays_behaviour(backend) {
        let app = app(backend).await;
        let (_, open) = app.provider("P GmbH").await;
        assert_eq!(domain::auth::parse_key(&open).unwrap().environment, None);
        // No `environment`: production, as before; either one named: that one.
        let (id, _) = create(&app, &open, "trade", &without_environment("self")).await;
        assert_eq!(app.read(&format!("/v1/trade-registration/{id}"), &open).await["environment"], "production");
        let (id, _) = create(&app, &open, "tax", &in_environment("ug", "sandbox")).await;
        assert_eq!(app.read(&format!("/v1/tax-registration/{id}"), &open).await["environment"], "sandbox");
        app.read("/v1/webhook-endpoints", &open).await;
    }

    async fn a_restricted_key_reads_the_event_log_of_its_environment_only(backend) {
        let app = app(backend).await;
        let (provider, open) = app.provider("P").await;
        let sandbox = issued(&app, provider, &open, Some(json!({"environment": "sandbox"}))).await;
        let (live_trade, _) = create(&app, &open, "trade", &in_environment("self", "production")).await;
        let (sandbox_trade, _) = create(&app, &sandbox, "trade", &without_environment("self")).await;
        let events = |key: String, query: &'static str| {
            let app = &app;
            async move { app.get_json(&format!("/v1/events{query}"), &key).await }
        };
        let (s, b) = events(sandbox.clone(), "").await;
        assert_eq!(s, 200, "{b}");
        let listed = b["response"]["events"].as_array().unwrap();
        assert_eq!(listed.len(), 2, "{b}");
        assert!(listed.iter().all(|e| e["case_id"] == sandbox_trade.as_str() && e["environment"] == "sandbox"), "{b}");
        let (s, b) = events(sandbox.clone(), "?environment=production").await;
        assert_error(s, &b, 409, "ENVIRONMENT_MISMATCH");
        let (s, b) = app.get_json(&format!("/v1/events?case_id={live_trade}"), &sandbox).await;
        assert_eq!(s, 200, "{b}");
        assert!(b["response"]["events"].as_array().unwrap().is_empty(), "{b}");
        // The unrestricted key sees both.
        let (_, b) = events(open.clone(), "").await;
        assert_eq!(b["response"]["events"].as_array().unwrap().len(), 4, "{b}");
        // The case lists too: the key's environment only, the other one asked for is 409.
        let (s, b) = app.get_json("/v1/trade-registration", &sandbox).await;
        assert_eq!(s, 200, "{b}");
        let ids: Vec<&str> = b["response"]["cases"].as_array().unwrap().iter().map(|c| c["trade_registration_id"].as_str().unwrap()).collect();
        assert_eq!(ids, [sandbox_trade.as_str()], "{b}");
        let (s, b) = app.get_json("/v1/trade-registration?environment=production", &sandbox).await;
        assert_error(s, &b, 409, "ENVIRONMENT_MISMATCH");
        let (_, b) = app.get_json("/v1/trade-registration", &open).await;
        assert_eq!(b["response"]["cases"].as_array().unwrap().len(), 2, "{b}");
        // A sandbox key cancels its own case, not the production one (404 above).
        let (s, b) = app.post_json(&format!("/v1/trade-registration/{sandbox_trade}/cancel"), &sandbox, &json!({"reason": "Test"})).await;
        assert_eq!(s, 200, "{b}");
    }
}

//! The case lists of providers and client companies: `GET /v1/trade-registration` and
//! `GET /v1/tax-registration` (docs/api/lists.md).

mod common;

use common::{TestApp, app, assert_error, json};
use domain::rule_cases::example;
use serde_json::{Value, json};

/// A trade registration (`which`: `self` or `assisted`) with this client reference.
async fn trade(app: &TestApp, key: &str, which: &str, reference: &str) -> String {
    let mut body = example(which);
    body["client_reference"] = json!(reference);
    app.create("/v1/trade-registration", key, &body).await
}

/// A list answer: status and body.
async fn list(app: &TestApp, path: &str, key: &str) -> (u16, Value) {
    json(app.get(path, Some(key)).send().await.unwrap()).await
}

/// The ids (`field`) of a page that must answer 200, and its next cursor.
async fn page(app: &TestApp, path: &str, key: &str, field: &str) -> (Vec<String>, Option<String>) {
    let (s, b) = list(app, path, key).await;
    assert_eq!(s, 200, "{path}: {b}");
    let ids = b["response"]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c[field].as_str().unwrap().to_string())
        .collect();
    let next = b["response"]["next_cursor"].as_str().map(str::to_string);
    (ids, next)
}

async fn trade_ids(app: &TestApp, query: &str, key: &str) -> Vec<String> {
    let (ids, _) = page(
        app,
        &format!("/v1/trade-registration{query}"),
        key,
        "trade_registration_id",
    )
    .await;
    ids
}

async fn tax_ids(app: &TestApp, query: &str, key: &str) -> Vec<String> {
    let (ids, _) = page(
        app,
        &format!("/v1/tax-registration{query}"),
        key,
        "tax_registration_id",
    )
    .await;
    ids
}

backend_tests! {
    /// Pages of three walk every case that existed at the first page exactly once, newest
    /// first, while new cases are created between the pages; those appear on a new first page.
    async fn a_walk_through_the_pages_holds_under_concurrent_creates(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut created = Vec::new();
        for i in 0..8 {
            created.push(trade(&app, &key, "self", &format!("walk-{i}")).await);
        }
        created.reverse(); // newest first
        let mut seen = Vec::new();
        let mut later = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let path = match &cursor {
                None => "/v1/trade-registration?limit=3".to_string(),
                Some(c) => format!("/v1/trade-registration?limit=3&cursor={c}"),
            };
            let (ids, next) = page(&app, &path, &key, "trade_registration_id").await;
            assert!(ids.len() <= 3);
            seen.extend(ids);
            // Two new cases before the next page, one of them from another task at the same time.
            let (a, b) = tokio::join!(
                trade(&app, &key, "self", "concurrent"),
                trade(&app, &key, "assisted", "concurrent")
            );
            later.extend([a, b]);
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(seen, created, "every case once, newest first, none of the later ones");
        let (first, _) = page(&app, "/v1/trade-registration?limit=100", &key, "trade_registration_id").await;
        assert_eq!(first.len(), created.len() + later.len());
        assert!(later.iter().all(|id| first[..later.len()].contains(id)), "the new ones come first");
        assert_eq!(&first[later.len()..], &created[..]);
        // The default page is 20.
        assert_eq!(first.len(), 14);
        let (ids, next) = page(&app, "/v1/trade-registration", &key, "trade_registration_id").await;
        assert_eq!(ids, first);
        assert!(next.is_none());
    }

    /// Every filter, alone and together, on a provider's trade and tax cases; an item carries
    /// what a list shows.
    async fn each_filter_selects_its_cases(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let a = trade(&app, &key, "self", "crm-a").await;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let between = time::OffsetDateTime::now_utc();
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let b = trade(&app, &key, "assisted", "crm-b").await;
        let mut sandbox = example("self");
        sandbox["environment"] = json!("sandbox");
        sandbox["client_reference"] = json!("crm-c");
        let c = app.create("/v1/trade-registration", &key, &sandbox).await;

        assert_eq!(trade_ids(&app, "", &key).await, [c.as_str(), b.as_str(), a.as_str()]);
        assert_eq!(trade_ids(&app, "?client_reference=crm-b", &key).await, [b.as_str()]);
        assert!(trade_ids(&app, "?client_reference=crm", &key).await.is_empty(), "exact match");
        assert_eq!(trade_ids(&app, "?status=submitted", &key).await, [b.as_str()]);
        assert_eq!(trade_ids(&app, "?status=form-rendered", &key).await, [c.as_str(), a.as_str()]);
        assert_eq!(trade_ids(&app, "?environment=sandbox", &key).await, [c.as_str()]);
        assert_eq!(trade_ids(&app, "?environment=production&status=form-rendered", &key).await, [a.as_str()]);
        let at = |t: time::OffsetDateTime| {
            t.format(&time::format_description::well_known::Rfc3339).unwrap().replace('+', "%2B")
        };
        assert_eq!(trade_ids(&app, &format!("?created_after={}", at(between)), &key).await, [c.as_str(), b.as_str()]);
        assert_eq!(trade_ids(&app, &format!("?created_before={}", at(between)), &key).await, [a.as_str()]);
        // The same instant in another offset.
        let berlin = between.to_offset(time::macros::offset!(+01:00));
        assert_eq!(trade_ids(&app, &format!("?created_before={}", at(berlin)), &key).await, [a.as_str()]);

        let case = app.read(&format!("/v1/trade-registration/{b}"), &key).await;
        let company = case["company_id"].as_str().unwrap();
        assert_eq!(trade_ids(&app, &format!("?company_id={company}"), &key).await, [b.as_str()]);
        let (s, body) = list(&app, &format!("/v1/trade-registration?company_id={company}&limit=1"), &key).await;
        assert_eq!(s, 200);
        let item = &body["response"]["cases"][0];
        assert_eq!(item["trade_registration_id"], b.as_str());
        assert_eq!(item["company_id"], company);
        assert_eq!(item["company_name"], example("assisted")["name"]);
        assert_eq!(item["status"], "submitted");
        assert_eq!(item["package"], "assisted");
        assert_eq!(item["environment"], "production");
        assert_eq!(item["client_reference"], "crm-b");
        assert_eq!(item["created_at"], case["created_at"]);
        assert_eq!(item["trade_office"]["key"], case["trade_office"]["key"]);
        assert_eq!(item["trade_office"]["name"], case["trade_office"]["name"]);
        assert!(body["response"].get("next_cursor").is_none());

        // Tax registrations: both kinds of company in one list, by the id the provider chose.
        let gmbh = app.create("/v1/tax-registration", &key, &example("gmbh")).await;
        let mut gbr = example("gbr");
        gbr["client_reference"] = json!("crm-gbr");
        let chosen = "00000000-0000-4000-8000-000000000001";
        gbr["tax_registration_id"] = json!(chosen);
        let gbr = app.create("/v1/tax-registration/gbr", &key, &gbr).await;
        assert_eq!(gbr, chosen);
        assert_eq!(tax_ids(&app, "", &key).await, [gbr.as_str(), gmbh.as_str()], "newest first, whatever the id");
        assert_eq!(tax_ids(&app, "?client_reference=crm-gbr&status=validated", &key).await, [gbr.as_str()]);
        assert!(tax_ids(&app, "?status=submitted", &key).await.is_empty());
        let (_, body) = list(&app, "/v1/tax-registration?client_reference=crm-gbr", &key).await;
        let item = &body["response"]["cases"][0];
        let case = app.read(&format!("/v1/tax-registration/{gbr}"), &key).await;
        assert_eq!(item["legal_form"], "gbr");
        assert_eq!(item["company_name"], example("gbr")["name"]);
        assert_eq!(item["tax_office"]["number"], case["tax_office"]["number"]);
        assert_eq!(item["tax_office"]["name"], case["tax_office"]["name"]);
        assert_eq!(item["created_at"], case["created_at"]);
        // Pages of one.
        let (first, next) = page(&app, "/v1/tax-registration?limit=1", &key, "tax_registration_id").await;
        assert_eq!(first, [gbr.as_str()]);
        let next = next.unwrap();
        let (second, last) = page(&app, &format!("/v1/tax-registration?limit=1&cursor={next}"), &key, "tax_registration_id").await;
        assert_eq!(second, [gmbh.as_str()]);
        assert!(last.is_none());
    }

    /// A provider lists its own cases only, a client key its company's; another provider's
    /// company as a filter is an empty list. Operators list every case (tax ones by key).
    async fn lists_hold_the_callers_cases_only(backend) {
        let app = app(backend).await;
        let (provider, key) = app.provider("P").await;
        let (_, other_key) = app.provider("Q").await;
        let (company, client_key) = app.client_company_like(provider, &example("self")).await;
        let mut body = example("self");
        body["company_id"] = json!(company);
        let own = app.create("/v1/trade-registration", &key, &body).await;
        let mine = trade(&app, &key, "self", "p").await;
        let theirs = trade(&app, &other_key, "self", "q").await;
        let tax = app.create("/v1/tax-registration", &key, &example("gmbh")).await;
        let other_tax = app.create("/v1/tax-registration", &other_key, &example("ug")).await;

        assert_eq!(trade_ids(&app, "", &key).await, [mine.as_str(), own.as_str()]);
        assert_eq!(trade_ids(&app, "", &other_key).await, [theirs.as_str()]);
        assert_eq!(tax_ids(&app, "", &key).await, [tax.as_str()]);
        assert_eq!(tax_ids(&app, "", &other_key).await, [other_tax.as_str()]);
        // Another provider's company: an empty list, as for an unknown one.
        assert!(trade_ids(&app, &format!("?company_id={company}"), &other_key).await.is_empty());
        assert!(trade_ids(&app, &format!("?company_id={}", uuid::Uuid::now_v7()), &key).await.is_empty());
        assert!(trade_ids(&app, "?client_reference=p", &other_key).await.is_empty());

        // The client company's key: its own case, and nothing of another company.
        assert_eq!(trade_ids(&app, "", &client_key).await, [own.as_str()]);
        assert!(tax_ids(&app, "", &client_key).await.is_empty());
        let case = app.read(&format!("/v1/trade-registration/{mine}"), &key).await;
        let sibling = case["company_id"].as_str().unwrap();
        assert!(trade_ids(&app, &format!("?company_id={sibling}"), &client_key).await.is_empty());
        assert!(trade_ids(&app, "?client_reference=p", &client_key).await.is_empty());

        let (_, op) = app.operator("O").await;
        assert_eq!(trade_ids(&app, "", &op).await, [theirs.as_str(), mine.as_str(), own.as_str()]);
        let keys = tax_ids(&app, "", &op).await;
        assert_eq!(keys.len(), 2);
        for id in keys {
            let (s, _) = app.get_json(&format!("/v1/tax-registration/{id}"), &op).await;
            assert_eq!(s, 200, "an operator reads a listed tax case by the id listed");
        }
    }

    /// Unknown parameters and bad values are one 422 naming each.
    async fn a_bad_query_names_every_broken_parameter(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        for path in ["/v1/trade-registration", "/v1/tax-registration"] {
            let (s, b) = list(&app, &format!("{path}?state=x&status=done&environment=live&company_id=7&created_after=yesterday&created_before=2026-13-01T00:00:00Z&cursor=%21&limit=101&limit=5"), &key).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            let fields: Vec<(&str, &str)> = r["errors"].as_array().unwrap().iter()
                .map(|e| (e["field"].as_str().unwrap(), e["code"].as_str().unwrap())).collect();
            assert_eq!(fields, [
                ("state", "unknown_field"),
                ("status", "invalid_value"),
                ("environment", "invalid_value"),
                ("company_id", "invalid_value"),
                ("created_after", "invalid_value"),
                ("created_before", "invalid_value"),
                ("cursor", "invalid_value"),
                ("limit", "invalid_value"),
                ("limit", "invalid_value"),
            ], "{path}");
            let (s, b) = list(&app, &format!("{path}?limit=abc"), &key).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!(r["errors"][0]["code"], "invalid_type");
        }
        // A trade status is not a tax status.
        let (s, b) = list(&app, "/v1/tax-registration?status=form-rendered", &key).await;
        assert_error(s, &b, 422, "VALIDATION_FAILED");
        // No key: 401.
        let res = app.get("/v1/trade-registration", None).send().await.unwrap();
        assert_eq!(res.status(), 401);
    }
}

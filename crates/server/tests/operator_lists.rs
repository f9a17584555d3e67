//! The operators' case lists (`GET /v1/operator/trade-registrations`, `/tax-registrations`,
//! `cases::lists::operator_case_page`): filters by provider and office, searches by id, postal
//! code and words, both orders across pages, counts by status, every broken parameter in one
//! 422, and operator keys only.

mod common;

use common::{TestApp, assert_error, field_codes, json};
use domain::lifecycle::Lifecycle;
use domain::rule_cases::example;
use serde_json::{Value, json};

/// The ids of a list page's cases.
fn ids_of(b: &Value) -> Vec<String> {
    b["response"]["cases"]
        .as_array()
        .unwrap_or_else(|| panic!("{b}"))
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

backend_tests! {
    async fn operators_filter_search_count_and_page(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (p, pkey) = app.provider("P").await;
        let (q, qkey) = app.provider("Q").await;
        let (_, okey) = app.operator("O").await;
        let trade_path = "/v1/trade-registration";

        // P: the self example (Mustermann Software GmbH, KD-2025-0042, 10115 Berlin, owner
        // Erika Mustermann), the assisted one (10117, owners Max Mustermann and Zofia
        // Łukasiewicz, ACME-7781), a sandbox case; Q: a company of its own.
        let own = app.create(trade_path, &pkey, &example("self")).await;
        let assisted = app.create(trade_path, &pkey, &example("assisted")).await;
        let mut sandbox = example("self");
        sandbox["environment"] = json!("sandbox");
        sandbox["client_reference"] = json!("SB-1");
        let sandbox = app.create(trade_path, &pkey, &sandbox).await;
        let mut other = example("self");
        other["name"] = json!("Özdemir Bau GmbH");
        other["client_reference"] = json!("Q_1");
        other["owners"][0]["first_name"] = json!("Ayşe");
        other["owners"][0]["last_name"] = json!("Özdemir");
        let other = app.create(trade_path, &qkey, &other).await;
        let (own, assisted, sandbox, other) = (own.as_str(), assisted.as_str(), sandbox.as_str(), other.as_str());

        let list = |path: &'static str, query: String| {
            let okey = okey.clone();
            let app = &app;
            async move { json(app.get(&format!("/v1/operator/{path}{query}"), Some(&okey)).send().await.unwrap()).await }
        };
        let trade = |query: &str| {
            let query = query.to_string();
            async move {
                let (s, b) = list("trade-registrations", query.clone()).await;
                assert_eq!(s, 200, "{query}: {b}");
                ids_of(&b)
            }
        };

        assert_eq!(trade("").await, [own, assisted, other], "production, oldest first");
        assert_eq!(trade("?order=newest").await, [other, assisted, own]);
        assert_eq!(trade("?order=oldest&environment=sandbox").await, [sandbox]);
        assert_eq!(trade(&format!("?provider_id={q}")).await, [other]);
        assert_eq!(trade(&format!("?provider_id={p}&order=newest")).await, [assisted, own]);
        // Offices: each case's as the list shows it (Berlin's are per district).
        let (_, b) = list("trade-registrations", String::new()).await;
        let offices: Vec<(String, String)> = b["response"]["cases"].as_array().unwrap().iter()
            .map(|c| (c["id"].as_str().unwrap().to_string(), c["office_key"].as_str().expect("an office").to_string()))
            .collect();
        let office = offices[0].1.clone();
        let in_office: Vec<&str> = offices.iter().filter(|(_, o)| *o == office).map(|(id, _)| id.as_str()).collect();
        assert!(in_office.contains(&own) && in_office.contains(&other), "{offices:?}");
        assert_eq!(trade(&format!("?office={office}")).await, in_office);
        let (_, assisted_office) = offices.iter().find(|(id, _)| id == assisted).unwrap();
        assert_eq!(trade(&format!("?office={assisted_office}&status=submitted")).await, [assisted]);
        assert!(trade(&format!("?office={office}&status=submitted&provider_id={q}")).await.is_empty());
        assert!(trade("?office=09162000").await.is_empty());
        // A parameter given empty is checked as given (the OpenAPI document's schema says so):
        // each is named; the console leaves its empty fields out instead.
        let (s, b) = list("trade-registrations", "?q=&office=&status=&provider_id=&order=".into()).await;
        assert_eq!(s, 422, "{b}");
        let named: Vec<&str> = b["response"]["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
        assert_eq!(named, ["status", "provider_id", "office", "q", "order"]);

        // Searches: an id, a postal code, words of names and references.
        assert_eq!(trade(&format!("?q={assisted}")).await, [assisted]);
        assert_eq!(trade(&format!("?q=%20{}%20", other.to_uppercase())).await, [other]);
        assert!(trade(&format!("?q={}", uuid::Uuid::now_v7())).await.is_empty());
        assert_eq!(trade("?q=10117").await, [assisted]);
        assert_eq!(trade("?q=10115&order=newest").await, [other, own]);
        assert_eq!(trade("?q=10115&environment=sandbox").await, [sandbox]);
        for (q, expected) in [
            ("%C5%81UKASIEWICZ", vec![assisted]),
            ("mustermann", vec![own, assisted]),
            ("max+mustermann", vec![assisted]),
            ("erika+mustermann", vec![own]),
            ("%C3%B6zdemir", vec![other]),
            ("AY%C5%9EE", vec![other]),
            ("acme-7781", vec![assisted]),
            ("kd-2025", vec![own]),
            ("gastronomie", vec![assisted]),
            ("q_1", vec![other]),
            ("q%251", vec![]),
            ("software+gmbh", vec![own]),
            ("nobody", vec![]),
        ] {
            assert_eq!(trade(&format!("?q={q}")).await, expected, "{q}");
        }
        assert_eq!(trade(&format!("?q=mustermann&provider_id={q}")).await, Vec::<String>::new());
        assert_eq!(trade("?q=mustermann&status=submitted").await, [assisted]);

        // The items: the company, the reference, the office.
        let (_, b) = list("trade-registrations", format!("?q={assisted}")).await;
        let item = &b["response"]["cases"][0];
        assert_eq!(item["company_name"], "Mustermann & Łukasiewicz Gastronomie GbR");
        assert_eq!(item["client_reference"], "ACME-7781");
        assert_eq!(item["office_key"].as_str(), Some(assisted_office.as_str()));
        assert!(item["office_name"].as_str().is_some_and(|n| !n.is_empty()), "{item}");
        assert_eq!(item["legal_form"], Value::Null);
        assert_eq!((item["public_id"].as_str(), item["status"].as_str()), (Some(assisted), Some("submitted")));
        assert!(b["response"].get("counts").is_none());

        // Pages across boundaries, in both orders.
        for (order, expected) in [("oldest", vec![own, assisted, other]), ("newest", vec![other, assisted, own])] {
            let mut walked = Vec::new();
            let mut after = String::new();
            loop {
                let (s, b) = list("trade-registrations", format!("?order={order}&limit=1{after}")).await;
                assert_eq!(s, 200, "{b}");
                walked.extend(ids_of(&b));
                match b["response"]["next_cursor"].as_str() {
                    Some(c) => after = format!("&after={c}"),
                    None => break,
                }
            }
            assert_eq!(walked, expected, "{order}");
        }

        // Counts by status: of the environment, provider and office, not of status or search.
        let (s, b) = list("trade-registrations", "?counts=true&q=nobody&status=completed".into()).await;
        assert_eq!(s, 200, "{b}");
        assert!(ids_of(&b).is_empty());
        let counts = b["response"]["counts"].as_array().unwrap();
        let statuses: Vec<&str> = counts.iter().map(|c| c["status"].as_str().unwrap()).collect();
        assert_eq!(statuses, domain::lifecycle::TradeStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>());
        let count = |counts: &[Value], status: &str| counts.iter().find(|c| c["status"] == status).unwrap()["count"].as_i64().unwrap();
        assert_eq!((count(counts, "form-rendered"), count(counts, "submitted"), count(counts, "completed")), (2, 1, 0));
        let (_, b) = list("trade-registrations", format!("?counts=true&provider_id={q}")).await;
        let counts = b["response"]["counts"].as_array().unwrap();
        assert_eq!((count(counts, "form-rendered"), count(counts, "submitted")), (1, 0));
        let (_, b) = list("trade-registrations", "?counts=true&environment=sandbox".into()).await;
        assert_eq!(count(b["response"]["counts"].as_array().unwrap(), "form-rendered"), 1);

        // Tax registrations: their public id, the company address's postal code, directors.
        let tax_path = "/v1/tax-registration";
        let mut gmbh = example("gmbh");
        gmbh["environment"] = json!("production");
        let gmbh = app.create(tax_path, &pkey, &gmbh).await;
        let mut ug = example("ug");
        ug["environment"] = json!("production");
        let chosen = uuid::Uuid::new_v4();
        ug["tax_registration_id"] = json!(chosen);
        let ug_public = app.create(tax_path, &qkey, &ug).await;
        assert_eq!(ug_public, chosen.to_string());
        let tax = |query: &str| {
            let query = query.to_string();
            async move {
                let (s, b) = list("tax-registrations", query.clone()).await;
                assert_eq!(s, 200, "{query}: {b}");
                b
            }
        };
        let all = tax("").await;
        let tax_ids = ids_of(&all);
        assert_eq!(tax_ids.len(), 2, "{all}");
        let ug_key = tax_ids[1].as_str();
        let gmbh = gmbh.as_str();
        assert_eq!(ids_of(&tax(&format!("?q={chosen}")).await), [ug_key]);
        assert_eq!(ids_of(&tax(&format!("?q={gmbh}")).await), [gmbh]);
        assert_eq!(ids_of(&tax("?q=54298").await), [ug_key]);
        assert_eq!(ids_of(&tax("?q=10115").await), [gmbh]);
        assert_eq!(ids_of(&tax("?q=%C5%81UKASIK").await), [ug_key]);
        assert_eq!(ids_of(&tax("?q=zo%C3%AB").await), [ug_key]);
        assert_eq!(ids_of(&tax("?q=crm-4711").await), [gmbh]);
        assert_eq!(ids_of(&tax("?q=mustermann&order=newest").await), [gmbh]);
        assert_eq!(ids_of(&tax(&format!("?provider_id={q}")).await), [ug_key]);
        let item = &all["response"]["cases"][1];
        assert_eq!(item["public_id"], chosen.to_string());
        assert_eq!(item["legal_form"], "ug");
        assert_eq!(item["company_name"], "Kleinstart UG (haftungsbeschränkt)");
        assert_eq!(item["office_name"], Value::Null);
        let office = item["office_key"].as_str().expect("a tax office").to_string();
        assert_eq!(ids_of(&tax(&format!("?office={office}")).await), [ug_key]);
        let b = tax("?counts=true").await;
        let counts = b["response"]["counts"].as_array().unwrap();
        assert_eq!(counts.len(), domain::lifecycle::TaxStatus::ALL.len());
        assert_eq!(counts.iter().map(|c| c["count"].as_i64().unwrap()).sum::<i64>(), 2);
    }

    async fn broken_queries_are_named_and_only_operators_list(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (p, pkey) = app.provider("P").await;
        let (_, ckey) = app.client_company(p, "C GmbH").await;
        let (_, okey) = app.operator("O").await;
        let broken = format!(
            "?status=done&environment=staging&provider_id=x&office={}&q=ab&order=sideways&after=x&limit=0",
            "1".repeat(65)
        );
        for path in ["trade-registrations", "tax-registrations"] {
            let (s, b) = json(app.get(&format!("/v1/operator/{path}{broken}"), Some(&okey)).send().await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            let fields: Vec<String> = field_codes(&r).into_iter().map(|(f, _)| f).collect();
            assert_eq!(fields, ["status", "environment", "provider_id", "office", "q", "order", "after", "limit"], "{b}");
            for (query, field, code) in [
                ("?limit=abc", "limit", "invalid_type"),
                ("?limit=501", "limit", "invalid_value"),
                ("?q=a%00bcd", "q", "invalid_value"),
                ("?q=a%20b%20cd", "q", "invalid_value"),
                (&format!("?q={}", "x".repeat(201)), "q", "invalid_value"),
                ("?office=11%0A000", "office", "invalid_value"),
                ("?counts=yes", "counts", "invalid_type"),
            ] {
                let (s, b) = json(app.get(&format!("/v1/operator/{path}{query}"), Some(&okey)).send().await.unwrap()).await;
                let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
                assert_eq!(field_codes(&r), [(field.to_string(), code.to_string())], "{query}: {b}");
            }
            // A misspelt parameter is refused, not ignored (which would list every case).
            let (s, b) = json(app.get(&format!("/v1/operator/{path}?search=x"), Some(&okey)).send().await.unwrap()).await;
            assert_error(s, &b, 422, "VALIDATION_FAILED");
            // Provider and client keys are refused, before their query is read.
            for key in [&pkey, &ckey] {
                for query in ["", broken.as_str()] {
                    let (s, b) = json(app.get(&format!("/v1/operator/{path}{query}"), Some(key)).send().await.unwrap()).await;
                    assert_error(s, &b, 403, "FORBIDDEN");
                }
            }
        }
    }
}

//! What API fuzzing (.ci/schemathesis, docs/testing.md "API fuzzing") found, pinned through
//! HTTP: each answer here is what the OpenAPI document now promises, and each differed before.

mod common;

use common::{TestApp, assert_error, json};
use domain::rule_cases::example;
use serde_json::{Value, json};

/// The fields a 422 names, in order.
fn fields(error: &Value) -> Vec<String> {
    error["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap().to_string())
        .collect()
}

backend_tests! {
    async fn query_parameters_of_the_wrong_type_are_422_naming_them(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, okey) = app.operator("O").await;
        // Was 400 BAD_REQUEST "the request could not be read" (the framework's query parser).
        for query in ["limit=9223372036854775808", "limit=abc", "limit=1.5"] {
            let (s, b) = json(app.get(&format!("/v1/operator/trade-registrations?{query}"), Some(&okey)).send().await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!(fields(&r), ["limit"], "{query}");
            assert_eq!(r["errors"][0]["code"], "invalid_type");
        }
        let (s, b) = json(app.get("/v1/operator/trade-offices?limit=x", Some(&okey)).send().await.unwrap()).await;
        assert_eq!(fields(&assert_error(s, &b, 422, "VALIDATION_FAILED")), ["limit"]);
        // In range it still works.
        let (s, b) = json(app.get("/v1/operator/trade-registrations?limit=500", Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
    }

    async fn postal_codes_in_lookups_are_taken_as_sent(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, key) = app.provider("P").await;
        // The document's pattern is ^[0-9]{5}$; " 54290" used to be trimmed and accepted.
        for path in ["/v1/trade-offices", "/v1/tax-offices"] {
            let (s, b) = json(app.get(&format!("{path}?zip=%2054290"), Some(&key)).send().await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!(fields(&r), ["zip"], "{path}");
            let (s, b) = json(app.get(&format!("{path}?zip=54290&city=%20Trier%20"), Some(&key)).send().await.unwrap()).await;
            assert_eq!(s, 200, "{path}: {b}");
        }
    }

    async fn well_formed_bodies_of_the_wrong_shape_are_422(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (provider, key) = app.provider("P").await;
        let path = format!("/v1/companies/{provider}/api-keys");
        // `[null, null]` was 400 INVALID_JSON "not well-formed" (serde's "trailing characters").
        for body in ["[null, null]", "[]", "\"x\"", "1"] {
            let (s, b) = json(app.post(&path, Some(&key)).header("content-type", "application/json").body(body).send().await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!(fields(&r), ["body"], "{body}");
            assert_eq!(r["errors"][0]["code"], "invalid_type", "{body}");
        }
        // The document allows `null` for an optional body: it counts as none.
        let (s, b) = json(app.post(&path, Some(&key)).header("content-type", "application/json").body("null").send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        // The same for the operator's transition body (a struct of two fields, sent as an array).
        let (_, okey) = app.operator("O").await;
        let (s, b) = json(app.post("/v1/trade-registration", Some(&key)).json(&example("self")).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let (s, b) = json(app.post(&format!("/v1/operator/trade-registrations/{id}/transition"), Some(&okey)).header("content-type", "application/json").body("[\"submitted\", null, 3]").send().await.unwrap()).await;
        assert_eq!(fields(&assert_error(s, &b, 422, "VALIDATION_FAILED")), ["body"]);
        // Broken JSON stays 400.
        let (s, b) = json(app.post(&path, Some(&key)).header("content-type", "application/json").body("[null,").send().await.unwrap()).await;
        assert_error(s, &b, 400, "INVALID_JSON");
    }

    async fn an_idempotency_key_with_spaces_is_refused(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (provider, key) = app.provider("P").await;
        let path = format!("/v1/companies/{provider}/api-keys");
        for bad in ["a b", "a\tb"] {
            let (s, b) = json(app.post(&path, Some(&key)).header("idempotency-key", bad).send().await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!(fields(&r), ["Idempotency-Key"], "{bad:?}");
        }
        let (s, b) = json(app.post(&path, Some(&key)).header("idempotency-key", "a-b_c.d~1").send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
    }

    async fn a_webhook_url_is_taken_as_sent(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, key) = app.provider("P").await;
        // Was trimmed and accepted; the document's pattern allows no spaces.
        let (s, b) = json(app.post("/v1/webhook-endpoints", Some(&key)).json(&json!({"url": " https://hooks.example.org/x"})).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(fields(&r), ["url"]);
        let (s, b) = json(app.post("/v1/webhook-endpoints", Some(&key)).json(&json!({"url": "https://hooks.example.org/x"})).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
    }

    async fn a_licence_upload_that_is_not_multipart_is_415(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, okey) = app.operator("O").await;
        let path = format!("/v1/operator/trade-registrations/{}/trade-licence", uuid::Uuid::now_v7());
        // Was 400 BAD_REQUEST from the framework's multipart extractor.
        let (s, b) = json(app.post(&path, Some(&okey)).send().await.unwrap()).await;
        assert_error(s, &b, 415, "UNSUPPORTED_MEDIA_TYPE");
        let (s, b) = json(app.post(&path, Some(&okey)).json(&json!({"file": "x"})).send().await.unwrap()).await;
        assert_error(s, &b, 415, "UNSUPPORTED_MEDIA_TYPE");
        let (s, b) = json(app.post(&path, Some(&okey)).header("content-type", "multipart/form-data").body("x").send().await.unwrap()).await;
        assert_error(s, &b, 400, "INVALID_MULTIPART");
        // Role first: a provider key is 403 whatever the body.
        let (_, pkey) = app.provider("P").await;
        let (s, b) = json(app.post(&path, Some(&pkey)).send().await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");
    }

    async fn the_documented_examples_are_accepted(backend) {
        // The request examples in the OpenAPI document are what schemathesis sends first; they
        // must create cases.
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, key) = app.provider("P").await;
        for (path, body) in [
            ("/v1/trade-registration", server::openapi::examples::trade_registration()),
            ("/v1/tax-registration", server::openapi::examples::tax_registration()),
            ("/v1/tax-registration/gbr", server::openapi::examples::gbr_tax_registration()),
        ] {
            let (s, b) = json(app.post(path, Some(&key)).json(&body).send().await.unwrap()).await;
            assert_eq!(s, 201, "{path}: {b}");
            assert_eq!(body["environment"], "sandbox");
        }
    }
}

/// Values for a list's date, number and cursor parameters: RFC 3339 times of every year and
/// offset (the UTC of `9999-12-31T23:00:00-01:00` lies in year 10000), integers of every size,
/// and any short text.
fn parameter_value() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let time = (
        0u32..=9999,
        1u32..=12,
        1u32..=31,
        0u32..=23,
        0u32..=59,
        0u32..=59,
        any::<bool>(),
        0u32..=23,
        0u32..=59,
    )
        .prop_map(|(y, mo, d, h, mi, s, neg, oh, om)| {
            format!(
                "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{}{oh:02}:{om:02}",
                if neg { '-' } else { '+' }
            )
        });
    let edge = prop_oneof![
        Just("9999-12-31T23:00:00-01:00".to_string()),
        Just("9999-12-31T23:59:59.999999999-23:59".to_string()),
        Just("0000-01-01T00:00:00+23:59".to_string()),
        Just("0000-01-01T00:30:00+01:00".to_string()),
    ];
    prop_oneof![
        3 => time,
        1 => edge,
        2 => any::<i64>().prop_map(|n| n.to_string()),
        1 => any::<u128>().prop_map(|n| n.to_string()),
        2 => "\\PC{0,30}",
    ]
}

mod lists {
    use super::*;

    backend_tests! {
        /// A `created_after` whose UTC lies beyond year 9999 was a 500 (`to_offset` panicked before
        /// the clamp; issue 52.6). Every date, number and cursor parameter of every list, fuzzed:
        /// always a 200 or a 422 naming the parameter, never a 5xx.
        async fn list_parameters_never_answer_5xx(backend) {
            use proptest::strategy::{Strategy, ValueTree};
            use proptest::test_runner::{Config, TestRunner};
            let app = TestApp::spawn(backend).await.unwrap();
            let (provider, key) = app.provider("P").await;
            let (_, okey) = app.operator("O").await;
            let no_endpoint = "00000000-0000-7000-8000-000000000000";
            let provider_lists = [
                ("/v1/trade-registration".to_string(), &["created_after", "created_before", "limit", "cursor"][..]),
                ("/v1/tax-registration".to_string(), &["created_after", "created_before", "limit", "cursor"][..]),
                ("/v1/events".to_string(), &["limit", "cursor"][..]),
                (format!("/v1/companies/{provider}/api-keys"), &["limit", "after"][..]),
                (format!("/v1/webhook-endpoints/{no_endpoint}/deliveries"), &["limit", "before"][..]),
                (format!("/v1/webhook-endpoints/{no_endpoint}/messages"), &["limit", "before"][..]),
            ];
            let operator_lists = [
                ("/v1/operator/trade-registrations".to_string(), &["limit", "after"][..]),
                ("/v1/operator/tax-registrations".to_string(), &["limit", "after"][..]),
                ("/v1/operator/trade-offices".to_string(), &["limit", "after"][..]),
            ];
            let cases: u32 = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(64).min(2000);
            let mut runner = TestRunner::new(Config { cases, ..Config::default() });
            let value = parameter_value();
            for (lists, key) in [(&provider_lists[..], &key), (&operator_lists[..], &okey)] {
                for (path, params) in lists {
                    for param in *params {
                        for _ in 0..cases {
                            let v = value.new_tree(&mut runner).unwrap().current();
                            let encoded: String = url::form_urlencoded::Serializer::new(String::new()).append_pair(param, &v).finish();
                            let res = app.get(&format!("{path}?{encoded}"), Some(key)).send().await.unwrap();
                            let status = res.status().as_u16();
                            let body = res.text().await.unwrap();
                            assert!(
                                matches!(status, 200 | 404 | 422),
                                "{path}?{param}={v}: {status} {body}"
                            );
                            if status == 422 {
                                let b: Value = serde_json::from_str(&body).unwrap();
                                assert_eq!(fields(&b["response"]), [*param], "{path}?{param}={v}: {body}");
                            }
                        }
                    }
                }
            }
        }
    }
}

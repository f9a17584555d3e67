//! The foundation through HTTP: health, authentication, envelope and errors, companies and keys,
//! idempotency. Every test runs against SQLite and PostgreSQL.

mod common;

use std::time::Duration;

use futures::StreamExt;

use axum::Router;
use axum::routing::{get, post};
use common::{Backend, Options, TestApp, assert_error, json};
use serde_json::{Value, json};

async fn app(backend: Backend) -> TestApp {
    TestApp::spawn(backend).await.expect("backend available")
}

/// A slow creating endpoint and a panicking one, mounted behind the same layers as the API.
fn test_routes() -> Router<std::sync::Arc<server::app::AppState>> {
    Router::new()
        .route(
            "/v1/test/slow",
            post(|| async {
                tokio::time::sleep(Duration::from_millis(700)).await;
                (
                    axum::http::StatusCode::CREATED,
                    axum::Json(json!({"response": {"result": "success", "message": "slow", "n": rand_u64()}})),
                )
            }),
        )
        .route(
            "/v1/test/echo",
            post(|body: axum::body::Bytes| async move {
                use sha2::Digest;
                let sha: String = sha2::Sha256::digest(&body).iter().map(|b| format!("{b:02x}")).collect();
                (
                    axum::http::StatusCode::CREATED,
                    axum::Json(json!({"response": {"result": "success", "message": "echo", "len": body.len(), "sha256": sha}})),
                )
            })
            .layer(axum::extract::DefaultBodyLimit::disable()),
        )
        .route(
            "/v1/test/panic",
            get(|| async {
                if true {
                    panic!("secret internals: password=hunter2");
                }
                "unreachable"
            }),
        )
}

fn rand_u64() -> u64 {
    uuid::Uuid::new_v4().as_u64_pair().0
}

backend_tests! {
    async fn health_answers(backend) {
        let app = app(backend).await;
        let res = app.get("/healthz", None).send().await.unwrap();
        assert!(res.headers().contains_key("x-request-id"));
        let (status, body) = json(res).await;
        assert_eq!(status, 200);
        assert_eq!(body["response"]["result"], "success");
        let want = if backend == Backend::Sqlite { "sqlite" } else { "postgres" };
        assert_eq!(body["response"]["database"], want);
    }

    async fn unauthorized_for_missing_malformed_unknown_and_revoked_keys(backend) {
        let app = app(backend).await;
        let (company, key) = app.provider("Acme").await;
        let path = format!("/v1/companies/{company}");

        let (s, b) = json(app.get(&path, Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");

        // missing
        let res = app.get(&path, None).send().await.unwrap();
        assert_eq!(res.headers()["www-authenticate"], "Bearer");
        let (s, b) = json(res).await;
        assert_error(s, &b, 401, "UNAUTHORIZED");
        // wrong scheme, malformed, unknown (well-formed, never issued), wrong secret
        let parsed = domain::auth::parse_key(&key).unwrap();
        let wrong_secret = format!("{}_{}", parsed.prefix, "Z".repeat(32));
        for header in [
            format!("Basic {key}"),
            "Bearer not-a-key".to_string(),
            format!("Bearer {key}x"),
            "Bearer rfs_prv_aaaaaaaaaaaa_AbCdEfGhIjKlMnOpQrStUvWxYz012345".to_string(),
            format!("Bearer {wrong_secret}"),
            format!("Bearer {}", key.replacen("rfs_prv_", "rfs_cli_", 1)),
        ] {
            let res = app.get(&path, None).header("authorization", &header).send().await.unwrap();
            let (s, b) = json(res).await;
            assert_error(s, &b, 401, "UNAUTHORIZED");
        }
        // revoked
        assert!(app.state.repo.revoke_api_key(parsed.prefix, time::OffsetDateTime::now_utc()).await.unwrap());
        let (s, b) = json(app.get(&path, Some(&key)).send().await.unwrap()).await;
        assert_error(s, &b, 401, "UNAUTHORIZED");
    }

    async fn a_revoked_key_works_until_its_cached_record_expires(backend) {
        // Production default: key records are trusted for FILING_KEY_CACHE_SECS (5 s); 1 s here.
        let app = TestApp::spawn_with(backend, Options {
            tweak: Box::new(|c| c.key_cache = Duration::from_secs(1)),
            ..Default::default()
        }).await.unwrap();
        let (company, key) = app.provider("Acme").await;
        let path = format!("/v1/companies/{company}");
        let (s, b) = json(app.get(&path, Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let parsed = domain::auth::parse_key(&key).unwrap();
        // The cache saves the lookup, never the check of the secret.
        let wrong_secret = format!("{}_{}", parsed.prefix, "Z".repeat(32));
        let res = app.get(&path, None).header("authorization", format!("Bearer {wrong_secret}")).send().await.unwrap();
        let (s, b) = json(res).await;
        assert_error(s, &b, 401, "UNAUTHORIZED");
        assert!(app.state.repo.revoke_api_key(parsed.prefix, time::OffsetDateTime::now_utc()).await.unwrap());
        let (s, b) = json(app.get(&path, Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "still cached: {b}");
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let (s, b) = json(app.get(&path, Some(&key)).send().await.unwrap()).await;
        assert_error(s, &b, 401, "UNAUTHORIZED");
    }

    async fn unknown_routes_and_methods_are_enveloped(backend) {
        let app = app(backend).await;
        let res = app.get("/v1/nothing-here", None).header("x-request-id", "my-trace-1").send().await.unwrap();
        assert_eq!(res.headers()["x-request-id"], "my-trace-1");
        let (s, b) = json(res).await;
        let r = assert_error(s, &b, 404, "NOT_FOUND");
        assert_eq!(r["request_id"], "my-trace-1");

        let res = app.client.delete(app.url("/healthz")).send().await.unwrap();
        let (s, b) = json(res).await;
        assert_error(s, &b, 405, "METHOD_NOT_ALLOWED");
    }

    async fn panics_become_500_without_internals(backend) {
        let app = TestApp::spawn_with(backend, Options { extra_routes: Some(test_routes()), ..Default::default() }).await.unwrap();
        let (_, key) = app.provider("Acme").await;
        let res = app.get("/v1/test/panic", Some(&key)).send().await.unwrap();
        let (s, b) = json(res).await;
        assert_error(s, &b, 500, "INTERNAL_ERROR");
        let text = b.to_string();
        assert!(!text.contains("hunter2") && !text.contains("secret"), "{text}");
        // The server keeps serving.
        let (s, _) = json(app.get("/healthz", None).send().await.unwrap()).await;
        assert_eq!(s, 200);
    }

    async fn another_providers_company_is_404(backend) {
        let app = app(backend).await;
        let (p1, k1) = app.provider("One").await;
        let (p2, k2) = app.provider("Two").await;
        let (c1, _) = app.client_company(p1, "Client of One").await;
        // the other provider's client and the other provider itself
        for id in [c1, p1] {
            let (s, b) = json(app.get(&format!("/v1/companies/{id}"), Some(&k2)).send().await.unwrap()).await;
            assert_error(s, &b, 404, "NOT_FOUND");
            let (s, b) = json(app.post(&format!("/v1/companies/{id}/api-keys"), Some(&k2)).send().await.unwrap()).await;
            assert_error(s, &b, 404, "NOT_FOUND");
        }
        // an unknown id answers the same, and a malformed id is 404 too
        let unknown = uuid::Uuid::new_v4();
        for path in [format!("/v1/companies/{unknown}"), "/v1/companies/not-a-uuid".to_string()] {
            let (s, b) = json(app.get(&path, Some(&k1)).send().await.unwrap()).await;
            assert_error(s, &b, 404, "NOT_FOUND");
        }
        // each sees its own
        let (s, b) = json(app.get(&format!("/v1/companies/{c1}"), Some(&k1)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["type"], "client");
        let (s, b) = json(app.get(&format!("/v1/companies/{p2}"), Some(&k2)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["type"], "provider");
        assert_eq!(b["response"]["name"], "Two");
    }

    async fn provider_issues_client_keys(backend) {
        let app = app(backend).await;
        let (provider, pkey) = app.provider("Provider GmbH").await;
        let (client, _) = app.client_company(provider, "Client UG").await;
        let (sibling, _) = app.client_company(provider, "Sibling UG").await;

        let res = app.post(&format!("/v1/companies/{client}/api-keys"), Some(&pkey)).send().await.unwrap();
        let (s, b) = json(res).await;
        assert_eq!(s, 201, "{b}");
        let r = &b["response"];
        assert_eq!(r["result"], "success");
        assert_eq!(r["company_id"], client.to_string());
        assert_eq!(r["key_type"], "client");
        let ckey = r["api_key"].as_str().unwrap().to_string();
        assert!(ckey.starts_with("rfs_cli_"));
        assert!(ckey.starts_with(r["key_prefix"].as_str().unwrap()));

        // The client key reads its own company, not its sibling nor the provider.
        let (s, b) = json(app.get(&format!("/v1/companies/{client}"), Some(&ckey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["name"], "Client UG");
        assert_eq!(b["response"]["environment"], "production");
        for other in [sibling, provider] {
            let (s, b) = json(app.get(&format!("/v1/companies/{other}"), Some(&ckey)).send().await.unwrap()).await;
            assert_error(s, &b, 404, "NOT_FOUND");
        }
        // A client key may not issue keys, not even for itself.
        let (s, b) = json(app.post(&format!("/v1/companies/{client}/api-keys"), Some(&ckey)).send().await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");

        // An explicit empty JSON object works; unknown fields and non-JSON bodies do not.
        let (s, b) = json(app.post(&format!("/v1/companies/{client}/api-keys"), Some(&pkey)).json(&json!({})).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let (s, b) = json(app.post(&format!("/v1/companies/{client}/api-keys"), Some(&pkey)).json(&json!({"scope": "all"})).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["field"], "scope");
        assert_eq!(r["errors"][0]["code"], "unknown_field");
        let (s, b) = json(app.post(&format!("/v1/companies/{client}/api-keys"), Some(&pkey)).header("content-type", "text/plain").body("hello").send().await.unwrap()).await;
        assert_error(s, &b, 415, "UNSUPPORTED_MEDIA_TYPE");
        let (s, b) = json(app.post(&format!("/v1/companies/{client}/api-keys"), Some(&pkey)).header("content-type", "application/json").body("{\"a\":").send().await.unwrap()).await;
        assert_error(s, &b, 400, "INVALID_JSON");
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let (s, b) = json(app.post(&format!("/v1/companies/{client}/api-keys"), Some(&pkey)).header("content-type", "application/json").body(deep).send().await.unwrap()).await;
        assert_error(s, &b, 400, "INVALID_JSON");

        // A provider may issue itself a further key (rotation); the old one keeps working until revoked.
        let (s, b) = json(app.post(&format!("/v1/companies/{provider}/api-keys"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["response"]["key_type"], "provider");
        let pkey2 = b["response"]["api_key"].as_str().unwrap();
        let (s, _) = json(app.get(&format!("/v1/companies/{provider}"), Some(pkey2)).send().await.unwrap()).await;
        assert_eq!(s, 200);

        // Operators read any company but cannot issue company keys.
        let (_, okey) = app.operator("Olga").await;
        let (s, _) = json(app.get(&format!("/v1/companies/{client}"), Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200);
        let (s, b) = json(app.post(&format!("/v1/companies/{client}/api-keys"), Some(&okey)).send().await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");
    }

    async fn repeated_keys_are_refused_in_every_json_body(backend) {
        let app = app(backend).await;
        let (provider, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        // Each body as text, with one key repeated (and, in the tax create, a second one inside
        // an object); the answer names each repeated key by its path, and nothing is created.
        let text = |name: &str| match name {
            "gmbh" => include_str!("../../../examples/tax-registration-gmbh.json").to_string(),
            "gbr" => include_str!("../../../examples/production/tax-registration-gbr.json").to_string(),
            _ => include_str!("../../../examples/production/trade-registration-self.json").to_string(),
        };
        let twice = |body: String, first: &str, again: &str| {
            assert!(body.contains(first), "{first}");
            body.replacen(first, &format!("{first}\n  {again},"), 1)
        };
        let tax = twice(text("gmbh"), "\"name\": \"Mustermann Software GmbH\",", "\"name\": \"Andere GmbH\"")
            .replacen("\"zip\": \"10115\",", "\"zip\": \"10115\", \"zip\": \"10117\",", 1);
        let gbr = twice(text("gbr"), "\"package\": \"guided\",", "\"package\": \"self\"");
        let trade = twice(text("self"), "\"name\": \"Mustermann Software GmbH\",", "\"name\": \"Andere GmbH\"");
        let cases: Vec<(bool, String, String, &str, Vec<&str>)> = vec![
            (true, "/v1/tax-registration".into(), tax, &pkey, vec!["name", "business_address.zip"]),
            (true, "/v1/tax-registration/gbr".into(), gbr, &pkey, vec!["package"]),
            (true, "/v1/trade-registration".into(), trade.clone(), &pkey, vec!["name"]),
            (true, "/v1/webhook-endpoints".into(), r#"{"url": "https://a.example/h", "url": "https://b.example/h"}"#.into(), &pkey, vec!["url"]),
            (true, format!("/v1/companies/{provider}/api-keys"), r#"{"a": 1, "a": 2}"#.into(), &pkey, vec!["a"]),
            (false, "/v1/operator/trade-offices/11000000".into(), r#"{"name": "A", "address": {"zip": "1", "zip": "2"}, "name": "B"}"#.into(), &okey, vec!["name", "address.zip"]),
        ];
        for (post, path, body, key, fields) in cases {
            let req = if post { app.post(&path, Some(key)) } else { app.client.put(app.url(&path)).bearer_auth(key) };
            let (s, b) = json(req.header("content-type", "application/json").body(body).send().await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            let mut got: Vec<String> = r["errors"].as_array().unwrap().iter()
                .filter(|e| e["code"] == "duplicate_key")
                .map(|e| e["field"].as_str().unwrap().to_string())
                .collect();
            got.sort();
            let mut want: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
            want.sort();
            assert_eq!(got, want, "{path}: {b}");
        }
        // The payload of a multipart create, too.
        let form = reqwest::multipart::Form::new().part(
            "data",
            reqwest::multipart::Part::text(trade).mime_str("application/json").unwrap(),
        );
        let (s, b) = json(app.post("/v1/trade-registration", Some(&pkey)).multipart(form).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["field"], "name", "{b}");
        assert_eq!(r["errors"][0]["code"], "duplicate_key", "{b}");
        // Nothing was created.
        for list in ["/v1/tax-registration", "/v1/trade-registration"] {
            let (s, b) = json(app.get(list, Some(&pkey)).send().await.unwrap()).await;
            if s == 200 {
                assert!(!b.to_string().contains("Andere GmbH"), "{list}: {b}");
            }
        }
    }

    async fn oversized_body_is_413(backend) {
        let app = TestApp::spawn_with(backend, Options { tweak: Box::new(|c| c.max_body_bytes = 1024), ..Default::default() }).await.unwrap();
        let (provider, pkey) = app.provider("P").await;
        let big = format!("{{\"x\": \"{}\"}}", "a".repeat(10_000));
        for idem in [None, Some("big-1")] {
            let mut rb = app.post(&format!("/v1/companies/{provider}/api-keys"), Some(&pkey))
                .header("content-type", "application/json")
                .body(big.clone());
            if let Some(k) = idem {
                rb = rb.header("idempotency-key", k);
            }
            let (s, b) = json(rb.send().await.unwrap()).await;
            assert_error(s, &b, 413, "PAYLOAD_TOO_LARGE");
        }
        // With an Idempotency-Key the body is read before the route, but to the route's limit,
        // not the trade create's (hundreds of megabytes): a JSON route answers 413 as soon as
        // its limit is passed, although this body never ends.
        let endless = futures::stream::once(async { Ok::<_, std::io::Error>(vec![b' '; 4096]) })
            .chain(futures::stream::pending());
        let res = app.post(&format!("/v1/companies/{provider}/api-keys"), Some(&pkey))
            .header("content-type", "application/json")
            .header("idempotency-key", "big-2")
            .body(reqwest::Body::wrap_stream(endless));
        let res = tokio::time::timeout(Duration::from_secs(10), res.send()).await.expect("413 before the body ends");
        let (s, b) = json(res.unwrap()).await;
        assert_error(s, &b, 413, "PAYLOAD_TOO_LARGE");

        // An upload route keeps its own limit with a key too: the layer finds it by the route
        // axum matched, reads these 8 KiB past the JSON limit, and the handler judges the data.
        let form = reqwest::multipart::Form::new().text("data", "{}")
            .part("signed0", reqwest::multipart::Part::bytes(vec![b'%'; 8192]).file_name("a.pdf").mime_str("application/pdf").unwrap());
        let (s, b) = json(app.post("/v1/trade-registration", Some(&pkey)).header("idempotency-key", "upload-0")
            .multipart(form).send().await.unwrap()).await;
        assert_error(s, &b, 422, "VALIDATION_FAILED");

        // A client company's key writes nothing: its upload is refused before any of it is read
        // (here, before a body that never ends), with or without an Idempotency-Key.
        let (_, ckey) = app.client_company(provider, "C").await;
        for idem in [None, Some("upload-1")] {
            let endless = futures::stream::once(async { Ok::<_, std::io::Error>(b"--x\r\n".to_vec()) })
                .chain(futures::stream::pending());
            let mut rb = app.post("/v1/trade-registration", Some(&ckey))
                .header("content-type", "multipart/form-data; boundary=x")
                .body(reqwest::Body::wrap_stream(endless));
            if let Some(k) = idem {
                rb = rb.header("idempotency-key", k);
            }
            let res = tokio::time::timeout(Duration::from_secs(10), rb.send()).await.expect("403 before the body ends");
            let (s, b) = json(res.unwrap()).await;
            assert_error(s, &b, 403, "FORBIDDEN");
        }
    }

    async fn kept_create_answers_are_sealed_and_replay_with_fresh_links(backend) {
        let app = app(backend).await;
        let (_, pkey) = app.provider("P").await;
        let trade = domain::rule_cases::example("self");
        let tax = domain::rule_cases::example("gmbh");
        for (path, body) in [("/v1/trade-registration", trade), ("/v1/tax-registration", tax)] {
            let send = || app.post(path, Some(&pkey)).header("idempotency-key", format!("create-{path}")).json(&body).send();
            let (s, first) = json(send().await.unwrap()).await;
            assert_eq!(s, 201, "{first}");
            let res = send().await.unwrap();
            assert_eq!(res.headers()["idempotent-replayed"], "true");
            let (s, replay) = json(res).await;
            assert_eq!(s, 201, "{replay}");
            // The same case, with links that download.
            let id = |v: &Value| v["response"].as_object().unwrap().iter().find(|(k, _)| k.ends_with("registration_id")).map(|(_, v)| v.clone());
            assert_eq!(id(&first), id(&replay));
            if let Some(doc) = replay["response"]["documents"].as_array().and_then(|d| d.first()) {
                let bytes = common::download(&app, doc).await;
                assert!(bytes.starts_with(b"%PDF-") || bytes.starts_with(b"<?xml"), "{doc}");
            }
        }
        // Kept in the database sealed: no download link (nor anything else of the answers)
        // is readable from the database alone.
        let answers = common::stored_answers(&app.database_url).await;
        assert_eq!(answers.len(), 2);
        for a in &answers {
            let text = String::from_utf8_lossy(a);
            assert!(text.starts_with("sealed:v1:"), "{text}");
            assert!(!text.contains("download") && !text.contains("Mustermann"), "{text}");
        }
    }

    async fn idempotent_replay_and_reuse(backend) {
        let app = app(backend).await;
        let (provider, pkey) = app.provider("P").await;
        let (client, _) = app.client_company(provider, "C").await;
        let (other, _) = app.client_company(provider, "D").await;
        let path = format!("/v1/companies/{client}/api-keys");

        let first = app.post(&path, Some(&pkey)).header("idempotency-key", "k-1").json(&json!({})).send().await.unwrap();
        assert!(!first.headers().contains_key("idempotent-replayed"));
        let (s1, b1) = json(first).await;
        assert_eq!(s1, 201, "{b1}");
        let again = app.post(&path, Some(&pkey)).header("idempotency-key", "k-1").json(&json!({})).send().await.unwrap();
        assert_eq!(again.headers()["idempotent-replayed"], "true");
        let (s2, b2) = json(again).await;
        assert_eq!(s2, 201);
        assert_eq!(b1, b2, "the replay is the first response, the same key");
        // The key is shown, never stored readable: without FILING_WEBHOOK_SECRETS_KEY the kept
        // answer is sealed with a key derived from the signing secret.
        let issued = b1["response"]["api_key"].as_str().unwrap();
        let answers = common::stored_answers(&app.database_url).await;
        assert_eq!(answers.len(), 1);
        assert!(answers[0].starts_with(b"sealed:v1:"), "{}", String::from_utf8_lossy(&answers[0]));
        assert!(!String::from_utf8_lossy(&answers[0]).contains(issued));

        // Same key, another body or another path: 422.
        let (s, b) = json(app.post(&path, Some(&pkey)).header("idempotency-key", "k-1").send().await.unwrap()).await;
        assert_error(s, &b, 422, "IDEMPOTENCY_KEY_REUSED");
        let (s, b) = json(app.post(&format!("/v1/companies/{other}/api-keys"), Some(&pkey)).header("idempotency-key", "k-1").json(&json!({})).send().await.unwrap()).await;
        assert_error(s, &b, 422, "IDEMPOTENCY_KEY_REUSED");

        // Keys are scoped to the calling company: another provider's same key is independent.
        let (p2, k2) = app.provider("P2").await;
        let (s, b) = json(app.post(&format!("/v1/companies/{p2}/api-keys"), Some(&k2)).header("idempotency-key", "k-1").json(&json!({})).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");

        // Error answers are replayed too (4xx), so a retry does not change the outcome.
        let missing = uuid::Uuid::new_v4();
        let p = format!("/v1/companies/{missing}/api-keys");
        let (s, _) = json(app.post(&p, Some(&pkey)).header("idempotency-key", "k-404").send().await.unwrap()).await;
        assert_eq!(s, 404);
        let res = app.post(&p, Some(&pkey)).header("idempotency-key", "k-404").header("x-request-id", "retry-7").send().await.unwrap();
        assert_eq!(res.headers()["idempotent-replayed"], "true");
        let (s, b) = json(res).await;
        // The kept error, with this request's id.
        let r = assert_error(s, &b, 404, "NOT_FOUND");
        assert_eq!(r["request_id"], "retry-7");

        // An unusable key is a validation error on the header.
        let (s, b) = json(app.post(&path, Some(&pkey)).header("idempotency-key", "x".repeat(300)).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["field"], "Idempotency-Key");
    }

    async fn idempotency_key_in_flight_is_409(backend) {
        let app = TestApp::spawn_with(backend, Options { extra_routes: Some(test_routes()), ..Default::default() }).await.unwrap();
        let (_, key) = app.provider("P").await;
        let send = || app.post("/v1/test/slow", Some(&key)).header("idempotency-key", "slow-1").json(&json!({"a": 1})).send();
        let first = tokio::spawn(send());
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (s, b) = json(send().await.unwrap()).await;
        assert_error(s, &b, 409, "IDEMPOTENCY_KEY_IN_USE");
        let (s1, b1) = json(first.await.unwrap().unwrap()).await;
        assert_eq!(s1, 201, "{b1}");
        // Once done, the same request replays the first answer (the same random number).
        let (s2, b2) = json(send().await.unwrap()).await;
        assert_eq!((s2, &b2), (201, &b1));
    }

    async fn large_idempotent_bodies_are_spooled_and_handed_on_intact(backend) {
        use sha2::Digest;
        // The layer reads to the route's limit; the test route takes the JSON routes' one.
        let options = Options { extra_routes: Some(test_routes()), tweak: Box::new(|c| c.max_body_bytes = 4_000_000) };
        let app = TestApp::spawn_with(backend, options).await.unwrap();
        let (_, key) = app.provider("P").await;
        let body: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let sha: String = sha2::Sha256::digest(&body).iter().map(|b| format!("{b:02x}")).collect();
        let send = || app.post("/v1/test/echo", Some(&key)).header("idempotency-key", "big").header("content-type", "application/octet-stream").body(body.clone()).send();
        let (s, b) = json(send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["response"]["len"], 3_000_000);
        assert_eq!(b["response"]["sha256"], sha.as_str());
        let res = send().await.unwrap();
        assert_eq!(res.headers()["idempotent-replayed"], "true");
        // One byte different is another request.
        let mut other = body.clone();
        other[2_500_000] ^= 1;
        let (s, b) = json(app.post("/v1/test/echo", Some(&key)).header("idempotency-key", "big").header("content-type", "application/octet-stream").body(other).send().await.unwrap()).await;
        assert_error(s, &b, 422, "IDEMPOTENCY_KEY_REUSED");
    }

    async fn idempotency_holds_across_instances_and_restarts(backend) {
        let first = TestApp::spawn(backend).await.unwrap();
        let (provider, pkey) = first.provider("P").await;
        let path = format!("/v1/companies/{provider}/api-keys");
        let (s1, b1) = json(first.post(&path, Some(&pkey)).header("idempotency-key", "across").send().await.unwrap()).await;
        assert_eq!(s1, 201);
        let (url, dir) = (first.database_url.clone(), first.dir.clone());
        first.stop().await;
        let second = TestApp::spawn_on(url, dir, Options::default()).await;
        let (s2, b2) = json(second.post(&path, Some(&pkey)).header("idempotency-key", "across").send().await.unwrap()).await;
        assert_eq!((s2, b2), (201, b1));
    }

    async fn openapi_and_docs_are_served(backend) {
        let app = app(backend).await;
        let (s, doc): (u16, Value) = json(app.get("/openapi.json", None).send().await.unwrap()).await;
        assert_eq!(s, 200);
        assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
        assert!(doc["paths"]["/v1/companies/{company_id}/api-keys"]["post"].is_object());
        let res = app.get("/docs/", None).send().await.unwrap();
        assert_eq!(res.status(), 200);
        let html = res.text().await.unwrap();
        assert!(html.contains("swagger-ui"), "{html}");
        assert!(!html.contains("https://"), "the docs page must not load anything from the internet");
    }
}

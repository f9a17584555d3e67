//! API keys over HTTP: listing and revoking a company's keys, and the cap on the keys a company
//! may hold (docs/adr/0004-keys-limited-per-company.md). Every test runs against SQLite and
//! PostgreSQL.

mod common;

use std::time::{Duration, Instant};

use common::{Backend, Options, TestApp, app, assert_error, json};
use serde_json::Value;

async fn app_with(
    backend: Backend,
    tweak: impl FnOnce(&mut server::config::Config) + Send + 'static,
) -> TestApp {
    TestApp::spawn_with(backend, Options::tweak(tweak))
        .await
        .expect("backend available")
}

fn prefix_of(key: &str) -> String {
    domain::auth::parse_key(key)
        .expect("a well-formed key")
        .prefix
        .to_string()
}

/// Issues a key over HTTP; returns the key.
async fn issue(app: &TestApp, company: uuid::Uuid, key: &str) -> String {
    let (s, b) = json(
        app.post(&format!("/v1/companies/{company}/api-keys"), Some(key))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 201, "{b}");
    b["response"]["api_key"].as_str().unwrap().to_string()
}

/// The listing of a company's keys (one page, as asked by `query`).
async fn list(app: &TestApp, company: uuid::Uuid, key: &str, query: &str) -> Value {
    app.read(&format!("/v1/companies/{company}/api-keys{query}"), key)
        .await
}

fn prefixes(page: &Value) -> Vec<String> {
    page["api_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["key_prefix"].as_str().unwrap().to_string())
        .collect()
}

async fn revoke(app: &TestApp, company: uuid::Uuid, prefix: &str, key: &str) -> reqwest::Response {
    app.client
        .delete(app.url(&format!("/v1/companies/{company}/api-keys/{prefix}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
}

backend_tests! {
    async fn keys_are_listed_without_their_secrets(backend) {
        let app = app(backend).await;
        let (_, early_key) = app.provider("Early GmbH").await;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let (provider, pkey) = app.provider("P GmbH").await;
        let (client, ckey) = app.client_company(provider, "C GmbH").await;
        let pkey2 = issue(&app, provider, &pkey).await;
        let ckey2 = issue(&app, client, &pkey).await;

        // The provider's own keys, oldest first; never a secret or a hash.
        let page = list(&app, provider, &pkey, "").await;
        assert_eq!(page["company_id"], provider.to_string());
        assert_eq!(prefixes(&page), [prefix_of(&pkey), prefix_of(&pkey2)]);
        for k in page["api_keys"].as_array().unwrap() {
            assert_eq!(k["key_type"], "provider");
            assert!(k["created_at"].as_str().is_some(), "{k}");
            let mut fields: Vec<&str> = k.as_object().unwrap().keys().map(String::as_str).collect();
            fields.sort();
            assert_eq!(fields, ["created_at", "environment", "key_prefix", "key_type", "last_used_at"]);
            assert_eq!(k["environment"], Value::Null, "unrestricted");
        }
        let text = page.to_string();
        for secret in [&pkey, &pkey2] {
            assert!(!text.contains(secret.as_str()), "{text}");
        }
        assert!(page.get("next_cursor").is_none(), "{page}");

        // A client company's keys, listed by its provider.
        let page = list(&app, client, &pkey, "").await;
        assert_eq!(prefixes(&page), [prefix_of(&ckey), prefix_of(&ckey2)]);
        assert!(page["api_keys"].as_array().unwrap().iter().all(|k| k["key_type"] == "client"));

        // Pages: `limit`, and `after` the previous page's `next_cursor`.
        let first = list(&app, provider, &pkey, "?limit=1").await;
        assert_eq!(prefixes(&first), [prefix_of(&pkey)]);
        let cursor = first["next_cursor"].as_str().expect("a next page").to_string();
        let second = list(&app, provider, &pkey, &format!("?limit=1&after={cursor}")).await;
        assert_eq!(prefixes(&second), [prefix_of(&pkey2)]);
        assert!(second.get("next_cursor").is_none(), "{second}");
        // A well-formed cursor that names no key of the company gives an empty page.
        let page = list(&app, provider, &pkey, "?after=rfs_prv_000000000000").await;
        assert_eq!(prefixes(&page), Vec::<String>::new());
        // So does another provider's key, older than every key here: its existence does not
        // show (it once did, as the keys created after it).
        let page = list(&app, provider, &pkey, &format!("?after={}", prefix_of(&early_key))).await;
        assert_eq!(prefixes(&page), Vec::<String>::new());
        for (query, field) in [("?limit=0", "limit"), ("?limit=501", "limit"), ("?after=nonsense", "after"), ("?limit=x", "limit")] {
            let (s, b) = json(app.get(&format!("/v1/companies/{provider}/api-keys{query}"), Some(&pkey)).send().await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!(r["errors"][0]["field"], field, "{query}: {b}");
        }

        // The last use is recorded (in the background, at most once a minute per key): the
        // calling key has one, an unused key none.
        let deadline = Instant::now() + Duration::from_secs(10);
        let used = loop {
            let page = list(&app, provider, &pkey, "").await;
            let keys = page["api_keys"].as_array().unwrap().clone();
            if let Some(at) = keys[0]["last_used_at"].as_str() {
                assert_eq!(keys[1]["last_used_at"], Value::Null, "{page}");
                break at.to_string();
            }
            assert!(Instant::now() < deadline, "the last use was never recorded: {page}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let used = time::OffsetDateTime::parse(&used, &time::format_description::well_known::Rfc3339).unwrap();
        assert!((time::OffsetDateTime::now_utc() - used).abs() < time::Duration::seconds(30), "{used}");
        // Further requests within the minute write nothing more.
        for _ in 0..3 {
            list(&app, provider, &pkey, "").await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let page = list(&app, provider, &pkey, "").await;
        let again = time::OffsetDateTime::parse(page["api_keys"][0]["last_used_at"].as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap();
        assert_eq!(again, used, "written again within the minute");
        // A client key's use shows in its company's list.
        let (s, _) = json(app.get(&format!("/v1/companies/{client}"), Some(&ckey2)).send().await.unwrap()).await;
        assert_eq!(s, 200);
        let deadline = Instant::now() + Duration::from_secs(10);
        while list(&app, client, &pkey, "").await["api_keys"][1]["last_used_at"].is_null() {
            assert!(Instant::now() < deadline, "the client key's use was never recorded");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn keys_are_revoked_by_prefix(backend) {
        let app = app(backend).await;
        let (provider, pkey) = app.provider("P GmbH").await;
        let (client, ckey) = app.client_company(provider, "C GmbH").await;
        let company_path = format!("/v1/companies/{client}");

        // A client company's key: 204, refused at once, gone from the list.
        let res = revoke(&app, client, &prefix_of(&ckey), &pkey).await;
        assert_eq!(res.status(), 204);
        assert!(res.bytes().await.unwrap().is_empty());
        let (s, b) = json(app.get(&company_path, Some(&ckey)).send().await.unwrap()).await;
        assert_error(s, &b, 401, "UNAUTHORIZED");
        assert_eq!(prefixes(&list(&app, client, &pkey, "").await), Vec::<String>::new());
        // The store says revoked, as `filing keys revoke` leaves it.
        let record = app.state.repo.find_api_key(&prefix_of(&ckey)).await.unwrap().unwrap();
        assert!(record.revoked_at.is_some());

        // Again, unknown, malformed, or a key of another company under this one: 404.
        let pkey2 = issue(&app, provider, &pkey).await;
        for prefix in [prefix_of(&ckey), "rfs_cli_000000000000".into(), "nonsense".into(), "%FF%FE".into(), prefix_of(&pkey2)] {
            let (s, b) = json(revoke(&app, client, &prefix, &pkey).await).await;
            assert_error(s, &b, 404, "NOT_FOUND");
        }
        let (s, _) = json(app.get(&format!("/v1/companies/{provider}"), Some(&pkey2)).send().await.unwrap()).await;
        assert_eq!(s, 200, "the provider key named under its client is untouched");

        // A key may revoke itself; the other keys of the company keep working.
        let res = revoke(&app, provider, &prefix_of(&pkey2), &pkey2).await;
        assert_eq!(res.status(), 204);
        let (s, b) = json(app.get(&format!("/v1/companies/{provider}"), Some(&pkey2)).send().await.unwrap()).await;
        assert_error(s, &b, 401, "UNAUTHORIZED");
        let (s, _) = json(app.get(&format!("/v1/companies/{provider}"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200);
        assert_eq!(prefixes(&list(&app, provider, &pkey, "").await), [prefix_of(&pkey)]);
    }

    async fn key_listing_and_revoking_follow_the_create_rules(backend) {
        let app = app(backend).await;
        let (p1, k1) = app.provider("One").await;
        let (c1, ck1) = app.client_company(p1, "Client of One").await;
        let (_, k2) = app.provider("Two").await;
        let (_, okey) = app.operator("Olga").await;

        // Another provider: 404 for the provider and its client, as for the create.
        for (company, prefix) in [(p1, prefix_of(&k1)), (c1, prefix_of(&ck1))] {
            let (s, b) = json(app.get(&format!("/v1/companies/{company}/api-keys"), Some(&k2)).send().await.unwrap()).await;
            assert_error(s, &b, 404, "NOT_FOUND");
            let (s, b) = json(revoke(&app, company, &prefix, &k2).await).await;
            assert_error(s, &b, 404, "NOT_FOUND");
        }
        // Unknown and malformed company ids.
        for company in [uuid::Uuid::new_v4().to_string(), "not-a-uuid".to_string()] {
            let (s, b) = json(app.get(&format!("/v1/companies/{company}/api-keys"), Some(&k1)).send().await.unwrap()).await;
            assert_error(s, &b, 404, "NOT_FOUND");
            let res = app.client.delete(app.url(&format!("/v1/companies/{company}/api-keys/{}", prefix_of(&k1)))).bearer_auth(&k1).send().await.unwrap();
            let (s, b) = json(res).await;
            assert_error(s, &b, 404, "NOT_FOUND");
        }
        // A client company's key lists and revokes nothing, not even its own keys or its
        // provider's; an operator's key neither.
        for key in [&ck1, &okey] {
            for company in [c1, p1] {
                let (s, b) = json(app.get(&format!("/v1/companies/{company}/api-keys"), Some(key)).send().await.unwrap()).await;
                assert_error(s, &b, 403, "FORBIDDEN");
                let (s, b) = json(revoke(&app, company, &prefix_of(&k1), key).await).await;
                assert_error(s, &b, 403, "FORBIDDEN");
            }
        }
        // Nothing was revoked.
        for key in [&k1, &ck1] {
            let (s, _) = json(app.get(&format!("/v1/companies/{c1}"), Some(key)).send().await.unwrap()).await;
            assert_eq!(s, 200);
        }
    }

    async fn a_company_holds_at_most_its_cap_of_live_keys(backend) {
        let app = app_with(backend, |c| c.max_keys_per_company = 3).await;
        let (provider, pkey) = app.provider("P GmbH").await;
        let (client, _) = app.client_company(provider, "C GmbH").await;

        // The provider's first key (from the CLI) counts: two more, then 409.
        issue(&app, provider, &pkey).await;
        let third = issue(&app, provider, &pkey).await;
        let (s, b) = json(app.post(&format!("/v1/companies/{provider}/api-keys"), Some(&pkey)).send().await.unwrap()).await;
        let r = assert_error(s, &b, 409, "API_KEY_LIMIT");
        assert!(r["message"].as_str().unwrap().contains('3'), "{r}");
        // Each client company has a cap of its own.
        issue(&app, client, &pkey).await;
        issue(&app, client, &pkey).await;
        let (s, b) = json(app.post(&format!("/v1/companies/{client}/api-keys"), Some(&pkey)).send().await.unwrap()).await;
        assert_error(s, &b, 409, "API_KEY_LIMIT");
        // Revoked keys do not count.
        assert_eq!(revoke(&app, provider, &prefix_of(&third), &pkey).await.status(), 204);
        issue(&app, provider, &pkey).await;
        assert_eq!(prefixes(&list(&app, provider, &pkey, "").await).len(), 3);

        // Racing issues cannot pass the cap together.
        let (fresh, _) = app.client_company(provider, "D GmbH").await;
        let path = format!("/v1/companies/{fresh}/api-keys");
        let sends: Vec<_> = (0..10).map(|_| app.post(&path, Some(&pkey)).send()).collect();
        let mut created = 0;
        for res in futures::future::join_all(sends).await {
            let (s, b) = json(res.unwrap()).await;
            match s {
                201 => created += 1,
                _ => { assert_error(s, &b, 409, "API_KEY_LIMIT"); }
            }
        }
        assert_eq!(created, 2, "one key was there already");
        assert_eq!(prefixes(&list(&app, fresh, &pkey, "").await).len(), 3);
    }

    async fn a_key_revoked_over_http_stops_on_every_instance_within_the_cache_time(backend) {
        // Production default: FILING_KEY_CACHE_SECS=5; 1 s here. Two instances, one database.
        let cache = |c: &mut server::config::Config| c.key_cache = Duration::from_secs(1);
        let first = app_with(backend, cache).await;
        let second = TestApp::spawn_on(first.database_url.clone(), first.dir.clone(), Options { tweak: Box::new(cache), ..Default::default() }).await;
        let (provider, pkey) = first.provider("P GmbH").await;
        let (client, ckey) = first.client_company(provider, "C GmbH").await;
        let path = format!("/v1/companies/{client}");
        for app in [&first, &second] {
            let (s, _) = json(app.get(&path, Some(&ckey)).send().await.unwrap()).await;
            assert_eq!(s, 200);
        }
        assert_eq!(revoke(&first, client, &prefix_of(&ckey), &pkey).await.status(), 204);
        let revoked = Instant::now();
        // The instance that revoked it refuses it at once.
        let (s, b) = json(first.get(&path, Some(&ckey)).send().await.unwrap()).await;
        assert_error(s, &b, 401, "UNAUTHORIZED");
        // The other one within its cache time.
        loop {
            let (s, b) = json(second.get(&path, Some(&ckey)).send().await.unwrap()).await;
            if s == 401 {
                assert_error(s, &b, 401, "UNAUTHORIZED");
                break;
            }
            assert_eq!(s, 200, "{b}");
            assert!(revoked.elapsed() < Duration::from_millis(1500), "still accepted after the cache time");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        second.stop().await;
    }
}

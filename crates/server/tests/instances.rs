//! N instances behave as one (issue 53): two instances on one PostgreSQL database and one
//! documents folder, requests alternating between them; and a second server on one SQLite
//! file, refused.

mod common;

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use common::{Backend, Options, TestApp};
use serde_json::json;
use server::config::{Config, RateLimit};

/// Two instances on one fresh database of `backend` and one data folder, both with `tweak`.
async fn two(backend: Backend, tweak: fn(&mut Config)) -> Option<(TestApp, TestApp)> {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let url = common::fresh_database(backend, dir.path()).await?;
    let a = TestApp::spawn_on(url.clone(), dir.clone(), Options::tweak(tweak)).await;
    let b = TestApp::spawn_on(url, dir, Options::tweak(tweak)).await;
    Some((a, b))
}

/// The session cookie a console sign-in on `app` set.
async fn sign_in(app: &TestApp, key: &str) -> String {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let res = client
        .post(app.url("/console/login"))
        .header("origin", app.base.clone())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("key={key}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    let cookie = res.headers()["set-cookie"].to_str().unwrap().to_string();
    // A session cookie: no Max-Age, no Expires (the server ends the session).
    assert!(
        !cookie.contains("Max-Age") && !cookie.contains("Expires"),
        "{cookie}"
    );
    cookie.split(';').next().unwrap().to_string()
}

async fn console_page(app: &TestApp, cookie: &str) -> reqwest::StatusCode {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    client
        .get(app.url("/console/trade"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap()
        .status()
}

#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_console_session_works_on_both_and_survives_a_restart() {
    let (a, b) = two(Backend::Postgres, |_| {}).await.unwrap();
    let (_, okey) = a.operator("Olga").await;
    let cookie = sign_in(&a, &okey).await;
    assert_eq!(console_page(&a, &cookie).await, 200);
    assert_eq!(
        console_page(&b, &cookie).await,
        200,
        "the other instance knows the session"
    );
    // A form's outcome on one instance shows on the page the other serves.
    let (dir, url) = (a.dir.clone(), a.database_url.clone());
    a.stop().await;
    let a = TestApp::spawn_on(url, dir, Options::default()).await;
    assert_eq!(
        console_page(&a, &cookie).await,
        200,
        "a restart signed no one out"
    );
    // Signing out on one ends it on both.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let page = client
        .get(b.url("/console/trade"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let csrf = page
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let res = client
        .post(b.url("/console/logout"))
        .header("cookie", &cookie)
        .header("origin", b.base.clone())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("csrf={csrf}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    assert_eq!(
        console_page(&a, &cookie).await,
        303,
        "signed out everywhere"
    );
}

#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_revoked_on_one_mints_nothing_on_the_other() {
    // Both instances keep key records for a minute: only writes read them fresh.
    let (a, b) = two(Backend::Postgres, |c| c.key_cache = Duration::from_secs(60))
        .await
        .unwrap();
    let (provider, pkey) = a.provider("P").await;
    let path = format!("/v1/companies/{provider}/api-keys");
    let (s, minted) = b.post_json(&path, &pkey, &json!({})).await;
    assert_eq!(s, 201, "{minted}");
    let second = minted["response"]["api_key"].as_str().unwrap().to_string();
    let prefix = minted["response"]["key_prefix"]
        .as_str()
        .unwrap()
        .to_string();
    // B has the second key in its cache.
    let (s, _) = b
        .get_json(&format!("/v1/companies/{provider}"), &second)
        .await;
    assert_eq!(s, 200);
    // Revoked on A...
    let res = a
        .client
        .delete(a.url(&format!("{path}/{prefix}")))
        .bearer_auth(&pkey)
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    // ...it mints nothing on B right after.
    let (s, body) = b.post_json(&path, &second, &json!({})).await;
    assert_eq!(s, 401, "{body}");
}

#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_limits_hold_across_both() {
    let (a, b) = two(Backend::Postgres, |c| {
        c.rate_limit = Some(RateLimit {
            per_second: NonZeroU32::new(1).unwrap(),
            burst: NonZeroU32::new(40).unwrap(),
        });
    })
    .await
    .unwrap();
    server::jobs::heartbeat(&a.state).await.unwrap();
    for app in [&b, &a] {
        assert_eq!(server::jobs::heartbeat(&app.state).await.unwrap(), 2);
    }
    let (provider, key) = a.provider("P").await;
    // Alternating between the two, as a round-robin load balancer sends them.
    let mut served = 0;
    for i in 0..80 {
        let app = if i % 2 == 0 { &a } else { &b };
        let res = app
            .get(&format!("/v1/companies/{provider}"), Some(&key))
            .send()
            .await
            .unwrap();
        match res.status().as_u16() {
            200 => served += 1,
            429 => {}
            s => panic!("{s}"),
        }
    }
    // One instance alone serves 40 at once; two together the same, within 10 %.
    assert!(
        (36..=44).contains(&served),
        "{served} served by both together"
    );
    // The upload slots and reads one provider may hold are divided the same way.
    assert_eq!(
        a.state.uploads.cap_here() * 2,
        a.state.config.max_uploads_per_provider
    );
    let metrics = a
        .get("/metrics", Some(&a.operator("O").await.1))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("filing_instances_live 2"), "{metrics}");
    // An instance that stops is no longer counted.
    let state = b.state.clone();
    b.stop().await;
    state
        .repo
        .forget_instance(state.instances.id)
        .await
        .unwrap();
    assert_eq!(server::jobs::heartbeat(&a.state).await.unwrap(), 1);
    assert_eq!(
        a.state.uploads.cap_here(),
        a.state.config.max_uploads_per_provider
    );
}

#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pruning_job_runs_once_per_period_and_keeps_the_retention() {
    let (a, b) = two(Backend::Postgres, |c| {
        c.retention.prune_every = Duration::from_secs(2)
    })
    .await
    .unwrap();
    let (_, key) = a.provider("P").await;
    a.create(
        "/v1/trade-registration",
        &key,
        &domain::rule_cases::example("self"),
    )
    .await;
    // Both try at once: one runs it.
    let (ra, rb) = tokio::join!(
        server::jobs::prune_if_due(&a.state),
        server::jobs::prune_if_due(&b.state)
    );
    let runs = [ra.unwrap(), rb.unwrap()];
    assert_eq!(runs.iter().filter(|r| r.is_some()).count(), 1, "{runs:?}");
    // Nothing younger than the retention is removed.
    let ran = runs.iter().flatten().next().unwrap();
    assert_eq!(ran.events, 0);
    let (s, log) = a.get_json("/v1/events", &key).await;
    assert_eq!(s, 200);
    assert_eq!(log["response"]["events"].as_array().unwrap().len(), 2);
    // Within the period neither runs it again; after it, one does.
    assert!(
        server::jobs::prune_if_due(&a.state)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        server::jobs::prune_if_due(&b.state)
            .await
            .unwrap()
            .is_none()
    );
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let (ra, rb) = tokio::join!(
        server::jobs::prune_if_due(&a.state),
        server::jobs::prune_if_due(&b.state)
    );
    assert_eq!(
        [ra.unwrap(), rb.unwrap()]
            .iter()
            .filter(|r| r.is_some())
            .count(),
        1
    );
}

/// Events, finished webhook messages and idempotency answers past their retention are removed,
/// and only those (on both backends).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pruning_removes_only_what_is_past_its_retention() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        if backend == Backend::Postgres && std::env::var("TEST_DATABASE_URL").is_err() {
            continue;
        }
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, key) = app.provider("P").await;
        let res = app
            .post("/v1/trade-registration", Some(&key))
            .header("idempotency-key", uuid::Uuid::now_v7().to_string())
            .json(&domain::rule_cases::example("self"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 201);
        let later = time::OffsetDateTime::now_utc() + time::Duration::days(1);
        // As if the retention had passed for everything before tomorrow.
        let before = store::PruneBefore {
            events: later,
            webhook_messages: later,
            idempotency_keys: later,
            sessions_seen_us: 0,
            sessions_started_us: 0,
        };
        let pruned = app.state.repo.prune(&before).await.unwrap();
        assert_eq!(
            (pruned.events, pruned.idempotency_keys),
            (2, 1),
            "{pruned:?}"
        );
        let (_, log) = app.get_json("/v1/events", &key).await;
        assert_eq!(log["response"]["events"].as_array().unwrap().len(), 0);
        // A second run finds nothing more.
        assert_eq!(
            app.state.repo.prune(&before).await.unwrap(),
            store::Pruned::default()
        );
        // The cases themselves are kept.
        let (s, list) = app.get_json("/v1/trade-registration", &key).await;
        assert_eq!(s, 200);
        assert_eq!(
            list["response"]["cases"].as_array().unwrap().len(),
            1,
            "{list}"
        );
    }
}

/// Issue 53.5: a second `filing serve` on one SQLite file started without a word; now it
/// refuses, naming PostgreSQL, while the first keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_one_sqlite_file_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    let mut first = common::filing_process(dir.path())
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (base, client) = common::served_on(port, Duration::from_secs(5));
    let up = common::healthz_answers(&base, &client).await;
    assert!(up);
    let second = common::filing_process(dir.path())
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{}", common::free_port()),
        ])
        .output()
        .await
        .unwrap();
    assert!(!second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(
        err.contains("another `filing serve` is running") && err.contains("PostgreSQL"),
        "{err}"
    );
    // The CLI still works beside the server, and the first still serves.
    let out = common::filing_process(dir.path())
        .args(["operators", "create", "--name", "O"])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        client
            .get(format!("{base}/healthz"))
            .send()
            .await
            .unwrap()
            .status()
            == 200
    );
    first.kill().await.unwrap();
    let _ = first.wait().await;
    // Once it is gone, a new one starts.
    let mut again = common::filing_process(dir.path())
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let up = common::healthz_answers(&base, &client).await;
    assert!(up, "the lock was not released with the process");
    again.kill().await.unwrap();
}

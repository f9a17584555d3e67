//! Signing secrets sealed at rest: the generated key, a configured one, a shared signing
//! secret, and `filing webhooks reseal`.

use super::*;

backend_tests! {
    async fn secrets_are_sealed_by_default_and_clear_ones_at_the_next_start(backend) {
        // No FILING_WEBHOOK_SECRETS_KEY: a key is generated into the data folder (0600).
        let app = TestApp::spawn(backend).await.unwrap();
        let key_file = app.dir.path().join("data").join(server::webhooks::SEALING_KEY_FILE);
        let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&key_file).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o600, "{key_file:?}");
        let (_, pkey) = app.provider("P").await;
        let receiver = Receiver::start(Behaviour::Ok).await;
        let (eid, secret) = endpoint(&app, &pkey, &receiver.url, Some(&["registration.initiated"])).await;
        let id = assert_sealed_at_rest(&app, &eid, &secret).await;
        create_trade(&app, &pkey, "self").await;
        receiver.wait_for(1).await[0].verify(&secret).unwrap();
        let (url, dir) = (app.database_url.clone(), app.dir.clone());
        app.stop().await;

        // A secret stored in clear, as versions before sealing by default left it.
        {
            use sqlx::Connection;
            if url.starts_with("sqlite:") {
                let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
                sqlx::query("UPDATE webhook_endpoints SET secret = ? WHERE id = ?").bind(&secret).bind(id).execute(&mut c).await.unwrap();
            } else {
                let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
                sqlx::query("UPDATE webhook_endpoints SET secret = $1 WHERE id = $2").bind(&secret).bind(id).execute(&mut c).await.unwrap();
            }
        }
        // The next start seals it, with the same key (the file is kept), and it still signs.
        let again = TestApp::spawn_on(url, dir, Options::default()).await;
        let stored = again.state.repo.get_webhook_endpoint(id).await.unwrap().unwrap();
        assert!(stored.secret.starts_with("sealed:v1:"), "{}", stored.secret);
        create_trade(&again, &pkey, "self").await;
        receiver.wait_for(2).await[1].verify(&secret).unwrap();
        again.stop().await;
    }

    async fn instances_sharing_the_signing_secret_share_the_sealing_key(backend) {
        // Two instances on separate data folders (two machines), no sealing key configured,
        // the signing secret shared as the README requires: what one seals, the other opens.
        let shared = |worker: bool| Options::tweak(move |c| {
            c.signing_secret = Some("s".repeat(40));
            c.webhooks.worker = worker;
        });
        let first = TestApp::spawn_with(backend, shared(false)).await.unwrap();
        let (_, pkey) = first.provider("P").await;
        let receiver = Receiver::start(Behaviour::Ok).await;
        let (eid, secret) = endpoint(&first, &pkey, &receiver.url, Some(&["registration.initiated"])).await;
        let issue = |app: &TestApp| app.post("/v1/webhook-endpoints", Some(&pkey)).header("idempotency-key", "ep-2").json(&json!({"url": receiver.url, "events": ["registration.completed"]})).send();
        let (s, kept) = json(issue(&first).await.unwrap()).await;
        assert_eq!(s, 201, "{kept}");
        // (The first folder is kept: on SQLite the database file lives there.)
        let (url, _first_dir) = (first.database_url.clone(), first.dir.clone());
        first.stop().await;
        let other_machine = Arc::new(tempfile::tempdir().unwrap());
        let second = TestApp::spawn_on(url, other_machine.clone(), shared(true)).await;
        assert!(!other_machine.path().join("data").join(server::webhooks::SEALING_KEY_FILE).exists());
        let stored = second.state.repo.get_webhook_endpoint(eid.parse().unwrap()).await.unwrap().unwrap();
        assert!(stored.secret.starts_with("sealed:v1:"), "{}", stored.secret);
        create_trade(&second, &pkey, "self").await;
        receiver.wait_for(1).await[0].verify(&secret).unwrap();
        let res = issue(&second).await.unwrap();
        assert_eq!(res.headers()["idempotent-replayed"], "true");
        let (s, replay) = json(res).await;
        assert_eq!((s, replay), (201, kept));
        second.stop().await;
    }

    async fn secrets_are_sealed_at_rest_when_a_key_is_set(backend) {
        use base64::Engine;
        let key = base64::engine::general_purpose::STANDARD.encode([42u8; 32]);
        let sealing = server::webhooks::SealingKey::parse(&key).unwrap();
        let with_key = move || {
            let sealing = sealing.clone();
            Options::tweak(move |c| c.webhooks.sealing = server::webhooks::SealingKeys::new(sealing))
        };
        let app = TestApp::spawn_with(backend, with_key()).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let receiver = Receiver::start(Behaviour::Ok).await;
        let (eid, secret) = endpoint(&app, &pkey, &receiver.url, Some(&["registration.initiated"])).await;
        let id = assert_sealed_at_rest(&app, &eid, &secret).await;

        // Stored answers for idempotent replay carry the secret too: sealed as well, and a
        // replay shows the same secret.
        let create = || app.post("/v1/webhook-endpoints", Some(&pkey)).header("idempotency-key", "ep-1").json(&json!({"url": receiver.url, "events": ["registration.completed"]}));
        let (s, first) = json(create().send().await.unwrap()).await;
        assert_eq!(s, 201, "{first}");
        let (s, replay) = json(create().send().await.unwrap()).await;
        assert_eq!((s, &replay["response"]["secret"]), (201, &first["response"]["secret"]));
        let shown = first["response"]["secret"].as_str().unwrap().trim_start_matches("whsec_").to_string();
        let answers = common::stored_answers(&app.database_url).await;
        assert!(!answers.is_empty());
        for a in &answers {
            assert!(a.starts_with(b"sealed:v1:"), "{}", String::from_utf8_lossy(a));
            assert!(!String::from_utf8_lossy(a).contains(&shown));
        }

        // Deliveries are signed with the secret the provider was shown.
        create_trade(&app, &pkey, "self").await;
        receiver.wait_for(1).await[0].verify(&secret).unwrap();
        // A rotation seals the new one; during the overlap both signatures verify.
        let (s, b) = json(app.post(&format!("/v1/webhook-endpoints/{eid}/rotate-secret"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let new_secret = b["response"]["secret"].as_str().unwrap().to_string();
        let stored = app.state.repo.get_webhook_endpoint(id).await.unwrap().unwrap();
        assert!(stored.secret.starts_with("sealed:v1:") && stored.previous_secret.as_deref().is_some_and(|p| p.starts_with("sealed:v1:")));
        create_trade(&app, &pkey, "assisted").await;
        let got = receiver.wait_for(2).await;
        got[1].verify(&new_secret).unwrap();
        got[1].verify(&secret).unwrap();

        // An instance without the key cannot sign: the attempt fails and says why.
        let (url, dir) = (app.database_url.clone(), app.dir.clone());
        app.stop().await;
        let keyless = TestApp::spawn_on(url.clone(), dir.clone(), Options::default()).await;
        let case = create_trade(&keyless, &pkey, "self").await;
        let mut error = String::new();
        for _ in 0..100 {
            let (_, b) = json(keyless.get(&format!("/v1/webhook-endpoints/{eid}/deliveries"), Some(&pkey)).send().await.unwrap()).await;
            if let Some(d) = b["response"]["deliveries"].as_array().unwrap().iter().find(|d| d["case_id"] == case.as_str()) {
                error = d["error"].as_str().unwrap_or_default().to_string();
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(error.contains("FILING_WEBHOOK_SECRETS_KEY"), "{error:?}");
        assert_eq!(receiver.deliveries().len(), 2, "nothing unsigned went out");
        keyless.stop().await;
        // With the key back, the same message is delivered on its next attempt.
        let again = TestApp::spawn_on(url, dir, {
            let mut o = with_key();
            let tweak = std::mem::replace(&mut o.tweak, Box::new(|_| {}));
            o.tweak = Box::new(move |c| {
                tweak(c);
                c.webhooks.retry_schedule = domain::webhook::parse_retry_schedule("1").unwrap();
            });
            o
        })
        .await;
        let got = receiver.wait_for(3).await;
        got[2].verify(&new_secret).unwrap();
        again.stop().await;
    }

    // A change of sealing key: the new key with the old one beside it serves at once,
    // `filing webhooks reseal` moves every stored secret to the new key, after which the old
    // key can go; a run with a key that opens nothing changes nothing and says so.
    async fn the_sealing_key_changes_with_reseal(backend) {
        use server::webhooks::{SealingKeys, open};
        let keys = |current: u8, old: Vec<u8>| SealingKeys { current: Some(key(current)), old: old.into_iter().map(key).collect() };
        let with = |k: SealingKeys| Options::tweak(move |c| {
            c.webhooks.sealing = k;
            c.webhooks.retry_schedule = domain::webhook::parse_retry_schedule("1").unwrap();
        });
        let app = TestApp::spawn_with(backend, with(keys(1, vec![]))).await.unwrap();
        let (pid, pkey) = app.provider("P").await;
        // An answer kept for replay (it carries a new API key) is sealed with the same key.
        let issue = |app: &TestApp| app.post(&format!("/v1/companies/{pid}/api-keys"), Some(&pkey)).header("idempotency-key", "issue-1").send();
        let (s, issued) = json(issue(&app).await.unwrap()).await;
        assert_eq!(s, 201, "{issued}");
        let replays = |app: &TestApp| {
            let res = issue(app);
            let issued = issued.clone();
            async move {
                let res = res.await.unwrap();
                assert_eq!(res.headers()["idempotent-replayed"], "true");
                let (s, b) = json(res).await;
                assert_eq!((s, b), (201, issued));
            }
        };
        let receiver = Receiver::start(Behaviour::Ok).await;
        let (rotated, first) = endpoint(&app, &pkey, &receiver.url, Some(&["registration.initiated"])).await;
        let (s, b) = json(app.post(&format!("/v1/webhook-endpoints/{rotated}/rotate-secret"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let second = b["response"]["secret"].as_str().unwrap().to_string();
        let (other_endpoint, _) = endpoint(&app, &pkey, &receiver.url, Some(&["registration.completed"])).await;
        let (url, dir) = (app.database_url.clone(), app.dir.clone());
        app.stop().await;

        // The new key, the old one beside it: secrets sealed with the old key still sign.
        let during = TestApp::spawn_on(url.clone(), dir.clone(), with(keys(2, vec![1]))).await;
        create_trade(&during, &pkey, "self").await;
        let got = receiver.wait_for(1).await;
        got[0].verify(&second).unwrap();
        got[0].verify(&first).unwrap();
        during.stop().await;

        let reseal = |env: &[(&str, String)]| reseal_cli(dir.path(), &url, env, &[]);
        let new_with_old = [("FILING_WEBHOOK_SECRETS_KEY", b64(2)), ("FILING_WEBHOOK_SECRETS_OLD_KEYS", b64(1))];
        let (code, report, err) = reseal(&new_with_old);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(report, json!({"endpoints": 2, "resealed": 2, "unchanged": 0, "unreadable": [],
            "answers": {"answers": 1, "resealed": 1, "unchanged": 0, "unreadable": 0}}));
        let repo = store::connect(&url).await.unwrap();
        let row = repo.get_webhook_endpoint(rotated.parse().unwrap()).await.unwrap().unwrap();
        let id = row.id;
        let previous = row.previous_secret.clone().unwrap();
        assert_eq!(open(&keys(2, vec![]), id, &row.secret).as_deref(), Some(second.as_str()));
        assert_eq!(open(&keys(2, vec![]), id, &previous).as_deref(), Some(first.as_str()));
        assert_eq!(open(&keys(1, vec![]), id, &row.secret), None, "still opens with the old key");
        assert_eq!(open(&keys(1, vec![]), id, &previous), None, "previous secret not re-sealed");
        let other = repo.get_webhook_endpoint(other_endpoint.parse().unwrap()).await.unwrap().unwrap();
        assert!(open(&keys(2, vec![]), other.id, &other.secret).is_some());
        // A second run finds nothing to do.
        let (code, report, err) = reseal(&new_with_old);
        assert_eq!((code, &report["resealed"], &report["unchanged"]), (Some(0), &json!(0), &json!(2)), "{err}");
        assert_eq!(report["answers"]["unchanged"], 1, "{report}");

        // A key that opens nothing: reported, nothing changed, exit 1.
        let (code, report, err) = reseal(&[("FILING_WEBHOOK_SECRETS_KEY", b64(3))]);
        assert_eq!(code, Some(1), "{report}");
        assert!(err.contains("FILING_WEBHOOK_SECRETS_OLD_KEYS"), "{err}");
        let mut unreadable: Vec<String> = report["unreadable"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
        unreadable.sort();
        let mut expected = vec![rotated.clone(), other_endpoint.clone()];
        expected.sort();
        assert_eq!(unreadable, expected);
        assert_eq!(report["answers"]["unreadable"], 1, "{report}");
        let unchanged = repo.get_webhook_endpoint(id).await.unwrap().unwrap();
        assert_eq!((&unchanged.secret, &unchanged.previous_secret), (&row.secret, &row.previous_secret));

        // The old key is gone: deliveries are still signed, the kept answer still replays.
        let after = TestApp::spawn_on(url.clone(), dir.clone(), with(keys(2, vec![]))).await;
        replays(&after).await;
        create_trade(&after, &pkey, "self").await;
        let got = receiver.wait_for(2).await;
        got[1].verify(&second).unwrap();
        after.stop().await;

        // Sealing cannot be turned off. A key left out by mistake changes nothing: with no key
        // in the data folder (every server so far had the variable) the command refuses.
        let (code, report, err) = reseal(&[("FILING_WEBHOOK_SECRETS_OLD_KEYS", b64(2))]);
        assert_eq!(code, Some(1), "{report}");
        assert!(err.contains("no sealing key here"), "{err}");
        assert!(open(&keys(2, vec![]), id, &repo.get_webhook_endpoint(id).await.unwrap().unwrap().secret).is_some());
        let (code, _, err) = reseal_cli(dir.path(), &url, &[], &["--unseal"]);
        assert_eq!(code, Some(2), "--unseal is refused by the parser: {err}");
        // A server without the variable generates the folder's key (and leaves sealed secrets
        // as they are); moving to it is the command's job, with the old key to open them.
        let keyless = TestApp::spawn_on(url.clone(), dir.clone(), Options::default()).await;
        keyless.stop().await;
        let (code, report, err) = reseal(&[("FILING_WEBHOOK_SECRETS_OLD_KEYS", b64(2))]);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(report["resealed"], 2, "{report}");
        let moved = repo.get_webhook_endpoint(id).await.unwrap().unwrap();
        assert!(moved.secret.starts_with("sealed:v1:"), "{}", moved.secret);
        assert_eq!(open(&keys(2, vec![]), id, &moved.secret), None, "still under key 2");
        let answers = common::stored_answers(&url).await;
        assert!(answers[0].starts_with(b"sealed:v1:"));
        // A server without the variable uses the folder's key: replays, and signs.
        let unsealed = TestApp::spawn_on(url.clone(), dir.clone(), Options::default()).await;
        replays(&unsealed).await;
        create_trade(&unsealed, &pkey, "self").await;
        receiver.wait_for(3).await[2].verify(&second).unwrap();
        unsealed.stop().await;
    }

    // An endpoint whose previous secret no key opens (sealed with a key dropped since): its
    // current secret still moves to the new key, the endpoint is reported, and what no key
    // opens stays as it was.
    async fn a_reseal_keeps_what_no_key_opens_and_reseals_the_rest(backend) {
        use server::webhooks::{SealingKeys, open};
        let with = |k: SealingKeys| Options::tweak(move |c| c.webhooks.sealing = k);
        let app = TestApp::spawn_with(backend, with(SealingKeys::new(key(1)))).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (eid, first) = endpoint(&app, &pkey, "https://example.com/hook", None).await;
        let (url, dir) = (app.database_url.clone(), app.dir.clone());
        app.stop().await;
        // Rotated under key 2: the previous secret keeps key 1's sealing.
        let app = TestApp::spawn_on(url.clone(), dir.clone(), with(SealingKeys { current: Some(key(2)), old: vec![key(1)] })).await;
        let (s, b) = json(app.post(&format!("/v1/webhook-endpoints/{eid}/rotate-secret"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let second = b["response"]["secret"].as_str().unwrap().to_string();
        let repo = app.state.repo.clone();
        let id: uuid::Uuid = eid.parse().unwrap();
        let before = repo.get_webhook_endpoint(id).await.unwrap().unwrap();
        app.stop().await;

        // Key 1 is gone from the configuration.
        let keys = [("FILING_WEBHOOK_SECRETS_KEY", b64(3)), ("FILING_WEBHOOK_SECRETS_OLD_KEYS", b64(2))];
        let (code, report, err) = reseal_cli(dir.path(), &url, &keys, &[]);
        assert_eq!(code, Some(1), "{err}");
        let nothing_kept = json!({"answers": 0, "resealed": 0, "unchanged": 0, "unreadable": 0});
        assert_eq!(report, json!({"endpoints": 1, "resealed": 1, "unchanged": 0, "unreadable": [eid], "answers": nothing_kept}));
        let after = store::connect(&url).await.unwrap().get_webhook_endpoint(id).await.unwrap().unwrap();
        assert_eq!(open(&SealingKeys::new(key(3)), id, &after.secret).as_deref(), Some(second.as_str()));
        assert_eq!(after.previous_secret, before.previous_secret, "what no key opens is kept");
        assert_eq!(open(&SealingKeys::new(key(1)), id, after.previous_secret.as_deref().unwrap()).as_deref(), Some(first.as_str()));
        // Again: nothing left to move, still reported.
        let (code, report, _) = reseal_cli(dir.path(), &url, &keys, &[]);
        assert_eq!(code, Some(1));
        assert_eq!(report, json!({"endpoints": 1, "resealed": 0, "unchanged": 0, "unreadable": [eid], "answers": nothing_kept}));
    }
}

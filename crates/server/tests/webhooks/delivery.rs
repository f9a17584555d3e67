//! Delivery: every status change delivered signed and in order, retries and give-up, the
//! message and delivery listings, a restart, and two instances sharing the outbox.

use super::*;

backend_tests! {
    async fn every_status_change_is_delivered_signed_and_in_order(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (pid, pkey) = app.provider("P").await;
        let (_, other_key) = app.provider("Other").await;
        let (_, okey) = app.operator("O").await;
        let all = Receiver::start(Behaviour::Ok).await;
        let completed_only = Receiver::start(Behaviour::Ok).await;
        let others = Receiver::start(Behaviour::Ok).await;
        let (all_id, secret) = endpoint(&app, &pkey, &all.url, None).await;
        let (_, secret2) = endpoint(&app, &pkey, &completed_only.url, Some(&["registration.completed"])).await;
        endpoint(&app, &other_key, &others.url, None).await;

        // A self case through its whole life: created (initiated, form-rendered), submitted by
        // the provider, blocked and resubmitted by an operator, completed with the licence.
        let trade = create_trade(&app, &pkey, "self").await;
        transition(&app, &pkey, format!("/v1/trade-registration/{trade}/mark-submitted"), json!({})).await;
        let op = format!("/v1/operator/trade-registrations/{trade}/transition");
        transition(&app, &okey, op.clone(), json!({"status": "blocked", "reason": "Personalausweis fehlt"})).await;
        transition(&app, &okey, op, json!({"status": "submitted", "reason": "nachgereicht"})).await;
        let g = json(app.get(&format!("/v1/trade-registration/{trade}"), Some(&pkey)).send().await.unwrap()).await.1;
        let gewa1 = g["response"]["documents"].as_array().unwrap().iter().find(|d| d["type"] == "trade-licence-application").unwrap()["download_url"].as_str().unwrap().to_string();
        let pdf = app.client.get(&gewa1).send().await.unwrap().bytes().await.unwrap().to_vec();
        let form = reqwest::multipart::Form::new().part("file", reqwest::multipart::Part::bytes(pdf).file_name("l.pdf").mime_str("application/pdf").unwrap());
        let (s, b) = json(app.post(&format!("/v1/operator/trade-registrations/{trade}/trade-licence"), Some(&okey)).multipart(form).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        // A tax case: validated, then submitted.
        let (s, b) = json(app.post("/v1/tax-registration", Some(&pkey)).json(&example("ug")).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let tax = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        transition(&app, &okey, format!("/v1/operator/tax-registrations/{tax}/transition"), json!({"status": "submitted"})).await;

        let got = all.wait_for(8).await;
        for d in &got {
            d.verify(&secret).unwrap_or_else(|e| panic!("signature of {:?}: {e}", d.json()));
            assert!(d.verify(&secret2).is_err(), "another endpoint's secret must not verify");
            assert_eq!(d.headers["content-type"], "application/json");
        }
        assert_eq!(story(&got, &trade), vec![
            s3("registration.initiated", "initiated", None),
            s3("registration.form-rendered", "form-rendered", Some("initiated")),
            s3("registration.submitted", "submitted", Some("form-rendered")),
            s3("registration.blocked", "blocked", Some("submitted")),
            s3("registration.submitted", "submitted", Some("blocked")),
            s3("registration.completed", "completed", Some("submitted")),
        ]);
        assert_eq!(story(&got, &tax), vec![
            s3("tax-registration.validated", "validated", None),
            s3("tax-registration.submitted", "submitted", Some("validated")),
        ]);
        let ids: std::collections::HashSet<String> = got.iter().map(Delivery::id).collect();
        assert_eq!(ids.len(), got.len(), "one message per event");
        let blocked = got.iter().map(Delivery::json).find(|v| v["type"] == "registration.blocked").unwrap();
        let company = g["response"]["company_id"].as_str().unwrap();
        assert_eq!(blocked["data"]["company_id"], company);
        assert_eq!(blocked["data"]["environment"], "production");
        assert_eq!(blocked["data"]["client_reference"], example("self")["client_reference"]);
        assert_eq!(blocked["data"]["reason"], "Personalausweis fehlt");
        assert!(blocked["timestamp"].as_str().unwrap().ends_with('Z'));

        // The filtered endpoint got the completion only; the other provider nothing.
        let only = completed_only.wait_for(1).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let only_now = completed_only.deliveries();
        assert_eq!(only_now.len(), 1, "{:?}", only_now.iter().map(Delivery::json).collect::<Vec<_>>());
        assert_eq!(only[0].json()["type"], "registration.completed");
        only[0].verify(&secret2).unwrap();
        assert!(others.deliveries().is_empty(), "no events of another provider's cases");
        assert_eq!(all.deliveries().len(), 8, "nothing delivered twice");

        // The attempts are listed, newest first.
        let (s, b) = json(app.get(&format!("/v1/webhook-endpoints/{all_id}/deliveries"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let list = b["response"]["deliveries"].as_array().unwrap();
        assert_eq!(list.len(), 8);
        // Newest first: for each case, its events in reverse. Across cases the attempts
        // interleave as the worker's batches take them (one message per case at a time).
        let newest_first = |prefix: &str| -> Vec<String> {
            list.iter().map(|d| d["event_type"].as_str().unwrap()).filter(|t| t.starts_with(prefix)).map(str::to_string).collect()
        };
        assert_eq!(newest_first("registration."), ["registration.completed", "registration.submitted", "registration.blocked", "registration.submitted", "registration.form-rendered", "registration.initiated"]);
        assert_eq!(newest_first("tax-registration."), ["tax-registration.submitted", "tax-registration.validated"]);
        for d in list {
            assert_eq!((d["status_code"].as_i64(), d["outcome"].as_str(), d["message_status"].as_str(), d["attempt"].as_i64()), (Some(200), Some("delivered"), Some("delivered"), Some(1)), "{d}");
        }
        let (_, p) = json(app.get(&format!("/v1/webhook-endpoints/{all_id}/deliveries?limit=5"), Some(&pkey)).send().await.unwrap()).await;
        let cursor = p["response"]["next_cursor"].as_str().unwrap().to_string();
        let (_, p2) = json(app.get(&format!("/v1/webhook-endpoints/{all_id}/deliveries?limit=5&before={cursor}"), Some(&pkey)).send().await.unwrap()).await;
        // The two pages are the whole list, in its order.
        let pages: Vec<Value> = [&p, &p2].iter().flat_map(|page| page["response"]["deliveries"].as_array().unwrap().clone()).collect();
        assert_eq!(p["response"]["deliveries"].as_array().unwrap().len(), 5);
        assert_eq!(&pages, list);
        let _ = pid;
    }

    async fn a_failing_receiver_gets_retries_until_it_answers(backend) {
        let OneReceiver { app, pkey, receiver: flaky, eid, secret, .. } = OneReceiver::start(backend, schedule("1,1,1"), Behaviour::FailFirst(2)).await;
        let got = flaky.wait_for(3).await;
        assert_eq!(got.len(), 3);
        let id = got[0].id();
        for d in &got {
            assert_eq!(d.id(), id, "the same webhook-id on every attempt");
            d.verify(&secret).unwrap();
            assert_eq!(d.body, got[0].body, "the same body on every attempt");
        }
        let list = deliveries_when(&app, &pkey, &eid, |l| l.len() == 3 && l[0]["message_status"] == "delivered").await;
        let summary: Vec<(i64, Option<i64>, &str, &str)> = list.iter().map(|d| (d["attempt"].as_i64().unwrap(), d["status_code"].as_i64(), d["outcome"].as_str().unwrap(), d["message_status"].as_str().unwrap())).collect();
        assert_eq!(summary, vec![(3, Some(204), "delivered", "delivered"), (2, Some(503), "retrying", "delivered"), (1, Some(503), "retrying", "delivered")]);
        assert_eq!(list[1]["error"], "HTTP 503");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(flaky.deliveries().len(), 3, "no attempt after success");
    }

    async fn messages_waiting_behind_a_failing_one_are_listed(backend) {
        // The first attempt fails; the next is a minute away, and the case's second event waits.
        let app = TestApp::spawn_with(backend, schedule("60")).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, other) = app.provider("Q").await;
        let down = Receiver::start(Behaviour::Always(500)).await;
        let (eid, _) = endpoint(&app, &pkey, &down.url, None).await;
        let case = create_trade(&app, &pkey, "assisted").await;
        down.wait_for(1).await;
        let get = |q: &str, key: &str| {
            let req = app.get(&format!("/v1/webhook-endpoints/{eid}/messages{q}"), Some(key));
            async move { json(req.send().await.unwrap()).await }
        };
        deliveries_when(&app, &pkey, &eid, |l| l.len() == 1).await;
        let (s, b) = get("", &pkey).await;
        assert_eq!(s, 200, "{b}");
        let list = b["response"]["messages"].as_array().unwrap();
        let summary: Vec<(&str, &str, i64)> = list.iter().map(|m| (m["event_type"].as_str().unwrap(), m["state"].as_str().unwrap(), m["attempts"].as_i64().unwrap())).collect();
        assert_eq!(summary, [("registration.submitted", "pending", 0), ("registration.initiated", "pending", 1)], "newest first");
        for m in list {
            assert_eq!(m["case_id"], case.as_str());
            assert!(m["next_attempt_at"].is_string() && m.get("finished_at").is_none(), "{m}");
        }
        let first = list[1]["message_id"].as_str().unwrap().to_string();
        let (_, b) = get("?state=pending&limit=1", &pkey).await;
        assert_eq!(b["response"]["messages"].as_array().unwrap().len(), 1);
        let cursor = b["response"]["next_cursor"].as_str().unwrap().to_string();
        let (_, b) = get(&format!("?state=pending&limit=1&before={cursor}"), &pkey).await;
        assert_eq!(b["response"]["messages"][0]["message_id"], first.as_str());
        assert!(b["response"].get("next_cursor").is_none(), "{b}");
        let (_, b) = get("?state=delivered", &pkey).await;
        assert_eq!(b["response"]["messages"], json!([]));

        let (s, b) = get("?state=queued&before=0&limit=501", &pkey).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let fields: Vec<&str> = r["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
        assert_eq!(fields, ["state", "before", "limit"]);
        let (s, b) = get("", &other).await;
        assert_error(s, &b, 404, "NOT_FOUND");
    }

    async fn a_message_given_up_on_can_be_retried_once_more(backend) {
        // Two attempts (now, and 1 s later), both refused; the third gets 204.
        let OneReceiver { app, provider, pkey, receiver: flaky, eid, secret } = OneReceiver::start(backend, schedule("1"), Behaviour::FailFirst(2)).await;
        let got = flaky.wait_for(1).await;
        let mid = got[0].id();
        let retry = |eid: &str, mid: &str, key: &str| {
            let req = app.post(&format!("/v1/webhook-endpoints/{eid}/messages/{mid}/retry"), Some(key));
            async move { json(req.send().await.unwrap()).await }
        };
        // Still in its schedule: already queued, nothing changes.
        let (s, b) = retry(&eid, &mid, &pkey).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["message_status"], "pending");
        assert_eq!(b["response"]["message_id"], mid.as_str());

        let deliveries = |eid: String| {
            let req = app.get(&format!("/v1/webhook-endpoints/{eid}/deliveries"), Some(&pkey));
            async move {
                let (_, b) = json(req.send().await.unwrap()).await;
                b["response"]["deliveries"].as_array().unwrap().clone()
            }
        };
        let mut list = Vec::new();
        for _ in 0..100 {
            list = deliveries(eid.clone()).await;
            if list.first().is_some_and(|d| d["message_status"] == "failed") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(list.len(), 2, "{list:?}");
        assert_eq!(list[0]["message_status"], "failed", "{list:?}");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(flaky.deliveries().len(), 2, "nothing after giving up");

        let (s, b) = retry(&eid, &mid, &pkey).await;
        assert_eq!(s, 200, "{b}");
        let got = flaky.wait_for(3).await;
        assert_eq!(got[2].id(), mid, "the same message, the same webhook-id");
        got[2].verify(&secret).unwrap();
        assert_eq!(got[2].body, got[0].body);
        for _ in 0..100 {
            list = deliveries(eid.clone()).await;
            if list.len() == 3 && list[0]["message_status"] == "delivered" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let summary: Vec<(i64, &str)> = list.iter().map(|d| (d["attempt"].as_i64().unwrap(), d["outcome"].as_str().unwrap())).collect();
        assert_eq!(summary, vec![(3, "delivered"), (2, "failed"), (1, "retrying")]);

        // Delivered: nothing to retry.
        let (s, b) = retry(&eid, &mid, &pkey).await;
        assert_error(s, &b, 409, "WEBHOOK_MESSAGE_DELIVERED");
        // Unknown, malformed, another endpoint's or another provider's: the same 404.
        let (other_eid, _) = endpoint(&app, &pkey, &flaky.url, None).await;
        let (_, other_pkey) = app.provider("Q").await;
        let unknown = uuid::Uuid::now_v7().to_string();
        for (e, m, k) in [(&eid, &unknown, &pkey), (&eid, &"not-a-uuid".to_string(), &pkey), (&other_eid, &mid, &pkey), (&eid, &mid, &other_pkey)] {
            let (s, b) = retry(e, m, k).await;
            assert_error(s, &b, 404, "NOT_FOUND");
        }
        // Only provider keys manage webhooks.
        let (_, ckey) = app.client_company(provider, "Kunde GmbH").await;
        let (s, b) = retry(&eid, &mid, &ckey).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        assert_eq!(flaky.deliveries().len(), 3);
    }

    async fn a_retried_message_that_fails_again_is_failed_again(backend) {
        let OneReceiver { app, pkey, receiver: down, eid, .. } = OneReceiver::start(backend, schedule("1"), Behaviour::Always(500)).await;
        let mid = down.wait_for(1).await[0].id();
        let failed_after = |n: usize| {
            let req = || app.get(&format!("/v1/webhook-endpoints/{eid}/deliveries"), Some(&pkey));
            async move {
                for _ in 0..100 {
                    let (_, b) = json(req().send().await.unwrap()).await;
                    let list = b["response"]["deliveries"].as_array().unwrap().clone();
                    if list.len() == n && list[0]["message_status"] == "failed" {
                        return list;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                panic!("not failed after {n} attempts");
            }
        };
        failed_after(2).await;
        let (s, b) = json(app.post(&format!("/v1/webhook-endpoints/{eid}/messages/{mid}/retry"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let list = failed_after(3).await;
        assert_eq!((list[0]["attempt"].as_i64(), list[0]["outcome"].as_str()), (Some(3), Some("failed")));
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(down.deliveries().len(), 3, "one attempt per retry, no new schedule");
    }

    async fn a_receiver_that_does_not_answer_in_time_gets_a_retry(backend) {
        let options = Options::tweak(|c| {
            c.webhooks.timeout = Duration::from_secs(1);
            c.webhooks.retry_schedule = domain::webhook::parse_retry_schedule("1").unwrap();
        });
        let OneReceiver { app, pkey, receiver: slow, eid, .. } = OneReceiver::start(backend, options, Behaviour::SlowFirst).await;
        let got = slow.wait_for(2).await;
        assert_eq!(got[0].id(), got[1].id());
        // The receiver has the second attempt before the worker has recorded its answer.
        let mut b = Value::Null;
        for _ in 0..100 {
            b = json(app.get(&format!("/v1/webhook-endpoints/{eid}/deliveries"), Some(&pkey)).send().await.unwrap()).await.1;
            if b["response"]["deliveries"].as_array().unwrap().len() >= 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let list = b["response"]["deliveries"].as_array().unwrap();
        assert_eq!(list.len(), 2, "{b}");
        assert_eq!(list[1]["error"], "timed out", "{}", list[1]);
        assert!(list[1]["status_code"].is_null());
        assert!(list[1]["duration_ms"].as_i64().unwrap() < 2500, "the timeout cut the attempt short: {}", list[1]);
        assert_eq!(list[0]["outcome"], "delivered");
    }

    async fn delivery_gives_up_after_the_schedule_and_never_follows_redirects(backend) {
        let app = TestApp::spawn_with(backend, schedule("1")).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let down = Receiver::start(Behaviour::Always(500)).await;
        let moved = Receiver::start(Behaviour::Redirect).await;
        let (down_id, _) = endpoint(&app, &pkey, &down.url, Some(&["registration.initiated"])).await;
        let (moved_id, _) = endpoint(&app, &pkey, &moved.url, Some(&["registration.initiated"])).await;
        // Nobody listens here: connection refused.
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let (closed_id, _) = endpoint(&app, &pkey, &format!("http://{closed}/hook"), Some(&["registration.initiated"])).await;
        create_trade(&app, &pkey, "self").await;
        down.wait_for(2).await;
        moved.wait_for(2).await;
        let finished = |eid: String| {
            let app = &app;
            let pkey = pkey.clone();
            async move {
                for _ in 0..100 {
                    let (_, b) = json(app.get(&format!("/v1/webhook-endpoints/{eid}/deliveries"), Some(&pkey)).send().await.unwrap()).await;
                    let list = b["response"]["deliveries"].as_array().unwrap().clone();
                    if list.len() == 2 && list[0]["message_status"] == "failed" {
                        return list;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                panic!("endpoint {eid} did not give up after two attempts");
            }
        };
        let list = finished(down_id).await;
        assert_eq!((list[0]["outcome"].as_str(), list[1]["outcome"].as_str()), (Some("failed"), Some("retrying")));
        assert_eq!(list[0]["status_code"], 500);
        let list = finished(moved_id).await;
        assert_eq!(list[0]["status_code"], 302);
        assert_eq!(list[0]["error"], "HTTP 302 (redirects are not followed)");
        assert_eq!(*moved.elsewhere.lock().unwrap(), 0, "the redirect was not followed");
        let list = finished(closed_id).await;
        assert!(list[0]["status_code"].is_null());
        assert!(list[0]["error"].as_str().unwrap().starts_with("connection failed"), "{}", list[0]);
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(down.deliveries().len(), 2, "nothing after giving up");
    }

    async fn events_survive_a_restart(backend) {
        // An instance without a worker acknowledges changes; they wait in the outbox.
        let no_worker = Options::tweak(|c| c.webhooks.worker = false);
        let first = TestApp::spawn_with(backend, no_worker).await.unwrap();
        let (_, pkey) = first.provider("P").await;
        let flaky = Receiver::start(Behaviour::FailFirst(1)).await;
        let (_, secret) = endpoint(&first, &pkey, &flaky.url, None).await;
        let trade = create_trade(&first, &pkey, "assisted").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(flaky.deliveries().is_empty());
        let (url, dir) = (first.database_url.clone(), first.dir.clone());
        first.stop().await;

        // The next instance delivers; its first attempts fail, then it is stopped before the
        // retry is due (3 s), and a third instance finishes the job.
        let second = TestApp::spawn_on(url.clone(), dir.clone(), schedule("3")).await;
        flaky.wait_for(1).await;
        second.stop().await;
        let third = TestApp::spawn_on(url, dir, schedule("3")).await;
        let got = flaky.wait_for(4).await;
        for d in &got {
            d.verify(&secret).unwrap();
        }
        // Each message was attempted twice (one failure, one success), in order per case.
        let mut per_id: HashMap<String, usize> = HashMap::new();
        for d in &got {
            *per_id.entry(d.id()).or_default() += 1;
        }
        assert_eq!(per_id.len(), 2);
        assert!(per_id.values().all(|n| *n == 2), "{per_id:?}");
        // One case's events in order: the submission only after the creation got through.
        let sequence: Vec<String> = got.iter().map(|d| d.json()["data"]["status"].as_str().unwrap().to_string()).collect();
        assert_eq!(sequence, ["initiated", "initiated", "submitted", "submitted"]);
        assert_eq!(got[0].json()["data"]["trade_registration_id"], trade.as_str());
        third.stop().await;
    }
}

/// Two instances on one PostgreSQL database: every message is delivered once, and one case's
/// events in order.
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_share_the_outbox_without_duplicates() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let url = common::fresh_database(common::Backend::Postgres, dir.path())
        .await
        .unwrap();
    let a = TestApp::spawn_on(url.clone(), dir.clone(), Options::default()).await;
    let b = TestApp::spawn_on(url, dir, Options::default()).await;
    let (_, pkey) = a.provider("P").await;
    let (_, okey) = a.operator("O").await;
    let rx = Receiver::start(Behaviour::Ok).await;
    endpoint(&a, &pkey, &rx.url, None).await;
    let mut cases = Vec::new();
    for i in 0..12 {
        let app = if i % 2 == 0 { &a } else { &b };
        let id = create_trade(app, &pkey, "self").await;
        let other = if i % 2 == 0 { &b } else { &a };
        transition(
            other,
            &okey,
            format!("/v1/operator/trade-registrations/{id}/transition"),
            json!({"status": "submitted"}),
        )
        .await;
        transition(
            app,
            &okey,
            format!("/v1/operator/trade-registrations/{id}/transition"),
            json!({"status": "blocked", "reason": "Rückfrage"}),
        )
        .await;
        cases.push(id);
    }
    let got = rx.wait_for(12 * 4).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got_now = rx.deliveries();
    assert_eq!(got_now.len(), got.len(), "late duplicates");
    let ids: std::collections::HashSet<String> = got.iter().map(Delivery::id).collect();
    assert_eq!(ids.len(), 48, "every message once");
    for case in &cases {
        let statuses: Vec<String> = story(&got, case).into_iter().map(|(_, s, _)| s).collect();
        assert_eq!(
            statuses,
            ["initiated", "form-rendered", "submitted", "blocked"],
            "{case}"
        );
    }
    a.stop().await;
    b.stop().await;
}

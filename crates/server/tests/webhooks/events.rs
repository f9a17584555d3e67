//! The events of sandbox steps, partnership tax cases, a tax id another provider has, and
//! documents made when an office is assigned later.

use super::*;

backend_tests! {
    async fn sandbox_simulations_are_delivered_like_operator_steps(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let rx = Receiver::start(Behaviour::Ok).await;
        let (_, secret) = endpoint(&app, &pkey, &rx.url, None).await;
        let mut body = example("assisted");
        body["environment"] = json!("sandbox");
        let (s, b) = json(app.post("/v1/trade-registration", Some(&pkey)).json(&body).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let trade = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let path = format!("/v1/sandbox/trade-registration/{trade}/transition");
        transition(&app, &pkey, path.clone(), json!({"status": "blocked", "reason": "Test"})).await;
        transition(&app, &pkey, path.clone(), json!({"status": "submitted"})).await;
        transition(&app, &pkey, path, json!({"status": "completed"})).await;
        let got = rx.wait_for(5).await;
        for d in &got {
            d.verify(&secret).unwrap();
            assert_eq!(d.json()["data"]["environment"], "sandbox");
        }
        let statuses: Vec<String> = story(&got, &trade).into_iter().map(|(_, s, _)| s).collect();
        assert_eq!(statuses, ["initiated", "submitted", "blocked", "submitted", "completed"]);
        let blocked = got.iter().map(Delivery::json).find(|v| v["type"] == "registration.blocked").unwrap();
        assert_eq!(blocked["data"]["reason"], "sandbox simulation: Test");
    }

    async fn partnership_tax_cases_produce_the_same_events(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let rx = Receiver::start(Behaviour::Ok).await;
        let (_, secret) = endpoint(&app, &pkey, &rx.url, Some(&["tax-registration.validated", "tax-registration.rejected"])).await;
        let (s, b) = json(app.post("/v1/tax-registration/gbr", Some(&pkey)).json(&example("egbr")).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        let op = format!("/v1/operator/tax-registrations/{id}/transition");
        let (s, g) = json(app.get(&format!("/v1/tax-registration/{id}"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{g}");
        if g["response"]["tax_office"].is_null() {
            let (s, b) = json(app.post(&format!("/v1/operator/tax-registrations/{id}/tax-office"), Some(&okey)).json(&json!({"tax_office_number": "1127"})).send().await.unwrap()).await;
            assert_eq!(s, 200, "{b}");
        }
        transition(&app, &okey, op.clone(), json!({"status": "submitted"})).await;
        transition(&app, &okey, op, json!({"status": "rejected", "reason": "Steuernummer unplausibel"})).await;
        let got = rx.wait_for(2).await;
        let types: Vec<String> = got.iter().map(|d| d.json()["type"].as_str().unwrap().to_string()).collect();
        assert_eq!(types, ["tax-registration.validated", "tax-registration.rejected"]);
        for d in &got {
            d.verify(&secret).unwrap();
            assert_eq!(d.json()["data"]["tax_registration_id"], id.as_str());
        }
        assert_eq!(got[1].json()["data"]["reason"], "Steuernummer unplausibel");
    }

    // Tax registration ids are unique per provider (docs/adr/0006-case-ids-per-provider.md):
    // provider B's case under the id of A's has a key of its own, and B's events, deliveries
    // and messages name it by the id B chose, never by that key; A hears nothing of B's case.
    async fn a_tax_id_another_provider_has_is_announced_as_chosen(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, a_key) = app.provider("A").await;
        let (_, b_key) = app.provider("B").await;
        let (_, okey) = app.operator("O").await;
        let (ra, rb) = (Receiver::start(Behaviour::Ok).await, Receiver::start(Behaviour::Ok).await);
        endpoint(&app, &a_key, &ra.url, None).await;
        let (b_endpoint, b_secret) = endpoint(&app, &b_key, &rb.url, None).await;
        let id = uuid::Uuid::new_v4().to_string();
        let mut companies = Vec::new();
        for (key, which) in [(&a_key, "ug"), (&b_key, "gmbh")] {
            let mut body = example(which);
            body["tax_registration_id"] = json!(id);
            body["tax_office_number"] = json!("1127");
            body["environment"] = json!("production");
            let (s, b) = json(app.post("/v1/tax-registration", Some(key)).json(&body).send().await.unwrap()).await;
            assert_eq!(s, 201, "{b}");
            assert_eq!(b["response"]["tax_registration_id"], id.as_str());
            companies.push(b["response"]["company_id"].as_str().unwrap().to_string());
        }
        // The operator works on B's case by its key: another office, then submitted.
        let (s, b) = json(app.get("/v1/operator/tax-registrations", Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let b_case = b["response"]["cases"].as_array().unwrap().iter().find(|c| c["public_id"] == id.as_str() && c["id"] != id.as_str()).expect("B's case under a key of its own").clone();
        let b_case_key = b_case["id"].as_str().unwrap().to_string();
        let (s, b) = json(app.post(&format!("/v1/operator/tax-registrations/{b_case_key}/tax-office"), Some(&okey)).json(&json!({"tax_office_number": "2742"})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!((b["response"]["tax_registration_id"].as_str(), b["response"]["case_id"].as_str()), (Some(id.as_str()), Some(b_case_key.as_str())));
        transition(&app, &okey, format!("/v1/operator/tax-registrations/{b_case_key}/transition"), json!({"status": "submitted"})).await;

        let got = rb.wait_for(3).await;
        let seen: Vec<(String, String, String)> = got.iter().map(|d| {
            d.verify(&b_secret).unwrap();
            let v = d.json();
            (v["type"].as_str().unwrap().to_string(), v["data"]["tax_registration_id"].as_str().unwrap().to_string(), v["data"]["company_id"].as_str().unwrap().to_string())
        }).collect();
        let want = |t: &str| (t.to_string(), id.clone(), companies[1].clone());
        assert_eq!(seen, [want("tax-registration.validated"), want("documents.updated"), want("tax-registration.submitted")]);
        let a_got = ra.wait_for(1).await;
        assert_eq!(a_got.len(), 1);
        assert_eq!((a_got[0].json()["data"]["tax_registration_id"].as_str(), a_got[0].json()["data"]["company_id"].as_str()), (Some(id.as_str()), Some(companies[0].as_str())));
        // B's lists of deliveries and messages name the case by the id B chose.
        let deliveries = deliveries_when(&app, &b_key, &b_endpoint, |l| l.len() == 3).await;
        assert!(deliveries.iter().all(|d| d["case_id"] == id.as_str()), "{deliveries:?}");
        let (s, b) = json(app.get(&format!("/v1/webhook-endpoints/{b_endpoint}/messages"), Some(&b_key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let messages = b["response"]["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3, "{b}");
        assert!(messages.iter().all(|m| m["case_id"] == id.as_str()), "{b}");
    }

    async fn documents_made_for_an_office_assigned_later_are_announced(backend) {
        // No polling within the test: every delivery must come from a wake, the assignments'
        // included (the last event is a tax office's, with nothing after it to wake the worker).
        // A failed attempt is retried at once (a look that attempted something looks again),
        // not in 5 s, when only a poll would find it.
        let no_poll = Options::tweak(|c| {
            c.webhooks.poll_interval = Duration::from_secs(600);
            c.webhooks.retry_schedule = domain::webhook::parse_retry_schedule("0,0,0,0,0").unwrap();
        });
        let app = TestApp::spawn_with(backend, no_poll).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let all = Receiver::start(Behaviour::Ok).await;
        let (_, secret) = endpoint(&app, &pkey, &all.url, None).await;
        let documents_only = Receiver::start(Behaviour::Ok).await;
        endpoint(&app, &pkey, &documents_only.url, Some(&["documents.updated"])).await;
        let statuses_only = Receiver::start(Behaviour::Ok).await;
        endpoint(&app, &pkey, &statuses_only.url, Some(&["registration.submitted", "tax-registration.submitted"])).await;
        let (s, _) = json(app.client.put(app.url("/v1/operator/trade-offices/072355007")).bearer_auth(&okey).json(&json!({"name": "Verbandsgemeindeverwaltung Trier-Land"})).send().await.unwrap()).await;
        assert_eq!(s, 200);

        // A self case whose postal code did not decide the office: its form has no head yet.
        let mut data = example("self");
        data["registered_office"]["zip"] = json!("54298");
        data["registered_office"]["city"] = json!("Musterdorf");
        data["client_reference"] = json!("crm-7");
        let (s, b) = json(app.post("/v1/trade-registration", Some(&pkey)).json(&data).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let trade = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let company = b["response"]["company_id"].as_str().unwrap().to_string();
        let old_form = b["response"]["owners"][0]["documents"]["gewa_1"]["id"].as_str().unwrap().to_string();
        let old_link = b["response"]["owners"][0]["documents"]["gewa_1"]["download_url"].as_str().unwrap().to_string();
        let path = format!("/v1/operator/trade-registrations/{trade}");
        let office = json!({"trade_office": {"key": "072355007", "municipality_key": "07235001"}});
        // Once the worker is idle (initiated and form-rendered delivered), only the
        // assignment's own wake can bring its event within `wait_for`'s 20 s.
        let idle = |n: usize| {
            let all = all.clone();
            async move {
                all.wait_for(n).await;
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        };
        idle(2).await;
        let (s, b) = json(app.client.patch(app.url(&path)).bearer_auth(&okey).json(&office).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        all.wait_for(3).await;
        let new_form = b["response"]["documents"].as_array().unwrap().iter().find(|d| d["type"] == "trade-licence-application").unwrap()["id"].as_str().unwrap().to_string();
        assert_ne!(new_form, old_form);
        assert_eq!(app.client.get(&old_link).send().await.unwrap().status(), 404, "the replaced form is gone");
        // The same office again replaces nothing, so announces nothing; the next status change
        // comes after the one update (one case's events arrive in order).
        let (s, b) = json(app.client.patch(app.url(&path)).bearer_auth(&okey).json(&office).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        transition(&app, &okey, format!("/v1/operator/trade-registrations/{trade}/transition"), json!({"status": "submitted"})).await;

        // A GmbH without an office: the office brings the XML (new) and a new summary.
        let (s, b) = json(app.post("/v1/tax-registration", Some(&pkey)).json(&common::office_undetermined(example("gmbh"))).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let tax = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        let (_, g) = json(app.get(&format!("/v1/tax-registration/{tax}"), Some(&pkey)).send().await.unwrap()).await;
        let old_summary = g["response"]["documents"].as_array().unwrap().iter().find(|d| d["type"] == "tax-registration-summary").unwrap()["id"].as_str().unwrap().to_string();
        let (s, g) = json(app.post(&format!("/v1/operator/tax-registrations/{tax}/tax-office"), Some(&okey)).json(&json!({"tax_office_number": "1127"})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{g}");
        let tax_docs: Vec<Value> = g["response"]["documents"].as_array().unwrap().clone();
        // The same tax office again leaves the documents as they are, and says nothing;
        // another office writes the XML and the summary anew, and says so.
        let assign = |number: &'static str| {
            let url = app.url(&format!("/v1/operator/tax-registrations/{tax}/tax-office"));
            let request = app.client.post(url).bearer_auth(&okey).json(&json!({"tax_office_number": number}));
            async move { json(request.send().await.unwrap()).await }
        };
        let (s, g) = assign("1127").await;
        assert_eq!(s, 200, "{g}");
        let ids = |docs: &[Value]| docs.iter().map(|d| d["id"].as_str().unwrap().to_string()).collect::<Vec<_>>();
        assert_eq!(ids(g["response"]["documents"].as_array().unwrap()), ids(&tax_docs), "the same office replaces nothing");
        idle(6).await;
        let (s, g) = assign("1129").await;
        assert_eq!(s, 200, "{g}");
        let again: Vec<Value> = g["response"]["documents"].as_array().unwrap().clone();

        // initiated, form-rendered, documents, submitted; validated, documents, documents.
        let got = all.wait_for(7).await;
        for d in &got {
            d.verify(&secret).unwrap();
        }
        let types = |c: &str| story(&got, c).into_iter().map(|(t, _, _)| t).collect::<Vec<_>>();
        assert_eq!(types(&trade), ["registration.initiated", "registration.form-rendered", "documents.updated", "registration.submitted"]);
        assert_eq!(types(&tax), ["tax-registration.validated", "documents.updated", "documents.updated"]);
        let updates = |c: &str| got.iter().map(Delivery::json).filter(|v| v["type"] == "documents.updated" && (v["data"]["trade_registration_id"] == c || v["data"]["tax_registration_id"] == c)).collect::<Vec<_>>();
        let t = updates(&trade)[0].clone();
        let at = time::OffsetDateTime::parse(t["timestamp"].as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap();
        assert!((time::OffsetDateTime::now_utc() - at).abs() < time::Duration::minutes(1), "{t}");
        assert_eq!(t["data"]["company_id"], company.as_str());
        assert!(t["data"].get("previous_status").is_none());
        assert_eq!(t["data"]["status"], "form-rendered");
        assert_eq!(t["data"]["reason"], "trade office assigned");
        assert_eq!(t["data"]["client_reference"], "crm-7");
        assert_eq!(t["data"]["environment"], "production");
        // A GmbH's one GewA 1 is the case's own document (no owner).
        assert_eq!(t["data"]["documents"], json!([{"id": new_form, "type": "trade-licence-application", "owner_index": null, "name": format!("GewA 1 - {}.pdf", data["name"].as_str().unwrap()), "replaces": old_form}]));
        let x = updates(&tax)[0].clone();
        assert_eq!(x["data"]["status"], "validated");
        assert_eq!(x["data"]["reason"], "tax office assigned");
        let mut announced: Vec<(String, String, Value)> = x["data"]["documents"].as_array().unwrap().iter().map(|d| (d["type"].as_str().unwrap().to_string(), d["id"].as_str().unwrap().to_string(), d["replaces"].clone())).collect();
        announced.sort_by(|a, b| a.0.cmp(&b.0));
        let id_of = |t: &str| tax_docs.iter().find(|d| d["type"] == t).unwrap()["id"].as_str().unwrap().to_string();
        assert_eq!(announced, [
            ("tax-registration-summary".to_string(), id_of("tax-registration-summary"), json!(old_summary)),
            ("tax-registration-xml".to_string(), id_of("tax-registration-xml"), Value::Null),
        ]);
        let mut second: Vec<(String, String, Value)> = updates(&tax)[1]["data"]["documents"].as_array().unwrap().iter().map(|d| (d["type"].as_str().unwrap().to_string(), d["id"].as_str().unwrap().to_string(), d["replaces"].clone())).collect();
        second.sort_by(|a, b| a.0.cmp(&b.0));
        let again_of = |t: &str| again.iter().find(|d| d["type"] == t).unwrap()["id"].as_str().unwrap().to_string();
        assert_eq!(second, [
            ("tax-registration-summary".to_string(), again_of("tax-registration-summary"), json!(id_of("tax-registration-summary"))),
            ("tax-registration-xml".to_string(), again_of("tax-registration-xml"), json!(id_of("tax-registration-xml"))),
        ]);

        // Endpoints get what they subscribed to and nothing else.
        let only: Vec<Value> = documents_only.wait_for(3).await.iter().map(Delivery::json).collect();
        assert!(only.iter().all(|v| v["type"] == "documents.updated"), "{only:?}");
        let statuses = statuses_only.wait_for(1).await;
        assert!(statuses.iter().all(|d| d.json()["type"] != "documents.updated"));
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(documents_only.deliveries().len(), 3);
        assert_eq!(statuses_only.deliveries().len(), 1);
        assert_eq!(all.deliveries().len(), 7);
    }
}

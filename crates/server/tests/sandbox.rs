//! The sandbox: a provider simulates the operator's steps on its own sandbox cases
//! (`POST /v1/sandbox/{trade,tax}-registration/{id}/transition`).

mod common;

use common::{TestApp, assert_error, field_codes, files_below, json, pdf_text};
use domain::rule_cases::example;
use serde_json::{Value, json};

/// A request body of an example in the sandbox.
fn sandbox(name: &str) -> Value {
    let mut body = example(name);
    body["environment"] = json!("sandbox");
    body
}

async fn create(app: &TestApp, key: &str, kind: &str, body: &Value) -> String {
    let (s, b) = app
        .post_json(&format!("/v1/{kind}-registration"), key, body)
        .await;
    assert_eq!(s, 201, "{b}");
    b["response"][format!("{kind}_registration_id")]
        .as_str()
        .unwrap()
        .to_string()
}

async fn go(app: &TestApp, key: &str, kind: &str, id: &str, body: Value) -> (u16, Value) {
    json(
        app.post(
            &format!("/v1/sandbox/{kind}-registration/{id}/transition"),
            Some(key),
        )
        .json(&body)
        .send()
        .await
        .unwrap(),
    )
    .await
}

async fn read(app: &TestApp, key: &str, kind: &str, id: &str) -> Value {
    app.read(&format!("/v1/{kind}-registration/{id}"), key)
        .await
}

fn history(case: &Value) -> Vec<(String, String, Option<String>)> {
    case["status_history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["status"].as_str().unwrap().to_string(),
                h["actor"].as_str().unwrap().to_string(),
                h["reason"].as_str().map(str::to_string),
            )
        })
        .collect()
}

backend_tests! {
    async fn a_self_case_goes_from_form_rendered_through_blocked_to_completed_with_a_sample_licence(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (pid, pkey) = app.provider("P").await;
        // An establishment whose postal code leaves the municipality open: no trade office.
        let mut body = sandbox("self");
        body["registered_office"]["zip"] = json!("54298");
        body["registered_office"]["city"] = json!("Musterdorf");
        let id = create(&app, &pkey, "trade", &body).await;
        let before = read(&app, &pkey, "trade", &id).await;
        assert_eq!(before["status"], "form-rendered");
        assert!(before.get("trade_office").is_none());
        assert!(before.get("trade_office_candidates").is_some());

        // The lifecycle table decides, and the message names the way on.
        let (s, b) = go(&app, &pkey, "trade", &id, json!({"status": "blocked", "reason": "Personalausweis fehlt"})).await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert_eq!(r["message"], "the case is form-rendered; it can become submitted or cancelled, not blocked");
        let (s, b) = go(&app, &pkey, "trade", &id, json!({"status": "completed"})).await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert_eq!(r["message"], "the case is form-rendered; it can become submitted or cancelled, not completed");

        let (s, b) = go(&app, &pkey, "trade", &id, json!({"status": "submitted"})).await;
        assert_eq!(s, 200, "{b}");
        let r = &b["response"];
        assert_eq!(r["result"], "success");
        assert_eq!(r["trade_registration_id"], id.as_str());
        assert_eq!((r["status"].as_str(), r["previous_status"].as_str()), (Some("submitted"), Some("form-rendered")));
        assert!(r.get("document").is_none());
        assert!(r["message"].as_str().unwrap().contains("sandbox simulation"));

        let (s, b) = go(&app, &pkey, "trade", &id, json!({"status": "blocked"})).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(field_codes(&r), [("reason".to_string(), "required".to_string())]);
        let (s, b) = go(&app, &pkey, "trade", &id, json!({"status": "blocked", "reason": "Personalausweis fehlt"})).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = go(&app, &pkey, "trade", &id, json!({"status": "completed"})).await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert_eq!(r["message"], "the case is blocked; it can become submitted, not completed");
        let (s, b) = go(&app, &pkey, "trade", &id, json!({"status": "submitted", "reason": "nachgereicht"})).await;
        assert_eq!(s, 200, "{b}");

        let (s, b) = go(&app, &pkey, "trade", &id, json!({"status": "completed"})).await;
        assert_eq!(s, 200, "{b}");
        let r = &b["response"];
        assert_eq!((r["status"].as_str(), r["previous_status"].as_str()), (Some("completed"), Some("submitted")));
        assert_eq!(r["document"]["type"], "trade-licence");
        let name = body["name"].as_str().unwrap();
        assert_eq!(r["document"]["name"], format!("Gewerbeschein (Muster) - {name}.pdf"));
        let res = app.client.get(r["document"]["download_url"].as_str().unwrap()).send().await.unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()["content-type"], "application/pdf");
        let pdf = res.bytes().await.unwrap();
        let text = pdf_text(&pdf).split_whitespace().collect::<Vec<_>>().join(" ");
        for want in [
            "MUSTER - SANDBOX",
            "Empfangsbescheinigung (Muster)",
            name,
            "Erika Mustermann",
            "54298 Musterdorf",
            "Gewerbeamt Musterstadt (Sandbox)",
            "26,00 EUR (bezahlt)",
            &format!("SANDBOX-{id}"),
        ] {
            assert!(text.contains(want), "{want:?} missing in:\n{text}");
        }
        // No made-up municipality key on the licence.
        assert!(!text.contains("Gemeindekennzahl"), "{text}");

        // The case as read back: demo office, fee and payment, one licence, the whole history.
        let g = read(&app, &pkey, "trade", &id).await;
        assert_eq!(g["status"], "completed");
        assert_eq!(g["trade_office"]["name"], "Gewerbeamt Musterstadt (Sandbox)");
        assert_eq!(g["trade_office"]["key"], "00000000");
        assert!(g["trade_office"]["note"].as_str().unwrap().contains("Sandbox"));
        assert!(g.get("trade_office_candidates").is_none(), "candidates cleared");
        assert_eq!(g["city_fee"], 26.0);
        assert_eq!(g["is_paid"], true);
        let licences: Vec<&Value> = g["documents"].as_array().unwrap().iter().filter(|d| d["type"] == "trade-licence").collect();
        assert_eq!(licences.len(), 1);
        assert_eq!(licences[0]["id"], r["document"]["id"]);
        let me = format!("provider:{pid}");
        let sim = |r: &str| Some(format!("sandbox simulation{r}"));
        assert_eq!(history(&g), vec![
            ("initiated".to_string(), me.clone(), None),
            ("form-rendered".to_string(), "system".to_string(), None),
            ("submitted".to_string(), me.clone(), sim("")),
            ("blocked".to_string(), me.clone(), sim(": Personalausweis fehlt")),
            ("submitted".to_string(), me.clone(), sim(": nachgereicht")),
            ("completed".to_string(), me.clone(), sim(": sample trade licence generated")),
        ]);

        // Completed is final; nothing more is stored.
        let (s, b) = go(&app, &pkey, "trade", &id, json!({"status": "completed"})).await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert_eq!(r["message"], "the case is completed (final); it cannot become completed");
        let (s, b) = go(&app, &pkey, "trade", &id, json!({"status": "submitted"})).await;
        assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        // This app holds this one case: every trade file is one of its documents.
        let files = files_below(&app.dir.path().join("data/documents/trade")).len();
        assert_eq!(files, g["documents"].as_array().unwrap().len());
    }

    async fn an_assisted_case_keeps_its_office_and_recorded_fee(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let id = create(&app, &pkey, "trade", &sandbox("assisted")).await;
        let before = read(&app, &pkey, "trade", &id).await;
        assert_eq!(before["status"], "submitted");
        let office = before["trade_office"]["name"].as_str().expect("determined from 10117 Berlin").to_string();
        // Operators may work sandbox cases too: a fee recorded by one is kept.
        let (s, b) = json(app.client.patch(app.url(&format!("/v1/operator/trade-registrations/{id}"))).bearer_auth(&okey).json(&json!({"city_fee": 40.5})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");

        for (body, want) in [
            (json!({"status": "blocked", "reason": "Unterschrift fehlt"}), "blocked"),
            (json!({"status": "submitted"}), "submitted"),
            (json!({"status": "completed", "reason": "per Post"}), "completed"),
        ] {
            let (s, b) = go(&app, &pkey, "trade", &id, body).await;
            assert_eq!(s, 200, "{b}");
            assert_eq!(b["response"]["status"], want);
        }
        let g = read(&app, &pkey, "trade", &id).await;
        assert_eq!(g["trade_office"]["name"], office.as_str());
        assert_eq!(g["trade_office"]["municipality_key"], before["trade_office"]["municipality_key"]);
        assert_eq!(g["city_fee"], 40.5);
        assert_eq!(g["is_paid"], true);
        let h = history(&g);
        assert_eq!(h.last().unwrap().2.as_deref(), Some("sandbox simulation: sample trade licence generated; per Post"));
        let types: Vec<&str> = g["documents"].as_array().unwrap().iter().map(|d| d["type"].as_str().unwrap()).collect();
        assert_eq!(types.iter().filter(|t| **t == "trade-licence").count(), 1);
        assert_eq!(types.iter().filter(|t| **t == "power-of-attorney").count(), 2);
        let licence = g["documents"].as_array().unwrap().iter().find(|d| d["type"] == "trade-licence").unwrap();
        let pdf = app.client.get(licence["download_url"].as_str().unwrap()).send().await.unwrap().bytes().await.unwrap();
        let text = pdf_text(&pdf).split_whitespace().collect::<Vec<_>>().join(" ");
        for want in ["MUSTER - SANDBOX", "Mustermann & Łukasiewicz Gastronomie GbR", "Max Mustermann", "Zofia Łukasiewicz", office.as_str(), "40,50 EUR (bezahlt)", "Gemeindekennzahl: 11000000"] {
            assert!(text.contains(want), "{want:?} missing in:\n{text}");
        }
    }

    async fn a_tax_case_goes_through_submitted_rejected_submitted_completed(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (pid, pkey) = app.provider("P").await;
        let id = create(&app, &pkey, "tax", &sandbox("ug")).await;
        let g = read(&app, &pkey, "tax", &id).await;
        assert_eq!(g["status"], "validated");
        let office = g["tax_office"]["number"].as_str().unwrap().to_string();

        let (s, b) = go(&app, &pkey, "tax", &id, json!({"status": "completed"})).await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert_eq!(r["message"], "the case is validated; it can become submitted or cancelled, not completed");

        // A retried step with the same Idempotency-Key is answered once and recorded once.
        let send = || app.post(&format!("/v1/sandbox/tax-registration/{id}/transition"), Some(&pkey))
            .header("Idempotency-Key", "submit-1").json(&json!({"status": "submitted", "reason": "per ELSTER"})).send();
        let (s1, b1) = json(send().await.unwrap()).await;
        let (s2, b2) = json(send().await.unwrap()).await;
        assert_eq!((s1, s2), (200, 200), "{b1} {b2}");
        assert_eq!(b1, b2);
        assert_eq!(b1["response"]["previous_status"], "validated");

        let (s, b) = go(&app, &pkey, "tax", &id, json!({"status": "rejected"})).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(field_codes(&r), [("reason".to_string(), "required".to_string())]);
        for (body, want) in [
            (json!({"status": "rejected", "reason": "Plausibilitätsfehler 0815: Rechtsform"}), "rejected"),
            (json!({"status": "submitted", "reason": "korrigiert"}), "submitted"),
        ] {
            let (s, b) = go(&app, &pkey, "tax", &id, body).await;
            assert_eq!(s, 200, "{b}");
            assert_eq!(b["response"]["status"], want);
            assert!(b["response"].get("tax_number").is_none());
        }
        let (s, b) = go(&app, &pkey, "tax", &id, json!({"status": "completed"})).await;
        assert_eq!(s, 200, "{b}");
        let r = &b["response"];
        assert_eq!((r["status"].as_str(), r["previous_status"].as_str()), (Some("completed"), Some("submitted")));
        let number = r["tax_number"].as_str().unwrap().to_string();
        assert_eq!(number.len(), 13, "{number}");
        assert!(number.starts_with(&format!("{office}0815")), "{number} for office {office}");
        assert!(number.bytes().all(|c| c.is_ascii_digit()));

        let g = read(&app, &pkey, "tax", &id).await;
        assert_eq!(g["status"], "completed");
        assert_eq!(g["tax_number"], number.as_str());
        let me = format!("provider:{pid}");
        let sim = |r: &str| Some(format!("sandbox simulation: {r}"));
        assert_eq!(history(&g), vec![
            ("validated".to_string(), me.clone(), None),
            ("submitted".to_string(), me.clone(), sim("per ELSTER")),
            ("rejected".to_string(), me.clone(), sim("Plausibilitätsfehler 0815: Rechtsform")),
            ("submitted".to_string(), me.clone(), sim("korrigiert")),
            ("completed".to_string(), me.clone(), sim("demo tax number, not issued by a tax office")),
        ]);
        let (s, b) = go(&app, &pkey, "tax", &id, json!({"status": "rejected", "reason": "x"})).await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert!(r["message"].as_str().unwrap().contains("final"), "{r}");

        // A tax number sent along is checked and recorded (in ELSTER's form), not replaced.
        let other = create(&app, &pkey, "tax", &sandbox("ug")).await;
        for body in [json!({"status": "submitted"}), json!({"status": "completed", "tax_number": "42/815/0815/2", "reason": "Bescheid vom Finanzamt"})] {
            let (s, b) = go(&app, &pkey, "tax", &other, body).await;
            assert_eq!(s, 200, "{b}");
        }
        let g = read(&app, &pkey, "tax", &other).await;
        // Trier's own form, stored in ELSTER's 13 digits.
        assert_eq!(g["tax_number"], "2742081508152");
        assert_eq!(history(&g).last().unwrap().2.as_deref(), Some("sandbox simulation: Bescheid vom Finanzamt"));

        // Without an assigned office there is no XML to submit, in the sandbox too.
        let waiting = create(&app, &pkey, "tax", &common::office_undetermined(sandbox("gmbh"))).await;
        let (s, b) = go(&app, &pkey, "tax", &waiting, json!({"status": "submitted"})).await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert!(r["message"].as_str().unwrap().contains("tax office"), "{r}");
        assert_eq!(read(&app, &pkey, "tax", &waiting).await["status"], "validated");
    }

    async fn a_partnership_tax_case_follows_the_same_lifecycle(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let mut body = sandbox("gbr");
        body["tax_office_number"] = json!("1127");
        let (s, b) = json(app.post("/v1/tax-registration/gbr", Some(&pkey)).json(&body).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        let (s, b) = go(&app, &pkey, "tax", &id, json!({"status": "submitted"})).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = go(&app, &pkey, "tax", &id, json!({"status": "completed"})).await;
        assert_eq!(s, 200, "{b}");
        let g = read(&app, &pkey, "tax", &id).await;
        assert_eq!(g["status"], "completed");
        assert_eq!(g["legal_form"], "gbr");
        assert!(g["tax_number"].as_str().is_some_and(|n| !n.is_empty()), "{g}");
        let (s, b) = go(&app, &pkey, "tax", &id, json!({"status": "rejected", "reason": "x"})).await;
        assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
    }

    async fn a_provider_assigns_the_tax_office_of_its_sandbox_case(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (pid, pkey) = app.provider("P").await;
        let (_, other) = app.provider("Other").await;
        let (_, ckey) = app.client_company(pid, "C").await;
        let mut body = sandbox("ug");
        body["tax_office_number"] = json!("1127");
        let id = create(&app, &pkey, "tax", &body).await;
        let path = format!("/v1/sandbox/tax-registration/{id}/tax-office");
        let (s, b) = json(app.post(&path, Some(&pkey)).json(&json!({"tax_office_number": "0000"})).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["field"], "tax_office_number");
        let (s, b) = json(app.post(&path, Some(&pkey)).json(&json!({"tax_office_number": "1129"})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["tax_office"]["number"], "1129");
        let xml_url = b["response"]["documents"].as_array().unwrap().iter().find(|d| d["type"] == "tax-registration-xml").unwrap()["download_url"].as_str().unwrap().to_string();
        let xml = app.client.get(&xml_url).send().await.unwrap().bytes().await.unwrap();
        elster::validate(&xml).expect("valid against the XSD");
        assert!(String::from_utf8_lossy(&xml).contains("<Empfaenger id=\"F\">1129</Empfaenger>"));
        let (s, b) = go(&app, &pkey, "tax", &id, json!({"status": "submitted"})).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = json(app.post(&path, Some(&pkey)).json(&json!({"tax_office_number": "1127"})).send().await.unwrap()).await;
        assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        // Others' keys, and production cases.
        let (s, b) = json(app.post(&path, Some(&other)).json(&json!({"tax_office_number": "1127"})).send().await.unwrap()).await;
        assert_error(s, &b, 404, "NOT_FOUND");
        let (s, b) = json(reqwest::Client::new().post(app.url(&path)).bearer_auth(&ckey).header("connection", "close").json(&json!({"tax_office_number": "1127"})).send().await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let mut prod = example("ug");
        prod["tax_office_number"] = json!("1127");
        let prod_id = create(&app, &pkey, "tax", &prod).await;
        let (s, b) = json(app.post(&format!("/v1/sandbox/tax-registration/{prod_id}/tax-office"), Some(&pkey)).json(&json!({"tax_office_number": "1129"})).send().await.unwrap()).await;
        assert_error(s, &b, 404, "NOT_FOUND");
    }

    async fn bad_bodies_are_refused_with_every_broken_field(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let trade = create(&app, &pkey, "trade", &sandbox("assisted")).await;
        let tax = create(&app, &pkey, "tax", &sandbox("ug")).await;

        for (kind, id, body, want) in [
            ("trade", &trade, json!({"status": "done"}), vec![("status", "invalid_value")]),
            ("trade", &trade, json!({}), vec![("status", "required")]),
            ("trade", &trade, json!({"status": 3}), vec![("status", "invalid_type")]),
            ("trade", &trade, json!({"status": "blocked", "reason": "x", "note": 1}), vec![("note", "unknown_field")]),
            ("trade", &trade, json!({"status": "blocked", "reason": "Pass\u{7}"}), vec![("reason", "invalid_characters")]),
            ("trade", &trade, json!({"status": "blocked", "reason": "x".repeat(501)}), vec![("reason", "too_long")]),
            ("tax", &tax, json!({"status": "validated"}), vec![("status", "invalid_value")]),
            ("tax", &tax, json!({"status": "submitted", "tax_number": "2181508150"}), vec![("tax_number", "not_allowed")]),
            ("tax", &tax, json!({"status": "completed", "tax_number": "12/34"}), vec![("tax_number", "invalid_tax_number")]),
            ("tax", &tax, json!({"status": "nope", "reason": "\u{202E}x"}), vec![("status", "invalid_value"), ("reason", "invalid_characters")]),
        ] {
            let (s, b) = go(&app, &pkey, kind, id, body.clone()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            let got = field_codes(&r);
            let want: Vec<(String, String)> = want.iter().map(|(f, c)| (f.to_string(), c.to_string())).collect();
            assert_eq!(got, want, "{body}");
        }
        // Known statuses the table never leads to are 409, naming the allowed ones.
        for status in ["initiated", "form-rendered"] {
            let (s, b) = go(&app, &pkey, "trade", &trade, json!({"status": status})).await;
            let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
            assert_eq!(r["message"], format!("the case is submitted; it can become completed or blocked, not {status}"));
        }
        let path = format!("/v1/sandbox/trade-registration/{trade}/transition");
        let (s, b) = json(app.post(&path, Some(&pkey)).header("content-type", "application/json").body("{\"status\":").send().await.unwrap()).await;
        assert_error(s, &b, 400, "INVALID_JSON");
        let (s, b) = json(app.post(&path, Some(&pkey)).body("status=submitted").send().await.unwrap()).await;
        assert_error(s, &b, 415, "UNSUPPORTED_MEDIA_TYPE");
        let (s, b) = json(app.post(&path, None).json(&json!({"status": "completed"})).send().await.unwrap()).await;
        assert_error(s, &b, 401, "UNAUTHORIZED");

        // Nothing moved.
        assert_eq!(read(&app, &pkey, "trade", &trade).await["status_history"].as_array().unwrap().len(), 2);
        assert_eq!(read(&app, &pkey, "tax", &tax).await["status_history"].as_array().unwrap().len(), 1);
    }

    async fn only_the_creating_provider_may_simulate_and_only_on_sandbox_cases(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, other_key) = app.provider("Q").await;
        let (_, okey) = app.operator("O").await;
        let trade = create(&app, &pkey, "trade", &sandbox("assisted")).await;
        let tax = create(&app, &pkey, "tax", &sandbox("ug")).await;
        let live_trade = create(&app, &pkey, "trade", &example("assisted")).await;
        let live_tax = create(&app, &pkey, "tax", &example("ug")).await;
        let trade_company = read(&app, &pkey, "trade", &trade).await["company_id"].as_str().unwrap().to_string();
        let (s, b) = json(app.post(&format!("/v1/companies/{trade_company}/api-keys"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let own_client_key = b["response"]["api_key"].as_str().unwrap().to_string();
        let (_, client_key) = app.client_company(app.provider("R").await.0, "Client GmbH").await;
        let trade_step = json!({"status": "blocked", "reason": "Unterschrift fehlt"});
        let tax_step = json!({"status": "submitted"});

        // The client company of the case, any other client company and operators: 403.
        for key in [&own_client_key, &client_key, &okey] {
            let (s, b) = go(&app, key, "trade", &trade, trade_step.clone()).await;
            let r = assert_error(s, &b, 403, "FORBIDDEN");
            assert!(r["message"].as_str().unwrap().contains("provider"), "{r}");
            let (s, b) = go(&app, key, "tax", &tax, tax_step.clone()).await;
            assert_error(s, &b, 403, "FORBIDDEN");
        }

        // Another provider's case, a production case, an unknown and a malformed id: the same 404.
        let unknown = uuid::Uuid::now_v7().to_string();
        let mut bodies = Vec::new();
        for (key, kind, id, step) in [
            (&other_key, "trade", &trade, &trade_step),
            (&other_key, "tax", &tax, &tax_step),
            (&pkey, "trade", &live_trade, &trade_step),
            (&pkey, "tax", &live_tax, &tax_step),
            (&pkey, "trade", &unknown, &trade_step),
            (&pkey, "tax", &unknown, &tax_step),
            (&pkey, "trade", &"not-an-id".to_string(), &trade_step),
        ] {
            let (s, b) = go(&app, key, kind, id, step.clone()).await;
            let mut r = assert_error(s, &b, 404, "NOT_FOUND");
            r.as_object_mut().unwrap().remove("request_id");
            bodies.push(r);
        }
        assert!(bodies.windows(2).all(|w| w[0] == w[1]), "indistinguishable: {bodies:?}");
        // The other provider cannot read it either (the GET's rule).
        let (s, _) = json(app.get(&format!("/v1/trade-registration/{trade}"), Some(&other_key)).send().await.unwrap()).await;
        assert_eq!(s, 404);

        // Nothing moved.
        for (kind, id, want) in [("trade", &trade, "submitted"), ("tax", &tax, "validated"), ("trade", &live_trade, "submitted"), ("tax", &live_tax, "validated")] {
            let g = read(&app, &pkey, kind, id).await;
            assert_eq!(g["status"], want, "{kind} {id}");
        }
        // And the creator can.
        let (s, b) = go(&app, &pkey, "trade", &trade, trade_step).await;
        assert_eq!(s, 200, "{b}");
    }
}

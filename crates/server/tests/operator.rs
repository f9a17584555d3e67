//! The operator API: listing cases to work on (operator keys only).

mod common;

use common::{TestApp, assert_error, files_below, json};
use domain::rule_cases::example;
use serde_json::{Value, json};

/// Moves case `id`'s creation to `at`, as if it had been made then.
async fn backdate(app: &TestApp, id: &str, at: time::OffsetDateTime) {
    use sqlx::Connection;
    let id: uuid::Uuid = id.parse().unwrap();
    let sql = "UPDATE trade_registrations SET created_at = $1 WHERE id = $2";
    // The same statement over either database's connection type.
    macro_rules! run {
        ($connection:ty) => {{
            let mut c = <$connection>::connect(&app.database_url).await.unwrap();
            let done = sqlx::query(sql)
                .bind(at)
                .bind(id)
                .execute(&mut c)
                .await
                .unwrap();
            done.rows_affected()
        }};
    }
    let done = if app.database_url.starts_with("sqlite:") {
        run!(sqlx::SqliteConnection)
    } else {
        run!(sqlx::PgConnection)
    };
    assert_eq!(done, 1);
}

backend_tests! {
    async fn operators_list_cases_oldest_first_with_filters_and_cursor(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let mut ids = Vec::new();
        for (i, which) in ["self", "assisted", "self", "self"].iter().enumerate() {
            let mut body = example(which);
            if i == 3 {
                body["environment"] = json!("sandbox");
            }
            let (s, b) = json(app.post("/v1/trade-registration", Some(&pkey)).json(&body).send().await.unwrap()).await;
            assert_eq!(s, 201, "{b}");
            ids.push(b["response"]["trade_registration_id"].as_str().unwrap().to_string());
        }
        let list = |q: &str| {
            let q = q.to_string();
            let okey = okey.clone();
            let app = &app;
            async move { json(app.get(&format!("/v1/operator/trade-registrations{q}"), Some(&okey)).send().await.unwrap()).await }
        };
        let ids_of = |b: &Value| -> Vec<String> {
            b["response"]["cases"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_string()).collect()
        };

        let (s, b) = list("").await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(ids_of(&b), ids[..3].to_vec(), "production ones, oldest first: sandbox cases are never filed");
        let (_, b) = list("?environment=production").await;
        assert_eq!(ids_of(&b), ids[..3].to_vec());

        let (_, b) = list("?status=form-rendered&environment=production").await;
        assert_eq!(ids_of(&b), vec![ids[0].clone(), ids[2].clone()]);
        let (_, b) = list("?status=submitted").await;
        assert_eq!(ids_of(&b), vec![ids[1].clone()]);
        let (_, b) = list("?environment=sandbox").await;
        assert_eq!(ids_of(&b), vec![ids[3].clone()]);

        // Pages of two.
        let (_, b) = list("?limit=2").await;
        assert_eq!(ids_of(&b), ids[..2].to_vec());
        let cursor = b["response"]["next_cursor"].as_str().unwrap().to_string();
        let (_, b) = list(&format!("?limit=2&after={cursor}")).await;
        assert_eq!(ids_of(&b), ids[2..3].to_vec());
        assert!(b["response"].get("next_cursor").is_none());

        let (s, b) = list("?status=done&environment=staging&limit=0&after=x").await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let fields: Vec<&str> = r["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
        assert_eq!(fields, ["status", "environment", "after", "limit"]);
        // A misspelt filter is refused, not ignored (which would list every case).
        let (s, b) = list("?state=blocked").await;
        assert_error(s, &b, 422, "VALIDATION_FAILED");

        // Tax cases have their own list; providers may not list.
        let (s, b) = json(app.post("/v1/tax-registration", Some(&pkey)).json(&example("ug")).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let (s, b) = json(app.get("/v1/operator/tax-registrations?status=validated", Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200);
        assert_eq!(b["response"]["cases"].as_array().unwrap().len(), 1);
        assert_eq!(b["response"]["cases"][0]["status"], "validated");
        let (_, b) = json(app.get("/v1/operator/tax-registrations?status=submitted", Some(&okey)).send().await.unwrap()).await;
        assert!(b["response"]["cases"].as_array().unwrap().is_empty());
        // A caller-chosen id that sorts before every other still lists in creation order.
        let mut early_id = example("gmbh");
        early_id["tax_registration_id"] = json!("00000000-0000-4000-8000-000000000001");
        early_id["environment"] = json!("production");
        let (s, b) = json(app.post("/v1/tax-registration", Some(&pkey)).json(&early_id).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let (_, b) = json(app.get("/v1/operator/tax-registrations", Some(&okey)).send().await.unwrap()).await;
        let tax_ids: Vec<&str> = b["response"]["cases"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert_eq!(tax_ids.len(), 2);
        assert_eq!(tax_ids[1], "00000000-0000-4000-8000-000000000001", "oldest first, whatever the id");
        let (_, b) = json(app.get("/v1/operator/tax-registrations?limit=1", Some(&okey)).send().await.unwrap()).await;
        let cursor = b["response"]["next_cursor"].as_str().unwrap().to_string();
        let (_, b) = json(app.get(&format!("/v1/operator/tax-registrations?limit=1&after={cursor}"), Some(&okey)).send().await.unwrap()).await;
        assert_eq!(b["response"]["cases"][0]["id"], "00000000-0000-4000-8000-000000000001");
        // The last case as cursor: an empty page, the end.
        let (s, b) = json(app.get("/v1/operator/tax-registrations?after=00000000-0000-4000-8000-000000000001", Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert!(b["response"]["cases"].as_array().unwrap().is_empty());
        for path in ["/v1/operator/trade-registrations", "/v1/operator/tax-registrations"] {
            let (s, b) = json(app.get(path, Some(&pkey)).send().await.unwrap()).await;
            assert_error(s, &b, 403, "FORBIDDEN");
        }
        // Operators read any case through the ordinary GET.
        let (s, _) = json(app.get(&format!("/v1/trade-registration/{}", ids[0]), Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200);
    }

    async fn operators_move_trade_cases_along_the_lifecycle(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let (_, b) = json(app.post("/v1/trade-registration", Some(&pkey)).json(&example("self")).send().await.unwrap()).await;
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let path = format!("/v1/operator/trade-registrations/{id}/transition");
        let go = |body: Value, key: &str| app.post(&path, Some(key)).json(&body).send();

        // form-rendered -> blocked is not in the table; the message names the way on.
        let (s, b) = json(go(json!({"status": "blocked", "reason": "Personalausweis fehlt"}), &okey).await.unwrap()).await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert_eq!(r["message"], "the case is form-rendered; it can become submitted or cancelled, not blocked");

        let (s, b) = json(go(json!({"status": "submitted", "reason": "per Post eingereicht"}), &okey).await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!((b["response"]["status"].as_str(), b["response"]["previous_status"].as_str()), (Some("submitted"), Some("form-rendered")));
        // blocked needs a reason; completed needs the licence; unknown statuses are refused.
        for (body, field, code) in [
            (json!({"status": "blocked"}), "reason", "required"),
            (json!({"status": "completed"}), "status", "requires_trade_licence"),
            (json!({"status": "done"}), "status", "invalid_value"),
            (json!({"status": "blocked", "reason": "x", "note": 1}), "note", "unknown_field"),
            (json!({"status": "blocked", "reason": "a\u{1b}[2Jb"}), "reason", "invalid_characters"),
        ] {
            let (s, b) = json(go(body, &okey).await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!((r["errors"][0]["field"].as_str(), r["errors"][0]["code"].as_str()), (Some(field), Some(code)));
        }
        // A reason is a note for people, not form text: a letter pasted whole, with its lines
        // and typographic quotes, is taken as it is.
        let letter = "Schreiben des Gewerbeamts:\r\n„Personalausweis fehlt“ – bitte nachreichen.";
        let (s, b) = json(go(json!({"status": "blocked", "reason": letter}), &okey).await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let (s, _) = json(go(json!({"status": "submitted", "reason": "nachgereicht"}), &okey).await.unwrap()).await;
        assert_eq!(s, 200);

        let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&pkey)).send().await.unwrap()).await;
        let history = g["response"]["status_history"].as_array().unwrap();
        let statuses: Vec<&str> = history.iter().map(|h| h["status"].as_str().unwrap()).collect();
        assert_eq!(statuses, ["initiated", "form-rendered", "submitted", "blocked", "submitted"]);
        assert_eq!(history[3]["reason"], letter.replace("\r\n", "\n"));
        assert!(history[3]["actor"].as_str().unwrap().starts_with("operator:"));

        // Providers cannot use it; unknown cases are 404.
        let (s, b) = json(go(json!({"status": "blocked", "reason": "x"}), &pkey).await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let (s, b) = json(app.post(&format!("/v1/operator/trade-registrations/{}/transition", uuid::Uuid::new_v4()), Some(&okey)).json(&json!({"status": "submitted"})).send().await.unwrap()).await;
        assert_error(s, &b, 404, "NOT_FOUND");
    }

    async fn the_trade_licence_completes_a_submitted_case(backend) {
        use reqwest::multipart::{Form, Part};
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let (_, b) = json(app.post("/v1/trade-registration", Some(&pkey)).json(&example("assisted")).send().await.unwrap()).await;
        let submitted = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let (_, b) = json(app.post("/v1/trade-registration", Some(&pkey)).json(&example("self")).send().await.unwrap()).await;
        let rendered = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        // Any real PDF will do as the licence: take the case's own GewA 1.
        let url = b["response"]["owners"][0]["documents"]["gewa_1"]["download_url"].as_str().unwrap();
        let licence = app.client.get(url).send().await.unwrap().bytes().await.unwrap().to_vec();
        let upload = |id: &str, key: &str, form: Form| {
            app.post(&format!("/v1/operator/trade-registrations/{id}/trade-licence"), Some(key)).multipart(form).send()
        };
        let pdf_form = || Form::new().part("file", Part::bytes(licence.clone()).file_name("licence.pdf").mime_str("application/pdf").unwrap());

        // (Refused before the body is read: a connection of its own, so the unread body does not
        // spoil the pooled one.)
        let (s, b) = json(reqwest::Client::new().post(app.url(&format!("/v1/operator/trade-registrations/{submitted}/trade-licence"))).bearer_auth(&pkey).header("connection", "close").multipart(Form::new().text("file", "x")).send().await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let (s, b) = json(upload(&submitted, &okey, Form::new().part("file", Part::bytes(b"not a pdf".to_vec()))).await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!((r["errors"][0]["field"].as_str(), r["errors"][0]["code"].as_str()), (Some("file"), Some("not_a_pdf")));
        let (s, b) = json(upload(&submitted, &okey, Form::new().text("other", "x")).await.unwrap()).await;
        assert_error(s, &b, 422, "VALIDATION_FAILED");
        let (s, b) = json(upload(&rendered, &okey, pdf_form()).await.unwrap()).await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert!(r["message"].as_str().unwrap().contains("form-rendered"));

        // Every broken part is named at once; an unknown part is refused.
        let (s, b) = json(upload(&submitted, &okey, Form::new().text("reason", "issued\u{1b}[2J")).await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let mut fields: Vec<(&str, &str)> = r["errors"].as_array().unwrap().iter().map(|e| (e["field"].as_str().unwrap(), e["code"].as_str().unwrap())).collect();
        fields.sort();
        assert_eq!(fields, [("file", "required"), ("reason", "invalid_characters")]);
        let (s, b) = json(upload(&submitted, &okey, pdf_form().text("reason", " ")).await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!((r["errors"][0]["field"].as_str(), r["errors"][0]["code"].as_str()), (Some("reason"), Some("empty")));
        let (s, b) = json(upload(&submitted, &okey, pdf_form().text("reason", "x".repeat(501))).await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["code"], "too_long");

        let (s, b) = json(upload(&submitted, &okey, pdf_form().text("reason", "Gewerbeschein Nr. 2026/4711\r\nabgeholt")).await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["status"], "completed");
        let got = app.client.get(b["response"]["document"]["download_url"].as_str().unwrap()).send().await.unwrap().bytes().await.unwrap();
        assert_eq!(got.to_vec(), licence);
        let (_, g) = json(app.get(&format!("/v1/trade-registration/{submitted}"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(g["response"]["status"], "completed");
        let licences: Vec<&Value> = g["response"]["documents"].as_array().unwrap().iter().filter(|d| d["type"] == "trade-licence").collect();
        assert_eq!(licences.len(), 1);
        assert!(licences[0]["name"].as_str().unwrap().starts_with("Gewerbeschein - "));
        let last = g["response"]["status_history"].as_array().unwrap().last().unwrap().clone();
        assert_eq!((last["status"].as_str(), last["reason"].as_str()), (Some("completed"), Some("Gewerbeschein Nr. 2026/4711\nabgeholt")));

        // Completed is final: a second licence is refused and leaves no file behind.
        let trade_files = || files_below(&app.dir.path().join("data/documents/trade")).len();
        let files_before = trade_files();
        let (s, b) = json(upload(&submitted, &okey, pdf_form()).await.unwrap()).await;
        assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        let files_after = trade_files();
        assert_eq!(files_before, files_after);
    }

    async fn operators_set_office_fee_payment_and_source(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        // An establishment whose postal code did not decide the municipality.
        let mut body = example("self");
        body["registered_office"]["zip"] = json!("54298");
        body["registered_office"]["city"] = json!("Musterdorf");
        let (_, b) = json(app.post("/v1/trade-registration", Some(&pkey)).json(&body).send().await.unwrap()).await;
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let path = format!("/v1/operator/trade-registrations/{id}");
        let patch = |body: Value, key: &str| app.client.patch(app.url(&path)).bearer_auth(key).json(&body).send();

        let (s, b) = json(patch(json!({"trade_office": {"key": "072355007", "municipality_key": "07235001"}}), &okey).await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["code"], "unknown_trade_office");
        let (s, _) = json(app.client.put(app.url("/v1/operator/trade-offices/072355007")).bearer_auth(&okey).json(&json!({"name": "Verbandsgemeindeverwaltung Trier-Land", "email": "gewerbe@trier-land.de"})).send().await.unwrap()).await;
        assert_eq!(s, 200);

        let (s, b) = json(patch(json!({
            "trade_office": {"key": "072355007", "municipality_key": "07235001"},
            "city_fee": 26.5, "is_paid": true, "source_product": "gbr"
        }), &okey).await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let r = &b["response"];
        assert_eq!(r["trade_office"]["name"], "Verbandsgemeindeverwaltung Trier-Land");
        assert_eq!(r["trade_office"]["email"], "gewerbe@trier-land.de");
        assert_eq!(r["trade_office"]["municipality_key"], "07235001");
        assert!(r.get("trade_office_candidates").is_none(), "candidates cleared");
        assert_eq!(r["city_fee"], 26.5);
        assert_eq!(r["is_paid"], true);
        assert_eq!(r["source_product"], "gbr");

        // Fields not sent stay; null clears the source product.
        let (s, b) = json(patch(json!({"source_product": null}), &okey).await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["source_product"], Value::Null);
        assert_eq!(b["response"]["city_fee"], 26.5);
        let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(g["response"]["is_paid"], true);

        let (s, b) = json(patch(json!({"trade_office": {"key": "072355007", "municipality_key": "99999999"}, "city_fee": -1, "is_paid": "yes", "source_product": "shop", "note": 1}), &okey).await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let found: Vec<(&str, &str)> = r["errors"].as_array().unwrap().iter().map(|e| (e["field"].as_str().unwrap(), e["code"].as_str().unwrap())).collect();
        for want in [("note", "unknown_field"), ("trade_office.municipality_key", "unknown_municipality"), ("city_fee", "invalid_amount"), ("is_paid", "invalid_type"), ("source_product", "invalid_value")] {
            assert!(found.contains(&want), "{want:?} in {found:?}");
        }
        let (s, b) = json(patch(json!({"city_fee": 1.234}), &okey).await.unwrap()).await;
        assert_error(s, &b, 422, "VALIDATION_FAILED");
        let (s, b) = json(patch(json!({"is_paid": true}), &pkey).await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let (s, b) = json(app.client.patch(app.url(&format!("/v1/operator/trade-registrations/{}", uuid::Uuid::new_v4()))).bearer_auth(&okey).json(&json!({"is_paid": true})).send().await.unwrap()).await;
        assert_error(s, &b, 404, "NOT_FOUND");
    }

    async fn an_assigned_office_heads_the_forms_the_service_rendered(backend) {
        use reqwest::multipart::{Form, Part};
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        for (key, name) in [("072355007", "Verbandsgemeindeverwaltung Trier-Land")] {
            let (s, _) = json(app.client.put(app.url(&format!("/v1/operator/trade-offices/{key}"))).bearer_auth(&okey).json(&json!({"name": name})).send().await.unwrap()).await;
            assert_eq!(s, 200);
        }
        // A real signed PDF to upload for the first owner: another case's GewA 1.
        let (_, b) = json(app.post("/v1/trade-registration", Some(&pkey)).json(&example("self")).send().await.unwrap()).await;
        let uploaded = common::download(&app, &b["response"]["owners"][0]["documents"]["gewa_1"]).await;
        // An establishment whose postal code did not decide the office: no head on the forms.
        let mut data = example("assisted");
        data["registered_office"]["zip"] = json!("54298");
        data["registered_office"]["city"] = json!("Musterdorf");
        data["owners"][0]["documents"] = json!({"gewa_1": {"file": "signed0"}});
        data["owners"][0]["signatures"].as_object_mut().unwrap().remove("gewa_1");
        let form = Form::new().text("data", data.to_string()).part("signed0", Part::bytes(uploaded.clone()).file_name("signed0.pdf").mime_str("application/pdf").unwrap());
        let (s, b) = json(app.post("/v1/trade-registration", Some(&pkey)).multipart(form).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        // Documents are told apart by type and name (the owner's name).
        let documents = |case: &Value| -> Vec<(String, String, String)> {
            let mut d: Vec<_> = case["documents"].as_array().unwrap().iter().map(|d| (d["type"].as_str().unwrap().to_string(), d["name"].as_str().unwrap().to_string(), d["id"].as_str().unwrap().to_string())).collect();
            d.sort();
            d
        };
        let owner_name = |i: usize| format!("GewA 1 - {} {}.pdf", data["owners"][i]["first_name"].as_str().unwrap(), data["owners"][i]["last_name"].as_str().unwrap());
        let gewa1_of = |case: &Value, owner: usize| case["documents"].as_array().unwrap().iter().find(|d| d["type"] == "trade-licence-application" && d["name"] == owner_name(owner).as_str()).unwrap().clone();
        let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&pkey)).send().await.unwrap()).await;
        let before = g["response"].clone();
        let old_form = gewa1_of(&before, 1);
        let old_text = common::pdf_text(&common::download(&app, &old_form).await);
        assert!(!old_text.contains("Trier-Land"), "{old_text}");
        let trade_files = || files_below(&app.dir.path().join("data/documents/trade")).len();
        let files_before = trade_files();

        // The case was made on another day than today; and the office was assigned once before
        // forms followed it (as until 2026-11-25), so the same office again must head them.
        let made = time::macros::datetime!(2026-01-15 10:00 UTC);
        backdate(&app, &id, made).await;
        let office = json!({"key": "072355007", "name": "Verbandsgemeindeverwaltung Trier-Land", "municipality_key": "07235001", "municipality_name": "Aach"});
        let earlier = store::TradePatch { trade_office: Some(office), ..store::TradePatch::default() };
        app.state.repo.patch_trade_registration(id.parse().unwrap(), &earlier, None, &[], domain::lifecycle::Actor::System).await.unwrap();

        let path = format!("/v1/operator/trade-registrations/{id}");
        let patch = |body: Value| app.client.patch(app.url(&path)).bearer_auth(&okey).json(&body).send();
        let (s, b) = json(patch(json!({"trade_office": {"key": "072355007", "municipality_key": "07235001"}})).await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let after = b["response"].clone();
        // The service's form is new, under the office's head, dated the day the case was made;
        // the uploaded form and the powers of attorney stay as they were.
        let new_form = gewa1_of(&after, 1);
        assert_ne!(new_form["id"], old_form["id"]);
        assert_eq!(new_form["name"], old_form["name"]);
        let new_text = common::pdf_text(&common::download(&app, &new_form).await);
        assert!(new_text.contains("Verbandsgemeindeverwaltung Trier-Land"), "{new_text}");
        assert!(new_text.contains("07235001"), "{new_text}");
        assert!(new_text.contains(data["owners"][1]["last_name"].as_str().unwrap()));
        let dates = |t: &str| -> Vec<String> { t.split_whitespace().filter(|w| w.len() == 10 && w.as_bytes()[2] == b'.' && w.as_bytes()[5] == b'.').map(str::to_string).collect() };
        // The day the create printed: the case's own creation, in Germany.
        let created = time::OffsetDateTime::parse(before["status_history"][0]["at"].as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap();
        let today = domain::calendar::date_in_germany(created);
        let german = |d: time::Date| format!("{:02}.{:02}.{}", d.day(), u8::from(d.month()), d.year());
        assert!(dates(&old_text).contains(&german(today)), "{old_text}");
        let want: Vec<String> = dates(&old_text).into_iter().map(|d| if d == german(today) { "15.01.2026".to_string() } else { d }).collect();
        assert_eq!(dates(&new_text), want, "the form keeps the day the owners signed");
        let (s, b) = json(app.client.get(old_form["download_url"].as_str().unwrap()).send().await.unwrap()).await;
        assert_eq!(s, 404, "the replaced form is gone: {b}");
        assert_eq!(common::download(&app, &gewa1_of(&after, 0)).await, uploaded);
        let unchanged = |case: &Value| documents(case).into_iter().filter(|(_, name, _)| *name != owner_name(1)).collect::<Vec<_>>();
        assert_eq!(unchanged(&after), unchanged(&before));
        assert_eq!(trade_files(), files_before, "the old file is deleted");

        // The same office again gives the same bytes and replaces nothing.
        let (s, b) = json(patch(json!({"trade_office": {"key": "072355007", "municipality_key": "07235001"}, "is_paid": true})).await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(documents(&b["response"]), documents(&after));
        // Another municipality of the same office: a new form again.
        let (s, b) = json(patch(json!({"trade_office": {"key": "072355007", "municipality_key": "07235027"}})).await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let moved = gewa1_of(&b["response"], 1);
        assert_ne!(moved["id"], new_form["id"]);
        assert!(common::pdf_text(&common::download(&app, &moved).await).contains("07235027"));

        // Racing assignments (some of them repeating the office in force, which renders
        // nothing): the form left agrees with the office left, and no file is orphaned.
        for round in 0..4 {
            let keys = ["07235001", "07235027", "07235048"];
            let bodies: Vec<Value> = (0..6).map(|i| json!({"trade_office": {"key": "072355007", "municipality_key": keys[(i + round) % 3]}})).collect();
            let answers = futures::future::join_all(bodies.into_iter().map(&patch)).await;
            for a in answers {
                let (s, b) = json(a.unwrap()).await;
                assert_eq!(s, 200, "round {round}: {b}");
            }
            let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&pkey)).send().await.unwrap()).await;
            let office = g["response"]["trade_office"]["municipality_key"].as_str().unwrap().to_string();
            let text = common::pdf_text(&common::download(&app, &gewa1_of(&g["response"], 1)).await);
            assert!(text.contains(&office), "round {round}: the form is headed {office}");
            assert_eq!(trade_files(), files_before, "round {round}");
        }

        // A form rendered at the create under the office it names is the form a re-render
        // gives: assigning that office again replaces nothing.
        let (s, _) = json(app.client.put(app.url("/v1/operator/trade-offices/1100000001")).bearer_auth(&okey).json(&json!({"name": "Bezirksamt Mitte von Berlin", "email": "gewerbe@ba-mitte.example"})).send().await.unwrap()).await;
        assert_eq!(s, 200);
        let (_, b) = json(app.post("/v1/trade-registration", Some(&pkey)).json(&example("self")).send().await.unwrap()).await;
        let berlin = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let (_, g) = json(app.get(&format!("/v1/trade-registration/{berlin}"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(g["response"]["trade_office"]["key"], "1100000001", "Musterstraße 1, 10115: Bezirk Mitte");
        assert_eq!(g["response"]["trade_office"]["kind"], "district");
        assert_eq!(g["response"]["trade_office"]["email"], "gewerbe@ba-mitte.example", "the directory's entry");
        // In another second than the create: the file's metadata time must be the create's.
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        let (s, b) = json(app.client.patch(app.url(&format!("/v1/operator/trade-registrations/{berlin}"))).bearer_auth(&okey).json(&json!({"trade_office": {"key": "1100000001", "municipality_key": "11000000"}})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(documents(&b["response"]), documents(&g["response"]));

        // A self case's owners file their own forms: they follow the office while
        // `form-rendered`, not once the case is submitted.
        let mut own = example("self");
        own["registered_office"]["zip"] = json!("54298");
        own["registered_office"]["city"] = json!("Musterdorf");
        for mark_submitted in [false, true] {
            let (_, b) = json(app.post("/v1/trade-registration", Some(&pkey)).json(&own).send().await.unwrap()).await;
            let sid = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
            if mark_submitted {
                let (s, b) = json(app.post(&format!("/v1/trade-registration/{sid}/mark-submitted"), Some(&pkey)).send().await.unwrap()).await;
                assert_eq!(s, 200, "{b}");
            }
            let (_, g) = json(app.get(&format!("/v1/trade-registration/{sid}"), Some(&pkey)).send().await.unwrap()).await;
            let (s, b) = json(app.client.patch(app.url(&format!("/v1/operator/trade-registrations/{sid}"))).bearer_auth(&okey).json(&json!({"trade_office": {"key": "072355007", "municipality_key": "07235001"}})).send().await.unwrap()).await;
            assert_eq!(s, 200, "{b}");
            let form = |c: &Value| c["documents"].as_array().unwrap().iter().find(|d| d["type"] == "trade-licence-application").unwrap()["id"].clone();
            assert_eq!(form(&b["response"]) == form(&g["response"]), mark_submitted, "submitted: {mark_submitted}");
        }

        // A completed case keeps the forms the office received.
        let licence = Form::new().part("file", Part::bytes(uploaded.clone()).file_name("licence.pdf").mime_str("application/pdf").unwrap());
        let (s, b) = json(app.post(&format!("/v1/operator/trade-registrations/{id}/trade-licence"), Some(&okey)).multipart(licence).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&pkey)).send().await.unwrap()).await;
        let completed = documents(&g["response"]);
        let last = g["response"]["status_history"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["reason"], "trade licence issued", "the history's note without a reason part");
        let (s, b) = json(patch(json!({"trade_office": {"key": "072355007", "municipality_key": "07235001"}})).await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["trade_office"]["municipality_key"], "07235001");
        assert_eq!(documents(&b["response"]), completed);
    }

    async fn assignments_through_two_instances_leave_forms_that_agree_with_the_case(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let other = TestApp::spawn_on(app.database_url.clone(), app.dir.clone(), common::Options::default()).await;
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let (s, _) = json(app.client.put(app.url("/v1/operator/trade-offices/072355007")).bearer_auth(&okey).json(&json!({"name": "Verbandsgemeindeverwaltung Trier-Land"})).send().await.unwrap()).await;
        assert_eq!(s, 200);
        let mut data = example("assisted");
        data["registered_office"]["zip"] = json!("54298");
        data["registered_office"]["city"] = json!("Musterdorf");
        let (s, b) = json(app.post("/v1/trade-registration", Some(&pkey)).json(&data).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let path = format!("/v1/operator/trade-registrations/{id}");
        let keys = ["07235001", "07235027", "07235048"];
        // Each instance runs one assignment of the case at a time; across the two, the write's
        // guard keeps a form rendered for one office from landing beside another office.
        for round in 0..8 {
            let sends = (0..4).map(|i| {
                let via = if i % 2 == 0 { &app } else { &other };
                let body = json!({"trade_office": {"key": "072355007", "municipality_key": keys[(i / 2 + round) % 3]}});
                via.client.patch(via.url(&path)).bearer_auth(&okey).json(&body).send()
            });
            for answer in futures::future::join_all(sends).await {
                let (s, b) = json(answer.unwrap()).await;
                assert_eq!(s, 200, "round {round}: {b}");
            }
            let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&pkey)).send().await.unwrap()).await;
            let office = g["response"]["trade_office"]["municipality_key"].as_str().unwrap().to_string();
            let forms: Vec<&Value> = g["response"]["documents"].as_array().unwrap().iter().filter(|d| d["type"] == "trade-licence-application").collect();
            assert_eq!(forms.len(), 2);
            for form in forms {
                let text = common::pdf_text(&common::download(&app, form).await);
                assert!(text.contains(&office), "round {round}: {} is headed {office}", form["name"]);
            }
            assert_eq!(files_below(&app.dir.path().join("data/documents/trade")).len(), 4, "round {round}: no file orphaned");
        }
    }

    async fn operators_record_identity_verification(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (oid, okey) = app.operator("O").await;
        let (_, b) = json(app.post("/v1/trade-registration", Some(&pkey)).json(&example("assisted")).send().await.unwrap()).await;
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&pkey)).send().await.unwrap()).await;
        assert!(g["response"]["owners"][1].get("identity_verified_at").is_none());

        let (s, b) = json(app.post(&format!("/v1/operator/trade-registrations/{id}/owners/1/identity-verified"), Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let at = b["response"]["identity_verified_at"].as_str().unwrap().to_string();
        let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&pkey)).send().await.unwrap()).await;
        assert!(g["response"]["owners"][0].get("identity_verified_at").is_none());
        assert_eq!(g["response"]["owners"][1]["identity_verified_at"], at.as_str());

        for bad in ["2", "x", "-1"] {
            let (s, b) = json(app.post(&format!("/v1/operator/trade-registrations/{id}/owners/{bad}/identity-verified"), Some(&okey)).send().await.unwrap()).await;
            assert_error(s, &b, 404, "NOT_FOUND");
        }
        let (s, b) = json(app.post(&format!("/v1/operator/trade-registrations/{id}/owners/0/identity-verified"), Some(&pkey)).send().await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");

        // The time it happened, when that was earlier: between the case's creation and now.
        let path = format!("/v1/operator/trade-registrations/{id}/owners/0/identity-verified");
        let rfc3339 = &time::format_description::well_known::Rfc3339;
        let created = time::OffsetDateTime::parse(g["response"]["status_history"][0]["at"].as_str().unwrap(), rfc3339).unwrap();
        let earlier = (created + time::Duration::milliseconds(1)).to_offset(time::macros::offset!(+1));
        let (s, b) = json(app.post(&path, Some(&okey)).json(&json!({"verified_at": earlier.format(rfc3339).unwrap()})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert!(b["response"]["identity_verified_at"].as_str().unwrap().ends_with('Z'), "in UTC like every time: {b}");
        let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&pkey)).send().await.unwrap()).await;
        let shown = time::OffsetDateTime::parse(g["response"]["owners"][0]["identity_verified_at"].as_str().unwrap(), rfc3339).unwrap();
        assert_eq!(shown, earlier);
        let future = time::OffsetDateTime::now_utc() + time::Duration::minutes(5);
        for (body, code) in [
            (json!({"verified_at": future.format(rfc3339).unwrap()}), "in_future"),
            (json!({"verified_at": (created - time::Duration::seconds(1)).format(rfc3339).unwrap()}), "too_early"),
            (json!({"verified_at": "2026-11-20T10:00:00"}), "invalid_timestamp"),
            (json!({"verified_at": 5}), "invalid_type"),
            (json!({"at": "2026-11-20T10:00:00Z"}), "unknown_field"),
        ] {
            let (s, b) = json(app.post(&path, Some(&okey)).json(&body).send().await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!(r["errors"][0]["code"], code, "{body}: {b}");
        }

        // A verification recorded in error is removed; removing it again changes nothing.
        for message in ["identity verification removed", "no identity verification was recorded for this owner"] {
            let (s, b) = json(app.client.delete(app.url(&path)).bearer_auth(&okey).send().await.unwrap()).await;
            assert_eq!(s, 200, "{b}");
            assert_eq!(b["response"]["message"], message);
            assert!(b["response"]["identity_verified_at"].is_null(), "{b}");
        }
        let (_, g) = json(app.get(&format!("/v1/trade-registration/{id}"), Some(&pkey)).send().await.unwrap()).await;
        assert!(g["response"]["owners"][0].get("identity_verified_at").is_none(), "{g}");
        assert_eq!(g["response"]["owners"][1]["identity_verified_at"], at.as_str(), "the other owner's stays");
        let (s, b) = json(app.client.delete(app.url(&path)).bearer_auth(&pkey).send().await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");

        // The audit trail: what was recorded and removed, by whom and when (refused requests
        // leave nothing), with the record in force.
        let (s, b) = json(app.get(&path, Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let r = &b["response"];
        assert!(r["identity_verified_at"].is_null(), "{b}");
        let history = r["history"].as_array().unwrap();
        let actions: Vec<&str> = history.iter().map(|e| e["action"].as_str().unwrap()).collect();
        assert_eq!(actions, ["recorded", "removed"], "{b}");
        assert_eq!(time::OffsetDateTime::parse(history[0]["verified_at"].as_str().unwrap(), rfc3339).unwrap(), earlier);
        assert!(history[1]["verified_at"].is_null(), "{b}");
        for e in history {
            assert_eq!(e["actor"], format!("operator:{oid}"));
            let made = time::OffsetDateTime::parse(e["at"].as_str().unwrap(), rfc3339).unwrap();
            assert!(made >= created && made <= time::OffsetDateTime::now_utc(), "{e}");
            assert!(e["at"].as_str().unwrap().ends_with('Z'), "{e}");
        }
        assert!(history[0]["at"].as_str() <= history[1]["at"].as_str());
        let (s, b) = json(app.get(&format!("/v1/operator/trade-registrations/{id}/owners/1/identity-verified"), Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["response"]["identity_verified_at"], at.as_str());
        let history = b["response"]["history"].as_array().unwrap();
        assert_eq!(history.len(), 1, "{b}");
        assert_eq!((history[0]["action"].as_str(), history[0]["verified_at"].as_str(), history[0]["at"].as_str()), (Some("recorded"), Some(at.as_str()), Some(at.as_str())));
        let (s, b) = json(app.get(&path, Some(&pkey)).send().await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let (s, b) = json(app.get(&format!("/v1/operator/trade-registrations/{id}/owners/2/identity-verified"), Some(&okey)).send().await.unwrap()).await;
        assert_error(s, &b, 404, "NOT_FOUND");
        let (s, b) = json(app.client.delete(app.url(&format!("/v1/operator/trade-registrations/{id}/owners/2/identity-verified"))).bearer_auth(&okey).send().await.unwrap()).await;
        assert_error(s, &b, 404, "NOT_FOUND");
    }

    async fn operators_move_tax_cases_submit_reject_resubmit_complete(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let (_, b) = json(app.post("/v1/tax-registration", Some(&pkey)).json(&example("ug")).send().await.unwrap()).await;
        let id = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        let path = format!("/v1/operator/tax-registrations/{id}/transition");
        let go = |body: Value| app.post(&path, Some(&okey)).json(&body).send();

        for (body, field, code) in [
            (json!({"status": "completed"}), "tax_number", "required"),
            (json!({"status": "completed", "tax_number": "12/34"}), "tax_number", "invalid_tax_number"),
            (json!({"status": "submitted", "tax_number": "2181508150"}), "tax_number", "not_allowed"),
            (json!({"status": "rejected"}), "reason", "required"),
            (json!({"status": "validated"}), "status", "invalid_value"),
        ] {
            let (s, b) = json(go(body).await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!((r["errors"][0]["field"].as_str(), r["errors"][0]["code"].as_str()), (Some(field), Some(code)), "{r}");
        }
        let (s, b) = json(go(json!({"status": "completed", "tax_number": "21/815/08150"})).await.unwrap()).await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert_eq!(r["message"], "the case is validated; it can become submitted or cancelled, not completed");

        for (body, want) in [
            (json!({"status": "submitted", "reason": "per ELSTER übermittelt"}), "submitted"),
            (json!({"status": "rejected", "reason": "Plausibilitätsfehler 0815: Rechtsform"}), "rejected"),
            (json!({"status": "submitted", "reason": "korrigiert"}), "submitted"),
        ] {
            let (s, b) = json(go(body).await.unwrap()).await;
            assert_eq!(s, 200, "{b}");
            assert_eq!(b["response"]["status"], want);
        }
        // The number must be one the case's office (Trier, 2742) issued, with the
        // Rheinland-Pfalz check digit; nothing moves while it is not.
        for (number, code) in [
            ("42/815/08153", "invalid_tax_number"),
            ("2742181508152", "invalid_tax_number"),
            ("21/815/08150", "tax_office_mismatch"),
            ("1121081508150", "tax_office_mismatch"),
        ] {
            let (s, b) = json(go(json!({"status": "completed", "tax_number": number})).await.unwrap()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!((r["errors"][0]["field"].as_str(), r["errors"][0]["code"].as_str()), (Some("tax_number"), Some(code)), "{number}: {r}");
        }
        let (s, b) = json(go(json!({"status": "completed", "tax_number": "42/815/08152"})).await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let (_, g) = json(app.get(&format!("/v1/tax-registration/{id}"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(g["response"]["status"], "completed");
        assert_eq!(g["response"]["tax_number"], "2742081508152");
        let statuses: Vec<&str> = g["response"]["status_history"].as_array().unwrap().iter().map(|h| h["status"].as_str().unwrap()).collect();
        assert_eq!(statuses, ["validated", "submitted", "rejected", "submitted", "completed"]);
        assert_eq!(g["response"]["status_history"][2]["reason"], "Plausibilitätsfehler 0815: Rechtsform");

        // Without an office there is no XML to submit.
        let (_, b) = json(app.post("/v1/tax-registration", Some(&pkey)).json(&common::office_undetermined(example("gmbh"))).send().await.unwrap()).await;
        let waiting = b["response"]["tax_registration_id"].as_str().unwrap();
        let (s, b) = json(app.post(&format!("/v1/operator/tax-registrations/{waiting}/transition"), Some(&okey)).json(&json!({"status": "submitted"})).send().await.unwrap()).await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert!(r["message"].as_str().unwrap().contains("tax office"));
        let (s, b) = json(app.post(&path, Some(&pkey)).json(&json!({"status": "submitted"})).send().await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");
    }

    async fn operators_assign_the_tax_office_and_the_xml_is_written(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let (_, b) = json(app.post("/v1/tax-registration", Some(&pkey)).json(&common::office_undetermined(example("gmbh"))).send().await.unwrap()).await;
        let id = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        let path = format!("/v1/operator/tax-registrations/{id}/tax-office");
        let docs_of = |g: &Value, t: &str| -> Vec<Value> {
            g["response"]["documents"].as_array().unwrap().iter().filter(|d| d["type"] == t).cloned().collect()
        };
        let (_, before) = json(app.get(&format!("/v1/tax-registration/{id}"), Some(&pkey)).send().await.unwrap()).await;
        assert!(docs_of(&before, "tax-registration-xml").is_empty());

        let (s, b) = json(app.post(&path, Some(&okey)).json(&json!({"tax_office_number": "9999"})).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["code"], "unknown_tax_office");
        let (s, b) = json(app.post(&path, Some(&pkey)).json(&json!({"tax_office_number": "1127"})).send().await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");

        let (s, g) = json(app.post(&path, Some(&okey)).json(&json!({"tax_office_number": "1127"})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{g}");
        assert_eq!(g["response"]["tax_office"]["number"], "1127");
        assert!(g["response"].get("tax_office_determination").is_none());
        let xml_docs = docs_of(&g, "tax-registration-xml");
        assert_eq!(xml_docs.len(), 1);
        assert_eq!(docs_of(&g, "tax-registration-summary").len(), 1, "the summary is replaced, not added");
        let xml = app.client.get(xml_docs[0]["download_url"].as_str().unwrap()).send().await.unwrap().bytes().await.unwrap();
        elster::validate(&xml).expect("valid against the XSD");
        assert!(String::from_utf8_lossy(&xml).contains("<Empfaenger id=\"F\">1127</Empfaenger>"));
        // The old summary's file is gone from the store.
        let summary_before = docs_of(&before, "tax-registration-summary");
        let old = app.client.get(summary_before[0]["download_url"].as_str().unwrap()).send().await.unwrap();
        assert_eq!(old.status(), 404);

        // Now it can be submitted; after that the office is fixed.
        let (s, _) = json(app.post(&format!("/v1/operator/tax-registrations/{id}/transition"), Some(&okey)).json(&json!({"status": "submitted"})).send().await.unwrap()).await;
        assert_eq!(s, 200);
        let (s, b) = json(app.post(&path, Some(&okey)).json(&json!({"tax_office_number": "1129"})).send().await.unwrap()).await;
        assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        // Also the office it has, which would change nothing.
        let (s, b) = json(app.post(&path, Some(&okey)).json(&json!({"tax_office_number": "1127"})).send().await.unwrap()).await;
        assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");

        // Rejected by the filing system (wrong office): the operator corrects the office, the
        // XML is written again for it, and the case is resubmitted.
        let transition = format!("/v1/operator/tax-registrations/{id}/transition");
        let (s, b) = json(app.post(&transition, Some(&okey)).json(&json!({"status": "rejected", "reason": "Finanzamt nicht zuständig"})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let (s, g) = json(app.post(&path, Some(&okey)).json(&json!({"tax_office_number": "1129"})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{g}");
        assert_eq!(g["response"]["tax_office"]["number"], "1129");
        let xml_docs = docs_of(&g, "tax-registration-xml");
        assert_eq!(xml_docs.len(), 1);
        let xml = app.client.get(xml_docs[0]["download_url"].as_str().unwrap()).send().await.unwrap().bytes().await.unwrap();
        elster::validate(&xml).expect("valid against the XSD");
        assert!(String::from_utf8_lossy(&xml).contains("<Empfaenger id=\"F\">1129</Empfaenger>"));
        let (s, b) = json(app.post(&transition, Some(&okey)).json(&json!({"status": "submitted", "reason": "mit korrigiertem Finanzamt erneut gesendet"})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let (_, g) = json(app.get(&format!("/v1/tax-registration/{id}"), Some(&okey)).send().await.unwrap()).await;
        // Each assignment is an entry of its own that keeps the status (issue 39, tests/audit.rs).
        let entries: Vec<(&str, Option<&str>)> = g["response"]["status_history"].as_array().unwrap().iter()
            .map(|h| (h["status"].as_str().unwrap(), h["changes"][0]["field"].as_str())).collect();
        assert_eq!(entries, [
            ("validated", None), ("validated", Some("tax_office")), ("submitted", None),
            ("rejected", None), ("rejected", Some("tax_office")), ("submitted", None),
        ]);
    }
}

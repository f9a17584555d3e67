//! `POST /v1/trade-registration`, `GET /v1/trade-registration/{id}` and document downloads,
//! through HTTP against SQLite and PostgreSQL.

mod common;

use common::signed_gewa1_pdf as signed_pdf;
use common::{Options, TestApp, app, assert_error, json, pdf_text};
use domain::rule_cases::{example, trade_cases};
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};

const PATH: &str = "/v1/trade-registration";

/// Multipart file parts: (part name, bytes).
type Files = Vec<(&'static str, Vec<u8>)>;

async fn post_json(app: &TestApp, key: &str, body: &Value) -> (u16, Value) {
    app.post_json(PATH, key, body).await
}

fn multipart(data: &Value, files: Vec<(&str, Vec<u8>)>) -> Form {
    let mut form = Form::new().text("data", data.to_string());
    for (name, bytes) in files {
        form = form.part(
            name.to_string(),
            Part::bytes(bytes)
                .file_name(format!("{name}.pdf"))
                .mime_str("application/pdf")
                .unwrap(),
        );
    }
    form
}

/// Downloads a document link (no key) and returns status, headers and bytes.
async fn download(app: &TestApp, url: &str) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let res = app.client.get(url).send().await.unwrap();
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    (status, headers, res.bytes().await.unwrap().to_vec())
}

fn files_in(dir: &std::path::Path) -> usize {
    if !dir.exists() {
        return 0;
    }
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            n += files_in(&e.path());
        } else {
            n += 1;
        }
    }
    n
}

fn nine_owners() -> Value {
    let mut v = example("self");
    let owner = v["owners"][0].clone();
    let owners: Vec<Value> = (0..9)
        .map(|i| {
            let mut o = owner.clone();
            o["first_name"] = Value::from(format!(
                "Erika{}",
                ["", "a", "b", "c", "d", "e", "f", "g", "h"][i]
            ));
            o
        })
        .collect();
    v["owners"] = Value::from(owners);
    v
}

backend_tests! {
    async fn the_provider_marks_a_self_filed_case_submitted(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (_, other) = app.provider("Q").await;
        let (_, b) = post_json(&app, &key, &example("self")).await;
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let company = b["response"]["company_id"].as_str().unwrap().to_string();
        let path = format!("{PATH}/{id}/mark-submitted");

        let (s, b) = json(app.post(&path, Some(&other)).send().await.unwrap()).await;
        assert_error(s, &b, 404, "NOT_FOUND");
        let (_, k) = json(app.post(&format!("/v1/companies/{company}/api-keys"), Some(&key)).send().await.unwrap()).await;
        let client_key = k["response"]["api_key"].as_str().unwrap().to_string();
        let (s, b) = json(app.post(&path, Some(&client_key)).send().await.unwrap()).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let (s, b) = json(app.post(&path, Some(&key)).json(&json!({"reasn": "typo"})).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["field"], "reasn");

        // Two at once: exactly one moves the case.
        let send = || app.post(&path, Some(&key)).json(&json!({"reason": "filed at the Bürgeramt"})).send();
        let (a, b2) = tokio::join!(send(), send());
        let mut statuses = vec![a.unwrap().status().as_u16(), b2.unwrap().status().as_u16()];
        statuses.sort();
        assert_eq!(statuses, [200, 409]);

        let (s, b) = json(app.post(&path, Some(&key)).send().await.unwrap()).await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert_eq!(r["message"], "the case is submitted; it can become completed or blocked (through an operator), and mark-submitted is only possible from form-rendered");

        let (_, g) = json(app.get(&format!("{PATH}/{id}"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(g["response"]["status"], "submitted");
        let history = g["response"]["status_history"].as_array().unwrap();
        let statuses: Vec<&str> = history.iter().map(|h| h["status"].as_str().unwrap()).collect();
        assert_eq!(statuses, ["initiated", "form-rendered", "submitted"]);
        assert_eq!(history[2]["previous_status"], "form-rendered");
        assert_eq!(history[2]["reason"], "filed at the Bürgeramt");
        assert!(history[2]["actor"].as_str().unwrap().starts_with("provider:"));

        // An assisted case is submitted from the start.
        let (_, b) = post_json(&app, &key, &example("assisted")).await;
        let id = b["response"]["trade_registration_id"].as_str().unwrap();
        let (s, b) = json(app.post(&format!("{PATH}/{id}/mark-submitted"), Some(&key)).send().await.unwrap()).await;
        assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
    }

    async fn self_package_as_json_creates_company_case_and_form(backend) {
        let app = app(backend).await;
        let (provider, key) = app.provider("Plattform GmbH").await;
        let body = example("self");
        let (s, b) = post_json(&app, &key, &body).await;
        assert_eq!(s, 201, "{b}");
        let r = &b["response"];
        assert_eq!(r["result"], "success");
        assert_eq!(r["status"], "form-rendered");
        assert_eq!(r["client_reference"], body["client_reference"]);
        assert_eq!(r["client_preferred_language"], body.get("client_preferred_language").cloned().unwrap_or(json!("de")));
        assert!(r["timestamp"].as_str().is_some());
        let id = r["trade_registration_id"].as_str().unwrap().to_string();
        let company = r["company_id"].as_str().unwrap().to_string();
        let owner = &r["owners"][0];
        assert_eq!(owner["first_name"], body["owners"][0]["first_name"]);
        assert!(owner["documents"].get("power_of_attorney").is_none());
        let gewa1 = &owner["documents"]["gewa_1"];
        // A GmbH files one GewA 1 for the company (issue 49).
        let name = format!("GewA 1 - {}.pdf", body["name"].as_str().unwrap());
        assert_eq!(gewa1["name"], name.as_str());

        // The company was created from the request and belongs to the provider.
        let c = app.state.repo.get_company(company.parse().unwrap()).await.unwrap().unwrap();
        assert_eq!(c.provider_id, Some(provider));
        assert_eq!(c.name, body["name"].as_str().unwrap());

        // Download the form and read it back.
        let (s, headers, pdf) = download(&app, gewa1["download_url"].as_str().unwrap()).await;
        assert_eq!(s, 200);
        assert_eq!(headers["content-type"], "application/pdf");
        assert!(headers["content-disposition"].to_str().unwrap().starts_with("attachment; filename="));
        let text = pdf_text(&pdf);
        for want in [
            body["owners"][0]["last_name"].as_str().unwrap(),
            body["owners"][0]["first_name"].as_str().unwrap(),
            body["name"].as_str().unwrap(),
            body["registered_office"]["street"].as_str().unwrap(),
        ] {
            assert!(text.contains(want), "{want:?} not in the GewA 1");
        }

        // Read it back whole.
        let (s, g) = json(app.get(&format!("{PATH}/{id}"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{g}");
        let g = &g["response"];
        assert_eq!(g["trade_registration_id"], id.as_str());
        assert_eq!(g["company_id"], company.as_str());
        assert_eq!(g["status"], "form-rendered");
        assert_eq!(g["package"], "self");
        assert_eq!(g["price"], 49.0);
        assert_eq!(g["is_paid"], false);
        assert!(g.get("city_fee").is_none());
        // Determined from the establishment's address (10115 Berlin).
        assert_eq!(g["trade_office"]["municipality_key"], "11000000");
        assert_eq!(g["source_product"], Value::Null);
        assert_eq!(g["name"], body["name"]);
        assert_eq!(g["legal_form"], body["legal_form"]);
        assert_eq!(g["purpose"], body["purpose"]);
        assert_eq!(g["business_type"], body["business_type"]);
        assert_eq!(g["registered_office"]["country"], "DE");
        assert_eq!(g["registered_office"]["street"], body["registered_office"]["street"]);
        assert_eq!(g["employees"], body["employees"]);
        assert_eq!(g["industrial_license"], body["industrial_license"]);
        assert_eq!(g["owners"][0]["dob"], body["owners"][0]["dob"]);
        assert!(g["owners"][0].get("signatures").is_none(), "signatures are not returned");
        let history: Vec<&str> = g["status_history"].as_array().unwrap().iter().map(|h| h["status"].as_str().unwrap()).collect();
        assert_eq!(history, ["initiated", "form-rendered"]);
        let docs = g["documents"].as_array().unwrap();
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0]["type"], "trade-licence-application");
        // Every GET issues a fresh working link.
        let (s, _, again) = download(&app, docs[0]["download_url"].as_str().unwrap()).await;
        assert_eq!(s, 200);
        assert_eq!(again, pdf);
        // And says what the download delivers, to check a stored copy by.
        assert_eq!(docs[0]["content_type"], "application/pdf");
        assert_eq!(docs[0]["size"], pdf.len());
        assert_eq!(docs[0]["sha256"], common::sha256_hex(&pdf));
    }

    async fn assisted_multipart_with_an_uploaded_signed_pdf(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut data = example("assisted");
        data["owners"][0]["documents"] = json!({"gewa_1": {"file": "signed0"}});
        data["owners"][0]["signatures"].as_object_mut().unwrap().remove("gewa_1");
        let pdf = signed_pdf();
        let send = || app.post(PATH, Some(&key)).header("idempotency-key", "mp-1").multipart(multipart(&data, vec![("signed0", pdf.clone())])).send();
        let (s, b) = json(send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let r = &b["response"];
        assert_eq!(r["status"], "submitted");
        assert_eq!(r["owners"].as_array().unwrap().len(), 2);
        for o in r["owners"].as_array().unwrap() {
            assert!(o["documents"]["gewa_1"].is_object(), "{o}");
            assert!(o["documents"]["power_of_attorney"]["name"].as_str().unwrap().starts_with("Vollmacht - "));
        }
        // The uploaded PDF is stored as sent.
        let (s, _, got) = download(&app, r["owners"][0]["documents"]["gewa_1"]["download_url"].as_str().unwrap()).await;
        assert_eq!(s, 200);
        assert_eq!(got, pdf);
        // The power of attorney names the operator from configuration and the owner.
        let (_, _, poa) = download(&app, r["owners"][1]["documents"]["power_of_attorney"]["download_url"].as_str().unwrap()).await;
        let text = pdf_text(&poa);
        assert!(text.contains("Muster Filing GmbH"));
        assert!(text.contains(data["owners"][1]["last_name"].as_str().unwrap()));

        // A retry with the same key replays, although the client drew a new boundary; its
        // download links are signed anew, valid 24 hours from the replay.
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        let res = send().await.unwrap();
        assert_eq!(res.headers()["idempotent-replayed"], "true");
        let (s2, b2) = json(res).await;
        assert_eq!((s2, &b2["response"]["trade_registration_id"]), (201, &r["trade_registration_id"]));
        let link = |b: &Value| b["owners"][1]["documents"]["power_of_attorney"]["download_url"].as_str().unwrap().to_string();
        let expires = |u: &str| -> i64 { u.split("expires=").nth(1).unwrap().split('&').next().unwrap().parse().unwrap() };
        let (first, again) = (link(r), link(&b2["response"]));
        assert!(expires(&again) > expires(&first), "{first} {again}");
        let (s, _, replayed_poa) = download(&app, &again).await;
        assert_eq!((s, replayed_poa), (200, poa));

        let id = r["trade_registration_id"].as_str().unwrap();
        let (_, g) = json(app.get(&format!("{PATH}/{id}"), Some(&key)).send().await.unwrap()).await;
        let types: Vec<&str> = g["response"]["documents"].as_array().unwrap().iter().map(|d| d["type"].as_str().unwrap()).collect();
        assert_eq!(types.iter().filter(|t| **t == "trade-licence-application").count(), 2);
        assert_eq!(types.iter().filter(|t| **t == "power-of-attorney").count(), 2);
        assert_eq!(g["response"]["price"], 149.0);
        let history: Vec<&str> = g["response"]["status_history"].as_array().unwrap().iter().map(|h| h["status"].as_str().unwrap()).collect();
        assert_eq!(history, ["initiated", "submitted"]);
    }

    async fn nine_owners_get_nine_forms(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (s, b) = post_json(&app, &key, &nine_owners()).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["response"]["owners"].as_array().unwrap().len(), 9);
        let mut ten = nine_owners();
        let extra = ten["owners"][0].clone();
        ten["owners"].as_array_mut().unwrap().push(extra);
        let (s, b) = post_json(&app, &key, &ten).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["field"], "owners");
    }

    async fn every_rule_is_a_422_naming_its_field(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        for case in trade_cases() {
            let (s, b) = post_json(&app, &key, &case.request()).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            let found: Vec<(String, String)> = r["errors"].as_array().unwrap().iter()
                .map(|e| (e["field"].as_str().unwrap().to_string(), e["code"].as_str().unwrap().to_string()))
                .collect();
            assert!(found.contains(&(case.field.to_string(), case.code.to_string())), "{} {}: {found:?}", case.field, case.code);
        }
        // Nothing was written by any of them.
        assert_eq!(files_in(&app.dir.path().join("data/documents")), 0);
    }

    async fn several_broken_fields_are_reported_together(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut body = example("self");
        body["name"] = json!("");
        body["phone"] = json!("x");
        body["owners"][0]["nationality"] = json!("ZZ");
        body["owners"][0]["dob"] = json!("1980-13-01");
        body["registered_office"]["zip"] = json!("123");
        body["owners"][0]["last_name"] = json!("Иванов");
        let (s, b) = post_json(&app, &key, &body).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let fields: Vec<&str> = r["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
        for f in ["name", "phone", "owners[0].nationality", "owners[0].dob", "registered_office.zip", "owners[0].last_name"] {
            assert!(fields.contains(&f), "{f} not in {fields:?}");
        }
        assert_eq!(r["message"], format!("{} fields are invalid", fields.len()));
        let msg = r["errors"].as_array().unwrap().iter().find(|e| e["field"] == "owners[0].last_name").unwrap()["message"].as_str().unwrap().to_string();
        assert!(msg.contains("U+0418"), "{msg}");
    }

    async fn gewa1_fields_round_trip(backend) {
        // Every GewA 1 field the API carries beyond the basics: sent, stored, returned by the
        // GET and printed on the form the trade office reads.
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut body = example("assisted");
        body["reason"] = json!("takeover");
        body["establishment_type"] = json!("dependent-branch");
        body["previous_business"] = json!({"name": "Café Gabler, Inh. Erika Gabler e. K."});
        body["main_establishment"] = json!({
            "street": "Kaiserstraße 12", "zip": "60311", "city": "Frankfurt am Main",
            "country": "de", "phone": "+49 69 123456", "email": "zentrale@example.de"
        });
        // A Ukrainian who also holds Turkish nationality needs a residence title (a Pole, as
        // the example's partner is, needs none: fields 30 and 31 are refused for him).
        body["owners"][1]["nationality"] = json!("UA");
        body["owners"][1]["other_nationalities"] = json!(["tr"]);
        // The main establishment stands in for business_address: it becomes the company's.
        body.as_object_mut().unwrap().remove("business_address");
        body["owners"][1]["residence_permit"] = json!({"issue_date": "2021-03-09", "issuing_authority": "LEA Berlin"});
        body["owners"][1]["has_employment_restrictions"] = json!(true);
        body["owners"][1]["employment_restriction_details"] = json!("Nur Gastronomie");
        let (s, b) = post_json(&app, &key, &body).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let (s, g) = json(app.get(&format!("{PATH}/{id}"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{g}");
        let g = &g["response"];
        assert_eq!(g["authorized_representative"], json!({"first_name": "Jonas", "last_name": "Weber"}));
        assert_eq!(g["main_establishment"]["country"], "DE", "canonical code");
        assert_eq!(g["main_establishment"]["phone"], "+49 69 123456");
        assert_eq!(g["previous_business"], json!({"name": "Café Gabler, Inh. Erika Gabler e. K."}));
        assert_eq!(g["craft_card"], body["craft_card"]);
        assert_eq!(g["owners"][1]["other_nationalities"], json!(["TR"]));
        let company = g["company_id"].as_str().unwrap();
        let (_, c) = json(app.get(&format!("/v1/companies/{company}"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(c["response"]["business_address"]["city"], "Frankfurt am Main", "{c}");
        assert_eq!(g["owners"][1]["employment_restriction_details"], "Nur Gastronomie");
        assert!(g["owners"][0].get("other_nationalities").is_none());
        let docs = g["documents"].as_array().unwrap();
        let form = docs.iter()
            .find(|d| d["type"] == "trade-licence-application" && d["name"].as_str().unwrap().contains("Łukasiewicz"))
            .unwrap();
        let (s, _, pdf) = download(&app, form["download_url"].as_str().unwrap()).await;
        assert_eq!(s, 200);
        let text = pdf_text(&pdf);
        for want in [
            "Weber, Jonas", "Kaiserstraße 12", "+49 69 123456", "Café Gabler, Inh. Erika Gabler e. K.",
            "30.09.2024, Handwerkskammer Berlin", "ukrainisch, türkisch", "Nur Gastronomie",
        ] {
            assert!(text.contains(want), "{want:?} not in the GewA 1:\n{text}");
        }

        // The register court, named by its place, is stored and returned in its canonical form.
        let mut body = example("self");
        body["registration_court"] = json!("charlottenburg");
        let (s, b) = post_json(&app, &key, &body).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let (_, g) = json(app.get(&format!("{PATH}/{id}"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(g["response"]["registration_court"], "Amtsgericht Charlottenburg");
        assert_eq!(g["response"]["registration_number"], "HRB 245789 B");
    }

    async fn gewa1_field_rules_are_reported_together(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut body = example("self");
        body["registration_court"] = json!("Amtsgericht Gotham");
        body["previous_business"] = json!({"name": "Alt GmbH"});
        body["craft_card"] = json!({"held": true});
        body["authorized_representative"] = json!({"first_name": "Jonas", "last_name": "Weber"});
        body["owners"][0]["other_nationalities"] = json!(["TR", "AQ", "DE"]);
        body["owners"][0]["has_employment_restrictions"] = json!(true);
        let (s, b) = post_json(&app, &key, &body).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let found: Vec<(&str, &str)> = r["errors"].as_array().unwrap().iter()
            .map(|e| (e["field"].as_str().unwrap(), e["code"].as_str().unwrap()))
            .collect();
        for want in [
            ("registration_court", "unknown_register_court"),
            ("previous_business", "not_allowed"),
            ("craft_card", "not_allowed"),
            ("craft_card.issue_date", "required"),
            ("craft_card.chamber", "required"),
            ("authorized_representative", "not_allowed"),
            ("owners[0].other_nationalities[0]", "duplicate"),
            ("owners[0].other_nationalities[1]", "no_nationality"),
            ("owners[0].employment_restriction_details", "required"),
            ("owners[0].residence_permit", "not_allowed"),
            ("owners[0].has_employment_restrictions", "not_allowed"),
        ] {
            assert!(found.contains(&want), "{want:?} not in {found:?}");
        }
        assert_eq!(found.len(), 11, "{found:?}");
    }

    async fn register_courts_are_listed(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (s, b) = json(app.get("/v1/register-courts", Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let courts = b["response"]["courts"].as_array().unwrap();
        assert_eq!(courts.len(), domain::register_court::all().len());
        let charlottenburg = courts.iter().find(|c| c["place"] == "Charlottenburg").unwrap();
        assert_eq!(charlottenburg["name"], "Amtsgericht Charlottenburg");
        assert_eq!(charlottenburg["land"], "BE");
        // Each listed name is accepted by a create.
        for c in courts.iter().step_by(20) {
            let mut body = example("self");
            body["registration_court"] = c["name"].clone();
            let (s, b) = post_json(&app, &key, &body).await;
            assert_eq!(s, 201, "{c}: {b}");
        }
    }

    async fn companies_404_and_409(backend) {
        let app = app(backend).await;
        let (provider, key) = app.provider("P").await;
        let (other_provider, _) = app.provider("Q").await;
        let (first, b) = post_json(&app, &key, &example("self")).await;
        assert_eq!(first, 201, "{b}");
        let company = b["response"]["company_id"].as_str().unwrap().to_string();

        let mut body = example("self");
        body["company_id"] = json!(company);
        let (s, b) = post_json(&app, &key, &body).await;
        assert_error(s, &b, 409, "COMPANY_ALREADY_REGISTERED");

        body["company_id"] = json!(uuid::Uuid::new_v4());
        let (s, b) = post_json(&app, &key, &body).await;
        assert_error(s, &b, 404, "COMPANY_NOT_FOUND");
        let (foreign, _) = app.client_company(other_provider, "Foreign").await;
        body["company_id"] = json!(foreign);
        let (s, b) = post_json(&app, &key, &body).await;
        assert_error(s, &b, 404, "COMPANY_NOT_FOUND");

        // An existing client company of the provider (production) takes its registration.
        let (mine, _) = app.client_company_like(provider, &body).await;
        body["company_id"] = json!(mine);
        body["environment"] = json!("sandbox");
        let (s, b) = post_json(&app, &key, &body).await;
        assert_error(s, &b, 409, "ENVIRONMENT_MISMATCH");
        body["environment"] = json!("production");

        // The name and legal form the request repeats must be the company's: the form prints
        // the request's, reads show the company's. Nothing is written while they differ.
        for (edits, fields) in [
            (vec![("/name", json!("Andere Software GmbH"))], vec!["name"]),
            (vec![("/legal_form", json!("other"))], vec!["legal_form"]),
            (
                vec![("/name", json!("Andere Software AG")), ("/legal_form", json!("ag"))],
                vec!["name", "legal_form"],
            ),
        ] {
            let mut wrong = body.clone();
            for (pointer, value) in edits {
                domain::rule_cases::edit(&mut wrong, pointer, Some(value));
            }
            let (s, b) = post_json(&app, &key, &wrong).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            let got: Vec<(&str, &str)> = r["errors"].as_array().unwrap().iter().map(|e| (e["field"].as_str().unwrap(), e["code"].as_str().unwrap())).collect();
            let want: Vec<(&str, &str)> = fields.iter().map(|f| (*f, "company_mismatch")).collect();
            assert_eq!(got, want, "{r}");
        }
        // White space runs compare as one.
        body["name"] = json!("Mustermann  Software GmbH");
        let (s, b) = post_json(&app, &key, &body).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["response"]["company_id"], mine.to_string());
        let id = b["response"]["trade_registration_id"].as_str().unwrap();
        let (_, g) = json(app.get(&format!("{PATH}/{id}"), Some(&key)).send().await.unwrap()).await;
        let case = &g["response"];
        assert_eq!((case["name"].as_str(), case["legal_form"].as_str()), (Some("Mustermann Software GmbH"), Some("gmbh")), "{case}");
    }

    async fn documents_are_stored_by_kind_and_month_not_in_a_folder_per_case(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut stored = Vec::new();
        for _ in 0..2 {
            let (s, b) = post_json(&app, &key, &example("self")).await;
            assert_eq!(s, 201, "{b}");
            let r = &b["response"];
            let at = time::OffsetDateTime::parse(r["timestamp"].as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap();
            let doc = r["owners"][0]["documents"]["gewa_1"]["id"].as_str().unwrap();
            stored.push(format!("trade/{:04}-{:02}/{doc}.pdf", at.year(), u8::from(at.month())));
        }
        let root = app.dir.path().join("data/documents");
        let mut found: Vec<String> = common::files_below(&root)
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().to_string_lossy().into_owned())
            .collect();
        found.sort();
        stored.sort();
        assert_eq!(found, stored);
    }

    async fn concurrent_creates_for_one_company_yield_one(backend) {
        let app = app(backend).await;
        let (provider, key) = app.provider("P").await;
        let (company, _) = app.client_company_like(provider, &example("self")).await;
        let mut body = example("self");
        body["company_id"] = json!(company);
        let requests: Vec<_> = (0..6).map(|_| app.post(PATH, Some(&key)).json(&body).send()).collect();
        let results = futures::future::join_all(requests).await;
        let mut created = 0;
        for r in results {
            let (s, b) = json(r.unwrap()).await;
            if s == 201 {
                created += 1;
            } else {
                assert_error(s, &b, 409, "COMPANY_ALREADY_REGISTERED");
            }
        }
        assert_eq!(created, 1);
        // Only the winner's document is on disk: the losers removed theirs.
        assert_eq!(files_in(&app.dir.path().join("data/documents")), 1);
    }

    async fn a_branch_of_a_named_company_prints_its_main_office(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        // The company comes from its tax registration, whose seat is its main office.
        let mut tax = example("gmbh");
        tax["business_address"] = json!({"street": "Unter den Linden 77", "street_second_line": "Aufgang B", "zip": "10117", "city": "Berlin", "country": "DE"});
        let res = app.post("/v1/tax-registration", Some(&key)).json(&tax).send().await.unwrap();
        let (s, t) = json(res).await;
        assert_eq!(s, 201, "{t}");
        let company = t["response"]["company_id"].clone();

        // A branch in Hamburg of that company: no business_address is allowed with company_id,
        // so field 16 (Hauptniederlassung) takes the company's stored address.
        let mut body = example("self");
        body["company_id"] = company;
        body["environment"] = tax["environment"].clone();
        body["establishment_type"] = json!("branch-office");
        body["registered_office"] = json!({"street": "Hafenstraße 5", "zip": "20457", "city": "Hamburg"});
        let (s, b) = post_json(&app, &key, &body).await;
        assert_eq!(s, 201, "{b}");
        let (_, _, pdf) = download(&app, b["response"]["owners"][0]["documents"]["gewa_1"]["download_url"].as_str().unwrap()).await;
        let text = pdf_text(&pdf);
        for want in ["Hafenstraße 5", "Unter den Linden 77", "Aufgang B", "10117 Berlin"] {
            assert!(text.contains(want), "{want:?} not in the GewA 1:\n{text}");
        }
        // Without company_id a branch must send it (`business_address` in the rule table).
    }

    async fn both_sides_may_read_nobody_else(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (_, other) = app.provider("Q").await;
        let (s, b) = post_json(&app, &key, &example("self")).await;
        assert_eq!(s, 201);
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let company = b["response"]["company_id"].as_str().unwrap().to_string();
        let (s, k) = json(app.post(&format!("/v1/companies/{company}/api-keys"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 201);
        let client_key = k["response"]["api_key"].as_str().unwrap().to_string();

        let (s, g) = json(app.get(&format!("{PATH}/{id}"), Some(&client_key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{g}");
        let (s, b) = json(app.get(&format!("{PATH}/{id}"), Some(&other)).send().await.unwrap()).await;
        assert_error(s, &b, 404, "NOT_FOUND");
        for bad in ["not-a-uuid", "00000000-0000-0000-0000-000000000000", "%00"] {
            let (s, b) = json(app.get(&format!("{PATH}/{bad}"), Some(&key)).send().await.unwrap()).await;
            assert_error(s, &b, 404, "NOT_FOUND");
        }
        // A client company cannot create cases.
        let (s, b) = post_json(&app, &client_key, &example("self")).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let (s, b) = json(app.post(PATH, None).json(&example("self")).send().await.unwrap()).await;
        assert_error(s, &b, 401, "UNAUTHORIZED");
    }

    async fn download_links_expire_and_resist_tampering(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (_, b) = post_json(&app, &key, &example("self")).await;
        let url = b["response"]["owners"][0]["documents"]["gewa_1"]["download_url"].as_str().unwrap().to_string();
        let doc_id: uuid::Uuid = b["response"]["owners"][0]["documents"]["gewa_1"]["id"].as_str().unwrap().parse().unwrap();
        assert!(url.starts_with(&app.base), "absolute link on the public URL: {url}");
        let (s, _, _) = download(&app, &url).await;
        assert_eq!(s, 200);

        let tampered = if url.ends_with('A') { format!("{}B", &url[..url.len() - 1]) } else { format!("{}A", &url[..url.len() - 1]) };
        let expired = app.state.links.url(doc_id, time::OffsetDateTime::now_utc().unix_timestamp() - 25 * 3600);
        let other_doc = url.replace(&doc_id.to_string(), &uuid::Uuid::now_v7().to_string());
        let bare = url.split('?').next().unwrap().to_string();
        let longer = url.replace("expires=", "expires=9");
        let twice = format!("{url}&signature=x");
        for bad in [tampered, expired, other_doc, bare, longer, twice] {
            let res = app.client.get(&bad).send().await.unwrap();
            let (s, b) = json(res).await;
            assert_error(s, &b, 403, "INVALID_DOWNLOAD_LINK");
        }
    }

    async fn uploads_must_be_referenced_pdfs(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut data = example("self");
        data["owners"][0]["documents"] = json!({"gewa_1": {"file": "signed"}});
        data["owners"][0]["signatures"].as_object_mut().unwrap().remove("gewa_1");

        let cases: Vec<(Files, &str, &str)> = vec![
            (vec![("signed", b"%PDF-1.7 but not really a PDF".to_vec())], "owners[0].documents.gewa_1.file", "not_a_pdf"),
            (vec![("signed", b"GIF89a".to_vec())], "owners[0].documents.gewa_1.file", "not_a_pdf"),
            (vec![], "owners[0].documents.gewa_1.file", "missing_file"),
            (vec![("signed", signed_pdf()), ("stray", signed_pdf())], "stray", "unexpected_file"),
        ];
        for (files, field, code) in cases {
            let res = app.post(PATH, Some(&key)).multipart(multipart(&data, files)).send().await.unwrap();
            let (s, b) = json(res).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            let found: Vec<(String, String)> = r["errors"].as_array().unwrap().iter()
                .map(|e| (e["field"].as_str().unwrap().to_string(), e["code"].as_str().unwrap().to_string()))
                .collect();
            assert!(found.contains(&(field.to_string(), code.to_string())), "{found:?}");
        }
        // A JSON body cannot carry the file.
        let (s, b) = post_json(&app, &key, &data).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["code"], "missing_file");

        // Broken multipart bodies.
        let no_data = Form::new().part("signed", Part::bytes(signed_pdf()));
        let (s, b) = json(app.post(PATH, Some(&key)).multipart(no_data).send().await.unwrap()).await;
        assert_error(s, &b, 400, "INVALID_MULTIPART");
        let (s, b) = json(app.post(PATH, Some(&key)).header("content-type", "multipart/form-data; boundary=xyz").body("--xyz\r\ngarbage").send().await.unwrap()).await;
        assert_error(s, &b, 400, "INVALID_MULTIPART");
        let (s, b) = json(app.post(PATH, Some(&key)).header("content-type", "multipart/form-data").body("x").send().await.unwrap()).await;
        assert_error(s, &b, 400, "INVALID_MULTIPART");
        let bad_json = Form::new().text("data", "{\"package\": ");
        let (s, b) = json(app.post(PATH, Some(&key)).multipart(bad_json).send().await.unwrap()).await;
        assert_error(s, &b, 400, "INVALID_JSON");
        let (s, b) = json(app.post(PATH, Some(&key)).header("content-type", "text/plain").body("hello").send().await.unwrap()).await;
        assert_error(s, &b, 415, "UNSUPPORTED_MEDIA_TYPE");
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let (s, b) = json(app.post(PATH, Some(&key)).header("content-type", "application/json").body(deep.clone()).send().await.unwrap()).await;
        assert_error(s, &b, 400, "INVALID_JSON");
        let (s, b) = json(app.post(PATH, Some(&key)).multipart(Form::new().text("data", deep)).send().await.unwrap()).await;
        assert_error(s, &b, 400, "INVALID_JSON");
        let (s, b) = json(app.post(PATH, Some(&key)).json(&json!([1, 2])).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["field"], "body");
        assert_eq!(files_in(&app.dir.path().join("data/documents")), 0);
    }

    async fn oversized_uploads_and_bodies_are_413(backend) {
        let app = TestApp::spawn_with(backend, Options {
            tweak: Box::new(|c| { c.max_upload_bytes = 50_000; c.max_body_bytes = 20_000; }),
            ..Default::default()
        }).await.unwrap();
        let (_, key) = app.provider("P").await;
        let mut data = example("self");
        data["owners"][0]["documents"] = json!({"gewa_1": {"file": "signed"}});
        data["owners"][0]["signatures"].as_object_mut().unwrap().remove("gewa_1");
        let mut big = b"%PDF-1.7\n".to_vec();
        big.resize(60_000, b' ');
        let (s, b) = json(app.post(PATH, Some(&key)).multipart(multipart(&data, vec![("signed", big)])).send().await.unwrap()).await;
        assert_error(s, &b, 413, "PAYLOAD_TOO_LARGE");
        let mut huge = example("self");
        huge["purpose"] = Value::from("x".repeat(30_000));
        let (s, b) = post_json(&app, &key, &huge).await;
        assert_error(s, &b, 413, "PAYLOAD_TOO_LARGE");
        assert_eq!(files_in(&app.dir.path().join("data/documents")), 0);
    }
}

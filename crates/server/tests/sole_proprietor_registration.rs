//! `POST /v1/tax-registration/sole-proprietor` and reading it back with
//! `GET /v1/tax-registration/{id}`, through HTTP against SQLite and PostgreSQL: the office of
//! the residence (§ 19 AO), the stored FsE_EUn XML checked with libxml2 and xmllint, the
//! summary read back, every rule a 422, and the link with the owner's trade registration in
//! both directions.

mod common;

use common::case_document as doc;
use common::{TestApp, assert_error, download, json, pdf_text};
use common::{app, tax_case as get};
use domain::rule_cases::{example, sole_proprietor_cases};
use serde_json::{Value, json};

const PATH: &str = "/v1/tax-registration/sole-proprietor";

async fn post(app: &TestApp, key: &str, body: &Value) -> (u16, Value) {
    app.post_json(PATH, key, body).await
}

fn assert_valid_eun(xml: &[u8]) {
    common::assert_valid_elster_xml(xml, "elster-v11-fse-eun.xsd");
}

fn violations(status: u16, body: &Value) -> Vec<(String, String)> {
    common::field_codes(&assert_error(status, body, 422, "VALIDATION_FAILED"))
}

/// A sole trader's trade registration (the `self` example as an Einzelunternehmen).
fn sole_trade() -> Value {
    let mut body = example("self");
    body["legal_form"] = json!("einzelunternehmen");
    body["name"] = json!("Erikas Softwareschmiede");
    body["environment"] = json!("sandbox");
    let o = body.as_object_mut().unwrap();
    o.remove("registration_number");
    o.remove("registration_court");
    body
}

/// What a sole proprietor's request sends beside a trade registration: the OpenAPI example,
/// naming `trade_id`.
fn beside_trade(trade_id: &str) -> Value {
    let mut body = server::openapi::examples::sole_proprietor_from_trade_registration();
    body["trade_registration_id"] = json!(trade_id);
    body
}

backend_tests! {
    async fn a_trader_gets_the_office_of_the_residence_and_a_valid_eun_xml(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (s, b) = post(&app, &key, &example("sole-trader")).await;
        assert_eq!(s, 201, "{b}");
        let r = &b["response"];
        assert_eq!(r["status"], "validated");
        let id = r["tax_registration_id"].as_str().unwrap().to_string();
        let case = get(&app, &key, &id).await;
        assert_eq!(case["legal_form"], "einzelunternehmen");
        assert_eq!(case["environment"], "production");
        // Lüneburg: the register's office, by the rule for a natural person (§ 19 AO).
        assert_eq!(case["tax_office"]["number"], "2333");
        assert!(case.get("tax_office_determination").is_none());
        let basis = &case["tax_office"]["basis"];
        assert!(basis["summary"].as_str().unwrap().contains("§ 19"), "{basis}");
        let reg = &case["registration"];
        assert_eq!(reg["activity_kind"], "trade");
        assert_eq!(reg["owner"]["last_name"], "Yılmaz");
        assert_eq!(reg["owner"]["religion"], "11");
        assert_eq!(reg["vat"]["small_business"], true);
        assert!(reg.get("directors").is_none() && reg.get("partners").is_none());

        let xml = download(&app, doc(&case, "tax-registration-xml").expect("xml")).await;
        assert_valid_eun(&xml);
        let text = String::from_utf8(xml).unwrap();
        for want in [
            "<DatenArt>EUn</DatenArt>",
            "<FsE_EUn xmlns=\"http://finkonsens.de/elster/elsterfse/eun/v202401\" version=\"202401\">",
            "<FragebogenTyp>AUFNTAET</FragebogenTyp>",
            "<Empfaenger id=\"F\">2333</Empfaenger>",
            "<Name>Yilmaz</Name>",
            "<EinkGewBetr>",
            "<KleinUnternUSt>true</KleinUnternUSt>",
            "<HerstellerID>40417</HerstellerID>",
        ] {
            assert!(text.contains(want), "{want} missing in\n{text}");
        }
        assert!(!text.contains("Testmerker") && !text.contains("FolgeJahrA"), "production; the loss left out");
        // What the XML leaves out is listed for the operator.
        let manual = case["elster_xml"]["not_in_xml"].as_array().expect("not_in_xml");
        let fields: Vec<&str> = manual.iter().map(|m| m["field"].as_str().unwrap()).collect();
        for want in ["owner.tax_identification_number", "owner.marital_status", "name", "financial_estimates.following_year.profit_amount"] {
            assert!(fields.contains(&want), "{want}: {fields:?}");
        }

        let pdf = pdf_text(&download(&app, doc(&case, "tax-registration-summary").expect("summary")).await);
        for want in ["Einzelunternehmen (Gewerbebetrieb)", "Inhaber/in", "Emre Yılmaz", "nicht kirchensteuerpflichtig", "Unterschrift Inhaber/in"] {
            assert!(pdf.contains(want), "{want}: {pdf}");
        }
        // The company was created as an Einzelunternehmen.
        let company = r["company_id"].as_str().unwrap();
        let (_, c) = json(app.get(&format!("/v1/companies/{company}"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(c["response"]["legal_form"], "einzelunternehmen");
        // A second tax registration of the company is refused as for every kind.
        let mut again = example("sole-trader");
        again["company_id"] = json!(company);
        let (s, b) = post(&app, &key, &again).await;
        assert_error(s, &b, 409, "COMPANY_ALREADY_REGISTERED");
    }

    async fn a_freelancer_in_koeln_waits_for_the_office_and_follows_the_lifecycle(backend) {
        let app = app(backend).await;
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let (s, b) = post(&app, &pkey, &example("sole-proprietor")).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        let case = get(&app, &pkey, &id).await;
        assert_eq!(case["environment"], "sandbox");
        // Köln has several offices: none is guessed.
        assert!(case.get("tax_office").is_none());
        assert_eq!(case["tax_office_determination"]["status"], "needs_confirmation");
        assert!(doc(&case, "tax-registration-xml").is_none());
        assert_eq!(case["registration"]["spouse"]["first_name"], "Jonas");
        assert_eq!(case["registration"]["cash_accounting_reason"], "liberal-profession");

        let (s, g) = json(app.post(&format!("/v1/operator/tax-registrations/{id}/tax-office"), Some(&okey))
            .json(&json!({"tax_office_number": "5215"})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{g}");
        let case = g["response"].clone();
        let xml = download(&app, doc(&case, "tax-registration-xml").expect("xml written")).await;
        assert_valid_eun(&xml);
        let text = String::from_utf8(xml).unwrap();
        for want in [
            "<Testmerker>700000004</Testmerker>",
            "<Empfaenger id=\"F\">5215</Empfaenger>",
            "<EinkSelbst>",
            "<IstVerstUStGrundFreierBeruf>true</IstVerstUStGrundFreierBeruf>",
            "<EntsprichtWohnanschrift>true</EntsprichtWohnanschrift>",
            "<VoranmeldungMonatlich>true</VoranmeldungMonatlich>",
        ] {
            assert!(text.contains(want), "{want} missing in\n{text}");
        }
        assert!(!text.contains("Ehegatte") && !text.contains("BankKonto"));
        let pdf = pdf_text(&download(&app, doc(&case, "tax-registration-summary").unwrap()).await);
        for want in ["freiberufliche Tätigkeit", "Jonas Vogt", "Einkünfte aus nichtselbständiger Arbeit", "MUSTER"] {
            assert!(pdf.contains(want), "{want}: {pdf}");
        }

        // The lifecycle of every tax registration.
        let go = |body: Value| app.post(&format!("/v1/operator/tax-registrations/{id}/transition"), Some(&okey)).json(&body).send();
        for body in [json!({"status": "submitted"}), json!({"status": "completed", "tax_number": "215/5815/0816"})] {
            let (s, b) = json(go(body.clone()).await.unwrap()).await;
            assert_eq!(s, 200, "{body}: {b}");
        }
        let case = get(&app, &pkey, &id).await;
        assert_eq!(case["status"], "completed");
        let (s, b) = json(go(json!({"status": "submitted"})).await.unwrap()).await;
        assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        // It is listed with the other tax registrations.
        let (_, list) = app.get_json("/v1/tax-registration?environment=sandbox", &pkey).await;
        let listed = list["response"]["tax_registrations"].as_array().or(list["response"]["cases"].as_array()).cloned().unwrap_or_default();
        assert!(listed.iter().any(|c| c["tax_registration_id"] == id.as_str() && c["legal_form"] == "einzelunternehmen"), "{list}");
    }

    async fn a_business_in_another_district_leaves_the_office_to_confirm(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut body = example("sole-trader");
        // Living in Lüneburg, working in Köln: the residence's office assesses income tax, the
        // business's VAT and the profit (§§ 18, 19, 21 AO).
        body["address"] = json!({"street": "Lindenstraße 24", "zip": "50674", "city": "Köln", "country": "DE"});
        let (s, b) = post(&app, &key, &body).await;
        assert_eq!(s, 201, "{b}");
        let case = get(&app, &key, b["response"]["tax_registration_id"].as_str().unwrap()).await;
        let d = &case["tax_office_determination"];
        assert_eq!(d["status"], "needs_confirmation", "{d}");
        assert_eq!(d["reasons"][0]["reason"], "business_in_another_district", "{d}");
        assert_eq!(d["reasons"][0]["residence_office"], "2333", "{d}");
        assert_eq!(d["suggestions"][0]["office"]["number"], "2333", "{d}");
        assert_eq!(d["suggestions"][0]["basis"], "register", "{d}");
        assert!(d["suggestions"].as_array().unwrap().iter().any(|s| s["basis"] == "business_office"), "{d}");
        assert!(case.get("tax_office").is_none());
    }

    async fn every_rule_is_a_422_naming_its_field(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let cases = sole_proprietor_cases();
        assert!(cases.len() > 80, "{} cases", cases.len());
        for case in cases {
            let (s, b) = post(&app, &key, &case.request()).await;
            let found = violations(s, &b);
            assert!(found.contains(&(case.field.to_string(), case.code.to_string())), "{} {} ({}): {found:?}", case.field, case.code, case.base);
        }
        // Several at once, and nothing written.
        let mut body = example("sole-proprietor");
        body["owner"]["religion"] = json!("99");
        body.as_object_mut().unwrap().remove("spouse");
        body["activity_kind"] = json!("hobby");
        let (s, b) = post(&app, &key, &body).await;
        let found = violations(s, &b);
        for want in [("owner.religion", "invalid_value"), ("spouse", "required"), ("activity_kind", "invalid_value")] {
            assert!(found.contains(&(want.0.to_string(), want.1.to_string())), "{want:?}: {found:?}");
        }
        let (_, list) = app.get_json("/v1/tax-registration?environment=sandbox", &key).await;
        assert!(!list.to_string().contains("einzelunternehmen"), "{list}");
    }

    async fn a_trade_registration_fills_the_person_and_both_cases_name_each_other(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (s, t) = app.post_json("/v1/trade-registration", &key, &sole_trade()).await;
        assert_eq!(s, 201, "{t}");
        let trade_id = t["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let company = t["response"]["company_id"].as_str().unwrap().to_string();

        // Another provider's trade registration is unknown here, and one of a GmbH is refused.
        let (_, other) = app.provider("Q").await;
        let (s, b) = post(&app, &other, &beside_trade(&trade_id)).await;
        assert_error(s, &b, 404, "NOT_FOUND");
        let (s, g) = app.post_json("/v1/trade-registration", &key, &example("self")).await;
        assert_eq!(s, 201, "{g}");
        let gmbh = g["response"]["trade_registration_id"].as_str().unwrap();
        let (s, b) = post(&app, &key, &beside_trade(gmbh)).await;
        assert!(violations(s, &b).contains(&("trade_registration_id".into(), "not_a_sole_trader".into())), "{b}");
        // Another environment is a conflict.
        let mut production = beside_trade(&trade_id);
        production["environment"] = json!("production");
        let (s, b) = post(&app, &key, &production).await;
        assert_error(s, &b, 409, "ENVIRONMENT_MISMATCH");

        let (s, b) = post(&app, &key, &beside_trade(&trade_id)).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["response"]["company_id"], company.as_str(), "the trade registration's company");
        let tax_id = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        let case = get(&app, &key, &tax_id).await;
        assert_eq!(case["environment"], "sandbox");
        let reg = &case["registration"];
        assert_eq!(reg["trade_registration_id"], trade_id.as_str());
        assert_eq!(reg["name"], "Erikas Softwareschmiede");
        assert_eq!(reg["activity_kind"], "trade");
        assert_eq!(reg["owner"]["first_name"], "Erika");
        assert_eq!(reg["owner"]["last_name"], "Mustermann");
        assert_eq!(reg["owner"]["birth_name"], "Gabler");
        assert_eq!(reg["owner"]["dob"], "1984-08-12");
        assert_eq!(reg["owner"]["salutation"], "ms");
        assert_eq!(reg["owner"]["address"]["city"], "Köln");
        assert_eq!(reg["address"]["city"], "Berlin", "the establishment");
        assert_eq!(reg["operational_activity_start_date"], "2025-04-01");
        assert!(reg["purpose"].as_str().unwrap().starts_with("Entwicklung und Vertrieb von Software"));

        // And the trade registration names the tax registration.
        let (s, t) = app.get_json(&format!("/v1/trade-registration/{trade_id}"), &key).await;
        assert_eq!(s, 200, "{t}");
        assert_eq!(t["response"]["tax_registration_id"], tax_id.as_str(), "{t}");
        // A GmbH's trade registration names none.
        let (_, g) = app.get_json(&format!("/v1/trade-registration/{gmbh}"), &key).await;
        assert!(g["response"].get("tax_registration_id").is_none(), "{g}");
    }

    async fn the_envelope_of_every_tax_create(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        // Operators and callers without a key do not create.
        let (s, b) = post(&app, &okey, &example("sole-trader")).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let (s, b) = json(app.post(PATH, None).json(&example("sole-trader")).send().await.unwrap()).await;
        assert_error(s, &b, 401, "UNAUTHORIZED");
        // An idempotent retry replays; another body with the same key is refused.
        let mut fresh = example("sole-trader");
        fresh["tax_registration_id"] = json!(uuid::Uuid::new_v4());
        let send = |body: &Value| app.post(PATH, Some(&key)).header("idempotency-key", "sole-1").json(body).send();
        let (s1, b1) = json(send(&fresh).await.unwrap()).await;
        assert_eq!(s1, 201, "{b1}");
        let (s2, b2) = json(send(&fresh).await.unwrap()).await;
        assert_eq!((s2, &b2), (201, &b1));
        fresh["name"] = json!("Andere Werkstatt");
        let (s, b) = json(send(&fresh).await.unwrap()).await;
        assert_error(s, &b, 422, "IDEMPOTENCY_KEY_REUSED");
        // The caller's own id again, without the key: DUPLICATE_ID.
        let mut again = example("sole-trader");
        again["tax_registration_id"] = b1["response"]["tax_registration_id"].clone();
        let (s, b) = post(&app, &key, &again).await;
        assert_error(s, &b, 409, "DUPLICATE_ID");
        // The provider cancels it like any tax registration; the company may file again.
        let id = b1["response"]["tax_registration_id"].as_str().unwrap();
        let (s, c) = json(app.post(&format!("/v1/tax-registration/{id}/cancel"), Some(&key)).json(&json!({"reason": "falsch angelegt"})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{c}");
        assert_eq!(get(&app, &key, id).await["status"], "cancelled");
        // A company's payload is no sole proprietor's, all at once, and the reverse.
        let (s, b) = post(&app, &key, &example("gmbh")).await;
        let found = violations(s, &b);
        for (field, code) in [("legal_form", "invalid_value"), ("capital", "unknown_field"), ("directors", "unknown_field"), ("owner", "required"), ("activity_kind", "required")] {
            assert!(found.contains(&(field.to_string(), code.to_string())), "{field} {code}: {found:?}");
        }
        let (s, b) = json(app.post("/v1/tax-registration/gbr", Some(&key)).json(&example("sole-trader")).send().await.unwrap()).await;
        let found = violations(s, &b);
        assert!(found.contains(&("owner".to_string(), "unknown_field".to_string())), "{found:?}");
    }
}

//! `POST /v1/tax-registration/gbr` (GbR, eGbR) and reading it back with
//! `GET /v1/tax-registration/{id}`, through HTTP against SQLite and PostgreSQL; the stored
//! FsE_PersG XML checked with libxml2 and with xmllint, the summary read back.

mod common;

use common::case_document as doc;
use common::{Backend, TestApp, assert_error, download, json, pdf_text};
use common::{app, tax_case as get};
use domain::rule_cases::{edit, example, gbr_cases};
use serde_json::{Value, json};

const PATH: &str = "/v1/tax-registration/gbr";

async fn post(app: &TestApp, key: &str, body: &Value) -> (u16, Value) {
    app.post_json(PATH, key, body).await
}

/// Valid for the partnership's schemas, with libxml2 and with xmllint.
fn assert_valid_persg(xml: &[u8]) {
    common::assert_valid_elster_xml(xml, "elster-v11-fse-persg.xsd");
}

/// The (field, code) pairs of a 422.
fn violations(status: u16, body: &Value) -> Vec<(String, String)> {
    common::field_codes(&assert_error(status, body, 422, "VALIDATION_FAILED"))
}

fn has(found: &[(String, String)], field: &str, code: &str) -> bool {
    found.contains(&(field.to_string(), code.to_string()))
}

/// The GbR example with `n` individual partners whose shares sum to exactly 100.
fn with_partners(n: usize) -> Value {
    let mut body = example("gbr");
    let person = body["partners"]["individuals"][1].clone();
    let each = 1_000_000 / n as u32;
    let first = 1_000_000 - each * (n as u32 - 1);
    let people: Vec<Value> = (0..n)
        .map(|i| {
            let mut p = person.clone();
            let share = domain::tax::Percentage(if i == 0 { first } else { each });
            p["share_percentage"] = serde_json::from_str(&share.to_decimal_string()).unwrap();
            p["is_managing_partner"] = json!(i == 0);
            p
        })
        .collect();
    body["partners"] = json!({ "individuals": people });
    body
}

backend_tests! {
    async fn gbr_gets_its_office_determined_and_a_valid_persg_xml(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (s, b) = post(&app, &key, &example("gbr")).await;
        assert_eq!(s, 201, "{b}");
        let r = &b["response"];
        assert_eq!(r["result"], "success");
        assert_eq!(r["status"], "validated");
        assert!(r["message"].as_str().unwrap().contains("awaiting manual submission"));
        let id = r["tax_registration_id"].as_str().unwrap().to_string();

        let case = get(&app, &key, &id).await;
        assert_eq!(case["legal_form"], "gbr");
        assert_eq!(case["package"], "guided");
        assert_eq!(case["environment"], "production");
        assert_eq!(case["company_id"], r["company_id"]);
        assert_eq!(case["tax_office"]["number"], "2333");
        let reg = &case["registration"];
        assert_eq!(reg["partnership_agreement_date"], "2025-04-01");
        assert_eq!(reg["partners"]["individuals"].as_array().unwrap().len(), 3);
        let shares: Vec<f64> = reg["partners"]["individuals"].as_array().unwrap().iter()
            .map(|p| p["share_percentage"].as_f64().unwrap()).collect();
        assert_eq!(shares, [33.33, 33.33, 33.34]);
        assert_eq!(reg["partners"]["individuals"][2]["is_managing_partner"], false);
        assert!(reg.get("company_register").is_none());
        assert!(reg.get("capital").is_none() && reg.get("directors").is_none());
        assert_eq!(reg["vat"]["small_business"], true);
        let history: Vec<&str> = case["status_history"].as_array().unwrap().iter()
            .map(|h| h["status"].as_str().unwrap()).collect();
        assert_eq!(history, ["validated"]);

        let xml = download(&app, doc(&case, "tax-registration-xml").expect("xml")).await;
        assert_valid_persg(&xml);
        let text = String::from_utf8(xml).unwrap();
        for want in [
            "<DatenArt>PersG</DatenArt>",
            "<FsE_PersG xmlns=\"http://finkonsens.de/elster/elsterfse/persg/v202401\" version=\"202401\">",
            "<Empfaenger id=\"F\">2333</Empfaenger>",
            "<Firmenname>Heide &amp; Partner Hofladen GbR</Firmenname>",
            "<RechtsformId>GbR</RechtsformId>",
            "<ProzentAnteil>33.3400</ProzentAnteil>",
            "<HerstellerID>40417</HerstellerID>",
            "<MerkerGeschaeftsfuehrung>false</MerkerGeschaeftsfuehrung>",
            "<KleinUnternUSt>true</KleinUnternUSt>",
        ] {
            assert!(text.contains(want), "{want} missing in\n{text}");
        }
        assert_eq!(text.matches("<Beteiligter>").count(), 3);
        assert!(!text.contains("Testmerker"), "production is no test case");
        assert!(!text.contains("FsE_KapG") && !text.contains("Anteilseigner"));

        let pdf = download(&app, doc(&case, "tax-registration-summary").expect("summary")).await;
        let text = pdf_text(&pdf);
        assert!(text.contains("Heide & Partner Hofladen GbR"), "{text}");
        assert!(text.contains("Personengesellschaft (GbR)"), "{text}");
        assert!(text.contains("Geschäftsführung und Vertretung: nein"), "{text}");

        // The client company was created as a GbR.
        let (s, c) = json(app.get(&format!("/v1/companies/{}", r["company_id"].as_str().unwrap()), Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{c}");
        assert_eq!(c["response"]["legal_form"], "gbr");
        assert_eq!(c["response"]["name"], "Heide & Partner Hofladen GbR");
    }

    async fn egbr_with_a_sent_office_is_a_sandbox_test_case(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut body = example("egbr");
        body["tax_office_number"] = json!("5215");
        let (s, b) = post(&app, &key, &body).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        let case = get(&app, &key, &id).await;
        assert_eq!(case["legal_form"], "egbr");
        assert_eq!(case["environment"], "sandbox");
        assert_eq!(case["tax_office"]["number"], "5215");
        let reg = &case["registration"];
        assert_eq!(reg["company_register"]["status"], "registered");
        assert_eq!(reg["company_register"]["registration_number"], "1234", "GsR dropped");
        assert_eq!(reg["partners"]["entities"][0]["name"], "Rhein Verwaltungs GmbH");
        assert_eq!(reg["payroll"]["employee_count"], 2);

        let xml = download(&app, doc(&case, "tax-registration-xml").expect("xml")).await;
        assert_valid_persg(&xml);
        let text = String::from_utf8(xml).unwrap();
        for want in [
            "<Testmerker>700000004</Testmerker>",
            "<Empfaenger id=\"F\">5215</Empfaenger>",
            "<RechtsformId>eGbR</RechtsformId>",
            // The operator's own id, as ELSTER asks for tests with a Testmerker too.
            "<HerstellerID>40417</HerstellerID>",
            "<GsrRegisterbezeichnung>GsR</GsrRegisterbezeichnung>",
            "<GsrRegisternummer>1234</GsrRegisternummer>",
            "<Firmenname>Rhein Verwaltungs GmbH</Firmenname>",
            "<AnzahlBeschaeftigteArbeitnehmer>2</AnzahlBeschaeftigteArbeitnehmer>",
            "<VoranmeldungMonatlich>true</VoranmeldungMonatlich>",
        ] {
            assert!(text.contains(want), "{want} missing in\n{text}");
        }
        let pdf = pdf_text(&download(&app, doc(&case, "tax-registration-summary").unwrap()).await);
        assert!(pdf.contains("GsR 1234"), "{pdf}");
        assert!(pdf.contains("MUSTER"), "sandbox summary carries the mark");

        let company = b["response"]["company_id"].as_str().unwrap();
        let (_, c) = json(app.get(&format!("/v1/companies/{company}"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(c["response"]["legal_form"], "egbr");
        assert_eq!(c["response"]["registration_number"], "1234");
    }

    async fn egbr_without_an_office_waits_for_the_operator_who_gets_a_persg_xml(backend) {
        let app = app(backend).await;
        let (_, pkey) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        // Köln has several general offices: the street decides, so none is guessed.
        let (s, b) = post(&app, &pkey, &example("egbr")).await;
        assert_eq!(s, 201, "{b}");
        assert!(b["response"]["message"].as_str().unwrap().contains("assignment of the tax office"));
        let id = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        let case = get(&app, &pkey, &id).await;
        assert!(case.get("tax_office").is_none());
        assert_eq!(case["tax_office_determination"]["status"], "needs_confirmation");
        assert!(doc(&case, "tax-registration-xml").is_none());
        assert!(doc(&case, "tax-registration-summary").is_some());

        // Operators see it in their list, assign the office and get the partnership's XML.
        let (_, list) = json(app.get("/v1/operator/tax-registrations?status=validated&environment=sandbox", Some(&okey)).send().await.unwrap()).await;
        assert!(list["response"]["cases"].as_array().unwrap().iter().any(|c| c["id"] == id.as_str()));
        let (s, g) = json(app.post(&format!("/v1/operator/tax-registrations/{id}/tax-office"), Some(&okey))
            .json(&json!({"tax_office_number": "5215"})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{g}");
        let case = g["response"].clone();
        assert_eq!(case["legal_form"], "egbr");
        assert_eq!(case["tax_office"]["number"], "5215");
        assert_eq!(case["registration"]["partners"]["entities"][0]["is_managing_partner"], true);
        let xml = download(&app, doc(&case, "tax-registration-xml").expect("xml written")).await;
        assert_valid_persg(&xml);
        let text = String::from_utf8(xml).unwrap();
        assert!(text.contains("<DatenArt>PersG</DatenArt>") && text.contains("<Empfaenger id=\"F\">5215</Empfaenger>"));
        let summary = pdf_text(&download(&app, doc(&case, "tax-registration-summary").unwrap()).await);
        assert!(summary.contains("Köln-Mitte"), "{summary}");

        // The same lifecycle as a UG's: submitted, rejected, resubmitted, completed.
        let go = |body: Value| app.post(&format!("/v1/operator/tax-registrations/{id}/transition"), Some(&okey)).json(&body).send();
        for body in [
            json!({"status": "submitted"}),
            json!({"status": "rejected", "reason": "Angaben zu den Beteiligten unvollständig"}),
            json!({"status": "submitted", "reason": "korrigiert"}),
            // Köln-Mitte's own form (NRW: FFF/BBBB/UUUP), stored in ELSTER's.
            json!({"status": "completed", "tax_number": "215/5815/0816"}),
        ] {
            let (s, b) = json(go(body.clone()).await.unwrap()).await;
            assert_eq!(s, 200, "{body}: {b}");
        }
        let case = get(&app, &pkey, &id).await;
        // The office assignment is an entry of its own that keeps the status (issue 39).
        let history: Vec<&str> = case["status_history"].as_array().unwrap().iter()
            .map(|h| h["status"].as_str().unwrap()).collect();
        assert_eq!(history, ["validated", "validated", "submitted", "rejected", "submitted", "completed"]);
        assert_eq!(case["status_history"][1]["changes"][0]["field"], "tax_office");
        assert_eq!(case["tax_number"], "5215058150816");
        let (s, b) = json(go(json!({"status": "submitted"})).await.unwrap()).await;
        assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
    }

    async fn every_rule_is_a_422_naming_its_field(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let cases = gbr_cases();
        assert!(cases.len() > 60, "{} cases", cases.len());
        for case in cases {
            let (s, b) = post(&app, &key, &case.request()).await;
            let found = violations(s, &b);
            assert!(has(&found, case.field, case.code), "{} {} ({}): {found:?}", case.field, case.code, case.base);
        }
    }

    async fn shares_partner_counts_managing_partners_and_the_register(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let set_shares = |a: f64, b: f64, c: f64| {
            let mut body = example("gbr");
            for (i, s) in [a, b, c].into_iter().enumerate() {
                body["partners"]["individuals"][i]["share_percentage"] = json!(s);
            }
            body
        };
        // Exact decimals: 33.33 + 33.33 + 33.34 is 100; 99.99 and 100.01 are not.
        let (s, b) = post(&app, &key, &set_shares(33.33, 33.33, 33.34)).await;
        assert_eq!(s, 201, "{b}");
        for (a, b_, c, sum) in [(33.33, 33.33, 33.33, "99.99"), (33.33, 33.33, 33.35, "100.01")] {
            let (s, b) = post(&app, &key, &set_shares(a, b_, c)).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            let e = r["errors"].as_array().unwrap().iter()
                .find(|e| e["code"] == "shares_do_not_sum_to_100").unwrap_or_else(|| panic!("{b}"));
            assert_eq!(e["field"], "partners");
            assert!(e["message"].as_str().unwrap().contains(sum), "{e}");
        }

        // 2 to 99 partners.
        let (s, b) = post(&app, &key, &with_partners(1)).await;
        assert!(has(&violations(s, &b), "partners", "too_few"));
        let (s, b) = post(&app, &key, &with_partners(100)).await;
        assert!(has(&violations(s, &b), "partners", "too_many"));
        let (s, b) = post(&app, &key, &with_partners(2)).await;
        assert_eq!(s, 201, "{b}");
        let (s, b) = post(&app, &key, &with_partners(99)).await;
        assert_eq!(s, 201, "{b}");
        let case = get(&app, &key, b["response"]["tax_registration_id"].as_str().unwrap()).await;
        let xml = download(&app, doc(&case, "tax-registration-xml").unwrap()).await;
        assert_valid_persg(&xml);
        assert_eq!(String::from_utf8(xml).unwrap().matches("<Beteiligter>").count(), 99);

        // At least one managing partner.
        let mut body = example("gbr");
        for i in 0..3 {
            body["partners"]["individuals"][i]["is_managing_partner"] = json!(false);
        }
        let (s, b) = post(&app, &key, &body).await;
        assert!(has(&violations(s, &b), "partners", "no_managing_partner"));

        // An eGbR needs its register; a GbR may not have one.
        let mut body = example("egbr");
        edit(&mut body, "/company_register", None);
        let (s, b) = post(&app, &key, &body).await;
        assert!(has(&violations(s, &b), "company_register", "required"));
        let mut body = example("gbr");
        body["company_register"] = example("egbr")["company_register"].clone();
        let (s, b) = post(&app, &key, &body).await;
        assert!(has(&violations(s, &b), "company_register", "not_allowed"));
    }

    // Ids are unique per provider (docs/adr/0006-case-ids-per-provider.md), across the UG/GmbH
    // and the GbR/eGbR creates: B's partnership may take the id of A's, both read back by
    // their own providers and client companies only, and an id of B's own is still 409
    // DUPLICATE_ID. Before, B got 409 DUPLICATE_ID.
    async fn another_providers_id_is_neither_visible_nor_in_the_way(backend) {
        let app = app(backend).await;
        let (_, a_key) = app.provider("A").await;
        let (b, b_key) = app.provider("B").await;
        let (_, okey) = app.operator("O").await;
        let id = uuid::Uuid::new_v4();
        let mut a_body = example("gbr");
        a_body["tax_registration_id"] = json!(id);
        let (s, r) = post(&app, &a_key, &a_body).await;
        assert_eq!(s, 201, "{r}");
        let a_company = r["response"]["company_id"].as_str().unwrap().to_string();
        // B names a client company of its own, whose key reads the case.
        let mut b_body = example("egbr");
        let (b_company, b_client) = app.client_company_like(b, &b_body).await;
        b_body.as_object_mut().unwrap().remove("business_address");
        b_body["environment"] = json!("production");
        b_body["company_id"] = json!(b_company);
        b_body["tax_registration_id"] = json!(id);
        let (s, r) = post(&app, &b_key, &b_body).await;
        assert_eq!(s, 201, "{r}");
        assert_eq!((r["response"]["tax_registration_id"].as_str(), r["response"]["company_id"].as_str()), (Some(id.to_string().as_str()), Some(b_company.to_string().as_str())));

        let seen = |case: &Value| (case["tax_registration_id"].as_str().unwrap().to_string(), case["company_id"].as_str().unwrap().to_string(), case["legal_form"].as_str().unwrap().to_string(), case["registration"]["name"].as_str().unwrap().to_string());
        let a_seen = (id.to_string(), a_company, "gbr".to_string(), a_body["name"].as_str().unwrap().to_string());
        let b_seen = (id.to_string(), b_company.to_string(), "egbr".to_string(), b_body["name"].as_str().unwrap().to_string());
        assert_ne!(a_seen.3, b_seen.3);
        for (key, want) in [(&a_key, &a_seen), (&b_key, &b_seen), (&b_client, &b_seen)] {
            assert_eq!(&seen(&get(&app, key, &id.to_string()).await), want);
        }
        // Another client company of B's does not see it.
        let (_, stranger) = app.client_company(b, "Stranger").await;
        let (s, r) = json(app.get(&format!("/v1/tax-registration/{id}"), Some(&stranger)).send().await.unwrap()).await;
        assert_error(s, &r, 404, "NOT_FOUND");

        // B's own id again: a duplicate, by either create; a fresh id is fine.
        let mut again = example("gbr");
        again["tax_registration_id"] = json!(id);
        let (s, r) = post(&app, &b_key, &again).await;
        assert_error(s, &r, 409, "DUPLICATE_ID");
        let mut ug = example("ug");
        ug["tax_registration_id"] = json!(id);
        let (s, r) = json(app.post("/v1/tax-registration", Some(&b_key)).json(&ug).send().await.unwrap()).await;
        assert_error(s, &r, 409, "DUPLICATE_ID");
        again["tax_registration_id"] = json!(uuid::Uuid::new_v4());
        let (s, r) = post(&app, &b_key, &again).await;
        assert_eq!(s, 201, "{r}");

        // The operator reads B's case by its key and sees the provider's id beside it.
        let (s, r) = json(app.get("/v1/operator/tax-registrations", Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{r}");
        let keys: Vec<String> = r["response"]["cases"].as_array().unwrap().iter().filter(|c| c["public_id"] == id.to_string()).map(|c| c["id"].as_str().unwrap().to_string()).collect();
        assert_eq!(keys.len(), 2, "{r}");
        for key in keys {
            let case = get(&app, &okey, &key).await;
            assert_eq!(case["case_id"], key.as_str());
            let want = if key == id.to_string() { &a_seen } else { &b_seen };
            assert_eq!(&seen(&case), want);
        }
    }

    async fn companies_ids_and_access(backend) {
        let app = app(backend).await;
        let (provider, key) = app.provider("P").await;
        let (other_provider, other_key) = app.provider("Q").await;
        let (company, client_key) = app.client_company_like(provider, &example("gbr")).await;
        let mut body = example("gbr");
        let id = uuid::Uuid::new_v4();
        common::create_with_company_and_id(&app, PATH, &key, &mut body, company, id).await;
        // A UG's registration for the partnership names another company than it is.
        let mut ug = example("ug");
        ug["company_id"] = json!(company);
        let (s, b) = json(app.post("/v1/tax-registration", Some(&key)).json(&ug).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let fields: Vec<(&str, &str)> = r["errors"].as_array().unwrap().iter().map(|e| (e["field"].as_str().unwrap(), e["code"].as_str().unwrap())).collect();
        assert_eq!(fields, [("name", "company_mismatch"), ("legal_form", "company_mismatch")], "{r}");
        let companies = (provider, other_provider);
        common::assert_other_companies_refused(&app, PATH, &key, &mut body, companies, id).await;

        // The provider and the client company read it; another provider and another client
        // company get 404; client keys cannot create (403); no key is 401.
        let case = get(&app, &client_key, &id.to_string()).await;
        assert_eq!(case["legal_form"], "gbr");
        get(&app, &key, &id.to_string()).await;
        let (s, b) = json(app.get(&format!("/v1/tax-registration/{id}"), Some(&other_key)).send().await.unwrap()).await;
        assert_error(s, &b, 404, "NOT_FOUND");
        let (_, stranger_key) = app.client_company(provider, "Stranger").await;
        let (s, b) = json(app.get(&format!("/v1/tax-registration/{id}"), Some(&stranger_key)).send().await.unwrap()).await;
        assert_error(s, &b, 404, "NOT_FOUND");
        let (s, b) = post(&app, &client_key, &example("gbr")).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let (_, okey) = app.operator("O").await;
        let (s, b) = post(&app, &okey, &example("gbr")).await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let (s, b) = json(app.post(PATH, None).json(&example("gbr")).send().await.unwrap()).await;
        assert_error(s, &b, 401, "UNAUTHORIZED");

        // An idempotent retry replays instead of answering DUPLICATE_ID; another body with the
        // same key is refused.
        let mut fresh = example("gbr");
        fresh["tax_registration_id"] = json!(uuid::Uuid::new_v4());
        let send = |body: &Value| app.post(PATH, Some(&key)).header("idempotency-key", "gbr-1").json(body).send();
        let (s1, b1) = json(send(&fresh).await.unwrap()).await;
        assert_eq!(s1, 201, "{b1}");
        let (s2, b2) = json(send(&fresh).await.unwrap()).await;
        assert_eq!((s2, b2), (201, b1));
        fresh["name"] = json!("Andere GbR");
        let (s, b) = json(send(&fresh).await.unwrap()).await;
        assert_error(s, &b, 422, "IDEMPOTENCY_KEY_REUSED");
    }

    async fn bodies_that_are_not_a_gbr_request(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (s, b) = json(app.post(PATH, Some(&key)).header("content-type", "application/json").body("{\"legal_form\": ").send().await.unwrap()).await;
        assert_error(s, &b, 400, "INVALID_JSON");
        let (s, b) = json(app.post(PATH, Some(&key)).header("content-type", "text/plain").body("{}").send().await.unwrap()).await;
        assert_error(s, &b, 415, "UNSUPPORTED_MEDIA_TYPE");
        // A UG's payload sent here names what a partnership does not have, all at once.
        let (s, b) = post(&app, &key, &example("gmbh")).await;
        let found = violations(s, &b);
        for (field, code) in [
            ("legal_form", "invalid_value"),
            ("capital", "unknown_field"),
            ("directors", "unknown_field"),
            ("shareholders", "unknown_field"),
            ("notarization_date", "unknown_field"),
            ("partners", "required"),
            ("partnership_agreement_date", "required"),
        ] {
            assert!(has(&found, field, code), "{field} {code}: {found:?}");
        }
        // And a partnership's payload is no UG's.
        let (s, b) = json(app.post("/v1/tax-registration", Some(&key)).json(&example("gbr")).send().await.unwrap()).await;
        let found = violations(s, &b);
        assert!(has(&found, "partners", "unknown_field") && has(&found, "legal_form", "invalid_value"), "{found:?}");
    }
}

/// Every top-level and partner field replaced by each JSON type that is wrong for it is a 422
/// naming that field, never a 500 (nor an accepted request).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_wrongly_typed_field_is_a_422_naming_it() {
    let app = app(Backend::Sqlite).await;
    let (_, key) = app.provider("P").await;
    let base = example("egbr");
    let mut pointers: Vec<String> = domain::gbr_request::FIELDS
        .iter()
        .map(|f| format!("/{f}"))
        .collect();
    for f in domain::gbr_request::individual_partner_fields() {
        pointers.push(format!("/partners/individuals/0/{f}"));
    }
    for f in domain::gbr_request::entity_partner_fields() {
        pointers.push(format!("/partners/entities/0/{f}"));
    }
    for f in domain::tax_request::VAT_FIELDS {
        pointers.push(format!("/vat/{f}"));
    }
    let mut checked = 0;
    for pointer in &pointers {
        let field = pointer
            .trim_start_matches('/')
            .replace("/individuals/0/", ".individuals[0].")
            .replace("/entities/0/", ".entities[0].")
            .replace('/', ".");
        for wrong in [
            json!(12.5),
            json!("x"),
            json!([1]),
            json!({"a": 1}),
            json!(true),
        ] {
            let mut body = base.clone();
            // Skip a value that is right for the field (a boolean flag set to true ...).
            if base
                .pointer(pointer)
                .is_some_and(|v| std::mem::discriminant(v) == std::mem::discriminant(&wrong))
            {
                continue;
            }
            edit(&mut body, pointer, Some(wrong.clone()));
            let (s, b) = post(&app, &key, &body).await;
            assert!(s == 422, "{pointer} = {wrong}: {s} {b}");
            let named = b["response"]["errors"].as_array().unwrap().iter().any(|e| {
                e["field"]
                    .as_str()
                    .is_some_and(|f| f == field || f.starts_with(&format!("{field}.")))
            });
            assert!(named, "{pointer} = {wrong}: {b}");
            checked += 1;
        }
    }
    assert!(checked > 150, "{checked}");
}

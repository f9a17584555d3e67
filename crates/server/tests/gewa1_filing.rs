//! The GewA 1 as the trade office files it (issue 49), through the HTTP app on SQLite and
//! PostgreSQL: one Anmeldung per legal person with supplementary sheets, one per managing
//! partner of a GbR, a relocation's former establishment, "(in Gründung)", a sole trader's
//! field 3, residence titles only for who needs one, and no placeholder on a production power
//! of attorney. Every PDF is downloaded and read back.

mod common;

use common::{Options, TestApp, app, assert_error, case_document, field_codes, json};
use domain::rule_cases::example;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};

const PATH: &str = "/v1/trade-registration";

/// The words of the form's box `name` (`forms::gewa1_field_boxes`), in reading order.
fn box_text(pdf: &[u8], name: &str) -> String {
    let (_, page, x, y, w, h) = *forms::gewa1_field_boxes()
        .iter()
        .find(|b| b.0 == name)
        .unwrap_or_else(|| panic!("no box {name}"));
    common::read_back::read(pdf)
        .words()
        .into_iter()
        .filter(|word| {
            let cx = (word.x_min + word.x_max) / 2.0;
            let cy = (word.y_min + word.y_max) / 2.0;
            word.page == page && cx >= x && cx <= x + w && cy >= y && cy <= y + h
        })
        .map(|word| word.text)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Page `page` (0-based) of a PDF as text, runs of white space as one.
fn page_text(pdf: &[u8], page: usize) -> String {
    let text = common::read_back::read(pdf).layout_text(page);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn pages(pdf: &[u8]) -> usize {
    common::read_back::read(pdf).pages.len()
}

/// The documents of type `kind` of a case as read back.
fn documents_of<'a>(case: &'a Value, kind: &str) -> Vec<&'a Value> {
    case["documents"]
        .as_array()
        .expect("documents")
        .iter()
        .filter(|d| d["type"] == kind)
        .collect()
}

/// Creates `body` (201 expected) and reads the case back: (create answer, case).
async fn created(app: &TestApp, key: &str, body: &Value) -> (Value, Value) {
    let (s, b) = app.post_json(PATH, key, body).await;
    assert_eq!(s, 201, "{b}");
    let id = b["response"]["trade_registration_id"].as_str().unwrap();
    let case = app.read(&format!("{PATH}/{id}"), key).await;
    (b["response"].clone(), case)
}

/// The two-director example as a production case.
fn two_directors() -> Value {
    let mut body = example("two-directors");
    body["environment"] = json!("production");
    body
}

backend_tests! {
    async fn a_gmbh_with_two_directors_gets_one_anmeldung(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (answer, case) = created(&app, &key, &two_directors()).await;
        // One document for the company; both owners' answers name it.
        let forms = documents_of(&case, "trade-licence-application");
        assert_eq!(forms.len(), 1, "{case}");
        assert_eq!(forms[0]["name"], "GewA 1 - Spree Datenwerk GmbH.pdf");
        let ids: Vec<&Value> = answer["owners"].as_array().unwrap().iter().map(|o| &o["documents"]["gewa_1"]["id"]).collect();
        assert_eq!(ids, [&forms[0]["id"], &forms[0]["id"]]);
        let pdf = common::download(&app, forms[0]).await;
        assert_eq!(pages(&pdf), 3);
        // The form holds the first director, counts both, and the company is in formation.
        assert_eq!(box_text(&pdf, "4"), "Hoffmann");
        assert_eq!(box_text(&pdf, "12"), "2");
        assert_eq!(box_text(&pdf, "1"), "Spree Datenwerk GmbH (in Gründung) Rechtsform: GmbH");
        // The second director's supplementary sheet, with his own signature.
        let sheet = page_text(&pdf, 2);
        for want in [
            "Weiterer gesetzlicher Vertreter (2 von 2)",
            "Feld 4 – Name Łukasiewicz",
            "Feld 5 – Vornamen Jan",
            "Feld 9 – Geburtsort und -land Wrocław, Polen",
            "Feld 10 – Staatsangehörigkeit(en) polnisch",
            "Feld 11 – Anschrift der Wohnung Boxhagener Straße 73 10245 Berlin",
            "Feld 33 – Unterschrift",
        ] {
            assert!(sheet.contains(want), "{want:?} not on the sheet: {sheet}");
        }
        // The metadata name the model the form follows.
        assert!(String::from_utf8_lossy(&pdf).contains(forms::GEWA1_FORM_VERSION));

        // Assisted: still one GewA 1, and a power of attorney per director.
        let mut assisted = two_directors();
        assisted["package"] = json!("assisted");
        assisted["name"] = json!("Spree Datenwerk Zwei GmbH");
        for (i, o) in assisted["owners"].as_array_mut().unwrap().iter_mut().enumerate() {
            o["signatures"]["power_of_attorney"] = json!(format!("M 0 0 L 40 {}", 10 + i));
        }
        let (answer, case) = created(&app, &key, &assisted).await;
        assert_eq!(documents_of(&case, "trade-licence-application").len(), 1);
        assert_eq!(documents_of(&case, "power-of-attorney").len(), 2);
        let poas: Vec<&Value> = answer["owners"].as_array().unwrap().iter().map(|o| &o["documents"]["power_of_attorney"]["id"]).collect();
        assert_ne!(poas[0], poas[1]);
    }

    async fn a_gbr_with_two_managing_partners_gets_two(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let body = example("assisted");
        let (_, case) = created(&app, &key, &body).await;
        let forms = documents_of(&case, "trade-licence-application");
        assert_eq!(forms.len(), 2);
        for (form, owner) in forms.iter().zip(body["owners"].as_array().unwrap()) {
            let pdf = common::download(&app, form).await;
            assert_eq!(pages(&pdf), 2);
            assert_eq!(box_text(&pdf, "5"), owner["first_name"].as_str().unwrap());
            // A GbR's name is its business designation (field 3), field 1 names the others.
            assert_eq!(box_text(&pdf, "3"), body["name"].as_str().unwrap());
            assert!(box_text(&pdf, "1").starts_with("Rechtsform: GbR Weitere Gesellschafter:"));
        }
    }

    async fn a_relocation_prints_the_former_establishment(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut body = example("self");
        body["reason"] = json!("reopening-after-relocation");
        // Without its former establishment it is refused.
        let (s, b) = app.post_json(PATH, &key, &body).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(field_codes(&r), [("previous_establishment".to_string(), "required".to_string())]);
        body["previous_establishment"] = json!({"street": "Leopoldstraße 10", "zip": "80802", "city": "München"});
        let (_, case) = created(&app, &key, &body).await;
        assert_eq!(
            case["previous_establishment"],
            json!({"street": "Leopoldstraße 10", "zip": "80802", "city": "München", "country": "DE"})
        );
        let pdf = common::download(&app, case_document(&case, "trade-licence-application").unwrap()).await;
        assert_eq!(box_text(&pdf, "17"), "Leopoldstraße 10 80802 München");
        assert_eq!(box_text(&pdf, "25_relocation"), "X");
        let page2 = page_text(&pdf, 1);
        assert!(page2.contains("Verlegung des Betriebs aus einem anderen Meldebezirk"), "{page2}");
        assert!(!page2.contains("Wiedereröffnung"), "{page2}");
        // A new foundation may not send one.
        let mut body = example("self");
        body["previous_establishment"] = json!({"street": "Leopoldstraße 10", "zip": "80802", "city": "München"});
        let (s, b) = app.post_json(PATH, &key, &body).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(field_codes(&r), [("previous_establishment".to_string(), "not_allowed".to_string())]);
    }

    async fn a_sole_traders_name_is_field_3(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut body = example("self");
        body["legal_form"] = json!("einzelunternehmen");
        body["name"] = json!("Erikas Softwareschmiede");
        body.as_object_mut().unwrap().remove("registration_number");
        body.as_object_mut().unwrap().remove("registration_court");
        let (_, case) = created(&app, &key, &body).await;
        let forms = documents_of(&case, "trade-licence-application");
        assert_eq!(forms.len(), 1);
        assert_eq!(forms[0]["name"], "GewA 1 - Erika Mustermann.pdf", "a sole trader's own form");
        let pdf = common::download(&app, forms[0]).await;
        assert_eq!(box_text(&pdf, "1"), "");
        assert_eq!(box_text(&pdf, "3"), "Erikas Softwareschmiede");
    }

    async fn a_polish_owner_holds_no_residence_title(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut body = example("self");
        body["owners"][0]["nationality"] = json!("PL");
        let (s, b) = app.post_json(PATH, &key, &body).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(
            field_codes(&r),
            [
                ("owners[0].residence_permit".to_string(), "not_allowed".to_string()),
                ("owners[0].has_employment_restrictions".to_string(), "not_allowed".to_string()),
            ]
        );
        let message = r["errors"][0]["message"].as_str().unwrap();
        assert!(message.contains("Polen (PL)") && message.contains("EU, the EEA and Switzerland"), "{message}");
        // Without them the case is taken, and fields 30 and 31 stay empty.
        for field in ["residence_permit", "has_employment_restrictions"] {
            body["owners"][0].as_object_mut().unwrap().remove(field);
        }
        let (_, case) = created(&app, &key, &body).await;
        let pdf = common::download(&app, case_document(&case, "trade-licence-application").unwrap()).await;
        assert_eq!(box_text(&pdf, "30"), "");
        assert_eq!(box_text(&pdf, "10"), "polnisch");
    }

    async fn a_legal_persons_signed_upload_is_the_companys_one(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let signed = common::signed_gewa1_pdf();
        let mut body = two_directors();
        body["owners"][0]["signatures"] = json!({});
        body["owners"][0]["documents"] = json!({"gewa_1": {"file": "gewa1_company"}});
        body["owners"][1]["signatures"] = json!({});
        let form = |body: &Value, files: Vec<(&str, Vec<u8>)>| {
            let mut form = Form::new().text("data", body.to_string());
            for (name, bytes) in files {
                form = form.part(name.to_string(), Part::bytes(bytes).file_name("signed.pdf").mime_str("application/pdf").unwrap());
            }
            form
        };
        let (s, b) = json(app.post(PATH, Some(&key)).multipart(form(&body, vec![("gewa1_company", signed.clone())])).send().await.unwrap()).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap();
        let case = app.read(&format!("{PATH}/{id}"), &key).await;
        let forms = documents_of(&case, "trade-licence-application");
        assert_eq!(forms.len(), 1);
        assert_eq!(common::download(&app, forms[0]).await, signed, "the upload is the company's form");
        // A second upload for the other director is refused, as is his signature beside it.
        let mut twice = body.clone();
        twice["name"] = json!("Spree Datenwerk Drei GmbH");
        twice["owners"][1]["documents"] = json!({"gewa_1": {"file": "gewa1_jan"}});
        twice["owners"][1]["signatures"] = json!({"gewa_1": "M 0 0 L 10 10"});
        let files = vec![("gewa1_company", signed.clone()), ("gewa1_jan", signed.clone())];
        let (s, b) = json(app.post(PATH, Some(&key)).multipart(form(&twice, files)).send().await.unwrap()).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let found = field_codes(&r);
        for want in [("owners[1].documents.gewa_1", "not_allowed"), ("owners[1].signatures.gewa_1", "conflict")] {
            assert!(found.contains(&(want.0.to_string(), want.1.to_string())), "{want:?} not in {found:?}");
        }
    }

    async fn an_assigned_office_reheads_the_companys_one_form(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let (s, _) = json(app.client.put(app.url("/v1/operator/trade-offices/072355007")).bearer_auth(&okey).json(&json!({"name": "Verbandsgemeindeverwaltung Trier-Land"})).send().await.unwrap()).await;
        assert_eq!(s, 200);
        // A postal code of several municipalities leaves the trade office to an operator
        // (the same address as the webhook test of a later office).
        let mut body = two_directors();
        body["registered_office"]["zip"] = json!("54298");
        body["registered_office"]["city"] = json!("Musterdorf");
        let (_, case) = created(&app, &key, &body).await;
        let before = documents_of(&case, "trade-licence-application")[0]["id"].clone();
        let id = case["trade_registration_id"].as_str().unwrap();
        let office = json!({"trade_office": {"key": "072355007", "municipality_key": "07235001"}});
        let (s, b) = json(app.client.patch(app.url(&format!("/v1/operator/trade-registrations/{id}"))).bearer_auth(&okey).json(&office).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let case = app.read(&format!("{PATH}/{id}"), &key).await;
        let forms = documents_of(&case, "trade-licence-application");
        assert_eq!(forms.len(), 1, "still one form: {case}");
        assert_ne!(forms[0]["id"], before, "replaced under the new head");
        let pdf = common::download(&app, forms[0]).await;
        assert_eq!(pages(&pdf), 3);
        assert_eq!(box_text(&pdf, "head_ags"), "07235001");
    }

    async fn a_production_assisted_case_needs_the_operator(backend) {
        let Some(app) = TestApp::spawn_with(backend, Options::tweak(|c| c.operator = None)).await else { return };
        let (_, key) = app.provider("P").await;
        let body = example("assisted");
        let (s, b) = app.post_json(PATH, &key, &body).await;
        let r = assert_error(s, &b, 503, "SERVICE_NOT_CONFIGURED");
        let message = r["message"].as_str().unwrap();
        assert!(message.contains("FILING_OPERATOR_NAME") && message.contains("FILING_OPERATOR_ADDRESS"), "{message}");
        let (s, list) = app.get_json(PATH, &key).await;
        assert_eq!(s, 200, "{list}");
        assert_eq!(list["response"]["cases"], json!([]), "nothing was written");
        // The self package and the sandbox work meanwhile; the sandbox names its placeholder.
        assert_eq!(app.post_json(PATH, &key, &example("self")).await.0, 201);
        let mut sandbox = body.clone();
        sandbox["environment"] = json!("sandbox");
        let (_, case) = created(&app, &key, &sandbox).await;
        let poa = common::download(&app, case_document(&case, "power-of-attorney").unwrap()).await;
        let text = common::pdf_text(&poa);
        assert!(text.contains("Sandbox-Betreiber") && text.contains("MUSTER"), "{text}");
        assert!(!text.contains("nicht konfiguriert"), "{text}");
    }

    async fn no_production_document_carries_a_placeholder(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        for body in [example("assisted"), example("self"), two_directors()] {
            let (_, case) = created(&app, &key, &body).await;
            for doc in case["documents"].as_array().unwrap() {
                let text = common::pdf_text(&common::download(&app, doc).await);
                for placeholder in ["nicht konfiguriert", "MUSTER", "Sandbox"] {
                    assert!(!text.contains(placeholder), "{placeholder:?} in {}: {text}", doc["name"]);
                }
            }
        }
    }
}

/// docs/forms.md quotes the model the PDFs name, the one constant.
#[test]
fn the_docs_name_the_model_the_forms_follow() {
    let docs = include_str!("../../../docs/forms.md");
    assert!(
        docs.contains(forms::GEWA1_FORM_VERSION),
        "docs/forms.md does not quote {:?}",
        forms::GEWA1_FORM_VERSION
    );
}

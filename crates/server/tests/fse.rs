//! The questionnaire a GmbH founder fills (issue 50), through the HTTP app on SQLite and
//! PostgreSQL: the further answers, nominal amounts that agree with the percentages, a
//! founding-year loss, attachments sent as multipart parts and filed in the XML's `Anhaenge`,
//! and every answer without a public element listed in `elster_xml.not_in_xml`, on the summary
//! PDF and in the XML's absence. Each XML is validated against the bundled XSDs (libxml2 and
//! xmllint), each PDF read back.

mod common;

use common::{TestApp, app, assert_error, case_document, download, field_codes, json, pdf_text};
use domain::rule_cases::example;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};

const PATH: &str = "/v1/tax-registration";

/// Creates `body` (201 expected) and reads the case back.
async fn created(app: &TestApp, key: &str, body: &Value) -> Value {
    let id = app.create(PATH, key, body).await;
    common::tax_case(app, key, &id).await
}

/// The case's XML as text, valid against the bundled XSDs.
async fn xml(app: &TestApp, case: &Value) -> String {
    let doc = case_document(case, "tax-registration-xml").expect("the XML is written");
    let bytes = download(app, doc).await;
    common::assert_valid_elster_xml(&bytes, "elster-v11-fse-kapg.xsd");
    String::from_utf8(bytes).unwrap()
}

/// The case's `elster_xml.not_in_xml` entry for `field`.
fn listed<'a>(case: &'a Value, field: &str) -> Option<&'a Value> {
    case["elster_xml"]["not_in_xml"]
        .as_array()
        .expect("not_in_xml")
        .iter()
        .find(|e| e["field"] == field)
}

/// The largest attachment taken (10 MiB).
fn elster_max() -> usize {
    domain::tax::MAX_ATTACHMENT_BYTES
}

/// A PDF as the multipart part `name`.
fn pdf_part(bytes: Vec<u8>) -> Part {
    Part::bytes(bytes)
        .file_name("attachment.pdf")
        .mime_str("application/pdf")
        .unwrap()
}

/// A multipart create of `body` with the files `(part, bytes)`.
async fn post_multipart(
    app: &TestApp,
    key: &str,
    body: &Value,
    files: Vec<(&str, Vec<u8>)>,
) -> (u16, Value) {
    let mut form = Form::new().text("data", body.to_string());
    for (name, bytes) in files {
        form = form.part(name.to_string(), pdf_part(bytes));
    }
    json(
        app.post(PATH, Some(key))
            .multipart(form)
            .send()
            .await
            .unwrap(),
    )
    .await
}

backend_tests! {
    async fn the_gmbh_examples_answers_reach_the_xml_or_the_operator(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let case = created(&app, &key, &example("gmbh")).await;
        let r = &case["registration"];
        assert_eq!(r["phone"], "+49 30 98765400");
        assert_eq!(r["tax_advisor"]["type"], "firm");
        assert_eq!(r["authorized_recipient"], json!({"type": "tax-advisor"}));
        assert_eq!(r["commercial_register"]["registration_application_date"], "2025-02-12");
        let x = xml(&app, &case).await;
        for want in [
            // The register application date of a company already entered (sub-page 8, line 55).
            "<TagDesAntrags>12.02.2025</TagDesAntrags>",
            // The telephone split at its area code, the web address (sub-page 1).
            "<IntVorw>+49</IntVorw>",
            "<NatVorw>30</NatVorw>",
            "<RufNr>98765400</RufNr>",
            "<Adresse>https://www.mustermann-software.de</Adresse>",
            // Marginal employees (sub-page 16, line 171).
            "<AnzahlGeringfuegigBeschaeftigte>1</AnzahlGeringfuegigBeschaeftigte>",
            // Nominal amounts and percentages that agree: 8,333 of 25,000 euros are 33.3320 %.
            "<Nominal>8333.00</Nominal>",
            "<ProzentAnteil>33.3320</ProzentAnteil>",
            "<ProzentAnteil>33.3360</ProzentAnteil>",
        ] {
            assert!(x.contains(want), "{want} not in the XML");
        }
        // What has no public element is not written ...
        for absent in ["SitzKapGes", "BankKonto", "Steuerberater", "Empfangsbev", "AuslPlz", "Staat", "Onlinehandel"] {
            assert!(!x.contains(&format!("<{absent}")), "{absent} in the XML");
        }
        // ... and listed for the operator with the portal's sub-page and line.
        let advisor = listed(&case, "tax_advisor").expect("the tax adviser is listed");
        assert_eq!(advisor["sub_page"], "5 Steuerliche Beratung");
        assert_eq!(advisor["line"], "24-30");
        assert_eq!(advisor["reason"], "no-public-element");
        assert!(advisor["value"].as_str().unwrap().starts_with("Steuerkanzlei Spree PartG mbB, Friedrichstraße 50, 10117 Berlin"));
        assert_eq!(listed(&case, "iban").unwrap()["sub_page"], "7 Bankverbindung");
        assert_eq!(listed(&case, "authorized_recipient").unwrap()["line"], "41-48");
        assert_eq!(
            listed(&case, "shareholders.individuals[1].address").unwrap()["value"],
            "Rue de Rivoli 10, 75001 Paris, Frankreich"
        );
        // Articles of association are required at formation (line 227): not sent here.
        assert_eq!(listed(&case, "attachments.articles_of_association").unwrap()["reason"], "not-given");
        assert!(listed(&case, "commercial_register.registration_application_date").is_none());

        // The summary shows the answers, the shares as filed, and what the XML leaves out.
        let summary = pdf_text(&download(&app, case_document(&case, "tax-registration-summary").unwrap()).await);
        let flat: String = summary.split_whitespace().collect::<Vec<_>>().join(" ");
        for want in [
            "Telefon +49 30 98765400",
            "Internetadresse https://www.mustermann-software.de",
            "Datum des Antrags 12.02.2025",
            "Anteil: 33,332 %, Nennbetrag 8.333 €",
            "davon geringfügig Beschäftigte 1",
            "Steuerliche Beratung Steuerkanzlei Spree PartG mbB",
            "Empfangsbevollmächtigte(r) die steuerliche Beratung",
            "11. Nicht in der XML-Datei (im ELSTER-Portal von Hand einzutragen)",
            "5 Steuerliche Beratung, Zeile 24-30",
            "22 Beigefügte Unterlagen, Zeile 227 nicht angegeben",
        ] {
            assert!(flat.contains(want), "{want:?} not in the summary:\n{flat}");
        }
    }

    async fn a_founding_year_loss_is_listed_not_signed(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut body = example("gmbh");
        body["financial_estimates"]["formation_year"]["profit_amount"] = json!(-20000);
        // Registered, the application date not known: listed for the operator.
        body["commercial_register"].as_object_mut().unwrap().remove("registration_application_date");
        let case = created(&app, &key, &body).await;
        let x = xml(&app, &case).await;
        assert!(!x.contains("-20000"), "a signed amount in the XML");
        assert!(x.contains("<Gewinn>"), "the following year's profit is still written");
        assert!(x.contains("<FolgeJahr>60000</FolgeJahr>"));
        assert!(!x.contains("<TagDesAntrags>"));
        let loss = listed(&case, "financial_estimates.formation_year.profit_amount").unwrap();
        assert_eq!(loss["value"], "-20.000 €");
        assert_eq!(loss["sub_page"], "15 Vorauszahlungen");
        assert_eq!(loss["line"], "165");
        assert_eq!(loss["reason"], "no-public-format");
        let applied = listed(&case, "commercial_register.registration_application_date").unwrap();
        assert_eq!(applied["reason"], "not-given");
        assert_eq!(applied["value"], Value::Null);
    }

    async fn nominal_amounts_decide_the_percentages(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut body = example("gmbh");
        for (pointer, nominal) in [
            ("/shareholders/individuals/0", 12_500),
            ("/shareholders/individuals/1", 6_250),
            ("/shareholders/entities/0", 6_250),
        ] {
            let holder = body.pointer_mut(pointer).unwrap();
            holder["nominal_amount"] = json!(nominal);
            holder.as_object_mut().unwrap().remove("share_percentage");
        }
        let case = created(&app, &key, &body).await;
        assert_eq!(case["registration"]["shareholders"]["individuals"][0]["share_percentage"], json!(50.0));
        let x = xml(&app, &case).await;
        for want in ["<Nominal>12500.00</Nominal>", "<ProzentAnteil>50.0000</ProzentAnteil>", "<ProzentAnteil>25.0000</ProzentAnteil>"] {
            assert!(x.contains(want), "{want} not in the XML");
        }
        // All or none, and summing to the capital.
        let mut partial = example("gmbh");
        partial["shareholders"]["individuals"][0]["nominal_amount"] = json!(8333);
        partial["shareholders"]["entities"][0]["nominal_amount"] = json!(99);
        let (s, b) = app.post_json(PATH, &key, &partial).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(field_codes(&r), [("shareholders.individuals[1].nominal_amount".to_string(), "required".to_string())]);
        let mut wrong = body.clone();
        wrong["shareholders"]["entities"][0]["nominal_amount"] = json!(6_000);
        let (s, b) = app.post_json(PATH, &key, &wrong).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(field_codes(&r), [("shareholders".to_string(), "nominal_sum_mismatch".to_string())]);
        assert!(r["errors"][0]["message"].as_str().unwrap().contains("they sum to 24750"), "{r}");
    }

    async fn the_place_of_management_decides_the_office(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        // Seated in Berlin, managed in München: the München corporation office (§ 20 AO).
        let mut body = example("gmbh");
        body["place_of_management"] = json!({"street": "Leopoldstraße 10", "zip": "80802", "city": "München", "country": "DE"});
        let case = created(&app, &key, &body).await;
        assert_eq!(case["tax_office"]["number"], "9143", "{case}");
        assert_eq!(listed(&case, "place_of_management").unwrap()["sub_page"], "2 Ort der Geschäftsleitung");
        let x = xml(&app, &case).await;
        assert!(x.contains(r#"<Empfaenger id="F">9143</Empfaenger>"#));
        // Checked as the seat is: a city of another postal code is refused.
        body["place_of_management"]["city"] = json!("Hamburg");
        let (s, b) = app.post_json(PATH, &key, &body).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert!(field_codes(&r).iter().any(|(f, _)| f == "place_of_management.city"), "{r}");
    }

    async fn the_construction_exemption_certificate_is_requested(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut body = example("gmbh");
        body["request_construction_exemption_certificate"] = json!(true);
        body["purpose"] = json!("Hochbau und Trockenbau");
        let case = created(&app, &key, &body).await;
        let x = xml(&app, &case).await;
        assert!(x.contains("<Freistellungsbescheinigung>"));
        assert!(x.contains("<AntragFreistBauabzugsSt>true</AntragFreistBauabzugsSt>"));
        let summary = pdf_text(&download(&app, case_document(&case, "tax-registration-summary").unwrap()).await);
        assert!(summary.split_whitespace().collect::<Vec<_>>().join(" ").contains("Freistellungsbescheinigung (§ 48b EStG) beantragt"));
    }

    async fn attachments_are_filed_with_the_questionnaire(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let articles = common::signed_gewa1_pdf();
        let list = forms::render_trade_licence(
            &serde_json::from_value(example("self")).unwrap(),
            &forms::TradeLicenceContext {
                trade_office_name: "Gewerbeamt".into(),
                trade_office_address: None,
                municipality_key: None,
                reference: "X".into(),
                received_on: None,
                issued_on: time::macros::date!(2025 - 01 - 02),
                fee_cents: None,
                fee_paid: false,
                timestamp: time::macros::datetime!(2025-01-02 0:00 UTC),
            },
        )
        .unwrap();
        let mut body = example("gmbh");
        body["attachments"] = json!({
            "articles_of_association": {"file": "articles"},
            "shareholder_list": {"file": "shareholders"}
        });
        let (s, b) = post_multipart(&app, &key, &body, vec![("articles", articles.clone()), ("shareholders", list.clone())]).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["tax_registration_id"].as_str().unwrap();
        let case = common::tax_case(&app, &key, id).await;
        // Stored as documents of the case, as sent.
        let stored = download(&app, case_document(&case, "articles-of-association").unwrap()).await;
        assert_eq!(stored, articles);
        let stored = download(&app, case_document(&case, "shareholder-list").unwrap()).await;
        assert_eq!(stored, list);
        assert_eq!(case_document(&case, "articles-of-association").unwrap()["name"], "Gesellschaftsvertrag - Mustermann Software GmbH.pdf");
        // Filed in the XML's Anhaenge, in base64, and no longer listed as missing.
        let x = xml(&app, &case).await;
        use base64::Engine;
        let encoded = base64::engine::general_purpose::STANDARD.encode(&articles);
        assert!(x.contains(&format!("<Dateiinhalt>{encoded}</Dateiinhalt>")));
        assert!(x.contains("<Dateibezeichnung>Gesellschaftsvertrag</Dateibezeichnung>"));
        assert!(x.contains("<Dateibezeichnung>Gesellschafterliste</Dateibezeichnung>"));
        assert!(x.contains("<EmailRueckmeldung>erika@mustermann-software.de</EmailRueckmeldung>"));
        assert!(listed(&case, "attachments.articles_of_association").is_none());

        // A part named but not sent: 422 together with the payload's own broken rules.
        let mut broken = body.clone();
        broken["name"] = json!("");
        let (s, b) = post_multipart(&app, &key, &broken, vec![("articles", articles.clone())]).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let found = field_codes(&r);
        for want in [("name", "empty"), ("attachments.shareholder_list.file", "missing_file")] {
            assert!(found.contains(&(want.0.to_string(), want.1.to_string())), "{want:?} not in {found:?}");
        }
        // A part the payload (sent first) does not name is refused before it is read.
        let (s, b) = post_multipart(&app, &key, &body, vec![("articles", articles.clone()), ("stray", list.clone())]).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(field_codes(&r), [("stray".to_string(), "unexpected_file".to_string())]);
        let mut other = example("gmbh");
        other["name"] = json!("Zweite Software GmbH");
        other["attachments"] = json!({"articles_of_association": {"file": "articles"}});
        let (s, b) = post_multipart(&app, &key, &other, vec![("articles", b"not a pdf at all".to_vec())]).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(field_codes(&r), [("attachments.articles_of_association.file".to_string(), "not_a_pdf".to_string())]);
        // A JSON create naming a part has none.
        let (s, b) = app.post_json(PATH, &key, &other).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(field_codes(&r), [("attachments.articles_of_association.file".to_string(), "missing_file".to_string())]);
        // An attachment above 10 MiB is refused as it arrives, and nothing is stored.
        let before = app.read("/v1/events?limit=500", &key).await["events"].as_array().unwrap().len();
        let mut big = articles.clone();
        big.resize(elster_max() + 1, b' ');
        let (s, b) = post_multipart(&app, &key, &other, vec![("articles", big)]).await;
        let r = assert_error(s, &b, 413, "PAYLOAD_TOO_LARGE");
        assert!(r["message"].as_str().unwrap().contains("articles"), "{b}");
        let after = app.read("/v1/events?limit=500", &key).await["events"].as_array().unwrap().len();
        assert_eq!(after, before, "no case was created");
    }

    async fn attachments_stay_in_the_xml_when_an_office_is_assigned_later(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (_, okey) = app.operator("O").await;
        let articles = common::signed_gewa1_pdf();
        let mut body = common::office_undetermined(example("gmbh"));
        body["attachments"] = json!({"articles_of_association": {"file": "articles"}});
        let (s, b) = post_multipart(&app, &key, &body, vec![("articles", articles.clone())]).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["tax_registration_id"].as_str().unwrap();
        let case = common::tax_case(&app, &key, id).await;
        assert!(case_document(&case, "tax-registration-xml").is_none(), "no office yet, no XML");
        let (s, g) = json(app.post(&format!("/v1/operator/tax-registrations/{id}/tax-office"), Some(&okey)).json(&json!({"tax_office_number": "1127"})).send().await.unwrap()).await;
        assert_eq!(s, 200, "{g}");
        let case = common::tax_case(&app, &key, id).await;
        let x = xml(&app, &case).await;
        use base64::Engine;
        assert!(x.contains(&base64::engine::general_purpose::STANDARD.encode(&articles)));
    }

    async fn the_new_answers_are_refused_all_at_once(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let mut body = example("gmbh");
        body["phone"] = json!("+493098765400");
        body["website"] = json!("mustermann-software.de");
        body["tax_advisor"] = json!({"type": "firm", "address": {"street": "Weg 1", "zip": "10115", "city": "Berlin", "country": "DE"}});
        body["marginal_employee_count"] = json!(7);
        body["po_box"] = json!({"number": "1234567", "zip": "10115", "city": "Berlin"});
        body["commercial_register"]["registration_application_date"] = json!("2025-03-01");
        let (s, b) = app.post_json(PATH, &key, &body).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        let found = field_codes(&r);
        for want in [
            ("phone", "invalid_phone"),
            ("website", "invalid_url"),
            ("tax_advisor.name", "required"),
            ("marginal_employee_count", "out_of_range"),
            ("po_box.number", "invalid_value"),
            ("commercial_register.registration_application_date", "after_registration"),
        ] {
            assert!(found.contains(&(want.0.to_string(), want.1.to_string())), "{want:?} not in {found:?}");
        }
        // Nothing was written.
        let (_, list) = app.get_json(PATH, &key).await;
        assert_eq!(list["response"]["cases"], json!([]));
    }

    async fn a_partnerships_xml_says_it_is_unverified(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let id = app.create("/v1/tax-registration/gbr", &key, &example("egbr")).await;
        let case = common::tax_case(&app, &key, &id).await;
        let entries = case["elster_xml"]["not_in_xml"].as_array().unwrap();
        assert_eq!(entries.len(), 1, "{entries:?}");
        assert_eq!(entries[0]["reason"], "unverified-document");
    }
}

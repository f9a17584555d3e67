//! `POST /v1/trade-registration/{id}/cancel` and `POST /v1/tax-registration/{id}/cancel`
//! through HTTP, against SQLite and PostgreSQL (docs/api/lifecycle.md, "Cancellation"): who may
//! cancel, from which statuses, what the case says afterwards, and that a cancelled case no
//! longer blocks a new one for its company.

mod common;

use common::{TestApp, app, assert_error, download, json};
use domain::rule_cases::example;
use serde_json::{Value, json};

const TRADE: &str = "/v1/trade-registration";
const TAX: &str = "/v1/tax-registration";

async fn cancel(app: &TestApp, key: &str, path: &str, reason: &str) -> (u16, Value) {
    app.post_json(&format!("{path}/cancel"), key, &json!({"reason": reason}))
        .await
}

/// A client company key for `company`, issued by its provider's `key`.
async fn client_key(app: &TestApp, key: &str, company: &str) -> String {
    let path = format!("/v1/companies/{company}/api-keys");
    let (s, k) = json(app.post(&path, Some(key)).send().await.unwrap()).await;
    assert_eq!(s, 201, "{k}");
    k["response"]["api_key"].as_str().unwrap().to_string()
}

backend_tests! {
    async fn a_self_case_is_cancelled_by_its_provider_and_no_longer_blocks_its_company(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (_, other) = app.provider("Q").await;
        let (_, okey) = app.operator("O").await;
        let (s, b) = app.post_json(TRADE, &key, &example("self")).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let company = b["response"]["company_id"].as_str().unwrap().to_string();
        let case = format!("{TRADE}/{id}");

        // While it is open, a second create for the company names it.
        let mut again = example("self");
        again["company_id"] = json!(company);
        let (s, b) = app.post_json(TRADE, &key, &again).await;
        let r = assert_error(s, &b, 409, "COMPANY_ALREADY_REGISTERED");
        assert_eq!(r["existing_id"], id.as_str(), "{r}");
        assert!(r["message"].as_str().unwrap().contains(&id), "{r}");

        // Another provider does not see it; the client company's key and operators see it
        // but do not withdraw it.
        let (s, b) = cancel(&app, &other, &case, "x").await;
        assert_error(s, &b, 404, "NOT_FOUND");
        let ckey = client_key(&app, &key, &company).await;
        let (s, b) = cancel(&app, &ckey, &case, "x").await;
        assert_error(s, &b, 403, "FORBIDDEN");
        let (s, b) = cancel(&app, &okey, &case, "x").await;
        assert_error(s, &b, 403, "FORBIDDEN");
        // A reason is required, and checked as a note.
        for (body, field, code) in [
            (json!({}), "reason", "required"),
            (json!({"reason": "   "}), "reason", "empty"),
            (json!({"reason": "x", "note": "y"}), "note", "unknown_field"),
            (json!({"reason": "a\u{7}b"}), "reason", "invalid_characters"),
        ] {
            let (s, b) = app.post_json(&format!("{case}/cancel"), &key, &body).await;
            let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
            assert_eq!(r["errors"][0]["field"], field, "{r}");
            assert_eq!(r["errors"][0]["code"], code, "{r}");
        }
        assert_eq!(app.read(&case, &key).await["status"], "form-rendered");

        let (s, b) = cancel(&app, &key, &case, "Gründer hat abgesagt").await;
        assert_eq!(s, 200, "{b}");
        let c = &b["response"];
        assert_eq!(c["status"], "cancelled");
        let last = c["status_history"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["status"], "cancelled");
        assert_eq!(last["previous_status"], "form-rendered");
        assert_eq!(last["reason"], "Gründer hat abgesagt");
        assert!(last["actor"].as_str().unwrap().starts_with("provider:"), "{last}");
        // The documents are kept, marked void, and still download.
        let docs = c["documents"].as_array().unwrap();
        assert!(!docs.is_empty());
        assert!(docs.iter().all(|d| d["void"] == true), "{docs:?}");
        let pdf = download(&app, &docs[0]).await;
        assert!(pdf.starts_with(b"%PDF"));
        assert_eq!(app.read(&case, &ckey).await["status"], "cancelled");

        // Final: neither a second cancel nor the owners' filing moves it.
        let (s, b) = cancel(&app, &key, &case, "again").await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert_eq!(r["message"], "the case is cancelled already");
        let (s, b) = json(app.post(&format!("{case}/mark-submitted"), Some(&key)).send().await.unwrap()).await;
        assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");

        // The company takes a new case; the cancelled one stays as it was.
        let (s, b) = app.post_json(TRADE, &key, &again).await;
        assert_eq!(s, 201, "{b}");
        let new_id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        assert_ne!(new_id, id);
        assert_eq!(b["response"]["company_id"], company.as_str());
        let (s, b) = app.post_json(TRADE, &key, &again).await;
        let r = assert_error(s, &b, 409, "COMPANY_ALREADY_REGISTERED");
        assert_eq!(r["existing_id"], new_id.as_str(), "{r}");
        assert_eq!(app.read(&case, &key).await["status"], "cancelled");
        let fresh = app.read(&format!("{TRADE}/{new_id}"), &key).await;
        assert!(fresh["documents"].as_array().unwrap().iter().all(|d| d["void"] == false), "{fresh}");

        // Operators find it by its status.
        let (s, b) = app.get_json("/v1/operator/trade-registrations?status=cancelled", &okey).await;
        assert_eq!(s, 200, "{b}");
        let listed: Vec<&str> = b["response"]["cases"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert_eq!(listed, [id.as_str()]);
    }

    async fn a_trade_case_with_the_authority_is_not_cancelled(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        // An assisted case is submitted from its create: our operators file it.
        let (_, b) = app.post_json(TRADE, &key, &example("assisted")).await;
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let case = format!("{TRADE}/{id}");
        let (s, b) = cancel(&app, &key, &case, "zu spät").await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert_eq!(
            r["message"],
            "the case is submitted; a case is cancelled only before it reaches the authority, from initiated or form-rendered"
        );
        // A self case its owners filed.
        let (_, b) = app.post_json(TRADE, &key, &example("self")).await;
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let case = format!("{TRADE}/{id}");
        let (s, _) = json(app.post(&format!("{case}/mark-submitted"), Some(&key)).send().await.unwrap()).await;
        assert_eq!(s, 200);
        let (s, b) = cancel(&app, &key, &case, "zu spät").await;
        assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert_eq!(app.read(&case, &key).await["status"], "submitted");
        // Unknown ids are 404 like another provider's.
        let (s, b) = cancel(&app, &key, &format!("{TRADE}/{}", uuid::Uuid::now_v7()), "x").await;
        assert_error(s, &b, 404, "NOT_FOUND");
    }

    async fn a_tax_case_is_cancelled_before_it_is_submitted_or_after_a_rejection(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (_, other) = app.provider("Q").await;
        let (_, okey) = app.operator("O").await;
        for example_name in ["ug", "gbr"] {
            let path = if example_name == "gbr" { format!("{TAX}/gbr") } else { TAX.to_string() };
            let (s, b) = app.post_json(&path, &key, &example(example_name)).await;
            assert_eq!(s, 201, "{b}");
            let id = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
            let case = format!("{TAX}/{id}");
            let company = app.read(&case, &key).await["company_id"].as_str().unwrap().to_string();
            let mut again = example(example_name);
            again.as_object_mut().unwrap().remove("business_address");
            again["company_id"] = json!(company);
            let (s, b) = app.post_json(&path, &key, &again).await;
            let r = assert_error(s, &b, 409, "COMPANY_ALREADY_REGISTERED");
            assert_eq!(r["existing_id"], id.as_str(), "{r}");

            let (s, b) = cancel(&app, &other, &case, "x").await;
            assert_error(s, &b, 404, "NOT_FOUND");
            let (s, b) = cancel(&app, &okey, &case, "x").await;
            assert_error(s, &b, 403, "FORBIDDEN");
            let (s, b) = cancel(&app, &key, &case, "Gesellschaft wird nicht gegründet").await;
            assert_eq!(s, 200, "{b}");
            assert_eq!(b["response"]["status"], "cancelled");
            assert_eq!(b["response"]["tax_registration_id"], id.as_str());
            let docs = b["response"]["documents"].as_array().unwrap();
            assert!(docs.iter().all(|d| d["void"] == true), "{docs:?}");
            // Operators cannot submit it any more.
            let transition = format!("/v1/operator/tax-registrations/{id}/transition");
            let (s, b) = app.post_json(&transition, &okey, &json!({"status": "submitted"})).await;
            assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");

            let (s, b) = app.post_json(&path, &key, &again).await;
            assert_eq!(s, 201, "{b}");
        }

        // Submitted: with the tax office, not cancelled; rejected: cancelled.
        let (_, b) = app.post_json(TAX, &key, &example("gmbh")).await;
        let id = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        let case = format!("{TAX}/{id}");
        let transition = format!("/v1/operator/tax-registrations/{id}/transition");
        let (s, b) = app.post_json(&transition, &okey, &json!({"status": "submitted"})).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = cancel(&app, &key, &case, "x").await;
        let r = assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert_eq!(
            r["message"],
            "the case is submitted; a case is cancelled only before it reaches the authority, from validated or rejected"
        );
        let (s, b) = app.post_json(&transition, &okey, &json!({"status": "rejected", "reason": "Plausibilitätsfehler"})).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = cancel(&app, &key, &case, "wird neu eingereicht").await;
        assert_eq!(s, 200, "{b}");
        let history: Vec<&str> = b["response"]["status_history"].as_array().unwrap().iter().map(|h| h["status"].as_str().unwrap()).collect();
        assert_eq!(history, ["validated", "submitted", "rejected", "cancelled"]);
    }

    async fn two_cancels_at_once_move_the_case_once(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (_, b) = app.post_json(TRADE, &key, &example("self")).await;
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let case = format!("{TRADE}/{id}");
        let (a, b) = tokio::join!(cancel(&app, &key, &case, "a"), cancel(&app, &key, &case, "b"));
        let mut statuses = [a.0, b.0];
        statuses.sort();
        assert_eq!(statuses, [200, 409]);
        let history = app.read(&case, &key).await["status_history"].clone();
        let cancelled = history.as_array().unwrap().iter().filter(|h| h["status"] == "cancelled").count();
        assert_eq!(cancelled, 1);
    }

    /// The reason's limit is the one the OpenAPI document states (`maxLength` 500).
    async fn a_reason_of_501_characters_is_refused(backend) {
        let app = app(backend).await;
        let (_, key) = app.provider("P").await;
        let (_, b) = app.post_json(TRADE, &key, &example("self")).await;
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let case = format!("{TRADE}/{id}");
        let (s, b) = cancel(&app, &key, &case, &"x".repeat(501)).await;
        let r = assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(r["errors"][0]["field"], "reason", "{r}");
        let (s, b) = cancel(&app, &key, &case, &"x".repeat(500)).await;
        assert_eq!(s, 200, "{b}");
    }
}

//! The audit of operator changes (issue 39): every change an operator makes to a case (a trade
//! registration's office, fee, payment and source product, a tax office, an owner's identity
//! verification) is one entry of the case's history with the operator's name and the old and
//! new value, written with the change itself; a request that changes nothing, or is refused,
//! writes none. Through the real app, on both databases.

mod common;

use common::{TestApp, assert_error, json};
use domain::rule_cases::example;
use serde_json::{Value, json};

const OPERATOR: &str = "Erika Sachbearbeiterin";
const PROVIDER: &str = "Plattform Beispiel GmbH";

/// The case's history as its provider reads it.
async fn history(app: &TestApp, pkey: &str, kind: &str, id: &str) -> Vec<Value> {
    let case = app
        .read(&format!("/v1/{kind}-registration/{id}"), pkey)
        .await;
    case["status_history"].as_array().unwrap().clone()
}

/// The events of the provider's log (newest first).
async fn events(app: &TestApp, pkey: &str) -> Vec<Value> {
    let page = app.read("/v1/events?limit=500", pkey).await;
    page["events"].as_array().unwrap().clone()
}

/// `{"field", "old", "new"}`, `None` as `null`.
fn change(field: &str, old: Option<&str>, new: Option<&str>) -> Value {
    json!({"field": field, "old": old, "new": new})
}

/// Asserts that `after` is `before` with exactly one entry more: a field change by the
/// operator `oid` that keeps the case's `status`, with `changes`; returns it.
fn one_entry_more(
    before: &[Value],
    after: &[Value],
    oid: uuid::Uuid,
    status: &str,
    changes: Value,
) -> Value {
    assert_eq!(after.len(), before.len() + 1, "one entry more: {after:#?}");
    assert_eq!(
        &after[..before.len()],
        before,
        "the earlier entries stay as they were"
    );
    let entry = after.last().unwrap().clone();
    assert_eq!(entry["status"], status, "{entry}");
    assert_eq!(
        entry["previous_status"], status,
        "the status stays: {entry}"
    );
    assert_eq!(entry["actor"], format!("operator:{oid}"), "{entry}");
    assert_eq!(entry["actor_name"], OPERATOR, "{entry}");
    assert!(entry.get("reason").is_none(), "{entry}");
    assert_eq!(entry["changes"], changes, "{entry}");
    entry
}

backend_tests! {
    async fn trade_patches_are_in_the_history_with_the_operator_and_both_values(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider(PROVIDER).await;
        let (oid, okey) = app.operator(OPERATOR).await;
        // An establishment whose postal code did not decide the municipality: no office yet.
        let mut body = example("self");
        body["registered_office"]["zip"] = json!("54298");
        body["registered_office"]["city"] = json!("Musterdorf");
        let (s, b) = app.post_json("/v1/trade-registration", &pkey, &body).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let (s, _) = json(app.client.put(app.url("/v1/operator/trade-offices/072355007")).bearer_auth(&okey).json(&json!({"name": "Verbandsgemeindeverwaltung Trier-Land"})).send().await.unwrap()).await;
        assert_eq!(s, 200);
        let path = format!("/v1/operator/trade-registrations/{id}");
        let patch = |body: Value| {
            let (app, path, okey) = (&app, path.clone(), okey.clone());
            async move { json(app.client.patch(app.url(&path)).bearer_auth(&okey).json(&body).send().await.unwrap()).await }
        };
        let events_before = events(&app, &pkey).await;

        let h0 = history(&app, &pkey, "trade", &id).await;
        assert_eq!(h0.len(), 2, "{h0:#?}");
        assert!(h0.iter().all(|h| h.get("changes").is_none()), "status steps carry no changes: {h0:#?}");

        // Fee and payment: one entry naming both, as a clerk reads them.
        let (s, b) = patch(json!({"city_fee": 26, "is_paid": true})).await;
        assert_eq!(s, 200, "{b}");
        let h1 = history(&app, &pkey, "trade", &id).await;
        one_entry_more(&h0, &h1, oid, "form-rendered", json!([
            change("city_fee", None, Some("26.00")),
            change("is_paid", Some("false"), Some("true")),
        ]));
        // The answer of the PATCH is the case as read back, with the entry.
        assert_eq!(b["response"]["status_history"].as_array().unwrap(), &h1);

        // The same values again, and an empty patch: applied, but nothing changed, no entry.
        for same in [json!({"city_fee": 26.0, "is_paid": true}), json!({}), json!({"source_product": null})] {
            let (s, b) = patch(same.clone()).await;
            assert_eq!(s, 200, "{same}: {b}");
            assert_eq!(history(&app, &pkey, "trade", &id).await, h1, "{same}");
        }

        // Refused patches write nothing, not even the fields that were valid.
        let (s, b) = patch(json!({"city_fee": 30, "is_paid": "yes"})).await;
        assert_error(s, &b, 422, "VALIDATION_FAILED");
        let (s, b) = patch(json!({"city_fee": 30, "trade_office": {"key": "999999999", "municipality_key": "07235001"}})).await;
        assert_error(s, &b, 422, "VALIDATION_FAILED");
        let case = app.read(&format!("/v1/trade-registration/{id}"), &pkey).await;
        assert_eq!(case["city_fee"], 26.0);
        assert_eq!(case["status_history"].as_array().unwrap(), &h1);

        // The office (key and name, and its municipality) and the source product in one entry;
        // the fields left out are not named.
        let (s, b) = patch(json!({"trade_office": {"key": "072355007", "municipality_key": "07235001"}, "source_product": "gbr", "is_paid": true})).await;
        assert_eq!(s, 200, "{b}");
        let h2 = history(&app, &pkey, "trade", &id).await;
        one_entry_more(&h1, &h2, oid, "form-rendered", json!([
            change("trade_office", None, Some("072355007 Verbandsgemeindeverwaltung Trier-Land")),
            change("trade_office.municipality_key", None, Some("07235001")),
            change("source_product", None, Some("gbr")),
        ]));

        // Old values are the ones replaced: a new fee, the source product cleared.
        let (s, b) = patch(json!({"city_fee": 30.5, "source_product": null, "is_paid": false})).await;
        assert_eq!(s, 200, "{b}");
        let h3 = history(&app, &pkey, "trade", &id).await;
        one_entry_more(&h2, &h3, oid, "form-rendered", json!([
            change("city_fee", Some("26.00"), Some("30.50")),
            change("is_paid", Some("true"), Some("false")),
            change("source_product", Some("gbr"), None),
        ]));

        // The operators' view is the same.
        let (cs, cb) = app.get_json(&format!("/v1/trade-registration/{id}"), &okey).await;
        assert_eq!(cs, 200);
        assert_eq!(cb["response"]["status_history"].as_array().unwrap(), &h3);

        // A field change is not a status step: no event in the log (nor a webhook; the office
        // assignment's re-headed forms are `documents.updated`, as before).
        let new_events: Vec<Value> = events(&app, &pkey).await.into_iter().filter(|e| !events_before.contains(e)).collect();
        let types: Vec<&str> = new_events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["documents.updated"], "{new_events:#?}");
    }

    async fn tax_office_assignments_are_in_the_history(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (pid, pkey) = app.provider(PROVIDER).await;
        let (oid, okey) = app.operator(OPERATOR).await;
        let office = |n: &str| format!("{n} {}", domain::offices::tax_office(n).unwrap().display_name());
        let (s, b) = app.post_json("/v1/tax-registration", &pkey, &common::office_undetermined(example("gmbh"))).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        let path = format!("/v1/operator/tax-registrations/{id}/tax-office");
        let assign = |number: &str| {
            let (app, path, okey, number) = (&app, path.clone(), okey.clone(), number.to_string());
            async move { app.post_json(&path, &okey, &json!({"tax_office_number": number})).await }
        };
        let h0 = history(&app, &pkey, "tax", &id).await;
        assert_eq!(h0.len(), 1);
        assert_eq!(h0[0]["actor"], format!("provider:{pid}"));
        assert_eq!(h0[0]["actor_name"], PROVIDER);

        // The first office: none before.
        let (s, b) = assign("1127").await;
        assert_eq!(s, 200, "{b}");
        let h1 = history(&app, &pkey, "tax", &id).await;
        one_entry_more(&h0, &h1, oid, "validated", json!([change("tax_office", None, Some(&office("1127")))]));

        // Another office: the one it replaces is the old value.
        let (s, b) = assign("1129").await;
        assert_eq!(s, 200, "{b}");
        let h2 = history(&app, &pkey, "tax", &id).await;
        one_entry_more(&h1, &h2, oid, "validated", json!([change("tax_office", Some(&office("1127")), Some(&office("1129")))]));

        // The same office again changes nothing; an unknown office is refused; neither writes.
        let (s, b) = assign("1129").await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = assign("9999").await;
        assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(history(&app, &pkey, "tax", &id).await, h2);

        // Submitted: the office is fixed (409), and the refusal writes no entry.
        let (s, b) = app.post_json(&format!("/v1/operator/tax-registrations/{id}/transition"), &okey, &json!({"status": "submitted"})).await;
        assert_eq!(s, 200, "{b}");
        let h3 = history(&app, &pkey, "tax", &id).await;
        assert_eq!(h3.len(), h2.len() + 1);
        assert!(h3.last().unwrap().get("changes").is_none(), "a step has no changes");
        let (s, b) = assign("1127").await;
        assert_error(s, &b, 409, "INVALID_STATE_TRANSITION");
        assert_eq!(history(&app, &pkey, "tax", &id).await, h3);

        // In the sandbox the provider assigns the office of its own case: its name is shown.
        let mut body = example("ug");
        body["environment"] = json!("sandbox");
        body["tax_office_number"] = json!("1127");
        let (s, b) = app.post_json("/v1/tax-registration", &pkey, &body).await;
        assert_eq!(s, 201, "{b}");
        let sid = b["response"]["tax_registration_id"].as_str().unwrap().to_string();
        let (s, b) = app.post_json(&format!("/v1/sandbox/tax-registration/{sid}/tax-office"), &pkey, &json!({"tax_office_number": "1129"})).await;
        assert_eq!(s, 200, "{b}");
        let h = history(&app, &pkey, "tax", &sid).await;
        let last = h.last().unwrap();
        assert_eq!(last["actor"], format!("provider:{pid}"));
        assert_eq!(last["actor_name"], PROVIDER);
        assert_eq!(last["changes"], json!([change("tax_office", Some(&office("1127")), Some(&office("1129")))]));
    }

    async fn identity_verifications_are_in_the_history(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (_, pkey) = app.provider(PROVIDER).await;
        let (oid, okey) = app.operator(OPERATOR).await;
        let (s, b) = app.post_json("/v1/trade-registration", &pkey, &example("assisted")).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let path = format!("/v1/operator/trade-registrations/{id}/owners/1/identity-verified");
        let h0 = history(&app, &pkey, "trade", &id).await;
        let field = "owners[1].identity_verified_at";

        // Recorded now: none before.
        let (s, b) = json(app.post(&path, Some(&okey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let first = b["response"]["identity_verified_at"].as_str().unwrap().to_string();
        let h1 = history(&app, &pkey, "trade", &id).await;
        one_entry_more(&h0, &h1, oid, "submitted", json!([change(field, None, Some(&first))]));

        // Recorded again at the time it happened: the time it replaces is the old value (both
        // in UTC, as GET shows them).
        let rfc3339 = &time::format_description::well_known::Rfc3339;
        let created = time::OffsetDateTime::parse(h0[0]["at"].as_str().unwrap(), rfc3339).unwrap();
        let earlier = created + time::Duration::seconds(1);
        let (s, b) = app.post_json(&path, &okey, &json!({"verified_at": earlier.to_offset(time::macros::offset!(+1)).format(rfc3339).unwrap()})).await;
        assert_eq!(s, 200, "{b}");
        let second = b["response"]["identity_verified_at"].as_str().unwrap().to_string();
        assert_eq!(second, earlier.format(rfc3339).unwrap());
        let h2 = history(&app, &pkey, "trade", &id).await;
        one_entry_more(&h1, &h2, oid, "submitted", json!([change(field, Some(&first), Some(&second))]));

        // The same time again changes nothing; a refused time writes nothing.
        let (s, b) = app.post_json(&path, &okey, &json!({"verified_at": second})).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = app.post_json(&path, &okey, &json!({"verified_at": "2000-01-01T00:00:00Z"})).await;
        assert_error(s, &b, 422, "VALIDATION_FAILED");
        assert_eq!(history(&app, &pkey, "trade", &id).await, h2);

        // Removed: the removed time is the old value; removing nothing writes nothing.
        let delete = || async { json(app.client.delete(app.url(&path)).bearer_auth(&okey).send().await.unwrap()).await };
        let (s, b) = delete().await;
        assert_eq!(s, 200, "{b}");
        let h3 = history(&app, &pkey, "trade", &id).await;
        one_entry_more(&h2, &h3, oid, "submitted", json!([change(field, Some(&second), None)]));
        let (s, b) = delete().await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(history(&app, &pkey, "trade", &id).await, h3);
        // The verification log still has every record and removal (three records, one removal).
        let log = app.read(&path, &okey).await;
        assert_eq!(log["history"].as_array().unwrap().len(), 4, "{log}");
    }

    async fn steps_name_the_provider_the_operator_and_no_one_for_the_system(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (pid, pkey) = app.provider(PROVIDER).await;
        let (oid, okey) = app.operator(OPERATOR).await;
        let (s, b) = app.post_json("/v1/trade-registration", &pkey, &example("self")).await;
        assert_eq!(s, 201, "{b}");
        let id = b["response"]["trade_registration_id"].as_str().unwrap().to_string();
        let (s, b) = json(app.post(&format!("/v1/trade-registration/{id}/mark-submitted"), Some(&pkey)).send().await.unwrap()).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = app.post_json(&format!("/v1/operator/trade-registrations/{id}/transition"), &okey, &json!({"status": "blocked", "reason": "Unterschrift fehlt"})).await;
        assert_eq!(s, 200, "{b}");
        let h = history(&app, &pkey, "trade", &id).await;
        let who: Vec<(&str, &str, Option<&str>)> = h
            .iter()
            .map(|e| (e["status"].as_str().unwrap(), e["actor"].as_str().unwrap(), e.get("actor_name").map(|n| n.as_str().unwrap())))
            .collect();
        let (p, o) = (format!("provider:{pid}"), format!("operator:{oid}"));
        assert_eq!(who, [
            ("initiated", p.as_str(), Some(PROVIDER)),
            ("form-rendered", "system", None),
            ("submitted", p.as_str(), Some(PROVIDER)),
            ("blocked", o.as_str(), Some(OPERATOR)),
        ]);
        assert!(h.iter().all(|e| e.get("changes").is_none()), "{h:#?}");
        // The webhook body of the step is as before: no name, no changes.
        let blocked = events(&app, &pkey).await.into_iter().find(|e| e["type"] == "registration.blocked").unwrap();
        let data = blocked["payload"]["data"].as_object().unwrap();
        let mut keys: Vec<&str> = data.keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["client_reference", "company_id", "environment", "previous_status", "reason", "status", "trade_registration_id"]);
    }
}

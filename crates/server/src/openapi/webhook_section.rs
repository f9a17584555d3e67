//! The document's `webhooks` section (OpenAPI 3.1): one entry per event type of
//! `domain::webhook::event_types`, each a `POST` to the receiver with the Standard Webhooks
//! headers, the body as the `WebhookEvent` schema, and an example made by the same code that
//! makes every delivery's body (`domain::webhook::CaseEvent::body`), so the example cannot
//! drift from what receivers get.
//!
//! utoipa 5 has no field for the section; it is written as a top-level entry of the document's
//! extensions, which serialise flattened into the document.

use domain::case::DocumentType;
use domain::case_state::CaseStatus;
use domain::lifecycle::{Lifecycle, TaxStatus, TradeStatus};
use domain::webhook::{CaseEvent, DOCUMENTS_UPDATED, DocumentsEvent, PING, UpdatedDocument};
use serde_json::{Value, json};
use utoipa::Modify;
use utoipa::openapi::extensions::Extensions;

pub(super) struct Webhooks;

impl Modify for Webhooks {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let section = section();
        openapi
            .extensions
            .get_or_insert_with(Extensions::default)
            .merge(Extensions::from_iter([("webhooks", section)]));
    }
}

/// `{event type: path item}` for every event.
fn section() -> Value {
    let mut events = serde_json::Map::new();
    for status in CaseStatus::all() {
        let Some(event_type) = domain::webhook::event_type(status) else {
            continue;
        };
        let body = sample(status).body().unwrap_or_default();
        events.insert(
            event_type.into(),
            item(event_type, &status_description(status), &body),
        );
    }
    let documents = documents_sample();
    let ping = domain::webhook::ping_body(ENDPOINT, at()).unwrap_or_default();
    let mut ping_item = item(
        PING,
        "Sent only by `POST /v1/webhook-endpoints/{endpoint_id}/test`, to the endpoint named, \
         whichever events it subscribed to; never retried.",
        &ping,
    );
    ping_item["post"]["requestBody"]["content"]["application/json"]["schema"] =
        json!({"$ref": "#/components/schemas/WebhookPing"});
    events.insert(PING.into(), ping_item);
    events.insert(
        DOCUMENTS_UPDATED.into(),
        item(
            DOCUMENTS_UPDATED,
            "A case got new documents, or new versions replacing old ones, without a status \
             change: an office assigned later (the GewA 1 forms re-headed for a trade office; \
             the ELSTER XML written and the summary replaced for a tax office). No download \
             links: read the case for them.",
            &documents,
        ),
    );
    Value::Object(events)
}

fn status_description(status: CaseStatus) -> String {
    let case = match status {
        CaseStatus::Trade(_) => "A trade registration",
        CaseStatus::Tax(_) => "A tax registration",
    };
    format!(
        "{case} entered `{}` (docs/api/lifecycle.md). `previous_status` is null for the \
         status a case is created in.",
        status.as_str()
    )
}

/// The path item of one event: what the service POSTs to an endpoint subscribed to it.
fn item(event_type: &str, description: &str, example: &str) -> Value {
    let example: Value = serde_json::from_str(example).unwrap_or(Value::Null);
    json!({
        "post": {
            "summary": event_type,
            "description": description,
            "operationId": format!("webhook_{}", event_type.replace(['.', '-'], "_")),
            "tags": ["webhooks"],
            "parameters": [
                header("webhook-id", "The message id (a UUID): the same on every attempt, for \
                    de-duplicating retries."),
                header("webhook-timestamp", "Unix seconds when the attempt was signed; reject \
                    attempts far from your clock."),
                header("webhook-signature", "`v1,` + base64 HMAC-SHA256 of \
                    `{webhook-id}.{webhook-timestamp}.{body}` keyed with the decoded `whsec_` \
                    secret; after a rotation two signatures, space-separated (the new secret's \
                    first)."),
            ],
            "requestBody": {
                "required": true,
                "content": {
                    "application/json": {
                        "schema": {"$ref": "#/components/schemas/WebhookEvent"},
                        "example": example,
                    }
                }
            },
            "responses": {
                "2XX": {
                    "description": "Received. Any other answer, a redirect, a timeout or a \
                        refused connection is retried on the schedule (docs/api/webhooks.md)."
                }
            },
            "security": [],
        }
    })
}

fn header(name: &str, description: &str) -> Value {
    json!({
        "name": name,
        "in": "header",
        "required": true,
        "description": description,
        "schema": {"type": "string"},
    })
}

const CASE: uuid::Uuid = uuid::Uuid::from_u128(0x0193_8a2e_5c1d_7e0a_9b3c_4d5e_6f70_8192);
const ENDPOINT: uuid::Uuid = uuid::Uuid::from_u128(0x0193_8a2d_0000_7000_8000_0000_0000_00e1);
const COMPANY: uuid::Uuid = uuid::Uuid::from_u128(0x0193_8a2e_5c1c_7f11_8a2b_3c4d_5e6f_7081);

fn at() -> time::OffsetDateTime {
    time::macros::datetime!(2026-03-02 09:30:00 UTC)
}

/// An event of a case entering `status`, as the store writes it: from a status the lifecycle
/// table leads there from (none for the status a case is created in), with a reason where the
/// status needs one.
fn sample(status: CaseStatus) -> CaseEvent<'static> {
    let previous = match status {
        CaseStatus::Trade(s) => came_from(s).map(CaseStatus::Trade),
        CaseStatus::Tax(s) => came_from(s).map(CaseStatus::Tax),
    };
    let reason = match status {
        CaseStatus::Trade(TradeStatus::Blocked) => {
            Some("Das Gewerbeamt bittet um eine Kopie des Personalausweises")
        }
        CaseStatus::Trade(TradeStatus::Completed) => Some("trade licence issued"),
        CaseStatus::Tax(TaxStatus::Rejected) => {
            Some("ERiC: Die Steuernummer des Finanzamts ist ungültig")
        }
        _ => None,
    };
    CaseEvent {
        case_id: CASE,
        company_id: COMPANY,
        status,
        previous_status: previous,
        environment: "production",
        client_reference: Some("crm-4711"),
        reason,
        at: at(),
    }
}

/// The first status of the table that can move to `to`.
fn came_from<L: Lifecycle>(to: L) -> Option<L> {
    L::ALL
        .iter()
        .copied()
        .find(|from| from.next().contains(&to))
}

fn documents_sample() -> String {
    let documents = [UpdatedDocument {
        id: uuid::Uuid::from_u128(0x0193_8a2f_0000_7000_8000_0000_0000_0001),
        doc_type: DocumentType::TradeLicenceApplication,
        owner_index: Some(0),
        name: "GewA 1 - Erika Mustermann.pdf",
        replaces: Some(uuid::Uuid::from_u128(
            0x0193_8a2e_0000_7000_8000_0000_0000_0001,
        )),
    }];
    DocumentsEvent {
        case: CaseEvent {
            reason: Some("trade office assigned"),
            ..sample(TradeStatus::FormRendered.into())
        },
        documents: &documents,
    }
    .body()
    .unwrap_or_default()
}

//! Webhook events (docs/api/webhooks.md): their names, which status change produces which, the
//! payload every endpoint receives, and the retry schedule.
//!
//! The store writes one event per subscribed endpoint in the same transaction as the status
//! change (the outbox); the server's worker delivers them. Both read this module, so an event's
//! name and body are defined once. Besides the status events there is one document event,
//! [`DOCUMENTS_UPDATED`], for documents a case gets or has replaced without a status change.

use std::sync::LazyLock;
use std::time::Duration;

use serde_json::json;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use crate::case::{CaseKind, DocumentType};
use crate::case_state::CaseStatus;
#[cfg(test)]
use crate::lifecycle::{Lifecycle, TaxStatus, TradeStatus};

/// The prefix of a kind's status events: `registration.<status>` for the trade statuses (the
/// specification's names), `tax-registration.<status>` for the tax ones.
pub const fn event_prefix(kind: CaseKind) -> &'static str {
    match kind {
        CaseKind::Trade => "registration",
        CaseKind::Tax => "tax-registration",
    }
}

/// Every event type: `<prefix>.<status>` for every status of every kind's lifecycle
/// ([`CaseStatus::all`], [`event_prefix`]), in the lifecycles' order, then
/// [`DOCUMENTS_UPDATED`]. Derived once from the lifecycles, so a kind or a status added there
/// has its event without a list kept by hand.
pub fn event_types() -> &'static [&'static str] {
    static TYPES: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
        CaseStatus::all()
            .map(|s| &*Box::leak(status_event(s).into_boxed_str()))
            .chain([DOCUMENTS_UPDATED])
            .collect()
    });
    &TYPES
}

/// An event type as stored and sent: one of [`event_types`], or [`PING`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventType(&'static str);

impl EventType {
    /// The event type named `s`, if there is one.
    pub fn parse(s: &str) -> Option<Self> {
        event_types()
            .iter()
            .copied()
            .chain([PING])
            .find(|t| *t == s)
            .map(EventType)
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

fn status_event(status: CaseStatus) -> String {
    format!("{}.{}", event_prefix(status.kind()), status.as_str())
}

/// A case got new documents, or new versions of documents replacing the old ones, without
/// changing its status (an office assigned later: the GewA 1 forms re-headed, the tax
/// registration's XML and summary written for the office). Not under `registration.*`, whose
/// names mirror the trade statuses.
pub const DOCUMENTS_UPDATED: &str = "documents.updated";

/// The type of the test event `POST /v1/webhook-endpoints/{id}/test` sends: not a case event,
/// so not in [`event_types`] (no endpoint subscribes to it; every endpoint can be pinged).
pub const PING: &str = "ping";

/// The body of a test ping to endpoint `endpoint_id` at `at`, exactly as signed:
/// `{"type": "ping", "timestamp", "data": {"endpoint_id"}}`.
pub fn ping_body(endpoint_id: Uuid, at: OffsetDateTime) -> Option<String> {
    let timestamp = at.format(&Rfc3339).ok()?;
    let body = json!({"type": PING, "timestamp": timestamp, "data": {"endpoint_id": endpoint_id}});
    Some(body.to_string())
}

/// The event a case entering `status` produces; `None` for a status that is not public.
pub fn event_type(status: CaseStatus) -> Option<&'static str> {
    let name = status_event(status);
    event_types().iter().copied().find(|t| *t == name)
}

/// What an event says about one status change of a case.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseEvent<'a> {
    pub case_id: Uuid,
    pub company_id: Uuid,
    /// The status the case entered (its kind is the case's).
    pub status: CaseStatus,
    pub previous_status: Option<CaseStatus>,
    /// `sandbox` or `production`.
    pub environment: &'a str,
    pub client_reference: Option<&'a str>,
    /// Why the case moved (a blocked or rejected case's reason), when recorded.
    pub reason: Option<&'a str>,
    pub at: OffsetDateTime,
}

impl CaseEvent<'_> {
    pub fn event_type(&self) -> Option<&'static str> {
        event_type(self.status)
    }

    /// The JSON body sent to every endpoint, exactly as signed:
    /// `{"type", "timestamp", "data": {..._registration_id, company_id, status, previous_status,
    /// environment, client_reference, reason}}`. `None` when the status produces no event.
    pub fn body(&self) -> Option<String> {
        let event_type = self.event_type()?;
        let timestamp = self.at.format(&Rfc3339).ok()?;
        let body = json!({"type": event_type, "timestamp": timestamp, "data": self.data()});
        Some(body.to_string())
    }

    /// The `data` object: the case and this change of it.
    fn data(&self) -> serde_json::Map<String, serde_json::Value> {
        let id_field = match self.status.kind() {
            CaseKind::Tax => "tax_registration_id",
            CaseKind::Trade => "trade_registration_id",
        };
        let mut data = serde_json::Map::new();
        data.insert(id_field.into(), json!(self.case_id));
        data.insert("company_id".into(), json!(self.company_id));
        data.insert("status".into(), json!(self.status.as_str()));
        data.insert(
            "previous_status".into(),
            json!(self.previous_status.map(CaseStatus::as_str)),
        );
        data.insert("environment".into(), json!(self.environment));
        data.insert("client_reference".into(), json!(self.client_reference));
        data.insert("reason".into(), json!(self.reason));
        data
    }
}

/// One document in a [`DocumentsEvent`].
#[derive(Debug, Clone, PartialEq)]
pub struct UpdatedDocument<'a> {
    pub id: Uuid,
    /// Named as the case's `documents` list names it.
    pub doc_type: DocumentType,
    /// The owner (index into the request's `owners`) the document belongs to, if any.
    pub owner_index: Option<i32>,
    pub name: &'a str,
    /// The document this one replaces (gone from the case, its links answer 404); `None` for
    /// a document the case did not have before.
    pub replaces: Option<Uuid>,
}

/// What a [`DOCUMENTS_UPDATED`] event says: the case as a status event names it (its status
/// unchanged, `reason` why the documents changed, e.g. `trade office assigned`, `at` when they
/// were written; `previous_status` is left out of the body), and the documents.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentsEvent<'a> {
    pub case: CaseEvent<'a>,
    pub documents: &'a [UpdatedDocument<'a>],
}

impl DocumentsEvent<'_> {
    /// The JSON body, exactly as signed: `{"type": "documents.updated", "timestamp", "data":
    /// {..._registration_id, company_id, status, environment, client_reference, reason,
    /// documents: [{id, type, owner_index, name, replaces}]}}`.
    pub fn body(&self) -> Option<String> {
        let timestamp = self.case.at.format(&Rfc3339).ok()?;
        let documents: Vec<_> = self
            .documents
            .iter()
            .map(|d| {
                json!({
                    "id": d.id,
                    "type": d.doc_type.as_str(),
                    "owner_index": d.owner_index,
                    "name": d.name,
                    "replaces": d.replaces,
                })
            })
            .collect();
        // The status is not changing, so there is no previous one.
        let mut data = self.case.data();
        data.remove("previous_status");
        data.insert("documents".into(), json!(documents));
        let body = json!({"type": DOCUMENTS_UPDATED, "timestamp": timestamp, "data": data});
        Some(body.to_string())
    }
}

/// Whether an endpoint subscribed to `events` (`None`: all, including types added later)
/// receives `event_type`.
pub fn subscribed(events: Option<&[String]>, event_type: &str) -> bool {
    events.is_none_or(|list| list.iter().any(|e| e == event_type))
}

/// The default pauses between attempts: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, so a message
/// is tried eight times over about 27.6 hours.
pub const DEFAULT_RETRY_SCHEDULE: &[u64] = &[5, 300, 1800, 7200, 18000, 36000, 36000];

/// Parses a retry schedule: comma-separated whole seconds (`5,300,1800`), each at most a week;
/// an empty list means one attempt and no retries.
pub fn parse_retry_schedule(s: &str) -> Result<Vec<Duration>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(Vec::new());
    }
    s.split(',')
        .map(|part| {
            let part = part.trim();
            match part.parse::<u64>() {
                Ok(n) if n <= 7 * 24 * 3600 => Ok(Duration::from_secs(n)),
                Ok(_) => Err(format!("{part} s is longer than a week")),
                Err(_) => Err(format!("{part:?} is not a whole number of seconds")),
            }
        })
        .collect()
}

/// After `attempts_made` failed attempts, how long to wait before the next one; `None` when
/// the schedule is used up (the message has failed for good).
pub fn next_retry(schedule: &[Duration], attempts_made: u32) -> Option<Duration> {
    let i = usize::try_from(attempts_made).ok()?.checked_sub(1)?;
    schedule.get(i).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_public_status_has_its_event() {
        for s in TradeStatus::ALL {
            let t = event_type(CaseStatus::Trade(*s)).expect("trade event");
            assert_eq!(t, format!("registration.{}", s.as_str()));
        }
        for s in TaxStatus::ALL {
            let t = event_type(CaseStatus::Tax(*s)).expect("tax event");
            assert_eq!(t, format!("tax-registration.{}", s.as_str()));
        }
        // The names are the receivers' contract: derived, they must still be these.
        assert_eq!(
            event_types(),
            [
                "registration.initiated",
                "registration.form-rendered",
                "registration.submitted",
                "registration.completed",
                "registration.blocked",
                "registration.cancelled",
                "tax-registration.validated",
                "tax-registration.submitted",
                "tax-registration.completed",
                "tax-registration.rejected",
                "tax-registration.cancelled",
                "documents.updated",
            ]
        );
    }

    #[test]
    fn body_carries_the_case() {
        let id = Uuid::from_u128(1);
        let company = Uuid::from_u128(2);
        let e = CaseEvent {
            case_id: id,
            company_id: company,
            status: TradeStatus::Blocked.into(),
            previous_status: Some(TradeStatus::Submitted.into()),
            environment: "sandbox",
            client_reference: Some("crm-1"),
            reason: Some("Unterschrift fehlt"),
            at: OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap(),
        };
        let v: serde_json::Value = serde_json::from_str(&e.body().unwrap()).unwrap();
        assert_eq!(v["type"], "registration.blocked");
        assert_eq!(v["timestamp"], "2023-11-14T22:13:20Z");
        assert_eq!(v["data"]["trade_registration_id"], id.to_string());
        assert_eq!(v["data"]["company_id"], company.to_string());
        assert_eq!(v["data"]["previous_status"], "submitted");
        assert_eq!(v["data"]["reason"], "Unterschrift fehlt");
        let tax = CaseEvent {
            status: TaxStatus::Validated.into(),
            previous_status: None,
            ..e
        };
        let v: serde_json::Value = serde_json::from_str(&tax.body().unwrap()).unwrap();
        assert_eq!(v["type"], "tax-registration.validated");
        assert_eq!(v["data"]["tax_registration_id"], id.to_string());
        assert!(v["data"]["previous_status"].is_null());
        assert!(v["data"].get("trade_registration_id").is_none());
    }

    #[test]
    fn documents_event_names_each_document_and_what_it_replaces() {
        let docs = [
            UpdatedDocument {
                id: Uuid::from_u128(10),
                doc_type: DocumentType::TradeLicenceApplication,
                owner_index: Some(1),
                name: "GewA 1 - Jan Kowalski.pdf",
                replaces: Some(Uuid::from_u128(9)),
            },
            UpdatedDocument {
                id: Uuid::from_u128(11),
                doc_type: DocumentType::TaxRegistrationXml,
                owner_index: None,
                name: "ELSTER.xml",
                replaces: None,
            },
        ];
        let e = DocumentsEvent {
            case: CaseEvent {
                case_id: Uuid::from_u128(1),
                company_id: Uuid::from_u128(2),
                status: TradeStatus::FormRendered.into(),
                previous_status: None,
                environment: "production",
                client_reference: None,
                reason: Some("trade office assigned"),
                at: OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap(),
            },
            documents: &docs,
        };
        let v: serde_json::Value = serde_json::from_str(&e.body().unwrap()).unwrap();
        assert_eq!(v["type"], "documents.updated");
        assert_eq!(v["timestamp"], "2023-11-14T22:13:20Z");
        assert_eq!(
            v["data"]["trade_registration_id"],
            Uuid::from_u128(1).to_string()
        );
        assert_eq!(v["data"]["status"], "form-rendered");
        assert_eq!(v["data"]["reason"], "trade office assigned");
        assert!(v["data"]["client_reference"].is_null());
        assert!(v["data"].get("previous_status").is_none());
        let d = &v["data"]["documents"];
        assert_eq!(d.as_array().unwrap().len(), 2);
        assert_eq!(d[0]["id"], Uuid::from_u128(10).to_string());
        assert_eq!(d[0]["type"], "trade-licence-application");
        assert_eq!(d[0]["owner_index"], 1);
        assert_eq!(d[0]["name"], "GewA 1 - Jan Kowalski.pdf");
        assert_eq!(d[0]["replaces"], Uuid::from_u128(9).to_string());
        assert!(d[1]["owner_index"].is_null());
        assert!(d[1]["replaces"].is_null());
        let tax = DocumentsEvent {
            case: CaseEvent {
                status: TaxStatus::Validated.into(),
                ..e.case
            },
            ..e
        };
        let v: serde_json::Value = serde_json::from_str(&tax.body().unwrap()).unwrap();
        assert_eq!(
            v["data"]["tax_registration_id"],
            Uuid::from_u128(1).to_string()
        );
        assert!(v["data"].get("trade_registration_id").is_none());
    }

    #[test]
    fn subscriptions() {
        assert!(subscribed(None, "registration.completed"));
        let only = vec!["registration.completed".to_string()];
        assert!(subscribed(Some(&only), "registration.completed"));
        assert!(!subscribed(Some(&only), "registration.blocked"));
    }

    #[test]
    fn schedules() {
        let default: Vec<String> = DEFAULT_RETRY_SCHEDULE.iter().map(u64::to_string).collect();
        let parsed = parse_retry_schedule(&default.join(",")).unwrap();
        assert_eq!(parsed.len(), 7);
        assert_eq!(next_retry(&parsed, 0), None);
        assert_eq!(next_retry(&parsed, 1), Some(Duration::from_secs(5)));
        assert_eq!(next_retry(&parsed, 7), Some(Duration::from_secs(36000)));
        assert_eq!(next_retry(&parsed, 8), None);
        assert_eq!(parse_retry_schedule(" 1, 2 ").unwrap().len(), 2);
        assert_eq!(parse_retry_schedule("").unwrap(), Vec::<Duration>::new());
        assert!(parse_retry_schedule("1,x").is_err());
        assert!(parse_retry_schedule("1,,2").is_err());
        assert!(parse_retry_schedule("-1").is_err());
        assert!(parse_retry_schedule("999999999").is_err());
    }
}

//! The webhook messages (the outbox) a case's changes write, built from plain values.

/// Whether any of these status changes has a webhook event (otherwise the outbox is skipped).
pub(crate) fn has_events(history: &[crate::StatusChange]) -> bool {
    history
        .iter()
        .any(|h| domain::webhook::event_type(h.status).is_some())
}

/// A row of [`super::text::event_targets_query`].
pub(crate) struct EventTarget {
    /// The id the case's provider knows it by, which the payload names (not the case's key:
    /// docs/adr/0006-case-ids-per-provider.md).
    pub case_public_id: uuid::Uuid,
    pub endpoint_id: uuid::Uuid,
    /// The event types the endpoint subscribed to; `None` for all.
    pub events: Option<Vec<String>>,
    pub company_id: uuid::Uuid,
    /// The case's status as the transaction sees it.
    pub status: domain::case_state::CaseStatus,
    pub environment: String,
    pub client_reference: Option<String>,
}

/// A webhook message to write in the transaction of its status change (the outbox).
pub(crate) struct EventMessage {
    pub id: uuid::Uuid,
    pub endpoint_id: uuid::Uuid,
    pub event_type: &'static str,
    /// The exact text that is signed and sent.
    pub body: String,
    pub next_attempt_us: i64,
    pub at: time::OffsetDateTime,
}

/// The messages of a case's status changes: one per change that has an event and per target
/// that subscribed to it, changes first, then targets in the given order.
pub(crate) fn event_messages(
    history: &[crate::StatusChange],
    targets: &[EventTarget],
) -> Vec<EventMessage> {
    let mut messages = Vec::new();
    for h in history {
        for t in targets {
            let event = domain::webhook::CaseEvent {
                case_id: t.case_public_id,
                company_id: t.company_id,
                status: h.status,
                previous_status: h.previous_status,
                environment: &t.environment,
                client_reference: t.client_reference.as_deref(),
                reason: h.reason.as_deref(),
                at: h.at,
            };
            let (Some(event_type), Some(body)) = (event.event_type(), event.body()) else {
                continue;
            };
            if !domain::webhook::subscribed(t.events.as_deref(), event_type) {
                continue;
            }
            messages.push(EventMessage {
                id: uuid::Uuid::now_v7(),
                endpoint_id: t.endpoint_id,
                event_type,
                body,
                next_attempt_us: crate::micros(h.at),
                at: h.at,
            });
        }
    }
    messages
}

/// The `documents.updated` messages of a case whose `documents` were written (each replacing
/// the document in `replaces` at the same index, if any): one per target that subscribed to it.
pub(crate) fn documents_messages(
    reason: &str,
    documents: &[crate::DocumentRecord],
    replaces: &[Option<uuid::Uuid>],
    targets: &[EventTarget],
) -> Vec<EventMessage> {
    let event_type = domain::webhook::DOCUMENTS_UPDATED;
    let Some(at) = documents.iter().map(|d| d.created_at).max() else {
        return Vec::new();
    };
    let updated: Vec<domain::webhook::UpdatedDocument> = documents
        .iter()
        .zip(replaces)
        .map(|(d, r)| domain::webhook::UpdatedDocument {
            id: d.id,
            doc_type: d.doc_type,
            owner_index: d.owner_index,
            name: &d.name,
            replaces: *r,
        })
        .collect();
    targets
        .iter()
        .filter(|t| domain::webhook::subscribed(t.events.as_deref(), event_type))
        .filter_map(|t| {
            let body = domain::webhook::DocumentsEvent {
                case: domain::webhook::CaseEvent {
                    case_id: t.case_public_id,
                    company_id: t.company_id,
                    status: t.status,
                    previous_status: None,
                    environment: &t.environment,
                    client_reference: t.client_reference.as_deref(),
                    reason: Some(reason),
                    at,
                },
                documents: &updated,
            }
            .body()?;
            Some(EventMessage {
                id: uuid::Uuid::now_v7(),
                endpoint_id: t.endpoint_id,
                event_type,
                body,
                next_attempt_us: crate::micros(at),
                at,
            })
        })
        .collect()
}

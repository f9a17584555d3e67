//! The events a case's changes write, built from plain values: the provider's event log
//! (`events`, read by `GET /v1/events`) and the webhook messages (the outbox), one per endpoint
//! that subscribed. Both carry the same body, built once per event.

/// Whether any of these status changes has a webhook event (otherwise the outbox is skipped).
/// A field-change entry (an operator's change that keeps the status) has none.
pub(crate) fn has_events(history: &[crate::StatusChange]) -> bool {
    history
        .iter()
        .any(|h| !h.is_field_change() && domain::webhook::event_type(h.status).is_some())
}

/// A row of [`super::text::event_targets_query`]: the case, and one endpoint of its provider
/// (none when the provider has no endpoint: the query still answers the case, for the log).
pub(crate) struct EventTarget {
    /// The id the case's provider knows it by, which the payload names (not the case's key:
    /// docs/adr/0006-case-ids-per-provider.md).
    pub case_public_id: uuid::Uuid,
    pub provider_id: uuid::Uuid,
    pub endpoint_id: Option<uuid::Uuid>,
    /// The event types the endpoint subscribed to; `None` for all.
    pub events: Option<Vec<String>>,
    pub company_id: uuid::Uuid,
    /// The case's status as the transaction sees it.
    pub status: domain::case_state::CaseStatus,
    pub environment: String,
    pub client_reference: Option<String>,
}

impl EventTarget {
    /// The case part of an event about this target's case.
    fn case_event<'a>(
        &'a self,
        status: domain::case_state::CaseStatus,
        previous_status: Option<domain::case_state::CaseStatus>,
        reason: Option<&'a str>,
        at: time::OffsetDateTime,
    ) -> domain::webhook::CaseEvent<'a> {
        domain::webhook::CaseEvent {
            case_id: self.case_public_id,
            company_id: self.company_id,
            status,
            previous_status,
            environment: &self.environment,
            client_reference: self.client_reference.as_deref(),
            reason,
            at,
        }
    }
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

/// An entry of the provider's event log, written in the same transaction as its messages.
pub(crate) struct LoggedEvent {
    pub id: uuid::Uuid,
    pub provider_id: uuid::Uuid,
    pub company_id: uuid::Uuid,
    /// The id the provider knows the case by.
    pub case_public_id: uuid::Uuid,
    pub environment: String,
    pub event_type: &'static str,
    /// The body every endpoint's message carries.
    pub body: String,
    pub at: time::OffsetDateTime,
}

/// What a transaction writes for its events: the log entries and the outbox messages.
#[derive(Default)]
pub(crate) struct Events {
    pub logged: Vec<LoggedEvent>,
    pub messages: Vec<EventMessage>,
}

impl Events {
    /// Logs one event of the case of `targets` and queues it for every endpoint among them
    /// that subscribed to it.
    fn push(
        &mut self,
        targets: &[EventTarget],
        event_type: &'static str,
        body: String,
        at: time::OffsetDateTime,
    ) {
        let Some(case) = targets.first() else {
            return;
        };
        for t in targets {
            let Some(endpoint_id) = t.endpoint_id else {
                continue;
            };
            if domain::webhook::subscribed(t.events.as_deref(), event_type) {
                self.messages.push(EventMessage {
                    id: uuid::Uuid::now_v7(),
                    endpoint_id,
                    event_type,
                    body: body.clone(),
                    next_attempt_us: crate::micros(at),
                    at,
                });
            }
        }
        self.logged.push(LoggedEvent {
            id: uuid::Uuid::now_v7(),
            provider_id: case.provider_id,
            company_id: case.company_id,
            case_public_id: case.case_public_id,
            environment: case.environment.clone(),
            event_type,
            body,
            at,
        });
    }
}

/// The events of a case's status changes: one per change that has an event, logged, and queued
/// per target that subscribed to it; changes first, then targets in the given order.
pub(crate) fn event_messages(history: &[crate::StatusChange], targets: &[EventTarget]) -> Events {
    let mut events = Events::default();
    let Some(case) = targets.first() else {
        return events;
    };
    for h in history.iter().filter(|h| !h.is_field_change()) {
        let event = case.case_event(h.status, h.previous_status, h.reason.as_deref(), h.at);
        if let (Some(event_type), Some(body)) = (event.event_type(), event.body()) {
            events.push(targets, event_type, body, h.at);
        }
    }
    events
}

/// The `documents.updated` event of a case whose `documents` were written (each replacing the
/// document in `replaces` at the same index, if any): logged, and queued per target that
/// subscribed to it.
pub(crate) fn documents_messages(
    reason: &str,
    documents: &[crate::DocumentRecord],
    replaces: &[Option<uuid::Uuid>],
    targets: &[EventTarget],
) -> Events {
    let mut events = Events::default();
    let (Some(at), Some(case)) = (
        documents.iter().map(|d| d.created_at).max(),
        targets.first(),
    ) else {
        return events;
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
    let body = domain::webhook::DocumentsEvent {
        // The status is not changing, so there is no previous one.
        case: case.case_event(case.status, None, Some(reason), at),
        documents: &updated,
    }
    .body();
    if let Some(body) = body {
        events.push(targets, domain::webhook::DOCUMENTS_UPDATED, body, at);
    }
    events
}

//! `GET /v1/events`: the caller's event log, newest first (docs/api/events.md). Each entry
//! carries the body its webhook messages carried, exactly, so a platform that missed deliveries
//! reconciles from here.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use domain::Violations;
use domain::auth::Caller;
use domain::company::Environment;
use serde::{Deserialize, Serialize};
use store::{EventFilter, EventRecord, EventScope};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::cases::access;
use crate::envelope::{Envelope, Outcome, respond};
use crate::error::ApiError;
use crate::extract::ApiQuery;
use crate::openapi::responses::ValidationFailed;
use crate::state::AppState;

/// The query of the event log. A misspelt parameter is refused rather than ignored: it would
/// list every event.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventQuery {
    /// Only events of this type (`registration.completed`, `documents.updated`, ...).
    #[serde(rename = "type")]
    #[param(rename = "type", value_type = Option<crate::routes::webhooks::WebhookEventType>)]
    pub event_type: Option<String>,
    /// Only events of this case: its `trade_registration_id` or `tax_registration_id`.
    #[param(value_type = Option<String>, format = Uuid)]
    pub case_id: Option<String>,
    /// Only events of `sandbox` or of `production` cases.
    #[param(value_type = Option<Environment>)]
    pub environment: Option<String>,
    /// The `next_cursor` of the page before (opaque: it names the page's last event, one of
    /// the caller's own).
    #[param(pattern = "^[A-Za-z0-9_-]{22}$", example = "AZq1c2nXd8mH4pZk0f3x9g")]
    pub cursor: Option<String>,
    /// At most this many events (1 to 500, default 100).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

/// One event as its webhooks carried it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "019ac3a1-7f20-7b1e-8c4d-5e6f7a8b9c0d",
    "type": "registration.cancelled",
    "case_id": "019ac2f0-5b1e-7c3a-9d4e-2f6a8b0c1d2e",
    "company_id": "019ac2f0-5b1d-7e11-a2b3-c4d5e6f7a8b9",
    "environment": "sandbox",
    "created_at": "2026-11-27T09:41:12.204518Z",
    "payload": {
        "type": "registration.cancelled",
        "timestamp": "2026-11-27T09:41:12.204518Z",
        "data": {
            "trade_registration_id": "019ac2f0-5b1e-7c3a-9d4e-2f6a8b0c1d2e",
            "company_id": "019ac2f0-5b1d-7e11-a2b3-c4d5e6f7a8b9",
            "status": "cancelled",
            "previous_status": "form-rendered",
            "environment": "sandbox",
            "client_reference": "KD-2025-0042",
            "reason": "Gründung abgesagt"
        }
    }
}))]
pub struct EventItem {
    /// The event's id in the log (not a webhook message's id: each endpoint's message of the
    /// event has its own).
    pub id: Uuid,
    #[serde(rename = "type")]
    #[schema(example = "registration.completed")]
    pub event_type: String,
    /// The case, by the id its provider knows it by.
    pub case_id: Uuid,
    pub company_id: Uuid,
    pub environment: Environment,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// The body every endpoint's webhook message of the event carried, exactly (see the
    /// document's `webhooks`): `{"type", "timestamp", "data"}`.
    #[schema(value_type = Object)]
    pub payload: serde_json::Value,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EventPage {
    pub result: Outcome,
    pub message: String,
    /// Newest first.
    pub events: Vec<EventItem>,
    /// Pass as `cursor` for the next (older) page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// List events
///
/// The caller's events, newest first: a provider's key sees the events of every case it
/// created, a client company's key those of its company's cases, an operator key every event;
/// a key restricted to one environment only that environment's (naming the other in
/// `environment` is 409 `ENVIRONMENT_MISMATCH`).
/// Kept `FILING_RETENTION_DAYS` (90 by default, never fewer than 30), then pruned.
#[utoipa::path(get, path = "/v1/events", tag = "webhooks",
    operation_id = "list_events",
    params(EventQuery),
    responses(
        (status = 200, description = "A page of events", body = Envelope<EventPage>),
        (status = 409, description = "`ENVIRONMENT_MISMATCH`: a restricted key asked for the other environment", body = Envelope<crate::error::ErrorBody>),
        ValidationFailed,
    ))]
pub async fn list(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    ApiQuery(q): ApiQuery<EventQuery>,
) -> Result<Response, ApiError> {
    let (mut filter, before, limit) = checked(q)?;
    // A key restricted to one environment reads that environment's events only.
    filter.environment = access::environment_for(caller, filter.environment)?;
    let scope = match caller {
        Caller::Provider { company_id, .. } => EventScope::Provider(company_id),
        Caller::Client { company_id, .. } => EventScope::Company(company_id),
        Caller::Operator { .. } => EventScope::All,
    };
    let mut rows = state
        .repo
        .list_events(scope, &filter, before, limit + 1)
        .await?;
    let next_cursor = if rows.len() as i64 > limit {
        rows.truncate(limit as usize);
        rows.last().map(|r| crate::extract::cursor(r.id))
    } else {
        None
    };
    let events = rows.into_iter().map(item).collect::<Result<Vec<_>, _>>()?;
    Ok(respond(
        StatusCode::OK,
        EventPage {
            result: Outcome::Success,
            message: format!("{} events", events.len()),
            events,
            next_cursor,
        },
    ))
}

/// The filter, cursor and limit of a query; every broken parameter in one 422.
fn checked(q: EventQuery) -> Result<(EventFilter, Option<Uuid>, i64), ApiError> {
    let mut errs = Violations::new();
    let known = |t: &str| domain::webhook::event_types().contains(&t);
    if q.event_type.as_deref().is_some_and(|t| !known(t)) {
        errs.push(
            "type",
            "invalid_value",
            format!(
                "must be one of: {}",
                domain::webhook::event_types().join(", ")
            ),
        );
    }
    let case_id = crate::extract::query_param(
        "case_id",
        q.case_id.as_deref(),
        |c| Uuid::try_parse(c).ok(),
        "must be a case id (UUID)",
        &mut errs,
    );
    let environment = crate::extract::query_param(
        "environment",
        q.environment.as_deref(),
        Environment::parse,
        "must be sandbox or production",
        &mut errs,
    );
    let (before, limit) = crate::extract::page_params(
        "cursor",
        q.cursor.as_deref(),
        crate::extract::parse_cursor,
        q.limit,
        &mut errs,
    );
    errs.finish(())?;
    let filter = EventFilter {
        event_type: q
            .event_type
            .as_deref()
            .and_then(domain::webhook::EventType::parse),
        case_id,
        environment,
    };
    Ok((filter, before, limit))
}

fn item(r: EventRecord) -> Result<EventItem, ApiError> {
    let payload = serde_json::from_str(&r.payload)
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("stored event {}: {e}", r.id)))?;
    Ok(EventItem {
        id: r.id,
        event_type: r.event_type.as_str().to_owned(),
        case_id: r.case_id,
        company_id: r.company_id,
        environment: r.environment,
        created_at: r.created_at,
        payload,
    })
}

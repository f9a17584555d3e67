//! Webhook endpoints of a provider (docs/api/webhooks.md): register, list, read, delete, rotate the
//! secret, read the delivery attempts and retry a message that was given up. Provider keys only; a client company's or an
//! operator's key is refused with 403.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use domain::Violations;
use domain::auth::Caller;
use serde::{Deserialize, Serialize};
use store::WebhookEndpoint;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::cases::webhook_endpoints as endpoints;
use crate::envelope::{Envelope, Outcome, respond};
use crate::error::{ApiError, ErrorBody, ErrorCode};
use crate::extract::{ApiJson, ApiQuery, PathId, PathIds};
use crate::openapi::responses::{EndpointErrors, InvalidJson, ProviderForbidden};
use crate::state::AppState;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateEndpointRequest {
    /// Where events are POSTed: an http(s) URL of a public host (at most 2048 characters, no
    /// spaces, no `#fragment`), taken as sent. Public means globally reachable per the IANA
    /// special-purpose address registries, for the literal address and for every address the
    /// name resolves to (checked again at each delivery).
    #[schema(
        example = "https://platform.example.com/hooks/filing",
        format = "uri",
        max_length = 2048,
        pattern = "^[hH][tT][tT][pP][sS]?://[^\\s#]+$"
    )]
    pub url: String,
    /// Event types to receive (at least one; a repeated one counts once); omit (or null) for
    /// every event, including types added later.
    #[serde(default)]
    #[schema(
        value_type = Option<Vec<WebhookEventType>>,
        min_items = 1,
        example = json!(["registration.submitted", "registration.completed"])
    )]
    pub events: Option<Vec<String>>,
}

/// A webhook event type in the OpenAPI document: a string schema whose values are
/// [`domain::webhook::event_types`], derived from the lifecycles (no list kept here).
pub struct WebhookEventType;

impl utoipa::PartialSchema for WebhookEventType {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "A webhook event type. `registration.*` and `tax-registration.*` follow a case's \
                 status (the\nname ends with the status entered); `documents.updated` announces \
                 documents a case got, or\nhad replaced, without a status change (an office \
                 assigned later), and lists each with the\nid of the one it replaces.",
            ))
            .enum_values(Some(domain::webhook::event_types().iter().copied()))
            .into()
    }
}

impl ToSchema for WebhookEventType {
    fn name() -> std::borrow::Cow<'static, str> {
        "WebhookEventType".into()
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EndpointView {
    pub id: Uuid,
    pub url: String,
    /// Subscribed event types; null means every event.
    pub events: Option<Vec<String>>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Until when the secret before the last rotation still signs (absent when none does).
    #[serde(
        with = "time::serde::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub previous_secret_expires_at: Option<OffsetDateTime>,
    pub delivery_state: DeliveryState,
}

/// An endpoint's circuit breaker: after `FILING_WEBHOOK_BREAKER_FAILURES` (default 5) failed
/// attempts in a row it opens, and the endpoint gets no attempts until `open_until` (the
/// cool-down, default 60 s); then it is half open: one attempt, whose success closes it and
/// whose failure opens it again. Messages wait meanwhile, keeping their attempt counts.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryState {
    pub circuit: Circuit,
    /// Failed attempts in a row (0 after a delivery).
    #[schema(example = 0)]
    pub consecutive_failures: i32,
    /// Open: when the cool-down ends; half open: when it ended. Absent when closed.
    #[serde(
        with = "time::serde::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub open_until: Option<OffsetDateTime>,
}

/// `closed`: attempts as the limits allow; `open`: none until `open_until`; `half_open`: one
/// attempt at a time.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Circuit {
    Closed,
    Open,
    HalfOpen,
}

impl DeliveryState {
    fn new(c: store::EndpointCircuit, now: OffsetDateTime) -> Self {
        let circuit = match c.state(store::micros(now)) {
            store::CircuitState::Closed => Circuit::Closed,
            store::CircuitState::Open => Circuit::Open,
            store::CircuitState::HalfOpen => Circuit::HalfOpen,
        };
        Self {
            circuit,
            consecutive_failures: c.consecutive_failures,
            open_until: c.open_until_us.and_then(|us| {
                OffsetDateTime::from_unix_timestamp_nanos(i128::from(us) * 1000).ok()
            }),
        }
    }
}

impl EndpointView {
    fn new(e: &WebhookEndpoint, now: OffsetDateTime) -> Self {
        Self {
            id: e.id,
            url: e.url.clone(),
            events: e.events.clone(),
            created_at: e.created_at,
            previous_secret_expires_at: e.previous_secret_expires_at.filter(|t| *t > now),
            delivery_state: DeliveryState::new(e.circuit, now),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedEndpoint {
    pub result: Outcome,
    pub message: String,
    #[serde(flatten)]
    pub endpoint: EndpointView,
    /// The signing secret (`whsec_` + base64), shown only here and on rotation.
    pub secret: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EndpointResponse {
    pub result: Outcome,
    pub message: String,
    #[serde(flatten)]
    pub endpoint: EndpointView,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EndpointList {
    pub result: Outcome,
    pub message: String,
    /// Oldest first.
    pub endpoints: Vec<EndpointView>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RotatedSecret {
    pub result: Outcome,
    pub message: String,
    pub id: Uuid,
    /// The new secret, shown only here.
    pub secret: String,
    /// Until then deliveries carry signatures of both the new and the old secret.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub previous_secret_expires_at: OffsetDateTime,
}

/// What a test ping to an endpoint got back.
#[derive(Debug, Serialize, ToSchema)]
pub struct PingResult {
    pub result: Outcome,
    pub message: String,
    /// The endpoint.
    pub id: Uuid,
    /// The ping's `webhook-id`.
    pub message_id: Uuid,
    /// Whether the receiver answered 2xx.
    pub delivered: bool,
    /// The receiver's status code; null when no answer came.
    pub status_code: Option<u16>,
    /// Why it was not delivered (`HTTP 500`, `timed out`, a refused target, ...), as a
    /// delivery attempt would record it; null when delivered.
    pub error: Option<String>,
    pub duration_ms: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeletedEndpoint {
    pub result: Outcome,
    pub message: String,
    pub id: Uuid,
}

/// Register a webhook endpoint
///
/// Registers an endpoint. Every later status change of the provider's cases (trade and tax,
/// sandbox and production), and every `documents.updated`, is delivered to it (or those of the
/// types it lists), signed with the returned secret.
#[utoipa::path(post, path = "/v1/webhook-endpoints", tag = "webhooks",
    operation_id = "create_webhook_endpoint",
    request_body = CreateEndpointRequest,
    responses(
        (status = 201, description = "The endpoint and its secret (shown once)", body = Envelope<CreatedEndpoint>),
        InvalidJson,
        ProviderForbidden,
        (status = 409, description = "`WEBHOOK_ENDPOINT_LIMIT` (20 per provider) or `IDEMPOTENCY_KEY_IN_USE`", body = Envelope<ErrorBody>),
        (status = 422, description = "`VALIDATION_FAILED`: a URL that is not http(s) or names (or resolves to) an address that is not globally reachable, unknown event types; or `IDEMPOTENCY_KEY_REUSED`", body = Envelope<ErrorBody>),
    ))]
pub async fn create(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    req: Result<ApiJson<CreateEndpointRequest>, ApiError>,
) -> Result<Response, ApiError> {
    // The role first: a key that may not create gets 403 whatever its body.
    let me = endpoints::provider_only(caller)?;
    let ApiJson(req) = req?;
    let (endpoint, secret) = endpoints::create(&state, me, req.url, req.events).await?;
    Ok(respond(
        StatusCode::CREATED,
        CreatedEndpoint {
            result: Outcome::Success,
            message: "webhook endpoint created; the secret is shown only once".into(),
            endpoint: EndpointView::new(&endpoint, endpoint.created_at),
            secret,
        },
    ))
}

/// List webhook endpoints
///
/// The caller's endpoints, oldest first (secrets are not shown).
#[utoipa::path(get, path = "/v1/webhook-endpoints", tag = "webhooks",
    operation_id = "list_webhook_endpoints",
    responses(
        (status = 200, description = "The provider's endpoints", body = Envelope<EndpointList>),
        ProviderForbidden,
    ))]
pub async fn list(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
) -> Result<Response, ApiError> {
    let me = endpoints::provider_only(caller)?;
    let now = OffsetDateTime::now_utc();
    let endpoints: Vec<EndpointView> = state
        .repo
        .list_webhook_endpoints(me)
        .await?
        .iter()
        .map(|e| EndpointView::new(e, now))
        .collect();
    Ok(respond(
        StatusCode::OK,
        EndpointList {
            result: Outcome::Success,
            message: format!("{} webhook endpoints", endpoints.len()),
            endpoints,
        },
    ))
}

/// Read a webhook endpoint
///
/// One endpoint of the caller, with its `delivery_state`: whether its circuit breaker holds
/// deliveries back after failed attempts in a row.
#[utoipa::path(get, path = "/v1/webhook-endpoints/{endpoint_id}", tag = "webhooks",
    operation_id = "get_webhook_endpoint",
    params(("endpoint_id" = Uuid, Path, description = "The endpoint's id")),
    responses(
        (status = 200, description = "The endpoint", body = Envelope<EndpointResponse>),
        EndpointErrors,
    ))]
pub async fn get(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
) -> Result<Response, ApiError> {
    let e = endpoints::own(&state, caller, id).await?;
    Ok(respond(
        StatusCode::OK,
        EndpointResponse {
            result: Outcome::Success,
            message: "webhook endpoint".into(),
            endpoint: EndpointView::new(&e, OffsetDateTime::now_utc()),
        },
    ))
}

/// Delete a webhook endpoint
///
/// Deletes an endpoint; its undelivered messages are given up.
#[utoipa::path(delete, path = "/v1/webhook-endpoints/{endpoint_id}", tag = "webhooks",
    operation_id = "delete_webhook_endpoint",
    params(("endpoint_id" = Uuid, Path, description = "The endpoint's id")),
    responses(
        (status = 200, description = "Deleted", body = Envelope<DeletedEndpoint>),
        EndpointErrors,
    ))]
pub async fn delete(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
) -> Result<Response, ApiError> {
    endpoints::delete(&state, caller, id).await?;
    Ok(respond(
        StatusCode::OK,
        DeletedEndpoint {
            result: Outcome::Success,
            message: "webhook endpoint deleted".into(),
            id,
        },
    ))
}

/// Rotate an endpoint's signing secret
///
/// Replaces the signing secret. For 24 hours every delivery is signed with both the new and
/// the old secret (two space-separated signatures), so receivers can switch without losing
/// a delivery.
#[utoipa::path(post, path = "/v1/webhook-endpoints/{endpoint_id}/rotate-secret", tag = "webhooks",
    operation_id = "rotate_webhook_secret",
    params(
        ("endpoint_id" = Uuid, Path, description = "The endpoint's id"),
    ),
    responses(
        (status = 200, description = "The new secret (shown once)", body = Envelope<RotatedSecret>),
        EndpointErrors,
    ))]
pub async fn rotate_secret(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
) -> Result<Response, ApiError> {
    let (secret, until) = endpoints::rotate_secret(&state, caller, id).await?;
    Ok(respond(
        StatusCode::OK,
        RotatedSecret {
            result: Outcome::Success,
            message: "secret rotated; the old one keeps signing for 24 hours".into(),
            id,
            secret,
            previous_secret_expires_at: until,
        },
    ))
}

/// Send a test event
///
/// Sends a signed `ping` event to the endpoint now and answers with what the receiver said:
/// the same target checks, signing (`webhook-id`, `webhook-timestamp`, `webhook-signature`) and
/// timeout as every delivery, whichever events the endpoint subscribed to. Nothing is stored or
/// retried; the answer is 200 whether or not the receiver took it (`delivered`).
#[utoipa::path(post, path = "/v1/webhook-endpoints/{endpoint_id}/test", tag = "webhooks",
    operation_id = "test_webhook_endpoint",
    params(
        ("endpoint_id" = Uuid, Path, description = "The endpoint's id"),
    ),
    responses(
        (status = 200, description = "Sent; `delivered` says whether the receiver answered 2xx", body = Envelope<PingResult>),
        EndpointErrors,
    ))]
pub async fn test_endpoint(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
) -> Result<Response, ApiError> {
    let (sent, delivered) = endpoints::ping(&state, caller, id).await?;
    Ok(respond(
        StatusCode::OK,
        PingResult {
            result: Outcome::Success,
            message: if delivered {
                "ping delivered".into()
            } else {
                "ping sent; the receiver did not take it".into()
            },
            id,
            message_id: sent.message_id,
            delivered,
            status_code: sent.status_code,
            error: sent.error,
            duration_ms: sent.duration_ms,
        },
    ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveryQuery {
    /// The `next_cursor` of the previous page (opaque: it names that page's last attempt).
    #[param(
        pattern = "^[A-Za-z0-9_-]{27}$",
        example = "AZq1c2nXd8mH4pZk0f3x9gAAAAM"
    )]
    pub before: Option<String>,
    /// 1 to 500, default 100.
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryView {
    /// The `webhook-id` header of the message (the same on every attempt).
    pub message_id: Uuid,
    pub event_type: String,
    /// The trade or tax registration the event is about: its `trade_registration_id` or
    /// `tax_registration_id`, as in the event's body.
    pub case_id: Uuid,
    /// 1 for the first attempt.
    pub attempt: i32,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub attempted_at: OffsetDateTime,
    /// The HTTP status the endpoint answered; null when no answer came.
    pub status_code: Option<i32>,
    /// Why the attempt failed (HTTP status, timeout, connection error, refused address).
    pub error: Option<String>,
    pub duration_ms: i64,
    /// This attempt's outcome: `delivered`, `retrying` or `failed` (given up).
    pub outcome: String,
    /// The message now: `pending`, `delivered` or `failed`.
    pub message_status: String,
    /// When a pending message is tried next.
    #[serde(
        with = "time::serde::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub next_attempt_at: Option<OffsetDateTime>,
}

/// The answer of a newest-first list of an endpoint, its `$items` `$View`s, and the cursor of the
/// next page: the same for every list.
macro_rules! newest_first_page {
    ($Page:ident, $items:ident: $View:ident) => {
        #[derive(Debug, Serialize, ToSchema)]
        pub struct $Page {
            pub result: Outcome,
            pub message: String,
            /// Newest first.
            pub $items: Vec<$View>,
            /// Pass as `before` for the next (older) page; absent on the last page.
            #[serde(skip_serializing_if = "Option::is_none")]
            pub next_cursor: Option<String>,
        }
    };
}

newest_first_page!(DeliveryPage, deliveries: DeliveryView);

/// A newest-first page of the rows of the caller's endpoint `id`, and the cursor of the next
/// (older) page: the endpoint checked first (403, 404), then the `before` cursor (opaque: it
/// names the page's last row, one of the endpoint's own, read by `parse`) and the limit of
/// `page` added to what the route found wrong with its query already (`errs`, one 422), then
/// `read` with the cursor and the limit, asked for one row more to tell whether an older page
/// follows (`cursor`: a row's cursor, beside `parse` in one pair).
async fn endpoint_page<T, C>(
    state: &AppState,
    caller: Caller,
    id: Uuid,
    (before, limit): (Option<&str>, Option<i64>),
    mut errs: Violations,
    (parse, cursor): (impl Fn(&str) -> Option<C>, impl Fn(&T) -> String),
    read: impl AsyncFnOnce(Option<C>, i64) -> store::Result<Vec<T>>,
) -> Result<(Vec<T>, Option<String>), ApiError> {
    endpoints::own(state, caller, id).await?;
    let (before, limit) = crate::extract::page_params("before", before, parse, limit, &mut errs);
    errs.finish(())?;
    let mut rows = read(before, limit + 1).await?;
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let next = more.then(|| rows.last().map(&cursor)).flatten();
    Ok((rows, next))
}

/// List delivery attempts
///
/// Delivery attempts to an endpoint, newest first.
#[utoipa::path(get, path = "/v1/webhook-endpoints/{endpoint_id}/deliveries", tag = "webhooks",
    operation_id = "list_webhook_deliveries",
    params(("endpoint_id" = Uuid, Path, description = "The endpoint's id"), DeliveryQuery),
    responses(
        // Its link to the retry: `openapi::SharedLinks`.
        (status = 200, description = "A page of attempts", body = Envelope<DeliveryPage>),
        EndpointErrors,
        (status = 422, description = "`VALIDATION_FAILED`: bad cursor or limit", body = Envelope<ErrorBody>),
    ))]
pub async fn deliveries(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
    ApiQuery(q): ApiQuery<DeliveryQuery>,
) -> Result<Response, ApiError> {
    let read = async |before, limit| state.repo.list_webhook_attempts(id, before, limit).await;
    let page = (q.before.as_deref(), q.limit);
    let (rows, next_cursor) = endpoint_page(
        &state,
        caller,
        id,
        page,
        Violations::new(),
        (
            crate::extract::parse_attempt_cursor,
            |r: &store::WebhookAttemptRecord| {
                crate::extract::attempt_cursor(r.attempt.message_id, r.attempt.attempt)
            },
        ),
        read,
    )
    .await?;
    let deliveries: Vec<DeliveryView> = rows
        .into_iter()
        .map(|r| DeliveryView {
            message_id: r.attempt.message_id,
            event_type: r.event_type.as_str().to_owned(),
            case_id: r.case_id,
            attempt: r.attempt.attempt,
            attempted_at: r.attempt.at,
            status_code: r.attempt.status_code,
            error: r.attempt.error,
            duration_ms: r.attempt.duration_ms,
            outcome: r.outcome,
            message_status: r.message_state.as_str().to_owned(),
            next_attempt_at: r.next_attempt_at,
        })
        .collect();
    Ok(respond(
        StatusCode::OK,
        DeliveryPage {
            result: Outcome::Success,
            message: format!("{} delivery attempts", deliveries.len()),
            deliveries,
            next_cursor,
        },
    ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MessageQuery {
    /// Only messages in this state: `pending` (queued, waiting for an attempt), `delivered`
    /// or `failed` (given up; see the retry).
    #[param(pattern = "^(pending|delivered|failed)$")]
    pub state: Option<String>,
    /// The `next_cursor` of the previous page (opaque: it names that page's last message).
    #[param(pattern = "^[A-Za-z0-9_-]{22}$", example = "AZq1c2nXd8mH4pZk0f3x9g")]
    pub before: Option<String>,
    /// 1 to 500, default 100.
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MessageView {
    /// The `webhook-id` header of its attempts.
    pub message_id: Uuid,
    pub event_type: String,
    /// The trade or tax registration the event is about: its `trade_registration_id` or
    /// `tax_registration_id`, as in the event's body.
    pub case_id: Uuid,
    /// `pending`, `delivered` or `failed`.
    pub state: String,
    /// Attempts made so far (each in the deliveries list).
    pub attempts: i32,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When a pending message is tried next. One whose time has passed waits for an earlier
    /// event of its case at this endpoint: events of a case go out in order.
    #[serde(
        with = "time::serde::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub next_attempt_at: Option<OffsetDateTime>,
    /// When it was delivered or given up.
    #[serde(
        with = "time::serde::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub finished_at: Option<OffsetDateTime>,
}

newest_first_page!(MessagePage, messages: MessageView);

/// List an endpoint's messages
///
/// The messages queued for an endpoint, newest first, whether or not an attempt was made yet:
/// the deliveries list shows attempts only, so a message waiting behind a failing one of its
/// case shows here.
#[utoipa::path(get, path = "/v1/webhook-endpoints/{endpoint_id}/messages", tag = "webhooks",
    operation_id = "list_webhook_messages",
    params(("endpoint_id" = Uuid, Path, description = "The endpoint's id"), MessageQuery),
    responses(
        // Its link to the retry: `openapi::SharedLinks`.
        (status = 200, description = "A page of messages", body = Envelope<MessagePage>),
        EndpointErrors,
        (status = 422, description = "`VALIDATION_FAILED`: unknown state, bad cursor or limit", body = Envelope<ErrorBody>),
    ))]
pub async fn messages(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
    ApiQuery(q): ApiQuery<MessageQuery>,
) -> Result<Response, ApiError> {
    let mut errs = Violations::new();
    let wanted = q.state.as_deref().and_then(|s| {
        let known = store::MessageState::parse(s);
        if known.is_none() {
            errs.push(
                "state",
                "invalid_value",
                "must be pending, delivered or failed",
            );
        }
        known
    });
    let read = async |before, limit| {
        let repo = &state.repo;
        repo.list_webhook_messages(id, wanted, before, limit).await
    };
    let page = (q.before.as_deref(), q.limit);
    let (rows, next_cursor) = endpoint_page(
        &state,
        caller,
        id,
        page,
        errs,
        (
            crate::extract::parse_cursor,
            |r: &store::WebhookMessageRecord| crate::extract::cursor(r.id),
        ),
        read,
    )
    .await?;
    let messages: Vec<MessageView> = rows
        .into_iter()
        .map(|r| MessageView {
            message_id: r.id,
            event_type: r.event_type.as_str().to_owned(),
            case_id: r.case_id,
            state: r.state.as_str().to_owned(),
            attempts: r.attempts,
            created_at: r.created_at,
            next_attempt_at: r.next_attempt_at,
            finished_at: r.finished_at,
        })
        .collect();
    Ok(respond(
        StatusCode::OK,
        MessagePage {
            result: Outcome::Success,
            message: format!("{} messages", messages.len()),
            messages,
            next_cursor,
        },
    ))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RetryAnswer {
    pub result: Outcome,
    pub message: String,
    pub message_id: Uuid,
    /// Always `pending`: the message is queued for an attempt.
    #[schema(example = "pending")]
    pub message_status: String,
}

/// Retry a failed message
///
/// Queues a message the service gave up on (`failed` after its retry schedule) for one more
/// attempt now; if that fails too, it is `failed` again. A message still `pending` is already
/// queued (200, nothing changes); a `delivered` one is 409. 200 rather than 202, like every
/// action that is not a create (docs/spec/decisions.md §2: "Other actions: 200"). The attempt shows in the deliveries
/// list like any other; within its case the message goes before the case's later pending ones.
#[utoipa::path(post, path = "/v1/webhook-endpoints/{endpoint_id}/messages/{message_id}/retry",
    tag = "webhooks",
    operation_id = "retry_webhook_message",
    params(
        ("endpoint_id" = Uuid, Path, description = "The endpoint's id"),
        ("message_id" = Uuid, Path, description = "The message's id (`message_id` in the deliveries list, the `webhook-id` header of its attempts)"),
    ),
    responses(
        (status = 200, description = "Queued for an attempt", body = Envelope<RetryAnswer>),
        ProviderForbidden,
        (status = 404, description = "No such endpoint of the caller, or no such message of the endpoint (`NOT_FOUND`)", body = Envelope<ErrorBody>),
        (status = 409, description = "`WEBHOOK_MESSAGE_DELIVERED`: the receiver already accepted it", body = Envelope<ErrorBody>),
    ))]
pub async fn retry_message(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathIds(endpoint_id, message_id): PathIds,
) -> Result<Response, ApiError> {
    endpoints::own(&state, caller, endpoint_id).await?;
    let now = crate::clock::now_micros();
    let before = state
        .repo
        .retry_webhook_message(endpoint_id, message_id, store::micros(now))
        .await?
        .ok_or(ApiError::NotFound)?;
    let message = match before.as_str() {
        "requeued" => {
            state.wake_webhooks();
            "queued for one more attempt now"
        }
        "pending" => "already queued; its next attempt is in the deliveries list",
        // The endpoint was deleted between the check above and the retry.
        "failed" => return Err(ApiError::NotFound),
        _ => {
            return Err(ApiError::Conflict {
                code: ErrorCode::WebhookMessageDelivered,
                message: format!(
                    "message {message_id} was delivered: the receiver accepted it, there is nothing to retry"
                ),
            });
        }
    };
    Ok(respond(
        StatusCode::OK,
        RetryAnswer {
            result: Outcome::Success,
            message: message.into(),
            message_id,
            message_status: "pending".into(),
        },
    ))
}

//! The operator API (operator keys only): listing cases to work on. Reading any case goes
//! through the ordinary GET endpoints, which operators may call for every case.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use domain::auth::Caller;
use domain::company::Environment;
use domain::lifecycle::{Lifecycle, TaxStatus, TradeStatus};
use serde::{Deserialize, Serialize};
use store::CaseKind;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::cases;
use crate::cases::access::{self, operator_only};
use crate::cases::lists::OperatorListQuery;
use domain::lifecycle::Actor;

use crate::cases::steps::{self, Moved, TaxTransitionRequest, TradeTransitionRequest};
use crate::envelope::{Envelope, Outcome, respond};
use crate::error::{ApiError, ErrorBody};
use crate::extract::ApiQuery;
use crate::openapi::responses::{
    CaseListErrors, OperatorCaseErrors, OperatorOwnerErrors, ValidationFailed,
};
use crate::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
pub struct CaseItem {
    /// The case's key, which the operator routes take.
    pub id: Uuid,
    /// The id the provider knows the case by (its `trade_registration_id` or
    /// `tax_registration_id`). Equals `id` unless a provider chose a tax registration id that
    /// another case had as its key already: those ids are unique per provider, keys across
    /// the service.
    pub public_id: Uuid,
    pub company_id: Uuid,
    /// The client company's name.
    pub company_name: String,
    pub provider_id: Uuid,
    pub environment: Environment,
    pub package: String,
    pub status: String,
    /// The provider's own reference for the case, as its request gave it.
    pub client_reference: Option<String>,
    /// A trade registration's receiving office (its directory key), a tax registration's tax
    /// office (its number); `null` while none is determined.
    pub office_key: Option<String>,
    /// A trade registration's receiving office's name; `null` for tax registrations.
    pub office_name: Option<String>,
    /// A tax registration's legal form (`ug`, `gmbh`, `gbr`, `egbr`, `einzelunternehmen`); `null` for trade
    /// registrations.
    pub legal_form: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

/// The cases of one status.
#[derive(Debug, Serialize, ToSchema)]
pub struct StatusCount {
    pub status: String,
    pub count: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CasePage {
    pub result: Outcome,
    pub message: String,
    /// In the order asked for (`order`): oldest first unless `newest`.
    pub cases: Vec<CaseItem>,
    /// Pass as `after` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Uuid>,
    /// With `counts=true`: the cases of the environment, provider and office asked for (not
    /// of `status` or `q`) by status, every status of the kind in its lifecycle's order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Vec<StatusCount>>,
}

async fn list(
    state: &AppState,
    caller: Caller,
    kind: CaseKind,
    query: OperatorListQuery,
) -> Result<Response, ApiError> {
    let page = cases::lists::operator_case_page(state, caller, kind, &query).await?;
    let cases: Vec<CaseItem> = page
        .items
        .into_iter()
        .map(|r| CaseItem {
            id: r.id,
            public_id: r.public_id,
            company_id: r.company_id,
            company_name: r.company_name,
            provider_id: r.provider_id,
            environment: r.environment,
            package: r.package.as_str().into(),
            status: r.status.as_str().into(),
            client_reference: r.client_reference,
            office_key: r.office_key,
            office_name: r.office_name,
            legal_form: r.legal_form.map(|f| f.as_str().to_owned()),
            created_at: r.created_at,
        })
        .collect();
    let counts = page.counts.map(|counts| {
        counts
            .into_iter()
            .map(|(status, count)| StatusCount {
                status: status.as_str().into(),
                count,
            })
            .collect()
    });
    Ok(respond(
        StatusCode::OK,
        CasePage {
            result: Outcome::Success,
            message: format!("{} cases", cases.len()),
            cases,
            next_cursor: page.next_cursor,
            counts,
        },
    ))
}

/// Which end of the list a page starts from.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)] // documents the query; `OperatorListQuery` reads it
pub enum ListOrder {
    Oldest,
    Newest,
}

/// The query parameters of both case lists but `status`, whose values differ (parsed as
/// [`OperatorListQuery`]). An empty value counts as left out.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // documents the query; `OperatorListQuery` reads it
pub struct CasePageParams {
    /// Only cases of this environment; `production` when left out (sandbox cases are never filed)
    environment: Option<Environment>,
    /// Only cases of this provider
    provider_id: Option<Uuid>,
    /// Only cases of this office: a trade registration's receiving office (its directory key,
    /// e.g. `11000000`), a tax registration's tax office (its number, e.g. `1116`)
    #[param(min_length = 1, max_length = 64, pattern = r"^[^\x00-\x1F\x7F-\x9F]+$")]
    office: Option<String>,
    /// A search: a case's id (or the id its provider knows it by), a five-digit postal code
    /// (the establishment's, a tax registration's company address's), or words, each of which
    /// the company name, the client reference or a person's name (owners; directors or
    /// partners) contains, ignoring case; words of fewer than three characters are left out,
    /// and one must have three or more; no control characters
    #[param(
        max_length = 200,
        pattern = r"^[^\x00-\x1F\x7F-\x9F]*[^\s\x00-\x1F\x7F-\x9F]{3}[^\x00-\x1F\x7F-\x9F]*$"
    )]
    q: Option<String>,
    /// `oldest` first (the default) or `newest` first
    #[param(inline)]
    order: Option<ListOrder>,
    /// The `next_cursor` of the previous page
    after: Option<Uuid>,
    /// 1 to 500, default 100
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
    /// `true`: the page comes with the cases counted by status (`counts`)
    counts: Option<bool>,
}

/// List trade registrations to work on
///
/// Trade registrations to work on, oldest or newest first, filtered by status, environment,
/// provider, office and a search, optionally counted by status.
#[utoipa::path(get, path = "/v1/operator/trade-registrations", tag = "operator",
    params(("status" = Option<TradeStatus>, Query, description = "Only cases in this status"), CasePageParams),
    responses(
        (status = 200, description = "A page of cases", body = Envelope<CasePage>),
        CaseListErrors,
    ))]
pub async fn list_trade(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    ApiQuery(q): ApiQuery<OperatorListQuery>,
) -> Result<Response, ApiError> {
    list(&state, caller, CaseKind::Trade, q).await
}

/// List tax registrations to work on
///
/// Tax registrations to work on, oldest or newest first, filtered by status, environment,
/// provider, office and a search, optionally counted by status.
#[utoipa::path(get, path = "/v1/operator/tax-registrations", tag = "operator",
    params(("status" = Option<TaxStatus>, Query, description = "Only cases in this status"), CasePageParams),
    responses(
        (status = 200, description = "A page of cases", body = Envelope<CasePage>),
        CaseListErrors,
    ))]
pub async fn list_tax(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    ApiQuery(q): ApiQuery<OperatorListQuery>,
) -> Result<Response, ApiError> {
    list(&state, caller, CaseKind::Tax, q).await
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OperatorTransitionResponse {
    pub result: Outcome,
    pub message: String,
    pub id: Uuid,
    pub status: String,
    pub previous_status: String,
}

/// An operator's step on the case `id` (a `what`): `step` takes it as the calling operator and
/// tells what moved, which the answer names.
async fn operator_step<L: Lifecycle>(
    caller: Caller,
    id: Uuid,
    what: &str,
    step: impl AsyncFnOnce(Actor) -> Result<Moved<L>, ApiError>,
) -> Result<Response, ApiError> {
    let actor = Actor::Operator(operator_only(caller)?);
    let moved = step(actor).await?;
    Ok(respond(
        StatusCode::OK,
        OperatorTransitionResponse {
            result: Outcome::Success,
            message: format!("{what} is now {}", moved.status.as_str()),
            id,
            status: moved.status.as_str().into(),
            previous_status: moved.previous.as_str().into(),
        },
    ))
}

/// Move a trade registration to another status
///
/// Moves a trade registration along its lifecycle, with a reason for the
/// history. Forbidden moves answer 409 `INVALID_STATE_TRANSITION` naming the allowed ones.
#[utoipa::path(post, path = "/v1/operator/trade-registrations/{trade_registration_id}/transition", tag = "operator",
    params(("trade_registration_id" = Uuid, Path, description = "The case")),
    request_body = TradeTransitionRequest,
    responses(
        (status = 200, description = "Moved", body = Envelope<OperatorTransitionResponse>),
        OperatorCaseErrors,
        (status = 409, description = "`INVALID_STATE_TRANSITION`", body = Envelope<ErrorBody>),
        (status = 422, description = "`VALIDATION_FAILED`: unknown status, `completed` without a licence, `blocked` without a reason", body = Envelope<ErrorBody>),
    ))]
pub async fn transition_trade(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    crate::extract::PathId(id): crate::extract::PathId,
    crate::extract::ApiJson(input): crate::extract::ApiJson<TradeTransitionRequest>,
) -> Result<Response, ApiError> {
    operator_step(caller, id, "trade registration", async |_| {
        steps::operator_step::<crate::cases::kind::Trade>(&state, caller, id, input).await
    })
    .await
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LicenceResponse {
    pub result: Outcome,
    pub message: String,
    pub id: Uuid,
    #[schema(example = "completed")]
    pub status: String,
    pub previous_status: String,
    pub document: crate::routes::views::DocumentView,
}

/// Upload the trade licence
///
/// Uploads the trade licence the trade office issued (multipart part `file`, a PDF): it is
/// added as a `trade-licence` document and the case becomes `completed`, in one step.
#[utoipa::path(post, path = "/v1/operator/trade-registrations/{trade_registration_id}/trade-licence", tag = "operator",
    params(("trade_registration_id" = Uuid, Path, description = "The case")),
    request_body(content = TradeLicenceUpload, content_type = "multipart/form-data", description = "Part `file`: the issued trade licence as PDF; optional part `reason`: a note for the status history"),
    responses(
        (status = 200, description = "Completed", body = Envelope<LicenceResponse>),
        (status = 400, description = "`INVALID_MULTIPART`", body = Envelope<ErrorBody>),
        OperatorCaseErrors,
        (status = 409, description = "`INVALID_STATE_TRANSITION`: only a submitted case can be completed", body = Envelope<ErrorBody>),
        (status = 422, description = "`VALIDATION_FAILED`: no `file` part, not a PDF, or a `reason` that is empty, too long or has control characters", body = Envelope<ErrorBody>),
    ))]
pub async fn upload_trade_licence(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    crate::extract::PathId(id): crate::extract::PathId,
    req: axum::extract::Request,
) -> Result<Response, ApiError> {
    operator_only(caller)?;
    let (file, reason) = licence_upload(&state, req).await?;
    let (moved, doc) = steps::operator_licence(&state, caller, id, file, reason).await?;
    Ok(respond(
        StatusCode::OK,
        LicenceResponse {
            result: Outcome::Success,
            message: "trade licence stored; the trade registration is completed".into(),
            id,
            status: moved.status.as_str().into(),
            previous_status: moved.previous.as_str().into(),
            document: crate::routes::views::document_views(
                &state,
                std::slice::from_ref(&doc),
                false,
            )
            .remove(0),
        },
    ))
}

/// The parts of a licence upload: the PDF (`file`, checked) and the optional note (`reason`);
/// every broken part in one 422.
async fn licence_upload(
    state: &AppState,
    req: axum::extract::Request,
) -> Result<(bytes::Bytes, Option<String>), ApiError> {
    // Another content type is 415, as on every body (the framework's extractor said 400).
    let mut multipart = crate::extract::multipart(req).await?;
    let limit = state.config.max_upload_bytes;
    let mut file: Option<bytes::Bytes> = None;
    let mut reason: Option<bytes::Bytes> = None;
    while let Some(mut field) = multipart
        .next_field()
        .await
        .map_err(crate::extract::multipart_error)?
    {
        let name = field.name().unwrap_or("").to_string();
        let (slot, part_limit) = match name.as_str() {
            "file" => (&mut file, limit),
            // A note of at most 500 characters: 4 bytes each at most, and the line breaks that
            // are normalised away.
            "reason" => (&mut reason, 4 * 1024),
            _ => {
                return Err(ApiError::validation(
                    name,
                    "unexpected_file",
                    "only the parts `file` and `reason` are accepted",
                ));
            }
        };
        let part = crate::extract::read_part(&mut field, &name, part_limit).await?;
        if slot.replace(part).is_some() {
            return Err(ApiError::InvalidMultipart(format!(
                "more than one `{name}` part"
            )));
        }
    }
    steps::checked_licence(file, reason).await
}

/// An operator's changes to a trade registration (every field optional).
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
pub struct TradePatchRequest {
    /// The receiving office. Clears the candidates of an ambiguous address.
    #[schema(example = json!({"key": "072355007", "municipality_key": "07235001"}))]
    trade_office: Option<TradeOfficeAssignment>,
    /// The trade office's fee in euros and cents, e.g. 26.00 (at most 2 decimals).
    #[schema(minimum = 0, maximum = 999999999.99, multiple_of = 0.01)]
    city_fee: Option<f64>,
    is_paid: Option<bool>,
    /// `gbr` when another product of the provider spawned the case; `null` clears it.
    #[schema(value_type = Option<SourceProduct>)]
    source_product: Option<String>,
}

/// Which office receives a trade registration.
#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct TradeOfficeAssignment {
    /// The key of an entry of the trade office directory (`/v1/operator/trade-offices`).
    #[schema(pattern = "^[0-9]{8,9}$")]
    key: String,
    /// The establishment's 8-digit municipality key (AGS) of the register.
    #[schema(pattern = "^[0-9]{8}$")]
    municipality_key: String,
}

/// The product that spawned a case.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
pub enum SourceProduct {
    Gbr,
}

/// The multipart body of the licence upload.
#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct TradeLicenceUpload {
    /// The trade licence as issued, a PDF.
    file: crate::routes::trade_registrations::SignedPdf,
    /// A note for the status history (at most 500 characters, no control characters but line
    /// breaks and tabs); without it the history says `trade licence issued`.
    #[schema(max_length = 500, min_length = 1)]
    reason: Option<String>,
}

/// Update a trade registration's office, fee and payment
///
/// Sets the receiving trade office, the city fee, the payment state and the source product of
/// a trade registration; answers with the case as read back. The fields whose value changes
/// are one entry of the case's `status_history` (`changes`: each field's old and new value,
/// the operator as `actor`), written with them; a patch that changes nothing adds none.
///
/// An assigned office heads the GewA 1 forms the service made while they follow the office
/// (a `self` case while `form-rendered`, an `assisted` one until `completed`): forms the new
/// head changes are replaced, with new document ids, and the old ones are gone. Uploaded forms
/// and powers of attorney stay as they are.
#[utoipa::path(patch, path = "/v1/operator/trade-registrations/{trade_registration_id}", tag = "operator",
    params(("trade_registration_id" = Uuid, Path, description = "The case")),
    request_body = TradePatchRequest,
    responses(
        (status = 200, description = "The case after the change", body = Envelope<crate::routes::trade_registrations::TradeRegistrationResponse>),
        OperatorCaseErrors,
        ValidationFailed,
    ))]
pub async fn patch_trade(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    crate::extract::PathId(id): crate::extract::PathId,
    crate::extract::ApiJson(body): crate::extract::ApiJson<serde_json::Value>,
) -> Result<Response, ApiError> {
    let operator_id = operator_only(caller)?;
    let (patch, head) = cases::trade_patch::trade_patch(&state, &body).await?;
    cases::trade_patch::patch_trade(&state, id, patch, head, Actor::Operator(operator_id)).await?;
    crate::routes::trade_registrations::get(
        State(state),
        Extension(caller),
        crate::extract::PathId(id),
    )
    .await
}

#[derive(Debug, Serialize, ToSchema)]
pub struct IdentityResponse {
    pub result: Outcome,
    pub message: String,
    pub id: Uuid,
    pub owner_index: usize,
    /// When the owner's identity was verified; `null` once the record is removed.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime, required = true)]
    pub identity_verified_at: Option<OffsetDateTime>,
}

/// Body of a verification record (optional: no body records the present moment).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // read as JSON with the field rules (`rules::instant`); here for the document
pub struct IdentityRequest {
    /// When the identity was verified, in RFC 3339 with its offset: not before the case was
    /// created, not in the future (60 s of clock skew allowed). Omit it for now. Answered and
    /// shown in UTC.
    #[schema(value_type = Option<String>, format = DateTime, example = "2026-11-20T14:05:00+01:00")]
    verified_at: Option<String>,
}

/// The case id and owner index of an identity path; 404 for anything that names none.
fn owner_path(raw_id: &str, raw_index: &str) -> Result<(Uuid, usize), ApiError> {
    let id = Uuid::try_parse(raw_id).map_err(|_| ApiError::NotFound)?;
    let index: usize = raw_index.parse().map_err(|_| ApiError::NotFound)?;
    Ok((id, index))
}

/// Record an owner's identity verification
///
/// Records that the operator verified an owner's identity (`owners[i].identity_verified_at`),
/// now or at the time given; a later record replaces an earlier one. A record that changes the
/// owner's time is an entry of the case's `status_history` (the old and new time).
#[utoipa::path(post, path = "/v1/operator/trade-registrations/{trade_registration_id}/owners/{owner_index}/identity-verified", tag = "operator",
    params(
        ("trade_registration_id" = Uuid, Path, description = "The case"),
        ("owner_index" = usize, Path, description = "The owner, counted from 0 in creation order", minimum = 0, maximum = 8),
    ),
    request_body(content = Option<IdentityRequest>, content_type = "application/json"),
    responses(
        (status = 200, description = "Recorded", body = Envelope<IdentityResponse>),
        OperatorOwnerErrors,
        (status = 422, description = "`VALIDATION_FAILED`: `verified_at` is no RFC 3339 time, lies in the future or before the case", body = Envelope<ErrorBody>),
    ))]
pub async fn verify_identity(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    axum::extract::Path((raw_id, raw_index)): axum::extract::Path<(String, String)>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let operator_id = operator_only(caller)?;
    let body: serde_json::Value = crate::extract::decode_optional_json(&headers, &body)?;
    let (id, index) = owner_path(&raw_id, &raw_index)?;
    let at = cases::identity::verify_identity(&state, operator_id, id, index, &body).await?;
    Ok(respond(
        StatusCode::OK,
        IdentityResponse {
            result: Outcome::Success,
            message: "identity verification recorded".into(),
            id,
            owner_index: index,
            identity_verified_at: Some(at),
        },
    ))
}

/// One record or removal of an owner's identity verification.
#[derive(Debug, Serialize, ToSchema)]
pub struct IdentityLogEntry {
    /// `recorded` or `removed`.
    #[schema(example = "recorded")]
    pub action: String,
    /// When the identity was verified, for `recorded`; `null` for `removed`.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime, required = true)]
    pub verified_at: Option<OffsetDateTime>,
    /// Who made it: `operator:<id>`.
    #[schema(example = "operator:7d0c1f0e-3b9a-4c57-9d55-0f6f2f0c9a11")]
    pub actor: String,
    /// When it was made.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub at: OffsetDateTime,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct IdentityStatusResponse {
    pub result: Outcome,
    pub id: Uuid,
    pub owner_index: usize,
    /// The verification in force; `null` when none is.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime, required = true)]
    pub identity_verified_at: Option<OffsetDateTime>,
    /// Every record and removal, oldest first (records made before 2026-11-25 appear as made at
    /// the time they give, by whoever recorded them; removals before that day are not known).
    pub history: Vec<IdentityLogEntry>,
}

/// Read an owner's identity verifications
///
/// An owner's identity verification: the record in force and every record and removal made,
/// with who made it and when (the audit trail of `POST` and `DELETE` on this path).
#[utoipa::path(get, path = "/v1/operator/trade-registrations/{trade_registration_id}/owners/{owner_index}/identity-verified", tag = "operator",
    params(
        ("trade_registration_id" = Uuid, Path, description = "The case"),
        ("owner_index" = usize, Path, description = "The owner, counted from 0 in creation order", minimum = 0, maximum = 8),
    ),
    responses(
        (status = 200, description = "The verification and its history", body = Envelope<IdentityStatusResponse>),
        OperatorOwnerErrors,
    ))]
pub async fn identity_history(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    axum::extract::Path((raw_id, raw_index)): axum::extract::Path<(String, String)>,
) -> Result<Response, ApiError> {
    operator_only(caller)?;
    let (id, index) = owner_path(&raw_id, &raw_index)?;
    let case = cases::identity::owner_case(&state, id, index).await?;
    let history = state
        .repo
        .identity_verification_log(case.id, index as i32)
        .await?;
    let identity_verified_at = case
        .identity_verifications
        .iter()
        .find(|(i, _)| *i as usize == index)
        .map(|(_, at)| *at);
    Ok(respond(
        StatusCode::OK,
        IdentityStatusResponse {
            result: Outcome::Success,
            id: case.id,
            owner_index: index,
            identity_verified_at,
            history: history
                .into_iter()
                .map(|e| IdentityLogEntry {
                    action: e.action,
                    verified_at: e.verified_at,
                    actor: e.actor.to_string(),
                    at: e.at,
                })
                .collect(),
        },
    ))
}

/// Remove an owner's identity verification
///
/// Removes the record of an owner's identity verification (one recorded in error), so GET no
/// longer shows `identity_verified_at`, with an entry of the case's `status_history` naming the
/// removed time. Removing what is not recorded changes nothing (200).
#[utoipa::path(delete, path = "/v1/operator/trade-registrations/{trade_registration_id}/owners/{owner_index}/identity-verified", tag = "operator",
    params(
        ("trade_registration_id" = Uuid, Path, description = "The case"),
        ("owner_index" = usize, Path, description = "The owner, counted from 0 in creation order", minimum = 0, maximum = 8),
    ),
    responses(
        (status = 200, description = "No verification is recorded for the owner now", body = Envelope<IdentityResponse>),
        OperatorOwnerErrors,
    ))]
pub async fn clear_identity(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    axum::extract::Path((raw_id, raw_index)): axum::extract::Path<(String, String)>,
) -> Result<Response, ApiError> {
    let operator_id = operator_only(caller)?;
    let (id, index) = owner_path(&raw_id, &raw_index)?;
    let removed = cases::identity::clear_identity(&state, operator_id, id, index).await?;
    Ok(respond(
        StatusCode::OK,
        IdentityResponse {
            result: Outcome::Success,
            message: if removed {
                "identity verification removed"
            } else {
                "no identity verification was recorded for this owner"
            }
            .into(),
            id,
            owner_index: index,
            identity_verified_at: None,
        },
    ))
}

/// Move a tax registration to another status
///
/// Moves a tax registration along its lifecycle: `validated -> submitted ->
/// completed | rejected -> submitted`.
#[utoipa::path(post, path = "/v1/operator/tax-registrations/{tax_registration_id}/transition", tag = "operator",
    params(("tax_registration_id" = Uuid, Path, description = "The case")),
    request_body = TaxTransitionRequest,
    responses(
        (status = 200, description = "Moved", body = Envelope<OperatorTransitionResponse>),
        OperatorCaseErrors,
        (status = 409, description = "`INVALID_STATE_TRANSITION` (also: submitting a case without its XML: no tax office assigned, or a production XML waiting for the service's ELSTER manufacturer id; the message says which)", body = Envelope<ErrorBody>),
        (status = 422, description = "`VALIDATION_FAILED`: unknown status, `completed` without a tax number, `rejected` without a reason", body = Envelope<ErrorBody>),
    ))]
pub async fn transition_tax(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    crate::extract::PathId(id): crate::extract::PathId,
    crate::extract::ApiJson(input): crate::extract::ApiJson<TaxTransitionRequest>,
) -> Result<Response, ApiError> {
    operator_step(caller, id, "tax registration", async |_| {
        Ok(
            steps::operator_step::<crate::cases::kind::Tax>(&state, caller, id, input)
                .await?
                .0,
        )
    })
    .await
}

/// The office to assign.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AssignTaxOfficeRequest {
    /// 4-digit tax office number of the bundled directory (`GET /v1/tax-offices/{number}`).
    #[schema(pattern = "^[0-9]{4}$")]
    pub tax_office_number: String,
}

/// Assign a tax office
///
/// Assigns the tax office of a `validated` or `rejected` tax registration and regenerates its
/// ELSTER XML (validated against the XSD again; a production XML only with the service's
/// ELSTER manufacturer id, see `elster_xml`) and summary, announced to the provider as
/// `documents.updated`; the office the case has already, with its XML as it is, changes
/// nothing. A new office is an entry of the case's `status_history` (the old and new office).
/// Answers with the case.
#[utoipa::path(post, path = "/v1/operator/tax-registrations/{tax_registration_id}/tax-office", tag = "operator",
    params(("tax_registration_id" = Uuid, Path, description = "The case")),
    request_body = AssignTaxOfficeRequest,
    responses(
        (status = 200, description = "Assigned; the documents are new (unless the office and its XML were the case's already)", body = Envelope<crate::routes::tax_registrations::TaxRegistrationResponse>),
        OperatorCaseErrors,
        (status = 409, description = "`INVALID_STATE_TRANSITION`: the case is already submitted or completed", body = Envelope<ErrorBody>),
        (status = 422, description = "`VALIDATION_FAILED`: not an office of the directory", body = Envelope<ErrorBody>),
    ))]
pub async fn assign_tax_office(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    crate::extract::PathId(id): crate::extract::PathId,
    crate::extract::ApiJson(input): crate::extract::ApiJson<AssignTaxOfficeRequest>,
) -> Result<Response, ApiError> {
    let operator_id = operator_only(caller)?;
    let case = access::case::<crate::cases::kind::Tax>(&state, caller, id).await?;
    cases::tax::assign_office(
        &state,
        &case,
        &input.tax_office_number,
        Some(Actor::Operator(operator_id)),
    )
    .await?;
    crate::routes::tax_registrations::get(
        State(state),
        Extension(caller),
        crate::extract::PathId(id),
    )
    .await
}

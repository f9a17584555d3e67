//! Companies and their API keys (docs/api/authentication.md; listing, revoking and the cap on live keys:
//! docs/adr/0004-keys-limited-per-company.md).

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use domain::auth::Caller;
use domain::company::{Company, CompanyKind, Environment};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::cases::api_keys;
use crate::envelope::{Envelope, Outcome, respond};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{ApiQuery, PathId, decode_optional_json};
use crate::openapi::responses::CompanyNotVisible;
use crate::state::AppState;

#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum CompanyType {
    Provider,
    Client,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CompanyResponse {
    pub result: Outcome,
    pub message: String,
    pub company_id: Uuid,
    /// `provider` (calls the API) or `client` (the company cases are for).
    #[serde(rename = "type")]
    pub kind: CompanyType,
    pub name: String,
    /// Client companies only: `sandbox` or `production`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "production")]
    pub environment: Option<Environment>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub legal_form: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration_number: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub business_address: Option<serde_json::Value>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl CompanyResponse {
    fn new(c: Company) -> Self {
        Self {
            result: Outcome::Success,
            message: "company found".into(),
            company_id: c.id,
            kind: match c.kind {
                CompanyKind::Provider => CompanyType::Provider,
                CompanyKind::Client => CompanyType::Client,
            },
            name: c.name,
            environment: c.environment,
            legal_form: c.legal_form,
            registration_number: c.registration_number,
            business_address: c.business_address,
            created_at: c.created_at,
        }
    }
}

/// Read a company
///
/// Reads a company: a provider reads itself and the client companies it created; a client
/// company reads itself.
#[utoipa::path(get, path = "/v1/companies/{company_id}", tag = "companies",
    params(("company_id" = Uuid, Path, description = "The company's id")),
    responses(
        (status = 200, description = "The company", body = Envelope<CompanyResponse>),
        CompanyNotVisible,
    ))]
pub async fn get_company(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
) -> Result<Response, ApiError> {
    let company = api_keys::visible_company(&state, caller, id).await?;
    Ok(respond(StatusCode::OK, CompanyResponse::new(company)))
}

/// Body of a key request (an empty body or `{}` for an unrestricted key, as before).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"environment": "sandbox"}))]
pub struct CreateApiKeyRequest {
    /// Restricts the new key to `sandbox` or `production`
    /// (docs/adr/0021-environment-restricted-keys.md): it creates and sees only cases and client
    /// companies of that environment, and its prefix shows it (`rfs_prv_test_…`,
    /// `rfs_prv_live_…`, `rfs_cli_test_…`, `rfs_cli_live_…`). Absent: the calling key's own
    /// restriction (an unrestricted key issues an unrestricted key). A restricted key naming the
    /// other environment, or a client company's key of the other environment than the company:
    /// 409 `ENVIRONMENT_MISMATCH`.
    #[schema(example = "sandbox")]
    pub environment: Option<Environment>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKeyResponse {
    pub result: Outcome,
    pub message: String,
    /// The key. It is shown only in this response; only a hash is stored.
    #[schema(example = "rfs_cli_test_8hq2m4kd9x0c_AbCdEfGhIjKlMnOpQrStUvWxYz012345")]
    pub api_key: String,
    /// The public part of the key, for listings and revocation.
    #[schema(example = "rfs_cli_test_8hq2m4kd9x0c")]
    pub key_prefix: String,
    pub company_id: Uuid,
    /// `client` for a client company's key, `provider` for a provider's own new key.
    #[schema(example = "client")]
    pub key_type: String,
    /// The environment the key is restricted to; null: unrestricted.
    #[schema(example = "sandbox")]
    pub environment: Option<Environment>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

/// Issue an API key
///
/// Issues an API key for a client company the provider created (so the client company can read
/// its own cases), or a further key for the provider itself (for rotation), optionally
/// restricted to one environment (`{"environment": "sandbox"}`). A restricted key issues only
/// keys restricted to its own environment.
#[utoipa::path(post, path = "/v1/companies/{company_id}/api-keys", tag = "companies",
    params(
        ("company_id" = Uuid, Path, description = "A client company of the caller, or the caller itself"),
    ),
    request_body(content = Option<CreateApiKeyRequest>, content_type = "application/json"),
    responses(
        (status = 201, description = "The new key, shown once", body = Envelope<ApiKeyResponse>),
        (status = 403, description = "Client company and operator keys cannot issue keys (`FORBIDDEN`)", body = Envelope<ErrorBody>),
        CompanyNotVisible,
        (status = 409, description = "`API_KEY_LIMIT` (the company holds `FILING_MAX_KEYS_PER_COMPANY` unrevoked keys, 100 by default), `ENVIRONMENT_MISMATCH` (`environment` contradicts the calling key's or the client company's) or `IDEMPOTENCY_KEY_IN_USE`", body = Envelope<ErrorBody>),
        (status = 422, description = "`VALIDATION_FAILED` or `IDEMPOTENCY_KEY_REUSED`", body = Envelope<ErrorBody>),
    ))]
pub async fn create_api_key(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    // The role first: a key that may not issue gets 403 whatever its body.
    let me = api_keys::issuer(caller)?;
    let CreateApiKeyRequest { environment } = decode_optional_json(&headers, &body)?;
    let (company, kind, key) = api_keys::issue(&state, caller, me, id, environment).await?;
    Ok(respond(
        StatusCode::CREATED,
        ApiKeyResponse {
            result: Outcome::Success,
            message: "API key created; it is shown only once".into(),
            api_key: key.api_key,
            key_prefix: key.record.prefix,
            company_id: company.id,
            key_type: kind.as_str().into(),
            environment: key.record.environment,
            created_at: key.record.created_at,
        },
    ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ApiKeyQuery {
    /// The `next_cursor` of the previous page (a key prefix).
    #[param(pattern = "^rfs_(prv|cli)_((test|live)_)?[a-z0-9]{12}$")]
    pub after: Option<String>,
    /// 1 to 500, default 100.
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

/// A live key as listed: never the key itself nor its hash.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKeyView {
    /// The public part of the key; revoke it with `DELETE .../api-keys/{key_prefix}`.
    #[schema(example = "rfs_cli_8hq2m4kd9x0c")]
    pub key_prefix: String,
    /// `provider` or `client`.
    #[schema(example = "client")]
    pub key_type: String,
    /// The environment the key is restricted to; null: unrestricted.
    #[schema(example = "sandbox")]
    pub environment: Option<Environment>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When the key was last used, to the minute (written at most once a minute per key and
    /// instance); null when it has not been used.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_used_at: Option<OffsetDateTime>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKeyPage {
    pub result: Outcome,
    pub message: String,
    pub company_id: Uuid,
    /// Unrevoked keys, oldest first.
    pub api_keys: Vec<ApiKeyView>,
    /// Pass as `after` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// List a company's API keys
///
/// Lists the unrevoked keys of the provider itself or of one of its client companies, oldest
/// first. Revoked keys are not listed. A key restricted to one environment lists, of the
/// provider's own keys, only those restricted to the same environment (the keys no broader than
/// itself), and only client companies of its environment.
#[utoipa::path(get, path = "/v1/companies/{company_id}/api-keys", tag = "companies",
    operation_id = "list_api_keys",
    params(
        ("company_id" = Uuid, Path, description = "A client company of the caller, or the caller itself"),
        ApiKeyQuery,
    ),
    responses(
        // No link to the revoke: the first key listed is the caller's own oldest key, which a
        // client (or the stateful fuzzer, .ci/schemathesis) following links would revoke.
        (status = 200, description = "A page of keys", body = Envelope<ApiKeyPage>),
        (status = 403, description = "Client company and operator keys cannot list keys (`FORBIDDEN`)", body = Envelope<ErrorBody>),
        CompanyNotVisible,
        (status = 422, description = "`VALIDATION_FAILED`: bad cursor or limit", body = Envelope<ErrorBody>),
    ))]
pub async fn list_api_keys(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
    ApiQuery(q): ApiQuery<ApiKeyQuery>,
) -> Result<Response, ApiError> {
    let (company, rows, next_cursor) =
        api_keys::list(&state, caller, id, q.after.as_deref(), q.limit).await?;
    let api_keys: Vec<ApiKeyView> = rows
        .into_iter()
        .map(|k| ApiKeyView {
            key_prefix: k.prefix,
            key_type: k.kind.as_str().into(),
            environment: k.environment,
            created_at: k.created_at,
            last_used_at: k.last_used_at,
        })
        .collect();
    Ok(respond(
        StatusCode::OK,
        ApiKeyPage {
            result: Outcome::Success,
            message: format!("{} API keys", api_keys.len()),
            company_id: company.id,
            api_keys,
            next_cursor,
        },
    ))
}

/// Revoke an API key
///
/// Revokes a key of the provider itself or of one of its client companies, by its prefix. A
/// key may revoke itself. A restricted key revokes only the keys it lists (404 for any other). The key stops working on this instance at once and on every other
/// within `FILING_KEY_CACHE_SECS` (5 s), as `filing keys revoke`.
#[utoipa::path(delete, path = "/v1/companies/{company_id}/api-keys/{key_prefix}", tag = "companies",
    operation_id = "revoke_api_key",
    params(
        ("company_id" = Uuid, Path, description = "A client company of the caller, or the caller itself"),
        ("key_prefix" = String, Path, description = "The key's prefix (`key_prefix` of the create or the list)",
            example = "rfs_cli_8hq2m4kd9x0c"),
    ),
    responses(
        (status = 204, description = "The key is revoked"),
        (status = 403, description = "Client company and operator keys cannot revoke keys (`FORBIDDEN`)", body = Envelope<ErrorBody>),
        (status = 404, description = "No such company visible to the caller, or no unrevoked key of that company with this prefix (`NOT_FOUND`)", body = Envelope<ErrorBody>),
    ))]
pub async fn revoke_api_key(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    path: Result<Path<(String, String)>, axum::extract::rejection::PathRejection>,
) -> Result<Response, ApiError> {
    api_keys::provider_only(caller, "revoke")?;
    // Like `PathId`: a path that does not decode is the same 404 as an unknown id.
    let Path((company_id, prefix)) = path.map_err(|_| ApiError::NotFound)?;
    let id = Uuid::parse_str(&company_id).map_err(|_| ApiError::NotFound)?;
    api_keys::revoke(&state, caller, id, &prefix).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

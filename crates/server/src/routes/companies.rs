//! Companies and their API keys (decisions.md §1).

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use domain::auth::{Caller, KeyKind};
use domain::company::{Company, CompanyKind, Environment};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::app::AppState;
use crate::envelope::{Envelope, Outcome, respond};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{PathId, decode_optional_json};

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

/// Loads a company the caller may see; any other answers as an unknown id (decisions.md §1).
async fn visible_company(state: &AppState, caller: Caller, id: Uuid) -> Result<Company, ApiError> {
    let company = state
        .repo
        .get_company(id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let visible = match caller {
        Caller::Operator { .. } => true,
        Caller::Provider { company_id } | Caller::Client { company_id, .. } => {
            company.visible_to(company_id)
        }
    };
    if visible {
        Ok(company)
    } else {
        Err(ApiError::NotFound)
    }
}

/// Reads a company: a provider reads itself and the client companies it created; a client
/// company reads itself.
#[utoipa::path(get, path = "/v1/companies/{company_id}", tag = "companies",
    params(("company_id" = Uuid, Path, description = "The company's id")),
    responses(
        (status = 200, description = "The company", body = Envelope<CompanyResponse>),
        (status = 404, description = "No such company visible to the caller (`NOT_FOUND`)", body = Envelope<ErrorBody>),
    ))]
pub async fn get_company(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
) -> Result<Response, ApiError> {
    let company = visible_company(&state, caller, id).await?;
    Ok(respond(StatusCode::OK, CompanyResponse::new(company)))
}

/// Body of a key request: nothing to set yet (an empty body or `{}`).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateApiKeyRequest {}

#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKeyResponse {
    pub result: Outcome,
    pub message: String,
    /// The key. It is shown only in this response; only a hash is stored.
    #[schema(example = "rfs_cli_8hq2m4kd9x0c_AbCdEfGhIjKlMnOpQrStUvWxYz012345")]
    pub api_key: String,
    /// The public part of the key, for listings and revocation.
    #[schema(example = "rfs_cli_8hq2m4kd9x0c")]
    pub key_prefix: String,
    pub company_id: Uuid,
    /// `client` for a client company's key, `provider` for a provider's own new key.
    #[schema(example = "client")]
    pub key_type: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

/// Issues an API key for a client company the provider created (so the client company can read
/// its own cases), or a further key for the provider itself (for rotation).
#[utoipa::path(post, path = "/v1/companies/{company_id}/api-keys", tag = "companies",
    params(
        ("company_id" = Uuid, Path, description = "A client company of the caller, or the caller itself"),
    ),
    request_body(content = Option<CreateApiKeyRequest>, content_type = "application/json"),
    responses(
        (status = 201, description = "The new key, shown once", body = Envelope<ApiKeyResponse>),
        (status = 403, description = "Client company and operator keys cannot issue keys (`FORBIDDEN`)", body = Envelope<ErrorBody>),
        (status = 404, description = "No such company visible to the caller (`NOT_FOUND`)", body = Envelope<ErrorBody>),
        (status = 409, description = "`IDEMPOTENCY_KEY_IN_USE`", body = Envelope<ErrorBody>),
        (status = 422, description = "`VALIDATION_FAILED` or `IDEMPOTENCY_KEY_REUSED`", body = Envelope<ErrorBody>),
    ))]
pub async fn create_api_key(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let Caller::Provider { company_id: me } = caller else {
        return Err(ApiError::Forbidden(
            "only provider keys can issue API keys".into(),
        ));
    };
    let CreateApiKeyRequest {} = decode_optional_json(&headers, &body)?;
    let company = visible_company(&state, caller, id).await?;
    let kind = if company.id == me {
        KeyKind::Provider
    } else {
        KeyKind::Client
    };
    let key = crate::auth::issue_key(state.repo.as_ref(), kind, company.id).await?;
    tracing::info!(prefix = %key.record.prefix, company_id = %company.id, "API key issued");
    Ok(respond(
        StatusCode::CREATED,
        ApiKeyResponse {
            result: Outcome::Success,
            message: "API key created; it is shown only once".into(),
            api_key: key.api_key,
            key_prefix: key.record.prefix,
            company_id: company.id,
            key_type: kind.as_str().into(),
            created_at: key.record.created_at,
        },
    ))
}

//! The one error type of the API and its mapping to responses (decisions.md §2). Handlers return
//! `Result<_, ApiError>`; nothing else decides a status code or an error code.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use domain::{FieldError, Violations};
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, Outcome};

/// The `Retry-After` of a 503: storage faults and full capacity usually pass within seconds.
pub const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 2;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    InvalidJson(String),
    #[error("{0}")]
    InvalidMultipart(String),
    #[error("{0}")]
    Unauthorized(&'static str),
    #[error("{0}")]
    Forbidden(String),
    #[error("the download link is invalid or has expired")]
    InvalidDownloadLink,
    #[error("no such resource")]
    NotFound,
    #[error("no company with this id")]
    CompanyNotFound,
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    #[error("a request with this Idempotency-Key is still being processed")]
    IdempotencyKeyInUse,
    #[error("this Idempotency-Key was used with a different request")]
    IdempotencyKeyReused,
    #[error("{0}")]
    PayloadTooLarge(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("invalid fields")]
    Validation(Violations),
    #[error("the HTTP method is not allowed on this path")]
    MethodNotAllowed,
    #[error("too many requests")]
    RateLimited { retry_after_secs: u64 },
    #[error("the request took too long")]
    Timeout,
    #[error("the request body did not arrive within {secs} seconds")]
    BodyTimeout { secs: u64 },
    /// Storage (the database or the document store) cannot serve the request right now; the
    /// text is logged, never shown.
    #[error("the service is temporarily unavailable")]
    Unavailable(String),
    /// This instance is at a capacity limit (e.g. concurrent uploads); the text is shown.
    #[error("{0}")]
    Overloaded(&'static str),
    #[error("internal error")]
    Internal(#[from] anyhow::Error),
}

/// The error body inside the envelope.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorBody {
    pub result: Outcome,
    /// Stable machine-readable code, e.g. `VALIDATION_FAILED`.
    pub code: String,
    pub message: String,
    /// Every broken field rule (validation errors only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<FieldErrorBody>>,
    /// Lets staff find the request in the logs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// One broken field rule.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FieldErrorBody {
    /// Path in the request as sent: dots for objects, `[i]` for arrays.
    #[schema(example = "owners[0].dob")]
    pub field: String,
    #[schema(example = "invalid_date")]
    pub code: String,
    pub message: String,
}

impl From<FieldError> for FieldErrorBody {
    fn from(e: FieldError) -> Self {
        Self {
            field: e.field,
            code: e.code,
            message: e.message,
        }
    }
}

impl ApiError {
    pub fn validation(field: impl Into<String>, code: &str, message: impl Into<String>) -> Self {
        ApiError::Validation(FieldError::new(field, code, message).into())
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::InvalidJson(_) | ApiError::InvalidMultipart(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) | ApiError::InvalidDownloadLink => StatusCode::FORBIDDEN,
            ApiError::NotFound | ApiError::CompanyNotFound => StatusCode::NOT_FOUND,
            ApiError::Conflict { .. } | ApiError::IdempotencyKeyInUse => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::Validation(_) | ApiError::IdempotencyKeyReused => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Timeout | ApiError::BodyTimeout { .. } => StatusCode::REQUEST_TIMEOUT,
            ApiError::Unavailable(_) | ApiError::Overloaded(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::InvalidJson(_) => "INVALID_JSON",
            ApiError::InvalidMultipart(_) => "INVALID_MULTIPART",
            ApiError::Unauthorized(_) => "UNAUTHORIZED",
            ApiError::Forbidden(_) => "FORBIDDEN",
            ApiError::InvalidDownloadLink => "INVALID_DOWNLOAD_LINK",
            ApiError::NotFound => "NOT_FOUND",
            ApiError::CompanyNotFound => "COMPANY_NOT_FOUND",
            ApiError::Conflict { code, .. } => code,
            ApiError::IdempotencyKeyInUse => "IDEMPOTENCY_KEY_IN_USE",
            ApiError::IdempotencyKeyReused => "IDEMPOTENCY_KEY_REUSED",
            ApiError::PayloadTooLarge(_) => "PAYLOAD_TOO_LARGE",
            ApiError::UnsupportedMediaType(_) => "UNSUPPORTED_MEDIA_TYPE",
            ApiError::Validation(_) => "VALIDATION_FAILED",
            ApiError::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            ApiError::RateLimited { .. } => "RATE_LIMITED",
            ApiError::Timeout | ApiError::BodyTimeout { .. } => "REQUEST_TIMEOUT",
            ApiError::Unavailable(_) | ApiError::Overloaded(_) => "SERVICE_UNAVAILABLE",
            ApiError::Internal(_) => "INTERNAL_ERROR",
        }
    }

    fn public_message(&self) -> String {
        match self {
            ApiError::Validation(v) if v.len() == 1 => "1 field is invalid".to_string(),
            ApiError::Validation(v) => format!("{} fields are invalid", v.len()),
            // Never leak internals; the log has them, found by request_id.
            ApiError::Internal(_) => "an internal error occurred".to_string(),
            ApiError::Unavailable(_) => {
                "the service is temporarily unavailable; retry later".to_string()
            }
            other => other.to_string(),
        }
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            result: Outcome::Error,
            code: self.code().to_string(),
            message: self.public_message(),
            errors: match self {
                ApiError::Validation(v) => Some(v.iter().cloned().map(Into::into).collect()),
                _ => None,
            },
            request_id: None,
        }
    }
}

impl From<Violations> for ApiError {
    fn from(v: Violations) -> Self {
        ApiError::Validation(v)
    }
}

impl From<store::StoreError> for ApiError {
    fn from(e: store::StoreError) -> Self {
        match e {
            store::StoreError::Unavailable(msg) => ApiError::Unavailable(msg),
            other => ApiError::Internal(anyhow::Error::new(other)),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match &self {
            ApiError::Internal(e) => tracing::error!(error = ?e, "internal error"),
            ApiError::Unavailable(e) => tracing::warn!(error = %e, "storage unavailable"),
            _ => {}
        }
        let status = self.status();
        let body = self.body();
        let mut res = (
            status,
            Json(Envelope {
                response: body.clone(),
            }),
        )
            .into_response();
        match &self {
            ApiError::Unauthorized(_) => {
                res.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ApiError::RateLimited { retry_after_secs } => {
                res.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
            }
            ApiError::Unavailable(_) | ApiError::Overloaded(_) => {
                res.headers_mut().insert(
                    header::RETRY_AFTER,
                    HeaderValue::from(UNAVAILABLE_RETRY_AFTER_SECS),
                );
            }
            _ => {}
        }
        // The envelope layer adds the request id, which handlers do not know.
        res.extensions_mut().insert(body);
        res
    }
}

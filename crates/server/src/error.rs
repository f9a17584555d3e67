//! The one error type of the API and its mapping to responses (docs/api/errors.md). Handlers return
//! `Result<_, ApiError>`; nothing else decides a status code or an error code.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use domain::{FieldError, Violations};
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ErrorOutcome};

/// The `Retry-After` of a 503: storage faults and full capacity usually pass within seconds.
pub const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 2;
/// Declares [`ErrorCode`] with the list of all its values, so nothing can add a code without it
/// reaching the OpenAPI document (the `code` enum of `ErrorBody`) and the test that compares the
/// document with docs/api/errors.md (tests/openapi.rs).
macro_rules! error_codes {
    ($($variant:ident = $code:literal => $status:ident,)*) => {
        /// Stable machine-readable code of an error answer (docs/api/errors.md, "Codes").
        /// Serialised as `as_str` (the variant name in SCREAMING_SNAKE_CASE; a test compares).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, ToSchema)]
        #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
        pub enum ErrorCode {
            $($variant,)*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &[ErrorCode] = &[$(ErrorCode::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $code,)*
                }
            }

            /// The one HTTP status that answers with this code.
            pub fn status(self) -> StatusCode {
                match self {
                    $(ErrorCode::$variant => StatusCode::$status,)*
                }
            }
        }
    };
}

error_codes! {
    InvalidJson = "INVALID_JSON" => BAD_REQUEST,
    InvalidMultipart = "INVALID_MULTIPART" => BAD_REQUEST,
    BadRequest = "BAD_REQUEST" => BAD_REQUEST,
    Unauthorized = "UNAUTHORIZED" => UNAUTHORIZED,
    Forbidden = "FORBIDDEN" => FORBIDDEN,
    InvalidDownloadLink = "INVALID_DOWNLOAD_LINK" => FORBIDDEN,
    NotFound = "NOT_FOUND" => NOT_FOUND,
    CompanyNotFound = "COMPANY_NOT_FOUND" => NOT_FOUND,
    MethodNotAllowed = "METHOD_NOT_ALLOWED" => METHOD_NOT_ALLOWED,
    RequestTimeout = "REQUEST_TIMEOUT" => REQUEST_TIMEOUT,
    CompanyAlreadyRegistered = "COMPANY_ALREADY_REGISTERED" => CONFLICT,
    EnvironmentMismatch = "ENVIRONMENT_MISMATCH" => CONFLICT,
    InvalidStateTransition = "INVALID_STATE_TRANSITION" => CONFLICT,
    DuplicateId = "DUPLICATE_ID" => CONFLICT,
    WebhookEndpointLimit = "WEBHOOK_ENDPOINT_LIMIT" => CONFLICT,
    WebhookMessageDelivered = "WEBHOOK_MESSAGE_DELIVERED" => CONFLICT,
    ApiKeyLimit = "API_KEY_LIMIT" => CONFLICT,
    IdempotencyKeyInUse = "IDEMPOTENCY_KEY_IN_USE" => CONFLICT,
    PayloadTooLarge = "PAYLOAD_TOO_LARGE" => PAYLOAD_TOO_LARGE,
    StorageQuotaExceeded = "STORAGE_QUOTA_EXCEEDED" => PAYLOAD_TOO_LARGE,
    UnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE" => UNSUPPORTED_MEDIA_TYPE,
    ValidationFailed = "VALIDATION_FAILED" => UNPROCESSABLE_ENTITY,
    IdempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED" => UNPROCESSABLE_ENTITY,
    RateLimited = "RATE_LIMITED" => TOO_MANY_REQUESTS,
    InternalError = "INTERNAL_ERROR" => INTERNAL_SERVER_ERROR,
    ServiceUnavailable = "SERVICE_UNAVAILABLE" => SERVICE_UNAVAILABLE,
    ServiceNotConfigured = "SERVICE_NOT_CONFIGURED" => SERVICE_UNAVAILABLE,
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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
    Conflict { code: ErrorCode, message: String },
    /// The company has a case of this kind that is not cancelled (409
    /// `COMPANY_ALREADY_REGISTERED`), named in the body's `existing_id` when it could be read.
    #[error("{}", already_registered_message(kind, *existing_id))]
    AlreadyRegistered {
        kind: &'static str,
        existing_id: Option<uuid::Uuid>,
    },
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
    /// A provider's upload while it holds slots and the others are kept for other providers
    /// (429, `Retry-After: 1`).
    #[error(
        "{share} uploads of this provider are in progress and the other upload slots are kept for other providers; retry when one has finished"
    )]
    UploadShareUsed { share: usize },
    #[error("the request took too long")]
    Timeout,
    #[error("{}", body_timeout_message(*secs, *min_rate))]
    BodyTimeout { secs: u64, min_rate: u64 },
    /// Storage (the database or the document store) cannot serve the request right now; the
    /// text is logged, never shown.
    #[error("the service is temporarily unavailable")]
    Unavailable(String),
    /// An upload that would take its provider beyond its storage quota (413).
    #[error(
        "this upload (it declares {upload} bytes) would exceed the provider's storage quota: {used} of {quota} bytes are stored or being uploaded; documents of cancelled cases count too"
    )]
    StorageQuota { used: u64, quota: u64, upload: u64 },
    /// This instance is at a capacity limit (e.g. concurrent uploads); the text is shown.
    #[error("{0}")]
    Overloaded(&'static str),
    /// The request needs a setting the service was started without (503
    /// `SERVICE_NOT_CONFIGURED`, no `Retry-After`: it lasts until an operator sets it); the
    /// text names the setting.
    #[error("{0}")]
    NotConfigured(&'static str),
    #[error("internal error")]
    Internal(#[from] anyhow::Error),
}

/// What a create for a company with a case of `kind` ("trade registration") is told.
fn already_registered_message(kind: &str, existing_id: Option<uuid::Uuid>) -> String {
    match existing_id {
        Some(id) => format!(
            "this company already has a {kind}, {id}; cancel it before filing a new one (docs/api/lifecycle.md, \"Cancellation\")"
        ),
        None => format!("this company already has a {kind}"),
    }
}

/// What a client whose body was too slow is told (`limits::deadlines`).
fn body_timeout_message(secs: u64, min_rate: u64) -> String {
    let unit = if secs == 1 { "second" } else { "seconds" };
    match min_rate {
        0 => format!("the request body did not arrive within {secs} {unit}"),
        rate => format!(
            "the request body did not arrive in time: within {secs} {unit} plus one second \
             for every {rate} bytes received"
        ),
    }
}

/// The error body inside the envelope.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorBody {
    pub result: ErrorOutcome,
    /// Stable machine-readable code, e.g. `VALIDATION_FAILED` (docs/api/errors.md, "Codes").
    pub code: ErrorCode,
    pub message: String,
    /// Every broken field rule (validation errors only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<FieldErrorBody>>,
    /// With `COMPANY_ALREADY_REGISTERED`: the id of the company's case of that kind that is not
    /// cancelled (its `trade_registration_id` or `tax_registration_id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub existing_id: Option<uuid::Uuid>,
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
        self.code().status()
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            ApiError::InvalidJson(_) => ErrorCode::InvalidJson,
            ApiError::InvalidMultipart(_) => ErrorCode::InvalidMultipart,
            ApiError::Unauthorized(_) => ErrorCode::Unauthorized,
            ApiError::Forbidden(_) => ErrorCode::Forbidden,
            ApiError::InvalidDownloadLink => ErrorCode::InvalidDownloadLink,
            ApiError::NotFound => ErrorCode::NotFound,
            ApiError::CompanyNotFound => ErrorCode::CompanyNotFound,
            ApiError::Conflict { code, .. } => *code,
            ApiError::AlreadyRegistered { .. } => ErrorCode::CompanyAlreadyRegistered,
            ApiError::IdempotencyKeyInUse => ErrorCode::IdempotencyKeyInUse,
            ApiError::IdempotencyKeyReused => ErrorCode::IdempotencyKeyReused,
            ApiError::PayloadTooLarge(_) => ErrorCode::PayloadTooLarge,
            ApiError::StorageQuota { .. } => ErrorCode::StorageQuotaExceeded,
            ApiError::UnsupportedMediaType(_) => ErrorCode::UnsupportedMediaType,
            ApiError::Validation(_) => ErrorCode::ValidationFailed,
            ApiError::MethodNotAllowed => ErrorCode::MethodNotAllowed,
            ApiError::RateLimited { .. } | ApiError::UploadShareUsed { .. } => {
                ErrorCode::RateLimited
            }
            ApiError::Timeout | ApiError::BodyTimeout { .. } => ErrorCode::RequestTimeout,
            ApiError::Unavailable(_) | ApiError::Overloaded(_) => ErrorCode::ServiceUnavailable,
            ApiError::NotConfigured(_) => ErrorCode::ServiceNotConfigured,
            ApiError::Internal(_) => ErrorCode::InternalError,
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
            result: ErrorOutcome::Error,
            code: self.code(),
            message: self.public_message(),
            errors: match self {
                ApiError::Validation(v) => Some(v.iter().cloned().map(Into::into).collect()),
                _ => None,
            },
            existing_id: match self {
                ApiError::AlreadyRegistered { existing_id, .. } => *existing_id,
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
            ApiError::UploadShareUsed { .. } => {
                res.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(1u64));
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

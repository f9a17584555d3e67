//! Every body, success or error, is `{"response": {...}}` with `result` and `message`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// The one key every body has.
#[derive(Debug, Serialize, ToSchema)]
pub struct Envelope<T> {
    pub response: T,
}

/// `success` or `error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Success,
    Error,
}

/// The `result` of an error body: always `error` (a schema of its own, so that generated
/// clients and the examples the reference derives from the schema never show `success`
/// beside an error code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ErrorOutcome {
    Error,
}

/// A success answer: the status and the body inside the envelope.
pub fn respond<T: Serialize>(status: StatusCode, body: T) -> Response {
    (status, Json(Envelope { response: body })).into_response()
}

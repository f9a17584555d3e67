use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, Outcome, respond};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
pub struct HealthResponse {
    pub result: Outcome,
    #[schema(example = "ok")]
    pub message: String,
    /// `sqlite` or `postgres`: the database this instance reached.
    #[schema(example = "sqlite")]
    pub database: String,
}

/// Check the service and its database
///
/// Liveness and readiness: answers 200 when the database answers.
#[utoipa::path(get, path = "/healthz", tag = "health", security(()),
    responses(
        (status = 200, description = "The service and its database are up", body = Envelope<HealthResponse>),
        (status = 503, description = "The database cannot be reached", body = Envelope<ErrorBody>),
    ))]
pub async fn healthz(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    state
        .repo
        .ping()
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    Ok(respond(
        StatusCode::OK,
        HealthResponse {
            result: Outcome::Success,
            message: "ok".into(),
            database: state.repo.backend().into(),
        },
    ))
}

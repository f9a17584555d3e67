use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, Outcome, respond};
use crate::error::{ApiError, ErrorBody};
use crate::readiness::ReadinessChecks;
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
/// Answers 200 when the database answers (orchestrators probe `/livez` and `/readyz`).
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

#[derive(Debug, Serialize, ToSchema)]
pub struct LivenessResponse {
    pub result: Outcome,
    #[schema(example = "alive")]
    pub message: String,
}

/// Check that the process answers
///
/// The process answers (no database, no document store).
#[utoipa::path(get, path = "/livez", tag = "health", security(()),
    responses(
        (status = 200, description = "The process serves requests", body = Envelope<LivenessResponse>),
    ))]
pub async fn livez() -> Response {
    respond(
        StatusCode::OK,
        LivenessResponse {
            result: Outcome::Success,
            message: "alive".into(),
        },
    )
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ReadinessResponse {
    /// `success` when ready, `error` when not.
    pub result: Outcome,
    /// `ready`, or `not ready:` and the checks that failed.
    #[schema(example = "ready")]
    pub message: String,
    /// `sqlite` or `postgres`.
    #[schema(example = "sqlite")]
    pub database: String,
    pub checks: ReadinessChecks,
}

/// Check that the instance is ready for traffic
///
/// Ready for traffic: database and document store reachable, migrations applied.
/// 503 names the checks that failed (the log has the reasons).
#[utoipa::path(get, path = "/readyz", tag = "health", security(()),
    responses(
        (status = 200, description = "Database and document store reachable, every migration applied", body = Envelope<ReadinessResponse>),
        (status = 503, description = "Not ready; `checks` shows what failed", body = Envelope<ReadinessResponse>),
    ))]
pub async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    let checks = crate::readiness::check(&state).await;
    let failed = checks.failed();
    let (status, result, message) = if failed.is_empty() {
        (StatusCode::OK, Outcome::Success, "ready".to_owned())
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Outcome::Error,
            format!("not ready: {}", failed.join(", ")),
        )
    };
    respond(
        status,
        ReadinessResponse {
            result,
            message,
            database: state.repo.backend().into(),
            checks,
        },
    )
}

//! `GET /metrics`: the Prometheus metrics of this instance ([`crate::metrics`]), for operator
//! keys on the main listener, and without a key on `FILING_METRICS_LISTEN` ([`scrape`]); and the
//! layer that times every request for them ([`track`]).

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use domain::auth::Caller;

use crate::envelope::Envelope;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;

pub const PATH: &str = "/metrics";

/// Read this instance's metrics
///
/// The metrics of this instance, for operator keys (OpenMetrics text).
/// Without a key on `FILING_METRICS_LISTEN` when that is set. No label names a provider,
/// a company or a case.
#[utoipa::path(get, path = "/metrics", tag = "operator", operation_id = "metrics",
    responses(
        (status = 200, description = "Prometheus metrics in the OpenMetrics text format (docs/operations.md, \"Metrics\")",
            content_type = "application/openmetrics-text", body = String),
        (status = 401, description = "No valid API key", body = Envelope<ErrorBody>),
        (status = 403, description = "Not an operator key", body = Envelope<ErrorBody>),
    ))]
pub async fn scrape_as_operator(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
) -> Result<Response, ApiError> {
    crate::cases::access::operator_only(caller)?;
    Ok(scrape(State(state)).await)
}

/// The metrics without a key: the handler of the `FILING_METRICS_LISTEN` listener.
pub async fn scrape(State(state): State<Arc<AppState>>) -> Response {
    let text = state
        .metrics
        .render(crate::metrics::Sources {
            repo: state.repo.as_ref(),
            uploads: &state.uploads,
            instances: &state.instances,
            db_timeout: state.config.db_timeout,
        })
        .await;
    ([(CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], text).into_response()
}

/// Middleware: times each request and counts it under its route template (axum's
/// [`MatchedPath`], set for layers added with `Router::layer`), or [`crate::metrics::UNMATCHED`].
pub async fn track(
    State(state): State<Arc<AppState>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let started = std::time::Instant::now();
    let method = req.method().clone();
    let route = req
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map_or_else(
            || crate::metrics::UNMATCHED.to_owned(),
            |p| p.as_str().to_owned(),
        );
    let res = next.run(req).await;
    state
        .metrics
        .request(&method, route, res.status().as_u16(), started.elapsed());
    res
}

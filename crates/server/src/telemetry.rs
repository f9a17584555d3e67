//! Logging through `tracing`: human-readable text by default, JSON lines when configured.
//! Logs go to stderr so that CLI commands keep stdout for their JSON output.
//!
//! Each request is one span (`request`: method, path, route template, request id, and the
//! company or operator of its key once the key is known) and one line when it is answered
//! (status, latency in milliseconds as a number).

use std::time::Duration;

use axum::extract::{MatchedPath, Request};
use axum::response::Response;
use domain::auth::Caller;
use tower_http::classify::ServerErrorsFailureClass;
use tracing::Span;
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;
use crate::state::REQUEST_ID;

/// `filter` is checked when the settings are read (`FILING_LOG`); one that does not parse here
/// (a caller that skipped that) logs at `info`.
pub fn init(format: LogFormat, filter: &str) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    // A second init (tests start several servers in one process) keeps the first subscriber.
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// The span of one request. The route template is known here because the trace layer is
/// added with `Router::layer`, inside the routing; `company_id` or `operator_id` is filled
/// in by [`record_caller`] once the key is checked.
pub fn request_span(req: &Request) -> Span {
    let id = req
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or(crate::metrics::UNMATCHED, MatchedPath::as_str);
    tracing::info_span!(
        "request",
        method = %req.method(),
        path = %req.uri().path(),
        route,
        request_id = %id,
        company_id = tracing::field::Empty,
        operator_id = tracing::field::Empty,
    )
}

/// Names the company (a provider or a client company) or the operator of the request's key in
/// its span; never the key.
pub fn record_caller(caller: &Caller) {
    let span = Span::current();
    match caller {
        Caller::Provider { company_id, .. } | Caller::Client { company_id, .. } => {
            span.record("company_id", tracing::field::display(company_id));
        }
        Caller::Operator { operator_id } => {
            span.record("operator_id", tracing::field::display(operator_id));
        }
    }
}

/// Milliseconds with microseconds as decimals (`4.434`, not `4.433514000000001`).
fn millis(latency: Duration) -> f64 {
    latency.as_micros() as f64 / 1000.0
}

/// The request line: its status and latency (milliseconds, a number in JSON), in the
/// request's span.
pub fn on_response(res: &Response, latency: Duration, _span: &Span) {
    tracing::info!(
        status = res.status().as_u16(),
        latency_ms = millis(latency),
        "finished processing request"
    );
}

/// A 5xx answer (or a failed response), as an error beside the request line.
pub fn on_failure(failure: ServerErrorsFailureClass, latency: Duration, _span: &Span) {
    tracing::error!(
        classification = %failure,
        latency_ms = millis(latency),
        "response failed"
    );
}

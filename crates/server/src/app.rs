//! The application: shared state, the router with its middleware stack, and serving with a
//! graceful shutdown.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use store::Repository;
use store::documents::DocumentStore;
use tokio::net::TcpListener;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::{DefaultOnResponse, TraceLayer};

use crate::config::Config;
use crate::envelope::Envelope;
use crate::error::{ApiError, ErrorBody, ErrorCode};
use crate::extract::is_json;
use crate::links::LinkSigner;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// What every handler can reach.
pub struct AppState {
    pub repo: Arc<dyn Repository>,
    pub documents: DocumentStore,
    pub links: LinkSigner,
    pub config: Config,
    /// Wakes this instance's webhook worker when a request has written events.
    pub webhook_wake: tokio::sync::Notify,
}

impl AppState {
    /// Tells the webhook worker that new events may be waiting (they are in the database
    /// already; this only saves the worker's poll delay).
    pub fn wake_webhooks(&self) {
        self.webhook_wake.notify_one();
    }
}

/// Opens storage (creating the data folder, applying migrations) and loads the signing secret.
pub async fn build_state(config: Config) -> anyhow::Result<Arc<AppState>> {
    use anyhow::Context;
    crate::webhooks::install_tls();
    std::fs::create_dir_all(&config.storage.data_dir).with_context(|| {
        format!(
            "cannot create the data folder {}",
            config.storage.data_dir.display()
        )
    })?;
    let repo = store::connect(&config.storage.database_url)
        .await
        .context("cannot open the database")?;
    let documents = DocumentStore::local(&config.storage.documents_dir)?;
    let secret = match &config.signing_secret {
        Some(s) => s.as_bytes().to_vec(),
        None => crate::links::load_or_create_secret(&config.storage.data_dir)
            .context("cannot read or create the signing secret")?,
    };
    let links = LinkSigner::new(secret, config.public_url.clone());
    // Build the office indexes now rather than in the first request that needs them.
    let started = std::time::Instant::now();
    let stats = domain::offices::index_stats();
    tracing::debug!(
        elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
        heap_bytes = stats.heap_bytes,
        municipalities = stats.municipalities,
        "office indexes built"
    );
    Ok(Arc::new(AppState {
        repo,
        documents,
        links,
        config,
        webhook_wake: tokio::sync::Notify::new(),
    }))
}

/// The whole HTTP application. `extra` routes are mounted behind authentication like the API's
/// own (tests use it to reach a panicking handler).
pub fn router(state: Arc<AppState>, extra: Option<Router<Arc<AppState>>>) -> Router {
    let mut api = crate::routes::authenticated(&state.config);
    if let Some(extra) = extra {
        api = api.merge(extra);
    }
    let api = api
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::idempotency::layer,
        ))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::auth::require_key,
        ));

    Router::new()
        .merge(crate::routes::public())
        .merge(api)
        .fallback(|| async { ApiError::NotFound })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            state.config.request_timeout,
        ))
        .layer(CatchPanicLayer::custom(on_panic))
        .layer(middleware::from_fn(envelope_errors))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|req: &Request| {
                    let id = req
                        .headers()
                        .get(REQUEST_ID)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("");
                    tracing::info_span!("request", method = %req.method(), path = %req.uri().path(), request_id = %id)
                })
                .on_response(DefaultOnResponse::new().level(tracing::Level::INFO)),
        )
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .with_state(state)
}

fn on_panic(err: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let detail = err
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| err.downcast_ref::<&str>().copied())
        .unwrap_or("(no message)");
    ApiError::Internal(anyhow::anyhow!("handler panicked: {detail}")).into_response()
}

/// Puts every error answer into the envelope: ours gain the request id; those made by the
/// framework or a tower layer (404, 405, 408, 413, ...) are rewritten into our form.
async fn envelope_errors(req: Request, next: Next) -> Response {
    let request_id = req
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut res = next.run(req).await;
    let status = res.status();
    let body = match res.extensions_mut().remove::<ErrorBody>() {
        Some(body) => body,
        None if (status.is_client_error() || status.is_server_error())
            && !is_json(res.headers()) =>
        {
            let err = match status {
                StatusCode::NOT_FOUND => ApiError::NotFound,
                StatusCode::METHOD_NOT_ALLOWED => ApiError::MethodNotAllowed,
                StatusCode::PAYLOAD_TOO_LARGE => {
                    ApiError::PayloadTooLarge("the request body is larger than allowed".into())
                }
                StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                    ApiError::UnsupportedMediaType("unsupported content type".into())
                }
                StatusCode::REQUEST_TIMEOUT => ApiError::Timeout,
                StatusCode::UNAUTHORIZED => ApiError::Unauthorized("a valid API key is required"),
                s if s.is_server_error() => {
                    ApiError::Internal(anyhow::anyhow!("unexpected {s} from a layer"))
                }
                _ => ApiError::InvalidJson("the request could not be read".into()),
            };
            let mut body = err.body();
            if status == StatusCode::BAD_REQUEST {
                body.code = ErrorCode::BadRequest;
            }
            body
        }
        None => return res,
    };
    let body = ErrorBody { request_id, ..body };
    let bytes = serde_json::to_vec(&Envelope { response: body }).unwrap_or_default();
    res.headers_mut().remove(CONTENT_LENGTH);
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    *res.body_mut() = Body::from(bytes);
    res
}

/// Serves until `shutdown` resolves, then drains in-flight requests for at most the configured
/// shutdown timeout.
pub async fn serve(
    state: Arc<AppState>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let grace = state.config.shutdown_timeout;
    let worker = if state.config.webhooks.worker {
        Some(crate::webhooks::spawn_worker(state.clone())?)
    } else {
        tracing::info!("webhook worker disabled on this instance (FILING_WEBHOOK_WORKER=false)");
        None
    };
    let served = serve_router(router(state, None), listener, grace, shutdown).await;
    if let Some(w) = worker {
        w.stop().await;
    }
    served
}

/// Serves a built router (see [`router`]) until `shutdown`, draining for at most `grace`.
pub async fn serve_router(
    app: Router,
    listener: TcpListener,
    grace: std::time::Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let (signalled_tx, signalled_rx) = tokio::sync::oneshot::channel::<()>();
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        shutdown.await;
        tracing::info!("shutting down: draining in-flight requests");
        let _ = signalled_tx.send(());
    });
    let deadline = async move {
        if signalled_rx.await.is_ok() {
            tokio::time::sleep(grace).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        result = server => result?,
        () = deadline => tracing::warn!(?grace, "shutdown timeout reached; dropping remaining requests"),
    }
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

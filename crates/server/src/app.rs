//! The application: shared state, the router with its middleware stack, and serving with a
//! graceful shutdown.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use store::documents::DocumentStore;
use tokio::net::TcpListener;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

use crate::config::Config;
use crate::envelope::Envelope;
use crate::error::{ApiError, ErrorBody, ErrorCode};
use crate::extract::is_json;
use crate::links::LinkSigner;

pub use crate::state::{AppState, REQUEST_ID};

/// Runs `attempt` until it succeeds, fails in a way `may_pass` calls final, or `wait` has
/// passed: pauses of 1, 2, 4 ... up to 15 s between attempts, a warning naming `what` each time.
/// For what the start depends on and may come up after us (a container, a failover).
///
/// Each attempt is handed the time it may take: what is left of `wait`, at most `per_attempt`
/// (with `wait` zero, `per_attempt` for the one attempt). An attempt that keeps to it keeps the
/// whole within `wait`; no attempt starts once `wait` has passed.
async fn retry_at_start<T, E: std::fmt::Display>(
    what: &str,
    wait: std::time::Duration,
    per_attempt: std::time::Duration,
    mut attempt: impl AsyncFnMut(std::time::Duration) -> Result<T, E>,
    may_pass: impl Fn(&E) -> bool,
) -> Result<T, E> {
    let deadline = tokio::time::Instant::now() + wait;
    let left = || deadline.saturating_duration_since(tokio::time::Instant::now());
    let mut budget = if wait.is_zero() {
        per_attempt
    } else {
        per_attempt.min(wait)
    };
    let mut pause = std::time::Duration::from_secs(1);
    loop {
        let e = match attempt(budget).await {
            Ok(done) => return Ok(done),
            Err(e) => e,
        };
        if left().is_zero() || !may_pass(&e) {
            return Err(e);
        }
        tracing::warn!(
            error = %e,
            retry_in_secs = pause.min(left()).as_secs_f64(),
            gives_up_in_secs = left().as_secs(),
            "{what} cannot be reached yet"
        );
        tokio::time::sleep(pause.min(left())).await;
        budget = per_attempt.min(left());
        if budget.is_zero() {
            return Err(e);
        }
        pause = (pause * 2).min(std::time::Duration::from_secs(15));
    }
}

/// The document store the configuration names: the local folder, or the S3 bucket, which must
/// answer (wrong endpoint, credentials or bucket name stop the start with the reason).
///
/// `wait`: how long to keep trying while the bucket cannot be reached or answers "later" (see
/// `DocumentStore::check`).
pub async fn open_documents(
    storage: &crate::config::StorageConfig,
    wait: std::time::Duration,
) -> anyhow::Result<DocumentStore> {
    use anyhow::Context;
    match &storage.documents_s3 {
        None => Ok(DocumentStore::local(&storage.documents_dir)?),
        Some(s3) => {
            // object_store talks to the bucket through reqwest and rustls, as webhooks do.
            crate::webhooks::install_tls();
            let documents = DocumentStore::s3(s3)?;
            retry_at_start(
                "the document store",
                wait,
                s3.timeout,
                async |budget| match tokio::time::timeout(budget, documents.check()).await {
                    Ok(checked) => checked,
                    Err(_) => Err(store::documents::CheckFailure {
                        error: store::StoreError::Unavailable(format!(
                            "no answer within {:.1} s",
                            budget.as_secs_f64()
                        )),
                        may_pass: true,
                    }),
                },
                |e| e.may_pass,
            )
            .await
            .map_err(|e| e.error)
            .with_context(|| format!("cannot reach the document bucket {:?}", s3.bucket))?;
            Ok(documents)
        }
    }
}

/// Makes every file and folder this process creates from now on owner-only (umask 077): the
/// data folder holds the database, documents of founders and the keys that sign and seal.
pub fn owner_only_files() {
    #[cfg(unix)]
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
}

/// Sets `path` to `mode` when it exists (files and folders created by earlier versions, or
/// before the process's umask was set); a failure is a warning, not a failed start.
pub fn restrict_mode(path: &std::path::Path, mode: u32) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        match std::fs::metadata(path) {
            Ok(m) if m.permissions().mode() & 0o777 != mode => {
                if let Err(e) =
                    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
                {
                    tracing::warn!(path = %path.display(), error = %e, "cannot make owner-only");
                }
            }
            _ => {}
        }
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
}

/// The SQLite database file of a `sqlite:` URL.
/// The lock `filing serve` holds on an SQLite database (`<file>.serve.lock` beside it, in the
/// data folder by default) for as long as it runs: a second server on the same file refuses to
/// start rather than serve beside the first, which SQLite cannot share safely between
/// instances (each keeps its own limits, sessions and caches). CLI commands (backups, keys)
/// take no such lock and run beside the server as before. `None` for PostgreSQL.
pub fn lock_sqlite_for_serving(url: &str) -> anyhow::Result<Option<std::fs::File>> {
    use anyhow::Context;
    let Some(db) = crate::config::sqlite_file(url) else {
        return Ok(None);
    };
    let mut name = db.clone().into_os_string();
    name.push(".serve.lock");
    let path = std::path::PathBuf::from(name);
    if let Some(folder) = path.parent()
        && !folder.as_os_str().is_empty()
    {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot create the folder {}", folder.display()))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open the lock file {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "another `filing serve` is running on the SQLite database {} (it holds {}): one \
             SQLite file serves one instance. For more than one instance use PostgreSQL \
             (DATABASE_URL=postgres://...; docs/operations.md, \"Running N instances\")",
            db.display(),
            path.display()
        ),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(anyhow::anyhow!("cannot lock {}: {e}", path.display()))
        }
    }
}

/// Opens the database of the configuration and applies its migrations, waiting up to
/// `FILING_DB_STARTUP_WAIT_SECS` for a PostgreSQL server that cannot be reached yet (an SQLite
/// file opens at once or not at all). Each attempt first makes one connection of its own
/// within the time left ([`store::observe::probe`]), so the wait keeps to the setting and the
/// error names the reason (refused, unknown host, no answer, a wrong password); migrations
/// run after that, however long they take. The error says where the database is, what failed
/// and what to check.
async fn open_database(
    config: &Config,
    pool: store::PoolSettings,
) -> anyhow::Result<Arc<dyn store::Repository>> {
    let url = &config.storage.database_url;
    let sqlite = url.starts_with("sqlite:");
    // A SQLite file is local: there is nothing to wait for.
    let wait = if sqlite {
        std::time::Duration::ZERO
    } else {
        config.db_startup_wait
    };
    let started = tokio::time::Instant::now();
    // Only unreachability is waited out: a wrong password or a failing migration is final.
    let opened = retry_at_start(
        "the database",
        wait,
        config.db_timeout,
        async |budget| {
            store::observe::probe(url, budget).await?;
            store::connect_with(url, pool).await
        },
        |e| matches!(e, store::StoreError::Unavailable(_)),
    )
    .await;
    let e = match opened {
        Ok(repo) => return Ok(repo),
        Err(e) => e,
    };
    let target = store::observe::describe_database(url);
    let check = match (&e, sqlite) {
        (store::StoreError::Config(_), _) => "check DATABASE_URL (sqlite://PATH or \
             postgres://USER:PASSWORD@HOST:PORT/DATABASE)"
            .to_owned(),
        (store::StoreError::Migrate(_), _) => "the database was reached; a migration failed: \
             see docs/operations.md, \"Upgrades\""
            .to_owned(),
        (_, true) => "check that its folder exists, that this user may write to it, and that \
             the disk is not full"
            .to_owned(),
        (store::StoreError::Unavailable(_), false) => format!(
            "gave up after {:.0} s (FILING_DB_STARTUP_WAIT_SECS={}); check that PostgreSQL \
             runs and accepts connections there, that this host can reach it (name, port, \
             firewall), and DATABASE_URL",
            started.elapsed().as_secs_f64(),
            config.db_startup_wait.as_secs()
        ),
        (_, false) => "the server answered and refused: check the user, password and \
             database name in DATABASE_URL, and that the user may connect to that database"
            .to_owned(),
    };
    Err(anyhow::anyhow!(
        "cannot open the database: {target}: {e}; {check}"
    ))
}

/// Opens storage (creating the data folder, applying migrations) and loads the signing secret.
pub async fn build_state(mut config: Config) -> anyhow::Result<Arc<AppState>> {
    use anyhow::Context;
    crate::webhooks::install_tls();
    std::fs::create_dir_all(&config.storage.data_dir).with_context(|| {
        format!(
            "cannot create the data folder {}",
            config.storage.data_dir.display()
        )
    })?;
    restrict_mode(&config.storage.data_dir, 0o700);
    // SQLite gives its -wal and -shm files the database file's mode: an owner-only database
    // file makes them owner-only too.
    if let Some(db) = crate::config::sqlite_file(&config.storage.database_url) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&db);
        }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut name = db.clone().into_os_string();
            name.push(suffix);
            restrict_mode(std::path::Path::new(&name), 0o600);
        }
    }
    let pool = store::PoolSettings {
        acquire_timeout: config.db_timeout,
        busy_timeout: config.db_timeout,
        max_connections: config.db_pool_size,
    };
    // One limit for the database and a bucket together (FILING_DB_STARTUP_WAIT_SECS).
    let started = tokio::time::Instant::now();
    let repo = open_database(&config, pool).await?;
    // An S3 bucket (MinIO beside us, say) may come up after the service, as the database may.
    let left = config.db_startup_wait.saturating_sub(started.elapsed());
    let documents = open_documents(&config.storage, left).await?;
    if config.storage.documents_s3.is_none() {
        restrict_mode(&config.storage.documents_dir, 0o700);
    }
    let secret = match &config.signing_secret {
        Some(s) => s.as_bytes().to_vec(),
        None => crate::links::load_or_create_secret(&config.storage.data_dir)
            .context("cannot read or create the signing secret")?,
    };
    // Sealing is on by default: without FILING_WEBHOOK_SECRETS_KEY, a key in the data folder.
    config.webhooks.sealing = crate::sealing::keys_with_default(
        config.webhooks.sealing,
        config.signing_secret.as_deref(),
        &config.storage.data_dir,
        true,
    )
    .context("cannot read or create the webhook sealing key")?;
    // Secrets stored in clear (before sealing was the default) are sealed now.
    match crate::webhooks::seal_clear_secrets(repo.as_ref(), &config.webhooks.sealing).await {
        Ok(r) if r.resealed > 0 => tracing::info!(
            sealed = r.resealed,
            "webhook endpoint secrets stored in clear are sealed now"
        ),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "cannot seal the webhook secrets stored in clear"),
    }
    let answer_keys = crate::idempotency::answer_keys(&config.webhooks.sealing, &secret);
    let links = LinkSigner::new(secret, config.public_url.clone());
    // Build the office indexes now rather than in the first request that needs them.
    let started = std::time::Instant::now();
    let stats = domain::offices::index_stats();
    let berlin_streets = domain::offices::district::warm_up();
    tracing::debug!(
        elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
        heap_bytes = stats.heap_bytes,
        municipalities = stats.municipalities,
        berlin_streets,
        "office indexes built"
    );
    let keys = crate::auth::KeyCache::new(config.key_cache);
    let trade_offices = crate::recent::Recent::new(config.directory_cache);
    let spool_dir = crate::uploads::prepare_spool(&config.storage.data_dir)
        .context("cannot prepare the upload spool folder")?;
    let webhook_client =
        crate::webhooks::client(&config.webhooks).context("cannot build the webhook client")?;
    Ok(Arc::new(AppState {
        repo,
        documents,
        links,
        uploads: crate::limits::UploadSlots::new(
            config.max_concurrent_uploads,
            config.upload_reserve,
            config.max_uploads_per_provider,
        ),
        read_caps: crate::limits::ReadCaps::new(config.max_reads_per_company),
        instances: Default::default(),
        storage: crate::limits::storage::Storage::new(
            config.storage_quota,
            config.min_free_disk,
            config.storage.data_dir.clone(),
        ),
        spool_dir,
        pdf_checks: Default::default(),
        rate_limiter: crate::limits::rate_limiter(config.rate_limit),
        address_limiter: config
            .address_rate_limit
            .map(crate::limits::KeyRateLimiter::per_minute),
        config,
        webhook_wake: tokio::sync::Notify::new(),
        webhook_client,
        keys,
        trade_offices,
        answer_keys,
        case_locks: Default::default(),
        body_limit: crate::routes::body_limit,
        metrics: crate::metrics::Metrics::new(),
        console: Default::default(),
    }))
}

/// The whole HTTP application. `extra` routes are mounted behind authentication like the API's
/// own (tests use it to reach a panicking handler).
pub fn router(state: Arc<AppState>, extra: Option<Router<Arc<AppState>>>) -> Router {
    let mut api = crate::routes::authenticated(&state.config);
    if let Some(extra) = extra {
        api = api.merge(extra);
    }
    // Run in the reverse order: the key first, then its rate, then a read slot (a GET) or an
    // upload slot (and the storage it declares), and only then is the body read (by the
    // idempotency layer or the handler).
    let api = api
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::idempotency::layer,
        ))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::limits::upload_slots,
        ))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::limits::read_caps,
        ))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::limits::rate_limit,
        ))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::auth::require_key,
        ));

    Router::new()
        .merge(crate::routes::public())
        .merge(crate::console::routes(&state))
        .merge(api)
        .fallback(|| async { ApiError::NotFound })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(middleware::from_fn_with_state(
            crate::limits::Deadlines {
                body: state.config.body_read_timeout,
                body_min_rate: state.config.body_min_rate,
                request: state.config.request_timeout,
            },
            crate::limits::deadlines,
        ))
        .layer(CatchPanicLayer::custom(on_panic))
        .layer(middleware::from_fn(envelope_errors))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(crate::telemetry::request_span)
                .on_response(crate::telemetry::on_response)
                .on_failure(crate::telemetry::on_failure),
        )
        .layer(middleware::from_fn_with_state(
            state.clone(),
            crate::routes::metrics::track,
        ))
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
            && !is_json(res.headers())
            && !crate::console::is_page(&res) =>
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
                StatusCode::SERVICE_UNAVAILABLE => ApiError::Unavailable("503 from a layer".into()),
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
    let options = ServeOptions::from_config(&state.config);
    // FILING_METRICS_LISTEN: `/metrics` without a key, stopped with the main listener.
    let (stop_metrics, metrics_stopping) = tokio::sync::watch::channel(false);
    let metrics = match state.config.metrics_listen {
        None => None,
        Some(address) => {
            let listener = TcpListener::bind(address).await.map_err(|e| {
                anyhow::anyhow!("cannot listen on {address} (FILING_METRICS_LISTEN): {e}")
            })?;
            let address = listener.local_addr().unwrap_or(address);
            tracing::info!(%address, "serving metrics");
            let mut stopping = metrics_stopping;
            let stopped = async move {
                let _ = stopping.wait_for(|stop| *stop).await;
            };
            let app = metrics_router(state.clone());
            Some(tokio::spawn(serve_router(app, listener, options, stopped)))
        }
    };
    crate::cases::pending_xml::spawn_pending_writer(state.clone());
    let instance_jobs = crate::jobs::spawn(state.clone());
    let worker = if state.config.webhooks.worker {
        Some(crate::webhooks::spawn_worker(state.clone())?)
    } else {
        tracing::info!("webhook worker disabled on this instance (FILING_WEBHOOK_WORKER=false)");
        None
    };
    let shutdown = async move {
        shutdown.await;
        let _ = stop_metrics.send(true);
    };
    let (repo, instance) = (state.repo.clone(), state.instances.id);
    let served = serve_router(router(state, None), listener, options, shutdown).await;
    if let Some(metrics) = metrics {
        let _ = metrics.await;
    }
    if let Some(w) = worker {
        w.stop().await;
    }
    instance_jobs.abort();
    // The others stop counting this one at once.
    if let Err(e) = repo.forget_instance(instance).await {
        tracing::warn!(error = %e, "could not remove this instance from the live ones");
    }
    served
}

/// The application of `FILING_METRICS_LISTEN`: `GET /metrics` without a key, nothing else.
pub fn metrics_router(state: Arc<AppState>) -> Router {
    Router::new()
        .route(
            crate::routes::metrics::PATH,
            axum::routing::get(crate::routes::metrics::scrape),
        )
        .fallback(|| async { ApiError::NotFound })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .with_state(state)
}

/// How connections are served.
#[derive(Debug, Clone, Copy)]
pub struct ServeOptions {
    /// How long shutdown waits for in-flight requests.
    pub shutdown_grace: std::time::Duration,
    /// How long a client may take to send a request's headers (and how long an idle
    /// keep-alive connection is kept); the connection is closed after it.
    pub header_read_timeout: std::time::Duration,
}

impl ServeOptions {
    pub fn from_config(config: &Config) -> Self {
        Self {
            shutdown_grace: config.shutdown_timeout,
            header_read_timeout: config.header_read_timeout,
        }
    }
}

/// Serves a built router (see [`router`]) over HTTP/1.1 until `shutdown`, then stops accepting
/// and drains the open connections for at most `options.shutdown_grace`.
///
/// hyper's own connection builder rather than `axum::serve`, for the header read timeout
/// (slowloris): a client that has not sent complete headers within it is disconnected.
pub async fn serve_router(
    app: Router,
    listener: TcpListener,
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::server::graceful::GracefulShutdown;
    use hyper_util::service::TowerToHyperService;

    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => (stream, peer),
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Without TCP_NODELAY a response written in more than one segment (a document
        // download) waited for the client's delayed ACK (BENCHMARKS.md, "What the profiles showed, and what changed").
        let (stream, peer) = stream;
        let _ = stream.set_nodelay(true);
        // Each request knows its connection's client address (the per-address limits).
        let service = tower_http::add_extension::AddExtension::new(
            app.clone(),
            crate::limits::ClientAddr(peer.ip()),
        );
        let conn = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection closed with an error");
            }
        });
    }
    drop(listener);
    tracing::info!("shutting down: draining in-flight requests");
    let grace = options.shutdown_grace;
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(grace) => {
            tracing::warn!(?grace, "shutdown timeout reached; dropping remaining requests");
        }
    }
    Ok(())
}

/// A failed `accept`: a connection that died before it was accepted is skipped; anything else
/// (out of file descriptors) is logged and waited out for a second, not spun on.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::ConnectionAborted | ErrorKind::ConnectionRefused | ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!(error = %e, "accept failed; retrying in 1 s");
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
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

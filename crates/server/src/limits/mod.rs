//! Protection against slow and abusive clients (docs/api/limits.md): time limits
//! for receiving a request body and for the request after it, a cap on uploads in progress, and a
//! token bucket per company (all its API keys share it). The header read timeout is the HTTP server's (see [`crate::app::serve_router`]).

pub mod buckets;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

pub use buckets::{KeyRateLimiter, ShareGuard, UploadShares, rate_limiter};

use crate::error::ApiError;
use crate::state::AppState;

/// The time limits of one request (docs/api/limits.md, "Slow clients").
#[derive(Clone, Copy, Debug)]
pub struct Deadlines {
    /// What a body has to arrive in before the bytes it brings extend it.
    pub body: Duration,
    /// Every this many bytes received give the body one more second (0: none).
    pub body_min_rate: u64,
    /// What the request may take after the last byte of its body arrived (or after its
    /// headers, when the body is empty or never read).
    pub request: Duration,
}

/// Middleware: the request's time limits. A body must keep arriving at
/// `FILING_BODY_MIN_BYTES_PER_SEC` on average, after an allowance of
/// `FILING_BODY_READ_TIMEOUT_SECS`: at any moment after the headers, the time passed may not
/// exceed that allowance plus one second for every `body_min_rate` bytes received, so a body
/// that trickles is caught however it trickles, and a large upload over a slow but steady link
/// is not. While the handler waits for the body, only that rule applies (a pause is fine while
/// the body is ahead of it). `FILING_REQUEST_TIMEOUT_SECS` is counted from the last time the
/// body brought data (the headers, for a body never read), so the time spent uploading is not
/// taken from the handler's. Either limit passed is answered 408 `REQUEST_TIMEOUT`, whatever the
/// handler made of the failed read; the handler is dropped, which releases what it held (its
/// idempotency claim, its upload slot).
pub async fn deadlines(State(limits): State<Deadlines>, req: Request, next: Next) -> Response {
    let progress = Arc::new(Progress {
        start: tokio::time::Instant::now(),
        last_nanos: AtomicU64::new(0),
        waiting: AtomicBool::new(false),
        body_expired: AtomicBool::new(false),
    });
    let req = req.map(|body| Body::new(RateBody::new(body, limits, progress.clone())));
    let handler = next.run(req);
    tokio::pin!(handler);
    let res = loop {
        // While the body is awaited its own deadline governs; look again within a second.
        let deadline = if progress.waiting.load(Ordering::Relaxed) {
            tokio::time::Instant::now() + limits.request.min(Duration::from_secs(1))
        } else {
            progress.last() + limits.request
        };
        tokio::select! {
            // A response that is ready wins over a timer that fired in the same poll.
            biased;
            res = &mut handler => break res,
            () = tokio::time::sleep_until(deadline) => {
                if !progress.waiting.load(Ordering::Relaxed)
                    && progress.last() + limits.request <= tokio::time::Instant::now()
                {
                    if progress.body_expired.load(Ordering::Relaxed) {
                        return body_timeout(limits);
                    }
                    tracing::info!(timeout = ?limits.request, "request took too long");
                    return ApiError::Timeout.into_response();
                }
            }
        }
    };
    if progress.body_expired.load(Ordering::Relaxed) {
        return body_timeout(limits);
    }
    res
}

fn body_timeout(limits: Deadlines) -> Response {
    tracing::info!(
        allowance = ?limits.body,
        min_rate = limits.body_min_rate,
        "request body not received in time"
    );
    ApiError::BodyTimeout {
        secs: limits.body.as_secs(),
        min_rate: limits.body_min_rate,
    }
    .into_response()
}

/// What the body of one request has done so far, shared with [`deadlines`].
struct Progress {
    start: tokio::time::Instant,
    /// When the body last brought data or ended, in nanoseconds after `start`.
    last_nanos: AtomicU64,
    /// The handler is waiting for the body (its last poll was pending).
    waiting: AtomicBool,
    body_expired: AtomicBool,
}

impl Progress {
    fn last(&self) -> tokio::time::Instant {
        self.start + Duration::from_nanos(self.last_nanos.load(Ordering::Relaxed))
    }

    fn moved(&self) {
        let nanos = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.last_nanos.fetch_max(nanos, Ordering::Relaxed);
    }
}

/// A request body that fails once it falls behind its deadline (see [`deadlines`]).
struct RateBody {
    inner: Body,
    limits: Deadlines,
    progress: Arc<Progress>,
    received: u64,
    sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
    /// It ended or failed: nothing more is read or counted.
    done: bool,
}

impl RateBody {
    fn new(inner: Body, limits: Deadlines, progress: Arc<Progress>) -> Self {
        let sleep = Box::pin(tokio::time::sleep_until(progress.start + limits.body));
        Self {
            inner,
            limits,
            progress,
            received: 0,
            sleep,
            done: false,
        }
    }

    /// The body's deadline after `received` bytes.
    fn deadline(&self) -> tokio::time::Instant {
        let earned = match self.limits.body_min_rate {
            0 => Duration::ZERO,
            rate => Duration::from_secs_f64(self.received as f64 / rate as f64),
        };
        self.progress.start + self.limits.body + earned
    }

    fn fail(&mut self) -> axum::Error {
        self.done = true;
        self.progress.waiting.store(false, Ordering::Relaxed);
        self.progress.body_expired.store(true, Ordering::Relaxed);
        axum::Error::new(BodyTooSlow)
    }
}

/// Most bytes of a body still read after its request let go of it unfinished (refused before
/// or while reading: 401, 413, 422, ...), and for how long. A client that is still sending when
/// the answer goes out would otherwise often get a reset instead of the answer: closing a socket
/// with unread data resets the connection, and the reset can discard the answer the client has
/// not read yet. Beyond these, the connection is closed as before. 64 MiB: an upload refused
/// after its first part (issue 35: parts are refused before they are read) arrives at local
/// speeds faster than 1 MiB drains, and with 1 MiB the client often got a broken pipe instead
/// of its 422. Drained bytes are discarded as they come: they cost bandwidth, not memory.
const DRAIN_MOST: u64 = 64 * 1024 * 1024;
const DRAIN_FOR: Duration = Duration::from_secs(5);

impl Drop for RateBody {
    /// Reads the rest of an unfinished body in the background, within [`DRAIN_MOST`] and
    /// [`DRAIN_FOR`], so the connection is closed (or kept) with nothing left unread. Not for a
    /// body that failed its deadline: that one has had its time.
    fn drop(&mut self) {
        if self.done || http_body::Body::is_end_stream(&self.inner) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut rest = std::mem::replace(&mut self.inner, Body::empty());
        runtime.spawn(async move {
            use http_body_util::BodyExt;
            let drain = async {
                let mut read = 0u64;
                while let Some(Ok(frame)) = rest.frame().await {
                    read += frame.data_ref().map_or(0, |d| d.len() as u64);
                    if read > DRAIN_MOST {
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout(DRAIN_FOR, drain).await;
        });
    }
}

/// The error a [`RateBody`] fails with; [`deadlines`] turns it into 408.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time")]
struct BodyTooSlow;

impl http_body::Body for RateBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    /// The deadline is checked before each read, so a body consumed after it has passed fails
    /// even when its next bytes are already buffered: a consumer slower than the minimum rate
    /// cannot stretch the request without bound.
    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        use std::task::Poll;
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        if this.sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(this.fail())));
        }
        match std::pin::Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.received += data.len() as u64;
                    let deadline = this.deadline();
                    this.sleep.as_mut().reset(deadline);
                }
                this.progress.waiting.store(false, Ordering::Relaxed);
                this.progress.moved();
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(end) => {
                // The end (`None`) or the connection's failure: counted once.
                this.done = true;
                this.progress.waiting.store(false, Ordering::Relaxed);
                if end.is_none() {
                    this.progress.moved();
                }
                Poll::Ready(end)
            }
            Poll::Pending => {
                this.progress.waiting.store(true, Ordering::Relaxed);
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Whether a request carries a multipart body (an upload).
fn is_upload(req: &Request) -> bool {
    req.method() == Method::POST && crate::extract::is_multipart(req.headers())
}

/// Middleware (after authentication, before the idempotency layer reads the body): at most
/// `FILING_MAX_CONCURRENT_UPLOADS` multipart requests are served at once, and of those at most
/// `FILING_MAX_UPLOADS_PER_PROVIDER` (a quarter) for one provider. A provider's upload beyond
/// its share is refused at once with 429 `RATE_LIMITED` (its own uploads are what it waits
/// for); one beyond every slot with 503 `SERVICE_UNAVAILABLE`; both with `Retry-After` and
/// before the body is read.
pub async fn upload_slots(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    // A key that may not write is refused by the handler before it reads the body: it takes
    // no slot from the uploads that will be served.
    let may_write = req
        .extensions()
        .get::<domain::auth::Caller>()
        .is_some_and(|c| c.may_write());
    if !is_upload(&req) || !may_write {
        return next.run(req).await;
    }
    // Operators (one trusted party) share the slots without a share of their own.
    let provider = match req.extensions().get::<domain::auth::Caller>() {
        Some(domain::auth::Caller::Provider { company_id, .. }) => Some(*company_id),
        Some(domain::auth::Caller::Client { provider_id, .. }) => Some(*provider_id),
        _ => None,
    };
    let share = match provider {
        Some(p) => match state.upload_shares.take(p) {
            Some(guard) => Some(guard),
            None => {
                tracing::info!(
                    provider = %p,
                    share = state.config.max_uploads_per_provider,
                    "upload refused: the provider holds its share of the upload slots"
                );
                return ApiError::UploadShareUsed {
                    share: state.config.max_uploads_per_provider,
                }
                .into_response();
            }
        },
        None => None,
    };
    let Ok(permit) = state.upload_slots.clone().try_acquire_owned() else {
        tracing::warn!(
            limit = state.config.max_concurrent_uploads,
            "upload refused: all upload slots are in use"
        );
        return ApiError::Overloaded("too many uploads are in progress; retry shortly")
            .into_response();
    };
    let res = next.run(req).await;
    drop(permit);
    drop(share);
    res
}

/// Whose bucket a caller's requests take from: its company (a provider, or a client company),
/// or the operator, whichever of its keys it used.
fn bucket_of(caller: &domain::auth::Caller) -> uuid::Uuid {
    use domain::auth::Caller;
    match *caller {
        Caller::Provider { company_id, .. } | Caller::Client { company_id, .. } => company_id,
        Caller::Operator { operator_id } => operator_id,
    }
}

/// Middleware (after authentication): a request beyond its company's rate is answered 429
/// `RATE_LIMITED` with `Retry-After`. Requests without a key never get here (401 first).
pub async fn rate_limit(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    if let (Some(limiter), Some(caller)) = (
        &state.rate_limiter,
        req.extensions().get::<domain::auth::Caller>(),
    ) {
        let owner = bucket_of(caller);
        if let Err(retry_after_secs) = limiter.check(owner) {
            tracing::info!(%owner, retry_after_secs, "rate limited");
            return ApiError::RateLimited { retry_after_secs }.into_response();
        }
    }
    next.run(req).await
}

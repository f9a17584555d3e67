//! Protection against slow and abusive clients (docs/api/limits.md): time limits
//! for receiving a request body and for the request after it, a cap on uploads in progress, and a
//! token bucket per company (all its API keys share it). The header read timeout is the HTTP server's (see [`crate::app::serve_router`]).

pub mod buckets;
pub mod storage;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

pub use buckets::{KeyRateLimiter, ReadCaps, SlotGuard, SlotRefusal, UploadSlots, rate_limiter};

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
/// `FILING_MAX_CONCURRENT_UPLOADS` multipart requests are served at once, shared as
/// [`UploadSlots`] shares them (work-conserving; a provider holding none is served whenever a
/// slot is free). An upload of a provider that holds slots while the rest are kept for others
/// is refused at once with 429 `RATE_LIMITED` (its own uploads are what it waits for); one when
/// every slot is taken by others with 503 `SERVICE_UNAVAILABLE`; both with `Retry-After` and
/// before the body is read.
pub async fn upload_slots(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    // A key that may not write is refused by the handler before it reads the body: it takes
    // no slot from the uploads that will be served.
    let caller = req.extensions().get::<domain::auth::Caller>().copied();
    let Some(caller) = caller.filter(|c| c.may_write()) else {
        return next.run(req).await;
    };
    if !is_upload(&req) {
        return next.run(req).await;
    }
    // A provider with its client companies holds slots as one; an operator as one.
    let owner = match caller {
        domain::auth::Caller::Provider { company_id, .. } => company_id,
        domain::auth::Caller::Client { provider_id, .. } => provider_id,
        domain::auth::Caller::Operator { operator_id } => operator_id,
    };
    let slot = match state.uploads.acquire(owner, SLOT_WAIT).await {
        Ok(slot) => slot,
        Err(SlotRefusal::OwnShare { held }) => {
            tracing::info!(%owner, held, "upload refused: the other upload slots are kept for others");
            return ApiError::UploadShareUsed { share: held }.into_response();
        }
        Err(SlotRefusal::Full) => {
            tracing::warn!(
                limit = state.uploads.total(),
                "upload refused: all upload slots are in use"
            );
            return ApiError::Overloaded("too many uploads are in progress; retry shortly")
                .into_response();
        }
    };
    // The provider's storage quota and the free disk, on the length the upload declares.
    let declared = req
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(state.config.max_upload_bytes as u64);
    let provider = match caller {
        domain::auth::Caller::Operator { .. } => None,
        _ => Some(owner),
    };
    let reservation = match state
        .storage
        .admit(state.repo.as_ref(), provider, declared)
        .await
    {
        Ok(Ok(r)) => r,
        Ok(Err(refusal)) => {
            tracing::warn!(%owner, ?refusal, "upload refused for its storage");
            let (by, err) = match refusal {
                storage::StorageRefusal::Quota {
                    used,
                    quota,
                    upload,
                } => (
                    "quota",
                    ApiError::StorageQuota {
                        used,
                        quota,
                        upload,
                    },
                ),
                storage::StorageRefusal::Disk { .. } => (
                    "disk",
                    ApiError::Overloaded("the service is low on disk space; retry later"),
                ),
            };
            state.metrics.storage_refused(by);
            return err.into_response();
        }
        Err(e) => return ApiError::from(e).into_response(),
    };
    // A newcomer may take this slot (the provider holds the most): the upload ends with 503.
    let res = tokio::select! {
        res = next.run(req) => res,
        () = slot.ended() => {
            tracing::info!(%owner, "upload ended: its slot went to another provider's upload");
            ApiError::Overloaded(
                "this provider's uploads held the most upload slots and one went to another provider's upload; retry shortly",
            )
            .into_response()
        }
    };
    if res.status().is_success() {
        reservation.stored();
    }
    drop(reservation);
    drop(slot);
    res
}

/// How long an upload of a provider holding no slot waits for the slot it takes from the
/// provider holding the most (that upload is ended at once; its handler is dropped).
const SLOT_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Whose bucket a caller's requests take from: its company (a provider, or a client company),
/// or the operator, whichever of its keys it used.
fn bucket_of(caller: &domain::auth::Caller) -> uuid::Uuid {
    use domain::auth::Caller;
    match *caller {
        Caller::Provider { company_id, .. } | Caller::Client { company_id, .. } => company_id,
        Caller::Operator { operator_id } => operator_id,
    }
}

/// Middleware (after authentication): a `GET` waits for one of its provider's
/// `FILING_MAX_CONCURRENT_READS_PER_COMPANY` read slots (at most `FILING_DB_TIMEOUT_SECS`, then
/// 429 `RATE_LIMITED` with `Retry-After: 1`: its own reads are what it waits for), so that one
/// tenant's parallel costly lists leave the database's read connections to the others.
pub async fn read_caps(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let Some(caller) = req.extensions().get::<domain::auth::Caller>().copied() else {
        return next.run(req).await;
    };
    if req.method() != Method::GET {
        return next.run(req).await;
    }
    let owner = match caller {
        domain::auth::Caller::Provider { company_id, .. } => company_id,
        domain::auth::Caller::Client { provider_id, .. } => provider_id,
        domain::auth::Caller::Operator { operator_id } => operator_id,
    };
    let Some(permit) = state.read_caps.take(owner, state.config.db_timeout).await else {
        tracing::info!(%owner, cap = state.read_caps.per(), "read refused: the provider's concurrent reads are at their cap");
        state.metrics.rate_limited("reads");
        return ApiError::RateLimited {
            retry_after_secs: 1,
        }
        .into_response();
    };
    let res = next.run(req).await;
    drop(permit);
    res
}

/// What a request costs in tokens (docs/operations.md, "Rate limits"): one, an upload one
/// more per started MiB of its declared length (ten more without one), a list one more per
/// 100 rows it asks for (`limit`), so that the costly requests count as what they cost.
fn cost(req: &Request) -> u32 {
    const MIB: u64 = 1024 * 1024;
    if is_upload(req) {
        let declared = req
            .headers()
            .get(axum::http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        return match declared {
            Some(len) => 1 + u32::try_from(len.div_ceil(MIB)).unwrap_or(u32::MAX),
            None => 11,
        };
    }
    if req.method() == Method::GET
        && let Some(query) = req.uri().query()
    {
        let limit = url::form_urlencoded::parse(query.as_bytes())
            .find(|(name, _)| name == "limit")
            .and_then(|(_, v)| v.parse::<u32>().ok())
            .unwrap_or(0);
        return 1 + limit.min(1000) / 100;
    }
    1
}

/// Middleware (after authentication): a request beyond its company's rate is answered 429
/// `RATE_LIMITED` with `Retry-After`. Requests without a key never get here (401 first; they
/// are counted per client address, [`address_refused`]).
pub async fn rate_limit(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    if let (Some(limiter), Some(caller)) = (
        &state.rate_limiter,
        req.extensions().get::<domain::auth::Caller>(),
    ) {
        let owner = bucket_of(caller);
        // N instances behind a load balancer each take N times the cost: together they allow
        // the company its rate once (issue 53.3).
        let live = u32::try_from(state.instances.live()).unwrap_or(1);
        let cost = cost(&req).saturating_mul(live);
        if let Err(retry_after_secs) = limiter.check_n(owner, cost) {
            tracing::info!(%owner, cost, retry_after_secs, "rate limited");
            state.metrics.rate_limited("company");
            return ApiError::RateLimited { retry_after_secs }.into_response();
        }
    }
    next.run(req).await
}

/// The address of the client of a connection, put into each of its requests by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub std::net::IpAddr);

/// The client address a request's limits count against: the connection's, or behind a trusted
/// proxy the header it sets (of a list, the last entry: the one that proxy added). An IPv6
/// address counts as its /64, which one subscriber usually holds whole.
pub fn client_address(
    state: &AppState,
    headers: &axum::http::HeaderMap,
    connection: Option<ClientAddr>,
) -> Option<std::net::IpAddr> {
    let from_header = state
        .config
        .client_address_header
        .as_ref()
        .and_then(|name| {
            let value = headers.get(name)?.to_str().ok()?;
            value.rsplit(',').next()?.trim().parse().ok()
        });
    let addr = from_header.or(connection.map(|c| c.0))?;
    Some(match addr {
        std::net::IpAddr::V6(v6) if v6.to_ipv4_mapped().is_none() => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            std::net::IpAddr::V6(bits.into())
        }
        std::net::IpAddr::V6(v6) => std::net::IpAddr::V4(
            v6.to_ipv4_mapped()
                .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED),
        ),
        v4 => v4,
    })
}

/// Takes a token of the client address's bucket (a request without a valid key, a console
/// sign-in): `Some(seconds to wait)` when it has none left.
pub fn address_refused(
    state: &AppState,
    headers: &axum::http::HeaderMap,
    connection: Option<ClientAddr>,
) -> Option<u64> {
    let limiter = state.address_limiter.as_ref()?;
    let addr = client_address(state, headers, connection)?;
    let live = u32::try_from(state.instances.live()).unwrap_or(1);
    match limiter.check_n(addr, live) {
        Ok(()) => None,
        Err(wait) => {
            tracing::info!(%addr, wait, "client address rate limited");
            state.metrics.rate_limited("address");
            Some(wait)
        }
    }
}

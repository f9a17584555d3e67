//! Protection against slow and abusive clients (decisions.md, "Faults and limits"): a deadline
//! for receiving a request body, a cap on uploads in progress, and a token bucket per API key.
//! The header read timeout is the HTTP server's (see [`crate::app::serve_router`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::http::header::CONTENT_TYPE;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use http_body_util::BodyExt;
use tower_http::timeout::{DeadlineBody, TimeoutError};

use crate::app::AppState;
use crate::auth::KeyPrefix;
use crate::config::RateLimit;
use crate::error::ApiError;

/// Middleware: the whole request body must arrive within `timeout` of the request's headers,
/// however it trickles in (a hard deadline, not an idle timeout). A request whose body missed it
/// is answered 408 `REQUEST_TIMEOUT`, whatever the handler made of the failed read.
pub async fn body_deadline(State(timeout): State<Duration>, req: Request, next: Next) -> Response {
    let expired = Arc::new(AtomicBool::new(false));
    let seen = expired.clone();
    let req = req.map(move |body| {
        Body::new(
            DeadlineBody::new(timeout, body).map_err(move |e: tower_http::BoxError| {
                if e.is::<TimeoutError>() {
                    seen.store(true, Ordering::Relaxed);
                }
                e
            }),
        )
    });
    let res = next.run(req).await;
    if expired.load(Ordering::Relaxed) {
        tracing::info!(?timeout, "request body not received in time");
        return ApiError::BodyTimeout {
            secs: timeout.as_secs(),
        }
        .into_response();
    }
    res
}

/// Whether a request carries a multipart body (an upload).
fn is_upload(req: &Request) -> bool {
    req.method() == Method::POST
        && req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                v.trim_start()
                    .get(..19)
                    .is_some_and(|m| m.eq_ignore_ascii_case("multipart/form-data"))
            })
}

/// Middleware (after authentication, before the idempotency layer reads the body): at most
/// `FILING_MAX_CONCURRENT_UPLOADS` multipart requests are served at once; one more is refused
/// at once with 503 `SERVICE_UNAVAILABLE` and `Retry-After`, before its body is read.
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
    res
}

/// A token bucket per API key (GCRA, `governor`): `burst` requests at once, refilled at
/// `per_second`. Buckets of keys not seen for a while are dropped now and then, so the map
/// holds only recently active keys (and only valid ones: it sits after authentication).
pub struct KeyRateLimiter {
    limiter: DefaultKeyedRateLimiter<String>,
    clock: DefaultClock,
    last_sweep: std::sync::Mutex<Instant>,
}

/// How often idle buckets are swept out of the map.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

impl KeyRateLimiter {
    pub fn new(limit: RateLimit) -> Self {
        let quota = Quota::per_second(limit.per_second).allow_burst(limit.burst);
        let clock = DefaultClock::default();
        Self {
            limiter: governor::RateLimiter::dashmap_with_clock(quota, clock.clone()),
            clock,
            last_sweep: std::sync::Mutex::new(Instant::now()),
        }
    }

    /// Takes a token for `key`; when there is none, `Err` with the whole seconds (at least 1)
    /// until there is.
    pub fn check(&self, key: &str) -> Result<(), u64> {
        self.sweep_now_and_then();
        match self.limiter.check_key(&key.to_string()) {
            Ok(()) => Ok(()),
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.clock.now());
                Err(wait.as_secs_f64().ceil().max(1.0) as u64)
            }
        }
    }

    /// Keys with a bucket right now.
    pub fn tracked_keys(&self) -> usize {
        self.limiter.len()
    }

    fn sweep_now_and_then(&self) {
        let Ok(mut last) = self.last_sweep.try_lock() else {
            return;
        };
        if last.elapsed() < SWEEP_EVERY {
            return;
        }
        *last = Instant::now();
        self.sweep();
    }

    /// Drops the buckets that are full again (the same as no bucket) and frees their memory.
    fn sweep(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }
}

/// The rate limiter of a configuration, or `None` when limiting is off.
pub fn rate_limiter(limit: Option<RateLimit>) -> Option<KeyRateLimiter> {
    limit.map(KeyRateLimiter::new)
}

/// Middleware (after authentication): a request beyond its key's rate is answered 429
/// `RATE_LIMITED` with `Retry-After`. Requests without a key never get here (401 first).
pub async fn rate_limit(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    if let (Some(limiter), Some(KeyPrefix(key))) =
        (&state.rate_limiter, req.extensions().get::<KeyPrefix>())
        && let Err(retry_after_secs) = limiter.check(key)
    {
        tracing::info!(key = %key, retry_after_secs, "rate limited");
        return ApiError::RateLimited { retry_after_secs }.into_response();
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use super::*;

    fn limiter(per_second: u32, burst: u32) -> KeyRateLimiter {
        KeyRateLimiter::new(RateLimit {
            per_second: NonZeroU32::new(per_second).unwrap(),
            burst: NonZeroU32::new(burst).unwrap(),
        })
    }

    #[test]
    fn burst_then_whole_seconds_to_wait() {
        let l = limiter(1, 2);
        assert_eq!(l.check("a"), Ok(()));
        assert_eq!(l.check("a"), Ok(()));
        assert_eq!(l.check("a"), Err(1));
        assert_eq!(l.check("b"), Ok(()));
        // One token every 10 s: the wait is rounded up, never 0.
        let slow = KeyRateLimiter {
            limiter: governor::RateLimiter::dashmap(
                Quota::with_period(Duration::from_secs(10)).unwrap(),
            ),
            clock: DefaultClock::default(),
            last_sweep: std::sync::Mutex::new(Instant::now()),
        };
        assert_eq!(slow.check("a"), Ok(()));
        assert!(matches!(slow.check("a"), Err(9..=10)));
    }

    #[test]
    fn idle_keys_are_swept() {
        let l = limiter(1000, 1);
        for key in ["a", "b", "c"] {
            assert_eq!(l.check(key), Ok(()));
        }
        assert_eq!(l.tracked_keys(), 3);
        std::thread::sleep(Duration::from_millis(20));
        l.sweep();
        assert_eq!(l.tracked_keys(), 0);
    }
}

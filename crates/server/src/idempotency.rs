//! `Idempotency-Key` for POST endpoints (decisions.md §3), kept in the database so it holds
//! across instances and restarts.
//!
//! Same key and same request within 24 hours replays the first response (status and body); same
//! key with another request is 422 `IDEMPOTENCY_KEY_REUSED`; same key while the first request is
//! still running is 409 `IDEMPOTENCY_KEY_IN_USE`. Keys are scoped to the calling company (or
//! operator). Responses with a 5xx status are not kept, so a retry runs again.

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use domain::auth::Caller;
use sha2::{Digest, Sha256};
use store::{IdempotencyClaim, IdempotencyTimes, Repository};
use uuid::Uuid;

use crate::app::AppState;
use crate::error::ApiError;

pub const HEADER: &str = "idempotency-key";
/// Set on a replayed response.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";
const MAX_KEY_LEN: usize = 255;
/// Largest response body kept for replay.
const MAX_STORED_RESPONSE: usize = 4 * 1024 * 1024;

/// The multipart boundary of a content type, if any.
fn boundary(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.trim().split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| v.trim().trim_matches('"'))
    })
}

/// The fingerprint of a request: method, path, media type and body. A multipart boundary is
/// left out (clients pick a new random one on every retry), so the same parts in the same order
/// are the same request.
fn fingerprint(method: &Method, path: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut h = Sha256::new();
    let media_type = content_type.split(';').next().unwrap_or("").trim();
    for part in [
        method.as_str().as_bytes(),
        path.as_bytes(),
        media_type.as_bytes(),
    ] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part);
    }
    match boundary(content_type).filter(|b| !b.is_empty()) {
        Some(b) => {
            let b = b.as_bytes();
            let mut rest = body;
            while let Some(i) = rest.windows(b.len()).position(|w| w == b) {
                h.update(&rest[..i]);
                rest = &rest[i + b.len()..];
            }
            h.update(rest);
        }
        None => h.update(body),
    }
    h.finalize().to_vec()
}

/// Releases a claim whose request never finished (the client went away and the handler future
/// was dropped), so that the key does not stay "in use".
struct ClaimGuard {
    claim: Option<(Arc<dyn Repository>, Uuid, String)>,
}

impl ClaimGuard {
    fn disarm(&mut self) {
        self.claim = None;
    }
}

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        if let Some((repo, scope, key)) = self.claim.take()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            handle.spawn(async move {
                if let Err(e) = repo.release_idempotency_key(scope, &key).await {
                    tracing::warn!(error = %e, "could not release an abandoned idempotency key");
                }
            });
        }
    }
}

pub async fn layer(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    match handle(state, req, next).await {
        Ok(res) => res,
        Err(e) => e.into_response(),
    }
}

async fn handle(state: Arc<AppState>, req: Request, next: Next) -> Result<Response, ApiError> {
    if req.method() != Method::POST {
        return Ok(next.run(req).await);
    }
    let Some(raw_key) = req.headers().get(HEADER) else {
        return Ok(next.run(req).await);
    };
    let key = raw_key
        .to_str()
        .ok()
        .filter(|k| !k.is_empty() && k.len() <= MAX_KEY_LEN)
        .ok_or_else(|| {
            ApiError::validation(
                "Idempotency-Key",
                "invalid_header",
                format!("must be 1 to {MAX_KEY_LEN} visible ASCII characters"),
            )
        })?
        .to_string();
    let caller = *req
        .extensions()
        .get::<Caller>()
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("idempotency layer without caller")))?;

    let (parts, body) = req.into_parts();
    let body = to_bytes(body, state.config.max_request_bytes())
        .await
        .map_err(|_| ApiError::PayloadTooLarge("the request body is larger than allowed".into()))?;
    let content_type = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let hash = fingerprint(&parts.method, parts.uri.path(), content_type, &body);

    let scope = caller.scope_id();
    let times = IdempotencyTimes {
        now: time::OffsetDateTime::now_utc(),
        ttl: time::Duration::hours(24),
        abandon_after: time::Duration::try_from(state.config.request_timeout)
            .unwrap_or(time::Duration::MINUTE)
            + time::Duration::seconds(30),
    };
    match state
        .repo
        .claim_idempotency_key(scope, &key, &hash, times)
        .await?
    {
        IdempotencyClaim::InFlight => return Err(ApiError::IdempotencyKeyInUse),
        IdempotencyClaim::Mismatch => return Err(ApiError::IdempotencyKeyReused),
        IdempotencyClaim::Replay { status, body } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            let mut res = (status, body).into_response();
            res.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            res.headers_mut()
                .insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
            return Ok(res);
        }
        IdempotencyClaim::Claimed => {}
    }

    let mut guard = ClaimGuard {
        claim: Some((state.repo.clone(), scope, key.clone())),
    };
    let res = next.run(Request::from_parts(parts, Body::from(body))).await;
    let (res_parts, res_body) = res.into_parts();
    let bytes = match to_bytes(res_body, MAX_STORED_RESPONSE).await {
        Ok(b) => b,
        Err(e) => {
            guard.disarm();
            state.repo.release_idempotency_key(scope, &key).await?;
            return Err(ApiError::Internal(anyhow::anyhow!(
                "response too large to keep for idempotent replay: {e}"
            )));
        }
    };
    if res_parts.status.is_server_error() {
        state.repo.release_idempotency_key(scope, &key).await?;
    } else {
        state
            .repo
            .complete_idempotency_key(scope, &key, res_parts.status.as_u16(), &bytes)
            .await?;
    }
    guard.disarm();
    Ok(Response::from_parts(res_parts, Body::from(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipart_boundaries_do_not_count() {
        let body = |b: &str| {
            format!(
                "--{b}\r\nContent-Disposition: form-data; name=\"data\"\r\n\r\n{{}}\r\n--{b}--\r\n"
            )
        };
        let a = fingerprint(
            &Method::POST,
            "/x",
            "multipart/form-data; boundary=aaa111",
            body("aaa111").as_bytes(),
        );
        let b = fingerprint(
            &Method::POST,
            "/x",
            "multipart/form-data; boundary=\"zz9\"",
            body("zz9").as_bytes(),
        );
        assert_eq!(a, b);
        let c = fingerprint(
            &Method::POST,
            "/x",
            "multipart/form-data; boundary=zz9",
            body("zz9").replace("{}", "{ }").as_bytes(),
        );
        assert_ne!(a, c);
    }

    #[test]
    fn fingerprint_separates_parts() {
        let a = fingerprint(&Method::POST, "/a", "application/json", b"{}");
        assert_eq!(
            a,
            fingerprint(&Method::POST, "/a", "application/json", b"{}")
        );
        assert_ne!(
            a,
            fingerprint(&Method::POST, "/a", "application/json", b"{ }")
        );
        assert_ne!(
            a,
            fingerprint(&Method::POST, "/b", "application/json", b"{}")
        );
        assert_ne!(
            fingerprint(&Method::POST, "/ab", "", b""),
            fingerprint(&Method::POST, "/a", "b", b"")
        );
    }
}

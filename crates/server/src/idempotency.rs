//! `Idempotency-Key` for POST endpoints (docs/api/idempotency.md), kept in the database so it holds
//! across instances and restarts.
//!
//! Same key and same request within 24 hours replays the first response (status and body); same
//! key with another request is 422 `IDEMPOTENCY_KEY_REUSED`; same key while the first request is
//! still running is 409 `IDEMPOTENCY_KEY_IN_USE`. Keys are scoped to the calling company (or
//! operator), and for a key restricted to one environment to the company in that environment
//! ([`scope_of`]). Responses with a 5xx status are not kept, so a retry runs again.
//!
//! The case creates complete their key themselves, in the transaction that writes the case
//! ([`prepare`], [`store::IdempotentAnswer`]): were it completed afterwards, a crash between the
//! two would leave a case whose key still looks in flight, and once that claim counted as
//! abandoned a retry would create the case a second time.

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

use crate::error::ApiError;
use crate::state::AppState;

pub const HEADER: &str = "idempotency-key";
/// Set on a replayed response.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";
const MAX_KEY_LEN: usize = 255;
/// Largest response body kept for replay.
const MAX_STORED_RESPONSE: usize = 4 * 1024 * 1024;

/// The claim a request runs under, in its extensions, for handlers that complete the key in their
/// own transaction (the creates; see [`store::IdempotentAnswer`]).
#[derive(Debug, Clone)]
pub struct Claim {
    pub scope: Uuid,
    pub key: String,
}

/// Marks a response whose handler settled the claim itself (completed it with the case, or found
/// it taken over): the layer neither completes nor releases it.
#[derive(Debug, Clone, Copy)]
pub struct Settled;

/// A create's answer, serialised once before its transaction: the answer to commit with the
/// case (when the request has a key), sealed like every kept answer (it carries signed download
/// links, valid for a day: readable from the database alone they would hand out the case's
/// documents), and the response to send.
pub fn prepare<T: serde::Serialize>(
    keys: &crate::sealing::SealingKeys,
    claim: Option<&Claim>,
    status: StatusCode,
    body: T,
) -> Result<(Option<store::IdempotentAnswer>, Response), ApiError> {
    let bytes = serde_json::to_vec(&crate::envelope::Envelope { response: body })
        .map_err(|e| ApiError::Internal(e.into()))?;
    let answer = claim.map(|c| store::IdempotentAnswer {
        scope: c.scope,
        key: c.key.clone(),
        status: status.as_u16(),
        body: crate::sealing::seal_bytes(keys, &stored_aad(c.scope, &c.key), &bytes),
    });
    let mut res = (
        status,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        bytes,
    )
        .into_response();
    if claim.is_some() {
        res.extensions_mut().insert(Settled);
    }
    Ok((answer, res))
}

/// The answer when a create's claim was taken over by another request before it committed
/// (it ran past the abandon time): nothing was written, and the key is the other request's.
pub fn claim_lost() -> Response {
    let mut res = ApiError::IdempotencyKeyInUse.into_response();
    res.extensions_mut().insert(Settled);
    res
}

/// The multipart boundary of a content type, if any.
fn boundary(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.trim().split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| v.trim().trim_matches('"'))
    })
}

/// Hashes a request as its body streams by: method, path, media type and body. A multipart
/// boundary is left out (clients draw a new random one on every retry), so the same parts in
/// the same order are the same request.
struct Fingerprint {
    hasher: Sha256,
    /// The boundary to leave out; empty for other bodies.
    pattern: Vec<u8>,
    /// Unhashed bytes at the end of what was fed that may begin a boundary.
    carry: Vec<u8>,
}

impl Fingerprint {
    fn new(method: &Method, path: &str, content_type: &str) -> Self {
        let mut hasher = Sha256::new();
        let media_type = content_type.split(';').next().unwrap_or("").trim();
        for part in [
            method.as_str().as_bytes(),
            path.as_bytes(),
            media_type.as_bytes(),
        ] {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part);
        }
        Self {
            hasher,
            pattern: boundary(content_type).unwrap_or("").as_bytes().to_vec(),
            carry: Vec::new(),
        }
    }

    fn feed(&mut self, chunk: &[u8]) {
        if self.pattern.is_empty() {
            self.hasher.update(chunk);
            return;
        }
        let mut buf = std::mem::take(&mut self.carry);
        buf.extend_from_slice(chunk);
        let n = self.pattern.len();
        let mut start = 0;
        while let Some(pos) = buf[start..].windows(n).position(|w| w == self.pattern) {
            self.hasher.update(&buf[start..start + pos]);
            start += pos + n;
        }
        let keep_from = start.max(buf.len().saturating_sub(n - 1));
        self.hasher.update(&buf[start..keep_from]);
        self.carry = buf[keep_from..].to_vec();
    }

    fn finish(mut self) -> Vec<u8> {
        self.hasher.update(&self.carry);
        self.hasher.finalize().to_vec()
    }
}

#[cfg(test)]
fn fingerprint(method: &Method, path: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut f = Fingerprint::new(method, path, content_type);
    f.feed(body);
    f.finish()
}

/// Bodies up to this size stay in memory; larger ones (uploads) are spooled to an anonymous
/// temporary file, so a request is never held whole in memory twice.
const SPOOL_ABOVE: usize = 1024 * 1024;

/// A request body read once for its fingerprint, to be handed on to the handler.
enum Spooled {
    Memory(Vec<u8>),
    File(tokio::fs::File),
}

/// Reads the body, fingerprinting it on the way; more than `limit` bytes is 413.
async fn spool(
    body: Body,
    mut fingerprint: Fingerprint,
    limit: usize,
    dir: &std::path::Path,
) -> Result<(Spooled, Vec<u8>), ApiError> {
    use tokio::io::AsyncWriteExt;
    let too_large = || ApiError::PayloadTooLarge("the request body is larger than allowed".into());
    let mut stream = body.into_data_stream();
    let mut memory: Vec<u8> = Vec::new();
    let mut file: Option<tokio::fs::File> = None;
    let mut total = 0usize;
    while let Some(chunk) = futures::StreamExt::next(&mut stream).await {
        let chunk = chunk.map_err(|e| {
            ApiError::InvalidJson(format!("the request body could not be read: {e}"))
        })?;
        total += chunk.len();
        if total > limit {
            return Err(too_large());
        }
        fingerprint.feed(&chunk);
        match &mut file {
            Some(f) => f.write_all(&chunk).await.map_err(spool_error)?,
            None if memory.len() + chunk.len() > SPOOL_ABOVE => {
                std::fs::create_dir_all(dir).map_err(spool_error)?;
                let dir = dir.to_path_buf();
                let std_file = tokio::task::spawn_blocking(move || tempfile::tempfile_in(dir))
                    .await
                    .map_err(|e| ApiError::Internal(e.into()))?
                    .map_err(spool_error)?;
                let mut f = tokio::fs::File::from_std(std_file);
                f.write_all(&memory).await.map_err(spool_error)?;
                f.write_all(&chunk).await.map_err(spool_error)?;
                memory = Vec::new();
                file = Some(f);
            }
            None => memory.extend_from_slice(&chunk),
        }
    }
    let spooled = match file {
        Some(mut f) => {
            use tokio::io::AsyncSeekExt;
            f.flush().await.map_err(spool_error)?;
            f.seek(std::io::SeekFrom::Start(0))
                .await
                .map_err(spool_error)?;
            Spooled::File(f)
        }
        None => Spooled::Memory(memory),
    };
    Ok((spooled, fingerprint.finish()))
}

fn spool_error(e: std::io::Error) -> ApiError {
    ApiError::Unavailable(format!("cannot spool the request body: {e}"))
}

impl Spooled {
    fn into_body(self) -> Body {
        match self {
            Spooled::Memory(v) => Body::from(v),
            Spooled::File(f) => Body::from_stream(tokio_util::io::ReaderStream::new(f)),
        }
    }
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
        // Visible ASCII only (`openapi::IDEMPOTENCY_KEY_PATTERN`): a space or tab inside a
        // key is refused rather than taken as part of it.
        .filter(|k| {
            !k.is_empty() && k.len() <= MAX_KEY_LEN && k.bytes().all(|b| b.is_ascii_graphic())
        })
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
    if !caller.may_write() {
        // The handler refuses it (403) without reading the body; spooling up to 470 MB of a
        // trade create first would only cost the disk.
        return Ok(next.run(req).await);
    }

    let (mut parts, body) = req.into_parts();
    let content_type = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let fingerprint = Fingerprint::new(&parts.method, parts.uri.path(), content_type);
    // The route's own limit, and only for an upload: a JSON route, or any body but multipart
    // on an upload route, must not read hundreds of megabytes before its handler refuses them
    // (and only multipart requests take an upload slot).
    let route = parts
        .extensions
        .get::<axum::extract::MatchedPath>()
        .map_or("", |m| m.as_str());
    let limit = if crate::extract::is_multipart(&parts.headers) {
        (state.body_limit)(&state.config, route)
    } else {
        state.config.max_body_bytes
    };
    let (body, hash) = spool(
        body,
        fingerprint,
        limit,
        &state.config.storage.data_dir.join("tmp"),
    )
    .await?;

    let scope = scope_of(caller);
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
            let body =
                crate::sealing::open_bytes(&state.answer_keys, &stored_aad(scope, &key), &body)
                    .ok_or_else(|| {
                        ApiError::Internal(anyhow::anyhow!(
                            "the stored answer of this idempotency key is sealed and cannot be \
                             opened: neither FILING_WEBHOOK_SECRETS_KEY, \
                             FILING_WEBHOOK_SECRETS_OLD_KEYS nor the signing secret holds its key"
                        ))
                    })?;
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            let request_id = parts
                .headers
                .get(crate::state::REQUEST_ID)
                .and_then(|v| v.to_str().ok());
            let body = refreshed(&state.links, body, request_id);
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
    parts.extensions.insert(Claim {
        scope,
        key: key.clone(),
    });
    let res = next.run(Request::from_parts(parts, body.into_body())).await;
    if res.extensions().get::<Settled>().is_some() {
        guard.disarm();
        return Ok(res);
    }
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
        // Every kept answer is sealed: API key issues and webhook endpoint creates and
        // rotations carry the new key or secret, creates signed download links.
        let stored =
            crate::sealing::seal_bytes(&state.answer_keys, &stored_aad(scope, &key), &bytes);
        state
            .repo
            .complete_idempotency_key(scope, &key, res_parts.status.as_u16(), &stored)
            .await?;
    }
    guard.disarm();
    Ok(Response::from_parts(res_parts, Body::from(bytes)))
}

/// A kept answer as this replay gives it: download links signed anew (the kept ones were
/// issued with the first answer and may be about to expire), and an error's `request_id` this
/// request's. Any object with an `id` and a `download_url` is a document link.
fn refreshed(links: &crate::links::LinkSigner, body: Vec<u8>, request_id: Option<&str>) -> Vec<u8> {
    /// Signs every link anew; whether there was one.
    fn resign(v: &mut serde_json::Value, links: &crate::links::LinkSigner, now: i64) -> bool {
        match v {
            serde_json::Value::Object(o) => {
                let id = o
                    .get("id")
                    .and_then(|i| i.as_str())
                    .and_then(|i| Uuid::try_parse(i).ok());
                let mut found = false;
                if let (Some(id), Some(url)) = (id, o.get_mut("download_url"))
                    && url.is_string()
                {
                    *url = links.url(id, now).into();
                    found = true;
                }
                o.values_mut().fold(found, |f, c| resign(c, links, now) | f)
            }
            serde_json::Value::Array(a) => {
                a.iter_mut().fold(false, |f, c| resign(c, links, now) | f)
            }
            _ => false,
        }
    }
    // Answers without links or errors (most of them) go out byte for byte as kept.
    if !body.windows(14).any(|w| w == b"\"download_url\"")
        && !body.windows(7).any(|w| w == b"\"error\"")
    {
        return body;
    }
    let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return body;
    };
    let mut changed = resign(
        &mut v,
        links,
        time::OffsetDateTime::now_utc().unix_timestamp(),
    );
    if let (Some(r), Some(id)) = (
        v.get_mut("response").and_then(|r| r.as_object_mut()),
        request_id,
    ) && r.get("result").and_then(|x| x.as_str()) == Some("error")
    {
        r.insert("request_id".into(), id.into());
        changed = true;
    }
    if !changed {
        return body;
    }
    serde_json::to_vec(&v).unwrap_or(body)
}

/// The keys that seal the answers kept for idempotent replay, which carry API keys and webhook
/// secrets (shown once, never stored readable): `FILING_WEBHOOK_SECRETS_KEY` when set, else a
/// key derived from the link signing secret, which every instance has. Opening also tries the
/// old keys and the derived one, so answers sealed before a sealing key was set still replay.
pub fn answer_keys(
    sealing: &crate::sealing::SealingKeys,
    signing_secret: &[u8],
) -> crate::sealing::SealingKeys {
    let derived =
        crate::sealing::SealingKey::derived(signing_secret, "filing idempotency answers v1");
    let mut keys = sealing.clone();
    match keys.current {
        Some(_) => keys.old.push(derived),
        None => keys.current = Some(derived),
    }
    keys
}

/// What [`reseal_answers`] did with the answers kept for replay.
#[derive(Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct AnswerReseal {
    pub answers: usize,
    pub resealed: usize,
    pub unchanged: usize,
    /// Answers that open with none of the keys (left as they are; they expire within 24 hours,
    /// and a replay meanwhile answers 500).
    pub unreadable: usize,
}

/// Stores every kept answer as `keys` (see [`answer_keys`]) seal it, so that the old keys can
/// go once `filing webhooks reseal` has run. An answer that changed in between (its key was
/// claimed anew) is left to the instance that wrote it.
pub async fn reseal_answers(
    repo: &dyn store::Repository,
    keys: &crate::sealing::SealingKeys,
) -> store::Result<AnswerReseal> {
    use crate::sealing::{Resealed, reseal_bytes};
    /// Answers read at once: each can be megabytes (a create with its documents' links).
    const PAGE: i64 = 200;
    let mut report = AnswerReseal::default();
    let mut after: Option<(Uuid, String)> = None;
    loop {
        let page = repo
            .kept_answers(after.as_ref().map(|(s, k)| (*s, k.as_str())), PAGE)
            .await?;
        let last = page.last().map(|(s, k, _)| (*s, k.clone()));
        for (scope, key, body) in page {
            // Answers kept in clear by earlier versions (creates' answers, until 2026-11-26)
            // are sealed too: `reseal_bytes` takes a clear value as one to seal.
            report.answers += 1;
            match reseal_bytes(keys, &stored_aad(scope, &key), &body) {
                Resealed::Current => report.unchanged += 1,
                Resealed::Unreadable => report.unreadable += 1,
                Resealed::Changed(new) => {
                    if repo.replace_kept_answer(scope, &key, &body, &new).await? {
                        report.resealed += 1;
                    } else {
                        report.unchanged += 1;
                    }
                }
            }
        }
        match last {
            Some(last) => after = Some(last),
            None => return Ok(report),
        }
    }
}

/// What a stored answer is bound to: its caller and key.
/// The scope `caller`'s idempotency keys live in: its company's (or operator's) id. A key
/// restricted to one environment has a scope per environment, derived from that id (a version 8
/// UUID), so it is never handed an answer given to an unrestricted key or one of the other
/// environment, as a replay of the same key and body would otherwise be
/// (docs/adr/0021-environment-restricted-keys.md). Unrestricted keys keep the company's scope.
fn scope_of(caller: Caller) -> Uuid {
    let id = caller.scope_id();
    let Some(environment) = caller.environment() else {
        return id;
    };
    let digest = Sha256::new()
        .chain_update(b"rfs idempotency scope\0")
        .chain_update(id.as_bytes())
        .chain_update(environment.as_str())
        .finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

fn stored_aad(scope: Uuid, key: &str) -> Vec<u8> {
    let mut aad = scope.as_bytes().to_vec();
    aad.extend_from_slice(key.as_bytes());
    aad
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_fingerprint_matches_whole_body() {
        let ct = "multipart/form-data; boundary=XyZ123";
        let body = b"--XyZ123\r\nA: b\r\n\r\npayload XyZ12 XyZ123\r\n--XyZ123--\r\n".to_vec();
        let whole = fingerprint(&Method::POST, "/x", ct, &body);
        for size in 1..body.len() {
            let mut f = Fingerprint::new(&Method::POST, "/x", ct);
            for chunk in body.chunks(size) {
                f.feed(chunk);
            }
            assert_eq!(f.finish(), whole, "chunks of {size}");
        }
    }

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

    /// Answers kept before a sealing key was configured (sealed with the key derived from the
    /// signing secret) still replay after it is; answers sealed with the configured key need it.
    #[test]
    fn answers_sealed_with_the_derived_key_open_after_a_sealing_key_is_set() {
        use crate::sealing::{SealingKey, SealingKeys, open_bytes, seal_bytes};
        let secret = b"signing secret";
        let before = answer_keys(&SealingKeys::default(), secret);
        let sealed = seal_bytes(&before, b"aad", b"{\"api_key\":\"rfs_live_x\"}");
        assert!(sealed.starts_with(b"sealed:v1:"));
        let configured = SealingKey::parse("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=").unwrap();
        let after = answer_keys(&SealingKeys::new(configured), secret);
        assert_eq!(
            open_bytes(&after, b"aad", &sealed).as_deref(),
            Some(&b"{\"api_key\":\"rfs_live_x\"}"[..])
        );
        let sealed_after = seal_bytes(&after, b"aad", b"x");
        assert_eq!(open_bytes(&before, b"aad", &sealed_after), None);
        // Another signing secret derives another key.
        assert_eq!(
            open_bytes(
                &answer_keys(&SealingKeys::default(), b"other"),
                b"aad",
                &sealed
            ),
            None
        );
    }
}

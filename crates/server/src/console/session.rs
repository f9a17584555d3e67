//! Console sessions: an operator signs in with an operator key and gets a random session
//! token in an `HttpOnly`, `SameSite=Strict` cookie (`Secure` when the service's public URL is
//! https; a session cookie, without `Max-Age`: it ends with the browser too). The database keeps
//! the session (operator, key prefix, CSRF token, the next page's messages) by the token's
//! SHA-256, so every instance serves it and a restart signs no one out (issue 53.1): it ends
//! after [`IDLE`] without a request, after [`MAX_AGE`] in any case, on sign-out, and as soon as
//! the operator key it was opened with is revoked (docs/adr/0026-operator-console.md,
//! docs/adr/0032-instances-share-the-database.md).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::header::{COOKIE as COOKIE_HEADER, LOCATION};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use uuid::Uuid;

/// The session cookie's name.
pub const COOKIE: &str = "filing_console";
/// A session ends after this long without a request.
pub const IDLE: Duration = Duration::from_secs(30 * 60);
/// A session ends this long after sign-in, however busy.
pub const MAX_AGE: Duration = Duration::from_secs(10 * 60 * 60);
/// A session's last request is written at most this often (its idle time is this exact).
const SEEN_EVERY: Duration = Duration::from_secs(60);

/// A message shown once on the next page (the outcome of a form).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Flash {
    pub ok: bool,
    pub message: String,
    /// Field and what is wrong with it (from a 422).
    pub fields: Vec<(String, String)>,
}

impl Flash {
    /// What a failed request shows: its message and every broken field.
    pub fn failed(e: crate::error::ApiError) -> Self {
        let b = e.body();
        if e.status().is_server_error() {
            tracing::error!(error = %b.message, "console request failed");
        }
        Flash {
            ok: false,
            message: b.message,
            fields: b
                .errors
                .unwrap_or_default()
                .into_iter()
                .map(|f| (f.field, f.message))
                .collect(),
        }
    }
}

/// A signed-in operator.
#[derive(Debug)]
pub struct Session {
    pub operator_id: Uuid,
    pub operator_name: String,
    /// The prefix of the key the session was opened with: the session ends with the key.
    pub key_prefix: String,
    /// The token every form of this session carries (`csrf` field).
    pub csrf: String,
    /// The messages of the last form, for this page (read and cleared by a `GET`).
    flash: Mutex<Vec<Flash>>,
}

impl Session {
    pub fn push_flash(&self, flash: Flash) {
        if let Ok(mut f) = self.flash.lock() {
            f.push(flash);
        }
    }

    pub fn take_flash(&self) -> Vec<Flash> {
        self.flash
            .lock()
            .map(|mut f| std::mem::take(&mut *f))
            .unwrap_or_default()
    }

    /// Whether `sent` is this session's CSRF token (in constant time).
    pub fn csrf_ok(&self, sent: &str) -> bool {
        sent.as_bytes().ct_eq(self.csrf.as_bytes()).into()
    }
}

/// The sessions, in the database every instance shares.
#[derive(Default)]
pub struct Sessions;

fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

use crate::clock::{epoch_micros as now_us, micros};

impl Sessions {
    /// Opens a session; returns its token (for the cookie only: the database keeps its digest).
    pub async fn start(
        &self,
        repo: &dyn store::Repository,
        operator_id: Uuid,
        operator_name: String,
        key_prefix: String,
    ) -> Result<String, store::StoreError> {
        let token = random_token();
        let now = now_us();
        repo.insert_console_session(&store::ConsoleSessionRecord {
            token_hash: digest(&token).to_vec(),
            operator_id,
            operator_name,
            key_prefix,
            csrf: random_token(),
            started_us: now,
            seen_us: now,
            flash: None,
        })
        .await?;
        Ok(token)
    }

    /// The live session of `token`, with its messages for this page when `take_flash` (they
    /// are cleared, so they show once); `None` when there is none or it expired (then it is
    /// removed).
    pub async fn get(
        &self,
        repo: &dyn store::Repository,
        token: &str,
        take_flash: bool,
    ) -> Result<Option<Arc<Session>>, store::StoreError> {
        let key = digest(token);
        let Some(r) = repo.get_console_session(&key).await? else {
            return Ok(None);
        };
        let now = now_us();
        if now - r.seen_us > micros(IDLE) || now - r.started_us > micros(MAX_AGE) {
            repo.delete_console_session(&key).await?;
            return Ok(None);
        }
        if now - r.seen_us > micros(SEEN_EVERY) {
            repo.touch_console_session(&key, now).await?;
        }
        let mut flash = Vec::new();
        if take_flash && let Some(text) = &r.flash {
            flash = serde_json::from_str(text).unwrap_or_default();
            repo.set_console_flash(&key, None).await?;
        }
        Ok(Some(Arc::new(Session {
            operator_id: r.operator_id,
            operator_name: r.operator_name,
            key_prefix: r.key_prefix,
            csrf: r.csrf,
            flash: Mutex::new(flash),
        })))
    }

    /// Keeps `flash` for the session's next page (after a form's redirect, on whichever
    /// instance serves it).
    pub async fn push_flash(
        &self,
        repo: &dyn store::Repository,
        token: &str,
        flash: Flash,
    ) -> Result<(), store::StoreError> {
        let key = digest(token);
        let mut all: Vec<Flash> = match repo.get_console_session(&key).await? {
            Some(r) => r
                .flash
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default(),
            None => return Ok(()),
        };
        all.push(flash);
        let text = serde_json::to_string(&all).ok();
        repo.set_console_flash(&key, text).await
    }

    pub async fn end(
        &self,
        repo: &dyn store::Repository,
        token: &str,
    ) -> Result<(), store::StoreError> {
        repo.delete_console_session(&digest(token)).await
    }
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(COOKIE_HEADER)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// A 303 to `to`.
pub fn see_other(to: &str) -> Response {
    let mut res = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        res.headers_mut().insert(LOCATION, v);
    }
    res
}

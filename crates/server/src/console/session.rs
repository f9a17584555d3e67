//! Console sessions: an operator signs in with an operator key and gets a random session
//! token in an `HttpOnly`, `SameSite=Strict` cookie (`Secure` when the service's public URL is
//! https). The server keeps the session (operator, key prefix, CSRF token) in memory, by the
//! token's SHA-256: it ends after [`IDLE`] without a request, after [`MAX_AGE`] in any case,
//! on sign-out, and as soon as the operator key it was opened with is revoked
//! (docs/adr/0026-operator-console.md says why in memory and what that costs).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::FromRequestParts;
use axum::http::header::{COOKIE as COOKIE_HEADER, LOCATION};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use crate::state::AppState;

/// The session cookie's name.
pub const COOKIE: &str = "filing_console";
/// A session ends after this long without a request.
pub const IDLE: Duration = Duration::from_secs(30 * 60);
/// A session ends this long after sign-in, however busy.
pub const MAX_AGE: Duration = Duration::from_secs(10 * 60 * 60);
/// The most sessions an instance keeps (the oldest idle ones go first beyond it).
const CAPACITY: u64 = 10_000;

/// A message shown once on the next page (the outcome of a form).
#[derive(Debug, Clone)]
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
    started: Instant,
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

/// The sessions of this instance.
pub struct Sessions {
    cache: moka::sync::Cache<[u8; 32], Arc<Session>>,
}

impl Default for Sessions {
    fn default() -> Self {
        Self {
            cache: moka::sync::Cache::builder()
                .max_capacity(CAPACITY)
                .time_to_idle(IDLE)
                .time_to_live(MAX_AGE)
                .build(),
        }
    }
}

fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Sessions {
    /// Opens a session; returns its token (for the cookie only: the server keeps its digest).
    pub fn start(&self, operator_id: Uuid, operator_name: String, key_prefix: String) -> String {
        let token = random_token();
        let session = Session {
            operator_id,
            operator_name,
            key_prefix,
            csrf: random_token(),
            started: Instant::now(),
            flash: Mutex::new(Vec::new()),
        };
        self.cache.insert(digest(&token), Arc::new(session));
        token
    }

    pub fn get(&self, token: &str) -> Option<Arc<Session>> {
        let key = digest(token);
        let session = self.cache.get(&key)?;
        if session.started.elapsed() > MAX_AGE {
            self.cache.invalidate(&key);
            return None;
        }
        Some(session)
    }

    pub fn end(&self, token: &str) {
        self.cache.invalidate(&digest(token));
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

/// The `Set-Cookie` of the session: `token`, or an expired one that removes it.
pub fn session_cookie(state: &AppState, token: Option<&str>) -> HeaderValue {
    let secure = if state.config.public_url.starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    let value = match token {
        Some(t) => format!(
            "{COOKIE}={t}; Path=/console; HttpOnly; SameSite=Strict; Max-Age={}{secure}",
            MAX_AGE.as_secs()
        ),
        None => format!("{COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0{secure}"),
    };
    HeaderValue::from_str(&value).unwrap_or(HeaderValue::from_static("filing_console=; Max-Age=0"))
}

/// A 303 to `to`.
pub fn see_other(to: &str) -> Response {
    let mut res = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        res.headers_mut().insert(LOCATION, v);
    }
    res
}

/// The signed-in operator of a console request; without a live session the request is sent
/// to the sign-in page (which says the session expired when a cookie was sent).
pub struct Operator {
    pub session: Arc<Session>,
    pub token: String,
}

impl Operator {
    pub fn caller(&self) -> domain::auth::Caller {
        domain::auth::Caller::Operator {
            operator_id: self.session.operator_id,
        }
    }

    pub fn actor(&self) -> crate::cases::steps::Actor {
        crate::cases::steps::Actor::Operator(self.session.operator_id)
    }
}

impl FromRequestParts<Arc<AppState>> for Operator {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, Self::Rejection> {
        let Some(token) = cookie(&parts.headers, COOKIE) else {
            return Err(see_other("/console/login"));
        };
        let expired = || {
            let mut res = see_other("/console/login?expired=1");
            res.headers_mut()
                .insert(axum::http::header::SET_COOKIE, session_cookie(state, None));
            res
        };
        let Some(session) = state.console.get(token) else {
            return Err(expired());
        };
        // The key may have been revoked since sign-in (on this instance at once, on others
        // within the key cache's time).
        match state
            .keys
            .find(state.repo.as_ref(), &session.key_prefix)
            .await
        {
            Ok(Some(k)) if k.revoked_at.is_none() => {}
            Ok(_) => {
                state.console.end(token);
                return Err(expired());
            }
            Err(e) => return Err(crate::error::ApiError::from(e).into_response()),
        }
        Ok(Operator {
            session,
            token: token.to_string(),
        })
    }
}

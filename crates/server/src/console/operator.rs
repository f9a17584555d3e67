//! The signed-in operator of a console request ([`Operator`], an extractor over the
//! application's state) and the cookie that carries the session ([`session_cookie`]); the
//! sessions themselves are [`super::session`].

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::HeaderValue;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

use super::session::{COOKIE, Session, cookie, see_other};
use crate::state::AppState;

/// The `Set-Cookie` of the session: `token`, or an expired one that removes it.
pub fn session_cookie(state: &AppState, token: Option<&str>) -> HeaderValue {
    let secure = if state.config.public_url.starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    let value = match token {
        // A session cookie (no `Max-Age`): the server ends the session after `IDLE` or
        // `MAX_AGE`, the browser when it closes.
        Some(t) => format!("{COOKIE}={t}; Path=/console; HttpOnly; SameSite=Strict{secure}"),
        None => format!("{COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0{secure}"),
    };
    HeaderValue::from_str(&value).unwrap_or(HeaderValue::from_static("filing_console=; Max-Age=0"))
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

    pub fn actor(&self) -> domain::lifecycle::Actor {
        domain::lifecycle::Actor::Operator(self.session.operator_id)
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
        // A page (`GET`) shows the messages of the last form once.
        let page = parts.method == axum::http::Method::GET;
        let session = match state.console.get(state.repo.as_ref(), token, page).await {
            Ok(Some(session)) => session,
            Ok(None) => return Err(expired()),
            Err(e) => return Err(crate::error::ApiError::from(e).into_response()),
        };
        // The key may have been revoked since sign-in: a form (a change) reads the key from
        // the database, on every instance at once; a page within the key cache's time.
        let key = if page {
            state
                .keys
                .find(state.repo.as_ref(), &session.key_prefix)
                .await
        } else {
            state
                .keys
                .find_fresh(state.repo.as_ref(), &session.key_prefix)
                .await
        };
        match key {
            Ok(Some(k)) if k.revoked_at.is_none() => {}
            Ok(_) => {
                if let Err(e) = state.console.end(state.repo.as_ref(), token).await {
                    return Err(crate::error::ApiError::from(e).into_response());
                }
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

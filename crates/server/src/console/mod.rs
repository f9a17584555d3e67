//! The operator console: server-rendered HTML at `/console/` for the people who process the
//! cases (issue 39; docs/console.md, docs/adr/0026-operator-console.md).
//!
//! - [`session`]: sign-in with an operator key, the session cookie, CSRF tokens.
//! - [`queue`]: the work queues, search and filters.
//! - [`case`]: a case's page: its data, documents, history, webhook deliveries and the steps it
//!   can take now.
//! - [`actions`]: the forms' targets. Each calls the same application-layer function as the
//!   operator API ([`crate::cases`]); none implements a step of its own.
//!
//! No script at all: every control is a link or a form, so the Content-Security-Policy allows
//! no script, and the pages work with the keyboard alone. The style sheet is compiled into the
//! binary.

pub mod actions;
pub mod case;
pub mod i18n;
pub mod operator;
pub mod queue;
pub mod session;

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Query, Request, State};
use axum::http::header::{self, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use domain::lifecycle::{Lifecycle, TaxStatus, TradeStatus};
use maud::{DOCTYPE, Markup, html};
use serde::Deserialize;
use store::CaseKind;

use crate::error::ApiError;
use crate::state::AppState;
use i18n::Lang;
use operator::{Operator, session_cookie};
use session::{Session, see_other};

/// The console's style sheet, compiled in.
const STYLE: &str = include_str!("console.css");

/// The console's policy: nothing but this origin's style sheet and forms; no script, no frames.
pub const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; \
                       frame-ancestors 'none'; base-uri 'none'";

pub fn routes(state: &AppState) -> Router<Arc<AppState>> {
    let licence_limit = DefaultBodyLimit::max(state.config.max_licence_bytes() + 64 * 1024);
    let router = kind_routes::<TaxStatus>(kind_routes::<TradeStatus>(Router::new()));
    router
        .route("/console", get(|| async { see_other("/console/") }))
        .route("/console/", get(home))
        .route("/console/login", get(login_page).post(login))
        .route("/console/logout", post(logout))
        .route("/console/lang/{code}", get(switch_lang))
        .route("/console/console.css", get(style))
        .route("/console/documents/{id}", get(case::document))
        .route("/console/documents/{id}/xml", get(case::xml))
        .route(
            "/console/trade/{id}/licence",
            post(actions::trade_licence).layer(licence_limit),
        )
        .route("/console/trade/{id}/details", post(actions::trade_details))
        .route(
            "/console/trade/{id}/owners/{index}/identity",
            post(actions::identity),
        )
        .route("/console/tax/{id}/office", post(actions::tax_office))
        .fallback(|lang: Lang| async move { error_page(lang, StatusCode::NOT_FOUND, None) })
        .layer(middleware::from_fn(guard))
}

/// A kind's queue (`PATH`), case page (`PATH/{id}`) and status step (`PATH/{id}/transition`):
/// the handlers every kind has, at the paths its pages link to.
fn kind_routes<K: case::CaseView + actions::Step + 'static>(
    router: Router<Arc<AppState>>,
) -> Router<Arc<AppState>>
where
    for<'a> case::Common<'a>: From<&'a K::Case>,
{
    router
        .route(K::PATH, get(queue::queue::<K>))
        .route(&format!("{}/{{id}}", K::PATH), get(case::page::<K>))
        .route(
            &format!("{}/{{id}}/transition", K::PATH),
            post(actions::step::<K>),
        )
}

/// Every console answer: the security headers, and a POST only from this origin (the
/// `SameSite=Strict` cookie and the forms' CSRF token are the other two locks).
async fn guard(req: Request, next: Next) -> Response {
    if req.method() == Method::POST && !same_origin(&req) {
        let mut res = (StatusCode::FORBIDDEN, "cross-origin form refused").into_response();
        res.extensions_mut().insert(ConsoleAnswer);
        return res;
    }
    let mut res = next.run(req).await;
    res.extensions_mut().insert(ConsoleAnswer);
    let h = res.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "same-origin"),
    ] {
        h.insert(name, HeaderValue::from_static(value));
    }
    h.entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    res
}

/// A kind of case as the console shows it, named by its statuses: its queue, its case pages
/// and the forms on them.
pub trait Kind: Lifecycle + Into<domain::case_state::CaseStatus> + Send + Sync {
    const KIND: CaseKind;
    /// The queue's path; a case's page is `<PATH>/<id>`.
    const PATH: &'static str;
    /// The queue's title key.
    const NAV: &'static str;
}

impl Kind for TradeStatus {
    const KIND: CaseKind = CaseKind::Trade;
    const PATH: &'static str = "/console/trade";
    const NAV: &'static str = "nav.trade";
}

impl Kind for TaxStatus {
    const KIND: CaseKind = CaseKind::Tax;
    const PATH: &'static str = "/console/tax";
    const NAV: &'static str = "nav.tax";
}

/// Whether a POST comes from a page of this origin: `Sec-Fetch-Site` when the browser sends
/// it, else `Origin` against `Host`; a request with neither (a non-browser client) is let
/// through to the CSRF token check.
fn same_origin(req: &Request) -> bool {
    let h = req.headers();
    if let Some(site) = h.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return matches!(site, "same-origin" | "none");
    }
    match (
        h.get(header::ORIGIN).and_then(|v| v.to_str().ok()),
        h.get(header::HOST).and_then(|v| v.to_str().ok()),
    ) {
        (Some(origin), Some(host)) => origin
            .split_once("://")
            .is_some_and(|(_, authority)| authority == host),
        (Some(_), None) => false,
        (None, _) => true,
    }
}

async fn style() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        STYLE,
    )
        .into_response()
}

/// Whether an answer is a console page (or the console's plain refusal), which the API's
/// error envelope leaves as it is.
pub fn is_page(res: &Response) -> bool {
    res.extensions().get::<ConsoleAnswer>().is_some()
}

/// Marks the console's answers (set by [`guard`]).
#[derive(Debug, Clone, Copy)]
struct ConsoleAnswer;

/// An HTML answer.
pub fn html_response(status: StatusCode, markup: Markup) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        markup.into_string(),
    )
        .into_response()
}

/// The page around every console page: the skip link, the navigation, the language switch,
/// the signed-in operator and the sign-out button, and the messages of the last form.
pub fn layout(
    lang: Lang,
    title: &str,
    here: &str,
    session: Option<&Session>,
    body: Markup,
) -> Markup {
    let flashes = session.map(Session::take_flash).unwrap_or_default();
    let back: String = url::form_urlencoded::byte_serialize(here.as_bytes()).collect();
    html! {
        (DOCTYPE)
        html lang=(lang.code()) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · " (lang.t("app")) }
                link rel="stylesheet" href="/console/console.css";
            }
            body {
                a.skip href="#main" { (lang.t("skip")) }
                header.top {
                    span.brand { (lang.t("app")) }
                    @if session.is_some() {
                        nav aria-label=(lang.t("app")) {
                            a href="/console/trade" aria-current=[here.starts_with("/console/trade").then_some("page")] { (lang.t("nav.trade")) }
                            a href="/console/tax" aria-current=[here.starts_with("/console/tax").then_some("page")] { (lang.t("nav.tax")) }
                        }
                    }
                    a.lang href={ "/console/lang/" (lang.other().code()) "?back=" (back) }
                        lang=(lang.other().code()) hreflang=(lang.other().code()) { (lang.t("lang.switch")) }
                    @if let Some(s) = session {
                        span.who { (lang.t("signedin")) " " strong { (s.operator_name) } }
                        form.inline method="post" action="/console/logout" {
                            input type="hidden" name="csrf" value=(s.csrf);
                            button type="submit" { (lang.t("signout")) }
                        }
                    }
                }
                main #main tabindex="-1" {
                    @for f in &flashes {
                        div class=(if f.ok { "flash ok" } else { "flash error" }) role=(if f.ok { "status" } else { "alert" }) {
                            @if !f.ok { strong { (lang.t("flash.failed")) } " " }
                            (f.message)
                            @if !f.fields.is_empty() {
                                ul { @for (field, problem) in &f.fields { li { code { (field) } ": " (problem) } } }
                            }
                        }
                    }
                    (body)
                }
            }
        }
    }
}

/// A page for a request that failed (404 for a case that does not exist, say).
pub fn error_page(lang: Lang, status: StatusCode, message: Option<String>) -> Response {
    let title = lang.t("error.title");
    let body = html! {
        h1 { (title) " " (status.as_u16()) }
        p { (message.unwrap_or_else(|| status.canonical_reason().unwrap_or("").to_string())) }
        p { a href="/console/" { (lang.t("error.back")) } }
    };
    html_response(status, layout(lang, title, "/console/", None, body))
}

/// An application error as a console page.
pub fn api_error_page(lang: Lang, e: ApiError) -> Response {
    let body = e.body();
    let status = e.status();
    if status.is_server_error() {
        tracing::error!(error = %body.message, "console request failed");
    }
    error_page(lang, status, Some(body.message))
}

async fn home(op: Result<Operator, Response>) -> Response {
    match op {
        Ok(_) => see_other("/console/trade"),
        Err(_) => see_other("/console/login"),
    }
}

#[derive(Deserialize)]
struct LoginQuery {
    expired: Option<String>,
}

/// The sign-in page again, saying the key was refused (401) or the address must wait (429).
fn refused_signin(lang: Lang, status: StatusCode) -> Response {
    let page = layout(
        lang,
        lang.t("signin.title"),
        "/console/login",
        None,
        login_form(lang, true, false),
    );
    html_response(status, page)
}

fn login_form(lang: Lang, refused: bool, expired: bool) -> Markup {
    html! {
        h1 { (lang.t("signin.title")) }
        @if refused { div.flash.error role="alert" { (lang.t("signin.refused")) } }
        @if expired { div.flash role="status" { (lang.t("signin.expired")) } }
        form.signin method="post" action="/console/login" {
            label for="key" { (lang.t("signin.key")) }
            input #key type="password" name="key" required autocomplete="current-password" autofocus aria-describedby="key-hint";
            p #key-hint.hint { (lang.t("signin.hint")) }
            button type="submit" { (lang.t("signin.submit")) }
        }
    }
}

async fn login_page(lang: Lang, Query(q): Query<LoginQuery>) -> Response {
    let body = login_form(lang, false, q.expired.is_some());
    html_response(
        StatusCode::OK,
        layout(lang, lang.t("signin.title"), "/console/login", None, body),
    )
}

#[derive(Deserialize)]
struct LoginForm {
    #[serde(default)]
    key: String,
}

/// Signs in with an operator key; any other key, a revoked or unknown one is refused alike
/// (401, the form again).
async fn login(
    State(state): State<Arc<AppState>>,
    lang: Lang,
    headers: axum::http::HeaderMap,
    connection: Option<axum::Extension<crate::limits::ClientAddr>>,
    axum::Form(form): axum::Form<LoginForm>,
) -> Response {
    // Every sign-in takes a token of its client address's bucket, so keys cannot be guessed
    // through the form faster than through the API (issue 52.5).
    if let Some(wait) = crate::limits::address_refused(&state, &headers, connection.map(|c| c.0)) {
        let mut res = refused_signin(lang, StatusCode::TOO_MANY_REQUESTS);
        res.headers_mut()
            .insert(header::RETRY_AFTER, axum::http::HeaderValue::from(wait));
        return res;
    }
    let bearer = format!("Bearer {}", form.key.trim());
    let resolved =
        crate::auth::resolve_key(state.repo.as_ref(), &state.keys, Some(&bearer), true).await;
    let refused = || refused_signin(lang, StatusCode::UNAUTHORIZED);
    let (operator_id, prefix) = match resolved {
        Ok((domain::auth::Caller::Operator { operator_id }, prefix)) => (operator_id, prefix),
        Ok(_) | Err(ApiError::Unauthorized(_)) => return refused(),
        Err(e) => return api_error_page(lang, e),
    };
    let name = match state.repo.get_operator(operator_id).await {
        Ok(Some(o)) => o.name,
        Ok(None) => return refused(),
        Err(e) => return api_error_page(lang, e.into()),
    };
    tracing::info!(%operator_id, "console sign-in");
    let token = match state
        .console
        .start(state.repo.as_ref(), operator_id, name, prefix.0)
        .await
    {
        Ok(token) => token,
        Err(e) => return api_error_page(lang, e.into()),
    };
    let mut res = see_other("/console/trade");
    res.headers_mut()
        .insert(header::SET_COOKIE, session_cookie(&state, Some(&token)));
    res
}

#[derive(Deserialize)]
pub struct CsrfForm {
    #[serde(default)]
    pub csrf: String,
}

async fn logout(
    State(state): State<Arc<AppState>>,
    op: Operator,
    axum::Form(form): axum::Form<CsrfForm>,
) -> Response {
    if !op.session.csrf_ok(&form.csrf) {
        return (StatusCode::FORBIDDEN, "CSRF token mismatch").into_response();
    }
    if let Err(e) = state.console.end(state.repo.as_ref(), &op.token).await {
        return api_error_page(Lang::De, e.into());
    }
    let mut res = see_other("/console/login");
    res.headers_mut()
        .insert(header::SET_COOKIE, session_cookie(&state, None));
    res
}

#[derive(Deserialize)]
struct LangQuery {
    back: Option<String>,
}

/// Switches the language and returns to the page (only a console page: no open redirect).
async fn switch_lang(
    axum::extract::Path(code): axum::extract::Path<String>,
    Query(q): Query<LangQuery>,
) -> Response {
    let Some(lang) = Lang::parse(&code) else {
        return error_page(Lang::De, StatusCode::NOT_FOUND, None);
    };
    let back = q
        .back
        .filter(|b| b.starts_with("/console/") && !b.starts_with("//") && !b.contains('\\'))
        .unwrap_or_else(|| "/console/".into());
    let mut res = see_other(&back);
    if let Ok(v) = HeaderValue::from_str(&format!(
        "{}={}; Path=/console; SameSite=Lax; Max-Age=31536000",
        i18n::COOKIE,
        lang.code()
    )) {
        res.headers_mut().insert(header::SET_COOKIE, v);
    }
    res
}

/// A time as operators read it: local German time is what the offices use, but the service
/// runs in UTC; we show UTC and say so.
pub fn when(at: time::OffsetDateTime) -> String {
    let f = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute] UTC");
    at.to_offset(time::UtcOffset::UTC)
        .format(&f)
        .unwrap_or_default()
}

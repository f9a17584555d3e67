//! The work queues: the trade and the tax cases by status, with counts, search, filters and
//! pages that hold at a million cases (keyset pages from an index: docs/adr/0024).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};
use serde::Deserialize;
use store::CaseKind;
use uuid::Uuid;

use super::i18n::Lang;
use super::operator::Operator;
use super::{api_error_page, html_response, layout, when};
use crate::cases::lists::{OperatorListQuery, operator_case_page};
use crate::state::AppState;

/// The queue's query string, as the filter form sends it (empty fields are left out).
#[derive(Debug, Default, Deserialize, Clone)]
pub struct QueueQuery {
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub environment: String,
    #[serde(default)]
    pub provider: String,
    #[serde(default)]
    pub office: String,
    #[serde(default)]
    pub q: String,
    #[serde(default)]
    pub order: String,
    #[serde(default)]
    pub cursor: String,
}

impl QueueQuery {
    fn some(s: &str) -> Option<String> {
        let s = s.trim();
        (!s.is_empty()).then(|| s.to_string())
    }

    /// The application layer's query (the same as the operator API's list).
    fn as_list_query(&self) -> OperatorListQuery {
        OperatorListQuery {
            status: Self::some(&self.status),
            environment: Some(Self::some(&self.environment).unwrap_or_else(|| "production".into())),
            provider_id: Self::some(&self.provider),
            office: Self::some(&self.office),
            q: Self::some(&self.q),
            order: Some(Self::some(&self.order).unwrap_or_else(|| "oldest".into())),
            after: Self::some(&self.cursor),
            limit: Some("50".into()),
            counts: true,
        }
    }

    /// This query as a link to `base`, with `status` and `cursor` replaced.
    fn link(&self, base: &str, status: Option<&str>, cursor: Option<&str>) -> String {
        let mut s = url::form_urlencoded::Serializer::new(String::new());
        let status = status.unwrap_or(&self.status);
        for (k, v) in [
            ("status", status),
            ("environment", self.environment.as_str()),
            ("provider", self.provider.as_str()),
            ("office", self.office.as_str()),
            ("q", self.q.as_str()),
            ("order", self.order.as_str()),
            ("cursor", cursor.unwrap_or("")),
        ] {
            if !v.is_empty() {
                s.append_pair(k, v);
            }
        }
        let qs = s.finish();
        if qs.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{qs}")
        }
    }
}

/// The queue of a kind of case.
pub async fn queue<L: super::Kind>(
    State(state): State<Arc<AppState>>,
    op: Operator,
    lang: Lang,
    Query(q): Query<QueueQuery>,
) -> Response {
    let (kind, base) = (L::KIND, L::PATH);
    let here = q.link(base, None, None);
    let page = match operator_case_page(&state, op.caller(), kind, &q.as_list_query()).await {
        Ok(p) => p,
        Err(e @ crate::error::ApiError::Validation(_)) => {
            op.session.push_flash(super::session::Flash::failed(e));
            let body =
                html! { h1 { (lang.t(L::NAV)) } (filters::<L>(&state, lang, base, &q, &[]).await) };
            return html_response(
                StatusCode::UNPROCESSABLE_ENTITY,
                layout(lang, lang.t(L::NAV), &here, Some(&op.session), body),
            );
        }
        Err(e) => return api_error_page(lang, e),
    };
    let providers = provider_names(&state).await;
    let provider_list: Vec<(Uuid, String)> = {
        let mut v: Vec<_> = providers.iter().map(|(k, v)| (*k, v.clone())).collect();
        v.sort_by(|a, b| a.1.cmp(&b.1));
        v
    };
    let counts = page.counts.clone().unwrap_or_default();
    let chosen = L::parse(&q.status);
    let total: i64 = counts.iter().map(|(_, n)| n).sum();
    let case_base = base;
    let body = html! {
        h1 { (lang.t(L::NAV)) }
        h2 #counts { (lang.t("queue.counts")) }
        ul.counts aria-labelledby="counts" {
            li { a href=(q.link(base, Some(""), None)) aria-current=[q.status.is_empty().then_some("page")] {
                (lang.t("queue.all")) " " strong { (total) } } }
            @for st in L::ALL {
                @let n = counts.iter().find(|(s, _)| *s == (*st).into()).map(|(_, n)| *n).unwrap_or(0);
                @if n > 0 || chosen == Some(*st) {
                    li { a href=(q.link(base, Some(st.as_str()), None))
                        aria-current=[(chosen == Some(*st)).then_some("page")]
                        title={ (lang.t("queue.waits")) " " (lang.waits_for(*st)) } {
                        (lang.status(*st)) " " strong { (n) }
                        " " small { "(" (lang.waits_for(*st)) ")" }
                    } }
                }
            }
        }
        (filters::<L>(&state, lang, base, &q, &provider_list).await)
        div.table-box {
            table {
                caption.muted { (page.items.len()) " " (lang.t("queue.shown")) " · " (if q.order == "newest" { lang.t("queue.newest") } else { lang.t("queue.oldest") }) }
                thead { tr {
                    th scope="col" { (lang.t("col.company")) }
                    th scope="col" { (lang.t("col.reference")) }
                    th scope="col" { (lang.t("col.status")) }
                    th scope="col" { @if kind == CaseKind::Trade { (lang.t("col.package")) } @else { (lang.t("col.legal_form")) } }
                    th scope="col" { (lang.t("col.office")) }
                    th scope="col" { (lang.t("col.provider")) }
                    th scope="col" { (lang.t("col.environment")) }
                    th scope="col" { (lang.t("col.created")) }
                } }
                tbody {
                    @for item in &page.items {
                        tr {
                            td { a href={ (case_base) "/" (item.id) } { (item.company_name) } }
                            td { (item.client_reference.as_deref().unwrap_or("—")) }
                            td { span class={ "status " (item.status.as_str()) } { (lang.status(item.status)) } }
                            td { @if kind == CaseKind::Trade { (item.package.as_str()) } @else { (item.legal_form.map_or("—", |f| f.as_str())) } }
                            td { (item.office_name.as_deref().or(item.office_key.as_deref()).unwrap_or("—")) }
                            td { (providers.get(&item.provider_id).map(String::as_str).unwrap_or("?")) }
                            td { (lang.t(env_key(item.environment.as_str()))) }
                            td { (when(item.created_at)) }
                        }
                    }
                    @if page.items.is_empty() { tr { td colspan="8" { (lang.t("queue.empty")) } } }
                }
            }
        }
        nav.pager aria-label="pages" {
            @if !q.cursor.is_empty() { a href=(q.link(base, None, None)) { (lang.t("queue.first")) } }
            @if let Some(next) = &page.next_cursor { a href=(q.link(base, None, Some(&next.to_string()))) rel="next" { (lang.t("queue.next")) } }
        }
    };
    html_response(
        StatusCode::OK,
        layout(lang, lang.t(L::NAV), &here, Some(&op.session), body),
    )
}

pub fn env_key(env: &str) -> &'static str {
    if env == "sandbox" {
        "env.sandbox"
    } else {
        "env.production"
    }
}

/// Provider names by id (the filter's choices and the table's column).
pub async fn provider_names(state: &AppState) -> HashMap<Uuid, String> {
    let mut names = HashMap::new();
    let mut after = None;
    // A few hundred providers at most in practice; the loop stops at 2,000.
    for _ in 0..4 {
        let Ok(page) = state.repo.list_providers(after, 500).await else {
            break;
        };
        let done = page.len() < 500;
        after = page.last().map(|c| c.id);
        names.extend(page.into_iter().map(|c| (c.id, c.name)));
        if done {
            break;
        }
    }
    names
}

async fn filters<L: super::Kind>(
    _state: &AppState,
    lang: Lang,
    base: &str,
    q: &QueueQuery,
    providers: &[(Uuid, String)],
) -> Markup {
    let env = if q.environment.is_empty() {
        "production"
    } else {
        q.environment.as_str()
    };
    html! {
        form.filters method="get" action=(base) role="search" {
            div.wide {
                label for="q" { (lang.t("queue.search")) }
                input #q type="search" name="q" value=(q.q) aria-describedby="q-hint";
                span #q-hint.hint { (lang.t("queue.search.hint")) }
            }
            div {
                label for="status" { (lang.t("queue.status")) }
                select #status name="status" {
                    option value="" { (lang.t("queue.any")) }
                    @for st in L::ALL {
                        option value=(st.as_str()) selected[L::parse(&q.status) == Some(*st)] { (lang.status(*st)) }
                    }
                }
            }
            div {
                label for="environment" { (lang.t("queue.environment")) }
                select #environment name="environment" {
                    option value="production" selected[env == "production"] { (lang.t("env.production")) }
                    option value="sandbox" selected[env == "sandbox"] { (lang.t("env.sandbox")) }
                }
            }
            div {
                label for="provider" { (lang.t("queue.provider")) }
                select #provider name="provider" {
                    option value="" { (lang.t("queue.any")) }
                    @for (id, name) in providers {
                        option value=(id) selected[q.provider == id.to_string()] { (name) }
                    }
                }
            }
            div {
                label for="office" { (lang.t("queue.office")) }
                input #office type="text" name="office" value=(q.office) inputmode="numeric";
            }
            div {
                label for="order" { (lang.t("queue.order")) }
                select #order name="order" {
                    option value="oldest" selected[q.order != "newest"] { (lang.t("queue.oldest")) }
                    option value="newest" selected[q.order == "newest"] { (lang.t("queue.newest")) }
                }
            }
            div { button type="submit" { (lang.t("queue.filter")) } }
        }
    }
}

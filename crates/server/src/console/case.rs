//! A case's page: what the office will read, the documents, the history with names, the
//! webhook deliveries, and the steps the case can take now (only those: a step the lifecycle
//! does not allow from the current status is not offered).

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use domain::auth::Caller;
use domain::case_state::CaseStatus;
use domain::lifecycle::{Lifecycle, Role, TaxStatus, TradeStatus};
use maud::{Markup, html};
use serde::Deserialize;
use store::{DocumentRecord, StatusChange};
use uuid::Uuid;

use super::i18n::Lang;
use super::operator::Operator;
use super::session::Session;
use super::{api_error_page, html_response, layout, when};
use crate::cases::access;
use crate::error::ApiError;
use crate::state::AppState;

/// A case or document id from the path: 404 for anything that is none.
pub fn case_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::try_parse(raw).map_err(|_| ApiError::NotFound)
}

/// The name of a case's provider (`?` if it cannot be read).
async fn provider_name(state: &AppState, provider: Uuid) -> String {
    match state.repo.get_company(provider).await {
        Ok(Some(c)) => c.name,
        _ => "?".into(),
    }
}

/// The statuses an operator can take a case to from `current`.
pub fn operator_targets<L: Lifecycle>(current: L) -> Vec<L> {
    L::ALL
        .iter()
        .copied()
        .filter(|t| current.step(*t, Role::Operator).is_ok())
        .collect()
}

/// What a kind of case puts on its page.
pub trait CaseView: super::Kind {
    type Case: Send + Sync;
    /// The case as the operator may read it.
    fn read(
        state: &AppState,
        caller: Caller,
        id: Uuid,
    ) -> impl Future<Output = Result<Self::Case, ApiError>> + Send;
    /// The company's name, the page's title.
    fn company(state: &AppState, case: &Self::Case) -> impl Future<Output = String> + Send;
    /// The overview's rows of this kind: those before the provider's, those after the client
    /// reference.
    fn rows(lang: Lang, case: &Self::Case) -> (Markup, Markup);
    /// The forms of the steps it can take.
    fn steps(lang: Lang, s: &Session, case: &Self::Case) -> Markup;
}

/// What every case page shows, whatever its kind.
pub struct Common<'a> {
    id: Uuid,
    status: CaseStatus,
    environment: &'static str,
    created_at: time::OffsetDateTime,
    provider_id: Uuid,
    documents: &'a [DocumentRecord],
    history: &'a [StatusChange],
    record: &'a serde_json::Value,
}

/// The [`Common`] of a trade and of a tax case (their records name these fields alike).
macro_rules! common {
    ($record:ty) => {
        impl<'a> From<&'a $record> for Common<'a> {
            fn from(case: &'a $record) -> Self {
                Common {
                    id: case.id,
                    status: case.status.into(),
                    environment: case.environment.as_str(),
                    created_at: case.created_at,
                    provider_id: case.provider_id,
                    documents: &case.documents,
                    history: &case.history,
                    record: &case.record,
                }
            }
        }
    };
}

common!(store::TradeRegistrationRecord);
common!(store::TaxRegistrationRecord);

impl CaseView for TradeStatus {
    type Case = store::TradeRegistrationRecord;

    async fn read(state: &AppState, caller: Caller, id: Uuid) -> Result<Self::Case, ApiError> {
        access::case::<crate::cases::kind::Trade>(state, caller, id).await
    }

    async fn company(_: &AppState, case: &Self::Case) -> String {
        case.company_name
            .clone()
            .or_else(|| {
                case.record
                    .get("name")
                    .and_then(|n| n.as_str())
                    .map(String::from)
            })
            .unwrap_or_default()
    }

    fn rows(lang: Lang, case: &Self::Case) -> (Markup, Markup) {
        let office_text = case
            .trade_office
            .as_ref()
            .map(|o| {
                format!(
                    "{} ({})",
                    o.get("name").and_then(|v| v.as_str()).unwrap_or(""),
                    o.get("key").and_then(|v| v.as_str()).unwrap_or("")
                )
            })
            .unwrap_or_else(|| lang.t("case.none").into());
        let first = html! {
            dt { (lang.t("col.package")) } dd { (case.package.as_str()) }
        };
        let last = html! {
            dt { (lang.t("case.trade_office")) } dd { (office_text) }
            dt { (lang.t("case.fee")) } dd { (case.city_fee_cents.map(euros).unwrap_or_else(|| "—".into())) }
            dt { (lang.t("case.paid")) } dd { (if case.is_paid { lang.t("case.yes") } else { lang.t("case.no") }) }
        };
        (first, last)
    }

    fn steps(lang: Lang, s: &Session, case: &Self::Case) -> Markup {
        trade_steps(lang, s, case)
    }
}

impl CaseView for TaxStatus {
    type Case = store::TaxRegistrationRecord;

    async fn read(state: &AppState, caller: Caller, id: Uuid) -> Result<Self::Case, ApiError> {
        access::case::<crate::cases::kind::Tax>(state, caller, id).await
    }

    async fn company(state: &AppState, case: &Self::Case) -> String {
        state
            .repo
            .get_company(case.company_id)
            .await
            .ok()
            .flatten()
            .map(|c| c.name)
            .unwrap_or_default()
    }

    fn rows(lang: Lang, case: &Self::Case) -> (Markup, Markup) {
        let office_name = case
            .tax_office_number
            .as_deref()
            .and_then(domain::offices::tax_office)
            .map(|o| o.display_name())
            .unwrap_or_default();
        let first = html! {
            @if case.public_id != case.id { dt { (lang.t("case.public_id")) } dd { code { (case.public_id) } } }
            dt { (lang.t("col.legal_form")) } dd { (case.legal_form.as_str()) }
        };
        // Why the service determined the office at the create, while the case has that office.
        let basis = case
            .tax_office_lookup
            .as_ref()
            .filter(|l| {
                l["status"] == "determined"
                    && l["office"]["number"].as_str() == case.tax_office_number.as_deref()
            })
            .map(|l| &l["basis"])
            .filter(|b| b.is_object());
        let text = |b: &serde_json::Value, k: &str| b[k].as_str().unwrap_or("").to_string();
        // What the XML does not carry, for the operator to enter in ELSTER's portal.
        let manual =
            domain::tax::AnyTaxRegistration::from_stored(case.legal_form, case.record.clone())
                .map(|r| crate::cases::tax::not_in_xml(&r))
                .unwrap_or_default();
        let last = html! {
            dt { (lang.t("case.tax_office")) } dd { (case.tax_office_number.as_deref().unwrap_or("—")) " " (office_name) }
            @if let Some(b) = basis {
                dt { (lang.t("case.tax_office_basis")) }
                dd #tax-office-basis { (text(b, "summary")) br; span.muted { (text(b, "source")) " (" (text(b, "date")) ", " (text(b, "kind")) ")" } }
            }
            dt { (lang.t("case.tax_number")) } dd #tax-number { (case.tax_number.as_deref().unwrap_or("—")) }
            @if !manual.is_empty() {
                dt { (lang.t("case.not_in_xml")) }
                dd #not-in-xml { ul { @for e in &manual { li {
                    strong { (e.sub_page) @if let Some(l) = &e.line { ", " (lang.t("case.line")) " " (l) } }
                    ": " (e.value.as_deref().unwrap_or(lang.t("case.not_given")))
                    " " small.muted { "(" (e.field) ")" }
                } } } }
            }
        };
        (first, last)
    }

    fn steps(lang: Lang, s: &Session, case: &Self::Case) -> Markup {
        tax_steps(lang, s, case)
    }
}

/// A case's page: the way back to its queue, the overview, the steps, documents, history,
/// webhook deliveries and data.
pub async fn page<K: CaseView>(
    State(state): State<Arc<AppState>>,
    op: Operator,
    lang: Lang,
    Path(raw): Path<String>,
) -> Response
where
    for<'a> Common<'a>: From<&'a K::Case>,
{
    let case = match async { K::read(&state, op.caller(), case_id(&raw)?).await }.await {
        Ok(c) => c,
        Err(e) => return api_error_page(lang, e),
    };
    let head = Common::from(&case);
    let provider = provider_name(&state, head.provider_id).await;
    let deliveries = deliveries(&state, lang, head.id).await;
    let company = K::company(&state, &case).await;
    let here = format!("{}/{}", K::PATH, head.id);
    let s = &op.session;
    let (first, last) = K::rows(lang, &case);
    let reference = head.record.get("client_reference").and_then(|v| v.as_str());
    let body = html! {
        p.muted { a href=(K::PATH) { (lang.t(K::NAV)) } }
        h1 { (company) }
        h2 { (lang.t("case.overview")) }
        dl.fields {
            dt { (lang.t("case.id")) } dd { code #case-id { (head.id) } }
            dt { (lang.t("col.status")) } dd { span #case-status class={ "status " (head.status.as_str()) } { (lang.status(head.status)) } }
            dt { (lang.t("col.environment")) } dd { (lang.t(super::queue::env_key(head.environment))) }
            (first)
            dt { (lang.t("col.provider")) } dd { (provider) }
            dt { (lang.t("col.reference")) } dd { (reference.unwrap_or("—")) }
            (last)
            dt { (lang.t("col.created")) } dd { (when(head.created_at)) }
        }
        h2 { (lang.t("case.steps")) }
        (K::steps(lang, s, &case))
        h2 { (lang.t("case.documents")) }
        (documents(lang, head.documents))
        h2 { (lang.t("case.history")) }
        (history(lang, head.history))
        h2 { (lang.t("case.webhooks")) }
        (deliveries)
        h2 { (lang.t("case.fields")) }
        (fields(lang, head.record))
    };
    html_response(StatusCode::OK, layout(lang, &company, &here, Some(s), body))
}

/// Cents as euros with two decimals (`2600` -> `26.00`).
pub fn euros(cents: i64) -> String {
    format!("{}.{:02}", cents / 100, (cents % 100).abs())
}

fn csrf(s: &Session) -> Markup {
    html! { input type="hidden" name="csrf" value=(s.csrf); }
}

/// A note field: `required` for the steps that need one.
fn reason(lang: Lang, id: &str, required: bool) -> Markup {
    html! {
        div {
            label for=(id) { (if required { lang.t("step.reason_required") } else { lang.t("step.reason") }) }
            textarea id=(id) name="reason" rows="2" maxlength="2000" required[required] {}
        }
    }
}

/// The form of a status step to `status` (posted to `<case>/transition`): a title, the fields
/// the step needs besides its note, the note (`required` for the steps that need one).
fn step_form(
    lang: Lang,
    s: &Session,
    case_path: &str,
    status: CaseStatus,
    title: &str,
    fields: Markup,
    reason_required: bool,
) -> Markup {
    html! {
        form method="post" action={ (case_path) "/transition" } {
            h3 { (title) }
            (csrf(s))
            input type="hidden" name="status" value=(status.as_str());
            (fields)
            (reason(lang, &format!("reason-{}", status.as_str()), reason_required))
            button type="submit" id={ "step-" (status.as_str()) } { (lang.status(status)) }
        }
    }
}

/// The forms of the status steps the operator can take a case to from `current` (each as
/// `form` makes it), or a note that there is none.
fn status_steps<L: Lifecycle>(lang: Lang, current: L, form: impl Fn(L) -> Markup) -> Markup {
    let targets = operator_targets(current);
    html! {
        @if targets.is_empty() { p.box { (lang.t("case.no_steps")) } }
        @for t in targets { (form(t)) }
    }
}

/// The form of the step to `submitted` (the lifecycle's status of that name): the first
/// submission, or (titled `again`) the one back from `stop`, where the office stopped the case.
fn submit_form<L: Lifecycle + Into<CaseStatus>>(
    lang: Lang,
    s: &Session,
    action: &str,
    (submitted, current, stop): (L, L, L),
    again: &'static str,
) -> Markup {
    let title = if current == stop {
        lang.t(again)
    } else {
        lang.t("step.submit")
    };
    step_form(lang, s, action, submitted.into(), title, html! {}, false)
}

fn trade_steps(lang: Lang, s: &Session, case: &store::TradeRegistrationRecord) -> Markup {
    let action = format!("/console/trade/{}", case.id);
    let owners = case
        .record
        .get("owners")
        .and_then(|o| o.as_array())
        .cloned()
        .unwrap_or_default();
    let candidates: Vec<(String, String, String)> = case
        .trade_office_candidates
        .as_ref()
        .and_then(|c| c.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|c| {
                    Some((
                        c.get("key")?.as_str()?.to_string(),
                        c.get("municipality_key")
                            .and_then(|m| m.as_str())
                            .unwrap_or("")
                            .to_string(),
                        c.get("name")
                            .and_then(|n| n.as_str())
                            .unwrap_or("")
                            .to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let current_office = case.trade_office.as_ref().and_then(|o| {
        Some((
            o.get("key")?.as_str()?.to_string(),
            o.get("municipality_key")?.as_str()?.to_string(),
            o.get("name")
                .and_then(|n| n.as_str())
                .unwrap_or("")
                .to_string(),
        ))
    });
    html! {
        div.steps {
            (status_steps(lang, case.status, |t| match t {
                TradeStatus::Submitted => submit_form(lang, s, &action, (t, case.status, TradeStatus::Blocked), "step.unblock"),
                TradeStatus::Blocked => step_form(lang, s, &action, TradeStatus::Blocked.into(), lang.t("step.block"), html! {}, true),
                TradeStatus::Completed => html! {
                    form method="post" action={ (action) "/licence" } enctype="multipart/form-data" {
                        h3 { (lang.t("step.complete_trade")) }
                        (csrf(s))
                        div {
                            label for="licence" { (lang.t("step.licence")) }
                            input #licence type="file" name="file" accept="application/pdf" required;
                        }
                        (reason(lang, "reason-completed", false))
                        button type="submit" #step-completed { (lang.status(TradeStatus::Completed)) }
                    }
                },
                _ => html! {},
            }))
            form method="post" action={ (action) "/details" } {
                h3 { (lang.t("step.fees")) }
                (csrf(s))
                div {
                    label for="office" { (lang.t("step.office_choice")) }
                    select #office name="office" {
                        option value="" { (lang.t("case.none")) " " @if let Some((k, _, n)) = &current_office { (n) " (" (k) ")" } }
                        @for (k, m, n) in &candidates {
                            option value={ (k) "|" (m) } { (n) " (" (k) ")" }
                        }
                    }
                }
                div {
                    label for="fee" { (lang.t("case.fee")) }
                    input #fee type="text" name="city_fee" inputmode="decimal" pattern="[0-9]+([.,][0-9]{1,2})?"
                        value=(case.city_fee_cents.map(euros).unwrap_or_default());
                }
                div {
                    label for="paid" { (lang.t("case.paid")) }
                    select #paid name="is_paid" {
                        option value="false" selected[!case.is_paid] { (lang.t("case.no")) }
                        option value="true" selected[case.is_paid] { (lang.t("case.yes")) }
                    }
                }
                button type="submit" #save-details { (lang.t("step.save")) }
            }
            @if !owners.is_empty() {
                div.box {
                    h3 { (lang.t("step.identity")) }
                    @for (i, o) in owners.iter().enumerate() {
                        @let verified = case.identity_verifications.iter().find(|(idx, _)| *idx as usize == i).map(|(_, at)| *at);
                        p {
                            strong { (lang.t("owner")) " " (i + 1) ": " (person_name(o)) } " — "
                            @if let Some(at) = verified { (lang.t("step.verified_at")) " " (when(at)) } @else { (lang.t("step.not_verified")) }
                        }
                        form.inline method="post" action={ (action) "/owners/" (i) "/identity" } {
                            (csrf(s))
                            input type="hidden" name="action" value="verify";
                            button type="submit" { (lang.t("step.verify")) }
                        }
                        @if verified.is_some() {
                            " "
                            form.inline method="post" action={ (action) "/owners/" (i) "/identity" } {
                                (csrf(s))
                                input type="hidden" name="action" value="remove";
                                button.secondary type="submit" { (lang.t("step.unverify")) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn person_name(o: &serde_json::Value) -> String {
    let part = |k: &str| o.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let name = format!("{} {}", part("first_name"), part("last_name"));
    if name.trim().is_empty() {
        part("name")
    } else {
        name
    }
}

fn tax_steps(lang: Lang, s: &Session, case: &store::TaxRegistrationRecord) -> Markup {
    let action = format!("/console/tax/{}", case.id);
    let suggestions: Vec<(String, String)> = office_suggestions(case.tax_office_lookup.as_ref());
    let office_editable = matches!(case.status, TaxStatus::Validated | TaxStatus::Rejected);
    html! {
        div.steps {
            (status_steps(lang, case.status, |t| match t {
                TaxStatus::Submitted => submit_form(lang, s, &action, (t, case.status, TaxStatus::Rejected), "step.resubmit"),
                TaxStatus::Rejected => step_form(lang, s, &action, TaxStatus::Rejected.into(), lang.t("step.reject"), html! {}, true),
                TaxStatus::Completed => step_form(lang, s, &action, TaxStatus::Completed.into(), lang.t("step.complete_tax"), html! {
                    div {
                        label for="tax-number-input" { (lang.t("case.tax_number")) }
                        input #tax-number-input type="text" name="tax_number" required;
                    }
                }, false),
                _ => html! {},
            }))
            @if office_editable {
                form method="post" action={ (action) "/office" } {
                    h3 { (lang.t("step.assign_office")) }
                    (csrf(s))
                    @if !suggestions.is_empty() {
                        div {
                            label for="office-choice" { (lang.t("step.office_choice")) }
                            select #office-choice name="suggested" {
                                option value="" { (lang.t("case.none")) }
                                @for (n, name) in &suggestions { option value=(n) { (name) " (" (n) ")" } }
                            }
                        }
                    }
                    div {
                        label for="office-number" { (lang.t("step.tax_office_number")) }
                        input #office-number type="text" name="tax_office_number" inputmode="numeric" pattern="[0-9]{4}"
                            value=(case.tax_office_number.as_deref().unwrap_or(""));
                    }
                    button type="submit" #assign-office { (lang.t("step.save")) }
                }
            }
        }
    }
}

/// The offices a determination suggested (`number`, `name`), wherever its JSON lists them.
fn office_suggestions(lookup: Option<&serde_json::Value>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    fn walk(v: &serde_json::Value, out: &mut Vec<(String, String)>) {
        match v {
            serde_json::Value::Object(o) => {
                let number = o
                    .get("number")
                    .or_else(|| o.get("tax_office_number"))
                    .and_then(|n| n.as_str());
                if let Some(n) = number
                    && n.len() == 4
                    && !out.iter().any(|(m, _)| m == n)
                {
                    let name = domain::offices::tax_office(n)
                        .map(|o| o.display_name())
                        .unwrap_or_default();
                    out.push((n.to_string(), name));
                }
                for child in o.values() {
                    walk(child, out);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|c| walk(c, out)),
            _ => {}
        }
    }
    if let Some(l) = lookup {
        walk(l, &mut out);
    }
    out
}

fn documents(lang: Lang, docs: &[DocumentRecord]) -> Markup {
    html! {
        @if docs.is_empty() { p { (lang.t("doc.none")) } } @else {
            div.table-box { table {
                thead { tr {
                    th scope="col" { (lang.t("doc.type")) }
                    th scope="col" { (lang.t("doc.name")) }
                    th scope="col" { (lang.t("doc.size")) }
                    th scope="col" { span.muted { "" } }
                } }
                tbody { @for d in docs { tr {
                    td { (d.doc_type.as_str()) }
                    td { (d.name) }
                    td { (d.size.map(|s| format!("{:.1} KB", s as f64 / 1024.0)).unwrap_or_else(|| "—".into())) }
                    td {
                        @if d.content_type.contains("xml") {
                            a href={ "/console/documents/" (d.id) "/xml" } { (lang.t("doc.view_xml")) } " · "
                        } @else {
                            a href={ "/console/documents/" (d.id) } target="_blank" rel="noopener" { (lang.t("doc.open")) } " · "
                        }
                        a href={ "/console/documents/" (d.id) "?download=1" } download { (lang.t("doc.download")) }
                    }
                } } }
            } }
        }
    }
}

fn history(lang: Lang, history: &[StatusChange]) -> Markup {
    html! {
        div.table-box { table #history {
            thead { tr {
                th scope="col" { (lang.t("hist.at")) }
                th scope="col" { (lang.t("hist.step")) }
                th scope="col" { (lang.t("hist.actor")) }
                th scope="col" { (lang.t("hist.reason")) " / " (lang.t("hist.changes")) }
            } }
            tbody { @for h in history.iter().rev() { tr {
                td { (when(h.at)) }
                td {
                    @if h.is_field_change() { (lang.t("hist.change")) } @else {
                        @if let Some(p) = h.previous_status { (lang.status(p)) " → " }
                        (lang.status(h.status))
                    }
                }
                td { (actor(h)) }
                td {
                    (h.reason.as_deref().unwrap_or(""))
                    @if !h.changes.is_empty() {
                        ul.changes { @for ch in &h.changes { li {
                            (label(lang, &ch.field)) ": "
                            del { (ch.old.as_deref().unwrap_or("—")) } " → "
                            ins { (ch.new.as_deref().unwrap_or("—")) }
                        } } }
                    }
                }
            } } }
        } }
    }
}

/// Who made a history entry: the name the store resolved (an operator's, the provider's), else
/// the actor as recorded (`system`).
fn actor(h: &StatusChange) -> Markup {
    use domain::lifecycle::Actor;
    let account = match h.actor {
        Actor::Provider(_) | Actor::SandboxProvider(_) => "provider",
        Actor::Operator(_) => "operator",
        Actor::System | Actor::Unknown => "",
    };
    match &h.actor_name {
        Some(name) => html! { (name) " " small.muted { "(" (account) ")" } },
        None => html! { (h.actor.to_string()) },
    }
}

/// The webhook messages of the case, newest first (the last 50), each with its endpoint,
/// state and attempts.
async fn deliveries(state: &AppState, lang: Lang, case: Uuid) -> Markup {
    let list = match state.repo.list_case_deliveries(case, 50).await {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(error = %e, %case, "console: deliveries not read");
            return html! { p.flash.error { (lang.t("hook.unreadable")) } };
        }
    };
    html! {
        @if list.is_empty() { p { (lang.t("hook.none")) } } @else {
            div.table-box { table #deliveries {
                thead { tr {
                    th scope="col" { (lang.t("hist.at")) }
                    th scope="col" { (lang.t("hook.event")) }
                    th scope="col" { (lang.t("hook.endpoint")) }
                    th scope="col" { (lang.t("hook.state")) }
                    th scope="col" { (lang.t("hook.attempts")) }
                } }
                tbody { @for d in &list { tr {
                    td { (when(d.created_at)) }
                    td { code { (d.event_type.as_str()) } }
                    td { (d.endpoint_url) @if d.endpoint_deleted { " " small.muted { (lang.t("hook.deleted")) } } }
                    td { span class={ "status " (d.state.as_str()) } { (lang.t(hook_state(d.state))) } }
                    td {
                        (d.attempts)
                        @if let Some(code) = d.last_status_code { " · HTTP " (code) }
                        @if let Some(e) = &d.last_error { br; small.muted { (e) } }
                    }
                } } }
            } }
        }
    }
}

fn hook_state(state: store::MessageState) -> &'static str {
    match state {
        store::MessageState::Pending => "hook.pending",
        store::MessageState::Delivered => "hook.delivered",
        store::MessageState::Failed => "hook.failed",
    }
}

/// The stored request, every field, nested as stored; in German the fields are named as the
/// forms name them (`i18n::field_de`), the API name beside for reference.
pub fn fields(lang: Lang, record: &serde_json::Value) -> Markup {
    fn value(lang: Lang, v: &serde_json::Value) -> Markup {
        match v {
            serde_json::Value::Object(o) => html! {
                dl.fields { @for (k, child) in o { @if !child.is_null() {
                    dt { (label(lang, k)) } dd { (value(lang, child)) }
                } } }
            },
            serde_json::Value::Array(a) => html! {
                ol { @for child in a { li { (value(lang, child)) } } }
            },
            serde_json::Value::String(s) => html! { (s) },
            serde_json::Value::Bool(b) => html! { (if *b { "✓" } else { "✗" }) },
            serde_json::Value::Number(n) => html! { (n) },
            serde_json::Value::Null => html! { "—" },
        }
    }
    value(lang, record)
}

fn label(lang: Lang, key: &str) -> Markup {
    match (lang, super::i18n::field_de(key)) {
        (Lang::De, Some(de)) => html! { (de) " " small.muted lang="en" { "(" (key) ")" } },
        _ => html! { (key.replace('_', " ")) },
    }
}

#[derive(Deserialize)]
pub struct DocQuery {
    download: Option<String>,
}

/// The document `raw` names; 404 for an id that is none and for no document.
async fn document_of(state: &AppState, raw: &str) -> Result<DocumentRecord, ApiError> {
    let doc = state.repo.get_document(case_id(raw)?).await?;
    doc.ok_or(ApiError::NotFound)
}

/// A document, shown in the browser (`inline`) or saved (`?download=1`).
pub async fn document(
    State(state): State<Arc<AppState>>,
    _op: Operator,
    lang: Lang,
    Path(raw): Path<String>,
    Query(q): Query<DocQuery>,
) -> Response {
    let result = async {
        let doc = document_of(&state, &raw).await?;
        let disposition = if q.download.is_some() {
            crate::routes::documents::Disposition::Attachment
        } else {
            crate::routes::documents::Disposition::Inline
        };
        crate::routes::documents::document_response(&state, &doc, disposition).await
    }
    .await;
    result.unwrap_or_else(|e| api_error_page(lang, e))
}

/// An XML document as a page: its text, escaped, in its own encoding read as declared.
pub async fn xml(
    State(state): State<Arc<AppState>>,
    op: Operator,
    lang: Lang,
    Path(raw): Path<String>,
) -> Response {
    let result = async {
        let doc = document_of(&state, &raw).await?;
        if !doc.content_type.contains("xml") {
            return Err(ApiError::NotFound);
        }
        let bytes = state
            .documents
            .get(&doc.storage_key)
            .await?
            .ok_or(ApiError::NotFound)?;
        Ok((doc, decode_xml(&bytes)))
    }
    .await;
    match result {
        Ok((doc, text)) => {
            let back = format!("/console/tax/{}", doc.case_id);
            let body = html! {
                p.muted { a href=(back) { "← " (lang.t("case.tax")) } }
                h1 { (doc.name) }
                p { a href={ "/console/documents/" (doc.id) "?download=1" } download { (lang.t("doc.download")) } }
                pre.xml { code { (text) } }
            };
            html_response(
                StatusCode::OK,
                layout(
                    lang,
                    &doc.name,
                    &format!("/console/documents/{}/xml", doc.id),
                    Some(&op.session),
                    body,
                ),
            )
        }
        Err(e) => api_error_page(lang, e),
    }
}

/// The XML's text: UTF-8 when it says so (or says nothing), else ISO 8859-15 (ELSTER's).
pub fn decode_xml(bytes: &[u8]) -> String {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(100)]).to_ascii_lowercase();
    if !head.contains("8859-15") && !head.contains("8859_15") && !head.contains("latin-9") {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    bytes
        .iter()
        .map(|&b| match b {
            0xA4 => '€',
            0xA6 => 'Š',
            0xA8 => 'š',
            0xB4 => 'Ž',
            0xB8 => 'ž',
            0xBC => 'Œ',
            0xBD => 'œ',
            0xBE => 'Ÿ',
            b => b as char,
        })
        .collect()
}

//! The targets of the case page's forms. Each checks the session's CSRF token, calls the same
//! application-layer function as the operator API, and answers with a redirect (303) to the
//! case page, which shows the outcome once: "done", or the error with every broken field.

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use domain::auth::Caller;
use domain::lifecycle::{Lifecycle, TaxStatus, TradeStatus};
use serde::Deserialize;
use uuid::Uuid;

use super::Kind;
use super::i18n::Lang;
use super::operator::Operator;
use super::session::{Flash, see_other};
use crate::cases::identity;
use crate::cases::steps::{self, Moved, TaxTransitionRequest, TradeTransitionRequest};
use crate::error::ApiError;
use crate::state::AppState;

fn forbidden() -> Response {
    (
        StatusCode::FORBIDDEN,
        "CSRF token mismatch: reload the page",
    )
        .into_response()
}

/// The outcome of a form as the next page shows it, and the redirect to that page.
async fn done(
    state: &AppState,
    op: &Operator,
    back: String,
    result: Result<String, ApiError>,
) -> Response {
    let flash = match result {
        Ok(message) => Flash {
            ok: true,
            message,
            fields: vec![],
        },
        Err(e) => Flash::failed(e),
    };
    if let Err(e) = state
        .console
        .push_flash(state.repo.as_ref(), &op.token, flash)
        .await
    {
        tracing::error!(error = %e, "could not keep the form's outcome for the next page");
    }
    see_other(&back)
}

/// A form's step on the case `raw` (as the path has it) of the kind whose pages are below
/// `kind`: refused (403) without the session's token, else `step` runs with the case's id and
/// its outcome is shown once on the case's page.
async fn on_case(
    state: &AppState,
    op: &Operator,
    csrf: &str,
    kind: &str,
    raw: &str,
    step: impl AsyncFnOnce(Uuid) -> Result<String, ApiError>,
) -> Response {
    if !op.session.csrf_ok(csrf) {
        return forbidden();
    }
    let result = match super::case::case_id(raw) {
        Ok(id) => step(id).await,
        Err(e) => Err(e),
    };
    done(state, op, format!("{kind}/{raw}"), result).await
}

/// A move as the operator reads it: `eingereicht → blockiert`.
fn moved<L: Lifecycle + Into<domain::case_state::CaseStatus>>(
    lang: Lang,
    m: steps::Moved<L>,
) -> String {
    format!("{} → {}", lang.status(m.previous), lang.status(m.status))
}

/// A form's text field: `None` when left empty.
fn filled(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.trim().is_empty())
}

#[derive(Deserialize)]
pub struct StepForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    status: String,
    reason: Option<String>,
    tax_number: Option<String>,
}

/// A kind's status step, taken as the operator API takes it.
pub trait Step: super::Kind {
    fn take(
        state: &AppState,
        caller: Caller,
        id: Uuid,
        form: StepForm,
    ) -> impl Future<Output = Moves<Self>> + Send;
}

/// A step's outcome: the move, or why there was none.
pub type Moves<L> = Result<Moved<L>, ApiError>;

impl Step for TradeStatus {
    async fn take(state: &AppState, caller: Caller, id: Uuid, form: StepForm) -> Moves<Self> {
        let input = TradeTransitionRequest {
            status: form.status,
            reason: filled(form.reason),
        };
        steps::operator_step::<crate::cases::kind::Trade>(state, caller, id, input).await
    }
}

impl Step for TaxStatus {
    async fn take(state: &AppState, caller: Caller, id: Uuid, form: StepForm) -> Moves<Self> {
        let input = TaxTransitionRequest {
            status: form.status,
            reason: filled(form.reason),
            tax_number: filled(form.tax_number),
        };
        Ok(
            steps::operator_step::<crate::cases::kind::Tax>(state, caller, id, input)
                .await?
                .0,
        )
    }
}

/// A status step of a case of kind `K`.
pub async fn step<K: Step>(
    State(state): State<Arc<AppState>>,
    op: Operator,
    lang: Lang,
    Path(raw): Path<String>,
    axum::Form(mut form): axum::Form<StepForm>,
) -> Response {
    let csrf = std::mem::take(&mut form.csrf);
    on_case(&state, &op, &csrf, K::PATH, &raw, async |id| {
        Ok(moved(lang, K::take(&state, op.caller(), id, form).await?))
    })
    .await
}

/// The licence upload: a multipart form with `csrf` first, then `file` and `reason`.
pub async fn trade_licence(
    State(state): State<Arc<AppState>>,
    op: Operator,
    lang: Lang,
    Path(raw): Path<String>,
    req: Request,
) -> Response {
    let back = format!("/console/trade/{raw}");
    let mut csrf_seen = false;
    let result = async {
        let id = super::case::case_id(&raw)?;
        let mut multipart = crate::extract::multipart(req).await?;
        let (mut file, mut reason) = (None, None);
        let limit = state.config.max_upload_bytes;
        while let Some(mut field) = multipart
            .next_field()
            .await
            .map_err(crate::extract::multipart_error)?
        {
            let name = field.name().unwrap_or("").to_string();
            match name.as_str() {
                "csrf" => {
                    let sent = crate::extract::read_part(&mut field, "csrf", 256).await?;
                    csrf_seen = op.session.csrf_ok(std::str::from_utf8(&sent).unwrap_or(""));
                }
                // Nothing of the form is read before its token.
                _ if !csrf_seen => return Err(ApiError::Forbidden("CSRF".into())),
                "file" => {
                    let part = crate::extract::read_part(&mut field, "file", limit).await?;
                    // A file input left empty sends an empty part.
                    file = (!part.is_empty()).then_some(part);
                }
                "reason" => {
                    let part = crate::extract::read_part(&mut field, "reason", 8 * 1024).await?;
                    reason = (!part.iter().all(u8::is_ascii_whitespace)).then_some(part);
                }
                _ => {}
            }
        }
        if !csrf_seen {
            return Err(ApiError::Forbidden("CSRF".into()));
        }
        let (file, reason) = steps::checked_licence(file, reason).await?;
        let (m, _) = steps::operator_licence(&state, op.caller(), id, file, reason).await?;
        Ok(moved(lang, m))
    }
    .await;
    if !csrf_seen {
        return forbidden();
    }
    done(&state, &op, back, result).await
}

#[derive(Deserialize)]
pub struct DetailsForm {
    #[serde(default)]
    csrf: String,
    /// `<office key>|<municipality key>` of a candidate, or empty to keep the office.
    office: Option<String>,
    city_fee: Option<String>,
    is_paid: Option<String>,
}

/// Office, fee and payment: the same patch as the API's `PATCH`, built from the form (only
/// what the form changes is sent: the history records changed values only).
pub async fn trade_details(
    State(state): State<Arc<AppState>>,
    op: Operator,
    Path(raw): Path<String>,
    axum::Form(mut form): axum::Form<DetailsForm>,
) -> Response {
    let csrf = std::mem::take(&mut form.csrf);
    on_case(&state, &op, &csrf, TradeStatus::PATH, &raw, async |id| {
        let case = crate::cases::access::case::<crate::cases::kind::Trade>(&state, op.caller(), id)
            .await?;
        let mut body = serde_json::Map::new();
        if let Some(office) = filled(form.office)
            && let Some((key, municipality)) = office.split_once('|')
        {
            body.insert(
                "trade_office".into(),
                serde_json::json!({ "key": key, "municipality_key": municipality }),
            );
        }
        if let Some(fee) = filled(form.city_fee) {
            let fee = fee.trim().replace(',', ".");
            let value = serde_json::from_str::<serde_json::Number>(&fee)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::String(fee));
            let unchanged = case.city_fee_cents.is_some_and(|c| {
                value
                    .as_f64()
                    .is_some_and(|f| (f * 100.0).round() as i64 == c)
            });
            if !unchanged {
                body.insert("city_fee".into(), value);
            }
        }
        if let Some(paid) = form.is_paid.as_deref() {
            let paid = paid == "true";
            if paid != case.is_paid {
                body.insert("is_paid".into(), serde_json::Value::Bool(paid));
            }
        }
        if body.is_empty() {
            return Ok("—".to_string());
        }
        let body = serde_json::Value::Object(body);
        let (patch, head) = crate::cases::trade_patch::trade_patch(&state, &body).await?;
        crate::cases::trade_patch::patch_trade(&state, id, patch, head, op.actor()).await?;
        Ok(body
            .as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>().join(", "))
            .unwrap_or_default())
    })
    .await
}

#[derive(Deserialize)]
pub struct IdentityForm {
    #[serde(default)]
    csrf: String,
    /// `verify` (now) or `remove`.
    #[serde(default)]
    action: String,
}

pub async fn identity(
    State(state): State<Arc<AppState>>,
    op: Operator,
    lang: Lang,
    Path((raw, index)): Path<(String, String)>,
    axum::Form(mut form): axum::Form<IdentityForm>,
) -> Response {
    let csrf = std::mem::take(&mut form.csrf);
    on_case(&state, &op, &csrf, TradeStatus::PATH, &raw, async |id| {
        let index: usize = index.parse().map_err(|_| ApiError::NotFound)?;
        let operator = op.session.operator_id;
        match form.action.as_str() {
            "verify" => {
                let body = serde_json::Value::Null;
                identity::verify_identity(&state, operator, id, index, &body).await?;
                Ok(lang.t("flash.verified").to_string())
            }
            "remove" => {
                identity::clear_identity(&state, operator, id, index).await?;
                Ok(lang.t("flash.unverified").to_string())
            }
            _ => Err(ApiError::validation(
                "action",
                "invalid_value",
                "must be verify or remove",
            )),
        }
    })
    .await
}

#[derive(Deserialize)]
pub struct OfficeForm {
    #[serde(default)]
    csrf: String,
    suggested: Option<String>,
    tax_office_number: Option<String>,
}

/// Assigns the tax office: a suggestion chosen, or the number typed.
pub async fn tax_office(
    State(state): State<Arc<AppState>>,
    op: Operator,
    Path(raw): Path<String>,
    axum::Form(mut form): axum::Form<OfficeForm>,
) -> Response {
    let csrf = std::mem::take(&mut form.csrf);
    on_case(&state, &op, &csrf, TaxStatus::PATH, &raw, async |id| {
        let number = filled(form.suggested)
            .or(filled(form.tax_office_number))
            .ok_or_else(|| {
                ApiError::validation(
                    "tax_office_number",
                    "required",
                    "choose a suggested office or type its number",
                )
            })?;
        let case =
            crate::cases::access::case::<crate::cases::kind::Tax>(&state, op.caller(), id).await?;
        crate::cases::tax::assign_office(&state, &case, &number, Some(op.actor())).await?;
        Ok(format!("tax office {number}"))
    })
    .await
}

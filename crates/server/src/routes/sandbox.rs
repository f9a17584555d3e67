//! The sandbox (docs/api/sandbox.md): the provider that created a sandbox case drives it through
//! every operator step itself, so it can test its own handling, webhooks included, end to end.
//!
//! A simulated step is the operator's step (routes::transitions: same request rules, same
//! lifecycle table, same atomic write, same webhook events from the history), recorded with the
//! actor `provider:<id>` and a reason starting with `sandbox simulation`. What an operator would
//! supply comes from the sandbox instead: `completed` of a trade case stores a generated sample
//! licence and fills in a demo trade office, fee and payment when the case has none;
//! `completed` of a tax case takes a demo tax number unless one is sent.
//!
//! Access: only provider keys (client-company and operator keys: 403); only the provider's own
//! sandbox cases; another provider's case, a production case and an unknown id all answer the
//! same 404.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use domain::auth::Caller;
use domain::calendar::date_in_germany;
use domain::company::Environment;
use domain::lifecycle::{Lifecycle, TaxStatus, TradeStatus};
use serde::Serialize;
use store::{DocumentRecord, TradePatch, TradeRegistrationRecord};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::app::AppState;
use crate::envelope::{Envelope, Outcome, respond};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{ApiJson, PathId};
use crate::routes::cases;
use crate::routes::offices::TradeOfficeView;
use crate::routes::trade_registrations::DocumentView;
use crate::routes::transitions::{
    self, Actor, Moved, TaxTransitionRequest, TradeStep, TradeTransitionRequest,
};

/// The calling provider; any other key may not simulate (403).
fn sandbox_provider(caller: Caller) -> Result<Uuid, ApiError> {
    match caller {
        Caller::Provider { company_id } => Ok(company_id),
        _ => Err(ApiError::Forbidden(
            "only the provider that created a sandbox case can simulate its steps".into(),
        )),
    }
}

/// The provider's own sandbox case, else the 404 of an unknown id.
fn ensure_own_sandbox_case(
    provider: Uuid,
    case_provider: Uuid,
    environment: Environment,
) -> Result<(), ApiError> {
    if case_provider == provider && environment == Environment::Sandbox {
        Ok(())
    } else {
        Err(ApiError::NotFound)
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SandboxTradeTransitionResponse {
    pub result: Outcome,
    pub message: String,
    pub trade_registration_id: Uuid,
    #[schema(example = "completed")]
    pub status: String,
    #[schema(example = "submitted")]
    pub previous_status: String,
    /// With `completed`: the generated sample licence (type `trade-licence`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<DocumentView>,
}

/// Simulates an operator's step on one of the caller's sandbox trade registrations:
/// `submitted` (filed, or unblocked), `blocked` (with `reason`) or `completed` (a sample trade
/// licence is generated and stored as `trade-licence`; a demo trade office, city fee and
/// payment are filled in where the case has none). Recorded with the actor `provider:<id>`
/// and a reason starting with `sandbox simulation`; webhooks are sent as for the real step.
#[utoipa::path(post, path = "/v1/sandbox/trade-registration/{trade_registration_id}/transition", tag = "sandbox",
    operation_id = "sandbox_transition_trade",
    params(
        ("trade_registration_id" = Uuid, Path, description = "A sandbox case of the caller"),
    ),
    request_body = TradeTransitionRequest,
    responses(
        (status = 200, description = "Moved", body = Envelope<SandboxTradeTransitionResponse>),
        (status = 400, description = "`INVALID_JSON`", body = Envelope<ErrorBody>),
        (status = 403, description = "Not a provider key (`FORBIDDEN`)", body = Envelope<ErrorBody>),
        (status = 404, description = "No sandbox case of the caller with this id; production cases answer this too (`NOT_FOUND`)", body = Envelope<ErrorBody>),
        (status = 409, description = "`INVALID_STATE_TRANSITION`: the message names the current status and the allowed ones", body = Envelope<ErrorBody>),
        (status = 422, description = "`VALIDATION_FAILED`: unknown status, `blocked` without a reason, unknown field", body = Envelope<ErrorBody>),
    ))]
pub async fn transition_trade(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
    ApiJson(input): ApiJson<TradeTransitionRequest>,
) -> Result<Response, ApiError> {
    let provider = sandbox_provider(caller)?;
    let actor = Actor::SandboxProvider(provider);
    let step = transitions::trade_step(input, actor)?;
    // A completion writes the demo office when the case has none: an operator's office
    // assignment (which renders the forms under its office) must not run between the read and
    // that write.
    let _held = state.case_locks.lock(id).await;
    let case = state
        .repo
        .get_trade_registration(id)
        .await?
        .ok_or(ApiError::NotFound)?;
    ensure_own_sandbox_case(provider, case.provider_id, case.environment)?;
    let (moved, document) = if step.target == TradeStatus::Completed {
        let (moved, doc) = complete_with_sample_licence(&state, &case, step, actor).await?;
        let view = cases::document_views(&state, std::slice::from_ref(&doc)).remove(0);
        (moved, Some(view))
    } else {
        (
            transitions::move_trade(&state, &case, step, actor).await?,
            None,
        )
    };
    Ok(respond(
        StatusCode::OK,
        SandboxTradeTransitionResponse {
            result: Outcome::Success,
            message: simulated_message("trade registration", moved),
            trade_registration_id: id,
            status: moved.status.as_str().into(),
            previous_status: moved.previous.as_str().into(),
            document,
        },
    ))
}

fn simulated_message<L: Lifecycle>(what: &str, moved: Moved<L>) -> String {
    format!(
        "{what} is now {} (sandbox simulation)",
        moved.status.as_str()
    )
}

/// The demo trade office of a case that has none.
fn demo_trade_office() -> TradeOfficeView {
    use domain::sandbox::*;
    TradeOfficeView {
        key: DEMO_TRADE_OFFICE_KEY.into(),
        name: DEMO_TRADE_OFFICE_NAME.into(),
        kind: None,
        municipality_key: DEMO_TRADE_OFFICE_KEY.into(),
        municipality_name: None,
        address: Some(DEMO_TRADE_OFFICE_ADDRESS.into()),
        email: None,
        phone: None,
        website: None,
        note: Some(DEMO_TRADE_OFFICE_NOTE.into()),
    }
}

/// `completed` in the sandbox: the office, fee and payment the case has (demo values where it
/// has none, which are stored), a sample licence rendered from them, stored and the case
/// completed in the operator's one write.
///
/// The demo values are written in the same transaction as the move, so a move that loses a
/// race leaves nothing behind.
async fn complete_with_sample_licence(
    state: &AppState,
    case: &TradeRegistrationRecord,
    step: TradeStep,
    actor: Actor,
) -> Result<(Moved<TradeStatus>, DocumentRecord), ApiError> {
    // Nothing is rendered or filled in for a case that cannot be completed (409).
    transitions::check_completable(case)?;
    let reg = cases::stored_trade(case)?;
    let now = crate::clock::now_micros();
    let mut patch = TradePatch::default();
    let determined = case
        .trade_office
        .as_ref()
        .and_then(TradeOfficeView::stored)
        .map(|view| view.with_directory(case.trade_office_entry.clone()));
    let office = match determined {
        Some(office) => office,
        None => {
            let demo = demo_trade_office();
            patch.trade_office =
                Some(serde_json::to_value(&demo).map_err(|e| ApiError::Internal(e.into()))?);
            demo
        }
    };
    let fee_cents = match case.city_fee_cents {
        Some(c) => c,
        None => {
            patch.city_fee_cents = Some(domain::sandbox::DEMO_CITY_FEE_CENTS);
            domain::sandbox::DEMO_CITY_FEE_CENTS
        }
    };
    if !case.is_paid {
        patch.is_paid = Some(true);
    }
    let ctx = forms::TradeLicenceContext {
        trade_office_name: office.name.clone(),
        trade_office_address: office.address.clone(),
        municipality_key: (office.municipality_key != domain::sandbox::DEMO_TRADE_OFFICE_KEY)
            .then(|| office.municipality_key.clone()),
        reference: format!("SANDBOX-{}", case.id),
        received_on: case
            .history
            .iter()
            .rev()
            .find(|h| h.status == TradeStatus::Submitted.as_str())
            .map(|h| date_in_germany(h.at)),
        issued_on: date_in_germany(now),
        fee_cents: Some(fee_cents),
        fee_paid: true,
        timestamp: now,
    };
    let reg_for_render = reg.clone();
    let pdf =
        tokio::task::spawn_blocking(move || forms::render_trade_licence(&reg_for_render, &ctx))
            .await
            .map_err(|e| ApiError::Internal(anyhow::anyhow!("rendering panicked: {e}")))?
            .map_err(|e| ApiError::Internal(anyhow::anyhow!("sample licence failed: {e}")))?;
    let fields = store::CaseFields {
        tax_number: None,
        trade: (patch != TradePatch::default()).then_some(TradePatch {
            updated_at: Some(now),
            ..patch
        }),
    };
    transitions::complete_trade_with_licence(
        state,
        case,
        Bytes::from(pdf),
        format!("Gewerbeschein (Muster) - {}.pdf", reg.name),
        actor,
        Some(match step.reason {
            Some(r) => format!("sample trade licence generated; {r}"),
            None => "sample trade licence generated".into(),
        }),
        &fields,
    )
    .await
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SandboxTaxTransitionResponse {
    pub result: Outcome,
    pub message: String,
    pub tax_registration_id: Uuid,
    #[schema(example = "completed")]
    pub status: String,
    #[schema(example = "submitted")]
    pub previous_status: String,
    /// With `completed`: the tax number recorded, as sent or the generated demo number
    /// (13-digit ELSTER form).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "2742081546605")]
    pub tax_number: Option<String>,
}

/// Simulates an operator's step on one of the caller's sandbox tax registrations:
/// `submitted` (sent, or resent after a rejection; needs an assigned tax office), `rejected`
/// (with `reason`, the filing system's message) or `completed` (with `tax_number`, or without
/// it for a generated demo tax number of the case's tax office). Recorded with the actor
/// `provider:<id>` and a reason starting with `sandbox simulation`; webhooks are sent as for
/// the real step.
#[utoipa::path(post, path = "/v1/sandbox/tax-registration/{tax_registration_id}/transition", tag = "sandbox",
    operation_id = "sandbox_transition_tax",
    params(
        ("tax_registration_id" = Uuid, Path, description = "A sandbox case of the caller"),
    ),
    request_body = TaxTransitionRequest,
    responses(
        (status = 200, description = "Moved", body = Envelope<SandboxTaxTransitionResponse>),
        (status = 400, description = "`INVALID_JSON`", body = Envelope<ErrorBody>),
        (status = 403, description = "Not a provider key (`FORBIDDEN`)", body = Envelope<ErrorBody>),
        (status = 404, description = "No sandbox case of the caller with this id; production cases answer this too (`NOT_FOUND`)", body = Envelope<ErrorBody>),
        (status = 409, description = "`INVALID_STATE_TRANSITION`: the message names the current status and the allowed ones (also: submitting without an assigned tax office)", body = Envelope<ErrorBody>),
        (status = 422, description = "`VALIDATION_FAILED`: unknown status, `rejected` without a reason, a malformed tax number, unknown field", body = Envelope<ErrorBody>),
    ))]
pub async fn transition_tax(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
    ApiJson(input): ApiJson<TaxTransitionRequest>,
) -> Result<Response, ApiError> {
    let provider = sandbox_provider(caller)?;
    let actor = Actor::SandboxProvider(provider);
    let mut step = transitions::tax_step(input, actor)?;
    let case = crate::routes::cases::tax_case(&state, caller, id).await?;
    ensure_own_sandbox_case(provider, case.provider_id, case.environment)?;
    if step.target == TaxStatus::Completed && step.tax_number.is_none() {
        // Only a submitted case can be completed, and it has an office (submitting needs one).
        if let Some(n) = case
            .tax_office_number
            .as_deref()
            // Of the id the provider knows, which alone it can tell from the number.
            .and_then(|office| domain::sandbox::demo_tax_number(office, case.public_id))
        {
            step.tax_number = Some(n);
            step.demo_tax_number = true;
            step.reason = Some(match step.reason {
                Some(r) => format!("demo tax number, not issued by a tax office; {r}"),
                None => "demo tax number, not issued by a tax office".into(),
            });
        }
    }
    let (moved, tax_number) = transitions::move_tax(&state, &case, step, actor).await?;
    Ok(respond(
        StatusCode::OK,
        SandboxTaxTransitionResponse {
            result: Outcome::Success,
            message: simulated_message("tax registration", moved),
            tax_registration_id: id,
            status: moved.status.as_str().into(),
            previous_status: moved.previous.as_str().into(),
            tax_number,
        },
    ))
}

/// Simulates the operator's office assignment on one of the caller's sandbox tax
/// registrations (validated or rejected): the XML is written for that office, XSD-validated,
/// and the summary re-rendered (nothing changes when the case already holds the XML for that
/// office), exactly as for the operator; answers with the case. Without it a
/// sandbox case whose office the address did not decide could never be submitted.
#[utoipa::path(post, path = "/v1/sandbox/tax-registration/{tax_registration_id}/tax-office", tag = "sandbox",
    operation_id = "sandbox_assign_tax_office",
    params(
        ("tax_registration_id" = Uuid, Path, description = "A sandbox case of the caller"),
    ),
    request_body = crate::routes::operator::AssignTaxOfficeRequest,
    responses(
        (status = 200, description = "The case with its new office and documents (its documents as they were for the office it has)", body = Envelope<crate::routes::tax_registrations::TaxRegistrationResponse>),
        (status = 400, description = "`INVALID_JSON`", body = Envelope<ErrorBody>),
        (status = 403, description = "Not a provider key (`FORBIDDEN`)", body = Envelope<ErrorBody>),
        (status = 404, description = "No sandbox case of the caller with this id; production cases answer this too (`NOT_FOUND`)", body = Envelope<ErrorBody>),
        (status = 409, description = "`INVALID_STATE_TRANSITION`: the case is neither validated nor rejected", body = Envelope<ErrorBody>),
        (status = 422, description = "`VALIDATION_FAILED`: not an office of the directory, unknown field", body = Envelope<ErrorBody>),
    ))]
pub async fn assign_tax_office(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
    ApiJson(input): ApiJson<crate::routes::operator::AssignTaxOfficeRequest>,
) -> Result<Response, ApiError> {
    let provider = sandbox_provider(caller)?;
    let case = crate::routes::cases::tax_case(&state, caller, id).await?;
    ensure_own_sandbox_case(provider, case.provider_id, case.environment)?;
    crate::routes::operator::assign_office(&state, &case, &input.tax_office_number).await?;
    crate::routes::tax_registrations::get(State(state), Extension(caller), PathId(id)).await
}

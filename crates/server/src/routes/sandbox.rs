//! The sandbox (docs/api/sandbox.md): the provider that created a sandbox case drives it through
//! every operator step itself, so it can test its own handling, webhooks included, end to end.
//!
//! A simulated step is the operator's step (cases::steps: same request rules, same
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
use domain::auth::Caller;
use domain::company::Environment;
use domain::lifecycle::{Lifecycle, TaxStatus, TradeStatus};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use domain::lifecycle::Actor;

use crate::cases::steps::{Moved, TaxTransitionRequest, TradeTransitionRequest};
use crate::cases::{access, sandbox, steps};
use crate::envelope::{Envelope, Outcome, respond};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{ApiJson, PathId};
use crate::openapi::responses::SandboxCaseErrors;
use crate::routes::views::{self, DocumentView};
use crate::state::AppState;

/// The calling provider; any other key may not simulate (403).
fn sandbox_provider(caller: Caller) -> Result<Uuid, ApiError> {
    match caller {
        Caller::Provider { company_id, .. } => Ok(company_id),
        _ => Err(ApiError::Forbidden(
            "only the provider that created a sandbox case can simulate its steps".into(),
        )),
    }
}

/// The calling provider, and the actor its simulated steps are recorded with.
fn sandbox_actor(caller: Caller) -> Result<(Uuid, Actor), ApiError> {
    let provider = sandbox_provider(caller)?;
    Ok((provider, Actor::SandboxProvider(provider)))
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

/// The caller's own sandbox tax registration `id`, else the 404 of an unknown id.
async fn own_tax_case(
    state: &AppState,
    caller: Caller,
    provider: Uuid,
    id: Uuid,
) -> Result<store::TaxRegistrationRecord, ApiError> {
    let case = access::case::<crate::cases::kind::Tax>(state, caller, id).await?;
    ensure_own_sandbox_case(provider, case.provider_id, case.environment)?;
    Ok(case)
}

/// The answer of a simulated step, `$Answer`: the case by its `$id`, the move, and what the
/// step adds (`$extra`) with `completed`.
macro_rules! simulated_answer {
    ($Answer:ident, $id:ident, $(#[$extra_attr:meta])* $extra:ident: $Extra:ident) => {
        #[derive(Debug, Serialize, ToSchema)]
        pub struct $Answer {
            pub result: Outcome,
            pub message: String,
            pub $id: Uuid,
            #[schema(example = "completed")]
            pub status: String,
            #[schema(example = "submitted")]
            pub previous_status: String,
            $(#[$extra_attr])*
            #[serde(skip_serializing_if = "Option::is_none")]
            pub $extra: Option<$Extra>,
        }

        impl $Answer {
            /// `what` (the case's kind) `id` moved, simulated.
            fn new<L: Lifecycle>(what: &str, id: Uuid, moved: Moved<L>, $extra: Option<$Extra>) -> Self {
                Self {
                    result: Outcome::Success,
                    message: format!("{what} is now {} (sandbox simulation)", moved.status.as_str()),
                    $id: id,
                    status: moved.status.as_str().into(),
                    previous_status: moved.previous.as_str().into(),
                    $extra,
                }
            }
        }
    };
}

simulated_answer!(
    SandboxTradeTransitionResponse,
    trade_registration_id,
    /// With `completed`: the generated sample licence (type `trade-licence`).
    document: DocumentView
);

/// Simulate an operator's step on a trade registration (sandbox)
///
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
        SandboxCaseErrors,
        (status = 409, description = "`INVALID_STATE_TRANSITION`: the message names the current status and the allowed ones", body = Envelope<ErrorBody>),
        (status = 422, description = "`VALIDATION_FAILED`: unknown status, `blocked` without a reason, unknown field", body = Envelope<ErrorBody>),
    ))]
pub async fn transition_trade(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
    ApiJson(input): ApiJson<TradeTransitionRequest>,
) -> Result<Response, ApiError> {
    let (provider, actor) = sandbox_actor(caller)?;
    let step = steps::trade_step(input, actor)?;
    // A completion writes the demo office when the case has none: an operator's office
    // assignment (which renders the forms under its office) must not run between the read and
    // that write.
    let _held = state.case_locks.lock(id).await;
    let case = access::case::<crate::cases::kind::Trade>(&state, caller, id).await?;
    ensure_own_sandbox_case(provider, case.provider_id, case.environment)?;
    let (moved, document) = if step.target == TradeStatus::Completed {
        let (moved, doc) =
            sandbox::complete_with_sample_licence(&state, &case, step, actor).await?;
        let view = views::document_views(&state, std::slice::from_ref(&doc), false).remove(0);
        (moved, Some(view))
    } else {
        (steps::move_trade(&state, &case, step, actor).await?, None)
    };
    let answer = SandboxTradeTransitionResponse::new("trade registration", id, moved, document);
    Ok(respond(StatusCode::OK, answer))
}

simulated_answer!(
    SandboxTaxTransitionResponse,
    tax_registration_id,
    /// With `completed`: the tax number recorded, as sent or the generated demo number
    /// (13-digit ELSTER form).
    #[schema(example = "2742081546605")]
    tax_number: String
);

/// Simulate an operator's step on a tax registration (sandbox)
///
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
        SandboxCaseErrors,
        (status = 409, description = "`INVALID_STATE_TRANSITION`: the message names the current status and the allowed ones (also: submitting without an assigned tax office)", body = Envelope<ErrorBody>),
        (status = 422, description = "`VALIDATION_FAILED`: unknown status, `rejected` without a reason, a malformed tax number, unknown field", body = Envelope<ErrorBody>),
    ))]
pub async fn transition_tax(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
    ApiJson(input): ApiJson<TaxTransitionRequest>,
) -> Result<Response, ApiError> {
    let (provider, actor) = sandbox_actor(caller)?;
    let mut step = steps::tax_step(input, actor)?;
    let case = own_tax_case(&state, caller, provider, id).await?;
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
    let (moved, tax_number) = steps::move_tax(&state, &case, step, actor).await?;
    let answer = SandboxTaxTransitionResponse::new("tax registration", id, moved, tax_number);
    Ok(respond(StatusCode::OK, answer))
}

/// Simulate a tax office assignment (sandbox)
///
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
        SandboxCaseErrors,
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
    let case = own_tax_case(&state, caller, provider, id).await?;
    crate::cases::tax::assign_office(
        &state,
        &case,
        &input.tax_office_number,
        Some(Actor::SandboxProvider(provider)),
    )
    .await?;
    crate::routes::tax_registrations::get(State(state), Extension(caller), PathId(id)).await
}

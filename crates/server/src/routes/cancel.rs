//! `POST /v1/trade-registration/{id}/cancel` and `POST /v1/tax-registration/{id}/cancel`: the
//! provider withdraws a case before it reaches the authority (docs/api/lifecycle.md,
//! "Cancellation"; the step itself is `cases::cancel`). Both answer with the case as its GET
//! does: `cancelled`, its documents `void`, the history naming the reason.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use domain::Violations;
use domain::auth::Caller;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::cases::cancel;
use crate::cases::steps;
use crate::envelope::Envelope;
use crate::error::ApiError;
use crate::extract::{ApiJson, PathId};
use crate::openapi::responses::CancelErrors;
use crate::routes::{tax_registrations, trade_registrations};
use crate::state::AppState;

/// Why the case is withdrawn.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"reason": "Gründer hat sich gegen die Gründung entschieden"}))]
pub struct CancelRequest {
    /// For the history and the `*.cancelled` event: a note of at most 500 characters after
    /// trimming, not blank, no control characters but line breaks and tabs.
    #[schema(max_length = 500, min_length = 1)]
    pub reason: String,
}

impl CancelRequest {
    /// The checked reason, or a 422 naming `reason`.
    fn reason(self) -> Result<String, ApiError> {
        let mut errs = Violations::new();
        let reason = steps::checked_note(self.reason, steps::TRADE_NOTE_MAX, &mut errs);
        errs.finish(())?;
        reason.ok_or_else(|| ApiError::validation("reason", "required", "say why"))
    }
}

/// Cancel a trade registration
///
/// Cancels a trade registration that has not gone to the trade office: `form-rendered` (a
/// `self` case whose owners have not filed). An `assisted` case is `submitted` from its create
/// (our operators file it) and cannot be cancelled here. Answers with the case.
#[utoipa::path(post, path = "/v1/trade-registration/{trade_registration_id}/cancel", tag = "trade registration",
    operation_id = "cancel_trade_registration",
    params(("trade_registration_id" = Uuid, Path, description = "As returned by the create")),
    request_body = CancelRequest,
    responses(
        (status = 200, description = "Cancelled: the case as GET answers it", body = Envelope<trade_registrations::TradeRegistrationResponse>),
        CancelErrors,
    ))]
pub async fn cancel_trade(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
    ApiJson(input): ApiJson<CancelRequest>,
) -> Result<Response, ApiError> {
    cancel::cancel::<crate::cases::kind::Trade>(&state, caller, id, input.reason()?).await?;
    trade_registrations::get(State(state), Extension(caller), PathId(id)).await
}

/// Cancel a tax registration
///
/// Cancels a tax registration that has not gone to the tax office (`validated`) or that the
/// filing system rejected (`rejected`). Answers with the case.
#[utoipa::path(post, path = "/v1/tax-registration/{tax_registration_id}/cancel", tag = "tax registration",
    operation_id = "cancel_tax_registration",
    params(("tax_registration_id" = Uuid, Path, description = "As returned by the create")),
    request_body = CancelRequest,
    responses(
        (status = 200, description = "Cancelled: the case as GET answers it", body = Envelope<tax_registrations::TaxRegistrationResponse>),
        CancelErrors,
    ))]
pub async fn cancel_tax(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
    ApiJson(input): ApiJson<CancelRequest>,
) -> Result<Response, ApiError> {
    cancel::cancel::<crate::cases::kind::Tax>(&state, caller, id, input.reason()?).await?;
    tax_registrations::get(State(state), Extension(caller), PathId(id)).await
}

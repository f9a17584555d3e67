//! Withdrawing a case (docs/api/lifecycle.md, "Cancellation"): the provider that created it
//! cancels it before it reaches the authority, with a reason. The step goes through
//! [`steps::apply_step`] like every other (history entry, `*.cancelled` webhook event, in one
//! write); the documents stay, void (the case's status says so). A cancelled case no longer
//! blocks a new one for its company.

use domain::auth::Caller;
use domain::case::CaseKind;
use domain::lifecycle::{Actor, Lifecycle};
use uuid::Uuid;

use crate::cases::access;
use crate::cases::kind::CaseKindOps;

use crate::cases::steps::{self, CaseRef, Moved, StepWrites};
use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;

/// Cancels the case of kind `K` that `id` names for `caller`, its provider (a tax
/// registration by the id the provider knows it by).
pub async fn cancel<K: CaseKindOps>(
    state: &AppState,
    caller: Caller,
    id: Uuid,
    reason: String,
) -> Result<Moved<K::Status>, ApiError> {
    let case = access::case::<K>(state, caller, id).await?;
    let provider = cancelling_provider(caller)?;
    if !case.status.next().contains(&K::CANCELLED) {
        return Err(not_cancellable(case.status, K::CANCELLED));
    }
    steps::apply_step(
        state,
        CaseRef::of(&case),
        K::CANCELLED,
        Actor::Provider(provider),
        Some(reason),
        StepWrites::default(),
    )
    .await
}

/// Only the provider that created a case withdraws it: a client company's key reads, an
/// operator processes what was filed (403 for both; the case was visible to them).
fn cancelling_provider(caller: Caller) -> Result<Uuid, ApiError> {
    match caller {
        Caller::Provider { company_id, .. } => Ok(company_id),
        _ => Err(ApiError::Forbidden(
            "only the provider that created the case cancels it".into(),
        )),
    }
}

/// The 409 for a case past the point of withdrawal, naming where it is and the statuses from
/// which a case can be cancelled.
fn not_cancellable<L: Lifecycle>(current: L, cancelled: L) -> ApiError {
    let from: Vec<&str> = L::ALL
        .iter()
        .filter(|s| s.next().contains(&cancelled))
        .map(|s| s.as_str())
        .collect();
    let message = if current == cancelled {
        "the case is cancelled already".to_string()
    } else {
        format!(
            "the case is {}; a case is cancelled only before it reaches the authority, from {}",
            current.as_str(),
            from.join(" or ")
        )
    };
    ApiError::Conflict {
        code: ErrorCode::InvalidStateTransition,
        message,
    }
}

/// The 409 `COMPANY_ALREADY_REGISTERED` of a create refused because the company has a `kind`
/// case that is not cancelled, naming that case (read after the refusal; a read that fails
/// leaves the id out rather than the answer).
pub async fn already_registered(state: &AppState, kind: CaseKind, company_id: Uuid) -> ApiError {
    let existing_id = match state.repo.open_case_of_company(kind, company_id).await {
        Ok(id) => id,
        Err(e) => {
            tracing::warn!(error = %e, %company_id, "reading the company's open case failed");
            None
        }
    };
    ApiError::AlreadyRegistered {
        kind: match kind {
            CaseKind::Trade => "trade registration",
            CaseKind::Tax => "tax registration",
        },
        existing_id,
    }
}

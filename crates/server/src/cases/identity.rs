//! An operator's record of an owner's identity verification, and its removal: the rules of the
//! time it may name, the log of every record and removal, and the case history's entry of each
//! change of the owner's `identity_verified_at` (old and new time, the operator), all written
//! by the store in one transaction. The operator API and the console call the same functions.

use domain::Violations;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::ApiError;
use crate::state::AppState;
use domain::lifecycle::Actor;

/// The trade registration `id` with an owner `owner_index` (counted from 0 in creation
/// order); 404 when there is no such case or owner.
pub async fn owner_case(
    state: &AppState,
    id: Uuid,
    owner_index: usize,
) -> Result<store::TradeRegistrationRecord, ApiError> {
    let case = crate::cases::access::any_trade_case(state, id).await?;
    let owners = case
        .record
        .get("owners")
        .and_then(|o| o.as_array())
        .map(Vec::len)
        .unwrap_or(0);
    if owner_index >= owners {
        return Err(ApiError::NotFound);
    }
    Ok(case)
}

/// Records that `operator` verified the identity of owner `owner_index` of case `id`: now, or
/// at `body`'s `verified_at` (RFC 3339 with its offset, not before the case was created, at
/// most 60 s ahead; `body` may be `null`, which records now). A later record replaces an
/// earlier one; a record that changes the owner's time adds a history entry. Answers the
/// recorded time; 404 for an unknown case or owner, 422 naming every broken field.
pub async fn verify_identity(
    state: &AppState,
    operator: Uuid,
    id: Uuid,
    owner_index: usize,
    body: &Value,
) -> Result<OffsetDateTime, ApiError> {
    let case = owner_case(state, id, owner_index).await?;
    let now = crate::clock::now_micros();
    let mut at = now;
    if !body.is_null() {
        let mut errs = Violations::new();
        if let Some(o) = domain::rules::object(body, "", &["verified_at"], &mut errs)
            && let Some(v) = o.opt("verified_at")
        {
            let latest = now + time::Duration::seconds(crate::links::CLOCK_SKEW_SECS);
            at = domain::rules::instant(v, "verified_at", case.created_at, latest, &mut errs)
                .unwrap_or(now);
        }
        errs.finish(())?;
    }
    state
        .repo
        .verify_identity(
            case.id,
            owner_index as i32,
            at,
            Actor::Operator(operator),
            now,
        )
        .await?;
    tracing::info!(case_id = %case.id, owner_index, %operator, "identity verification recorded");
    Ok(at)
}

/// Removes the record of owner `owner_index`'s identity verification of case `id` (one made in
/// error) as `operator`, with its history entry; `false` when there was none (nothing is
/// written). 404 for an unknown case or owner.
pub async fn clear_identity(
    state: &AppState,
    operator: Uuid,
    id: Uuid,
    owner_index: usize,
) -> Result<bool, ApiError> {
    let case = owner_case(state, id, owner_index).await?;
    let removed = state
        .repo
        .clear_identity_verification(
            case.id,
            owner_index as i32,
            Actor::Operator(operator),
            crate::clock::now_micros(),
        )
        .await?;
    if removed {
        tracing::info!(case_id = %case.id, owner_index, %operator, "identity verification removed");
    }
    Ok(removed)
}

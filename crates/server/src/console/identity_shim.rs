//! TEMPORARY until helper A's `cases::identity` lands.

use domain::auth::Caller;
use uuid::Uuid;

use crate::error::ApiError;
use crate::state::AppState;

async fn case_owner(
    state: &AppState,
    raw_id: &str,
    raw_index: &str,
) -> Result<(store::TradeRegistrationRecord, usize), ApiError> {
    let id = Uuid::try_parse(raw_id).map_err(|_| ApiError::NotFound)?;
    let index: usize = raw_index.parse().map_err(|_| ApiError::NotFound)?;
    let case = state
        .repo
        .get_trade_registration(id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok((case, index))
}

pub async fn verify(
    state: &AppState,
    caller: Caller,
    raw: &str,
    index: &str,
    _at: Option<time::OffsetDateTime>,
) -> Result<(), ApiError> {
    let op = crate::cases::access::operator_only(caller)?;
    let (case, index) = case_owner(state, raw, index).await?;
    let now = crate::clock::now_micros();
    state
        .repo
        .verify_identity(case.id, index as i32, now, &format!("operator:{op}"), now)
        .await?;
    Ok(())
}

pub async fn clear(
    state: &AppState,
    caller: Caller,
    raw: &str,
    index: &str,
) -> Result<(), ApiError> {
    let op = crate::cases::access::operator_only(caller)?;
    let (case, index) = case_owner(state, raw, index).await?;
    let now = crate::clock::now_micros();
    state
        .repo
        .clear_identity_verification(case.id, index as i32, &format!("operator:{op}"), now)
        .await?;
    Ok(())
}

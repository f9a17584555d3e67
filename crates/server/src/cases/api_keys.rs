//! The use cases of API keys over HTTP (docs/api/authentication.md): a provider issues, lists
//! and revokes the keys of itself and of the client companies it created, never broader than
//! the calling key; the routes (`routes::companies`) extract the request and shape the answer.

use domain::auth::{Caller, KeyKind};
use domain::company::{Company, CompanyKind, Environment};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::cases::access;
use crate::error::ApiError;
use crate::state::AppState;

/// The provider that issues a key: only provider keys issue keys (403 before the body is read).
pub fn issuer(caller: Caller) -> Result<Uuid, ApiError> {
    match caller {
        Caller::Provider { company_id, .. } => Ok(company_id),
        _ => Err(ApiError::Forbidden(
            "only provider keys can issue API keys".into(),
        )),
    }
}

/// Issues a key for company `id` (the provider `me` itself, or one of its client companies the
/// caller sees) restricted to `environment` as asked and allowed; 409 `API_KEY_LIMIT` when the
/// company holds `FILING_MAX_KEYS_PER_COMPANY` unrevoked keys. Returns the company, the kind
/// of key and the key (shown once).
pub async fn issue(
    state: &AppState,
    caller: Caller,
    me: Uuid,
    id: Uuid,
    environment: Option<Environment>,
) -> Result<(Company, KeyKind, crate::auth::NewKey), ApiError> {
    let company = visible_company(state, caller, id).await?;
    let environment = new_key_environment(caller, &company, environment)?;
    let kind = if company.id == me {
        KeyKind::Provider
    } else {
        KeyKind::Client
    };
    let max = state.config.max_keys_per_company;
    let Some(key) =
        crate::auth::issue_company_key(state.repo.as_ref(), kind, company.id, environment, max)
            .await?
    else {
        tracing::info!(company_id = %company.id, max, "API key refused: the company holds its most keys");
        return Err(ApiError::Conflict {
            code: crate::error::ErrorCode::ApiKeyLimit,
            message: format!(
                "the company holds {max} unrevoked API keys, the most it may hold; revoke one first (DELETE /v1/companies/{}/api-keys/{{key_prefix}})",
                company.id
            ),
        });
    };
    tracing::info!(prefix = %key.record.prefix, company_id = %company.id, "API key issued");
    Ok((company, kind, key))
}

/// A page of company `id`'s unrevoked keys the caller manages, oldest first, after the key
/// prefix `after`: the company, the keys and the cursor of the next page (422 for a bad cursor
/// or limit).
pub async fn list(
    state: &AppState,
    caller: Caller,
    id: Uuid,
    after: Option<&str>,
    limit: Option<i64>,
) -> Result<(Company, Vec<store::ApiKeySummary>, Option<String>), ApiError> {
    provider_only(caller, "list")?;
    let company = visible_company(state, caller, id).await?;
    let mut errs = domain::Violations::new();
    let (after, limit) = crate::extract::page_params(
        "after",
        after,
        |a| is_company_key_prefix(a).then(|| a.to_string()),
        limit,
        &mut errs,
    );
    errs.finish(())?;
    let mut rows = state
        .repo
        .list_api_keys(
            company.id,
            own_keys_filter(caller, &company),
            after.as_deref(),
            limit + 1,
        )
        .await?;
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let next_cursor = more
        .then(|| rows.last().map(|r| r.prefix.clone()))
        .flatten();
    Ok((company, rows, next_cursor))
}

/// Revokes company `id`'s key `prefix` if the caller manages it (404 for any other); it stops
/// working on this instance at once.
pub async fn revoke(
    state: &AppState,
    caller: Caller,
    id: Uuid,
    prefix: &str,
) -> Result<(), ApiError> {
    let company = visible_company(state, caller, id).await?;
    if !is_company_key_prefix(prefix) {
        return Err(ApiError::NotFound);
    }
    let record = state
        .repo
        .find_api_key(prefix)
        .await?
        .filter(|k| k.company_id == Some(company.id) && k.revoked_at.is_none())
        .filter(|k| own_keys_filter(caller, &company).is_none_or(|e| k.environment == Some(e)))
        .ok_or(ApiError::NotFound)?;
    // The store operation `filing keys revoke` uses; `false` when it was revoked meanwhile.
    if !state
        .repo
        .revoke_api_key(&record.prefix, OffsetDateTime::now_utc())
        .await?
    {
        return Err(ApiError::NotFound);
    }
    state.keys.forget(&record.prefix);
    tracing::info!(prefix = %record.prefix, company_id = %company.id, "API key revoked");
    Ok(())
}

/// Loads a company the caller may see; any other answers as an unknown id (docs/api/authentication.md, "Companies").
/// A key restricted to one environment sees client companies of that environment only (and its
/// provider, which has none).
pub async fn visible_company(
    state: &AppState,
    caller: Caller,
    id: Uuid,
) -> Result<Company, ApiError> {
    let company = state
        .repo
        .get_company(id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let visible = match caller {
        Caller::Operator { .. } => true,
        Caller::Provider { company_id, .. } | Caller::Client { company_id, .. } => {
            company.visible_to(company_id)
        }
    };
    if !visible {
        return Err(ApiError::NotFound);
    }
    if let Some(environment) = company.environment {
        access::ensure_environment(caller, environment)?;
    }
    Ok(company)
}

/// The restriction of a key `caller` issues for `company`, given the `environment` the request
/// named: never broader than the calling key (a restricted key's own environment, 409 for the
/// other), and for a client company only its own environment (409 otherwise).
fn new_key_environment(
    caller: Caller,
    company: &Company,
    requested: Option<Environment>,
) -> Result<Option<Environment>, ApiError> {
    let environment = access::environment_for(caller, requested)?;
    match (environment, company.environment) {
        (Some(asked), Some(own)) if asked != own => Err(ApiError::Conflict {
            code: crate::error::ErrorCode::EnvironmentMismatch,
            message: format!(
                "the company is a {} company; the key would be restricted to {}",
                own.as_str(),
                asked.as_str()
            ),
        }),
        _ => Ok(environment),
    }
}

/// The provider's own keys and its client companies' keys are managed by the provider alone
/// (as they are issued): client company and operator keys are refused.
pub fn provider_only(caller: Caller, what: &str) -> Result<(), ApiError> {
    match caller {
        Caller::Provider { .. } => Ok(()),
        _ => Err(ApiError::Forbidden(format!(
            "only provider keys can {what} API keys"
        ))),
    }
}

/// Which of `company`'s keys `caller` manages (lists and revokes): a restricted key, of its
/// provider's own keys, only those restricted to its environment (never a broader one); every
/// key of a client company it sees (that company is of its environment, so are its keys'
/// cases).
fn own_keys_filter(caller: Caller, company: &Company) -> Option<Environment> {
    caller
        .environment()
        .filter(|_| company.kind == CompanyKind::Provider)
}

/// `rfs_prv_<key id>` or `rfs_cli_<key id>`, either with `test_` or `live_` before the key id:
/// the prefix of a company's key.
fn is_company_key_prefix(s: &str) -> bool {
    let id = s
        .strip_prefix("rfs_prv_")
        .or_else(|| s.strip_prefix("rfs_cli_"));
    let id = id.map(|id| {
        id.strip_prefix("test_")
            .or_else(|| id.strip_prefix("live_"))
            .unwrap_or(id)
    });
    id.is_some_and(|id| {
        id.len() == domain::auth::KEY_ID_LEN
            && id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    })
}

//! Who may act on a case: the caller's role, which cases it sees, and the client company a
//! create names.
//!
//! A key restricted to one environment (docs/adr/0021-environment-restricted-keys.md) sees only
//! cases and client companies of that environment: [`ensure_environment`] is the check every
//! read or step makes (through [`trade_case`] and [`tax_case`]), [`environment_for`] the one
//! of a listing and [`create_environment`] the one of a create.

use domain::auth::Caller;
use domain::company::{CompanyKind, Environment};
use uuid::Uuid;

use crate::cases::kind::CaseKindOps;
use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;

/// The calling operator; any other key is 403.
pub fn operator_only(caller: Caller) -> Result<Uuid, ApiError> {
    match caller {
        Caller::Operator { operator_id } => Ok(operator_id),
        _ => Err(ApiError::Forbidden("operator keys only".into())),
    }
}

/// The calling provider, which alone creates cases (`what`: "trade registrations", "tax
/// registrations"); any other key is 403.
pub fn provider_only(caller: Caller, what: &str) -> Result<Uuid, ApiError> {
    match caller {
        Caller::Provider { company_id, .. } => Ok(company_id),
        _ => Err(ApiError::Forbidden(format!(
            "only provider keys can create {what}"
        ))),
    }
}

/// The provider a create is for, and the environment its key is restricted to (`None`:
/// unrestricted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Creator {
    pub provider: Uuid,
    pub key_environment: Option<Environment>,
}

/// The calling provider as the creator of a case ([`provider_only`]), with its key's
/// restriction.
pub fn creator(caller: Caller, what: &str) -> Result<Creator, ApiError> {
    Ok(Creator {
        provider: provider_only(caller, what)?,
        key_environment: caller.environment(),
    })
}

/// docs/api/authentication.md: the provider that created a case, the client company
/// it is for, and operators see it; anyone else gets the same 404 as for an unknown id.
pub fn ensure_visible(caller: Caller, provider_id: Uuid, company_id: Uuid) -> Result<(), ApiError> {
    let visible = match caller {
        Caller::Operator { .. } => true,
        Caller::Provider { company_id: me, .. } => provider_id == me,
        Caller::Client { company_id: me, .. } => company_id == me,
    };
    if visible {
        Ok(())
    } else {
        Err(ApiError::NotFound)
    }
}

/// Something of `environment` (a case, a client company, a document of a case) for `caller`:
/// a key restricted to the other environment gets the same 404 as for an unknown id, so it
/// learns nothing of what it may not see.
pub fn ensure_environment(caller: Caller, environment: Environment) -> Result<(), ApiError> {
    if caller.sees(environment) {
        Ok(())
    } else {
        Err(ApiError::NotFound)
    }
}

/// The environment a request of `caller` is for, given the one it named (`requested`): a
/// restricted key's own (also when the request names none), an unrestricted key's as named.
/// Naming the other environment than the key's is 409 `ENVIRONMENT_MISMATCH`, as in a create.
/// A listing's `environment` filter, and the restriction of a key a key issues.
pub fn environment_for(
    caller: Caller,
    requested: Option<Environment>,
) -> Result<Option<Environment>, ApiError> {
    match (caller.environment(), requested) {
        (Some(own), Some(asked)) if own != asked => Err(key_mismatch(own, asked)),
        (Some(own), _) => Ok(Some(own)),
        (None, requested) => Ok(requested),
    }
}

/// A create's payload for `caller`, before it is validated: a restricted key's environment
/// is the default of `environment` (absent or `null`), and a payload naming the other one is
/// 409 `ENVIRONMENT_MISMATCH`. A value that is no environment at all is left to the validation
/// (422), as is a payload that is not an object. Unrestricted keys keep the payload as it is
/// (`production` by default).
pub fn create_environment(caller: Caller, payload: &mut serde_json::Value) -> Result<(), ApiError> {
    let (Some(own), Some(object)) = (caller.environment(), payload.as_object_mut()) else {
        return Ok(());
    };
    match object.get("environment") {
        None | Some(serde_json::Value::Null) => {
            object.insert("environment".into(), own.as_str().into());
            Ok(())
        }
        Some(value) => match value.as_str().and_then(Environment::parse) {
            Some(asked) if asked != own => Err(key_mismatch(own, asked)),
            _ => Ok(()),
        },
    }
}

/// 409 `ENVIRONMENT_MISMATCH`: the request names `asked`, the key is restricted to `own`.
pub fn key_mismatch(own: Environment, asked: Environment) -> ApiError {
    ApiError::Conflict {
        code: ErrorCode::EnvironmentMismatch,
        message: format!(
            "the API key is restricted to {}; the request is for {}",
            own.as_str(),
            asked.as_str()
        ),
    }
}

/// The trade registration `id`, whoever asks; 404 when there is none.
pub async fn any_trade_case(
    state: &AppState,
    id: Uuid,
) -> Result<store::TradeRegistrationRecord, ApiError> {
    let case = state.repo.get_trade_registration(id).await?;
    case.ok_or(ApiError::NotFound)
}

/// The case of kind `K` that `id` names for `caller` if `caller` may see it
/// ([`CaseKindOps::find`]: a tax registration by the id its provider knows it by); not found,
/// and not visible, is the same 404.
pub async fn case<K: CaseKindOps>(
    state: &AppState,
    caller: Caller,
    id: Uuid,
) -> Result<K::Record, ApiError> {
    let case = K::find(state, caller, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    ensure_visible(caller, case.provider_id, case.company_id)?;
    ensure_environment(caller, case.environment)?;
    Ok(case)
}

/// A `company_id` named in a create: a client company of this provider (else 404
/// `COMPANY_NOT_FOUND`) in the request's environment (else 409 `ENVIRONMENT_MISMATCH`; for a
/// restricted key, whose request is always of its own environment, a company of the other is
/// the 404 of an unknown one), whose name and legal form the request repeats (else 422
/// `company_mismatch` on the fields).
pub async fn check_named_company(
    state: &AppState,
    creator: Creator,
    id: Uuid,
    environment: Environment,
    (name, legal_form): (&str, &str),
) -> Result<domain::company::Company, ApiError> {
    let company = state
        .repo
        .get_company(id)
        .await?
        .filter(|c| c.kind == CompanyKind::Client && c.provider_id == Some(creator.provider))
        .filter(|c| creator.key_environment.is_none() || c.environment == Some(environment))
        .ok_or(ApiError::CompanyNotFound)?;
    if company.environment != Some(environment) {
        return Err(ApiError::Conflict {
            code: ErrorCode::EnvironmentMismatch,
            message: format!(
                "the company is a {} company; the request is for {}",
                company.environment.map(Environment::as_str).unwrap_or("?"),
                environment.as_str()
            ),
        });
    }
    company.mismatches(name, legal_form).finish(())?;
    Ok(company)
}

/// A client company a create makes for `provider` (`name` in its `environment`): its new id,
/// and the company to write with the case under that id. `business_address` as the create
/// stores it (serialising it cannot fail but is not assumed to).
pub fn new_company(
    provider: Uuid,
    (name, environment): (&str, Environment),
    legal_form: Option<String>,
    registration_number: Option<&str>,
    business_address: serde_json::Result<serde_json::Value>,
) -> Result<(Uuid, Option<(Uuid, store::NewClientCompany)>), ApiError> {
    let business_address = business_address.map_err(|e| ApiError::Internal(e.into()))?;
    let id = Uuid::now_v7();
    let company = store::NewClientCompany {
        provider_id: provider,
        name: name.to_owned(),
        environment,
        legal_form,
        registration_number: registration_number.map(str::to_owned),
        business_address: Some(business_address),
    };
    Ok((id, Some((id, company))))
}

//! What trade and tax cases share: who may see a case, the client company a create names, the
//! documents and history as read back, and cleaning up files of a create that failed.

use domain::auth::Caller;
use domain::company::{CompanyKind, Environment};
use store::{DocumentRecord, StatusChange};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::app::AppState;
use crate::error::{ApiError, ErrorCode};
use crate::routes::trade_registrations::{DocumentView, StatusHistoryEntry};

/// docs/api/authentication.md: the provider that created a case, the client company it is for, and operators
/// see it; anyone else gets the same 404 as for an unknown id.
pub fn ensure_visible(caller: Caller, provider_id: Uuid, company_id: Uuid) -> Result<(), ApiError> {
    let visible = match caller {
        Caller::Operator { .. } => true,
        Caller::Provider { company_id: me } => provider_id == me,
        Caller::Client { company_id: me, .. } => company_id == me,
    };
    if visible {
        Ok(())
    } else {
        Err(ApiError::NotFound)
    }
}

/// The tax registration `id` names for `caller`: a provider's and a client company's
/// `tax_registration_id`, looked up among their own cases only (ids are unique per provider,
/// docs/adr/0006-case-ids-per-provider.md), an operator's the case's key. Not found, and not
/// visible, is the same 404.
pub async fn tax_case(
    state: &AppState,
    caller: Caller,
    id: Uuid,
) -> Result<store::TaxRegistrationRecord, ApiError> {
    let case = match caller {
        Caller::Operator { .. } => state.repo.get_tax_registration(id).await?,
        Caller::Provider { company_id } => {
            let scope = store::CaseScope::Provider(company_id);
            state.repo.find_tax_registration(scope, id).await?
        }
        Caller::Client { company_id, .. } => {
            let scope = store::CaseScope::Company(company_id);
            state.repo.find_tax_registration(scope, id).await?
        }
    }
    .ok_or(ApiError::NotFound)?;
    ensure_visible(caller, case.provider_id, case.company_id)?;
    Ok(case)
}

/// A `company_id` named in a create: a client company of this provider (else 404
/// `COMPANY_NOT_FOUND`) in the request's environment (else 409 `ENVIRONMENT_MISMATCH`), whose
/// name and legal form the request repeats (else 422 `company_mismatch` on the fields).
pub async fn check_named_company(
    state: &AppState,
    provider: Uuid,
    id: Uuid,
    environment: Environment,
    (name, legal_form): (&str, &str),
) -> Result<domain::company::Company, ApiError> {
    let company = state
        .repo
        .get_company(id)
        .await?
        .filter(|c| c.kind == CompanyKind::Client && c.provider_id == Some(provider))
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

/// Documents with fresh signed links.
pub fn document_views(state: &AppState, documents: &[DocumentRecord]) -> Vec<DocumentView> {
    let now = OffsetDateTime::now_utc().unix_timestamp();
    documents
        .iter()
        .map(|d| DocumentView {
            id: d.id,
            doc_type: d.doc_type.clone(),
            name: d.name.clone(),
            download_url: state.links.url(d.id, now),
        })
        .collect()
}

pub fn history_views(history: &[StatusChange]) -> Vec<StatusHistoryEntry> {
    history
        .iter()
        .map(|h| StatusHistoryEntry {
            status: h.status.clone(),
            previous_status: h.previous_status.clone(),
            actor: h.actor.clone(),
            reason: h.reason.clone(),
            at: h.at,
        })
        .collect()
}

/// Removes files no case refers to: those of a write that failed, or those a write replaced.
pub async fn remove_files(state: &AppState, keys: &[String]) {
    for key in keys {
        if let Err(e) = state.documents.delete(key).await {
            tracing::error!(%key, error = %e, "could not remove a file no case refers to");
        }
    }
}

/// Where a case document is stored: `<kind>/<yyyy-mm>/<document id>.<ext>`, the month of
/// `at` (UTC). Documents share a folder per kind and month rather than one per case: a folder
/// per case cost every create a `mkdir` (a new inode) and the flush of one more folder
/// (docs/adr/0016-storage-keys-by-month.md). Older cases keep the keys they were stored under.
pub fn storage_key(kind: &str, document_id: Uuid, ext: &str, at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{kind}/{:04}-{:02}/{document_id}.{ext}",
        at.year(),
        u8::from(at.month())
    )
}

/// A `multipart/form-data` body to read part by part: another content type is 415, a
/// multipart content type without a usable boundary 400 `INVALID_MULTIPART`.
pub async fn multipart(req: axum::extract::Request) -> Result<axum::extract::Multipart, ApiError> {
    use axum::extract::FromRequest;
    if !crate::extract::is_multipart(req.headers()) {
        return Err(ApiError::UnsupportedMediaType(
            "send multipart/form-data".into(),
        ));
    }
    axum::extract::Multipart::from_request(req, &())
        .await
        .map_err(|e| ApiError::InvalidMultipart(format!("not a multipart body: {e}")))
}

/// A multipart error as an answer: over the body limit is 413, anything else 400.
pub fn multipart_error(e: axum::extract::multipart::MultipartError) -> ApiError {
    if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::PayloadTooLarge("the request body is larger than allowed".into())
    } else {
        ApiError::InvalidMultipart(format!(
            "the multipart body cannot be read: {}",
            e.body_text()
        ))
    }
}

/// Reads one multipart part whole, refusing it (413) as soon as it exceeds `limit`.
pub async fn read_part(
    field: &mut axum::extract::multipart::Field<'_>,
    name: &str,
    limit: usize,
) -> Result<bytes::Bytes, ApiError> {
    let mut buf = bytes::BytesMut::new();
    while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
        if buf.len() + chunk.len() > limit {
            return Err(ApiError::PayloadTooLarge(format!(
                "the part `{name}` is larger than {limit} bytes"
            )));
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf.freeze())
}

/// Whether `documents` hold one of `doc_type` for `owner` with the content `bytes` (by SHA-256):
/// an office assignment that would write it again leaves it as it is and announces nothing.
pub fn holds_document(
    documents: &[DocumentRecord],
    owner: Option<i32>,
    doc_type: &str,
    bytes: &[u8],
) -> bool {
    use sha2::Digest;
    let sha256 = sha2::Sha256::digest(bytes);
    documents.iter().any(|d| {
        d.owner_index == owner
            && d.doc_type == doc_type
            && d.sha256.as_deref() == Some(sha256.as_slice())
    })
}

/// The stored request of a trade case as its domain type, read from the record in place (no copy
/// of the JSON tree: the copy was a tenth of a GET's CPU on PostgreSQL).
pub fn stored_trade(
    case: &store::TradeRegistrationRecord,
) -> Result<domain::trade::TradeRegistration, ApiError> {
    serde::Deserialize::deserialize(&case.record)
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("stored record unreadable: {e}")))
}

/// The stored status of a case as its lifecycle type.
pub fn stored_status<L: domain::lifecycle::Lifecycle>(status: &str) -> Result<L, ApiError> {
    L::parse(status)
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("unknown stored status {status:?}")))
}

/// `to` when the lifecycle allows it from `current`, else 409 `INVALID_STATE_TRANSITION`
/// naming the current status and the allowed ones.
pub fn checked_transition<L: domain::lifecycle::Lifecycle>(
    current: L,
    to: L,
) -> Result<L, ApiError> {
    current.transition(to).map_err(|e| ApiError::Conflict {
        code: ErrorCode::InvalidStateTransition,
        message: e.to_string(),
    })
}

/// Writes a status change (with any new documents) if the case is still in `from`; a case
/// another request moved meanwhile is 409 `INVALID_STATE_TRANSITION`.
pub async fn move_case(
    state: &AppState,
    kind: store::CaseKind,
    id: Uuid,
    from: &str,
    change: &StatusChange,
    documents: &[DocumentRecord],
    fields: &store::CaseFields,
) -> Result<(), ApiError> {
    if state
        .repo
        .transition_case(kind, id, from, change, documents, fields)
        .await?
    {
        state.wake_webhooks();
        Ok(())
    } else {
        Err(ApiError::Conflict {
            code: ErrorCode::InvalidStateTransition,
            message: "the case changed status meanwhile; read it again".into(),
        })
    }
}

/// Reads a page's cursor (query parameter `field`, parsed by `parse`) and `limit` (1 to 500,
/// default 100), recording what is wrong in `errs`.
pub fn page_params<T>(
    field: &str,
    cursor: Option<&str>,
    parse: impl Fn(&str) -> Option<T>,
    limit: Option<i64>,
    errs: &mut domain::Violations,
) -> (Option<T>, i64) {
    let cursor = cursor.and_then(|c| {
        let parsed = parse(c);
        if parsed.is_none() {
            errs.push(
                field,
                "invalid_value",
                "must be a next_cursor of an earlier page",
            );
        }
        parsed
    });
    let limit = limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        errs.push("limit", "invalid_value", "must be 1 to 500");
    }
    (cursor, limit)
}

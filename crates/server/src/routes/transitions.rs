//! One way to apply an operator's lifecycle step to a case, whoever asks: the operator API
//! (`/v1/operator/...`) and the sandbox (`/v1/sandbox/...`, where a provider simulates the
//! operator on its own sandbox cases). The request rules, the lifecycle check (409
//! `INVALID_STATE_TRANSITION` naming the allowed statuses), the history entry and the atomic
//! move live here once; the routes only decide who may call them.

use bytes::Bytes;
use domain::Violations;
use domain::lifecycle::{Lifecycle, TaxStatus, TradeStatus};
use serde::Deserialize;
use store::{
    CaseKind, DocumentRecord, StatusChange, TaxRegistrationRecord, TradeRegistrationRecord,
};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::app::AppState;
use crate::error::{ApiError, ErrorCode};
use crate::routes::cases;

/// Document type of the issued trade licence.
pub const DOC_TRADE_LICENCE: &str = "trade-licence";

/// The most characters of a trade case's note (a step's, `mark-submitted`'s or the licence
/// upload's `reason`); the OpenAPI document's `maxLength` of those fields, which
/// `tests/openapi.rs` holds to it.
pub const TRADE_NOTE_MAX: usize = 500;

/// The most characters of a tax step's `reason`: an ELSTER rejection is pasted whole.
pub const TAX_NOTE_MAX: usize = 2000;

/// Who applies a step; decides the history's actor and reason, and what the request may ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actor {
    Operator(Uuid),
    /// A provider simulating the operator on its own sandbox case.
    SandboxProvider(Uuid),
}

impl Actor {
    /// `operator:<id>` or `provider:<id>`.
    pub fn history_actor(self) -> String {
        match self {
            Actor::Operator(id) => format!("operator:{id}"),
            Actor::SandboxProvider(id) => format!("provider:{id}"),
        }
    }

    /// The reason as recorded: a simulated step says so (`sandbox simulation: ...`).
    pub fn history_reason(self, reason: Option<String>) -> Option<String> {
        match self {
            Actor::Operator(_) => reason,
            Actor::SandboxProvider(_) => Some(match reason {
                Some(r) => format!("{}: {r}", domain::sandbox::SIMULATION),
                None => domain::sandbox::SIMULATION.to_string(),
            }),
        }
    }

    fn is_sandbox(self) -> bool {
        matches!(self, Actor::SandboxProvider(_))
    }
}

/// Where a step took a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moved<L> {
    pub previous: L,
    pub status: L,
}

/// A status change of a trade registration.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TradeTransitionRequest {
    /// `submitted` (filed with the trade office, or unblocked) or `blocked` (the trade office asks
    /// for more; a reason is required). `completed` comes with the trade licence upload (in the
    /// sandbox: with a generated sample licence). A status the case cannot move to is 409.
    #[schema(value_type = TradeStatus)]
    pub status: String,
    /// For the history, and for `blocked` what is missing: a note of at most 500 characters
    /// after trimming, not blank, no control characters but line breaks and tabs.
    #[serde(default)]
    #[schema(max_length = 500, min_length = 1)]
    pub reason: Option<String>,
}

/// A trade step whose request passed every rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TradeStep {
    pub target: TradeStatus,
    /// As sent (checked); [`Actor::history_reason`] marks it when recorded.
    pub reason: Option<String>,
}

/// Checks a trade step's request; every broken rule in one 422. An operator completes a case
/// only by uploading the licence; the sandbox completes it directly.
pub fn trade_step(input: TradeTransitionRequest, actor: Actor) -> Result<TradeStep, ApiError> {
    let mut errs = Violations::new();
    let target = TradeStatus::parse(&input.status);
    match target {
        None if actor.is_sandbox() => errs.push(
            "status",
            "invalid_value",
            "must be one of: submitted, blocked, completed",
        ),
        None => errs.push(
            "status",
            "invalid_value",
            "must be one of: submitted, blocked (completed comes with the trade licence upload)",
        ),
        Some(TradeStatus::Completed) if !actor.is_sandbox() => errs.push(
            "status",
            "requires_trade_licence",
            "a case is completed by uploading the issued trade licence",
        ),
        _ => {}
    }
    let reason = match input.reason {
        Some(r) => domain::rules::note(
            &serde_json::Value::from(r),
            "reason",
            TRADE_NOTE_MAX,
            &mut errs,
        ),
        None => None,
    };
    if target == Some(TradeStatus::Blocked) && reason.is_none() && errs.is_empty() {
        errs.push(
            "reason",
            "required",
            "say what the trade office is waiting for",
        );
    }
    errs.finish(())?;
    let target =
        target.ok_or_else(|| ApiError::Internal(anyhow::anyhow!("validated status missing")))?;
    Ok(TradeStep { target, reason })
}

/// A case as read: which table, its id, and the status it had then.
#[derive(Debug, Clone, Copy)]
struct CaseRef<'a> {
    kind: CaseKind,
    id: Uuid,
    stored_status: &'a str,
}

/// Moves a loaded case to `target` if the lifecycle allows it (else 409 naming the allowed
/// statuses), recording `actor` and `reason` and adding `documents`, all in one write that
/// fails with 409 if another request moved the case since it was read.
async fn apply<L: Lifecycle>(
    state: &AppState,
    case: CaseRef<'_>,
    target: L,
    actor: Actor,
    reason: Option<String>,
    documents: &[DocumentRecord],
    fields: &store::CaseFields,
) -> Result<Moved<L>, ApiError> {
    let current: L = cases::stored_status(case.stored_status)?;
    let to = cases::checked_transition(current, target)?;
    let change = StatusChange {
        status: to.as_str().into(),
        previous_status: Some(current.as_str().into()),
        actor: actor.history_actor(),
        reason: actor.history_reason(reason),
        at: crate::clock::now_micros(),
    };
    cases::move_case(
        state,
        case.kind,
        case.id,
        current.as_str(),
        &change,
        documents,
        fields,
    )
    .await?;
    Ok(Moved {
        previous: current,
        status: to,
    })
}

/// Applies a checked trade step other than `completed` (which needs a licence: see
/// [`complete_trade_with_licence`]).
pub async fn move_trade(
    state: &AppState,
    case: &TradeRegistrationRecord,
    step: TradeStep,
    actor: Actor,
) -> Result<Moved<TradeStatus>, ApiError> {
    if step.target == TradeStatus::Completed {
        return Err(ApiError::Internal(anyhow::anyhow!(
            "completion without a licence"
        )));
    }
    apply(
        state,
        CaseRef {
            kind: CaseKind::Trade,
            id: case.id,
            stored_status: &case.status,
        },
        step.target,
        actor,
        step.reason,
        &[],
        &store::CaseFields::default(),
    )
    .await
}

/// Whether the case may be completed now (409 naming the allowed statuses otherwise); checked
/// before a licence is stored or rendered, and again atomically by the move.
pub fn check_completable(case: &TradeRegistrationRecord) -> Result<(), ApiError> {
    let current: TradeStatus = cases::stored_status(&case.status)?;
    cases::checked_transition(current, TradeStatus::Completed).map(|_| ())
}

/// Stores `file` (a checked PDF) as the case's `trade-licence` document named `name` and
/// completes the case, in one write; if the case cannot be moved the file is removed again.
pub async fn complete_trade_with_licence(
    state: &AppState,
    case: &TradeRegistrationRecord,
    file: Bytes,
    name: String,
    actor: Actor,
    reason: Option<String>,
    fields: &store::CaseFields,
) -> Result<(Moved<TradeStatus>, DocumentRecord), ApiError> {
    check_completable(case)?;
    let id = case.id;
    let doc_id = Uuid::now_v7();
    let now = crate::clock::now_micros();
    let key = cases::storage_key("trade", doc_id, "pdf", now);
    let doc = DocumentRecord {
        id: doc_id,
        case_id: id,
        case_kind: CaseKind::Trade.as_str().into(),
        owner_index: None,
        doc_type: DOC_TRADE_LICENCE.into(),
        name,
        storage_key: key.clone(),
        content_type: "application/pdf".into(),
        size: Some(file.len() as i64),
        sha256: Some({
            use sha2::Digest;
            sha2::Sha256::digest(&file).to_vec()
        }),
        created_at: now,
    };
    state.documents.put(&key, file).await?;
    match apply(
        state,
        CaseRef {
            kind: CaseKind::Trade,
            id,
            stored_status: &case.status,
        },
        TradeStatus::Completed,
        actor,
        reason,
        std::slice::from_ref(&doc),
        fields,
    )
    .await
    {
        Ok(moved) => Ok((moved, doc)),
        Err(e) => {
            cases::remove_files(state, std::slice::from_ref(&key)).await;
            Err(e)
        }
    }
}

/// A status change of a tax registration.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaxTransitionRequest {
    /// `submitted` (sent to the tax office, or resent after a rejection), `completed` (with
    /// `tax_number`) or `rejected` (with the filing system's message as `reason`).
    #[schema(value_type = TaxTarget)]
    pub status: String,
    /// For the history, and for `rejected` the filing system's message: a note of at most
    /// 2,000 characters after trimming, not blank, no control characters but line breaks and
    /// tabs.
    #[serde(default)]
    #[schema(max_length = 2000, min_length = 1)]
    pub reason: Option<String>,
    /// The issued tax number (Steuernummer), in the state's own form (e.g. `27/815/08150`,
    /// slashes and spaces allowed) or ELSTER's 13 digits (`1127081508150`); required for
    /// `completed` (in the sandbox optional: a demo number is generated). It must be a number
    /// of the case's tax office with its state's check digit (`invalid_tax_number`,
    /// `tax_office_mismatch`) and is stored in the 13-digit form.
    #[serde(default)]
    pub tax_number: Option<String>,
}

/// The statuses a tax step can ask for (`validated` is where a case starts, never a target).
#[derive(Debug, ToSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
pub enum TaxTarget {
    Submitted,
    Completed,
    Rejected,
}

/// A tax step whose request passed every rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxStep {
    pub target: TaxStatus,
    pub reason: Option<String>,
    /// Only with `completed`: the digits as sent, which `move_tax` reads as a number of the
    /// case's office; or the sandbox's demo number (`demo_tax_number`), stored as it is.
    pub tax_number: Option<String>,
    pub demo_tax_number: bool,
}

/// Reads a tax number sent for the loaded case (in the state's form or ELSTER's): the 13-digit
/// form of the case's office, or a 422 naming `tax_number` (a check digit that does not match,
/// another office's number, an office not in the directory).
fn issued_tax_number(raw: &str, case: &TaxRegistrationRecord) -> Result<String, ApiError> {
    let Some(office) = case.tax_office_number.as_deref() else {
        // Only a submitted case can be completed, and submitting needs an office.
        return Err(ApiError::Internal(anyhow::anyhow!(
            "completing a case without a tax office"
        )));
    };
    domain::steuernummer::normalise(raw, office, &domain::offices::is_known_tax_office).map_err(
        |e| {
            let mut errs = Violations::new();
            errs.push("tax_number", e.code(), e.message());
            ApiError::from(errs)
        },
    )
}

/// Checks a tax step's request; every broken rule in one 422. An operator completes with the
/// issued tax number; the sandbox may leave it out.
pub fn tax_step(input: TaxTransitionRequest, actor: Actor) -> Result<TaxStep, ApiError> {
    let mut errs = Violations::new();
    let target = TaxStatus::parse(&input.status);
    if target.is_none() || target == Some(TaxStatus::Validated) {
        errs.push(
            "status",
            "invalid_value",
            "must be one of: submitted, completed, rejected",
        );
    }
    let reason = input.reason.and_then(|r| {
        domain::rules::note(
            &serde_json::Value::from(r),
            "reason",
            TAX_NOTE_MAX,
            &mut errs,
        )
    });
    let tax_number = match (&input.tax_number, target) {
        (Some(n), Some(TaxStatus::Completed)) => {
            let t = domain::steuernummer::digits_of(n);
            if t.is_none() {
                let e = domain::steuernummer::TaxNumberError::Length;
                errs.push("tax_number", e.code(), e.message());
            }
            t
        }
        (None, Some(TaxStatus::Completed)) if !actor.is_sandbox() => {
            errs.push(
                "tax_number",
                "required",
                "is required to complete a tax registration",
            );
            None
        }
        (Some(_), _) => {
            errs.push(
                "tax_number",
                "not_allowed",
                "is only accepted with status completed",
            );
            None
        }
        (None, _) => None,
    };
    if target == Some(TaxStatus::Rejected)
        && reason.is_none()
        && !errs.iter().any(|e| e.field == "reason")
    {
        errs.push("reason", "required", "give the filing system's message");
    }
    errs.finish(())?;
    let target =
        target.ok_or_else(|| ApiError::Internal(anyhow::anyhow!("validated status missing")))?;
    Ok(TaxStep {
        target,
        reason,
        tax_number,
        demo_tax_number: false,
    })
}

/// Applies a checked tax step to a loaded case: submitting needs the case's XML (else 409,
/// saying why it has none: no office yet, no manufacturer id), completing records the tax number the step carries, read as a number of
/// the case's office (422 otherwise; after the lifecycle's 409) unless it is the sandbox's demo
/// number. Returns the move and the tax number stored.
pub async fn move_tax(
    state: &AppState,
    case: &TaxRegistrationRecord,
    step: TaxStep,
    actor: Actor,
) -> Result<(Moved<TaxStatus>, Option<String>), ApiError> {
    let current: TaxStatus = cases::stored_status(&case.status)?;
    let to = cases::checked_transition(current, step.target)?;
    if to == TaxStatus::Submitted
        && let (_, Some(reason)) = crate::cases::tax_xml::state(case, &state.config.elster)
    {
        use crate::cases::tax_xml::PendingReason;
        return Err(ApiError::Conflict {
            code: ErrorCode::InvalidStateTransition,
            message: match reason {
                PendingReason::TaxOfficeUnknown => {
                    "no tax office is assigned yet, so there is no XML to submit"
                }
                PendingReason::HerstellerIdMissing => {
                    "the case has no XML yet: a production XML needs the service's ELSTER manufacturer id (FILING_ELSTER_HERSTELLER_ID)"
                }
                PendingReason::Queued => {
                    "the case's XML is not written yet: it is written after the service's start; assign the case's tax office again to write it now"
                }
            }
            .into(),
        });
    }
    let tax_number = match step.tax_number {
        None if to == TaxStatus::Completed => {
            return Err(ApiError::Internal(anyhow::anyhow!(
                "completion without a tax number"
            )));
        }
        Some(raw) if !step.demo_tax_number => Some(issued_tax_number(&raw, case)?),
        other => other,
    };
    let moved = apply(
        state,
        CaseRef {
            kind: CaseKind::Tax,
            id: case.id,
            stored_status: &case.status,
        },
        step.target,
        actor,
        step.reason,
        &[],
        &store::CaseFields {
            tax_number: tax_number.clone(),
            trade: None,
        },
    )
    .await?;
    Ok((moved, tax_number))
}

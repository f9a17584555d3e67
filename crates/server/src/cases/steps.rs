//! One way to move a case along its lifecycle, whoever asks: the operator API
//! (`/v1/operator/...`), the sandbox (`/v1/sandbox/...`, where a provider simulates the
//! operator on its own sandbox cases) and the provider's own `mark-submitted`. The request
//! rules, who may take which step (`domain::lifecycle::Role`), the lifecycle check (409
//! `INVALID_STATE_TRANSITION` naming the allowed statuses), the history entry and the atomic
//! move live here once, in [`apply_step`]; the routes only extract and answer.

use bytes::Bytes;
use domain::Violations;
use domain::case::DocumentType;
use domain::case_state::CaseStatus;
use domain::lifecycle::{Actor, Lifecycle, Role, StepRefused, TaxStatus, TradeStatus};
use serde::Deserialize;
use store::{DocumentRecord, StatusChange, TaxRegistrationRecord, TradeRegistrationRecord};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::cases::documents;
use crate::cases::kind::{CaseKindOps, Tax, Trade};
use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;

/// The most characters of a trade case's note (a step's, `mark-submitted`'s or the licence
/// upload's `reason`); the OpenAPI document's `maxLength` of those fields, which
/// `tests/openapi.rs` holds to it.
pub const TRADE_NOTE_MAX: usize = 500;

/// The most characters of a tax step's `reason`: an ELSTER rejection is pasted whole.
pub const TAX_NOTE_MAX: usize = 2000;

/// The role of a step's actor: providers, operators and the sandbox ask for steps; the service
/// itself ([`Actor::System`]) makes its moves where it writes the case and never comes here.
fn role_of(actor: Actor) -> Result<Role, ApiError> {
    actor.role().ok_or_else(|| {
        ApiError::Internal(anyhow::anyhow!("a step asked for by the service itself"))
    })
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
    #[schema(value_type = TradeTarget)]
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
    let role = role_of(actor)?;
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
        Some(TradeStatus::Cancelled) => errs.push(
            "status",
            "invalid_value",
            "cancelled is the provider's step: POST /v1/trade-registration/{id}/cancel",
        ),
        Some(target) if target.needs_licence(role) => errs.push(
            "status",
            "requires_trade_licence",
            "a case is completed by uploading the issued trade licence",
        ),
        _ => {}
    }
    let reason = input
        .reason
        .and_then(|r| checked_note(r, TRADE_NOTE_MAX, &mut errs));
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

/// A case as read: its id, and the status it had then (whose lifecycle tells its kind).
#[derive(Debug, Clone, Copy)]
pub struct CaseRef<L> {
    pub id: Uuid,
    pub status: L,
}

impl<L: Copy> CaseRef<L> {
    /// The case of any kind, by its head.
    pub fn of<P>(case: &store::CaseHead<L, P>) -> Self {
        Self {
            id: case.id,
            status: case.status,
        }
    }
}

/// What a step writes besides the move: documents it adds and fields it sets.
#[derive(Debug, Default)]
pub struct StepWrites<'a> {
    pub documents: &'a [DocumentRecord],
    pub fields: store::CaseFields,
}

/// The one way every step moves a case: to `target` if `actor`'s role may take it there from
/// where it is (else 409 naming the allowed statuses), recording the actor and `reason` and
/// adding the step's writes, all in one write that fails with 409 if another request moved the
/// case since it was read.
pub async fn apply_step<L: Lifecycle + Into<CaseStatus>>(
    state: &AppState,
    case: CaseRef<L>,
    target: L,
    actor: Actor,
    reason: Option<String>,
    writes: StepWrites<'_>,
) -> Result<Moved<L>, ApiError> {
    let current = case.status;
    let to = current.step(target, role_of(actor)?).map_err(refused)?;
    let change = StatusChange::step(
        to,
        Some(current.into()),
        actor,
        actor.history_reason(reason),
        crate::clock::now_micros(),
    );
    if !state
        .repo
        .transition_case(
            case.id,
            current.into(),
            &change,
            writes.documents,
            &writes.fields,
        )
        .await?
    {
        return Err(ApiError::Conflict {
            code: ErrorCode::InvalidStateTransition,
            message: "the case changed status meanwhile; read it again".into(),
        });
    }
    state.wake_webhooks();
    Ok(Moved {
        previous: current,
        status: to,
    })
}

/// A refused step as its 409 `INVALID_STATE_TRANSITION`, naming where the case is and where
/// it can go.
fn refused(e: StepRefused) -> ApiError {
    let message = match e {
        StepRefused::Transition(e) => e.to_string(),
        // Only the provider's `mark-submitted` has origins.
        StepRefused::NotFromHere {
            current,
            origins,
            allowed,
        } if allowed.is_empty() => format!(
            "the case is {current} (final); mark-submitted is only possible from {}",
            origins.join(" or ")
        ),
        StepRefused::NotFromHere {
            current,
            origins,
            allowed,
        } => format!(
            "the case is {current}; it can become {} (through an operator), and mark-submitted is only possible from {}",
            allowed.join(" or "),
            origins.join(" or ")
        ),
        e @ StepRefused::NotATarget { .. } => e.to_string(),
    };
    ApiError::Conflict {
        code: ErrorCode::InvalidStateTransition,
        message,
    }
}

/// A step's note (`reason`), checked against the note rules with `max` characters, recording
/// what is wrong in `errs`.
pub fn checked_note(raw: String, max: usize, errs: &mut Violations) -> Option<String> {
    domain::rules::note(&serde_json::Value::from(raw), "reason", max, errs)
}

/// `mark-submitted`: the provider that created a `self` case says its owners filed the GewA 1
/// (`form-rendered` -> `submitted`). Any other caller who sees the case is 403.
pub async fn mark_submitted(
    state: &AppState,
    caller: domain::auth::Caller,
    id: Uuid,
    reason: Option<String>,
) -> Result<Moved<TradeStatus>, ApiError> {
    let case = crate::cases::access::case::<Trade>(state, caller, id).await?;
    let domain::auth::Caller::Provider { company_id, .. } = caller else {
        return Err(ApiError::Forbidden(
            "only the provider that created the case marks it submitted".into(),
        ));
    };
    apply_step(
        state,
        CaseRef::of(&case),
        TradeStatus::Submitted,
        Actor::Provider(company_id),
        reason,
        StepWrites::default(),
    )
    .await
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
    apply_step(
        state,
        CaseRef::of(case),
        step.target,
        actor,
        step.reason,
        StepWrites::default(),
    )
    .await
}

/// Whether the case may be completed now (409 naming the allowed statuses otherwise); checked
/// before a licence is stored or rendered, and again atomically by the move.
pub fn check_completable(case: &TradeRegistrationRecord, actor: Actor) -> Result<(), ApiError> {
    case.status
        .step(TradeStatus::Completed, role_of(actor)?)
        .map(|_| ())
        .map_err(refused)
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
    fields: store::CaseFields,
) -> Result<(Moved<TradeStatus>, DocumentRecord), ApiError> {
    check_completable(case, actor)?;
    let now = crate::clock::now_micros();
    let doc = documents::record(
        case.id,
        DocumentType::TradeLicence,
        None,
        name,
        "pdf",
        Some(documents::Digested::of(&file)),
        now,
    );
    let key = doc.storage_key.clone();
    state.documents.put(&key, file).await?;
    let writes = StepWrites {
        documents: std::slice::from_ref(&doc),
        fields,
    };
    match apply_step(
        state,
        CaseRef::of(case),
        TradeStatus::Completed,
        actor,
        reason,
        writes,
    )
    .await
    {
        Ok(moved) => Ok((moved, doc)),
        Err(e) => {
            documents::remove_files(state, std::slice::from_ref(&key)).await;
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

/// The statuses a trade step's request may name: the lifecycle's, but `cancelled` (the
/// provider's own step, `POST /v1/trade-registration/{id}/cancel`); whether the case can go
/// there from where it is, and whether the caller may take it there, the lifecycle decides (409).
#[derive(Debug, ToSchema)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)]
pub enum TradeTarget {
    Initiated,
    FormRendered,
    Submitted,
    Completed,
    Blocked,
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
    let role = role_of(actor)?;
    let mut errs = Violations::new();
    let target = TaxStatus::parse(&input.status);
    if target.is_none() || matches!(target, Some(TaxStatus::Validated | TaxStatus::Cancelled)) {
        errs.push(
            "status",
            "invalid_value",
            "must be one of: submitted, completed, rejected",
        );
    }
    let reason = input
        .reason
        .and_then(|r| checked_note(r, TAX_NOTE_MAX, &mut errs));
    let tax_number = match (&input.tax_number, target) {
        (Some(n), Some(TaxStatus::Completed)) => {
            let t = domain::steuernummer::digits_of(n);
            if t.is_none() {
                let e = domain::steuernummer::TaxNumberError::Length;
                errs.push("tax_number", e.code(), e.message());
            }
            t
        }
        (None, Some(target)) if target.needs_tax_number(role) => {
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
    if target.is_some_and(TaxStatus::needs_reason)
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
    let to = case
        .status
        .step(step.target, role_of(actor)?)
        .map_err(refused)?;
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
    let writes = StepWrites {
        documents: &[],
        fields: store::CaseFields {
            tax_number: tax_number.clone(),
            trade: None,
        },
    };
    let moved = apply_step(
        state,
        CaseRef::of(case),
        step.target,
        actor,
        step.reason,
        writes,
    )
    .await?;
    Ok((moved, tax_number))
}

/// A kind's operator steps: the step request of its `transition` body, the checked step,
/// and what applying it answers (issue 54.2). [`operator_step`] is one function for every kind.
pub trait KindSteps: CaseKindOps {
    type Request: Send;
    type Step: Send;
    type Applied: Send;

    /// The request's rules and the actor's right to the target (422 and 403 before the case
    /// is read).
    fn check(input: Self::Request, actor: Actor) -> Result<Self::Step, ApiError>;

    /// Applies a checked step to the case as read.
    fn apply(
        state: &AppState,
        case: &Self::Record,
        step: Self::Step,
        actor: Actor,
    ) -> impl std::future::Future<Output = Result<Self::Applied, ApiError>> + Send;
}

impl KindSteps for Trade {
    type Request = TradeTransitionRequest;
    type Step = TradeStep;
    type Applied = Moved<TradeStatus>;

    fn check(input: TradeTransitionRequest, actor: Actor) -> Result<TradeStep, ApiError> {
        trade_step(input, actor)
    }

    async fn apply(
        state: &AppState,
        case: &TradeRegistrationRecord,
        step: TradeStep,
        actor: Actor,
    ) -> Result<Moved<TradeStatus>, ApiError> {
        move_trade(state, case, step, actor).await
    }
}

impl KindSteps for Tax {
    type Request = TaxTransitionRequest;
    type Step = TaxStep;
    /// The move and the tax number stored with a completion.
    type Applied = (Moved<TaxStatus>, Option<String>);

    fn check(input: TaxTransitionRequest, actor: Actor) -> Result<TaxStep, ApiError> {
        tax_step(input, actor)
    }

    async fn apply(
        state: &AppState,
        case: &TaxRegistrationRecord,
        step: TaxStep,
        actor: Actor,
    ) -> Result<(Moved<TaxStatus>, Option<String>), ApiError> {
        move_tax(state, case, step, actor).await
    }
}

/// An operator's step on the case of kind `K` that `id` names (the operator API's
/// `transition` and the console's forms): checked, then applied as the calling operator.
pub async fn operator_step<K: KindSteps>(
    state: &AppState,
    caller: domain::auth::Caller,
    id: Uuid,
    input: K::Request,
) -> Result<K::Applied, ApiError> {
    let actor = Actor::Operator(crate::cases::access::operator_only(caller)?);
    let step = K::check(input, actor)?;
    let case = crate::cases::access::case::<K>(state, caller, id).await?;
    K::apply(state, &case, step, actor).await
}

/// Checks the parts of a licence upload, however they came (the API's multipart, the
/// console's form): the file must be there and be a PDF, the note must keep the note rules;
/// every broken part in one 422.
pub async fn checked_licence(
    file: Option<Bytes>,
    reason: Option<Bytes>,
) -> Result<(Bytes, Option<String>), ApiError> {
    let mut errs = Violations::new();
    let reason = reason.and_then(|r| match std::str::from_utf8(&r) {
        Ok(text) => domain::rules::note(
            &serde_json::Value::from(text),
            "reason",
            TRADE_NOTE_MAX,
            &mut errs,
        ),
        Err(_) => {
            errs.push("reason", "invalid_type", "must be UTF-8 text");
            None
        }
    });
    match &file {
        None => errs.push(
            "file",
            "required",
            "send the trade licence PDF in the part `file`",
        ),
        Some(f) => {
            let f = f.clone();
            match tokio::task::spawn_blocking(move || forms::check_pdf(&f)).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => errs.push("file", "not_a_pdf", e.to_string()),
                Err(_) => errs.push("file", "not_a_pdf", "the file could not be read as a PDF"),
            }
        }
    }
    errs.finish(())?;
    Ok((file.unwrap_or_default(), reason))
}

/// An operator completes the trade registration `id` with the licence the office issued
/// (checked by [`checked_licence`]): stored as `Gewerbeschein - <company>.pdf`.
pub async fn operator_licence(
    state: &AppState,
    caller: domain::auth::Caller,
    id: Uuid,
    file: Bytes,
    reason: Option<String>,
) -> Result<(Moved<TradeStatus>, DocumentRecord), ApiError> {
    let operator_id = crate::cases::access::operator_only(caller)?;
    let case = crate::cases::access::case::<Trade>(state, caller, id).await?;
    let company = case
        .record
        .get("name")
        .and_then(|n| n.as_str())
        .unwrap_or("Gewerbe")
        .to_string();
    complete_trade_with_licence(
        state,
        &case,
        file,
        format!("Gewerbeschein - {company}.pdf"),
        Actor::Operator(operator_id),
        Some(reason.unwrap_or_else(|| "trade licence issued".into())),
        store::CaseFields::default(),
    )
    .await
}

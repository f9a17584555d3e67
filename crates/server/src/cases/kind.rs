//! The two kinds of case as the application layer uses them (issue 54.2): one trait,
//! [`CaseKindOps`], with the kind's status, record and reads, so that what every kind does alike
//! is one generic function: reading a case for a caller
//! ([`access::case`](crate::cases::access::case)), withdrawing it
//! ([`cancel::cancel`](crate::cases::cancel::cancel)), an operator's step
//! ([`steps::operator_step`](crate::cases::steps::operator_step), over the kind's
//! [`KindSteps`](crate::cases::steps::KindSteps)) and the move itself
//! ([`steps::apply_step`](crate::cases::steps::apply_step)). What a kind does its own way (its
//! create, the checks and writes of its steps) stays in its modules (`trade.rs`, `tax.rs`,
//! `steps.rs`).

use std::future::Future;
use std::ops::Deref;

use domain::auth::Caller;
use domain::case::CaseKind;
use domain::case_state::CaseStatus;
use domain::lifecycle::{Lifecycle, TaxStatus, TradeStatus};
use store::CaseHead;
use uuid::Uuid;

use crate::error::ApiError;
use crate::state::AppState;

/// A kind of case: its lifecycle, its record, and how a caller's id finds it.
pub trait CaseKindOps: Send + Sync + 'static {
    /// The kind as the domain and the store name it.
    const KIND: CaseKind;
    /// The status a withdrawn case ends in.
    const CANCELLED: Self::Status;
    type Status: Lifecycle + Into<CaseStatus> + Send + Sync;
    type Package: Send + Sync;
    /// The record as stored: its head (id, company, provider, status, documents, history) and
    /// the kind's own content.
    type Record: Deref<Target = CaseHead<Self::Status, Self::Package>> + Send + Sync;

    /// The case `id` names for `caller`, before visibility is checked (`None`: no such case
    /// for it).
    fn find(
        state: &AppState,
        caller: Caller,
        id: Uuid,
    ) -> impl Future<Output = Result<Option<Self::Record>, ApiError>> + Send;
}

/// Trade registrations (`cases/trade.rs`).
pub enum Trade {}

/// Tax registrations of every family (`cases/tax.rs`, `cases/kinds/`).
pub enum Tax {}

impl CaseKindOps for Trade {
    const KIND: CaseKind = CaseKind::Trade;
    const CANCELLED: TradeStatus = TradeStatus::Cancelled;
    type Status = TradeStatus;
    type Package = domain::trade::Package;
    type Record = store::TradeRegistrationRecord;

    /// By its id, whoever asks (a trade registration's id is its key).
    async fn find(
        state: &AppState,
        _caller: Caller,
        id: Uuid,
    ) -> Result<Option<Self::Record>, ApiError> {
        Ok(state.repo.get_trade_registration(id).await?)
    }
}

impl CaseKindOps for Tax {
    const KIND: CaseKind = CaseKind::Tax;
    const CANCELLED: TaxStatus = TaxStatus::Cancelled;
    type Status = TaxStatus;
    type Package = domain::tax_core::TaxPackage;
    type Record = store::TaxRegistrationRecord;

    /// A provider's and a client company's `tax_registration_id`, looked up among their own
    /// cases only (ids are unique per provider, docs/adr/0006-case-ids-per-provider.md); an
    /// operator's the case's key.
    async fn find(
        state: &AppState,
        caller: Caller,
        id: Uuid,
    ) -> Result<Option<Self::Record>, ApiError> {
        Ok(match caller {
            Caller::Operator { .. } => state.repo.get_tax_registration(id).await?,
            Caller::Provider { company_id, .. } => {
                let scope = store::CaseScope::Provider(company_id);
                state.repo.find_tax_registration(scope, id).await?
            }
            Caller::Client { company_id, .. } => {
                let scope = store::CaseScope::Company(company_id);
                state.repo.find_tax_registration(scope, id).await?
            }
        })
    }
}

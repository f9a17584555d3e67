//! What a backend has of its own ([`Backend`]): the role traits of the
//! [`Repository`](crate::Repository) are implemented once for every backend where their SQL
//! lives (`sql/<role>.rs`, `role_impl!`), and call into these for the create, the trade read and
//! the pools, which `sqlite/` and `postgres/` implement.

use std::future::Future;

use uuid::Uuid;

use super::{Dialect, Shared};
use crate::new_case::NewCase;
use crate::{Result, TradeRegistrationRecord};

/// What a backend has of its own; every other method of the [`Repository`](crate::Repository)'s
/// roles is a statement on the backend's pools ([`Shared`]).
pub(crate) trait Backend: Send + Sync + 'static {
    /// The backend's dialect.
    type DB: Dialect;

    /// The backend's pools, with the statements both dialects share.
    fn sql(&self) -> &Shared<Self::DB>;

    /// Writes a new case (SQLite: the group-commit writer; PostgreSQL: one statement).
    fn create(&self, case: NewCase) -> impl Future<Output = Result<()>> + Send;

    /// A trade registration by id ([`CaseStore::get_trade_registration`](crate::CaseStore::get_trade_registration)).
    fn trade(
        &self,
        id: Uuid,
    ) -> impl Future<Output = Result<Option<TradeRegistrationRecord>>> + Send;

    /// The use of the backend's pools ([`ObserveStore::pool_use`](crate::ObserveStore::pool_use)).
    fn pool_use(&self) -> Vec<crate::observe::PoolUse>;
}

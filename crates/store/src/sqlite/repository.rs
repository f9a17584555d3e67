//! What SQLite has of its own behind the one [`Repository`](crate::Repository)
//! (`crate::sql::repository`): the group-commit create and the trade read on the calling thread
//! (`mod.rs`) and its two pools.

use uuid::Uuid;

use super::SqliteRepository;
use crate::new_case::NewCase;
use crate::sql::{Backend, Shared};
use crate::{Result, TradeRegistrationRecord};

impl Backend for SqliteRepository {
    type DB = sqlx::Sqlite;

    fn sql(&self) -> &Shared<sqlx::Sqlite> {
        &self.sql
    }

    /// Writes a new case through the group-commit writer (`group.rs`).
    async fn create(&self, case: NewCase) -> Result<()> {
        #[cfg(test)]
        if self.sqlx_creates {
            return self.sql.create_in_transaction(&case).await;
        }
        self.direct.create(case).await
    }

    /// A trade registration: read on the calling thread (`readers.rs`) unless that cannot be
    /// done now (the database is busy), then through the pool.
    async fn trade(&self, id: Uuid) -> Result<Option<TradeRegistrationRecord>> {
        if let Some(done) = self.readers.trade(id) {
            return done;
        }
        self.sql.trade_via_sqlx(id).await
    }

    fn pool_use(&self) -> Vec<crate::observe::PoolUse> {
        vec![
            crate::observe::PoolUse::of("writer", &self.sql.writer),
            crate::observe::PoolUse::of("reads", &self.sql.pool),
        ]
    }
}

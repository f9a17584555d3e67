//! What PostgreSQL has of its own behind the one [`Repository`](crate::Repository)
//! (`crate::sql::repository`): the create in one statement (`create.rs`), its pool and read
//! connections.

use uuid::Uuid;

use super::PostgresRepository;
use crate::new_case::NewCase;
use crate::sql::{Backend, Shared};
use crate::{Result, TradeRegistrationRecord};

impl Backend for PostgresRepository {
    type DB = sqlx::Postgres;

    fn sql(&self) -> &Shared<sqlx::Postgres> {
        &self.sql
    }

    /// Writes a new case in one statement (`create.rs`).
    async fn create(&self, case: NewCase) -> Result<()> {
        #[cfg(test)]
        if self.sqlx_creates {
            return self.sql.create_in_transaction(&case).await;
        }
        super::create::create(&self.sql, &case).await
    }

    async fn trade(&self, id: Uuid) -> Result<Option<TradeRegistrationRecord>> {
        self.sql.trade_via_sqlx(id).await
    }

    fn pool_use(&self) -> Vec<crate::observe::PoolUse> {
        vec![
            crate::observe::PoolUse::of("pool", &self.sql.pool),
            self.sql.reads.pool_use(),
        ]
    }
}

//! PostgreSQL, for several instances behind a load balancer.

use std::str::FromStr;
use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::{Result, StoreError};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

pub struct PostgresRepository {
    pool: PgPool,
    /// The same pool: PostgreSQL has no single-writer lock to queue for (see `sqlite.rs`).
    writer: PgPool,
}

impl PostgresRepository {
    /// Connects and applies migrations (sqlx takes an advisory lock, so instances starting
    /// together migrate once).
    pub async fn connect(url: &str) -> Result<Self> {
        let options =
            PgConnectOptions::from_str(url).map_err(|e| StoreError::Config(e.to_string()))?;
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await?;
        MIGRATOR.run(&pool).await?;
        Ok(Self {
            writer: pool.clone(),
            pool,
        })
    }
}

repository_impl!(PostgresRepository, "postgres", "FOR UPDATE SKIP LOCKED", {});

//! PostgreSQL, for several instances behind a load balancer.

use std::str::FromStr;

use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::{PoolSettings, Result, StoreError};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

pub struct PostgresRepository {
    pool: PgPool,
}

impl PostgresRepository {
    /// Connects and applies migrations (sqlx takes an advisory lock, so instances starting
    /// together migrate once).
    ///
    /// Every connection is pinged before a request gets it (`test_before_acquire`), so one the
    /// server or the network dropped is replaced rather than failing a request; while the
    /// server refuses connections, sqlx keeps retrying until `settings.acquire_timeout`.
    pub async fn connect(url: &str, settings: PoolSettings) -> Result<Self> {
        let options =
            PgConnectOptions::from_str(url).map_err(|e| StoreError::Config(e.to_string()))?;
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(settings.acquire_timeout)
            .test_before_acquire(true)
            .connect_with(options)
            .await?;
        MIGRATOR.run(&pool).await?;
        Ok(Self { pool })
    }
}

repository_impl!(PostgresRepository, "postgres", "FOR UPDATE SKIP LOCKED", {});

//! The embedded default: one SQLite file in write-ahead-log mode.

use std::str::FromStr;

use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::{PoolSettings, Result, StoreError};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

pub struct SqliteRepository {
    pool: SqlitePool,
}

impl SqliteRepository {
    /// Opens (creating when missing) the database file and applies migrations.
    ///
    /// `synchronous = FULL`: a write the API acknowledged survives a power loss, not only a
    /// process crash. A write that waits longer than `settings.busy_timeout` for another
    /// connection's lock fails with `SQLITE_BUSY` ([`StoreError::Unavailable`]).
    pub async fn connect(url: &str, settings: PoolSettings) -> Result<Self> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Config(e.to_string()))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(settings.busy_timeout)
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .acquire_timeout(settings.acquire_timeout)
            .connect_with(options)
            .await?;
        MIGRATOR.run(&pool).await?;
        Ok(Self { pool })
    }
}

repository_impl!(SqliteRepository, "sqlite", "", {});

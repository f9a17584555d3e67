//! The embedded default: one SQLite file in write-ahead-log mode.

use std::str::FromStr;

use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::{PoolSettings, Result, StoreError};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// SQLite lets one connection write at a time. Writers that race for that lock back off and
/// sleep (the busy timeout), which under load turned into second-long stalls; so every write
/// goes through one connection of its own (`writer`), where they queue in order, and reads use
/// the other pool, which in WAL mode never waits for the writer.
pub struct SqliteRepository {
    pool: SqlitePool,
    writer: SqlitePool,
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
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(settings.acquire_timeout)
            .connect_with(options.clone())
            .await?;
        MIGRATOR.run(&writer).await?;
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .acquire_timeout(settings.acquire_timeout)
            .connect_with(options)
            .await?;
        Ok(Self { pool, writer })
    }
}

// The children of a case (`t`) as JSON arrays in one statement (see `read_children!`).
repository_impl!(
    SqliteRepository,
    "sqlite",
    "",
    "\
    (SELECT json_group_array(json_array(status, previous_status, actor, reason, at) ORDER BY seq) FROM status_history WHERE case_id = t.id) AS history_json, \
    (SELECT json_group_array(json_array(lower(hex(id)), case_kind, owner_index, doc_type, name, storage_key, content_type, size, iif(sha256 IS NULL, NULL, lower(hex(sha256))), created_at) ORDER BY created_at, owner_index, doc_type) FROM documents WHERE case_id = t.id) AS documents_json",
    // Only trade cases have identity verifications.
    "(SELECT json_group_array(json_array(owner_index, verified_at) ORDER BY owner_index) FROM identity_verifications WHERE case_id = t.id) AS verified_json",
    {}
);

//! Storage: one [`Repository`] trait with an SQLite and a PostgreSQL implementation side by side,
//! and the [`documents::DocumentStore`] for files, backed by `object_store`.
//!
//! Most statements are the same in both dialects (both accept `$1` placeholders), so they are
//! written once in `sql/`, as code generic over the dialect; what differs per dialect
//! (connection set-up, migrations, locking, the create and read paths) lives in `sqlite/` and
//! `postgres/`.

#[macro_use]
mod sql;
mod audit;
pub mod documents;
mod folder_flush;
mod new_case;
pub mod observe;
#[doc(hidden)]
pub mod plans;
mod postgres;
mod records;
mod repository;
mod rows;
mod sqlite;

use std::sync::Arc;

use domain::auth::KeyKind;

pub use postgres::PostgresRepository;
pub use records::*;
pub use repository::{
    AccountStore, CaseListStore, CaseStore, EventStore, InstanceStore, ObserveStore, Repository,
    WebhookStore,
};
pub use sqlite::{SnapshotDocument, SqliteRepository, SqliteSnapshot, backup_sqlite};

/// What went wrong in the store, in terms the API can answer with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A uniqueness or foreign-key constraint refused the write; the name of the constraint or
    /// column is given where the database told it.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The database or document store cannot be reached or refuses writes right now.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    #[error("invalid database URL: {0}")]
    Config(String),
    #[error("database error: {0}")]
    Database(#[source] sqlx::Error),
    /// An error of the SQLite writes made without sqlx (`sqlite/write.rs`) that is neither a
    /// conflict nor unavailability.
    #[error("database error: {0}")]
    Embedded(#[source] rusqlite::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// A create carried an [`IdempotentAnswer`] for a key that is no longer claimed by its
    /// request (the claim expired and another request took it over); nothing was written.
    #[error("the idempotency key is no longer claimed by this request")]
    IdempotencyClaimLost,
    /// The document store refused an operation for a reason that is not a passing fault
    /// (an invalid key, an unsupported operation): a bug rather than an outage.
    #[error("document store error: {0}")]
    Documents(#[source] object_store::Error),
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match &e {
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                StoreError::Conflict(db.constraint().unwrap_or(db.message()).to_string())
            }
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => {
                StoreError::Conflict(db.constraint().unwrap_or(db.message()).to_string())
            }
            sqlx::Error::Database(db) if is_unavailable(db.as_ref()) => {
                StoreError::Unavailable(e.to_string())
            }
            sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::WorkerCrashed => StoreError::Unavailable(e.to_string()),
            _ => StoreError::Database(e),
        }
    }
}

/// Whether a database's error says that it cannot serve the request right now (a retry later
/// may succeed), as opposed to a statement that is wrong.
///
/// SQLite (primary result codes): `BUSY` and `LOCKED` (another connection held the lock past
/// the busy timeout), `INTERRUPT` (a pool read past its time budget), `READONLY`, `IOERR`, `FULL` and `CANTOPEN`. PostgreSQL (SQLSTATE):
/// class 08 (connection exception), class 53 (insufficient resources: disk full, out of
/// memory, too many connections), class 58 (system error, e.g. I/O), `57P01`..`57P03`
/// (admin or crash shutdown, cannot connect now), `57P05` (idle session timeout), `57014`
/// (statement cancelled, e.g. by a statement timeout), `55P03` (lock not available within
/// `lock_timeout`) and `25006` (read-only transaction: a standby or a database set read-only).
pub fn is_unavailable(db: &dyn sqlx::error::DatabaseError) -> bool {
    let Some(code) = db.code() else {
        return false;
    };
    if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
        code.parse::<i32>().is_ok_and(sqlite_unavailable)
    } else if db
        .try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
        .is_some()
    {
        code.starts_with("08")
            || code.starts_with("53")
            || code.starts_with("58")
            || matches!(
                &*code,
                "57P01" | "57P02" | "57P03" | "57P05" | "57014" | "55P03" | "25006"
            )
    } else {
        false
    }
}

/// The SQLite half of [`is_unavailable`], for a result code (primary or extended) from sqlx
/// or from the rusqlite writes (`sqlite/write.rs`).
pub(crate) fn sqlite_unavailable(code: i32) -> bool {
    const BUSY: i32 = 5;
    const LOCKED: i32 = 6;
    const READONLY: i32 = 8;
    const IOERR: i32 = 10;
    const FULL: i32 = 13;
    const CANTOPEN: i32 = 14;
    // A read interrupted by its time budget (the pool's progress handler).
    const INTERRUPT: i32 = 9;
    // Extended result codes carry the primary code in their low byte.
    matches!(
        code & 0xff,
        BUSY | LOCKED | READONLY | IOERR | FULL | CANTOPEN | INTERRUPT
    )
}

/// How long a request waits for the database before it is answered with
/// [`StoreError::Unavailable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSettings {
    /// Longest wait for a connection from the pool, including (re)connecting to a database
    /// that refuses connections: sqlx retries until this runs out.
    pub acquire_timeout: std::time::Duration,
    /// SQLite only: longest wait for a lock another connection holds (`busy_timeout`).
    pub busy_timeout: std::time::Duration,
    /// PostgreSQL only: connections of the pool that writes (and reads what the read
    /// connections do not). More than the database server's cores can run at once only adds
    /// waiting inside it (measured on 2 cores: ADR 0011).
    pub max_connections: u32,
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            acquire_timeout: std::time::Duration::from_secs(5),
            busy_timeout: std::time::Duration::from_secs(5),
            max_connections: 8,
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

impl StoreError {
    /// Whether this is the one-registration-per-company constraint.
    pub fn is_company_conflict(&self) -> bool {
        matches!(self, StoreError::Conflict(c) if c.contains("company_id"))
    }

    /// Whether this is the one-id-per-provider constraint of tax registrations
    /// (`tax_registrations_public_id`; SQLite names its columns).
    pub fn is_public_id_conflict(&self) -> bool {
        matches!(self, StoreError::Conflict(c) if c.contains("public_id"))
    }

    /// Whether a case create was refused because its key is taken: the primary key of the tax
    /// registrations (SQLite names the column, PostgreSQL the constraint) or, on PostgreSQL, of
    /// `case_children`, which trade and tax cases share.
    pub fn is_case_key_conflict(&self) -> bool {
        matches!(self, StoreError::Conflict(c)
            if c.contains("tax_registrations.id") && !c.contains(',')
                || c.contains("tax_registrations_pkey")
                || c.contains("case_children"))
    }
}

/// Opens the database named by `url` (`sqlite://...` or `postgres://...`) and applies pending
/// migrations, with the default [`PoolSettings`].
pub async fn connect(url: &str) -> Result<Arc<dyn Repository>> {
    connect_with(url, PoolSettings::default()).await
}

/// [`connect`] with explicit timeouts.
pub async fn connect_with(url: &str, settings: PoolSettings) -> Result<Arc<dyn Repository>> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteRepository::connect(url, settings).await?))
    } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        Ok(Arc::new(PostgresRepository::connect(url, settings).await?))
    } else {
        Err(StoreError::Config(format!(
            "expected a sqlite:// or postgres:// URL, got {:?}",
            url.split(':').next().unwrap_or("")
        )))
    }
}

pub(crate) fn decode_kind(s: &str) -> Result<KeyKind> {
    KeyKind::parse(s).ok_or_else(|| StoreError::Corrupt(format!("unknown key kind {s:?}")))
}

/// The migrations of `migrator` before `version`, to build a database as an older release left
/// it (the migration tests of both dialects).
#[cfg(test)]
pub(crate) fn migrations_before(
    migrator: &sqlx::migrate::Migrator,
    version: i64,
) -> sqlx::migrate::Migrator {
    sqlx::migrate::Migrator {
        migrations: std::borrow::Cow::Owned(
            migrator
                .migrations
                .iter()
                .filter(|m| m.version < version)
                .cloned()
                .collect(),
        ),
        ..sqlx::migrate::Migrator::DEFAULT
    }
}

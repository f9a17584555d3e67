//! The embedded default: one SQLite file in write-ahead-log mode.

mod backup;
mod group;
#[cfg(test)]
pub(crate) mod migration_tests;
mod readers;
mod repository;
#[cfg(test)]
pub(crate) mod tests;
mod write;

use std::str::FromStr;

use futures::future::BoxFuture;
use sqlx::Sqlite;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::sql::text::DialectSql;
use crate::sql::{Dialect, Read, Shared};
use crate::{PoolSettings, Result, StoreError};
pub use backup::{SnapshotDocument, SqliteSnapshot, backup_sqlite};
use group::Direct;
use readers::Readers;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// The children of a case (`t`) as JSON arrays built in the read, in one statement. Only trade
/// cases have identity verifications. No join: the arrays are built in the columns. A history
/// entry's changed fields are its sixth element, on field-change entries only (see
/// `rows::history_from_json`); `operators_json` names the history's operators, each found by
/// its key (ids are 16-byte blobs).
const SQL: DialectSql = dialect_sql!(
    "\
    (SELECT json_group_array(iif(changes IS NULL, json_array(status, previous_status, actor, reason, at), json_array(status, previous_status, actor, reason, at, json(changes))) ORDER BY seq) FROM status_history WHERE case_id = t.id) AS history_json, \
    (SELECT json_group_array(json_array(a.actor, o.name)) FROM (SELECT DISTINCT actor FROM status_history WHERE case_id = t.id AND substr(actor, 1, 9) = 'operator:') a \
     JOIN operators o ON o.id = unhex(replace(substr(a.actor, 10), '-', ''))) AS operators_json, \
    (SELECT json_group_array(json_array(lower(hex(id)), case_kind, owner_index, doc_type, name, storage_key, content_type, size, iif(sha256 IS NULL, NULL, lower(hex(sha256))), created_at) ORDER BY created_at, owner_index, doc_type) FROM documents WHERE case_id = t.id) AS documents_json",
    "(SELECT json_group_array(json_array(owner_index, verified_at) ORDER BY owner_index) FROM identity_verifications WHERE case_id = t.id) AS verified_json",
    "",
    // SQLite's writers take turns anyway: no row locks, no turns of claims.
    "",
    ""
);

/// SQLite lets one connection write at a time. Writers that race for that lock back off and
/// sleep (the busy timeout), which under load turned into second-long stalls; so every write
/// goes through one connection of its own (`writer`), where they queue in order, and reads use
/// the other pool, which in WAL mode never waits for the writer.
///
/// sqlx runs each SQLite connection on a thread of its own and hands every statement over a
/// channel; for the hottest read (a trade registration, one short statement) the hand-off
/// and the wake-ups cost more CPU than the query (figures: ADR 0008). That
/// read is therefore made on the calling thread through `readers` (rusqlite on the same SQLite
/// library), which cannot wait: a reader that would have to (`SQLITE_BUSY`, rare in WAL mode)
/// gives way to the pool.
///
/// Case creates, the hottest writes, likewise run on a blocking thread through rusqlite
/// (`direct`, see `write.rs`) instead of one hand-off per statement; they hold the `writer`
/// pool's only connection meanwhile, so writes still queue in one line. Creates that arrive
/// while one is being written are written together, in one transaction with one commit (group
/// commit, see `group.rs`).
pub struct SqliteRepository {
    pub(crate) sql: Shared<Sqlite>,
    readers: Readers,
    direct: Direct,
    /// Tests turn the direct create off to compare it with the sqlx transaction.
    #[cfg(test)]
    sqlx_creates: bool,
}

impl Dialect for Sqlite {
    const BACKEND: &'static str = "sqlite";

    const MIGRATOR: &'static sqlx::migrate::Migrator = &MIGRATOR;

    /// Reads use the pool.
    /// The time budget of a read (the statements of one `read`), and the connections only
    /// such reads use: each use sets the budget's progress handler anew, so a handler left by a
    /// read that was given up on never reaches a statement of another path.
    type Reads = (std::time::Duration, sqlx::SqlitePool);

    const SQL: DialectSql = SQL;

    const CREATED_AT: (&'static str, &'static str) = ("rtrim(t.created_at, 'Z')", "rtrim($?, 'Z')");

    /// One match of the trigram index of the kind's texts (migration 0019): a phrase per word,
    /// all of which must be in the text (FTS5 folds the case of both).
    fn text_search(kind: crate::CaseKind, words: &[&str]) -> Vec<(String, String)> {
        let table = match kind {
            crate::CaseKind::Trade => "trade_search",
            crate::CaseKind::Tax => "tax_search",
        };
        let phrases: Vec<String> = words
            .iter()
            .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
            .collect();
        vec![(
            format!(
                "t.id IN (SELECT s.case_id FROM {table} JOIN {table}_text s \
                 ON s.id = {table}.rowid WHERE {table} MATCH $?)"
            ),
            phrases.join(" AND "),
        )]
    }

    /// A read through the pool within its time budget (the pool's acquire timeout, as
    /// PostgreSQL's read connections' `statement_timeout`): SQLite's progress handler, asked
    /// every few thousand virtual machine steps, interrupts the statement once the budget is
    /// spent, so a costly list answers 503 (`SQLITE_INTERRUPT`, [`crate::StoreError::Unavailable`])
    /// instead of holding one of the pool's connections (issue 52.3).
    fn read<'a, T: Send + 'a>(
        (budget, budgeted): &'a (std::time::Duration, sqlx::SqlitePool),
        _pool: &'a sqlx::SqlitePool,
        read: impl Read<Self, T> + 'a,
    ) -> BoxFuture<'a, Result<T>> {
        Box::pin(async move {
            let mut conn = budgeted.acquire().await?;
            let started = std::time::Instant::now();
            let budget = *budget;
            conn.lock_handle()
                .await?
                .set_progress_handler(4096, move || started.elapsed() <= budget);
            Ok(read(&mut conn).await?)
        })
    }

    // `refresh_children` and `children_created`: nothing to do (the defaults), SQLite builds a
    // case's child arrays in the read (see PostgreSQL's).

    fn rows_affected(done: &sqlx::sqlite::SqliteQueryResult) -> u64 {
        done.rows_affected()
    }
}

impl SqliteRepository {
    /// Opens (creating when missing) the database file and applies migrations.
    ///
    /// `synchronous = FULL`: a write the API acknowledged survives a power loss, not only a
    /// process crash. A write that waits longer than `settings.busy_timeout` for another
    /// connection's lock fails with `SQLITE_BUSY` ([`StoreError::Unavailable`]). The database
    /// must be a file: the on-thread reads and the creates open it themselves.
    pub async fn connect(url: &str, settings: PoolSettings) -> Result<Self> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Config(e.to_string()))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(settings.busy_timeout)
            .foreign_keys(true);
        let path = options.get_filename().to_path_buf();
        if path.as_os_str().is_empty() || path == std::path::Path::new(":memory:") {
            return Err(StoreError::Config(
                "an SQLite database must be a file, not in memory".into(),
            ));
        }
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(settings.acquire_timeout)
            .connect_with(options.clone())
            .await?;
        MIGRATOR.run(&writer).await?;
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .acquire_timeout(settings.acquire_timeout)
            .connect_with(options.clone())
            .await?;
        let budgeted = SqlitePoolOptions::new()
            .max_connections(8)
            .acquire_timeout(settings.acquire_timeout)
            .connect_with(options)
            .await?;
        Ok(Self {
            readers: Readers {
                path: path.clone(),
                idle: std::sync::Mutex::new(Vec::new()),
            },
            direct: Direct::start(path, settings.busy_timeout, writer.clone()),
            sql: Shared {
                pool,
                writer,
                reads: (settings.acquire_timeout, budgeted),
            },
            #[cfg(test)]
            sqlx_creates: false,
        })
    }
}

//! A consistent copy of a live SQLite database through SQLite's online backup API
//! (`filing backup`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};

use crate::{Result, StoreError};

/// What a copy made by [`backup_sqlite`] holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteSnapshot {
    /// Rows of the tables an operator recognises (cases, companies, keys, documents, ...).
    pub counts: BTreeMap<&'static str, i64>,
    /// Every document record of the copy, by storage key.
    pub documents: Vec<SnapshotDocument>,
}

/// A document record of a copy: the file its storage key names must be copied with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotDocument {
    pub storage_key: String,
    /// The SHA-256 of the file as lowercase hex; `None` for a document rendered on its first
    /// download that has not been downloaded yet (it may have no file).
    pub sha256: Option<String>,
    pub size: Option<i64>,
}

/// The tables whose row counts a snapshot reports.
const COUNTED: [&str; 9] = [
    "companies",
    "operators",
    "api_keys",
    "trade_registrations",
    "tax_registrations",
    "documents",
    "webhook_endpoints",
    "webhook_messages",
    "events",
];

/// Copies the SQLite database at `source`, which servers may be writing meanwhile, into the
/// new file `dest`, as it was at one moment.
///
/// The copy is one step of the online backup API (`sqlite3_backup_step(-1)`): all pages inside
/// one read transaction, which in WAL mode does not hold up writers (a step of a few pages at
/// a time would start over after every write of another process, and under steady writes
/// never finish). `SQLITE_BUSY` (a writer recovering the WAL, say) is retried for up to
/// `busy_timeout`. The copy is checked (`PRAGMA quick_check`) and left in rollback-journal
/// mode, one file; a server opening it switches it to WAL again.
pub fn backup_sqlite(source: &Path, dest: &Path, busy_timeout: Duration) -> Result<SqliteSnapshot> {
    let embedded = StoreError::Embedded;
    // Read-write without create: a missing file is an error, not a new empty database.
    let from = Connection::open_with_flags(
        source,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| StoreError::Unavailable(format!("cannot open {}: {e}", source.display())))?;
    from.busy_timeout(busy_timeout).map_err(embedded)?;
    let mut to = Connection::open_with_flags(
        dest,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| StoreError::Unavailable(format!("cannot create {}: {e}", dest.display())))?;
    {
        let backup = Backup::new(&from, &mut to).map_err(embedded)?;
        let started = Instant::now();
        loop {
            match backup.step(-1).map_err(embedded)? {
                StepResult::Done => break,
                // Another step copies what is left (there is nothing left after `-1`, but
                // the API allows it).
                StepResult::More => {}
                _ if started.elapsed() >= busy_timeout => {
                    return Err(StoreError::Unavailable(format!(
                        "{} stayed locked for {} s",
                        source.display(),
                        busy_timeout.as_secs()
                    )));
                }
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
    drop(from);
    let check: String = to
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(embedded)?;
    if check != "ok" {
        return Err(StoreError::Corrupt(format!(
            "the copy of {} fails its check: {check}",
            source.display()
        )));
    }
    let mode: String = to
        .query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))
        .map_err(embedded)?;
    if !mode.eq_ignore_ascii_case("delete") {
        return Err(StoreError::Corrupt(format!(
            "the copy stays in journal mode {mode}"
        )));
    }
    let snapshot = snapshot_of(&to).map_err(embedded)?;
    to.close().map_err(|(_, e)| embedded(e))?;
    Ok(snapshot)
}

/// The counts and document records of the database of `conn`.
fn snapshot_of(conn: &Connection) -> rusqlite::Result<SqliteSnapshot> {
    let mut counts = BTreeMap::new();
    for table in COUNTED {
        let n: i64 = conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))?;
        counts.insert(table, n);
    }
    let mut statement = conn.prepare(
        "SELECT storage_key, iif(sha256 IS NULL, NULL, lower(hex(sha256))), size FROM documents \
         ORDER BY storage_key",
    )?;
    let documents = statement
        .query_map([], |r| {
            Ok(SnapshotDocument {
                storage_key: r.get(0)?,
                sha256: r.get(1)?,
                size: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(SqliteSnapshot { counts, documents })
}

//! SQLite case creates in one go on a blocking thread, through rusqlite.
//!
//! sqlx hands every statement of a transaction to its connection's worker thread and waits for
//! the answer; a tax create (begin, company, case, two documents, history, webhook targets,
//! commit) paid for eight such round trips, a large share of the server's CPU under create
//! load (ADR 0008). Here the whole transaction runs on one blocking-pool thread with one hand-off. The
//! statements are the ones in `sql/text.rs`, bound with the encodings sqlx
//! uses for SQLite (ids as 16-byte blobs, timestamps as RFC 3339 text, JSON as text), so both
//! paths write identical rows (`tests.rs` compares them) and everything else reads them through sqlx.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use domain::lifecycle::Lifecycle as _;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, ToSql, TransactionBehavior};

use crate::new_case::NewCase;
use crate::rows::rfc3339;
use crate::sql::events::{EventTarget, event_messages, has_events};
use crate::sql::text::{
    COMPLETE_CLAIM, INSERT_CLIENT_COMPANY, INSERT_DOCUMENT, INSERT_EVENT, INSERT_HISTORY,
    INSERT_TAX, INSERT_TRADE, INSERT_WEBHOOK_MESSAGE, event_targets_query,
};
use crate::{DocumentRecord, IdempotentAnswer, NewClientCompany, Result, StatusChange, StoreError};

/// The one read-write rusqlite connection (opened on first use, and again after a failure).
/// Callers hold the sqlx writer's only connection while they use it, so it never competes with
/// the sqlx writes for SQLite's write lock.
pub(super) struct DirectWriter {
    path: PathBuf,
    busy_timeout: Duration,
    conn: Mutex<Option<Connection>>,
    /// Transactions committed, for tests of the grouping.
    #[cfg(test)]
    commits: std::sync::atomic::AtomicUsize,
}

impl DirectWriter {
    pub(super) fn new(path: PathBuf, busy_timeout: Duration) -> Self {
        Self {
            path,
            busy_timeout,
            conn: Mutex::new(None),
            #[cfg(test)]
            commits: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// The same settings as the sqlx connections (`SqliteRepository::connect`): a write the
    /// API acknowledged survives a power loss (`synchronous = FULL`; the WAL journal mode is
    /// the database file's own), foreign keys are enforced.
    fn open(&self) -> rusqlite::Result<Connection> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(self.busy_timeout)?;
        conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")?;
        Ok(conn)
    }

    /// Writes the case in one transaction (blocking: call it on a blocking thread). A failed
    /// write rolls back; after any failure but a refused write (conflict, lost claim) the
    /// connection is closed and the next create opens a fresh one.
    fn create(&self, case: &NewCase) -> Result<()> {
        self.with_conn(|conn| write_case(conn, case))
    }

    /// Writes the cases in one transaction, each in a savepoint of its own, and hands each
    /// case's outcome to `answer` (with its index) as soon as it is final (blocking). A refused
    /// case (conflict, lost claim) is rolled back to its savepoint and the others go on; one
    /// commit (one WAL `fsync`) covers the rest.
    ///
    /// When the group fails as a whole, nothing of it was written:
    /// - because the database cannot write now (busy past the busy timeout, read-only, full, an
    ///   I/O error: [`StoreError::Unavailable`]), every case gets that answer at once; trying
    ///   each again would only wait out the busy timeout once per case;
    /// - otherwise (one case broke a CHECK, say, or the writing panicked), each case is written
    ///   again in a transaction of its own and answered right after it, so that no case fails
    ///   for another's and no committed case waits for a later one. A case whose writing panics
    ///   is answered [`StoreError::Corrupt`].
    pub(super) fn create_all(&self, cases: &[&NewCase], mut answer: impl FnMut(usize, Result<()>)) {
        if cases.len() > 1 {
            let group = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.with_conn(|conn| write_batch(conn, cases))
            }));
            match group {
                Ok(Ok(outcomes)) => {
                    for (i, outcome) in outcomes.into_iter().enumerate() {
                        answer(i, outcome);
                    }
                    return;
                }
                Ok(Err(StoreError::Unavailable(why))) => {
                    for i in 0..cases.len() {
                        answer(i, Err(StoreError::Unavailable(why.clone())));
                    }
                    return;
                }
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, cases = cases.len(), "a group of creates failed; writing them one by one");
                }
                Err(_) => {
                    tracing::error!(
                        cases = cases.len(),
                        "writing a group of creates panicked; writing them one by one"
                    );
                }
            }
        }
        for (i, case) in cases.iter().enumerate() {
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.create(case)))
                    .unwrap_or_else(|_| {
                        Err(StoreError::Corrupt("writing the case panicked".into()))
                    });
            answer(i, outcome);
        }
    }

    /// Runs `write` on the connection (opened when there is none). After any failure but a
    /// refused write the connection is closed and the next write opens a fresh one.
    fn with_conn<T>(&self, write: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        let mut slot = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(self.open().map_err(store_error)?);
        }
        let Some(conn) = slot.as_mut() else {
            unreachable!("opened above")
        };
        let out = write(conn);
        #[cfg(test)]
        if out.is_ok() {
            self.commits
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        if matches!(
            out,
            Err(StoreError::Unavailable(_) | StoreError::Embedded(_) | StoreError::Corrupt(_))
        ) {
            *slot = None;
        }
        out
    }

    /// Transactions committed so far.
    #[cfg(test)]
    pub(super) fn commits(&self) -> usize {
        self.commits.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The connection's `(synchronous, foreign_keys)` settings, for tests.
    #[cfg(test)]
    pub(super) fn settings(&self) -> (i64, i64) {
        let conn = self.open().unwrap();
        let get = |p: &str| {
            conn.query_row(&format!("PRAGMA {p}"), [], |r| r.get(0))
                .unwrap()
        };
        (get("synchronous"), get("foreign_keys"))
    }
}

/// One case in one transaction.
fn write_case(conn: &mut Connection, case: &NewCase) -> Result<()> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(store_error)?;
    insert_case(&tx, case)?;
    tx.commit().map_err(store_error)
}

/// The cases in one transaction, each in a savepoint; `Err` when the transaction as a whole
/// failed (then nothing of it is written).
fn write_batch(conn: &mut Connection, cases: &[&NewCase]) -> Result<Vec<Result<()>>> {
    let mut tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(store_error)?;
    let mut outcomes = Vec::with_capacity(cases.len());
    for case in cases {
        let savepoint = tx.savepoint().map_err(store_error)?;
        match insert_case(&savepoint, case) {
            Ok(()) => {
                savepoint.commit().map_err(store_error)?;
                outcomes.push(Ok(()));
            }
            Err(e @ (StoreError::Conflict(_) | StoreError::IdempotencyClaimLost)) => {
                savepoint.finish().map_err(store_error)?;
                outcomes.push(Err(e));
            }
            Err(e) => return Err(e),
        }
    }
    tx.commit().map_err(store_error)?;
    Ok(outcomes)
}

/// The statements of one case (the caller holds the transaction).
fn insert_case(tx: &Connection, case: &NewCase) -> Result<()> {
    let c = case.common();
    let record = json(c.record)?;
    let at = rfc3339(c.created_at)?;
    insert_company(tx, c.new_company, c.created_at)?;
    match case {
        NewCase::Trade(t) => {
            let office = t.trade_office.as_ref().map(json).transpose()?;
            let candidates = t.trade_office_candidates.as_ref().map(json).transpose()?;
            let args: [&dyn ToSql; 12] = [
                &uuid(&t.id),
                &uuid(&t.company_id),
                &uuid(&t.provider_id),
                &t.environment.as_str(),
                &t.package.as_str(),
                &t.status.as_str(),
                &record,
                &t.price_cents,
                &false,
                &office,
                &candidates,
                &at,
            ];
            execute(tx, INSERT_TRADE, &args)?;
        }
        NewCase::Tax(t) => {
            let lookup = t.tax_office_lookup.as_ref().map(json).transpose()?;
            let list_key = uuid::Uuid::now_v7();
            let args: [&dyn ToSql; 13] = [
                &uuid(&t.id),
                &uuid(&t.company_id),
                &uuid(&t.provider_id),
                &t.environment.as_str(),
                &t.package.as_str(),
                &t.legal_form.as_str(),
                &t.status.as_str(),
                &record,
                &t.tax_office_number,
                &lookup,
                &at,
                &uuid(&list_key),
                &uuid(&t.public_id),
            ];
            execute(tx, INSERT_TAX, &args)?;
        }
    }
    insert_documents(tx, c.documents)?;
    insert_history(tx, c.id, c.kind, c.history)?;
    emit_events(tx, c.id, c.kind, c.history)?;
    complete_claim(tx, c.idempotency)?;
    Ok(())
}

fn insert_company(
    tx: &Connection,
    company: Option<&(uuid::Uuid, NewClientCompany)>,
    created_at: time::OffsetDateTime,
) -> Result<()> {
    let Some((id, c)) = company else {
        return Ok(());
    };
    let address = c.business_address.as_ref().map(json).transpose()?;
    let args: [&dyn ToSql; 8] = [
        &uuid(id),
        &c.name,
        &uuid(&c.provider_id),
        &c.environment.as_str(),
        &c.legal_form,
        &c.registration_number,
        &address,
        &rfc3339(created_at)?,
    ];
    execute(tx, INSERT_CLIENT_COMPANY, &args).map(drop)
}

fn insert_documents(tx: &Connection, documents: &[DocumentRecord]) -> Result<()> {
    for d in documents {
        let args: [&dyn ToSql; 11] = [
            &uuid(&d.id),
            &uuid(&d.case_id),
            &d.case_kind.as_str(),
            &d.owner_index,
            &d.doc_type.as_str(),
            &d.name,
            &d.storage_key,
            &d.content_type,
            &d.size,
            &d.sha256,
            &rfc3339(d.created_at)?,
        ];
        execute(tx, INSERT_DOCUMENT, &args)?;
    }
    Ok(())
}

fn insert_history(
    tx: &Connection,
    case_id: uuid::Uuid,
    kind: crate::CaseKind,
    history: &[StatusChange],
) -> Result<()> {
    for h in history {
        let actor = h.actor.to_string();
        let args: [&dyn ToSql; 7] = [
            &uuid(&case_id),
            &kind.as_str(),
            &h.status.as_str(),
            &h.previous_status.map(|s| s.as_str()),
            &actor,
            &h.reason,
            &rfc3339(h.at)?,
        ];
        execute(tx, INSERT_HISTORY, &args)?;
    }
    Ok(())
}

/// The outbox, as `Shared::insert_children` writes it through sqlx.
fn emit_events(
    tx: &Connection,
    case_id: uuid::Uuid,
    kind: crate::CaseKind,
    history: &[StatusChange],
) -> Result<()> {
    if !has_events(history) {
        return Ok(());
    }
    let mut statement = tx
        .prepare_cached(event_targets_query(kind))
        .map_err(store_error)?;
    statement
        .raw_bind_parameter("$1", uuid(&case_id))
        .map_err(store_error)?;
    let mut rows = statement.raw_query();
    let mut targets = Vec::new();
    while let Some(row) = rows.next().map_err(store_error)? {
        let corrupt =
            |what: &str| StoreError::Corrupt(format!("webhook target of {case_id}: {what}"));
        let text = |name: &str| -> Result<Option<String>> {
            match row.get_ref(name).map_err(store_error)? {
                ValueRef::Null => Ok(None),
                ValueRef::Text(t) => Ok(Some(String::from_utf8_lossy(t).into_owned())),
                _ => Err(corrupt(name)),
            }
        };
        let id = |name: &str| -> Result<uuid::Uuid> {
            match row.get_ref(name).map_err(store_error)? {
                ValueRef::Blob(b) => uuid::Uuid::from_slice(b).map_err(|_| corrupt(name)),
                _ => Err(corrupt(name)),
            }
        };
        let events = text("events")?
            .map(|t| serde_json::from_str::<Vec<String>>(&t).map_err(|_| corrupt("events")))
            .transpose()?;
        let endpoint_id = match row.get_ref("endpoint_id").map_err(store_error)? {
            ValueRef::Null => None,
            _ => Some(id("endpoint_id")?),
        };
        targets.push(EventTarget {
            case_public_id: id("public_id")?,
            provider_id: id("provider_id")?,
            endpoint_id,
            events,
            company_id: id("company_id")?,
            status: crate::rows::case_status(
                kind,
                &text("status")?.ok_or_else(|| corrupt("status"))?,
            )?,
            environment: text("environment")?.ok_or_else(|| corrupt("environment"))?,
            client_reference: text("client_reference")?,
        });
    }
    drop(rows);
    drop(statement);
    let events = event_messages(history, &targets);
    for e in &events.logged {
        let args: [&dyn ToSql; 8] = [
            &uuid(&e.id),
            &uuid(&e.provider_id),
            &uuid(&e.company_id),
            &uuid(&e.case_public_id),
            &e.environment,
            &e.event_type,
            &e.body,
            &rfc3339(e.at)?,
        ];
        execute(tx, INSERT_EVENT, &args)?;
    }
    for m in &events.messages {
        let args: [&dyn ToSql; 7] = [
            &uuid(&m.id),
            &uuid(&m.endpoint_id),
            &uuid(&case_id),
            &m.event_type,
            &m.body,
            &m.next_attempt_us,
            &rfc3339(m.at)?,
        ];
        execute(tx, INSERT_WEBHOOK_MESSAGE, &args)?;
    }
    Ok(())
}

fn complete_claim(tx: &Connection, answer: Option<&IdempotentAnswer>) -> Result<()> {
    let Some(a) = answer else {
        return Ok(());
    };
    let args: [&dyn ToSql; 4] = [&i32::from(a.status), &a.body, &uuid(&a.scope), &a.key];
    if execute(tx, COMPLETE_CLAIM, &args)? != 1 {
        return Err(StoreError::IdempotencyClaimLost);
    }
    Ok(())
}

/// Runs `sql` with `args` bound to `$1`, `$2`, ... (by name, as sqlx binds them) and answers
/// the number of rows changed.
fn execute(tx: &Connection, sql: &str, args: &[&dyn ToSql]) -> Result<usize> {
    const NAMES: [&str; 16] = [
        "$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$9", "$10", "$11", "$12", "$13", "$14",
        "$15", "$16",
    ];
    let mut statement = tx.prepare_cached(sql).map_err(store_error)?;
    for (name, value) in NAMES.iter().zip(args) {
        statement
            .raw_bind_parameter(*name, value)
            .map_err(store_error)?;
    }
    statement.raw_execute().map_err(store_error)
}

/// An id as sqlx stores it in SQLite: its 16 bytes.
fn uuid(id: &uuid::Uuid) -> &[u8] {
    id.as_bytes().as_slice()
}

/// JSON as sqlx stores it in SQLite (`Json<T>`): its compact text.
fn json(value: &serde_json::Value) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(format!("JSON: {e}")))
}

/// The same classification as `From<sqlx::Error>`: unique, primary-key and foreign-key
/// violations are conflicts (named by SQLite's message, as sqlx names them), the result codes
/// of [`crate::sqlite_unavailable`] are unavailability.
pub(crate) fn store_error(e: rusqlite::Error) -> StoreError {
    const SQLITE_CONSTRAINT_FOREIGNKEY: i32 = 787;
    const SQLITE_CONSTRAINT_PRIMARYKEY: i32 = 1555;
    const SQLITE_CONSTRAINT_UNIQUE: i32 = 2067;
    match &e {
        rusqlite::Error::SqliteFailure(f, message)
            if matches!(
                f.extended_code,
                SQLITE_CONSTRAINT_FOREIGNKEY
                    | SQLITE_CONSTRAINT_PRIMARYKEY
                    | SQLITE_CONSTRAINT_UNIQUE
            ) =>
        {
            StoreError::Conflict(message.clone().unwrap_or_else(|| e.to_string()))
        }
        rusqlite::Error::SqliteFailure(f, _) if crate::sqlite_unavailable(f.extended_code) => {
            StoreError::Unavailable(e.to_string())
        }
        _ => StoreError::Embedded(e),
    }
}

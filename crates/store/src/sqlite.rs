//! The embedded default: one SQLite file in write-ahead-log mode.

use std::str::FromStr;

use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::{PoolSettings, Result, StoreError, TradeRegistrationRecord};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// SQLite lets one connection write at a time. Writers that race for that lock back off and
/// sleep (the busy timeout), which under load turned into second-long stalls; so every write
/// goes through one connection of its own (`writer`), where they queue in order, and reads use
/// the other pool, which in WAL mode never waits for the writer.
///
/// sqlx runs each SQLite connection on a thread of its own and hands every statement over a
/// channel; for the hottest read (a trade registration, one statement of ~50 µs) the hand-off
/// and the wake-ups cost more CPU than the query (37 % of the server's CPU under GET load). That
/// read is therefore made on the calling thread through `readers` (rusqlite on the same SQLite
/// library), which cannot wait: a reader that would have to (`SQLITE_BUSY`, rare in WAL mode)
/// gives way to the pool.
pub struct SqliteRepository {
    pool: SqlitePool,
    writer: SqlitePool,
    readers: Option<Readers>,
}

/// Read-only connections used synchronously, at most `MAX_IDLE` kept; `None` for an in-memory
/// database, which another connection could not see.
struct Readers {
    path: std::path::PathBuf,
    idle: std::sync::Mutex<Vec<rusqlite::Connection>>,
}

impl Readers {
    const MAX_IDLE: usize = 8;

    fn open(&self) -> rusqlite::Result<rusqlite::Connection> {
        use rusqlite::OpenFlags;
        let conn = rusqlite::Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // Never sleep on the calling (async) thread: busy means "use the pool".
        conn.busy_timeout(std::time::Duration::ZERO)?;
        Ok(conn)
    }

    /// Runs `f` on an idle connection (opened when none is idle) and puts it back.
    fn with<T>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let taken = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match taken {
            Some(c) => c,
            None => self.open()?,
        };
        let out = f(&conn);
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < Self::MAX_IDLE {
            idle.push(conn);
        }
        out
    }
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
            .connect_with(options.clone())
            .await?;
        let path = options.get_filename();
        let readers = (!path.as_os_str().is_empty() && path != std::path::Path::new(":memory:"))
            .then(|| Readers {
                path: path.to_path_buf(),
                idle: std::sync::Mutex::new(Vec::new()),
            });
        Ok(Self {
            pool,
            writer,
            readers,
        })
    }

    /// A trade registration read on the calling thread; `None` when this cannot be done now
    /// (no readers, or the database is busy), and the caller reads through the pool.
    fn trade_on_thread(&self, id: uuid::Uuid) -> Option<Result<Option<TradeRegistrationRecord>>> {
        self.readers.as_ref()?.trade(id)
    }
}

impl Readers {
    /// See [`SqliteRepository::trade_on_thread`].
    fn trade(&self, id: uuid::Uuid) -> Option<Result<Option<TradeRegistrationRecord>>> {
        match self.with(|conn| {
            let mut statement = conn.prepare_cached(SqliteRepository::TRADE_SELECT)?;
            let mut rows = statement.query([id.as_bytes().as_slice()])?;
            match rows.next()? {
                Some(row) => Ok(Some(trade_from_row(row, id))),
                None => Ok(None),
            }
        }) {
            Ok(Some(decoded)) => Some(decoded.map(Some)),
            Ok(None) => Some(Ok(None)),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) =>
            {
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, "on-thread SQLite read failed; reading through the pool");
                None
            }
        }
    }
}

/// Decodes a row of `TRADE_SELECT` as sqlx stores it in SQLite: ids as 16-byte blobs,
/// timestamps as RFC 3339 text, JSON as text.
fn trade_from_row(row: &rusqlite::Row<'_>, id: uuid::Uuid) -> Result<TradeRegistrationRecord> {
    use rusqlite::types::ValueRef;
    let corrupt = |what: &str, e: &dyn std::fmt::Display| {
        StoreError::Corrupt(format!("trade registration {id}: {what}: {e}"))
    };
    let get = |name: &str| row.get_ref(name).map_err(|e| corrupt(name, &e));
    let uuid = |name: &str| -> Result<uuid::Uuid> {
        match get(name)? {
            ValueRef::Blob(b) => uuid::Uuid::from_slice(b).map_err(|e| corrupt(name, &e)),
            other => Err(corrupt(name, &format!("{:?}", other.data_type()))),
        }
    };
    let text = |name: &str| -> Result<Option<&str>> {
        match get(name)? {
            ValueRef::Null => Ok(None),
            ValueRef::Text(t) | ValueRef::Blob(t) => std::str::from_utf8(t)
                .map(Some)
                .map_err(|e| corrupt(name, &e)),
            other => Err(corrupt(name, &format!("{:?}", other.data_type()))),
        }
    };
    let required =
        |name: &str| -> Result<&str> { text(name)?.ok_or_else(|| corrupt(name, &"NULL")) };
    let json = |name: &str| -> Result<Option<serde_json::Value>> {
        text(name)?
            .map(|t| serde_json::from_str(t).map_err(|e| corrupt(name, &e)))
            .transpose()
    };
    let int = |name: &str| -> Result<Option<i64>> {
        match get(name)? {
            ValueRef::Null => Ok(None),
            ValueRef::Integer(i) => Ok(Some(i)),
            other => Err(corrupt(name, &format!("{:?}", other.data_type()))),
        }
    };
    let environment = required("environment")?;
    Ok(TradeRegistrationRecord {
        id: uuid("id")?,
        company_id: uuid("company_id")?,
        provider_id: uuid("provider_id")?,
        environment: domain::company::Environment::parse(environment)
            .ok_or_else(|| corrupt("environment", &environment))?,
        package: required("package")?.to_string(),
        status: required("status")?.to_string(),
        record: json("record")?.ok_or_else(|| corrupt("record", &"NULL"))?,
        price_cents: int("price_cents")?.ok_or_else(|| corrupt("price_cents", &"NULL"))?,
        city_fee_cents: int("city_fee_cents")?,
        is_paid: int("is_paid")?.ok_or_else(|| corrupt("is_paid", &"NULL"))? != 0,
        trade_office: json("trade_office")?,
        trade_office_candidates: json("trade_office_candidates")?,
        source_product: text("source_product")?.map(str::to_string),
        created_at: crate::shared::timestamp(required("created_at")?)?,
        company_name: text("company_name")?.map(str::to_string),
        company_legal_form: text("company_legal_form")?.map(str::to_string),
        documents: crate::shared::documents_from_json(required("documents_json")?, id)?,
        history: crate::shared::history_from_json(required("history_json")?)?,
        identity_verifications: crate::shared::verifications_from_json(required("verified_json")?)?,
    })
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

#[cfg(test)]
mod tests {
    use serde_json::json;
    use uuid::Uuid;

    use super::*;
    use crate::{DocumentRecord, NewClientCompany, NewTradeRegistration, Repository, StatusChange};

    fn micros(t: time::OffsetDateTime) -> time::OffsetDateTime {
        t.replace_nanosecond(t.nanosecond() / 1000 * 1000).unwrap()
    }

    /// The on-thread read decodes every column exactly as the pooled (sqlx) read does, sees
    /// writes committed after its connection was opened, and answers `None` for a missing id.
    #[tokio::test]
    async fn on_thread_read_matches_the_pooled_read() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let repo = SqliteRepository::connect(&url, PoolSettings::default())
            .await
            .unwrap();
        assert!(repo.readers.is_some());
        let provider = repo.create_provider("P").await.unwrap().id;
        let (id, company) = (Uuid::now_v7(), Uuid::now_v7());
        let now = micros(time::OffsetDateTime::now_utc());
        let document = |doc_type: &str, owner: i32, rendered: bool| DocumentRecord {
            id: Uuid::now_v7(),
            case_id: id,
            case_kind: "trade".into(),
            owner_index: Some(owner),
            doc_type: doc_type.into(),
            name: format!("{doc_type} - Jürgen \"Ł\" Ωmega.pdf"),
            storage_key: format!("trade/{id}/{doc_type}-{owner}.pdf"),
            content_type: "application/pdf".into(),
            size: rendered.then_some(1234),
            sha256: rendered.then(|| vec![0xab; 32]),
            created_at: now,
        };
        let new = NewTradeRegistration {
            id,
            new_company: Some((
                company,
                NewClientCompany {
                    provider_id: provider,
                    name: "Müller & Söhne GmbH".into(),
                    environment: domain::company::Environment::Sandbox,
                    legal_form: Some("gmbh".into()),
                    registration_number: None,
                    business_address: Some(json!({"zip": "10115", "city": "Berlin"})),
                },
            )),
            company_id: company,
            provider_id: provider,
            environment: domain::company::Environment::Sandbox,
            package: "assisted".into(),
            status: "submitted".into(),
            record: json!({"name": "Müller", "owners": [{"first_name": "Ærøskøbing\u{0301}"}], "n": 1.5}),
            price_cents: 4900,
            trade_office: Some(json!({"key": "11000000", "name": "Berlin"})),
            trade_office_candidates: Some(json!([{"key": "1"}, {"key": "2"}])),
            created_at: now,
            documents: vec![
                document("trade-licence-application", 0, true),
                document("power-of-attorney", 0, false),
            ],
            history: vec![StatusChange {
                status: "submitted".into(),
                previous_status: None,
                actor: format!("provider:{provider}"),
                reason: Some("with \"quotes\"".into()),
                at: now,
            }],
            idempotency: None,
        };
        // A reader connection exists before the write: it must still see the new case.
        assert!(matches!(repo.trade_on_thread(id), Some(Ok(None))));
        repo.create_trade_registration(&new).await.unwrap();
        repo.verify_identity(id, 0, micros(time::OffsetDateTime::now_utc()), "operator:x")
            .await
            .unwrap();

        let on_thread = repo.trade_on_thread(id).expect("answered").unwrap();
        let pooled = repo.trade_pooled(id).await.unwrap();
        assert!(on_thread.is_some());
        assert_eq!(on_thread, pooled);
        let record = on_thread.unwrap();
        assert_eq!(record.identity_verifications.len(), 1);
        assert_eq!(record.documents.len(), 2);
        assert_eq!(record.company_name.as_deref(), Some("Müller & Söhne GmbH"));
        // And through the trait, which takes the on-thread path.
        assert_eq!(repo.get_trade_registration(id).await.unwrap(), pooled);
    }

    /// A database another connection holds exclusively (rollback-journal locking): the
    /// on-thread read does not wait but gives way (`None`), and reads again once it is free.
    #[tokio::test]
    async fn a_busy_database_sends_the_read_to_the_pool() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let url = format!("sqlite://{}", path.display());
        let repo = SqliteRepository::connect(&url, PoolSettings::default())
            .await
            .unwrap();
        repo.pool.close().await;
        repo.writer.close().await;
        let readers = Readers {
            path: path.clone(),
            idle: std::sync::Mutex::new(Vec::new()),
        };
        let id = Uuid::now_v7();
        let blocker = rusqlite::Connection::open(&path).unwrap();
        blocker
            .execute_batch(
                "PRAGMA journal_mode = DELETE; PRAGMA locking_mode = EXCLUSIVE; \
                 BEGIN EXCLUSIVE; DELETE FROM companies;",
            )
            .unwrap();
        let started = std::time::Instant::now();
        let answered = readers.trade(id);
        assert!(answered.is_none(), "did not give way: {answered:?}");
        assert!(
            started.elapsed() < std::time::Duration::from_millis(500),
            "waited"
        );
        drop(blocker);
        assert!(matches!(readers.trade(id), Some(Ok(None))));
    }
}

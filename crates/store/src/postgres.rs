//! PostgreSQL, for several instances behind a load balancer.

use std::str::FromStr;

use futures::future::BoxFuture;
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::{PoolSettings, Result, StoreError};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

pub struct PostgresRepository {
    pool: PgPool,
    /// The same pool: PostgreSQL has no single-writer lock to queue for (see `sqlite.rs`).
    writer: PgPool,
    /// Connections of their own for single-statement reads, without sqlx's pings.
    readers: ReadConnections,
    /// Creates as one statement (`postgres_create.rs`); tests turn it off to compare with the
    /// sqlx transaction.
    one_statement: bool,
}

/// Connections for reads of one statement (a case, a document, a key), kept outside sqlx's
/// pool: the pool pings a connection before handing it out and again, in a task of its own, when
/// it comes back, so a read through it costs three round trips to PostgreSQL instead of one
/// (ADR 0011: under GET load those round trips were most of the context switches).
///
/// Without a ping, a connection that died while idle (the server restarted, the network dropped
/// it) is found out by the read itself: a read that fails that way on a reused connection runs
/// again once on a newly opened one, which reads may (they change nothing). A read cancelled
/// midway drops its connection. Like the pool, connections are replaced after
/// [`Self::MAX_IDLE`] unused or [`Self::MAX_LIFETIME`] in all (so reads follow a failover), and
/// connecting is retried while the server refuses (restarting, too many connections).
///
/// Waiting for a connection, connecting and the statement together are bounded by the pool's
/// acquire timeout; past it the read is [`StoreError::Unavailable`]. The same bound is each
/// connection's `statement_timeout` and `lock_timeout`, so a read given up on here does not keep
/// a backend waiting (a lock held by a migration, say) while a new one takes its slot.
pub(crate) struct ReadConnections {
    options: PgConnectOptions,
    idle: std::sync::Mutex<Vec<Idle>>,
    /// At most this many connections exist (idle or in use).
    slots: tokio::sync::Semaphore,
    timeout: std::time::Duration,
}

/// An idle read connection and its age.
struct Idle {
    conn: sqlx::PgConnection,
    opened: std::time::Instant,
    since: std::time::Instant,
}

impl ReadConnections {
    /// Connections per instance, beside the pool's 16: two cores keep no more than a few
    /// statements in flight.
    const MAX: usize = 8;
    /// sqlx's pool defaults.
    const MAX_IDLE: std::time::Duration = std::time::Duration::from_secs(10 * 60);
    const MAX_LIFETIME: std::time::Duration = std::time::Duration::from_secs(30 * 60);

    fn new(options: PgConnectOptions, timeout: std::time::Duration) -> Self {
        let millis = timeout.as_millis().max(1).to_string();
        let options = options.options([
            ("statement_timeout", millis.as_str()),
            ("lock_timeout", millis.as_str()),
        ]);
        Self {
            options,
            idle: std::sync::Mutex::new(Vec::new()),
            slots: tokio::sync::Semaphore::new(Self::MAX),
            timeout,
        }
    }

    /// The most recently used idle connection that is not too old (older ones are closed).
    fn take_idle(&self) -> Option<(sqlx::PgConnection, std::time::Instant)> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(i) = idle.pop() {
            if i.since.elapsed() < Self::MAX_IDLE && i.opened.elapsed() < Self::MAX_LIFETIME {
                return Some((i.conn, i.opened));
            }
        }
        None
    }

    fn put_back(&self, conn: sqlx::PgConnection, opened: std::time::Instant) {
        self.idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Idle {
                conn,
                opened,
                since: std::time::Instant::now(),
            });
    }

    /// A new connection; while the server refuses them (starting, restarting, at its
    /// connection limit), tried again after 10 ms, 20 ms, ... up to 1 s apart, until the caller's
    /// timeout ends the wait.
    async fn connect(&self) -> sqlx::Result<sqlx::PgConnection> {
        use sqlx::Connection;
        let mut pause = std::time::Duration::from_millis(10);
        loop {
            match sqlx::PgConnection::connect_with(&self.options).await {
                Err(e) if refused_for_now(&e) => {
                    tracing::debug!(error = %e, "PostgreSQL refused a read connection; trying again");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(std::time::Duration::from_secs(1));
                }
                done => return done,
            }
        }
    }

    /// Runs `read` (one statement, no writes) on a connection of its own; see the type.
    pub(crate) async fn run<T>(
        &self,
        read: impl for<'c> Fn(&'c mut sqlx::PgConnection) -> BoxFuture<'c, sqlx::Result<T>>,
    ) -> Result<T> {
        let work = async {
            let _slot = self
                .slots
                .acquire()
                .await
                .map_err(|_| StoreError::Unavailable("read connections closed".into()))?;
            let mut retried = false;
            loop {
                // The second attempt takes a new connection: the other idle ones may have died
                // with the first (a server restart ends them all).
                let idle = if retried { None } else { self.take_idle() };
                let (mut conn, opened, reused) = match idle {
                    Some((conn, opened)) => (conn, opened, true),
                    None => (self.connect().await?, std::time::Instant::now(), false),
                };
                match read(&mut conn).await {
                    Ok(value) => {
                        self.put_back(conn, opened);
                        return Ok(value);
                    }
                    Err(e) if connection_lost(&e) => {
                        drop(conn);
                        if reused && !retried {
                            retried = true;
                            tracing::debug!(error = %e, "idle read connection was lost; reading again on a new one");
                            continue;
                        }
                        return Err(e.into());
                    }
                    Err(e) => {
                        self.put_back(conn, opened);
                        return Err(e.into());
                    }
                }
            }
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(done) => done,
            Err(_) => Err(StoreError::Unavailable(format!(
                "no answer from PostgreSQL within {:?}",
                self.timeout
            ))),
        }
    }
}

/// A database error as PostgreSQL's, if it is one.
fn pg_error(e: &sqlx::Error) -> Option<&sqlx::postgres::PgDatabaseError> {
    match e {
        sqlx::Error::Database(db) => db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>(),
        _ => None,
    }
}

/// Whether an error means the connection is gone (as opposed to a statement that failed on a
/// working connection): I/O, TLS and protocol errors, SQLSTATE class 08, and any error of
/// severity `FATAL` or `PANIC` (the server ended the session: shutdown `57P01`..`57P03`, idle
/// session timeout `57P05`, a terminated backend, ...).
fn connection_lost(e: &sqlx::Error) -> bool {
    use sqlx::postgres::PgSeverity;
    match e {
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::Protocol(_) => true,
        _ => pg_error(e).is_some_and(|db| {
            db.code().starts_with("08")
                || matches!(db.severity(), PgSeverity::Fatal | PgSeverity::Panic)
        }),
    }
}

/// Whether a failed connect is worth trying again shortly, as sqlx's pool does: refused or reset
/// (the server is not listening yet), too many connections (`53300`), starting up (`57P03`).
fn refused_for_now(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(io) => matches!(
            io.kind(),
            std::io::ErrorKind::ConnectionRefused
                | std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::ConnectionAborted
        ),
        _ => pg_error(e).is_some_and(|db| matches!(db.code(), "53300" | "57P03")),
    }
}

impl PostgresRepository {
    /// Rewrites the JSON copies of these cases' children (`case_children`, migration 0010)
    /// from the child tables as this transaction sees them. Every transaction that changes a
    /// case's history, documents or identity verifications ends with it.
    pub(crate) async fn refresh_children(
        tx: &mut sqlx::PgConnection,
        cases: &[uuid::Uuid],
    ) -> Result<()> {
        sqlx::query("SELECT refresh_case_children($1::uuid[])")
            .bind(cases)
            .execute(tx)
            .await?;
        Ok(())
    }

    /// Writes the JSON copies of a new case's children (`case_children`), built here from what
    /// the create inserts: cheaper than `refresh_children`'s aggregates, which cost creates a
    /// share of their rate (ADR 0010). A unit test checks that both give the same arrays.
    pub(crate) async fn children_created(
        tx: &mut sqlx::PgConnection,
        case: uuid::Uuid,
        documents: &[crate::DocumentRecord],
        history: &[crate::StatusChange],
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO case_children (case_id, history_json, documents_json, verified_json) \
             VALUES ($1, $2, $3, '[]')",
        )
        .bind(case)
        .bind(crate::shared::history_to_json(history)?)
        .bind(crate::shared::documents_to_json(documents)?)
        .execute(tx)
        .await?;
        Ok(())
    }

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
            .max_connections(settings.max_connections.max(1))
            .acquire_timeout(settings.acquire_timeout)
            .test_before_acquire(true)
            .connect_with(options.clone())
            .await?;
        MIGRATOR.run(&pool).await?;
        Ok(Self {
            writer: pool.clone(),
            pool,
            readers: ReadConnections::new(options, settings.acquire_timeout),
            one_statement: true,
        })
    }

    /// Runs a read of one statement on a connection outside the pool ([`ReadConnections`]).
    pub(crate) async fn read<T>(
        &self,
        read: impl for<'c> Fn(&'c mut sqlx::PgConnection) -> BoxFuture<'c, sqlx::Result<T>>,
    ) -> Result<T> {
        self.readers.run(read).await
    }

    /// PostgreSQL reads always go through the pool (no on-thread path, see `sqlite.rs`).
    fn trade_on_thread(
        &self,
        _id: uuid::Uuid,
    ) -> Option<Result<Option<crate::TradeRegistrationRecord>>> {
        None
    }

    /// A PostgreSQL create is one statement (`postgres_create.rs`) instead of the sqlx
    /// transaction of `shared.rs`, which remains for comparison in tests (`one_statement`).
    async fn create_direct(
        &self,
        case: impl FnOnce() -> crate::new_case::NewCase,
    ) -> Option<Result<()>> {
        if !self.one_statement {
            return None;
        }
        Some(crate::postgres_create::create(self, &self.writer, &case()).await)
    }
}

// The children of a case (`t`) as JSON arrays in one statement (see `read_children!`): a copy
// kept in `case_children` (migration 0010, `refresh_children`) and joined by key, so a case read
// aggregates nothing. Three aggregate subqueries here cost more than the rest of the statement
// (ADR 0010).
repository_impl!(
    PostgresRepository,
    "postgres",
    "FOR UPDATE SKIP LOCKED",
    "k.history_json, k.documents_json",
    // Only trade cases have identity verifications.
    "k.verified_json",
    " LEFT JOIN case_children k ON k.case_id = t.id",
    {}
);

#[cfg(test)]
mod tests {
    use sqlx::{Connection, PgConnection};

    use super::*;
    use crate::Repository;

    /// A new database on the test server, and its URL; `None` without `TEST_DATABASE_URL`.
    async fn fresh_database() -> Option<(String, String, PgConnection)> {
        let Some(base) = std::env::var("TEST_DATABASE_URL")
            .ok()
            .filter(|s| !s.is_empty())
        else {
            eprintln!("TEST_DATABASE_URL is not set: skipped");
            return None;
        };
        // The process id lets the server tests drop it if this test dies before it does
        // (`drop_databases_of_ended_runs` in `crates/server/tests/common`).
        let name = format!(
            "filing_t_{}_{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        );
        let mut admin = sqlx::PgConnection::connect(&base).await.unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut admin)
            .await
            .unwrap();
        let url = format!(
            "{}/{name}",
            base.split('?').next().unwrap().rsplit_once('/').unwrap().0
        );
        Some((url, name, admin))
    }

    async fn drop_database(name: &str, mut admin: PgConnection) {
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
        )))
        .execute(&mut admin)
        .await
        .unwrap();
    }

    /// Every row of a table as JSON without the `random` columns, in a stable order.
    async fn rows(url: &str, table: &str, random: &[&str]) -> Vec<String> {
        let mut conn = PgConnection::connect(url).await.unwrap();
        let rows: Vec<(sqlx::types::Json<serde_json::Value>,)> = sqlx::query_as(
            sqlx::AssertSqlSafe(format!("SELECT to_jsonb(t) - $1::text[] FROM {table} t")),
        )
        .bind(random)
        .fetch_all(&mut conn)
        .await
        .unwrap();
        let mut rows: Vec<String> = rows.into_iter().map(|(r,)| r.0.to_string()).collect();
        rows.sort();
        rows
    }

    /// A create in one statement (`postgres_create.rs`) writes exactly the rows of the sqlx
    /// transaction (`shared.rs`): the company, the case, its documents, history and children,
    /// the outbox messages for the endpoints that subscribed, the completed claim. A claim that
    /// is no longer in flight writes nothing; a second case of a company is the company
    /// conflict. Needs `TEST_DATABASE_URL` (CI sets it).
    #[tokio::test]
    async fn one_statement_creates_write_the_rows_of_the_transaction() {
        use crate::sqlite::tests::{Sample, trade_case};
        use crate::{IdempotentAnswer, NewTradeRegistration, StoreError};
        let (Some((url_a, name_a, admin_a)), Some((url_b, name_b, admin_b))) =
            (fresh_database().await, fresh_database().await)
        else {
            return;
        };
        let one = PostgresRepository::connect(&url_a, PoolSettings::default())
            .await
            .unwrap();
        let mut sqlx_path = PostgresRepository::connect(&url_b, PoolSettings::default())
            .await
            .unwrap();
        sqlx_path.one_statement = false;
        // The same provider row in both.
        let provider = one.create_provider("Plattform «P»").await.unwrap().id;
        let (row,): (sqlx::types::Json<serde_json::Value>,) =
            sqlx::query_as("SELECT to_jsonb(c) FROM companies c WHERE id = $1")
                .bind(provider)
                .fetch_one(&one.pool)
                .await
                .unwrap();
        sqlx::query(
            "INSERT INTO companies SELECT * FROM jsonb_populate_record(NULL::companies, $1)",
        )
        .bind(row)
        .execute(&sqlx_path.pool)
        .await
        .unwrap();
        let sample = Sample::new(provider);
        sample.write(&one).await;
        sample.write(&sqlx_path).await;

        let tables: [(&str, &[&str]); 8] = [
            ("companies", &[]),
            ("trade_registrations", &[]),
            ("tax_registrations", &["list_key"]),
            ("documents", &[]),
            ("status_history", &[]),
            ("case_children", &[]),
            ("webhook_messages", &["id"]),
            ("idempotency_keys", &[]),
        ];
        for (table, random) in tables {
            let (a, b) = (
                rows(&url_a, table, random).await,
                rows(&url_b, table, random).await,
            );
            assert!(!a.is_empty(), "{table} is empty");
            assert_eq!(a, b, "{table}");
        }
        // The trade event for one endpoint, the tax event for both.
        assert_eq!(rows(&url_a, "webhook_messages", &[]).await.len(), 3);

        // Refusals write nothing, in any table.
        let mut before = Vec::new();
        for (table, _) in tables {
            before.push(rows(&url_a, table, &[]).await);
        }
        let lost = NewTradeRegistration {
            idempotency: Some(IdempotentAnswer {
                scope: provider,
                key: "never-claimed".into(),
                status: 201,
                body: vec![],
            }),
            ..trade_case(provider)
        };
        let e = one.create_trade_registration(&lost).await.unwrap_err();
        assert!(matches!(e, StoreError::IdempotencyClaimLost), "{e:?}");
        let second = NewTradeRegistration {
            id: uuid::Uuid::now_v7(),
            new_company: None,
            idempotency: None,
            ..sample.trade.clone()
        };
        let e = one.create_trade_registration(&second).await.unwrap_err();
        assert!(e.is_company_conflict(), "{e:?}");
        for ((table, _), before) in tables.iter().zip(&before) {
            assert_eq!(&rows(&url_a, table, &[]).await, before, "{table}");
        }
        assert_eq!(
            before[0].len(),
            3,
            "the provider and the two cases' companies"
        );

        drop((one, sqlx_path));
        drop_database(&name_a, admin_a).await;
        drop_database(&name_b, admin_b).await;
    }

    /// A create writes the children's JSON built in Rust (`children_created`); every later
    /// change rebuilds it in SQL (`refresh_case_children`). Both must give the same arrays, in
    /// the same order, or a case would read differently before and after its first transition.
    #[tokio::test]
    async fn children_json_of_a_create_matches_the_sql_refresh() {
        use crate::{DocumentRecord, NewTradeRegistration, StatusChange};
        let Some((url, name, admin)) = fresh_database().await else {
            return;
        };
        let repo = PostgresRepository::connect(&url, PoolSettings::default())
            .await
            .unwrap();
        let provider = repo.create_provider("P").await.unwrap().id;
        let id = uuid::Uuid::now_v7();
        let at = time::macros::datetime!(2026-03-04 05:06:07.123456 UTC);
        let doc = |owner: Option<i32>, doc_type: &str, at| {
            let doc_id = uuid::Uuid::now_v7();
            DocumentRecord {
                id: doc_id,
                case_id: id,
                case_kind: "trade".into(),
                owner_index: owner,
                doc_type: doc_type.into(),
                name: format!("Ä {doc_type} \"{owner:?}\".pdf"),
                storage_key: format!("trade/{id}/{doc_id}"),
                content_type: "application/pdf".into(),
                size: owner.map(i64::from),
                sha256: owner.map(|o| vec![o as u8, 0xab]),
                created_at: at,
            }
        };
        let later = at + time::Duration::microseconds(1);
        // Given out of order: the read orders by time, owner (none last) and type.
        let documents = vec![
            doc(Some(1), "trade-licence-application", at),
            doc(None, "uploaded", at),
            doc(Some(0), "power-of-attorney", later),
            doc(Some(0), "trade-licence-application", at),
            doc(Some(0), "power-of-attorney", at),
            doc(Some(0), "Z-upper", at),
        ];
        let history = vec![
            StatusChange {
                status: "initiated".into(),
                previous_status: None,
                actor: "provider:p".into(),
                reason: None,
                at,
            },
            StatusChange {
                status: "form-rendered".into(),
                previous_status: Some("initiated".into()),
                actor: "system".into(),
                reason: Some("\u{1F600} \n tab\t".into()),
                at: later,
            },
        ];
        let company = uuid::Uuid::now_v7();
        let new = NewTradeRegistration {
            id,
            new_company: Some((
                company,
                crate::NewClientCompany {
                    provider_id: provider,
                    name: "C".into(),
                    environment: domain::company::Environment::Sandbox,
                    legal_form: None,
                    registration_number: None,
                    business_address: None,
                },
            )),
            company_id: company,
            provider_id: provider,
            environment: domain::company::Environment::Sandbox,
            package: "self".into(),
            status: "form-rendered".into(),
            record: serde_json::json!({}),
            price_cents: 0,
            trade_office: None,
            trade_office_candidates: None,
            created_at: at,
            documents,
            history,
            idempotency: None,
        };
        repo.create_trade_registration(&new).await.unwrap();
        let created = repo.get_trade_registration(id).await.unwrap().unwrap();
        sqlx::query("SELECT refresh_case_children(ARRAY[$1::uuid])")
            .bind(id)
            .execute(&repo.pool)
            .await
            .unwrap();
        let refreshed = repo.get_trade_registration(id).await.unwrap().unwrap();
        assert_eq!(created.documents, refreshed.documents);
        assert_eq!(created.history, refreshed.history);
        assert_eq!(created.history, new.history);
        let order: Vec<_> = created
            .documents
            .iter()
            .map(|d| (d.owner_index, d.doc_type.as_str(), d.created_at == later))
            .collect();
        assert_eq!(
            order,
            [
                (Some(0), "Z-upper", false),
                (Some(0), "power-of-attorney", false),
                (Some(0), "trade-licence-application", false),
                (Some(1), "trade-licence-application", false),
                (None, "uploaded", false),
                (Some(0), "power-of-attorney", true),
            ]
        );
        repo.pool.close().await;
        drop_database(&name, admin).await;
    }

    /// Migrations 0010 and 0011 on a database with cases from before them: their history,
    /// documents and identity verifications are copied into `case_children`, so the reads (which
    /// take them from there now) still show them, and the `jsonb` record becomes `json` with the
    /// same content. Needs `TEST_DATABASE_URL` (CI sets it).
    #[tokio::test]
    async fn migrations_0010_and_0011_keep_existing_cases_readable() {
        let Some((url, name, admin)) = fresh_database().await else {
            return;
        };
        {
            let mut conn = PgConnection::connect(&url).await.unwrap();
            let before = crate::migrations_before(&MIGRATOR, 10);
            assert_eq!(before.migrations.len(), 9);
            before.run(&mut conn).await.unwrap();
            sqlx::raw_sql(
                "INSERT INTO companies (id, kind, name, provider_id, created_at) VALUES \
                   ('00000000-0000-0000-0000-0000000000a1', 'provider', 'P', NULL, '2026-01-02T03:04:05Z'), \
                   ('00000000-0000-0000-0000-0000000000c1', 'client', 'C', \
                    '00000000-0000-0000-0000-0000000000a1', '2026-01-02T03:04:05Z'); \
                 INSERT INTO trade_registrations (id, company_id, provider_id, environment, package, \
                   status, record, price_cents, created_at, updated_at) VALUES \
                   ('00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-0000000000c1', \
                    '00000000-0000-0000-0000-0000000000a1', 'sandbox', 'self', 'submitted', \
                    '{\"name\": \"Müller & Söhne\", \"owners\": [{\"first_name\": \"Zoë\"}], \"n\": 1.5, \"ref\": null}', 4900, \
                    '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z'); \
                 INSERT INTO status_history (case_id, case_kind, status, previous_status, actor, at) VALUES \
                   ('00000000-0000-0000-0000-0000000000d1', 'trade', 'initiated', NULL, 'system', '2026-01-02T03:04:05.5Z'), \
                   ('00000000-0000-0000-0000-0000000000d1', 'trade', 'submitted', 'initiated', 'operator:x', '2026-01-02T04:00:00Z'); \
                 INSERT INTO documents (id, case_id, case_kind, owner_index, doc_type, name, storage_key, \
                   content_type, size, sha256, created_at) VALUES \
                   ('00000000-0000-0000-0000-0000000000e1', '00000000-0000-0000-0000-0000000000d1', 'trade', 0, \
                    'gewa-1', 'GewA 1 – Jürgen.pdf', 'trade/d1/e1.pdf', 'application/pdf', 1000, '\\x0102', \
                    '2026-01-02T03:04:05Z'); \
                 INSERT INTO identity_verifications (case_id, owner_index, verified_at, actor) VALUES \
                   ('00000000-0000-0000-0000-0000000000d1', 0, '2026-01-03T00:00:00Z', 'operator:x');",
            )
            .execute(&mut conn)
            .await
            .unwrap();
        }

        let repo = PostgresRepository::connect(&url, PoolSettings::default())
            .await
            .unwrap();
        let id = uuid::Uuid::from_u128(0xd1);
        let case = repo.get_trade_registration(id).await.unwrap().unwrap();
        let statuses: Vec<_> = case.history.iter().map(|h| h.status.as_str()).collect();
        assert_eq!(statuses, ["initiated", "submitted"]);
        assert_eq!(
            case.history[0].at,
            time::macros::datetime!(2026-01-02 03:04:05.5 UTC)
        );
        assert_eq!(case.documents.len(), 1);
        assert_eq!(case.documents[0].name, "GewA 1 – Jürgen.pdf");
        assert_eq!(case.documents[0].sha256.as_deref(), Some(&[1u8, 2][..]));
        assert_eq!(
            case.identity_verifications,
            [(0, time::macros::datetime!(2026-01-03 0:00 UTC))]
        );
        // 0011: the record, stored as `jsonb` then, is `json` now and reads the same.
        assert_eq!(
            case.record,
            serde_json::json!({"name": "Müller & Söhne", "owners": [{"first_name": "Zoë"}], "n": 1.5, "ref": null})
        );
        let types: Vec<String> = sqlx::query_scalar(
            "SELECT data_type FROM information_schema.columns \
             WHERE column_name = 'record' ORDER BY table_name",
        )
        .fetch_all(&repo.pool)
        .await
        .unwrap();
        assert_eq!(types, ["json", "json"]);
        repo.pool.close().await;
        drop_database(&name, admin).await;
    }

    /// Migration 0016 on a database with a tax registration from before it: the case keeps its
    /// id as the id its provider finds it by; a row written without `public_id` afterwards (an
    /// instance on the release before, during a rolling restart) gets its key as well instead of
    /// failing the NOT NULL. Needs `TEST_DATABASE_URL` (CI sets it).
    #[tokio::test]
    async fn migration_0016_gives_existing_tax_cases_their_id_as_public_id() {
        let Some((url, name, admin)) = fresh_database().await else {
            return;
        };
        let insert_case = |n: u8| {
            format!(
                "INSERT INTO companies (id, kind, name, provider_id, environment, created_at) VALUES \
                   ('00000000-0000-0000-0000-0000000000c{n}', 'client', 'C', \
                    '00000000-0000-0000-0000-0000000000a1', 'production', '2026-01-02T03:04:05Z'); \
                 INSERT INTO tax_registrations (id, company_id, provider_id, environment, package, \
                   legal_form, status, record, created_at, updated_at, list_key) VALUES \
                   ('00000000-0000-0000-0000-0000000000d{n}', '00000000-0000-0000-0000-0000000000c{n}', \
                    '00000000-0000-0000-0000-0000000000a1', 'production', 'self', 'gmbh', 'validated', \
                    '{{}}', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z', \
                    '00000000-0000-0000-0000-0000000000d{n}'); \
                 INSERT INTO case_children (case_id, history_json, documents_json, verified_json) \
                   VALUES ('00000000-0000-0000-0000-0000000000d{n}', '[]', '[]', '[]');"
            )
        };
        {
            let mut conn = PgConnection::connect(&url).await.unwrap();
            let before = crate::migrations_before(&MIGRATOR, 16);
            // 0001 to 0015 (0015, the API key listing, came in with issue 35's keys).
            assert_eq!(before.migrations.len(), 15);
            before.run(&mut conn).await.unwrap();
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "INSERT INTO companies (id, kind, name, provider_id, created_at) VALUES \
                   ('00000000-0000-0000-0000-0000000000a1', 'provider', 'P', NULL, '2026-01-02T03:04:05Z'); {}",
                insert_case(1)
            )))
            .execute(&mut conn)
            .await
            .unwrap();
        }
        let repo = PostgresRepository::connect(&url, PoolSettings::default())
            .await
            .unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(insert_case(2)))
            .execute(&repo.pool)
            .await
            .unwrap();
        let provider = uuid::Uuid::from_u128(0xa1);
        for id in [0xd1, 0xd2].map(uuid::Uuid::from_u128) {
            let case = repo
                .find_tax_registration(crate::CaseScope::Provider(provider), id)
                .await
                .unwrap()
                .expect("found by its id");
            assert_eq!((case.id, case.public_id), (id, id));
        }
        repo.pool.close().await;
        drop_database(&name, admin).await;
    }

    /// Ends every session of database `name` but the caller's (as a server restart would).
    async fn end_sessions(admin: &mut PgConnection, name: &str) -> i64 {
        let ended: Vec<bool> = sqlx::query_scalar(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity \
             WHERE datname = $1 AND pid <> pg_backend_pid()",
        )
        .bind(name)
        .fetch_all(admin)
        .await
        .unwrap();
        ended.len() as i64
    }

    /// The pool holds `max_connections` and no more: with all of them taken, the next
    /// request waits for one and gives up at the acquire timeout.
    #[tokio::test]
    async fn the_pool_holds_max_connections() {
        let Some((url, _name, _admin)) = fresh_database().await else {
            return;
        };
        let repo = PostgresRepository::connect(
            &url,
            PoolSettings {
                acquire_timeout: std::time::Duration::from_secs(1),
                max_connections: 2,
                ..PoolSettings::default()
            },
        )
        .await
        .unwrap();
        let a = repo.writer.acquire().await.unwrap();
        let b = repo.writer.acquire().await.unwrap();
        assert!(repo.writer.acquire().await.is_err(), "a third connection");
        drop(a);
        let c = repo.writer.acquire().await.unwrap();
        drop((b, c));
    }

    /// Reads run on connections kept outside the pool and never pinged: one the server ended
    /// while it sat idle fails the read, which then runs again on a new connection. The caller
    /// sees no error. Writes still go through the pool, which pings.
    #[tokio::test]
    async fn a_read_on_a_connection_the_server_ended_is_run_again() {
        let Some((url, name, mut admin)) = fresh_database().await else {
            return;
        };
        let repo = PostgresRepository::connect(
            &url,
            PoolSettings {
                acquire_timeout: std::time::Duration::from_secs(1),
                ..PoolSettings::default()
            },
        )
        .await
        .unwrap();
        let provider = repo.create_provider("P").await.unwrap();
        let key = crate::ApiKeyRecord {
            prefix: "rfs_p_abc".into(),
            hash: vec![1; 32],
            kind: domain::auth::KeyKind::Provider,
            company_id: Some(provider.id),
            operator_id: None,
            created_at: time::OffsetDateTime::now_utc(),
            revoked_at: None,
            company_provider_id: None,
        };
        repo.insert_api_key(&key).await.unwrap();
        // Two reads at once leave two idle read connections, both of which the server ends.
        let (a, b) = tokio::join!(
            repo.find_api_key("rfs_p_abc"),
            repo.get_company(provider.id)
        );
        assert_eq!(a.unwrap().unwrap().company_id, Some(provider.id));
        assert_eq!(b.unwrap().unwrap().name, "P");
        assert_eq!(repo.readers.idle.lock().unwrap().len(), 2);

        assert!(end_sessions(&mut admin, &name).await >= 2);
        // Two reads at once take one dead connection each; each reads again on a new one.
        let (a, b) = tokio::join!(
            repo.find_api_key("rfs_p_abc"),
            repo.get_company(provider.id)
        );
        assert_eq!(a.unwrap().unwrap().prefix, "rfs_p_abc");
        assert_eq!(b.unwrap().unwrap().name, "P");
        assert_eq!(repo.readers.idle.lock().unwrap().len(), 2);
        assert!(
            repo.get_document(uuid::Uuid::now_v7())
                .await
                .unwrap()
                .is_none()
        );
        // A statement that fails on a working connection is not run again, and its connection
        // stays.
        let before = repo.readers.idle.lock().unwrap().len();
        let err = repo
            .read(|c| Box::pin(sqlx::query("SELECT 1/0").execute(c)))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Database(_)), "{err:?}");
        assert_eq!(repo.readers.idle.lock().unwrap().len(), before);
        // ... and still works.
        let found = repo.find_api_key("rfs_p_abc").await.unwrap();
        assert_eq!(found.unwrap().prefix, "rfs_p_abc");
        // A statement past the timeout (1 s here) is a storage fault (503, not 500), and the
        // server ends it too (`statement_timeout`) instead of running it on for nobody.
        let err = repo
            .read(|c| Box::pin(sqlx::query("SELECT pg_sleep(5)").execute(c)))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let sleeping: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE datname = $1 AND state = 'active' AND query LIKE 'SELECT pg_sleep%'",
        )
        .bind(&name)
        .fetch_one(&mut admin)
        .await
        .unwrap();
        assert_eq!(sleeping, 0, "the abandoned statement still runs");
        repo.pool.close().await;
        drop(repo);
        drop_database(&name, admin).await;
    }
}

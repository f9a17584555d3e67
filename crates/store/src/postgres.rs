//! PostgreSQL, for several instances behind a load balancer.

use std::str::FromStr;

use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::{PoolSettings, Result, StoreError};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

pub struct PostgresRepository {
    pool: PgPool,
    /// The same pool: PostgreSQL has no single-writer lock to queue for (see `sqlite.rs`).
    writer: PgPool,
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
        Ok(Self {
            writer: pool.clone(),
            pool,
        })
    }

    /// PostgreSQL reads always go through the pool (no on-thread path, see `sqlite.rs`).
    fn trade_on_thread(
        &self,
        _id: uuid::Uuid,
    ) -> Option<Result<Option<crate::TradeRegistrationRecord>>> {
        None
    }

    /// PostgreSQL creates always go through sqlx (no direct path, see `sqlite.rs`).
    async fn create_direct(
        &self,
        _case: impl FnOnce() -> crate::sqlite_write::NewCase,
    ) -> Option<Result<()>> {
        None
    }
}

// The children of a case (`t`) as JSON arrays in one statement (see `read_children!`): kept on
// the case row by triggers (migration 0010), so a case read aggregates nothing. Three aggregate
// subqueries here cost more than the rest of the statement (BENCHMARKS.md).
repository_impl!(
    PostgresRepository,
    "postgres",
    "FOR UPDATE SKIP LOCKED",
    "t.history_json, t.documents_json",
    // Only trade cases have identity verifications.
    "t.verified_json",
    {}
);

#[cfg(test)]
mod tests {
    use sqlx::{Connection, PgConnection};

    use super::*;
    use crate::Repository;

    /// Migration 0010 on a database with cases from before it: their history, documents and
    /// identity verifications are copied onto the case rows, so the reads (which take them from
    /// there now) still show them. Needs `TEST_DATABASE_URL` (CI sets it).
    #[tokio::test]
    async fn migration_0010_fills_the_children_of_existing_cases() {
        let Some(base) = std::env::var("TEST_DATABASE_URL")
            .ok()
            .filter(|s| !s.is_empty())
        else {
            eprintln!("TEST_DATABASE_URL is not set: skipped");
            return;
        };
        let name = format!("filing_t_{}", uuid::Uuid::new_v4().simple());
        let mut admin = sqlx::PgConnection::connect(&base).await.unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut admin)
            .await
            .unwrap();
        let options = PgConnectOptions::from_str(&base).unwrap().database(&name);
        let url = format!(
            "{}/{name}",
            base.split('?').next().unwrap().rsplit_once('/').unwrap().0
        );
        {
            let mut conn = PgConnection::connect_with(&options).await.unwrap();
            let before = sqlx::migrate::Migrator {
                migrations: std::borrow::Cow::Owned(
                    MIGRATOR
                        .migrations
                        .iter()
                        .filter(|m| m.version < 10)
                        .cloned()
                        .collect(),
                ),
                ..sqlx::migrate::Migrator::DEFAULT
            };
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
                    '00000000-0000-0000-0000-0000000000a1', 'sandbox', 'self', 'submitted', '{}', 4900, \
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
        repo.pool.close().await;
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
        )))
        .execute(&mut admin)
        .await
        .unwrap();
    }
}

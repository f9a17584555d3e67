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

// The children of a case (`t`) as JSON arrays in one statement (see `read_children!`).
repository_impl!(
    PostgresRepository,
    "postgres",
    "FOR UPDATE SKIP LOCKED",
    "\
    (SELECT coalesce(json_agg(json_build_array(status, previous_status, actor, reason, at) ORDER BY seq), '[]')::text FROM status_history WHERE case_id = t.id) AS history_json, \
    (SELECT coalesce(json_agg(json_build_array(replace(id::text, '-', ''), case_kind, owner_index, doc_type, name, storage_key, content_type, size, encode(sha256, 'hex'), created_at) ORDER BY created_at, owner_index, doc_type), '[]')::text FROM documents WHERE case_id = t.id) AS documents_json",
    // Only trade cases have identity verifications.
    "(SELECT coalesce(json_agg(json_build_array(owner_index, verified_at) ORDER BY owner_index), '[]')::text FROM identity_verifications WHERE case_id = t.id) AS verified_json",
    {}
);

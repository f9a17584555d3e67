//! PostgreSQL, for several instances behind a load balancer.

mod create;
mod reads;
mod repository;
#[cfg(test)]
mod tests;

use std::str::FromStr;

use futures::future::BoxFuture;
use sqlx::Postgres;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::sql::{Dialect, Read, Shared};
use crate::{PoolSettings, Result, StoreError};
use reads::ReadConnections;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

pub struct PostgresRepository {
    /// The pool, and the same pool as the writer: PostgreSQL has no single-writer lock to
    /// queue for (see `sqlite/mod.rs`); reads of one statement use connections of their own
    /// ([`ReadConnections`]).
    pub(crate) sql: Shared<Postgres>,
    /// Tests turn the one-statement create (`create.rs`) off to compare it with the sqlx
    /// transaction.
    #[cfg(test)]
    sqlx_creates: bool,
}

impl Dialect for Postgres {
    const BACKEND: &'static str = "postgres";

    const MIGRATOR: &'static sqlx::migrate::Migrator = &MIGRATOR;

    type Reads = ReadConnections;

    const CREATED_AT: (&'static str, &'static str) = ("t.created_at", "$?::timestamptz");

    // The children of a case (`t`) as JSON arrays: a copy kept in `case_children` (migration
    // 0010, `refresh_children`) and joined by key, so a case read aggregates no child table. Three
    // aggregate subqueries here cost more than the rest of the statement (ADR 0010). Only
    // trade cases have identity verifications.
    // The names of the history's operators (`operators_json`) are looked up by key, for the
    // ids `refresh_children` keeps beside the copied history (`case_children.operator_ids`,
    // migration 0023): parsing the history's JSON here cost as much as the rest of the read.
    const SQL: crate::sql::text::DialectSql = dialect_sql!(
        "k.history_json, k.documents_json, \
         (SELECT coalesce(json_agg(json_build_array('operator:' || o.id, o.name)), '[]')::text \
          FROM operators o WHERE o.id = ANY(k.operator_ids)) AS operators_json",
        "k.verified_json",
        " LEFT JOIN case_children k ON k.case_id = t.id",
        "FOR UPDATE SKIP LOCKED",
        // Held until the claim commits: the next instance's claim then sees its leases.
        "SELECT pg_advisory_xact_lock(hashtext('filing: webhook claims'))"
    );

    /// A `LIKE` per word on the lower-cased text (migration 0022), which the trigram index
    /// serves; the word lower-cased by the same rules, its `%`, `_` and `\` taken literally.
    /// The pattern goes back to the column's collation: compared in ICU's, the `LIKE` could not
    /// use the index (a scan of every case, ADR 0024).
    fn text_search(_kind: crate::CaseKind, words: &[&str]) -> Vec<(String, String)> {
        words
            .iter()
            .map(|w| {
                let escaped = w
                    .replace('\\', "\\\\")
                    .replace('%', "\\%")
                    .replace('_', "\\_");
                (
                    "t.search_text LIKE (lower($?::text COLLATE \"und-x-icu\") COLLATE \"default\")"
                        .to_owned(),
                    format!("%{escaped}%"),
                )
            })
            .collect()
    }

    fn read<'a, T: Send + 'a>(
        reads: &'a ReadConnections,
        _pool: &'a sqlx::PgPool,
        read: impl Read<Self, T> + 'a,
    ) -> BoxFuture<'a, Result<T>> {
        Box::pin(reads.run(read))
    }

    /// Rewrites the JSON copies of these cases' children (`case_children`, migration 0010)
    /// from the child tables as this transaction sees them.
    fn refresh_children<'c>(
        conn: &'c mut sqlx::PgConnection,
        cases: &'c [uuid::Uuid],
    ) -> BoxFuture<'c, Result<()>> {
        Box::pin(async move {
            sqlx::query("SELECT refresh_case_children($1::uuid[])")
                .bind(cases)
                .execute(conn)
                .await?;
            Ok(())
        })
    }

    /// Writes the JSON copies of a new case's children (`case_children`), built here from what
    /// the create inserts (as the one-statement create does).
    #[cfg(test)]
    fn children_created<'c>(
        conn: &'c mut sqlx::PgConnection,
        case: uuid::Uuid,
        documents: &'c [crate::DocumentRecord],
        history: &'c [crate::StatusChange],
    ) -> BoxFuture<'c, Result<()>> {
        Box::pin(async move {
            sqlx::query(
                "INSERT INTO case_children (case_id, history_json, documents_json, verified_json) \
                 VALUES ($1, $2, $3, '[]')",
            )
            .bind(case)
            .bind(crate::rows::history_to_json(history)?)
            .bind(crate::rows::documents_to_json(documents)?)
            .execute(conn)
            .await?;
            Ok(())
        })
    }

    fn rows_affected(done: &sqlx::postgres::PgQueryResult) -> u64 {
        done.rows_affected()
    }
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
            .max_connections(settings.max_connections.max(1))
            .acquire_timeout(settings.acquire_timeout)
            .test_before_acquire(true)
            .connect_with(options.clone())
            .await?;
        MIGRATOR.run(&pool).await?;
        Ok(Self {
            sql: Shared {
                writer: pool.clone(),
                pool,
                reads: ReadConnections::new(options, settings.acquire_timeout),
            },
            #[cfg(test)]
            sqlx_creates: false,
        })
    }
}

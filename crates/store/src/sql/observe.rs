//! The statements behind readiness and metrics (`crate::observe`): the migrations recorded, the
//! cases by kind, environment and status, the outbox's backlog.

use sqlx::Row;

use super::environment;
use crate::observe::{CaseCount, OutboxBacklog};
use crate::{CaseKind, Result};
use time::OffsetDateTime;

role_impl!(
    type Role = ObserveStore;

    /// The versions sqlx's table records, with whether each run finished, against the
    /// dialect's migrations.
    async fn migration_state(&self) -> Result<crate::observe::MigrationState> {
        let rows = self
            .sql()
            .read(|c| {
                Box::pin(sqlx::query("SELECT version, success FROM _sqlx_migrations").fetch_all(c))
            })
            .await?;
        let rows = rows
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<Vec<(i64, bool)>>>()?;
        Ok(crate::observe::MigrationState::of(DB::MIGRATOR, rows))
    }

    /// The cases of both kinds by environment and status: one `GROUP BY` per case table, read
    /// from the index on `(status, environment)` (migrations sqlite 0018, postgres 0021)
    /// without touching the rows (figures: docs/adr/0023-metrics-and-health.md).
    async fn case_counts(&self) -> Result<Vec<CaseCount>> {
        let mut counts = Vec::new();
        for &kind in CaseKind::ALL {
            // The table name is a constant of `lists::table`.
            let table = super::lists::table(kind).name;
            let sql = format!(
                "SELECT status, environment, COUNT(*) FROM {table} GROUP BY status, environment"
            );
            let rows = self
                .sql()
                .read(|c| Box::pin(sqlx::query(sqlx::AssertSqlSafe(sql.clone())).fetch_all(c)))
                .await?;
            for row in rows {
                let environment_text: String = row.try_get(1)?;
                let status_text: String = row.try_get(0)?;
                counts.push(CaseCount {
                    kind,
                    status: crate::rows::case_status(kind, &status_text)?,
                    environment: environment(&environment_text)?,
                    count: row.try_get(2)?,
                });
            }
        }
        Ok(counts)
    }

    /// The pending webhook messages: how many, and when the oldest (the first in insertion
    /// order) was written. Both read the pending messages' partial indexes only, so the cost
    /// follows the backlog, not the delivered history.
    async fn outbox_backlog(&self) -> Result<OutboxBacklog> {
        let now = crate::micros(OffsetDateTime::now_utc());
        // Few rows: the endpoints with a circuit that is not closed, their pending messages
        // by the per-case index.
        let circuits = self
            .sql().read(|c| {
                Box::pin(
                    sqlx::query(
                        "SELECT CAST(COALESCE(SUM(CASE WHEN e.circuit_open_until_us > $1 THEN 1 ELSE 0 END), 0) AS BIGINT), \
                         CAST(COALESCE(SUM(CASE WHEN e.circuit_open_until_us <= $1 THEN 1 ELSE 0 END), 0) AS BIGINT), \
                         CAST(COALESCE(SUM(CASE WHEN e.circuit_open_until_us > $1 THEN \
                         (SELECT COUNT(*) FROM webhook_messages m WHERE m.endpoint_id = e.id \
                          AND m.state = 'pending') ELSE 0 END), 0) AS BIGINT) \
                         FROM webhook_endpoints e \
                         WHERE e.deleted_at IS NULL AND e.circuit_open_until_us IS NOT NULL",
                    )
                    .bind(now)
                    .fetch_one(c),
                )
            })
            .await?;
        let (circuits_open, circuits_half_open, held): (i64, i64, i64) = (
            circuits.try_get(0)?,
            circuits.try_get(1)?,
            circuits.try_get(2)?,
        );
        let row = self
            .sql()
            .read(|c| {
                Box::pin(
                    sqlx::query(
                        "SELECT COUNT(*), MIN(seq) FROM webhook_messages WHERE state = 'pending'",
                    )
                    .fetch_one(c),
                )
            })
            .await?;
        let pending: i64 = row.try_get(0)?;
        let first: Option<i64> = row.try_get(1)?;
        let Some(first) = first else {
            return Ok(OutboxBacklog {
                circuits_open,
                circuits_half_open,
                ..OutboxBacklog::default()
            });
        };
        let oldest: Option<OffsetDateTime> = self
            .sql()
            .read(|c| {
                Box::pin(
                    sqlx::query_scalar("SELECT created_at FROM webhook_messages WHERE seq = $1")
                        .bind(first)
                        .fetch_optional(c),
                )
            })
            .await?;
        Ok(OutboxBacklog {
            pending,
            oldest_created_at: oldest,
            circuits_open,
            circuits_half_open,
            held,
        })
    }

    fn pool_use(&self) -> Vec<crate::observe::PoolUse> {
        crate::sql::Backend::pool_use(self)
    }
);

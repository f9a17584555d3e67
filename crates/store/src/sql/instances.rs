//! What the instances of one deployment share (issue 53): console sessions, leases for jobs one
//! instance at a time runs, the instances alive, and the pruning of what is past its retention.

use sqlx::Row;

use crate::{ConsoleSessionRecord, PruneBefore, Pruned, Result};

/// Rows a pruning statement reads or removes at once, so the writer is never held long.
const BATCH: i64 = 2000;

role_impl!(
    type Role = InstanceStore;

    async fn insert_console_session(&self, s: &ConsoleSessionRecord) -> Result<()> {
        sqlx::query(
            "INSERT INTO console_sessions (token_hash, operator_id, operator_name, key_prefix, \
             csrf, started_us, seen_us, flash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(s.token_hash.clone())
        .bind(s.operator_id)
        .bind(s.operator_name.clone())
        .bind(s.key_prefix.clone())
        .bind(s.csrf.clone())
        .bind(s.started_us)
        .bind(s.seen_us)
        .bind(s.flash.clone())
        .execute(&self.sql().writer)
        .await?;
        Ok(())
    }

    async fn get_console_session(&self, token_hash: &[u8]) -> Result<Option<ConsoleSessionRecord>> {
        let row = sqlx::query(
            "SELECT token_hash, operator_id, operator_name, key_prefix, csrf, started_us, \
             seen_us, flash FROM console_sessions WHERE token_hash = $1",
        )
        .bind(token_hash.to_vec())
        .fetch_optional(&self.sql().pool)
        .await?;
        row.map(|r| {
            Ok(ConsoleSessionRecord {
                token_hash: r.try_get("token_hash")?,
                operator_id: r.try_get("operator_id")?,
                operator_name: r.try_get("operator_name")?,
                key_prefix: r.try_get("key_prefix")?,
                csrf: r.try_get("csrf")?,
                started_us: r.try_get("started_us")?,
                seen_us: r.try_get("seen_us")?,
                flash: r.try_get("flash")?,
            })
        })
        .transpose()
    }

    async fn touch_console_session(&self, token_hash: &[u8], seen_us: i64) -> Result<()> {
        sqlx::query("UPDATE console_sessions SET seen_us = $1 WHERE token_hash = $2")
            .bind(seen_us)
            .bind(token_hash.to_vec())
            .execute(&self.sql().writer)
            .await?;
        Ok(())
    }

    async fn set_console_flash(&self, token_hash: &[u8], flash: Option<String>) -> Result<()> {
        sqlx::query("UPDATE console_sessions SET flash = $1 WHERE token_hash = $2")
            .bind(flash)
            .bind(token_hash.to_vec())
            .execute(&self.sql().writer)
            .await?;
        Ok(())
    }

    async fn delete_console_session(&self, token_hash: &[u8]) -> Result<()> {
        sqlx::query("DELETE FROM console_sessions WHERE token_hash = $1")
            .bind(token_hash.to_vec())
            .execute(&self.sql().writer)
            .await?;
        Ok(())
    }

    /// Takes the lease `name` for `holder` until `until_us` when nobody (this holder neither)
    /// holds it past `now_us`: whether it did. A lease is also the period of a job: it runs
    /// again once the lease has run out. One statement, so two instances asking together
    /// never both get it.
    async fn take_lease(
        &self,
        name: &str,
        holder: uuid::Uuid,
        now_us: i64,
        until_us: i64,
    ) -> Result<bool> {
        let done = sqlx::query(
            "INSERT INTO leases (name, holder, until_us) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until_us = excluded.until_us \
             WHERE leases.until_us <= $4",
        )
        .bind(name)
        .bind(holder)
        .bind(until_us)
        .bind(now_us)
        .execute(&self.sql().writer)
        .await?;
        Ok(DB::rows_affected(&done) == 1)
    }

    /// Records that `instance` is alive at `now_us`; the instances seen since `live_since_us`
    /// (this one among them).
    async fn heartbeat(
        &self,
        instance: uuid::Uuid,
        now_us: i64,
        live_since_us: i64,
    ) -> Result<i64> {
        sqlx::query(
            "INSERT INTO instances (id, seen_us) VALUES ($1, $2) \
             ON CONFLICT (id) DO UPDATE SET seen_us = excluded.seen_us",
        )
        .bind(instance)
        .bind(now_us)
        .execute(&self.sql().writer)
        .await?;
        // Long gone ones are forgotten.
        sqlx::query("DELETE FROM instances WHERE seen_us < $1")
            .bind(live_since_us - 3_600_000_000)
            .execute(&self.sql().writer)
            .await?;
        let live: i64 = sqlx::query_scalar("SELECT count(*) FROM instances WHERE seen_us >= $1")
            .bind(live_since_us)
            .fetch_one(&self.sql().writer)
            .await?;
        Ok(live)
    }

    async fn forget_instance(&self, instance: uuid::Uuid) -> Result<()> {
        sqlx::query("DELETE FROM instances WHERE id = $1")
            .bind(instance)
            .execute(&self.sql().writer)
            .await?;
        Ok(())
    }

    /// Removes what is past its retention, oldest first and in batches.
    async fn prune(&self, before: &PruneBefore) -> Result<Pruned> {
        let mut pruned = Pruned::default();
        // The log: by its order, the oldest first, as far as they are older than the cutoff.
        loop {
            let rows = sqlx::query("SELECT seq, created_at FROM events ORDER BY seq LIMIT $1")
                .bind(BATCH)
                .fetch_all(&self.sql().writer)
                .await?;
            let mut last = None;
            for r in &rows {
                let at: time::OffsetDateTime = r.try_get("created_at")?;
                if at >= before.events {
                    break;
                }
                last = Some(r.try_get::<i64, _>("seq")?);
            }
            let Some(last) = last else { break };
            let done = sqlx::query("DELETE FROM events WHERE seq <= $1")
                .bind(last)
                .execute(&self.sql().writer)
                .await?;
            pruned.events += DB::rows_affected(&done);
            if (DB::rows_affected(&done) as i64) < BATCH {
                break;
            }
        }
        // Webhook messages delivered or given up before the cutoff, with their attempts.
        let mut after = 0i64;
        loop {
            let rows = sqlx::query(
                "SELECT seq, id, finished_at FROM webhook_messages WHERE state <> 'pending' \
                 AND seq > $1 ORDER BY seq LIMIT $2",
            )
            .bind(after)
            .bind(BATCH)
            .fetch_all(&self.sql().writer)
            .await?;
            let Some(last) = rows.last() else { break };
            after = last.try_get("seq")?;
            let mut old: Vec<uuid::Uuid> = Vec::new();
            for r in &rows {
                let finished: Option<time::OffsetDateTime> = r.try_get("finished_at")?;
                if finished.is_some_and(|f| f < before.webhook_messages) {
                    old.push(r.try_get("id")?);
                }
            }
            for chunk in old.chunks(200) {
                let list = (1..=chunk.len())
                    .map(|i| format!("${i}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut tx = self.sql().writer.begin().await?;
                for table in [
                    "webhook_attempts WHERE message_id",
                    "webhook_messages WHERE id",
                ] {
                    let sql = format!("DELETE FROM {table} IN ({list})");
                    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
                    for id in chunk {
                        q = q.bind(*id);
                    }
                    let done = q.execute(&mut *tx).await?;
                    if table.starts_with("webhook_messages") {
                        pruned.webhook_messages += DB::rows_affected(&done);
                    }
                }
                tx.commit().await?;
            }
            if (rows.len() as i64) < BATCH {
                break;
            }
        }
        // Idempotency answers past their time (a claim deletes an expired one it meets; these
        // are the ones never asked for again).
        let mut from: Option<(uuid::Uuid, String)> = None;
        loop {
            let rows = match &from {
                None => {
                    sqlx::query(
                        "SELECT scope, key, created_at FROM idempotency_keys \
                         ORDER BY scope, key LIMIT $1",
                    )
                    .bind(BATCH)
                    .fetch_all(&self.sql().writer)
                    .await?
                }
                Some((scope, key)) => {
                    sqlx::query(
                        "SELECT scope, key, created_at FROM idempotency_keys \
                         WHERE scope > $1 OR (scope = $1 AND key > $2) ORDER BY scope, key LIMIT $3",
                    )
                    .bind(*scope)
                    .bind(key.clone())
                    .bind(BATCH)
                    .fetch_all(&self.sql().writer)
                    .await?
                }
            };
            let Some(last) = rows.last() else { break };
            from = Some((last.try_get("scope")?, last.try_get("key")?));
            let mut tx = self.sql().writer.begin().await?;
            for r in &rows {
                let at: time::OffsetDateTime = r.try_get("created_at")?;
                if at < before.idempotency_keys {
                    let scope: uuid::Uuid = r.try_get("scope")?;
                    let key: String = r.try_get("key")?;
                    let done = sqlx::query(
                        "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 \
                         AND created_at = $3",
                    )
                    .bind(scope)
                    .bind(key)
                    .bind(at)
                    .execute(&mut *tx)
                    .await?;
                    pruned.idempotency_keys += DB::rows_affected(&done);
                }
            }
            tx.commit().await?;
            if (rows.len() as i64) < BATCH {
                break;
            }
        }
        let done =
            sqlx::query("DELETE FROM console_sessions WHERE seen_us < $1 OR started_us < $2")
                .bind(before.sessions_seen_us)
                .bind(before.sessions_started_us)
                .execute(&self.sql().writer)
                .await?;
        pruned.console_sessions = DB::rows_affected(&done);
        Ok(pruned)
    }
);

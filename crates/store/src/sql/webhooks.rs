//! Webhook endpoints, the outbox's messages and their delivery attempts.

use sqlx::Row;

use super::text::GIVE_UP_PENDING;
use crate::Result;
use crate::rows::Columns;

shared_impl!(
    /// The endpoints `sql` (an [`endpoints_where!`] statement, its `$1` = `param`) selects.
    async fn endpoints(
        &self,
        sql: &'static str,
        param: uuid::Uuid,
    ) -> Result<Vec<crate::WebhookEndpoint>> {
        sqlx::query(sql)
            .bind(param)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| Columns(r).endpoint())
            .collect()
    }
);

role_impl!(
    type Role = WebhookStore;

    async fn create_webhook_endpoint(
        &self,
        e: &crate::WebhookEndpoint,
        limit: usize,
    ) -> Result<bool> {
        let mut tx = self.sql().writer.begin().await?;
        // Creates of one provider's endpoints take turns: the update locks the provider's
        // row until the commit (PostgreSQL; SQLite's one writer takes turns anyway), so the
        // count below sees every endpoint committed before, and two creates cannot both
        // see one place left.
        sqlx::query("UPDATE companies SET kind = kind WHERE id = $1")
            .bind(e.provider_id)
            .execute(&mut *tx)
            .await?;
        let live: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM webhook_endpoints WHERE provider_id = $1 AND deleted_at IS NULL",
        )
        .bind(e.provider_id)
        .fetch_one(&mut *tx)
        .await?;
        if usize::try_from(live).unwrap_or(usize::MAX) >= limit {
            tx.rollback().await?;
            return Ok(false);
        }
        sqlx::query(
            "INSERT INTO webhook_endpoints (id, provider_id, url, events, secret, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(e.id)
        .bind(e.provider_id)
        .bind(&e.url)
        .bind(e.events.clone().map(sqlx::types::Json))
        .bind(&e.secret)
        .bind(e.created_at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn list_webhook_endpoints(
        &self,
        provider_id: uuid::Uuid,
    ) -> Result<Vec<crate::WebhookEndpoint>> {
        self.sql()
            .endpoints(
                endpoints_where!("provider_id = $1 ORDER BY created_at, id"),
                provider_id,
            )
            .await
    }

    async fn get_webhook_endpoint(&self, id: uuid::Uuid) -> Result<Option<crate::WebhookEndpoint>> {
        Ok(self
            .sql()
            .endpoints(endpoints_where!("id = $1"), id)
            .await?
            .into_iter()
            .next())
    }

    async fn delete_webhook_endpoint(
        &self,
        id: uuid::Uuid,
        at: time::OffsetDateTime,
    ) -> Result<bool> {
        let mut tx = self.sql().writer.begin().await?;
        let done = sqlx::query(
            "UPDATE webhook_endpoints SET deleted_at = $1 WHERE id = $2 AND deleted_at IS NULL",
        )
        .bind(at)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if DB::rows_affected(&done) != 1 {
            tx.rollback().await?;
            return Ok(false);
        }
        sqlx::query(GIVE_UP_PENDING)
            .bind(at)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn rotate_webhook_secret(
        &self,
        id: uuid::Uuid,
        secret: &str,
        previous_expires_at: time::OffsetDateTime,
    ) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE webhook_endpoints SET previous_secret = secret, \
             previous_secret_expires_at = $1, secret = $2 WHERE id = $3 AND deleted_at IS NULL",
        )
        .bind(previous_expires_at)
        .bind(secret)
        .bind(id)
        .execute(&self.sql().writer)
        .await?;
        Ok(DB::rows_affected(&done) == 1)
    }

    async fn webhook_endpoint_secrets(&self) -> Result<Vec<crate::StoredSecrets>> {
        let rows =
            sqlx::query("SELECT id, secret, previous_secret FROM webhook_endpoints ORDER BY id")
                .fetch_all(&self.sql().pool)
                .await?;
        rows.iter()
            .map(|r| {
                Ok(crate::StoredSecrets {
                    endpoint_id: r.try_get("id")?,
                    secret: r.try_get("secret")?,
                    previous_secret: r.try_get("previous_secret")?,
                })
            })
            .collect()
    }

    async fn replace_webhook_endpoint_secrets(
        &self,
        old: &crate::StoredSecrets,
        new: &crate::StoredSecrets,
    ) -> Result<bool> {
        // An empty previous secret never exists, so it stands for none in the comparison.
        let done = sqlx::query(
            "UPDATE webhook_endpoints SET secret = $1, previous_secret = $2 \
             WHERE id = $3 AND secret = $4 AND COALESCE(previous_secret, '') = $5",
        )
        .bind(&new.secret)
        .bind(&new.previous_secret)
        .bind(old.endpoint_id)
        .bind(&old.secret)
        .bind(old.previous_secret.as_deref().unwrap_or(""))
        .execute(&self.sql().writer)
        .await?;
        Ok(DB::rows_affected(&done) == 1)
    }

    async fn claim_webhook_messages(
        &self,
        now_us: i64,
        lease_until_us: i64,
        limits: crate::ClaimLimits,
    ) -> Result<Vec<crate::ClaimedMessage>> {
        if limits.total <= 0 {
            return Ok(Vec::new());
        }
        // A read first: an idle worker never takes the write lock (SQLite has one).
        let due = sqlx::query(
            "SELECT 1 FROM webhook_messages WHERE state = 'pending' AND next_attempt_us <= $1 \
             AND (locked_until_us IS NULL OR locked_until_us < $1) LIMIT 1",
        )
        .bind(now_us)
        .fetch_optional(&self.sql().pool)
        .await?;
        if due.is_none() {
            return Ok(Vec::new());
        }
        let mut tx = self.sql().writer.begin().await?;
        if !DB::SQL.claim_turn.is_empty() {
            sqlx::query(DB::SQL.claim_turn).execute(&mut *tx).await?;
        }
        let claimed = sqlx::query(DB::SQL.claim_messages)
            .bind(lease_until_us)
            .bind(now_us)
            .bind(limits.total)
            .bind(limits.per_endpoint)
            .bind(limits.per_provider)
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        // Each endpoint of the batch is read once, however many messages it has. A deleted
        // one (`None`) takes none: a create that read the endpoint before the delete
        // committed may have queued messages the delete did not see to give up.
        let mut endpoints: std::collections::HashMap<uuid::Uuid, Option<crate::WebhookEndpoint>> =
            std::collections::HashMap::new();
        let mut out = Vec::with_capacity(claimed.len());
        let mut deleted_endpoints: Vec<uuid::Uuid> = Vec::new();
        for row in &claimed {
            let endpoint_id: uuid::Uuid = row.try_get("endpoint_id")?;
            if let std::collections::hash_map::Entry::Vacant(slot) = endpoints.entry(endpoint_id) {
                let found = sqlx::query(
                    "SELECT id, provider_id, url, events, secret, previous_secret, \
                     previous_secret_expires_at, created_at, consecutive_failures, \
                     circuit_open_until_us, deleted_at FROM webhook_endpoints WHERE id = $1",
                )
                .bind(endpoint_id)
                .fetch_one(&self.sql().pool)
                .await?;
                let deleted: Option<time::OffsetDateTime> = found.try_get("deleted_at")?;
                let endpoint = match deleted {
                    Some(_) => {
                        deleted_endpoints.push(endpoint_id);
                        None
                    }
                    None => Some(Columns(&found).endpoint()?),
                };
                slot.insert(endpoint);
            }
            let Some(endpoint) = &endpoints[&endpoint_id] else {
                continue;
            };
            out.push(crate::ClaimedMessage {
                id: row.try_get("id")?,
                case_id: row.try_get("case_id")?,
                event_type: crate::rows::event_type(&row.try_get::<String, _>("event_type")?)?,
                payload: row.try_get("payload")?,
                attempts: row.try_get("attempts")?,
                endpoint: endpoint.clone(),
            });
        }
        // What the delete gives up, given up now.
        for id in deleted_endpoints {
            let at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(now_us) * 1000)
                .unwrap_or_else(|_| time::OffsetDateTime::now_utc());
            sqlx::query(GIVE_UP_PENDING)
                .bind(at)
                .bind(id)
                .execute(&self.sql().writer)
                .await?;
        }
        Ok(out)
    }

    async fn record_webhook_attempt(
        &self,
        a: &crate::WebhookAttempt,
        outcome: crate::AttemptOutcome,
        rule: crate::CircuitRule,
    ) -> Result<crate::EndpointCircuit> {
        let mut tx = self.sql().writer.begin().await?;
        use crate::MessageState;
        let (state, next_us, finished) = match outcome {
            crate::AttemptOutcome::Delivered => (MessageState::Delivered, None, Some(a.at)),
            crate::AttemptOutcome::RetryAt(us) => (MessageState::Pending, Some(us), None),
            crate::AttemptOutcome::Failed => (MessageState::Failed, None, Some(a.at)),
        };
        sqlx::query(
            "UPDATE webhook_messages SET state = $1, attempts = $2, \
             next_attempt_us = COALESCE($3, next_attempt_us), finished_at = $4, \
             locked_until_us = NULL WHERE id = $5 AND state = 'pending'",
        )
        .bind(state.as_str())
        .bind(a.attempt)
        .bind(next_us)
        .bind(finished)
        .bind(a.message_id)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO webhook_attempts (message_id, endpoint_id, attempt, at, status_code, \
             error, duration_ms, outcome) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(a.message_id)
        .bind(a.endpoint_id)
        .bind(a.attempt)
        .bind(a.at)
        .bind(a.status_code)
        .bind(&a.error)
        .bind(a.duration_ms)
        .bind(outcome.as_str())
        .execute(&mut *tx)
        .await?;
        // The endpoint's circuit: closed by a delivery; a failure counts, and opens it at
        // the `open_after`th in a row or later (SET reads the values before the update).
        let circuit = if outcome == crate::AttemptOutcome::Delivered {
            sqlx::query(
                "UPDATE webhook_endpoints SET consecutive_failures = 0, \
                 circuit_open_until_us = NULL WHERE id = $1 \
                 RETURNING consecutive_failures, circuit_open_until_us",
            )
            .bind(a.endpoint_id)
            .fetch_optional(&mut *tx)
            .await?
        } else {
            sqlx::query(
                "UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1, \
                 circuit_open_until_us = CASE WHEN consecutive_failures + 1 >= $2 THEN $3 \
                 ELSE circuit_open_until_us END WHERE id = $1 \
                 RETURNING consecutive_failures, circuit_open_until_us",
            )
            .bind(a.endpoint_id)
            .bind(rule.open_after)
            .bind(rule.open_until_us)
            .fetch_optional(&mut *tx)
            .await?
        };
        tx.commit().await?;
        Ok(match circuit {
            Some(row) => crate::EndpointCircuit {
                consecutive_failures: row.try_get("consecutive_failures")?,
                open_until_us: row.try_get("circuit_open_until_us")?,
            },
            None => crate::EndpointCircuit::default(),
        })
    }

    async fn retry_webhook_message(
        &self,
        endpoint_id: uuid::Uuid,
        message_id: uuid::Uuid,
        now_us: i64,
    ) -> Result<Option<String>> {
        let mut tx = self.sql().writer.begin().await?;
        let state: Option<String> = sqlx::query_scalar(
            "SELECT state FROM webhook_messages WHERE id = $1 AND endpoint_id = $2",
        )
        .bind(message_id)
        .bind(endpoint_id)
        .fetch_optional(&mut *tx)
        .await?;
        let mut answer = state;
        if answer.as_deref() == Some("failed") {
            // Not when the endpoint was deleted meanwhile (which gave up its messages), nor
            // when another retry got there first.
            let done = sqlx::query(
                "UPDATE webhook_messages SET state = 'pending', next_attempt_us = $1, \
                 finished_at = NULL, locked_until_us = NULL \
                 WHERE id = $2 AND state = 'failed' AND endpoint_id IN \
                 (SELECT id FROM webhook_endpoints WHERE deleted_at IS NULL)",
            )
            .bind(now_us)
            .bind(message_id)
            .execute(&mut *tx)
            .await?;
            let moved = DB::rows_affected(&done);
            if moved == 1 {
                answer = Some("requeued".into());
            }
        }
        tx.commit().await?;
        Ok(answer)
    }

    /// The cursor is one of the endpoint's own messages, never a position in the table every
    /// tenant writes to (issue 52.7): another endpoint's message gives an empty page.
    async fn list_webhook_messages(
        &self,
        endpoint_id: uuid::Uuid,
        state: Option<crate::MessageState>,
        before: Option<uuid::Uuid>,
        limit: i64,
    ) -> Result<Vec<crate::WebhookMessageRecord>> {
        let older = if before.is_some() {
            " AND m.seq < (SELECT c.seq FROM webhook_messages c WHERE c.id = $4 AND c.endpoint_id = $1)"
        } else {
            ""
        };
        let query = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT m.seq, m.id, m.event_type, m.state, m.attempts, m.created_at, \
             m.next_attempt_us, m.finished_at, \
             COALESCE((SELECT t.public_id FROM tax_registrations t WHERE t.id = m.case_id), \
                      m.case_id) AS case_id \
             FROM webhook_messages m \
             WHERE m.endpoint_id = $1 AND ($2 IS NULL OR m.state = $2){older} \
             ORDER BY m.seq DESC LIMIT $3",
        )))
        .bind(endpoint_id)
        .bind(state.map(crate::MessageState::as_str))
        .bind(limit);
        let query = match before {
            Some(id) => query.bind(id),
            None => query,
        };
        query
            .fetch_all(&self.sql().pool)
            .await?
            .iter()
            .map(|r| {
                let state = crate::rows::message_state(&r.try_get::<String, _>("state")?)?;
                let next_us: i64 = r.try_get("next_attempt_us")?;
                Ok(crate::WebhookMessageRecord {
                    seq: r.try_get("seq")?,
                    id: r.try_get("id")?,
                    event_type: crate::rows::event_type(&r.try_get::<String, _>("event_type")?)?,
                    case_id: r.try_get("case_id")?,
                    attempts: r.try_get("attempts")?,
                    created_at: r.try_get("created_at")?,
                    next_attempt_at: crate::next_attempt(state, next_us),
                    finished_at: r.try_get("finished_at")?,
                    state,
                })
            })
            .collect()
    }

    /// The cursor is one of the endpoint's own attempts (message and attempt number), never a
    /// position in the table every tenant writes to (issue 52.7).
    async fn list_webhook_attempts(
        &self,
        endpoint_id: uuid::Uuid,
        before: Option<(uuid::Uuid, i32)>,
        limit: i64,
    ) -> Result<Vec<crate::WebhookAttemptRecord>> {
        let older = if before.is_some() {
            " AND a.seq < (SELECT c.seq FROM webhook_attempts c WHERE c.message_id = $3 \
             AND c.attempt = $4 AND c.endpoint_id = $1)"
        } else {
            ""
        };
        let query = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT a.seq, a.message_id, a.endpoint_id, a.attempt, a.at, a.status_code, a.error, \
             a.duration_ms, a.outcome, m.event_type, m.state, m.next_attempt_us, \
             COALESCE((SELECT t.public_id FROM tax_registrations t WHERE t.id = m.case_id), \
                      m.case_id) AS case_id \
             FROM webhook_attempts a JOIN webhook_messages m ON m.id = a.message_id \
             WHERE a.endpoint_id = $1{older} \
             ORDER BY a.seq DESC LIMIT $2",
        )))
        .bind(endpoint_id)
        .bind(limit);
        let query = match before {
            Some((message, attempt)) => query.bind(message).bind(attempt),
            None => query,
        };
        query
            .fetch_all(&self.sql().pool)
            .await?
            .iter()
            .map(|r| {
                let state = crate::rows::message_state(&r.try_get::<String, _>("state")?)?;
                let next_us: i64 = r.try_get("next_attempt_us")?;
                Ok(crate::WebhookAttemptRecord {
                    seq: r.try_get("seq")?,
                    attempt: crate::WebhookAttempt {
                        message_id: r.try_get("message_id")?,
                        endpoint_id: r.try_get("endpoint_id")?,
                        attempt: r.try_get("attempt")?,
                        at: r.try_get("at")?,
                        status_code: r.try_get("status_code")?,
                        error: r.try_get("error")?,
                        duration_ms: r.try_get("duration_ms")?,
                    },
                    outcome: r.try_get("outcome")?,
                    event_type: crate::rows::event_type(&r.try_get::<String, _>("event_type")?)?,
                    case_id: r.try_get("case_id")?,
                    next_attempt_at: crate::next_attempt(state, next_us),
                    message_state: state,
                })
            })
            .collect()
    }
);

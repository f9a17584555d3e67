//! The provider's event log (`events`): written with each change's webhook messages
//! (`sql::events`), listed newest first by `GET /v1/events`.

use sqlx::Row;

use crate::{EventFilter, EventRecord, EventScope, Result};

shared_impl!(
    /// Events of `scope` narrowed by `filter`, newest first, older than the scope's own event
    /// `before` (exclusive), at most `limit`. The cursor is a row of the caller's, never a
    /// position in the log every tenant writes to: a page tells nothing of other tenants'
    /// events, and an event of another scope (or one pruned) gives an empty page. The statement
    /// names only the conditions in use, so each combination reads its own index
    /// (`events_provider`, `events_provider_type`, `events_case`, `events_company`,
    /// `events_provider_environment`).
    pub(crate) async fn list_events(
        &self,
        scope: EventScope,
        filter: &EventFilter,
        before: Option<uuid::Uuid>,
        limit: i64,
    ) -> Result<Vec<EventRecord>> {
        let mut sql = String::from(
            "SELECT seq, id, case_id, company_id, environment, event_type, payload, created_at \
             FROM events WHERE TRUE",
        );
        let mut n = 0;
        let mut condition = |sql: &mut String, column: &str| {
            n += 1;
            sql.push_str(&format!(" AND {column} = ${n}"));
        };
        let scope_column = match scope {
            EventScope::Provider(_) => Some("provider_id"),
            EventScope::Company(_) => Some("company_id"),
            EventScope::All => None,
        };
        let scope_id = match scope {
            EventScope::Provider(id) | EventScope::Company(id) => Some(id),
            EventScope::All => None,
        };
        if let Some(column) = scope_column {
            condition(&mut sql, column);
        }
        if filter.event_type.is_some() {
            condition(&mut sql, "event_type");
        }
        if filter.case_id.is_some() {
            condition(&mut sql, "case_id");
        }
        if filter.environment.is_some() {
            condition(&mut sql, "environment");
        }
        if before.is_some() {
            n += 1;
            // The scope's own row: `$1` is the scope's id where there is one.
            let own = scope_column
                .map(|c| format!(" AND c.{c} = $1"))
                .unwrap_or_default();
            sql.push_str(&format!(
                " AND seq < (SELECT c.seq FROM events c WHERE c.id = ${n}{own})"
            ));
        }
        n += 1;
        sql.push_str(&format!(" ORDER BY seq DESC LIMIT ${n}"));
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        if let Some(id) = scope_id {
            query = query.bind(id);
        }
        if let Some(t) = &filter.event_type {
            query = query.bind(t.clone());
        }
        if let Some(id) = filter.case_id {
            query = query.bind(id);
        }
        if let Some(e) = filter.environment {
            query = query.bind(e.as_str());
        }
        if let Some(id) = before {
            query = query.bind(id);
        }
        query
            .bind(limit)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| {
                let environment: String = r.try_get("environment")?;
                Ok(EventRecord {
                    seq: r.try_get("seq")?,
                    id: r.try_get("id")?,
                    case_id: r.try_get("case_id")?,
                    company_id: r.try_get("company_id")?,
                    environment: super::environment(&environment)?,
                    event_type: r.try_get("event_type")?,
                    payload: r.try_get("payload")?,
                    created_at: r.try_get("created_at")?,
                })
            })
            .collect()
    }
);

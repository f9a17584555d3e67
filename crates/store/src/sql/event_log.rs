//! The provider's event log (`events`): written with each change's webhook messages
//! (`sql::events`), listed newest first by `GET /v1/events`.

use sqlx::Row;

use crate::{EventFilter, EventRecord, EventScope, Result};

shared_impl!(
    /// Events of `scope` narrowed by `filter`, newest first, before `before_seq` (exclusive),
    /// at most `limit`. The statement names only the conditions in use, so each combination
    /// reads its own index (`events_provider`, `events_provider_type`, `events_case`,
    /// `events_company`, migrations sqlite 0017 / pg 0020).
    pub(crate) async fn list_events(
        &self,
        scope: EventScope,
        filter: &EventFilter,
        before_seq: Option<i64>,
        limit: i64,
    ) -> Result<Vec<EventRecord>> {
        let mut sql = String::from(
            "SELECT seq, id, case_id, company_id, environment, event_type, payload, created_at \
             FROM events WHERE seq < $1",
        );
        let mut n = 1;
        let mut condition = |column: &str| {
            n += 1;
            sql.push_str(&format!(" AND {column} = ${n}"));
        };
        let scope_id = match scope {
            EventScope::Provider(id) => {
                condition("provider_id");
                Some(id)
            }
            EventScope::Company(id) => {
                condition("company_id");
                Some(id)
            }
            EventScope::All => None,
        };
        if filter.event_type.is_some() {
            condition("event_type");
        }
        if filter.case_id.is_some() {
            condition("case_id");
        }
        if filter.environment.is_some() {
            condition("environment");
        }
        n += 1;
        sql.push_str(&format!(" ORDER BY seq DESC LIMIT ${n}"));
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(before_seq.unwrap_or(i64::MAX));
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

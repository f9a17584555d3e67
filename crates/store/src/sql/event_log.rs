//! The provider's event log (`events`): written with each change's webhook messages
//! (`sql::events`), listed newest first by `GET /v1/events`.

use sqlx::Row;

use super::lists::{Arg, Page, Where};
use crate::{EventFilter, EventRecord, EventScope, Result};

role_impl!(
    type Role = EventStore;

    /// Events of `scope` narrowed by `filter`, newest first, older than the scope's own event
    /// `before` (exclusive), at most `limit`. The cursor is a row of the caller's, never a
    /// position in the log every tenant writes to: a page tells nothing of other tenants'
    /// events, and an event of another scope (or one pruned) gives an empty page. The statement
    /// names only the conditions in use, so each combination reads its own index
    /// (`events_provider`, `events_provider_type`, `events_case`, `events_company`,
    /// `events_provider_environment`).
    async fn list_events(
        &self,
        scope: EventScope,
        filter: &EventFilter,
        before: Option<uuid::Uuid>,
        limit: i64,
    ) -> Result<Vec<EventRecord>> {
        let page = page(scope, filter, before, limit);
        super::lists::query::<DB>(&page)
            .fetch_all(&self.sql().pool)
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
                    event_type: crate::rows::event_type(&r.try_get::<String, _>("event_type")?)?,
                    payload: r.try_get("payload")?,
                    created_at: r.try_get("created_at")?,
                })
            })
            .collect()
    }
);

/// The statement of [`list_events`](super::Shared::list_events) for `scope`, `filter` and
/// `before` (the plans' check, `crate::plans`, explains the same text).
pub(crate) fn page(
    scope: EventScope,
    filter: &EventFilter,
    before: Option<uuid::Uuid>,
    limit: i64,
) -> Page {
    let mut w = Where::default();
    let scope_column = match scope {
        EventScope::Provider(id) => Some(("provider_id", id)),
        EventScope::Company(id) => Some(("company_id", id)),
        EventScope::All => None,
    };
    if let Some((column, id)) = scope_column {
        w.condition(column, "=", Arg::Id(id));
    }
    if let Some(t) = &filter.event_type {
        w.condition("event_type", "=", Arg::Text(t.as_str().into()));
    }
    if let Some(id) = filter.case_id {
        w.condition("case_id", "=", Arg::Id(id));
    }
    if let Some(e) = filter.environment {
        w.condition("environment", "=", Arg::Text(e.as_str().into()));
    }
    if let Some(id) = before {
        let n = w.bind(Arg::Id(id));
        // The scope's own row: `$1` is the scope's id where there is one.
        let own = scope_column
            .map(|(c, _)| format!(" AND c.{c} = $1"))
            .unwrap_or_default();
        w.conditions.push(format!(
            "seq < (SELECT c.seq FROM events c WHERE c.id = ${n}{own})"
        ));
    }
    let mut sql = String::from(
        "SELECT seq, id, case_id, company_id, environment, event_type, payload, created_at \
         FROM events",
    );
    if !w.conditions.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&w.conditions.join(" AND "));
    }
    let n = w.bind(Arg::Int(limit));
    sql.push_str(&format!(" ORDER BY seq DESC LIMIT ${n}"));
    Page::new(sql, w.args)
}

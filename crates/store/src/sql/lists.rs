//! The case lists of providers and client companies (`CaseListStore::list_case_page`): one
//! statement per page, built from the filters given, newest first by the time-ordered key.

use std::sync::Arc;

use sqlx::{Encode, Row, Type};
use time::OffsetDateTime;
use uuid::Uuid;

use super::Dialect;
use domain::case_state::CaseStatus;

#[cfg(doc)]
use crate::Repository;
use crate::{
    CaseCursor, CaseDelivery, CaseKind, CaseListFilter, CaseListItem, CaseListScope, CaseOwner,
    CaseSearch, Result,
};

/// How far a case's `created_at` may be from the time its key records (both are taken in the
/// create's request, milliseconds apart): the `created_after` / `created_before` filters bound
/// the key by them widened by this, so that the index walk starts and stops near them, and
/// compare `created_at` itself exactly.
const KEY_SLACK: time::Duration = time::Duration::hours(1);

/// A value bound to the statement.
#[derive(Debug, Clone)]
pub(crate) enum Arg {
    Id(Uuid),
    Text(String),
    Int(i64),
}

/// The statement of a page and its values (`$1`, `$2`, ... in order).
#[derive(Debug)]
pub(crate) struct Page {
    pub(crate) sql: Arc<str>,
    args: Vec<Arg>,
    /// Prepared for these values alone (PostgreSQL then plans it with them), not kept for the
    /// next ones.
    planned_per_values: bool,
}

impl Page {
    /// A statement planned once and kept.
    pub(crate) fn new(sql: String, args: Vec<Arg>) -> Self {
        Page {
            sql: sql.into(),
            args,
            planned_per_values: false,
        }
    }
}

/// The smallest UUIDv7 of the millisecond `at` is in (every v7 key of that millisecond or
/// later sorts at or after it, every earlier one before).
fn key_floor(at: OffsetDateTime) -> Uuid {
    let ms = (at.unix_timestamp_nanos() / 1_000_000).clamp(0, (1 << 48) - 1) as u128;
    Uuid::from_u128(ms << 80)
}

/// RFC 3339 in UTC, as the stores hold `created_at` (see [`Dialect::CREATED_AT`]). A time
/// outside the years 1 to 9999 (`0000-01-01T00:30:00+01:00` is in year -1 in UTC, and
/// PostgreSQL's timestamps have no year 0: found by the lists' fuzz test) compares as the
/// nearest one it can, which no case is created at either.
fn utc_text(at: OffsetDateTime) -> Result<String> {
    let (first, last) = (
        time::macros::datetime!(0001-01-01 0:00 UTC),
        time::macros::datetime!(9999-12-31 23:59:59.999_999 UTC),
    );
    // `to_offset` panics where UTC lies beyond year 9999 (`9999-12-31T23:00:00-01:00`):
    // such a time is later than every case, as the last one RFC 3339 can write.
    at.checked_to_offset(time::UtcOffset::UTC)
        .unwrap_or(if at.offset().is_negative() {
            last
        } else {
            first
        })
        .clamp(first, last)
        .format(&time::format_description::well_known::Rfc3339)
        .map_err(|e| crate::StoreError::Corrupt(format!("a time out of range: {e}")))
}

/// The conditions of a page's statement and the values they bind.
#[derive(Debug, Default)]
pub(crate) struct Where {
    pub(crate) conditions: Vec<String>,
    pub(crate) args: Vec<Arg>,
}

impl Where {
    /// Binds `arg` as the next parameter: its number.
    pub(crate) fn bind(&mut self, arg: Arg) -> usize {
        self.args.push(arg);
        self.args.len()
    }

    /// `column op $n` with `arg` as `$n`.
    pub(crate) fn condition(&mut self, column: &str, op: &str, arg: Arg) {
        let n = self.bind(arg);
        self.conditions.push(format!("{column} {op} ${n}"));
    }
}

/// What the statements of a kind's lists read from.
pub(crate) struct Table {
    pub(crate) name: &'static str,
    /// The order's column (a trade registration's id, a tax registration's list key).
    position: &'static str,
    public_id: &'static str,
    /// The office a filter compares.
    office: &'static str,
    /// The office and legal form columns of an item.
    columns: &'static str,
}

pub(crate) fn table(kind: CaseKind) -> Table {
    match kind {
        CaseKind::Trade => Table {
            name: "trade_registrations",
            position: "t.id",
            public_id: "t.id",
            office: "t.office_key",
            columns: "t.office_key, t.trade_office ->> 'name' AS office_name, \
                      NULL AS legal_form",
        },
        CaseKind::Tax => Table {
            name: "tax_registrations",
            position: "t.list_key",
            public_id: "t.public_id",
            office: "t.tax_office_number",
            columns: "t.tax_office_number AS office_key, NULL AS office_name, t.legal_form",
        },
    }
}

/// The conditions of `filter` that [`CaseListStore::count_cases_by_status`] honours too:
/// environment, provider, office.
fn counted_filters(w: &mut Where, table: &Table, filter: &CaseListFilter) {
    if let Some(e) = filter.environment {
        w.condition("t.environment", "=", Arg::Text(e.as_str().into()));
    }
    if let Some(p) = filter.provider_id {
        w.condition("t.provider_id", "=", Arg::Id(p));
    }
    if let Some(o) = &filter.office {
        w.condition(table.office, "=", Arg::Text(o.clone()));
    }
}

pub(crate) fn page<DB: Dialect>(
    kind: CaseKind,
    scope: CaseListScope,
    filter: &CaseListFilter,
    cursor: Option<CaseCursor>,
    limit: i64,
) -> Result<Page> {
    let table = table(kind);
    let position = table.position;
    let mut w = Where::default();
    match scope.owner {
        CaseOwner::All => {}
        CaseOwner::Provider(p) => w.condition("t.provider_id", "=", Arg::Id(p)),
        CaseOwner::Company(c) => w.condition("t.company_id", "=", Arg::Id(c)),
    }
    if let Some(c) = filter.company_id {
        w.condition("t.company_id", "=", Arg::Id(c));
    }
    if let Some(r) = &filter.client_reference {
        w.condition("t.client_reference", "=", Arg::Text(r.clone()));
    }
    if let Some(s) = filter.status {
        w.condition("t.status", "=", Arg::Text(s.as_str().into()));
    }
    counted_filters(&mut w, &table, filter);
    match &filter.search {
        None => {}
        Some(CaseSearch::Id(id)) => {
            let n = w.bind(Arg::Id(*id));
            w.conditions.push(match kind {
                CaseKind::Trade => format!("t.id = ${n}"),
                CaseKind::Tax => format!("(t.id = ${n} OR t.public_id = ${n})"),
            });
        }
        Some(CaseSearch::PostalCode(code)) => {
            w.condition("t.postal_code", "=", Arg::Text(code.clone()))
        }
        Some(search @ CaseSearch::Text(_)) => {
            for (condition, arg) in DB::text_search(kind, &search.words()) {
                let n = w.bind(Arg::Text(arg));
                w.conditions.push(condition.replace('?', &n.to_string()));
            }
        }
    }
    let (created_column, created_param) = DB::CREATED_AT;
    for (at, op, slack) in [
        (filter.created_after, ">=", -KEY_SLACK),
        (filter.created_before, "<", KEY_SLACK),
    ] {
        let Some(at) = at else { continue };
        w.condition(position, op, Arg::Id(key_floor(at.saturating_add(slack))));
        let n = w.bind(Arg::Text(utc_text(at)?));
        let param = created_param.replace('?', &n.to_string());
        w.conditions.push(format!("{created_column} {op} {param}"));
    }
    let (op, order) = if filter.oldest_first {
        (">", "ASC")
    } else {
        ("<", "DESC")
    };
    match cursor {
        None => {}
        Some(CaseCursor::Position(p)) => w.condition(position, op, Arg::Id(p)),
        Some(CaseCursor::Case(id)) if kind == CaseKind::Trade => {
            w.condition(position, op, Arg::Id(id))
        }
        Some(CaseCursor::Case(id)) => {
            let n = w.bind(Arg::Id(id));
            w.conditions.push(format!(
                "{position} {op} (SELECT c.list_key FROM tax_registrations c WHERE c.id = ${n})"
            ));
        }
    }
    let mut sql = format!(
        "SELECT {position} AS position, t.id, {public_id} AS public_id, t.company_id, \
         c.name AS company_name, t.provider_id, t.environment, t.package, t.status, \
         t.client_reference, t.created_at, {columns} \
         FROM {name} t{hint} JOIN companies c ON c.id = t.company_id",
        public_id = table.public_id,
        columns = table.columns,
        name = table.name,
        hint = tenant_index_hint::<DB>(&table, scope, filter),
    );
    if !w.conditions.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&w.conditions.join(" AND "));
    }
    let n = w.bind(Arg::Int(limit));
    sql.push_str(&format!(" ORDER BY {position} {order} LIMIT ${n}"));
    Ok(Page {
        sql: sql.into(),
        args: w.args,
        // Words are matched by an index or by walking the order, as the database's planner
        // finds cheaper for the words given: planned with them, not once for every search.
        planned_per_values: matches!(filter.search, Some(CaseSearch::Text(_))),
    })
}

/// On SQLite, the index a page of one tenant reads, named (`INDEXED BY`): the company's for a
/// client company's cases (or a provider's filtered by company), else the provider's index
/// with the most of the page's conditions, in the list's order. SQLite plans without
/// statistics (the service runs no `ANALYZE`) and otherwise takes an index of the list's order
/// that avoids a sort and filters the rest, walking every case of the provider for a client
/// reference or a status it has few of (3 to 5.6 s at a million cases; issue 52.3,
/// docs/operations.md "Reads"). PostgreSQL's statistics tell it.
fn tenant_index_hint<DB: Dialect>(
    table: &Table,
    scope: CaseListScope,
    filter: &CaseListFilter,
) -> String {
    if DB::BACKEND != "sqlite" {
        return String::new();
    }
    let index = match scope.owner {
        CaseOwner::All => return String::new(),
        CaseOwner::Company(_) => "company_list",
        CaseOwner::Provider(_) if filter.company_id.is_some() => "company_list",
        CaseOwner::Provider(_) if filter.client_reference.is_some() => match filter.status {
            Some(_) => "provider_reference",
            None => "provider_reference_list",
        },
        CaseOwner::Provider(_) => match (filter.status, filter.environment) {
            (Some(_), Some(_)) => "provider_environment_status",
            (Some(_), None) => "provider_status",
            (None, Some(_)) => "provider_environment",
            (None, None) => "provider_list",
        },
    };
    format!(" INDEXED BY {}_{index}", table.name)
}

/// The statement of [`CaseListStore::count_cases_by_status`].
pub(crate) fn count<DB: Dialect>(kind: CaseKind, filter: &CaseListFilter) -> Page {
    let table = table(kind);
    let mut w = Where::default();
    counted_filters(&mut w, &table, filter);
    let mut sql = format!("SELECT t.status, count(*) AS n FROM {} t", table.name);
    if !w.conditions.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&w.conditions.join(" AND "));
    }
    sql.push_str(" GROUP BY t.status");
    Page {
        sql: sql.into(),
        args: w.args,
        planned_per_values: false,
    }
}

/// Runs a statement built here with its values bound.
pub(crate) fn query<'q, DB: Dialect>(
    page: &Page,
) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments>
where
    Uuid: Encode<'q, DB> + Type<DB>,
    String: Encode<'q, DB> + Type<DB>,
    i64: Encode<'q, DB> + Type<DB>,
{
    // The text is built from constants and placeholder numbers only.
    let mut query =
        sqlx::query(sqlx::AssertSqlSafe(page.sql.clone())).persistent(!page.planned_per_values);
    for arg in &page.args {
        query = match arg {
            Arg::Id(id) => query.bind(*id),
            Arg::Text(t) => query.bind(t.clone()),
            Arg::Int(n) => query.bind(*n),
        };
    }
    query
}

role_impl!(
    type Role = CaseListStore;

    async fn list_case_page(
        &self,
        kind: CaseKind,
        scope: CaseListScope,
        filter: &CaseListFilter,
        cursor: Option<CaseCursor>,
        limit: i64,
    ) -> Result<Vec<CaseListItem>> {
        let page = page::<DB>(kind, scope, filter, cursor, limit)?;
        let rows = self
            .sql()
            .read(|c| Box::pin(query::<DB>(&page).fetch_all(c)))
            .await?;
        rows.iter()
            .map(|row| {
                let (environment, package, status) =
                    crate::sql::Shared::<DB>::case_state(kind, row)?;
                Ok(CaseListItem {
                    position: row.try_get("position")?,
                    id: row.try_get("id")?,
                    public_id: row.try_get("public_id")?,
                    company_id: row.try_get("company_id")?,
                    company_name: row.try_get("company_name")?,
                    provider_id: row.try_get("provider_id")?,
                    environment,
                    package,
                    status,
                    client_reference: row.try_get("client_reference")?,
                    created_at: row.try_get("created_at")?,
                    office_key: row.try_get("office_key")?,
                    office_name: row.try_get("office_name")?,
                    legal_form: row
                        .try_get::<Option<String>, _>("legal_form")?
                        .map(|f| {
                            crate::rows::named("legal form", &f, domain::tax::TaxLegalForm::parse)
                        })
                        .transpose()?,
                })
            })
            .collect()
    }

    async fn count_cases_by_status(
        &self,
        kind: CaseKind,
        filter: &CaseListFilter,
    ) -> Result<Vec<(CaseStatus, i64)>> {
        let statement = count::<DB>(kind, filter);
        let rows = self
            .sql()
            .read(|c| Box::pin(query::<DB>(&statement).fetch_all(c)))
            .await?;
        let mut counts: Vec<(CaseStatus, i64)> =
            CaseStatus::of(kind).into_iter().map(|s| (s, 0)).collect();
        for row in &rows {
            let status: String = row.try_get("status")?;
            let status = crate::rows::case_status(kind, &status)?;
            let n: i64 = row.try_get("n")?;
            if let Some(entry) = counts.iter_mut().find(|(s, _)| *s == status) {
                entry.1 = n;
            }
        }
        Ok(counts)
    }

    async fn list_case_deliveries(&self, case_id: Uuid, limit: i64) -> Result<Vec<CaseDelivery>> {
        let rows = self
            .sql()
            .read(|c| {
                Box::pin(
                    sqlx::query(
                        "SELECT m.id, m.endpoint_id, e.url, e.deleted_at IS NOT NULL AS deleted, \
                         m.event_type, m.state, m.attempts, m.created_at, m.next_attempt_us, \
                         m.finished_at, a.status_code, a.error, a.at \
                         FROM webhook_messages m \
                         JOIN webhook_endpoints e ON e.id = m.endpoint_id \
                         LEFT JOIN webhook_attempts a ON a.seq = \
                           (SELECT max(x.seq) FROM webhook_attempts x WHERE x.message_id = m.id) \
                         WHERE m.case_id = $1 ORDER BY m.seq DESC LIMIT $2",
                    )
                    .bind(case_id)
                    .bind(limit)
                    .fetch_all(c),
                )
            })
            .await?;
        rows.iter()
            .map(|r| {
                let state = crate::rows::message_state(&r.try_get::<String, _>("state")?)?;
                let next_us: i64 = r.try_get("next_attempt_us")?;
                Ok(CaseDelivery {
                    message_id: r.try_get("id")?,
                    endpoint_id: r.try_get("endpoint_id")?,
                    endpoint_url: r.try_get("url")?,
                    endpoint_deleted: r.try_get("deleted")?,
                    event_type: crate::rows::event_type(&r.try_get::<String, _>("event_type")?)?,
                    attempts: r.try_get("attempts")?,
                    last_status_code: r.try_get("status_code")?,
                    last_error: r.try_get("error")?,
                    last_attempt_at: r.try_get("at")?,
                    created_at: r.try_get("created_at")?,
                    next_attempt_at: crate::next_attempt(state, next_us),
                    finished_at: r.try_get("finished_at")?,
                    state,
                })
            })
            .collect()
    }
);
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_floor_orders_with_v7_keys() {
        let at = time::macros::datetime!(2026-11-27 01:00:00.5 UTC);
        let floor = key_floor(at);
        let ts =
            uuid::Timestamp::from_unix(uuid::NoContext, at.unix_timestamp() as u64, 500_000_000);
        let same_ms = Uuid::new_v7(ts);
        assert!(floor <= same_ms);
        let earlier =
            uuid::Timestamp::from_unix(uuid::NoContext, at.unix_timestamp() as u64, 499_000_000);
        assert!(Uuid::new_v7(earlier) < floor);
    }

    #[test]
    fn utc_text_without_trailing_zeros_orders_as_instants_once_the_z_is_gone() {
        let texts: Vec<String> = [
            time::macros::datetime!(2026-11-27 01:00:05 UTC),
            time::macros::datetime!(2026-11-27 01:00:05.000120 UTC),
            time::macros::datetime!(2026-11-27 01:00:05.12 UTC),
            time::macros::datetime!(2026-11-27 01:00:05.5 UTC),
            time::macros::datetime!(2026-11-27 03:00:06 +02:00),
        ]
        .into_iter()
        .map(|t| utc_text(t).unwrap().trim_end_matches('Z').to_owned())
        .collect();
        let mut sorted = texts.clone();
        sorted.sort();
        assert_eq!(texts, sorted);
        assert_eq!(texts[4], "2026-11-27T01:00:06");
        // Times RFC 3339 cannot write in UTC (or PostgreSQL cannot read: year 0) compare as
        // the nearest it can; so do those past year 9999 in UTC, without a panic.
        let early = time::macros::datetime!(0000-01-01 0:30 +01:00);
        assert_eq!(utc_text(early).unwrap(), "0001-01-01T00:00:00Z");
        let late = time::macros::datetime!(9999-12-31 23:00 -01:00);
        assert_eq!(utc_text(late).unwrap(), "9999-12-31T23:59:59.999999Z");
        assert_eq!(key_floor(early.saturating_add(-KEY_SLACK)), Uuid::nil());
    }
}

//! The query plans of every list statement (issue 52.3): each combination of the filters,
//! scopes, searches, orders and cursors the API and the console can ask for, for both case
//! kinds and the event log, explained by the database on the statement text the lists run.
//!
//! Two users: the tests (`plans_tests`, on both backends: no statement may read a whole table,
//! on PostgreSQL with sequential scans turned off so that a small database shows what the
//! indexes allow) and `examples/explain_lists.rs`, which explains them on a database of a
//! million cases and their events and prints the plans docs/operations.md quotes. Not part of
//! the store's interface.

use uuid::Uuid;

use crate::sql::Dialect;
use crate::sql::lists::Page;
use crate::{
    CaseCursor, CaseKind, CaseListFilter, CaseListScope, CaseOwner, CaseSearch, EventFilter,
    EventScope, Result,
};
use domain::company::Environment;

/// The ids the statements filter by (any will do for a plan; the example passes real ones so
/// that PostgreSQL's estimates are those of a real page).
#[derive(Debug, Clone, Copy)]
pub struct PlanIds {
    pub provider: Uuid,
    pub company: Uuid,
    pub case: Uuid,
}

/// One statement and the database's plan for it.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Which list, scope and filters (`trade provider status+environment cursor`).
    pub statement: String,
    /// The plan as the database prints it, one step per line.
    pub plan: String,
    /// Whether the statement is one tenant's (a provider's or a client company's).
    pub tenant: bool,
    /// How long the statement itself took, run once after it was explained, in milliseconds.
    pub ms: f64,
}

impl Plan {
    /// Whether a step reads a whole table of cases or events: SQLite's `SCAN <table>` without
    /// an index (a full-text table's match is an index), PostgreSQL's `Seq Scan`.
    pub fn reads_a_whole_table(&self) -> bool {
        // SQLite's `SCAN events` without a sort walks the log in its order and stops after a
        // page: the operators' log by type or environment (no index, docs/operations.md
        // "Reads"); one tenant's statements must also seek it ([`Plan::seeks_its_tenant`]).
        if !self.sorts() && self.plan.lines().all(|l| !l.contains("Seq Scan")) {
            return false;
        }
        self.plan.lines().any(|l| {
            let l = l.trim_start_matches(|c: char| !c.is_alphabetic());
            l.contains("Seq Scan on")
                || (l.starts_with("SCAN ")
                    && !l.contains(" USING ")
                    && !l.contains(" VIRTUAL TABLE INDEX "))
        })
    }

    /// Whether a statement of one tenant (a provider's or a client company's list, its event
    /// log) finds its rows through an index on an id it filters by (the provider, the company,
    /// the case) rather than by walking the table in its order and filtering: SQLite's
    /// `provider_id=?` in a `SEARCH`, PostgreSQL's `provider_id = ` in an index condition.
    pub fn seeks_its_tenant(&self) -> bool {
        ["provider_id", "company_id", "case_id"].iter().any(|c| {
            self.plan.lines().any(|l| {
                (l.contains("SEARCH ")
                    && (l.contains(&format!("({c}=?")) || l.contains(&format!(" {c}=?"))))
                    || (l.contains("Index Cond") && l.contains(&format!("{c} = ")))
            })
        })
    }

    /// Whether the rows found are sorted (not read in the list's order from an index).
    pub fn sorts(&self) -> bool {
        self.plan
            .lines()
            .any(|l| l.contains("TEMP B-TREE FOR ORDER BY") || l.trim_start().starts_with("Sort"))
    }
}

/// Every subset of `n` options, as bit masks.
fn subsets(n: u32) -> impl Iterator<Item = u32> {
    0..(1u32 << n)
}

fn label(parts: &[(&str, bool)]) -> String {
    let on: Vec<&str> = parts
        .iter()
        .filter(|(_, on)| *on)
        .map(|(l, _)| *l)
        .collect();
    if on.is_empty() {
        "-".into()
    } else {
        on.join("+")
    }
}

/// A status each kind has (`submitted`).
fn submitted(kind: CaseKind) -> domain::case_state::CaseStatus {
    use domain::lifecycle::{TaxStatus, TradeStatus};
    match kind {
        CaseKind::Trade => TradeStatus::Submitted.into(),
        CaseKind::Tax => TaxStatus::Submitted.into(),
    }
}

fn kind_name(kind: CaseKind) -> &'static str {
    match kind {
        CaseKind::Trade => "trade",
        CaseKind::Tax => "tax",
    }
}

/// The statements: the provider's and the client company's lists (`GET
/// /v1/trade-registration` and the tax lists: company, client reference, status, environment,
/// created after and before, cursor), the operators' lists (an environment always; status,
/// provider, office, a search by id, postal code or words, either order, cursor) and their
/// counts by status, and the event log (provider, company or every scope; type, case,
/// environment, cursor).
pub(crate) fn statements<DB: Dialect>(ids: PlanIds) -> Result<Vec<(String, Page)>> {
    let at = time::macros::datetime!(2026-06-01 0:00 UTC);
    let mut out = Vec::new();
    for kind in [CaseKind::Trade, CaseKind::Tax] {
        for (scope_name, owner) in [
            ("provider", CaseOwner::Provider(ids.provider)),
            ("company", CaseOwner::Company(ids.company)),
        ] {
            for m in subsets(7) {
                let on = |bit: u32| m & (1 << bit) != 0;
                // A client company's list has its company as its scope.
                if scope_name == "company" && on(0) {
                    continue;
                }
                let filter = CaseListFilter {
                    company_id: on(0).then_some(ids.company),
                    client_reference: on(1).then(|| "crm-4711".to_string()),
                    status: on(2).then(|| submitted(kind)),
                    environment: on(3).then_some(Environment::Production),
                    created_after: on(4).then_some(at),
                    created_before: on(5).then_some(at + time::Duration::days(30)),
                    ..Default::default()
                };
                let cursor = on(6).then_some(CaseCursor::Position(ids.case));
                let name = format!(
                    "{} {scope_name} {}",
                    kind_name(kind),
                    label(&[
                        ("company", on(0)),
                        ("client_reference", on(1)),
                        ("status", on(2)),
                        ("environment", on(3)),
                        ("created_after", on(4)),
                        ("created_before", on(5)),
                        ("cursor", on(6)),
                    ])
                );
                let scope = CaseListScope { owner };
                out.push((
                    name,
                    crate::sql::lists::page::<DB>(kind, scope, &filter, cursor, 21)?,
                ));
            }
        }
        let searches = [
            ("", None),
            ("q=id", Some(CaseSearch::Id(ids.case))),
            (
                "q=postal_code",
                Some(CaseSearch::PostalCode("10115".into())),
            ),
            ("q=words", CaseSearch::parse("Mustermann Software")),
        ];
        for m in subsets(5) {
            let on = |bit: u32| m & (1 << bit) != 0;
            for (search_name, search) in &searches {
                let filter = CaseListFilter {
                    environment: Some(Environment::Production),
                    status: on(0).then(|| submitted(kind)),
                    provider_id: on(1).then_some(ids.provider),
                    office: on(2).then(|| "11000000".to_string()),
                    search: search.clone(),
                    oldest_first: on(3),
                    ..Default::default()
                };
                let cursor = on(4).then_some(CaseCursor::Case(ids.case));
                let name = format!(
                    "{} operator environment+{}{}{}",
                    kind_name(kind),
                    label(&[
                        ("status", on(0)),
                        ("provider", on(1)),
                        ("office", on(2)),
                        ("oldest_first", on(3)),
                        ("cursor", on(4)),
                    ]),
                    if search_name.is_empty() { "" } else { " " },
                    search_name
                );
                let scope = CaseListScope {
                    owner: CaseOwner::All,
                };
                out.push((
                    name,
                    crate::sql::lists::page::<DB>(kind, scope, &filter, cursor, 101)?,
                ));
            }
        }
        for m in subsets(2) {
            let on = |bit: u32| m & (1 << bit) != 0;
            let filter = CaseListFilter {
                environment: Some(Environment::Production),
                provider_id: on(0).then_some(ids.provider),
                office: on(1).then(|| "11000000".to_string()),
                ..Default::default()
            };
            let name = format!(
                "{} operator counts environment+{}",
                kind_name(kind),
                label(&[("provider", on(0)), ("office", on(1))])
            );
            out.push((name, crate::sql::lists::count::<DB>(kind, &filter)));
        }
    }
    for (scope_name, scope) in [
        ("provider", EventScope::Provider(ids.provider)),
        ("company", EventScope::Company(ids.company)),
        ("operator", EventScope::All),
    ] {
        for m in subsets(4) {
            let on = |bit: u32| m & (1 << bit) != 0;
            let filter = EventFilter {
                event_type: on(0)
                    .then(|| domain::webhook::EventType::parse("registration.completed"))
                    .flatten(),
                case_id: on(1).then_some(ids.case),
                environment: on(2).then_some(Environment::Sandbox),
            };
            let before = on(3).then_some(ids.case);
            let name = format!(
                "events {scope_name} {}",
                label(&[
                    ("type", on(0)),
                    ("case", on(1)),
                    ("environment", on(2)),
                    ("cursor", on(3)),
                ])
            );
            out.push((
                name,
                crate::sql::event_log::page(scope, &filter, before, 51),
            ));
        }
    }
    Ok(out)
}

impl crate::SqliteRepository {
    /// The plan of every list statement ([`statements`]), by `EXPLAIN QUERY PLAN`.
    #[doc(hidden)]
    pub async fn explain_lists(&self, ids: PlanIds) -> Result<Vec<Plan>> {
        let mut plans = Vec::new();
        for (statement, mut page) in statements::<sqlx::Sqlite>(ids)? {
            let tenant = !statement.contains(" operator ");
            page.sql = format!("EXPLAIN QUERY PLAN {}", page.sql).into();
            let rows = crate::sql::lists::query::<sqlx::Sqlite>(&page)
                .fetch_all(&self.sql.pool)
                .await?;
            let plan = rows
                .iter()
                .map(|r| sqlx::Row::try_get::<String, _>(r, "detail"))
                .collect::<std::result::Result<Vec<_>, _>>()?
                .join("\n");
            page.sql = page.sql[page.sql.find("SELECT").unwrap_or(0)..].into();
            let started = std::time::Instant::now();
            crate::sql::lists::query::<sqlx::Sqlite>(&page)
                .fetch_all(&self.sql.pool)
                .await?;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            plans.push(Plan {
                statement,
                plan,
                tenant,
                ms,
            });
        }
        Ok(plans)
    }
}

impl crate::PostgresRepository {
    /// The plan of every list statement ([`statements`]), by `EXPLAIN`; with `seqscan_off`,
    /// sequential scans are turned off for it (a small table then shows whether an index can
    /// serve the statement at all).
    #[doc(hidden)]
    pub async fn explain_lists(&self, ids: PlanIds, seqscan_off: bool) -> Result<Vec<Plan>> {
        let mut conn = self.sql.pool.acquire().await?;
        if seqscan_off {
            sqlx::raw_sql("SET enable_seqscan = off")
                .execute(&mut *conn)
                .await?;
        }
        let mut plans = Vec::new();
        for (statement, mut page) in statements::<sqlx::Postgres>(ids)? {
            let tenant = !statement.contains(" operator ");
            page.sql = format!("EXPLAIN {}", page.sql).into();
            let rows = crate::sql::lists::query::<sqlx::Postgres>(&page)
                .fetch_all(&mut *conn)
                .await?;
            let plan = rows
                .iter()
                .map(|r| sqlx::Row::try_get::<String, _>(r, 0))
                .collect::<std::result::Result<Vec<_>, _>>()?
                .join("\n");
            page.sql = page.sql[page.sql.find("SELECT").unwrap_or(0)..].into();
            let started = std::time::Instant::now();
            crate::sql::lists::query::<sqlx::Postgres>(&page)
                .fetch_all(&mut *conn)
                .await?;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            plans.push(Plan {
                statement,
                plan,
                tenant,
                ms,
            });
        }
        if seqscan_off {
            sqlx::raw_sql("RESET enable_seqscan")
                .execute(&mut *conn)
                .await?;
        }
        Ok(plans)
    }
}

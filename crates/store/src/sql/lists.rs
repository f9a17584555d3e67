//! The case lists of providers and client companies (`Repository::list_case_page`): one
//! statement per page, built from the filters given, newest first by the time-ordered key.

use std::sync::Arc;

use sqlx::{Decode, Encode, Row, Type};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{Dialect, Shared, environment};
use crate::{CaseKind, CaseListFilter, CaseListItem, CaseListScope, CaseOwner, Result};

/// How far a case's `created_at` may be from the time its key records (both are taken in the
/// create's request, milliseconds apart): the `created_after` / `created_before` filters bound
/// the key by them widened by this, so that the index walk starts and stops near them, and
/// compare `created_at` itself exactly.
const KEY_SLACK: time::Duration = time::Duration::hours(1);

/// A value bound to the statement.
#[derive(Debug, Clone)]
enum Arg {
    Id(Uuid),
    Text(String),
    Int(i64),
}

/// The statement of a page and its values (`$1`, `$2`, ... in order).
#[derive(Debug)]
struct Page {
    sql: Arc<str>,
    args: Vec<Arg>,
}

/// The smallest UUIDv7 of the millisecond `at` is in (every v7 key of that millisecond or
/// later sorts at or after it, every earlier one before).
fn key_floor(at: OffsetDateTime) -> Uuid {
    let ms = (at.unix_timestamp_nanos() / 1_000_000).clamp(0, (1 << 48) - 1) as u128;
    Uuid::from_u128(ms << 80)
}

/// RFC 3339 in UTC, as the stores hold `created_at` (see [`Dialect::CREATED_AT`]). A time
/// outside the years RFC 3339 can write (`0000-01-01T00:30:00+01:00` is in year -1 in UTC)
/// compares as the nearest one it can, which no case is created at either.
fn utc_text(at: OffsetDateTime) -> Result<String> {
    let (first, last) = (
        time::macros::datetime!(0000-01-01 0:00 UTC),
        time::macros::datetime!(9999-12-31 23:59:59.999_999 UTC),
    );
    at.to_offset(time::UtcOffset::UTC)
        .clamp(first, last)
        .format(&time::format_description::well_known::Rfc3339)
        .map_err(|e| crate::StoreError::Corrupt(format!("a time out of range: {e}")))
}

/// The conditions of a page's statement and the values they bind.
#[derive(Debug, Default)]
struct Where {
    conditions: Vec<String>,
    args: Vec<Arg>,
}

impl Where {
    /// Binds `arg` as the next parameter: its number.
    fn bind(&mut self, arg: Arg) -> usize {
        self.args.push(arg);
        self.args.len()
    }

    /// `column op $n` with `arg` as `$n`.
    fn condition(&mut self, column: &str, op: &str, arg: Arg) {
        let n = self.bind(arg);
        self.conditions.push(format!("{column} {op} ${n}"));
    }
}

fn page<DB: Dialect>(
    kind: CaseKind,
    scope: CaseListScope,
    filter: &CaseListFilter,
    before: Option<Uuid>,
    limit: i64,
) -> Result<Page> {
    let (table, position, public_id, office) = match kind {
        CaseKind::Trade => (
            "trade_registrations",
            "t.id",
            "t.id",
            "t.trade_office ->> 'key' AS office_key, t.trade_office ->> 'name' AS office_name, \
             NULL AS legal_form",
        ),
        CaseKind::Tax => (
            "tax_registrations",
            "t.list_key",
            "t.public_id",
            "t.tax_office_number AS office_key, NULL AS office_name, t.legal_form",
        ),
    };
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
    if let Some(e) = filter.environment {
        w.condition("t.environment", "=", Arg::Text(e.as_str().into()));
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
    if let Some(b) = before {
        w.condition(position, "<", Arg::Id(b));
    }
    let mut sql = format!(
        "SELECT {position} AS position, t.id, {public_id} AS public_id, t.company_id, \
         c.name AS company_name, t.provider_id, t.environment, t.package, t.status, \
         t.client_reference, t.created_at, {office} \
         FROM {table} t JOIN companies c ON c.id = t.company_id"
    );
    if !w.conditions.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&w.conditions.join(" AND "));
    }
    let n = w.bind(Arg::Int(limit));
    sql.push_str(&format!(" ORDER BY {position} DESC LIMIT ${n}"));
    Ok(Page {
        sql: sql.into(),
        args: w.args,
    })
}

impl<DB: Dialect> Shared<DB>
where
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    for<'r> &'r str: sqlx::ColumnIndex<DB::Row>,
    for<'q> Uuid: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'q> String: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> OffsetDateTime: Decode<'q, DB> + Type<DB>,
{
    pub(crate) async fn list_case_page(
        &self,
        kind: CaseKind,
        scope: CaseListScope,
        filter: &CaseListFilter,
        before: Option<Uuid>,
        limit: i64,
    ) -> Result<Vec<CaseListItem>> {
        let page = page::<DB>(kind, scope, filter, before, limit)?;
        let rows = self
            .read(|c| {
                // The text is built from constants and placeholder numbers only.
                let mut query = sqlx::query(sqlx::AssertSqlSafe(page.sql.clone()));
                for arg in &page.args {
                    query = match arg {
                        Arg::Id(id) => query.bind(*id),
                        Arg::Text(t) => query.bind(t.clone()),
                        Arg::Int(n) => query.bind(*n),
                    };
                }
                Box::pin(query.fetch_all(c))
            })
            .await?;
        rows.iter()
            .map(|row| {
                let environment_text: String = row.try_get("environment")?;
                let package: String = row.try_get("package")?;
                let status: String = row.try_get("status")?;
                Ok(CaseListItem {
                    position: row.try_get("position")?,
                    id: row.try_get("id")?,
                    public_id: row.try_get("public_id")?,
                    company_id: row.try_get("company_id")?,
                    company_name: row.try_get("company_name")?,
                    provider_id: row.try_get("provider_id")?,
                    environment: environment(&environment_text)?,
                    package: crate::rows::named("package", &package, |p| {
                        domain::case_state::CasePackage::parse(kind, p)
                    })?,
                    status: crate::rows::case_status(kind, &status)?,
                    client_reference: row.try_get("client_reference")?,
                    created_at: row.try_get("created_at")?,
                    office_key: row.try_get("office_key")?,
                    office_name: row.try_get("office_name")?,
                    legal_form: row.try_get("legal_form")?,
                })
            })
            .collect()
    }
}

/// The store test both backends run (`sqlite/tests.rs`, `postgres/tests.rs`): scopes, every
/// filter, the order and the cursor, and the columns of an item.
#[cfg(test)]
pub(crate) async fn lists_cases_newest_first_within_the_scope(repo: &dyn crate::Repository) {
    use crate::sqlite::tests::{Sample, trade_case};
    use domain::company::Environment;
    use domain::lifecycle::{TaxStatus, TradeStatus};

    let p = repo.create_provider("P").await.unwrap().id;
    let q = repo.create_provider("Q").await.unwrap().id;
    let mut cases = Vec::new();
    for i in 0..3 {
        let mut case = trade_case(p);
        case.record["client_reference"] = serde_json::json!(format!("R{i}"));
        if i == 0 {
            case.environment = Environment::Production;
            case.new_company.as_mut().unwrap().1.environment = Environment::Production;
        }
        repo.create_trade_registration(&case).await.unwrap();
        cases.push(case);
        // Distinct creation times (they are microseconds).
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    let foreign = trade_case(q);
    repo.create_trade_registration(&foreign).await.unwrap();

    let list = |scope: CaseOwner, filter: CaseListFilter, before: Option<Uuid>, limit: i64| {
        let filter = filter.clone();
        async move {
            repo.list_case_page(
                CaseKind::Trade,
                CaseListScope { owner: scope },
                &filter,
                before,
                limit,
            )
            .await
            .unwrap()
        }
    };
    let ids = |items: &[CaseListItem]| items.iter().map(|i| i.id).collect::<Vec<_>>();
    let all = CaseListFilter::default();
    let (a, b, c) = (cases[0].id, cases[1].id, cases[2].id);

    let items = list(CaseOwner::All, all.clone(), None, 10).await;
    assert_eq!(ids(&items), [foreign.id, c, b, a], "newest first");
    let mine = list(CaseOwner::Provider(p), all.clone(), None, 10).await;
    assert_eq!(ids(&mine), [c, b, a]);
    assert_eq!(
        ids(&list(CaseOwner::Provider(q), all.clone(), None, 10).await),
        [foreign.id]
    );
    assert_eq!(
        ids(&list(
            CaseOwner::Company(cases[1].company_id),
            all.clone(),
            None,
            10
        )
        .await),
        [b]
    );
    // The next page starts after the last position of the one before.
    let first = list(CaseOwner::Provider(p), all.clone(), None, 2).await;
    assert_eq!(ids(&first), [c, b]);
    let rest = list(
        CaseOwner::Provider(p),
        all.clone(),
        Some(first[1].position),
        2,
    )
    .await;
    assert_eq!(ids(&rest), [a]);

    let item = &mine[1];
    assert_eq!(
        (item.public_id, item.company_id, item.provider_id),
        (b, cases[1].company_id, p)
    );
    assert_eq!(item.company_name, "Müller & Söhne GmbH");
    assert_eq!(item.client_reference.as_deref(), Some("R1"));
    assert_eq!(item.status, TradeStatus::Submitted.into());
    assert_eq!(item.package.as_str(), "assisted");
    assert_eq!(item.environment, Environment::Sandbox);
    assert_eq!(item.created_at, cases[1].created_at);
    assert_eq!(
        (item.office_key.as_deref(), item.office_name.as_deref()),
        (Some("11000000"), Some("Berlin"))
    );
    assert_eq!(item.legal_form, None);

    let filtered = |f: CaseListFilter| list(CaseOwner::Provider(p), f, None, 10);
    let by = |f: fn(&mut CaseListFilter)| {
        let mut filter = CaseListFilter::default();
        f(&mut filter);
        filter
    };
    let mut f = CaseListFilter {
        company_id: Some(foreign.company_id),
        ..all.clone()
    };
    assert!(
        filtered(f.clone()).await.is_empty(),
        "another provider's company"
    );
    f.company_id = Some(cases[2].company_id);
    assert_eq!(ids(&filtered(f).await), [c]);
    assert_eq!(
        ids(&filtered(by(|f| f.client_reference = Some("R1".into()))).await),
        [b]
    );
    assert!(
        filtered(by(|f| f.client_reference = Some("R".into())))
            .await
            .is_empty()
    );
    assert_eq!(
        ids(&filtered(by(|f| f.environment = Some(Environment::Production))).await),
        [a]
    );
    assert_eq!(
        ids(&filtered(by(|f| f.status = Some(TradeStatus::Submitted.into()))).await),
        [c, b, a]
    );
    assert!(
        filtered(by(|f| f.status = Some(TradeStatus::Completed.into())))
            .await
            .is_empty()
    );
    let at = cases[1].created_at;
    let f = CaseListFilter {
        created_after: Some(at),
        ..all.clone()
    };
    assert_eq!(ids(&filtered(f).await), [c, b], "at or after");
    let f = CaseListFilter {
        created_before: Some(at),
        ..all.clone()
    };
    assert_eq!(ids(&filtered(f).await), [a], "before");
    // The same instant in another offset.
    let f = CaseListFilter {
        created_after: Some(at.to_offset(time::macros::offset!(+05:30))),
        created_before: Some(cases[2].created_at),
        ..all.clone()
    };
    assert_eq!(ids(&filtered(f).await), [b]);
    let f = CaseListFilter {
        created_after: Some(at + time::Duration::microseconds(1)),
        ..all.clone()
    };
    assert_eq!(ids(&filtered(f).await), [c]);

    // A tax registration: the id its provider knows, its legal form and tax office.
    let sample = Sample::new(p);
    repo.create_tax_registration(&sample.tax).await.unwrap();
    let tax = repo
        .list_case_page(
            CaseKind::Tax,
            CaseListScope {
                owner: CaseOwner::Provider(p),
            },
            &CaseListFilter {
                status: Some(TaxStatus::Submitted.into()),
                client_reference: Some("T-1".into()),
                ..all.clone()
            },
            None,
            10,
        )
        .await
        .unwrap();
    assert_eq!(tax.len(), 1);
    let t = &tax[0];
    assert_eq!((t.id, t.public_id), (sample.tax.id, sample.tax.public_id));
    assert_ne!(t.id, t.public_id);
    assert_eq!(t.legal_form.as_deref(), Some("gmbh"));
    assert_eq!(
        (t.office_key.as_deref(), t.office_name.as_deref()),
        (Some("1116"), None)
    );
    let none = repo
        .list_case_page(
            CaseKind::Tax,
            CaseListScope {
                owner: CaseOwner::Provider(q),
            },
            &all,
            None,
            10,
        )
        .await
        .unwrap();
    assert!(none.is_empty());
}

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
        // Times RFC 3339 cannot write in UTC compare as the nearest it can.
        let early = time::macros::datetime!(0000-01-01 0:30 +01:00);
        assert_eq!(utc_text(early).unwrap(), "0000-01-01T00:00:00Z");
        assert_eq!(key_floor(early.saturating_add(-KEY_SLACK)), Uuid::nil());
    }
}

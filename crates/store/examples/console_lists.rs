//! The operators' lists at scale (docs/adr/0024-operator-case-search.md, BENCHMARKS.md): fills a
//! database with `--seed N` copies of a trade registration of one provider (the example "self"
//! request: Mustermann Software GmbH, 10115 Berlin, office 11000000, form-rendered, production),
//! next to a few cases that stand out (the "assisted" example, submitted, 10117, owners Max
//! Mustermann and Zofia Łukasiewicz; one case of another provider, office 09162000), then times
//! the first page (21 rows, as the API reads for a page of 20) of every filter, search and
//! order, and the counts by status, through the `Repository`.
//!
//! ```sh
//! cargo run -p store --example console_lists -- sqlite:///work/bench/l.db --seed 1000000
//! cargo run -p store --example console_lists -- sqlite:///work/bench/l.db   # time again
//! cargo run -p store --example console_lists -- sqlite:///work/bench/l.db --explain
//! ```
//!
//! Each statement runs four times; the first (cold after the seeding or another statement's
//! pages) and the median of the other three are printed, in milliseconds.

use std::time::Instant;

use domain::case_state::CaseStatus;
use domain::company::Environment;
use domain::lifecycle::TradeStatus;
use serde_json::json;
use store::{
    CaseCursor, CaseKind, CaseListFilter, CaseListScope, CaseOwner, CaseSearch, NewClientCompany,
    NewTradeRegistration,
};
use uuid::Uuid;

fn case(provider: Uuid, request: &str, status: TradeStatus, office: &str) -> NewTradeRegistration {
    let record: serde_json::Value = serde_json::from_str(match request {
        "self" => include_str!("../../../examples/production/trade-registration-self.json"),
        _ => include_str!("../../../examples/production/trade-registration-assisted.json"),
    })
    .unwrap();
    let (id, company) = (Uuid::now_v7(), Uuid::now_v7());
    NewTradeRegistration {
        head: store::CaseHead {
            id,
            company_id: company,
            provider_id: provider,
            environment: Environment::Production,
            package: domain::trade::Package::SelfService,
            status,
            record: record.clone(),
            created_at: time::OffsetDateTime::now_utc(),
            documents: Vec::new(),
            history: vec![store::StatusChange::created(
                status,
                provider,
                time::OffsetDateTime::now_utc(),
            )],
        },
        new_company: Some((
            company,
            NewClientCompany {
                provider_id: provider,
                name: record["name"].as_str().unwrap().into(),
                environment: Environment::Production,
                legal_form: Some("gmbh".into()),
                registration_number: None,
                business_address: None,
            },
        )),
        price_cents: 0,
        trade_office: Some(json!({"key": office, "name": "Amt"})),
        trade_office_candidates: None,
        idempotency: None,
    }
}

/// The first of four runs and the median of the other three, in milliseconds, and what the
/// last one returned; `None` when the statement fails (a schema without an index it needs).
async fn time<T, F: std::future::Future<Output = store::Result<T>>>(
    mut run: impl FnMut() -> F,
) -> Option<(f64, f64, T)> {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..4 {
        let started = Instant::now();
        match run().await {
            Ok(v) => last = Some(v),
            Err(e) => {
                eprintln!("fails: {e}");
                return None;
            }
        }
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    let mut warm = times[1..].to_vec();
    warm.sort_by(f64::total_cmp);
    Some((times[0], warm[1], last.unwrap()))
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let url = args.get(1).expect("a database URL");
    let seed: u64 = match args.get(2).map(String::as_str) {
        Some("--seed") => args[3].parse().expect("a count"),
        _ => 0,
    };
    let repo = store::connect(url).await.expect("the database");
    let providers = repo.list_providers(None, 10).await.unwrap();
    let explain_too = args.iter().any(|a| a == "--explain");
    let (p, r) = if seed > 0 {
        assert!(providers.is_empty(), "seed an empty database");
        let p = repo.create_provider("Bench GmbH").await.unwrap().id;
        let r = repo.create_provider("Rare GmbH").await.unwrap().id;
        let template = case(p, "self", TradeStatus::FormRendered, "11000000");
        repo.create_trade_registration(&template).await.unwrap();
        let started = Instant::now();
        repo.seed_trade_copies(template.id, seed).await.unwrap();
        eprintln!("seeded {seed} in {:.1} s", started.elapsed().as_secs_f64());
        seed_events(url).await;
        let mut rare = case(p, "assisted", TradeStatus::Submitted, "11000000");
        rare.record["registered_office"]["zip"] = json!("10117");
        repo.create_trade_registration(&rare).await.unwrap();
        let other = case(r, "self", TradeStatus::FormRendered, "09162000");
        repo.create_trade_registration(&other).await.unwrap();
        (p, r)
    } else {
        (providers[0].id, providers[1].id)
    };
    // A case from the middle of the list (for a deep page and an id search).
    let all = CaseListFilter::default();
    let scope = CaseListScope {
        owner: CaseOwner::All,
    };
    let newest = repo
        .list_case_page(CaseKind::Trade, scope, &all, None, 1)
        .await
        .unwrap();
    let oldest = repo
        .list_case_page(
            CaseKind::Trade,
            scope,
            &CaseListFilter {
                oldest_first: true,
                ..all.clone()
            },
            None,
            1,
        )
        .await
        .unwrap();
    let halfway = Uuid::from_u128((oldest[0].id.as_u128() >> 1) + (newest[0].id.as_u128() >> 1));
    let middle = repo
        .list_case_page(
            CaseKind::Trade,
            scope,
            &all,
            Some(CaseCursor::Position(halfway)),
            1,
        )
        .await
        .unwrap()[0]
        .id;

    let production = CaseListFilter {
        environment: Some(Environment::Production),
        ..all.clone()
    };
    let with = |f: &dyn Fn(&mut CaseListFilter)| {
        let mut filter = production.clone();
        f(&mut filter);
        filter
    };
    let search = |s: &str| CaseSearch::parse(s).unwrap();
    let submitted: CaseStatus = TradeStatus::Submitted.into();
    let completed: CaseStatus = TradeStatus::Completed.into();
    let cases: Vec<(&str, CaseListFilter, Option<CaseCursor>)> = vec![
        ("no filter", all.clone(), None),
        ("production", production.clone(), None),
        (
            "production, deep page",
            production.clone(),
            Some(CaseCursor::Position(middle)),
        ),
        (
            "sandbox (none)",
            with(&|f| f.environment = Some(Environment::Sandbox)),
            None,
        ),
        (
            "status submitted (1)",
            with(&|f| f.status = Some(submitted)),
            None,
        ),
        (
            "status form-rendered (all)",
            with(&|f| f.status = Some(TradeStatus::FormRendered.into())),
            None,
        ),
        (
            "status completed (none)",
            with(&|f| f.status = Some(completed)),
            None,
        ),
        (
            "provider with all",
            with(&|f| f.provider_id = Some(p)),
            None,
        ),
        ("provider with 1", with(&|f| f.provider_id = Some(r)), None),
        (
            "provider with all, submitted",
            with(&|f| {
                f.provider_id = Some(p);
                f.status = Some(submitted)
            }),
            None,
        ),
        (
            "office with all",
            with(&|f| f.office = Some("11000000".into())),
            None,
        ),
        (
            "office with 1",
            with(&|f| f.office = Some("09162000".into())),
            None,
        ),
        (
            "office with all, submitted",
            with(&|f| {
                f.office = Some("11000000".into());
                f.status = Some(submitted)
            }),
            None,
        ),
        (
            "office with none",
            with(&|f| f.office = Some("05315000".into())),
            None,
        ),
        (
            "id",
            with(&|f| f.search = Some(CaseSearch::Id(middle))),
            None,
        ),
        (
            "postal code with all",
            with(&|f| f.search = Some(search("10115"))),
            None,
        ),
        (
            "postal code with 1",
            with(&|f| f.search = Some(search("10117"))),
            None,
        ),
        (
            "postal code with none",
            with(&|f| f.search = Some(search("99999"))),
            None,
        ),
        (
            "word in all (mustermann)",
            with(&|f| f.search = Some(search("mustermann"))),
            None,
        ),
        (
            "word in 1 (łukasiewicz)",
            with(&|f| f.search = Some(search("łukasiewicz"))),
            None,
        ),
        (
            "word in none (xyzzy)",
            with(&|f| f.search = Some(search("xyzzy"))),
            None,
        ),
        (
            "two words, in 1 (max mustermann)",
            with(&|f| f.search = Some(search("max mustermann"))),
            None,
        ),
        (
            "word in all, status submitted",
            with(&|f| {
                f.search = Some(search("mustermann"));
                f.status = Some(submitted)
            }),
            None,
        ),
    ];
    println!("| page | newest first: cold / warm ms | oldest first: cold / warm ms | rows |");
    println!("|---|---|---|---|");
    for (name, filter, cursor) in cases {
        let mut row = format!("| {name} |");
        let mut rows = 0;
        for oldest_first in [false, true] {
            let filter = CaseListFilter {
                oldest_first,
                ..filter.clone()
            };
            match time(|| repo.list_case_page(CaseKind::Trade, scope, &filter, cursor, 21)).await {
                Some((cold, warm, items)) => {
                    rows = items.len();
                    row.push_str(&format!(" {cold:.1} / {warm:.1} |"));
                }
                None => row.push_str(" fails |"),
            }
        }
        println!("{row} {rows} |");
    }
    println!();
    println!("| counts by status | cold / warm ms |");
    println!("|---|---|");
    for (name, filter) in [
        ("every case", all.clone()),
        ("production", production.clone()),
        ("provider with all", with(&|f| f.provider_id = Some(p))),
        ("provider with 1", with(&|f| f.provider_id = Some(r))),
        (
            "office with all",
            with(&|f| f.office = Some("11000000".into())),
        ),
        (
            "office with 1",
            with(&|f| f.office = Some("09162000".into())),
        ),
    ] {
        if let Some((cold, warm, _)) =
            time(|| repo.count_cases_by_status(CaseKind::Trade, &filter)).await
        {
            println!("| {name} | {cold:.1} / {warm:.1} |");
        }
    }
    if explain_too {
        let company = repo
            .list_case_page(
                CaseKind::Trade,
                scope,
                &production,
                Some(CaseCursor::Position(middle)),
                1,
            )
            .await
            .unwrap()[0]
            .company_id;
        explain(
            url,
            store::plans::PlanIds {
                provider: p,
                company,
                case: middle,
            },
        )
        .await;
    }
}

/// One event per case, as its create writes (`registration.form_rendered`, production), so
/// that the event log's statements meet a log of a million rows.
async fn seed_events(url: &str) {
    let started = Instant::now();
    let (id, payload) = if url.starts_with("sqlite") {
        ("randomblob(16)", "'{}'")
    } else {
        ("gen_random_uuid()", "'{}'")
    };
    let sql = format!(
        "INSERT INTO events (id, provider_id, company_id, case_id, environment, event_type, \
         payload, created_at) SELECT {id}, provider_id, company_id, id, environment, \
         'registration.form_rendered', {payload}, created_at FROM trade_registrations \
         ORDER BY id"
    );
    if url.starts_with("sqlite") {
        let mut c = <sqlx::SqliteConnection as sqlx::Connection>::connect(url)
            .await
            .unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(&mut c)
            .await
            .unwrap();
        sqlx::raw_sql("ANALYZE").execute(&mut c).await.unwrap();
    } else {
        let mut c = <sqlx::PgConnection as sqlx::Connection>::connect(url)
            .await
            .unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(&mut c)
            .await
            .unwrap();
        sqlx::raw_sql("ANALYZE").execute(&mut c).await.unwrap();
    }
    eprintln!(
        "seeded the events in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// `--explain`: the plan of every list statement (`store::plans`), as the database chooses it
/// for this database: how many statements, how many read a whole table or sort what they
/// found, and the slowest eight of tenants and of operators with their plans.
async fn explain(url: &str, ids: store::plans::PlanIds) {
    let plans = if url.starts_with("sqlite") {
        let repo = store::SqliteRepository::connect(url, store::PoolSettings::default())
            .await
            .unwrap();
        repo.explain_lists(ids).await.unwrap()
    } else {
        let repo = store::PostgresRepository::connect(url, store::PoolSettings::default())
            .await
            .unwrap();
        repo.explain_lists(ids, false).await.unwrap()
    };
    let whole: Vec<_> = plans
        .iter()
        .filter(|p| p.reads_a_whole_table() || (p.tenant && !p.seeks_its_tenant()))
        .collect();
    let sorts = plans.iter().filter(|p| p.sorts()).count();
    println!();
    println!(
        "{} statements explained; {} read a whole table or walk it for one tenant; {sorts} sort what they found",
        plans.len(),
        whole.len()
    );
    for p in &whole {
        println!("\nWALKS {} ({:.1} ms):\n{}", p.statement, p.ms, p.plan);
    }
    for (whose, tenant) in [("a tenant's", true), ("an operator's", false)] {
        let mut slowest: Vec<_> = plans.iter().filter(|p| p.tenant == tenant).collect();
        slowest.sort_by(|a, b| b.ms.total_cmp(&a.ms));
        println!("\n| slowest statements, {whose} | ms | plan |");
        println!("|---|---|---|");
        for p in slowest.iter().take(8) {
            let plan = p.plan.replace('\n', "; ");
            println!("| {} | {:.1} | {plan} |", p.statement, p.ms);
        }
    }
}

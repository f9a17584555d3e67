use sqlx::{Connection, PgConnection};

use super::*;
use crate::{AccountStore, CaseStore, Repository};

/// A new database on the test server, its name and a connection to the server.
///
/// The tests that call it are ignored when `TEST_DATABASE_URL` is unset at build time
/// (`build.rs`). One that runs without it all the same (`--ignored`, or a binary built with it
/// and run without it) fails here rather than passes as a test that ran.
async fn fresh_database() -> (String, String, PgConnection) {
    let base = std::env::var("TEST_DATABASE_URL")
        .ok()
        .filter(|s| !s.is_empty())
        .expect("TEST_DATABASE_URL is not set: this test needs it (docs/testing.md)");
    // The process id lets the server tests drop it if this test dies before it does
    // (`drop_databases_of_ended_runs` in `crates/server/tests/common`).
    let name = format!(
        "filing_t_{}_{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    );
    let mut admin = sqlx::PgConnection::connect(&base).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .unwrap();
    let url = format!(
        "{}/{name}",
        base.split('?').next().unwrap().rsplit_once('/').unwrap().0
    );
    (url, name, admin)
}

/// Applies the migrations before `version` (`count` of them) to the database at `url`, and
/// runs `sql` on it: the database as an older release left it.
async fn seeded_before(url: &str, version: i64, count: usize, sql: String) {
    let mut conn = PgConnection::connect(url).await.unwrap();
    let before = crate::migrations_before(&MIGRATOR, version);
    assert_eq!(before.migrations.len(), count);
    before.run(&mut conn).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(&mut conn)
        .await
        .unwrap();
}

/// A repository with the default settings on the database at `url`.
async fn connect(url: &str) -> PostgresRepository {
    PostgresRepository::connect(url, PoolSettings::default())
        .await
        .unwrap()
}

/// Closes `repo`'s connections, then drops its database (`name`).
async fn close_and_drop(repo: PostgresRepository, name: &str, admin: PgConnection) {
    repo.sql.pool.close().await;
    drop_database(name, admin).await;
}

/// Runs a store test that both backends run on a repository on a new database.
async fn on_fresh_repository(
    test: impl for<'r> FnOnce(&'r dyn Repository) -> futures::future::BoxFuture<'r, ()>,
) {
    let (url, name, admin) = fresh_database().await;
    let repo = connect(&url).await;
    test(&repo).await;
    close_and_drop(repo, &name, admin).await;
}

/// A repository on the database at `url` across migration `version` (`count` migrations before
/// it): the provider `…a1` and `before` written by the release before it, `after` written once
/// the migration ran by an instance of that release (during a rolling restart).
async fn across_migration(
    url: &str,
    version: i64,
    count: usize,
    before: String,
    after: String,
) -> PostgresRepository {
    seeded_before(url, version, count, format!("{PROVIDER_A1} {before}")).await;
    let repo = connect(url).await;
    sqlx::raw_sql(sqlx::AssertSqlSafe(after))
        .execute(&repo.sql.pool)
        .await
        .unwrap();
    repo
}

/// The provider (`…a1`) the migration tests' rows belong to.
const PROVIDER_A1: &str = "INSERT INTO companies (id, kind, name, provider_id, created_at) VALUES \
     ('00000000-0000-0000-0000-0000000000a1', 'provider', 'P', NULL, '2026-01-02T03:04:05Z');";

/// Client company `…c{n}` of provider `…a1`, in production.
fn client_company(n: u8) -> String {
    format!(
        "INSERT INTO companies (id, kind, name, provider_id, environment, created_at) VALUES \
           ('00000000-0000-0000-0000-0000000000c{n}', 'client', 'C', \
            '00000000-0000-0000-0000-0000000000a1', 'production', '2026-01-02T03:04:05Z');"
    )
}

/// The (empty) copy of case `…d{n}`'s children, as a release that keeps them writes it.
fn no_children(n: u8) -> String {
    format!(
        "INSERT INTO case_children (case_id, history_json, documents_json, verified_json) \
           VALUES ('00000000-0000-0000-0000-0000000000d{n}', '[]', '[]', '[]');"
    )
}

async fn drop_database(name: &str, mut admin: PgConnection) {
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
    )))
    .execute(&mut admin)
    .await
    .unwrap();
}

/// Every row of a table as JSON without the `random` columns, in a stable order.
async fn rows(url: &str, table: &str, random: &[&str]) -> Vec<String> {
    let mut conn = PgConnection::connect(url).await.unwrap();
    let rows: Vec<(sqlx::types::Json<serde_json::Value>,)> = sqlx::query_as(sqlx::AssertSqlSafe(
        format!("SELECT to_jsonb(t) - $1::text[] FROM {table} t"),
    ))
    .bind(random)
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let mut rows: Vec<String> = rows.into_iter().map(|(r,)| r.0.to_string()).collect();
    rows.sort();
    rows
}

/// A create in one statement (`create.rs`) writes exactly the rows of the sqlx
/// transaction (`crate::sql`): the company, the case, its documents, history and children,
/// the outbox messages for the endpoints that subscribed, the completed claim. A claim that
/// is no longer in flight writes nothing; a second case of a company is the company
/// conflict. Needs `TEST_DATABASE_URL` (CI sets it).
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test]
async fn one_statement_creates_write_the_rows_of_the_transaction() {
    use crate::sqlite::tests::{Sample, unclaimed_trade_case};
    use crate::{NewTradeRegistration, StoreError};
    let (url_a, name_a, admin_a) = fresh_database().await;
    let (url_b, name_b, admin_b) = fresh_database().await;
    let one = connect(&url_a).await;
    let mut sqlx_path = connect(&url_b).await;
    sqlx_path.sqlx_creates = true;
    // The same provider row in both.
    let provider = one.create_provider("Plattform «P»").await.unwrap().id;
    let (row,): (sqlx::types::Json<serde_json::Value>,) =
        sqlx::query_as("SELECT to_jsonb(c) FROM companies c WHERE id = $1")
            .bind(provider)
            .fetch_one(&one.sql.pool)
            .await
            .unwrap();
    sqlx::query("INSERT INTO companies SELECT * FROM jsonb_populate_record(NULL::companies, $1)")
        .bind(row)
        .execute(&sqlx_path.sql.pool)
        .await
        .unwrap();
    let sample = Sample::new(provider);
    sample.write(&one).await;
    sample.write(&sqlx_path).await;

    // And the copies of the cases' children.
    let children: (&str, &[&str]) = ("case_children", &[]);
    let tables: Vec<(&str, &[&str])> = Sample::TABLES.into_iter().chain([children]).collect();
    for &(table, random) in &tables {
        let (a, b) = (
            rows(&url_a, table, random).await,
            rows(&url_b, table, random).await,
        );
        assert!(!a.is_empty(), "{table} is empty");
        assert_eq!(a, b, "{table}");
    }
    // The trade event for one endpoint, the tax event for both.
    assert_eq!(rows(&url_a, "webhook_messages", &[]).await.len(), 3);

    // Refusals write nothing, in any table.
    let mut before = Vec::new();
    for (table, _) in &tables {
        before.push(rows(&url_a, table, &[]).await);
    }
    let lost = unclaimed_trade_case(provider);
    let e = one.create_trade_registration(&lost).await.unwrap_err();
    assert!(matches!(e, StoreError::IdempotencyClaimLost), "{e:?}");
    let second = NewTradeRegistration {
        head: crate::CaseHead {
            id: uuid::Uuid::now_v7(),
            ..sample.trade.head.clone()
        },
        new_company: None,
        idempotency: None,
        ..sample.trade.clone()
    };
    let e = one.create_trade_registration(&second).await.unwrap_err();
    assert!(e.is_company_conflict(), "{e:?}");
    for ((table, _), before) in tables.iter().zip(&before) {
        assert_eq!(&rows(&url_a, table, &[]).await, before, "{table}");
    }
    assert_eq!(
        before[0].len(),
        3,
        "the provider and the two cases' companies"
    );

    drop((one, sqlx_path));
    drop_database(&name_a, admin_a).await;
    drop_database(&name_b, admin_b).await;
}

/// A create writes the children's JSON built in Rust (`children_created`); every later
/// change rebuilds it in SQL (`refresh_case_children`). Both must give the same arrays, in
/// the same order, or a case would read differently before and after its first transition.
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test]
async fn children_json_of_a_create_matches_the_sql_refresh() {
    use crate::{DocumentRecord, NewTradeRegistration, StatusChange};
    use domain::case::{CaseKind, DocumentType};
    use domain::lifecycle::TradeStatus;
    let (url, name, admin) = fresh_database().await;
    let repo = connect(&url).await;
    let provider = repo.create_provider("P").await.unwrap().id;
    let id = uuid::Uuid::now_v7();
    let at = time::macros::datetime!(2026-03-04 05:06:07.123456 UTC);
    let doc = |owner: Option<i32>, doc_type: DocumentType, at| {
        let doc_id = uuid::Uuid::now_v7();
        DocumentRecord {
            id: doc_id,
            case_id: id,
            case_kind: CaseKind::Trade,
            owner_index: owner,
            doc_type,
            name: format!("Ä {} \"{owner:?}\".pdf", doc_type.as_str()),
            storage_key: format!("trade/{id}/{doc_id}"),
            content_type: "application/pdf".into(),
            size: owner.map(i64::from),
            sha256: owner.map(|o| vec![o as u8, 0xab]),
            created_at: at,
        }
    };
    let later = at + time::Duration::microseconds(1);
    // Given out of order: the read orders by time, owner (none last) and type (a type before
    // the longer one it begins).
    let documents = vec![
        doc(Some(1), DocumentType::TradeLicenceApplication, at),
        doc(None, DocumentType::TradeLicence, at),
        doc(Some(0), DocumentType::PowerOfAttorney, later),
        doc(Some(0), DocumentType::TradeLicenceApplication, at),
        doc(Some(0), DocumentType::PowerOfAttorney, at),
        doc(Some(0), DocumentType::TradeLicence, at),
    ];
    let history = vec![
        StatusChange::step(
            TradeStatus::Initiated,
            None,
            domain::lifecycle::Actor::Provider(uuid::Uuid::from_u128(0xa1)),
            None,
            at,
        ),
        StatusChange::step(
            TradeStatus::FormRendered,
            Some(TradeStatus::Initiated.into()),
            domain::lifecycle::Actor::System,
            Some("\u{1F600} \n tab\t".into()),
            later,
        ),
    ];
    let company = uuid::Uuid::now_v7();
    let new = NewTradeRegistration {
        head: crate::CaseHead {
            id,
            company_id: company,
            provider_id: provider,
            environment: domain::company::Environment::Sandbox,
            package: domain::trade::Package::SelfService,
            status: TradeStatus::FormRendered,
            record: serde_json::json!({}),
            created_at: at,
            documents,
            history,
        },
        new_company: Some((
            company,
            crate::NewClientCompany {
                provider_id: provider,
                name: "C".into(),
                environment: domain::company::Environment::Sandbox,
                legal_form: None,
                registration_number: None,
                business_address: None,
            },
        )),
        price_cents: 0,
        trade_office: None,
        trade_office_candidates: None,
        idempotency: None,
    };
    repo.create_trade_registration(&new).await.unwrap();
    let created = repo.get_trade_registration(id).await.unwrap().unwrap();
    sqlx::query("SELECT refresh_case_children(ARRAY[$1::uuid])")
        .bind(id)
        .execute(&repo.sql.pool)
        .await
        .unwrap();
    let refreshed = repo.get_trade_registration(id).await.unwrap().unwrap();
    assert_eq!(created.documents, refreshed.documents);
    assert_eq!(created.history, refreshed.history);
    assert_eq!(created.history, new.history);
    let order: Vec<_> = created
        .documents
        .iter()
        .map(|d| (d.owner_index, d.doc_type.as_str(), d.created_at == later))
        .collect();
    assert_eq!(
        order,
        [
            (Some(0), "power-of-attorney", false),
            (Some(0), "trade-licence", false),
            (Some(0), "trade-licence-application", false),
            (Some(1), "trade-licence-application", false),
            (None, "trade-licence", false),
            (Some(0), "power-of-attorney", true),
        ]
    );
    close_and_drop(repo, &name, admin).await;
}

/// Migrations 0010 and 0011 on a database with cases from before them: their history,
/// documents and identity verifications are copied into `case_children`, so the reads (which
/// take them from there now) still show them, and the `jsonb` record becomes `json` with the
/// same content. Needs `TEST_DATABASE_URL` (CI sets it).
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test]
async fn migrations_0010_and_0011_keep_existing_cases_readable() {
    let (url, name, admin) = fresh_database().await;
    seeded_before(
        &url,
        10,
        9,
        "INSERT INTO companies (id, kind, name, provider_id, created_at) VALUES \
           ('00000000-0000-0000-0000-0000000000a1', 'provider', 'P', NULL, '2026-01-02T03:04:05Z'), \
           ('00000000-0000-0000-0000-0000000000c1', 'client', 'C', \
            '00000000-0000-0000-0000-0000000000a1', '2026-01-02T03:04:05Z'); \
         INSERT INTO trade_registrations (id, company_id, provider_id, environment, package, \
           status, record, price_cents, created_at, updated_at) VALUES \
           ('00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-0000000000c1', \
            '00000000-0000-0000-0000-0000000000a1', 'sandbox', 'self', 'submitted', \
            '{\"name\": \"Müller & Söhne\", \"owners\": [{\"first_name\": \"Zoë\"}], \"n\": 1.5, \"ref\": null}', 4900, \
            '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z'); \
         INSERT INTO status_history (case_id, case_kind, status, previous_status, actor, at) VALUES \
           ('00000000-0000-0000-0000-0000000000d1', 'trade', 'initiated', NULL, 'system', '2026-01-02T03:04:05.5Z'), \
           ('00000000-0000-0000-0000-0000000000d1', 'trade', 'submitted', 'initiated', 'operator:x', '2026-01-02T04:00:00Z'); \
         INSERT INTO documents (id, case_id, case_kind, owner_index, doc_type, name, storage_key, \
           content_type, size, sha256, created_at) VALUES \
           ('00000000-0000-0000-0000-0000000000e1', '00000000-0000-0000-0000-0000000000d1', 'trade', 0, \
            'trade-licence-application', 'GewA 1 – Jürgen.pdf', 'trade/d1/e1.pdf', 'application/pdf', 1000, '\\x0102', \
            '2026-01-02T03:04:05Z'); \
         INSERT INTO identity_verifications (case_id, owner_index, verified_at, actor) VALUES \
           ('00000000-0000-0000-0000-0000000000d1', 0, '2026-01-03T00:00:00Z', 'operator:x');"
            .into(),
    )
    .await;

    let repo = connect(&url).await;
    let id = uuid::Uuid::from_u128(0xd1);
    let case = repo.get_trade_registration(id).await.unwrap().unwrap();
    let statuses: Vec<_> = case.history.iter().map(|h| h.status.as_str()).collect();
    assert_eq!(statuses, ["initiated", "submitted"]);
    assert_eq!(
        case.history[0].at,
        time::macros::datetime!(2026-01-02 03:04:05.5 UTC)
    );
    assert_eq!(case.documents.len(), 1);
    assert_eq!(case.documents[0].name, "GewA 1 – Jürgen.pdf");
    assert_eq!(case.documents[0].sha256.as_deref(), Some(&[1u8, 2][..]));
    assert_eq!(
        case.identity_verifications,
        [(0, time::macros::datetime!(2026-01-03 0:00 UTC))]
    );
    // 0011: the record, stored as `jsonb` then, is `json` now and reads the same.
    assert_eq!(
        case.record,
        serde_json::json!({"name": "Müller & Söhne", "owners": [{"first_name": "Zoë"}], "n": 1.5, "ref": null})
    );
    let types: Vec<String> = sqlx::query_scalar(
        "SELECT data_type FROM information_schema.columns \
         WHERE column_name = 'record' ORDER BY table_name",
    )
    .fetch_all(&repo.sql.pool)
    .await
    .unwrap();
    assert_eq!(types, ["json", "json"]);
    close_and_drop(repo, &name, admin).await;
}

/// Migration 0023 on a database with cases from before it: the copies of their histories in
/// `case_children` (five-element arrays, no operator ids) stay readable, and the operators who
/// acted on them are named (the migration fills `operator_ids` of the cases they appear in),
/// as is the provider; an actor that is no UUID fails nothing. Needs `TEST_DATABASE_URL`.
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test]
async fn migration_0023_names_the_operators_of_existing_cases() {
    let (url, name, admin) = fresh_database().await;
    {
        let mut conn = PgConnection::connect(&url).await.unwrap();
        crate::migrations_before(&MIGRATOR, 23)
            .run(&mut conn)
            .await
            .unwrap();
        sqlx::raw_sql(
            "INSERT INTO companies (id, kind, name, provider_id, created_at) VALUES \
               ('00000000-0000-0000-0000-0000000000a1', 'provider', 'Plattform P', NULL, '2026-01-02T03:04:05Z'), \
               ('00000000-0000-0000-0000-0000000000c1', 'client', 'C', \
                '00000000-0000-0000-0000-0000000000a1', '2026-01-02T03:04:05Z'); \
             INSERT INTO operators (id, name, created_at) VALUES \
               ('00000000-0000-0000-0000-0000000000b1', 'Olga Operator', '2026-01-02T03:04:05Z'); \
             INSERT INTO trade_registrations (id, company_id, provider_id, environment, package, \
               status, record, price_cents, created_at, updated_at) VALUES \
               ('00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-0000000000c1', \
                '00000000-0000-0000-0000-0000000000a1', 'sandbox', 'self', 'blocked', '{}', 4900, \
                '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z'); \
             INSERT INTO status_history (case_id, case_kind, status, previous_status, actor, reason, at) VALUES \
               ('00000000-0000-0000-0000-0000000000d1', 'trade', 'initiated', NULL, \
                'provider:00000000-0000-0000-0000-0000000000a1', NULL, '2026-01-02T03:04:05Z'), \
               ('00000000-0000-0000-0000-0000000000d1', 'trade', 'form-rendered', 'initiated', 'system', NULL, '2026-01-02T03:04:05Z'), \
               ('00000000-0000-0000-0000-0000000000d1', 'trade', 'submitted', 'form-rendered', 'operator:x', NULL, '2026-01-02T04:00:00Z'), \
               ('00000000-0000-0000-0000-0000000000d1', 'trade', 'blocked', 'submitted', \
                'operator:00000000-0000-0000-0000-0000000000b1', 'fehlt', '2026-01-02T05:00:00Z'); \
             SELECT refresh_case_children(ARRAY['00000000-0000-0000-0000-0000000000d1'::uuid]);",
        )
        .execute(&mut conn)
        .await
        .unwrap();
    }

    let repo = connect(&url).await;
    let case = repo
        .get_trade_registration(uuid::Uuid::from_u128(0xd1))
        .await
        .unwrap()
        .unwrap();
    let named: Vec<(&str, Option<&str>)> = case
        .history
        .iter()
        .map(|h| (h.status.as_str(), h.actor_name.as_deref()))
        .collect();
    assert_eq!(
        named,
        [
            ("initiated", Some("Plattform P")),
            ("form-rendered", None),
            ("submitted", None),
            ("blocked", Some("Olga Operator")),
        ]
    );
    assert_eq!(case.history[3].reason.as_deref(), Some("fehlt"));
    assert!(case.history.iter().all(|h| h.changes.is_empty()));
    close_and_drop(repo, &name, admin).await;
}

/// Migration 0016 on a database with a tax registration from before it: the case keeps its
/// id as the id its provider finds it by; a row written without `public_id` afterwards (an
/// instance on the release before, during a rolling restart) gets its key as well instead of
/// failing the NOT NULL. Needs `TEST_DATABASE_URL` (CI sets it).
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test]
async fn migration_0016_gives_existing_tax_cases_their_id_as_public_id() {
    let (url, name, admin) = fresh_database().await;
    let insert_case = |n: u8| {
        format!(
            "{} INSERT INTO tax_registrations (id, company_id, provider_id, environment, package, \
               legal_form, status, record, created_at, updated_at, list_key) VALUES \
               ('00000000-0000-0000-0000-0000000000d{n}', '00000000-0000-0000-0000-0000000000c{n}', \
                '00000000-0000-0000-0000-0000000000a1', 'production', 'self', 'gmbh', 'validated', \
                '{{}}', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z', \
                '00000000-0000-0000-0000-0000000000d{n}'); {}",
            client_company(n),
            no_children(n)
        )
    };
    // 0001 to 0015 (0015, the API key listing, came in with issue 35's keys).
    let repo = across_migration(&url, 16, 15, insert_case(1), insert_case(2)).await;
    let provider = uuid::Uuid::from_u128(0xa1);
    let ids = [0xd1, 0xd2].map(uuid::Uuid::from_u128);
    crate::sqlite::migration_tests::assert_found_by_their_keys(&repo, provider, ids).await;
    close_and_drop(repo, &name, admin).await;
}

/// Migration 0022 on a database with cases from before it: they are found by their words,
/// postal code and office, and so is a case written after it the way the previous release
/// writes them. Needs `TEST_DATABASE_URL`.
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test]
async fn migration_0022_finds_existing_cases_by_words_postal_code_and_office() {
    let (url, name, admin) = fresh_database().await;
    let insert = |n: u8, kind: &str, record: &str| {
        let case = if kind == "trade" {
            format!(
                "INSERT INTO trade_registrations (id, company_id, provider_id, environment, package, \
                   status, record, price_cents, trade_office, created_at, updated_at) VALUES \
                   ('00000000-0000-0000-0000-0000000000d{n}', '00000000-0000-0000-0000-0000000000c{n}', \
                    '00000000-0000-0000-0000-0000000000a1', 'production', 'self', 'form-rendered', \
                    '{record}', 0, '{{\"key\": \"11000000\"}}', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z');"
            )
        } else {
            format!(
                "INSERT INTO tax_registrations (id, company_id, provider_id, environment, package, \
                   legal_form, status, record, tax_office_number, created_at, updated_at, list_key) VALUES \
                   ('00000000-0000-0000-0000-0000000000d{n}', '00000000-0000-0000-0000-0000000000c{n}', \
                    '00000000-0000-0000-0000-0000000000a1', 'production', 'guided', 'gmbh', 'validated', \
                    '{record}', '1116', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z', \
                    '00000000-0000-0000-0000-0000000000d{n}');"
            )
        };
        format!("{} {case}", client_company(n))
    };
    // 0001 to 0021.
    let old = format!(
        "{} {}",
        insert(
            1,
            "trade",
            r#"{"name": "Ölmühle GmbH", "registered_office": {"zip": "10115"}, "owners": [{"first_name": "Erika", "last_name": "Mustermann", "birth_name": "Gabler"}]}"#
        ),
        insert(
            2,
            "tax",
            r#"{"name": "Zoë UG", "client_reference": "crm-1", "address": {"zip": "54298"}, "directors": [{"first_name": "Anna", "middle_name": "Lena", "last_name": "Łukasik"}]}"#
        ),
    );
    let later = r#"{"name": "Später GmbH", "registered_office": {"zip": "10117"}, "owners": []}"#;
    let repo = across_migration(&url, 22, 21, old, insert(3, "trade", later)).await;
    let id = |n: u128| uuid::Uuid::from_u128(0xd0 + n);
    let cases = (id(1), id(2), id(3));
    crate::sql::list_tests::assert_found_by_words_postal_code_and_office(&repo, cases).await;
    close_and_drop(repo, &name, admin).await;
}

/// A page searched by words can use the trigram index (with sequential and plain index scans
/// off, only a bitmap scan of it is left): the pattern compares in the column's collation.
/// Needs `TEST_DATABASE_URL`.
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test]
async fn a_word_search_can_use_the_trigram_index() {
    use crate::{CaseKind, CaseListFilter, CaseListScope, CaseOwner, CaseSearch};
    let (url, name, admin) = fresh_database().await;
    let repo = connect(&url).await;
    for (kind, index) in [
        (CaseKind::Trade, "trade_registrations_search"),
        (CaseKind::Tax, "tax_registrations_search"),
    ] {
        let filter = CaseListFilter {
            search: CaseSearch::parse("ÖZDEMIR gmbh"),
            ..Default::default()
        };
        let mut page = crate::sql::lists::page::<sqlx::Postgres>(
            kind,
            CaseListScope {
                owner: CaseOwner::All,
            },
            &filter,
            None,
            21,
        )
        .unwrap();
        page.sql = format!("EXPLAIN {}", page.sql).into();
        let mut conn = repo.sql.pool.acquire().await.unwrap();
        sqlx::raw_sql("SET enable_seqscan = off; SET enable_indexscan = off")
            .execute(&mut *conn)
            .await
            .unwrap();
        let plan: Vec<String> = crate::sql::lists::query::<sqlx::Postgres>(&page)
            .fetch_all(&mut *conn)
            .await
            .unwrap()
            .iter()
            .map(|r| sqlx::Row::get::<String, _>(r, 0))
            .collect();
        let plan = plan.join("\n");
        assert!(
            plan.contains(&format!("Bitmap Index Scan on {index}")),
            "{plan}"
        );
        sqlx::raw_sql("RESET enable_seqscan; RESET enable_indexscan")
            .execute(&mut *conn)
            .await
            .unwrap();
    }
    close_and_drop(repo, &name, admin).await;
}

// The case lists (`CaseListStore::list_case_page`), the operators' lists (its filters, searches
// and orders, `count_cases_by_status`) and a case's webhook deliveries
// (`CaseListStore::list_case_deliveries`): `sql/list_tests.rs` has the tests. They need
// `TEST_DATABASE_URL`.
crate::sql::list_tests::backend_list_tests!(
    on_fresh_repository,
    #[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
);

// The webhook claim's limits, round robin and circuits: `sql/webhook_tests.rs`. They need
// `TEST_DATABASE_URL`.
crate::sql::webhook_tests::backend_webhook_tests!(
    on_fresh_repository,
    #[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
);

/// Migration 0018 on a database with cases from before it: they list by their stored
/// `client_reference`, and so does a case an instance on the previous release writes after it.
/// Needs `TEST_DATABASE_URL`.
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test]
async fn migration_0018_lists_existing_cases_by_their_client_reference() {
    let (url, name, admin) = fresh_database().await;
    let insert_case = |n: u8| {
        format!(
            "{} INSERT INTO trade_registrations (id, company_id, provider_id, environment, package, \
               status, record, price_cents, created_at, updated_at) VALUES \
               ('00000000-0000-0000-0000-0000000000d{n}', '00000000-0000-0000-0000-0000000000c{n}', \
                '00000000-0000-0000-0000-0000000000a1', 'production', 'self', 'form-rendered', \
                '{{\"client_reference\": \"crm-{n}\"}}', 0, '2026-01-02T03:04:05Z', \
                '2026-01-02T03:04:05Z'); {}",
            client_company(n),
            no_children(n)
        )
    };
    // 0001 to 0017.
    let repo = across_migration(&url, 18, 17, insert_case(1), insert_case(2)).await;
    let provider = uuid::Uuid::from_u128(0xa1);
    for n in [1u128, 2] {
        let filter = crate::CaseListFilter {
            client_reference: Some(format!("crm-{n}")),
            ..Default::default()
        };
        let owner = crate::CaseOwner::Provider(provider);
        let ids =
            crate::sql::list_tests::listed_ids(&repo, crate::CaseKind::Trade, owner, &filter, 10);
        assert_eq!(ids.await, [uuid::Uuid::from_u128(0xd0 + n)]);
    }
    close_and_drop(repo, &name, admin).await;
}

/// Ends every session of database `name` but the caller's (as a server restart would).
async fn end_sessions(admin: &mut PgConnection, name: &str) -> i64 {
    let ended: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity \
         WHERE datname = $1 AND pid <> pg_backend_pid()",
    )
    .bind(name)
    .fetch_all(admin)
    .await
    .unwrap();
    ended.len() as i64
}

/// The pool holds `max_connections` and no more: with all of them taken, the next
/// request waits for one and gives up at the acquire timeout.
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test]
async fn the_pool_holds_max_connections() {
    let (url, _name, _admin) = fresh_database().await;
    let repo = PostgresRepository::connect(
        &url,
        PoolSettings {
            acquire_timeout: std::time::Duration::from_secs(1),
            max_connections: 2,
            ..PoolSettings::default()
        },
    )
    .await
    .unwrap();
    let a = repo.sql.writer.acquire().await.unwrap();
    let b = repo.sql.writer.acquire().await.unwrap();
    assert!(
        repo.sql.writer.acquire().await.is_err(),
        "a third connection"
    );
    drop(a);
    let c = repo.sql.writer.acquire().await.unwrap();
    drop((b, c));
}

/// Reads run on connections kept outside the pool and never pinged: one the server ended
/// while it sat idle fails the read, which then runs again on a new connection. The caller
/// sees no error. Writes still go through the pool, which pings.
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test]
async fn a_read_on_a_connection_the_server_ended_is_run_again() {
    let (url, name, mut admin) = fresh_database().await;
    let repo = PostgresRepository::connect(
        &url,
        PoolSettings {
            acquire_timeout: std::time::Duration::from_secs(1),
            ..PoolSettings::default()
        },
    )
    .await
    .unwrap();
    let provider = repo.create_provider("P").await.unwrap();
    let key = crate::ApiKeyRecord {
        prefix: "rfs_p_abc".into(),
        hash: vec![1; 32],
        kind: domain::auth::KeyKind::Provider,
        company_id: Some(provider.id),
        operator_id: None,
        environment: None,
        created_at: time::OffsetDateTime::now_utc(),
        revoked_at: None,
        company_provider_id: None,
    };
    repo.insert_api_key(&key).await.unwrap();
    // Two reads at once leave two idle read connections, both of which the server ends.
    let (a, b) = tokio::join!(
        repo.find_api_key("rfs_p_abc"),
        repo.get_company(provider.id)
    );
    assert_eq!(a.unwrap().unwrap().company_id, Some(provider.id));
    assert_eq!(b.unwrap().unwrap().name, "P");
    assert_eq!(repo.sql.reads.idle.lock().unwrap().len(), 2);

    assert!(end_sessions(&mut admin, &name).await >= 2);
    // Two reads at once take one dead connection each; each reads again on a new one.
    let (a, b) = tokio::join!(
        repo.find_api_key("rfs_p_abc"),
        repo.get_company(provider.id)
    );
    assert_eq!(a.unwrap().unwrap().prefix, "rfs_p_abc");
    assert_eq!(b.unwrap().unwrap().name, "P");
    assert_eq!(repo.sql.reads.idle.lock().unwrap().len(), 2);
    assert!(
        repo.get_document(uuid::Uuid::now_v7())
            .await
            .unwrap()
            .is_none()
    );
    // A statement that fails on a working connection is not run again, and its connection
    // stays.
    let before = repo.sql.reads.idle.lock().unwrap().len();
    let err = repo
        .sql
        .read(|c| Box::pin(sqlx::query("SELECT 1/0").execute(c)))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert_eq!(repo.sql.reads.idle.lock().unwrap().len(), before);
    // ... and still works.
    let found = repo.find_api_key("rfs_p_abc").await.unwrap();
    assert_eq!(found.unwrap().prefix, "rfs_p_abc");
    // A statement past the timeout (1 s here) is a storage fault (503, not 500), and the
    // server ends it too (`statement_timeout`) instead of running it on for nobody.
    let err = repo
        .sql
        .read(|c| Box::pin(sqlx::query("SELECT pg_sleep(5)").execute(c)))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let sleeping: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity \
         WHERE datname = $1 AND state = 'active' AND query LIKE 'SELECT pg_sleep%'",
    )
    .bind(&name)
    .fetch_one(&mut admin)
    .await
    .unwrap();
    assert_eq!(sleeping, 0, "the abandoned statement still runs");
    repo.sql.pool.close().await;
    drop(repo);
    drop_database(&name, admin).await;
}

/// Issue 52.3: an index serves every list statement (every filter combination of the case
/// lists, the operators' lists and counts, the event log: `crate::plans`): with sequential
/// scans off, none is left with one. On a small database PostgreSQL would rightly read the
/// tables, and which index it takes for one tenant depends on its statistics: `examples/
/// console_lists.rs --explain` shows the plans at a million cases
/// (docs/operations.md "Reads"). Needs `TEST_DATABASE_URL`.
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test]
async fn an_index_serves_every_list_statement() {
    let (url, name, admin) = fresh_database().await;
    let repo = connect(&url).await;
    let ids = crate::plans::PlanIds {
        provider: uuid::Uuid::now_v7(),
        company: uuid::Uuid::now_v7(),
        case: uuid::Uuid::now_v7(),
    };
    let plans = repo.explain_lists(ids, true).await.unwrap();
    assert!(plans.len() > 500, "{} statements", plans.len());
    let whole: Vec<String> = plans
        .iter()
        .filter(|p| p.reads_a_whole_table())
        .map(|p| format!("{}:\n{}", p.statement, p.plan))
        .collect();
    assert!(
        whole.is_empty(),
        "{} read a whole table:\n{}",
        whole.len(),
        whole.join("\n\n")
    );
    close_and_drop(repo, &name, admin).await;
}

//! SQLite's migration tests: each writes rows as an older release left them, applies the
//! migration and checks what comes through.

use serde_json::json;
use uuid::Uuid;

use super::tests::dump;
use super::*;
use crate::{CaseListStore, CaseStore, Repository};
use domain::case::CaseKind;

/// Migration 0015 on a database with cases from before it: they list by their stored
/// `client_reference`, and so does a case an instance on the previous release writes after it.
#[tokio::test]
async fn migration_0015_lists_existing_cases_by_their_client_reference() {
    // 0001 to 0014.
    let (_dir, path, url) = database_before(15, 14).await;
    let provider = Uuid::from_u128(0xa1);
    let insert_case = |conn: &rusqlite::Connection, n: u128| {
        let (company, case) = (Uuid::from_u128(0xc0 + n), Uuid::from_u128(0xd0 + n));
        old_client(conn, company.as_bytes(), provider.as_bytes(), OLD);
        conn.execute(
            "INSERT INTO trade_registrations (id, company_id, provider_id, environment, package, \
             status, record, price_cents, created_at, updated_at) \
             VALUES (?1, ?2, ?3, 'production', 'self', 'form-rendered', ?4, 0, \
             '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z')",
            rusqlite::params![
                case.as_bytes().to_vec(),
                company.as_bytes().to_vec(),
                provider.as_bytes().to_vec(),
                format!("{{\"client_reference\": \"crm-{n}\"}}")
            ],
        )
        .unwrap();
        case
    };
    let old = rusqlite::Connection::open(&path).unwrap();
    old_provider(&old, provider.as_bytes(), OLD);
    let before = insert_case(&old, 1);
    drop(old);

    let repo = SqliteRepository::connect(&url, PoolSettings::default())
        .await
        .unwrap();
    let after = insert_case(&rusqlite::Connection::open(&path).unwrap(), 2);
    for (n, id) in [(1, before), (2, after)] {
        let found = repo
            .list_case_page(
                CaseKind::Trade,
                crate::CaseListScope {
                    owner: crate::CaseOwner::Provider(provider),
                },
                &crate::CaseListFilter {
                    client_reference: Some(format!("crm-{n}")),
                    ..Default::default()
                },
                None,
                10,
            )
            .await
            .unwrap();
        assert_eq!(found.iter().map(|c| c.id).collect::<Vec<_>>(), [id]);
        assert_eq!(found[0].client_reference, Some(format!("crm-{n}")));
    }
}

/// Migration 0019 on a database with cases from before it: they are found by their words,
/// postal code and office; so is a case an instance on the previous release writes after it,
/// and a record that changes (no path does; the triggers keep the text right if one did) is
/// found by its new words only, as is a deleted case by none.
#[tokio::test]
async fn migration_0019_finds_existing_cases_by_words_postal_code_and_office() {
    use crate::CaseListFilter;
    use crate::sql::list_tests::{
        assert_found_by_words_postal_code_and_office, listed_ids, searching,
    };
    // 0001 to 0018.
    let (_dir, path, url) = database_before(19, 18).await;
    let provider = Uuid::from_u128(0xa1);
    let at = OLD;
    let insert = |conn: &rusqlite::Connection, n: u128, kind: &str, record: serde_json::Value| {
        let (company, case) = (Uuid::from_u128(0xc0 + n), Uuid::from_u128(0xd0 + n));
        old_client(conn, company.as_bytes(), provider.as_bytes(), at);
        let sql = if kind == "trade" {
            "INSERT INTO trade_registrations (id, company_id, provider_id, environment, package, \
             status, record, price_cents, trade_office, created_at, updated_at) \
             VALUES (?1, ?2, ?3, 'production', 'self', 'form-rendered', ?4, 0, \
             '{\"key\": \"11000000\"}', ?5, ?5)"
        } else {
            "INSERT INTO tax_registrations (id, company_id, provider_id, environment, package, \
             legal_form, status, record, tax_office_number, created_at, updated_at, list_key) \
             VALUES (?1, ?2, ?3, 'production', 'guided', 'gmbh', 'validated', ?4, '1116', ?5, ?5, ?1)"
        };
        conn.execute(
            sql,
            rusqlite::params![
                case.as_bytes().to_vec(),
                company.as_bytes().to_vec(),
                provider.as_bytes().to_vec(),
                record.to_string(),
                at
            ],
        )
        .unwrap();
        case
    };
    let old = rusqlite::Connection::open(&path).unwrap();
    old_provider(&old, provider.as_bytes(), at);
    let trade = insert(
        &old,
        1,
        "trade",
        json!({"name": "Ölmühle GmbH", "registered_office": {"zip": "10115"},
        "owners": [{"first_name": "Erika", "last_name": "Mustermann", "birth_name": "Gabler"}]}),
    );
    let tax = insert(
        &old,
        2,
        "tax",
        json!({"name": "Zoë UG", "client_reference": "crm-1", "address": {"zip": "54298"},
        "directors": [{"first_name": "Anna", "middle_name": "Lena", "last_name": "Łukasik"}]}),
    );
    drop(old);

    let repo = SqliteRepository::connect(&url, PoolSettings::default())
        .await
        .unwrap();
    let later = insert(
        &rusqlite::Connection::open(&path).unwrap(),
        3,
        "trade",
        json!({"name": "Später GmbH", "registered_office": {"zip": "10117"}, "owners": []}),
    );
    assert_found_by_words_postal_code_and_office(&repo, (trade, tax, later)).await;

    let find = |filter: CaseListFilter| {
        let repo = &repo;
        async move { listed_ids(repo, CaseKind::Trade, crate::CaseOwner::All, &filter, 10).await }
    };
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE trade_registrations SET record = json_set(record, '$.name', 'Neumühle GmbH') WHERE id = ?1",
        rusqlite::params![trade.as_bytes().to_vec()],
    )
    .unwrap();
    assert!(find(searching("ölmühle")).await.is_empty());
    assert_eq!(find(searching("neumühle")).await, [trade]);
    conn.execute("PRAGMA foreign_keys = OFF", []).unwrap();
    conn.execute(
        "DELETE FROM trade_registrations WHERE id = ?1",
        rusqlite::params![later.as_bytes().to_vec()],
    )
    .unwrap();
    assert!(find(searching("später")).await.is_empty());
    let texts: i64 = conn
        .query_row("SELECT count(*) FROM trade_search_text", [], |r| r.get(0))
        .unwrap();
    assert_eq!(texts, 1);
}

/// What the migration tests of `public_id` (SQLite 0013, PostgreSQL 0016) check on either
/// backend: tax registrations of `provider` written before it and after it as the release
/// before writes them are found by their keys, as the ids their provider knows them by.
pub(crate) async fn assert_found_by_their_keys(
    repo: &dyn Repository,
    provider: Uuid,
    ids: [Uuid; 2],
) {
    for id in ids {
        let case = repo
            .find_tax_registration(crate::CaseScope::Provider(provider), id)
            .await
            .unwrap()
            .expect("found by its id");
        assert_eq!((case.id, case.public_id), (id, id));
    }
}

/// Migration 0013 on a database with a tax registration from before it: the case keeps its
/// id as the id its provider finds it by; a row written without `public_id` afterwards (an
/// instance on the release before, during a rolling restart) gets its key as well.
#[tokio::test]
async fn migration_0013_gives_existing_tax_cases_their_id_as_public_id() {
    // 0001 to 0012 (0012, the API key listing, came in with issue 35's keys).
    let (_dir, path, url) = database_before(13, 12).await;
    let (provider, old_case, later_case) = (
        Uuid::from_u128(0xa1),
        Uuid::from_u128(0xd1),
        Uuid::from_u128(0xd2),
    );
    let insert_case = |conn: &rusqlite::Connection, id: Uuid, company: u128| {
        let company = Uuid::from_u128(company);
        old_client(conn, company.as_bytes(), provider.as_bytes(), OLD);
        conn.execute(
            "INSERT INTO tax_registrations (id, company_id, provider_id, environment, package, \
             legal_form, status, record, created_at, updated_at, list_key) \
             VALUES (?1, ?2, ?3, 'production', 'self', 'gmbh', 'validated', '{}', \
             '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z', ?1)",
            rusqlite::params![
                id.as_bytes().to_vec(),
                company.as_bytes().to_vec(),
                provider.as_bytes().to_vec()
            ],
        )
        .unwrap();
    };
    let old = rusqlite::Connection::open(&path).unwrap();
    old_provider(&old, provider.as_bytes(), OLD);
    insert_case(&old, old_case, 0xc1);
    drop(old);

    let repo = SqliteRepository::connect(&url, PoolSettings::default())
        .await
        .unwrap();
    insert_case(
        &rusqlite::Connection::open(&path).unwrap(),
        later_case,
        0xc2,
    );
    assert_found_by_their_keys(&repo, provider, [old_case, later_case]).await;
    // The provider's id again is its own.
    let used = repo
        .tax_registration_id_use(provider, old_case)
        .await
        .unwrap();
    assert_eq!(
        used,
        crate::CaseIdUse {
            by_provider: true,
            as_key: true
        }
    );
}

/// Migration 0009 rebuilds `documents` (SQLite cannot drop NOT NULL in place): on a
/// database that has rows from before it, every row comes through unchanged, the index and
/// the unique storage key are back, and the new CHECK holds size and digest together.
#[tokio::test]
async fn migration_0009_keeps_existing_documents() {
    let (_dir, path, url) = database_before(9, 8).await;
    let old = rusqlite::Connection::open(&path).unwrap();
    for i in 0..3u8 {
        old.execute(
            "INSERT INTO documents (id, case_id, case_kind, owner_index, doc_type, name, \
             storage_key, content_type, size, sha256, created_at) \
             VALUES (?1, ?2, 'trade', ?3, 'gewa-1', ?4, ?5, 'application/pdf', ?6, ?7, ?8)",
            rusqlite::params![
                vec![i; 16],
                vec![7u8; 16],
                i64::from(i),
                format!("GewA 1 – Jürgen {i}.pdf"),
                format!("trade/x/{i}.pdf"),
                1000 + i64::from(i),
                vec![i; 32],
                "2026-01-02T03:04:05.123456Z",
            ],
        )
        .unwrap();
    }
    let rows_before = dump(&path, "documents", &[]);
    assert_eq!(rows_before.len(), 3);
    drop(old);

    let repo = SqliteRepository::connect(&url, PoolSettings::default())
        .await
        .unwrap();
    assert_eq!(dump(&path, "documents", &[]), rows_before);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let index: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'documents_case'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(index.contains("documents (case_id)"), "{index}");
    let insert = |key: &str, size: Option<i64>, digest: Option<Vec<u8>>| {
        conn.execute(
            "INSERT INTO documents (id, case_id, case_kind, doc_type, name, storage_key, \
             content_type, size, sha256, created_at) \
             VALUES (randomblob(16), randomblob(16), 'tax', 't', 'n', ?1, 'application/pdf', ?2, ?3, 'x')",
            rusqlite::params![key, size, digest],
        )
    };
    assert!(
        insert("trade/x/0.pdf", Some(1), Some(vec![1])).is_err(),
        "storage key not unique"
    );
    assert!(insert("a", Some(1), None).is_err(), "size without digest");
    assert!(
        insert("b", None, Some(vec![1])).is_err(),
        "digest without size"
    );
    insert("c", None, None).unwrap();
    insert("d", Some(1), Some(vec![1])).unwrap();
    drop(repo);
}

/// Migration 0014 rebuilds both case tables (SQLite cannot drop a column's UNIQUE) so that one
/// registration per company and kind counts only cases that are not cancelled: rows from
/// before come through unchanged, the rows that reference a trade case still find it, the tax
/// table's public-id trigger is back, and a second open case for a company is still refused
/// while one beside a cancelled case is not.
#[tokio::test]
async fn migration_0014_frees_companies_of_cancelled_cases_and_keeps_every_row() {
    let (_dir, path, url) = database_before(14, 13).await;
    let old = rusqlite::Connection::open(&path).unwrap();
    let at = "2026-01-02T03:04:05.123456Z";
    let (provider, company, trade, tax) =
        (vec![1u8; 16], vec![2u8; 16], vec![3u8; 16], vec![4u8; 16]);
    old_provider(&old, &provider, at);
    old_client(&old, &company, &provider, at);
    old.execute(
        "INSERT INTO trade_registrations (id, company_id, provider_id, environment, package, \
         status, record, price_cents, trade_office, created_at, updated_at, trade_office_candidates) \
         VALUES (?1, ?2, ?3, 'production', 'self', 'form-rendered', '{}', 4900, '{\"k\":1}', ?4, ?4, '[]')",
        rusqlite::params![trade, company, provider, at],
    )
    .unwrap();
    old.execute(
        "INSERT INTO tax_registrations (id, company_id, provider_id, environment, package, \
         legal_form, status, record, tax_office_number, created_at, updated_at, tax_number, list_key) \
         VALUES (?1, ?2, ?3, 'production', 'self', 'gmbh', 'validated', '{}', '1127', ?4, ?4, NULL, ?1)",
        rusqlite::params![tax, company, provider, at],
    )
    .unwrap();
    old.execute(
        "INSERT INTO identity_verifications (case_id, owner_index, verified_at, actor) \
         VALUES (?1, 0, ?2, 'operator:x')",
        rusqlite::params![trade, at],
    )
    .unwrap();
    let before: Vec<_> = [
        "trade_registrations",
        "tax_registrations",
        "identity_verifications",
    ]
    .iter()
    .map(|t| dump(&path, t, &[]))
    .collect();
    assert_eq!(
        before[1][0]
            .iter()
            .find(|(n, _)| n == "public_id")
            .unwrap()
            .1,
        rusqlite::types::Value::Blob(tax.clone())
    );
    drop(old);

    let repo = SqliteRepository::connect(&url, PoolSettings::default())
        .await
        .unwrap();
    let after: Vec<_> = [
        "trade_registrations",
        "tax_registrations",
        "identity_verifications",
    ]
    .iter()
    // The columns later migrations add (0015: `client_reference`; 0019: `office_key`,
    // `postal_code`; all generated).
    .map(|t| dump(&path, t, &["client_reference", "office_key", "postal_code"]))
    .collect();
    assert_eq!(after, before);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
    let broken: i64 = conn
        .query_row("SELECT COUNT(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(broken, 0);
    let trade_insert = |id: u8| {
        conn.execute(
            "INSERT INTO trade_registrations (id, company_id, provider_id, environment, package, \
             status, record, price_cents, created_at, updated_at) \
             VALUES (?1, ?2, ?3, 'production', 'self', 'form-rendered', '{}', 4900, ?4, ?4)",
            rusqlite::params![vec![id; 16], company, provider, at],
        )
    };
    let e = trade_insert(5).unwrap_err().to_string();
    assert!(e.contains("trade_registrations.company_id"), "{e}");
    conn.execute(
        "UPDATE trade_registrations SET status = 'cancelled' WHERE id = ?1",
        rusqlite::params![trade],
    )
    .unwrap();
    trade_insert(5).unwrap();
    // The tax table: its trigger gives a row without a public id its key, and its company is
    // still taken by the open case.
    let e = conn
        .execute(
            "INSERT INTO tax_registrations (id, company_id, provider_id, environment, package, \
             legal_form, status, record, created_at, updated_at) \
             VALUES (?1, ?2, ?3, 'production', 'self', 'gmbh', 'validated', '{}', ?4, ?4)",
            rusqlite::params![vec![6u8; 16], company, provider, at],
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("tax_registrations.company_id"), "{e}");
    conn.execute(
        "UPDATE tax_registrations SET status = 'cancelled' WHERE id = ?1",
        rusqlite::params![tax],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO tax_registrations (id, company_id, provider_id, environment, package, \
         legal_form, status, record, created_at, updated_at) \
         VALUES (?1, ?2, ?3, 'production', 'self', 'gmbh', 'validated', '{}', ?4, ?4)",
        rusqlite::params![vec![6u8; 16], company, provider, at],
    )
    .unwrap();
    let public: Vec<u8> = conn
        .query_row(
            "SELECT public_id FROM tax_registrations WHERE id = ?1",
            rusqlite::params![vec![6u8; 16]],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(public, vec![6u8; 16]);
    drop(repo);
}

/// When the migration tests' rows were written, unless they say otherwise.
const OLD: &str = "2026-01-02T03:04:05Z";

/// A provider (`P`) as an older release wrote it.
fn old_provider(conn: &rusqlite::Connection, id: &[u8], at: &str) {
    conn.execute(
        "INSERT INTO companies (id, kind, name, created_at) VALUES (?1, 'provider', 'P', ?2)",
        rusqlite::params![id, at],
    )
    .unwrap();
}

/// A client company (`C`, in production) of `provider` as an older release wrote it.
fn old_client(conn: &rusqlite::Connection, id: &[u8], provider: &[u8], at: &str) {
    conn.execute(
        "INSERT INTO companies (id, kind, name, provider_id, environment, created_at) \
         VALUES (?1, 'client', 'C', ?2, 'production', ?3)",
        rusqlite::params![id, provider, at],
    )
    .unwrap();
}

/// A new database file with the migrations before `version` applied (`count` of them), as an
/// older release left it: (its folder, the file, its URL).
async fn database_before(
    version: i64,
    count: usize,
) -> (tempfile::TempDir, std::path::PathBuf, String) {
    use sqlx::ConnectOptions;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let url = format!("sqlite://{}", path.display());
    let options = SqliteConnectOptions::from_str(&url)
        .unwrap()
        .create_if_missing(true);
    let mut conn = options.connect().await.unwrap();
    let before = crate::migrations_before(&MIGRATOR, version);
    assert_eq!(before.migrations.len(), count);
    before.run(&mut conn).await.unwrap();
    (dir, path, url)
}

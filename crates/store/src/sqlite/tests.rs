use serde_json::json;
use uuid::Uuid;

use super::*;
use crate::{
    AccountStore, CaseStore, DocumentRecord, NewClientCompany, NewTradeRegistration, Repository,
    StatusChange,
};
use domain::case::{CaseKind, DocumentType};
use domain::lifecycle::{TaxStatus, TradeStatus};

pub(crate) fn micros(t: time::OffsetDateTime) -> time::OffsetDateTime {
    t.replace_nanosecond(t.nanosecond() / 1000 * 1000).unwrap()
}

/// A repository on a new database file: (its folder, the file, the repository).
async fn file_repo() -> (tempfile::TempDir, std::path::PathBuf, SqliteRepository) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let url = format!("sqlite://{}", path.display());
    let repo = SqliteRepository::connect(&url, PoolSettings::default())
        .await
        .unwrap();
    (dir, path, repo)
}

/// A trade case carrying the answer for an idempotency key nobody claimed: its create must
/// fail with `IdempotencyClaimLost` and write nothing.
pub(crate) fn unclaimed_trade_case(provider: Uuid) -> NewTradeRegistration {
    NewTradeRegistration {
        idempotency: Some(crate::IdempotentAnswer {
            scope: provider,
            key: "never-claimed".into(),
            status: 201,
            body: vec![],
        }),
        ..trade_case(provider)
    }
}

/// A trade case with a new company, a rendered and a pending document, and a status
/// change with an event; Unicode, quotes and JSON in every text column that takes them.
pub(crate) fn trade_case(provider: Uuid) -> NewTradeRegistration {
    let (id, company) = (Uuid::now_v7(), Uuid::now_v7());
    let now = micros(time::OffsetDateTime::now_utc());
    let document = |doc_type: DocumentType, owner: i32, rendered: bool| DocumentRecord {
        id: Uuid::now_v7(),
        case_id: id,
        case_kind: CaseKind::Trade,
        owner_index: Some(owner),
        doc_type,
        name: format!("{} - Jürgen \"Ł\" Ωmega.pdf", doc_type.as_str()),
        storage_key: format!("trade/{id}/{}-{owner}.pdf", doc_type.as_str()),
        content_type: "application/pdf".into(),
        size: rendered.then_some(1234),
        sha256: rendered.then(|| vec![0xab; 32]),
        created_at: now,
    };
    NewTradeRegistration {
        head: crate::CaseHead {
            id,
            company_id: company,
            provider_id: provider,
            environment: domain::company::Environment::Sandbox,
            package: domain::trade::Package::Assisted,
            status: TradeStatus::Submitted,
            record: json!({"name": "Müller", "client_reference": "Ref «7»", "owners": [{"first_name": "Ærøskøbing\u{0301}"}], "n": 1.5}),
            created_at: now,
            documents: vec![
                document(DocumentType::TradeLicenceApplication, 0, true),
                document(DocumentType::PowerOfAttorney, 0, false),
            ],
            history: vec![StatusChange::step(
                TradeStatus::Submitted,
                None,
                domain::lifecycle::Actor::Provider(provider),
                Some("with \"quotes\"".into()),
                now,
            )],
        },
        new_company: Some((
            company,
            NewClientCompany {
                provider_id: provider,
                name: "Müller & Söhne GmbH".into(),
                environment: domain::company::Environment::Sandbox,
                legal_form: Some("gmbh".into()),
                registration_number: None,
                business_address: Some(json!({"zip": "10115", "city": "Berlin"})),
            },
        )),
        price_cents: 4900,
        trade_office: Some(json!({"key": "11000000", "name": "Berlin"})),
        trade_office_candidates: Some(json!([{"key": "1"}, {"key": "2"}])),
        idempotency: None,
    }
}

/// The on-thread read decodes every column exactly as the pooled (sqlx) read does, sees
/// writes committed after its connection was opened, and answers `None` for a missing id.
#[tokio::test]
async fn on_thread_read_matches_the_pooled_read() {
    let (_dir, _, repo) = file_repo().await;
    let provider = repo.create_provider("P").await.unwrap().id;
    let new = trade_case(provider);
    let id = new.id;
    // The directory has an entry for the case's office: it is read with the case.
    let entry = crate::TradeOfficeEntry {
        key: "11000000".into(),
        name: "Bezirksamt Mitte – Gewerbeamt".into(),
        address: Some("Müllerstraße 146, 13353 Berlin".into()),
        email: None,
        phone: Some("+49 30 9018-0".into()),
        website: None,
        updated_at: micros(time::OffsetDateTime::now_utc()),
    };
    repo.upsert_trade_office(&entry).await.unwrap();
    // A reader connection exists before the write: it must still see the new case.
    assert!(matches!(repo.readers.trade(id), Some(Ok(None))));
    repo.create_trade_registration(&new).await.unwrap();
    let now = micros(time::OffsetDateTime::now_utc());
    let operator = repo.create_operator("Olga Operator").await.unwrap().id;
    repo.verify_identity(
        id,
        0,
        now,
        domain::lifecycle::Actor::Operator(operator),
        now,
    )
    .await
    .unwrap();

    let on_thread = repo.readers.trade(id).expect("answered").unwrap();
    let pooled = repo.sql.trade_via_sqlx(id).await.unwrap();
    assert!(on_thread.is_some());
    assert_eq!(on_thread, pooled);
    let record = on_thread.unwrap();
    assert_eq!(record.identity_verifications.len(), 1);
    assert_eq!(record.documents.len(), 2);
    assert_eq!(record.company_name.as_deref(), Some("Müller & Söhne GmbH"));
    assert_eq!(record.trade_office_entry, Some(entry));
    // The history with its field-change entry and the actors' names.
    let names: Vec<Option<&str>> = record
        .history
        .iter()
        .map(|h| h.actor_name.as_deref())
        .collect();
    assert_eq!(names, [Some("P"), Some("Olga Operator")]);
    assert_eq!(record.history[1].changes.len(), 1);
    assert_eq!(
        record.history[1].changes[0].field,
        "owners[0].identity_verified_at"
    );
    // And through the trait, which takes the on-thread path.
    assert_eq!(repo.get_trade_registration(id).await.unwrap(), pooled);
}

/// Statuses, packages and document types are read back as the domain's types: a stored name the
/// domain does not know (a row written by hand, or by a newer version) fails the read as
/// corrupt data on both read paths, naming what it is, instead of reaching a handler as text.
#[tokio::test]
async fn a_stored_name_the_domain_does_not_know_is_corrupt() {
    let (_dir, _, repo) = file_repo().await;
    let provider = repo.create_provider("P").await.unwrap().id;
    let new = trade_case(provider);
    repo.create_trade_registration(&new).await.unwrap();
    let corrupt = |e: crate::StoreError| match e {
        crate::StoreError::Corrupt(m) => m,
        other => panic!("not corrupt: {other:?}"),
    };
    for (statement, named) in [
        (
            "UPDATE trade_registrations SET status = 'validated'",
            "unknown status \"validated\"",
        ),
        (
            "UPDATE trade_registrations SET status = 'submitted', package = 'guided'",
            "unknown package \"guided\"",
        ),
        (
            "UPDATE trade_registrations SET package = 'assisted'; UPDATE documents SET doc_type = 'gewa-1'",
            "unknown document type \"gewa-1\"",
        ),
    ] {
        sqlx::raw_sql(statement)
            .execute(&repo.sql.pool)
            .await
            .unwrap();
        let on_thread = repo.readers.trade(new.id).expect("answered").unwrap_err();
        assert!(corrupt(on_thread).contains(named), "{statement}");
        let pooled = repo.sql.trade_via_sqlx(new.id).await.unwrap_err();
        assert!(corrupt(pooled).contains(named), "{statement}");
    }
}

/// A database another connection holds exclusively (rollback-journal locking): the
/// on-thread read does not wait but gives way (`None`), and reads again once it is free.
#[tokio::test]
async fn a_busy_database_sends_the_read_to_the_pool() {
    let (_dir, path, repo) = file_repo().await;
    repo.sql.pool.close().await;
    repo.sql.reads.1.close().await;
    repo.sql.writer.close().await;
    let readers = Readers {
        path: path.clone(),
        idle: std::sync::Mutex::new(Vec::new()),
    };
    let id = Uuid::now_v7();
    let blocker = rusqlite::Connection::open(&path).unwrap();
    blocker
        .execute_batch(
            "PRAGMA journal_mode = DELETE; PRAGMA locking_mode = EXCLUSIVE; \
             BEGIN EXCLUSIVE; DELETE FROM companies;",
        )
        .unwrap();
    let started = std::time::Instant::now();
    let answered = readers.trade(id);
    assert!(answered.is_none(), "did not give way: {answered:?}");
    assert!(
        started.elapsed() < std::time::Duration::from_millis(500),
        "waited"
    );
    drop(blocker);
    assert!(matches!(readers.trade(id), Some(Ok(None))));
}

/// Every row of `table` in insertion order, each column as SQLite holds it (type and
/// value), without the columns in `random` (fresh ids the create draws itself).
pub(super) fn dump(
    path: &std::path::Path,
    table: &str,
    random: &[&str],
) -> Vec<Vec<(String, rusqlite::types::Value)>> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut statement = conn
        .prepare(&format!("SELECT * FROM {table} ORDER BY rowid"))
        .unwrap();
    let names: Vec<String> = statement
        .column_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    statement
        .query_map([], |row| {
            Ok(names
                .iter()
                .enumerate()
                .filter(|(_, n)| !random.contains(&n.as_str()))
                .map(|(i, n)| (n.clone(), row.get::<_, rusqlite::types::Value>(i).unwrap()))
                .collect())
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// A trade case with an idempotency claim, a tax case and two webhook endpoints (one for
/// every event, one for a tax event only) of `provider`, to write into several databases.
pub(crate) struct Sample {
    pub endpoints: [crate::WebhookEndpoint; 2],
    pub times: crate::IdempotencyTimes,
    pub trade: NewTradeRegistration,
    pub tax: crate::NewTaxRegistration,
}

impl Sample {
    /// The tables [`Sample::write`] writes to, each with the columns that take values drawn
    /// afresh by every write (which differ between two databases).
    pub(crate) const TABLES: [(&str, &[&str]); 7] = [
        ("companies", &[]),
        ("trade_registrations", &[]),
        ("tax_registrations", &["list_key"]),
        ("documents", &[]),
        ("status_history", &[]),
        ("webhook_messages", &["id"]),
        ("idempotency_keys", &[]),
    ];

    pub(crate) fn new(provider: Uuid) -> Self {
        use crate::{IdempotencyTimes, IdempotentAnswer, NewTaxRegistration, WebhookEndpoint};
        let now = micros(time::OffsetDateTime::now_utc());
        let endpoint = |id: Uuid, events: Option<Vec<String>>| WebhookEndpoint {
            id,
            provider_id: provider,
            url: "https://hooks.example.com/filing".into(),
            events,
            secret: "whsec_c2VjcmV0".into(),
            previous_secret: None,
            previous_secret_expires_at: None,
            created_at: now,
            circuit: Default::default(),
        };
        let all = endpoint(Uuid::now_v7(), None);
        let tax_only = endpoint(
            Uuid::now_v7(),
            Some(vec!["tax-registration.submitted".into()]),
        );
        let times = IdempotencyTimes {
            now,
            ttl: time::Duration::hours(24),
            abandon_after: time::Duration::minutes(5),
        };

        let mut trade = trade_case(provider);
        trade.idempotency = Some(IdempotentAnswer {
            scope: provider,
            key: "key-ä".into(),
            status: 201,
            body: b"{\"id\":1}".to_vec(),
        });
        let tax_id = Uuid::now_v7();
        let tax = NewTaxRegistration {
            head: crate::CaseHead {
                id: tax_id,
                company_id: Uuid::nil(),
                provider_id: provider,
                environment: domain::company::Environment::Production,
                package: domain::tax_core::TaxPackage::Guided,
                status: TaxStatus::Submitted,
                record: json!({"client_reference": "T-1", "directors": [{"name": "Zoë"}]}),
                created_at: now,
                documents: trade
                    .documents
                    .iter()
                    .zip([
                        DocumentType::TaxRegistrationXml,
                        DocumentType::TaxRegistrationSummary,
                    ])
                    .map(|(d, doc_type)| DocumentRecord {
                        id: Uuid::now_v7(),
                        case_id: tax_id,
                        case_kind: CaseKind::Tax,
                        owner_index: None,
                        doc_type,
                        storage_key: format!("tax/{tax_id}/{}.pdf", doc_type.as_str()),
                        ..d.clone()
                    })
                    .collect(),
                history: trade
                    .history
                    .iter()
                    .map(|h| StatusChange {
                        status: TaxStatus::Submitted.into(),
                        ..h.clone()
                    })
                    .collect(),
            },
            // Another id than its key, as a case whose chosen id was taken as a key.
            public_id: Uuid::now_v7(),
            new_company: trade.new_company.clone().map(|(_, c)| (Uuid::now_v7(), c)),
            legal_form: domain::tax::TaxLegalForm::Gmbh,
            tax_office_number: Some("1116".into()),
            tax_office_lookup: None,
            idempotency: None,
        };
        let tax = NewTaxRegistration {
            head: crate::CaseHead {
                company_id: tax.new_company.as_ref().unwrap().0,
                ..tax.head
            },
            ..tax
        };
        Sample {
            endpoints: [all, tax_only],
            times,
            trade,
            tax,
        }
    }

    /// The endpoints, the claim, then both cases.
    pub(crate) async fn write(&self, repo: &impl Repository) {
        for e in &self.endpoints {
            assert!(repo.create_webhook_endpoint(e, 20).await.unwrap());
        }
        let claim = repo
            .claim_idempotency_key(self.trade.provider_id, "key-ä", b"hash", self.times)
            .await
            .unwrap();
        assert!(
            matches!(claim, crate::IdempotencyClaim::Claimed),
            "{claim:?}"
        );
        repo.create_trade_registration(&self.trade).await.unwrap();
        repo.create_tax_registration(&self.tax).await.unwrap();
    }
}

/// Creates through rusqlite (`create_direct`) and through sqlx (the path PostgreSQL and
/// in-memory databases take) write identical rows: same types, same encodings, same outbox
/// messages, the same completed idempotency record.
#[tokio::test]
async fn direct_and_sqlx_creates_write_identical_rows() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let paths: Vec<_> = dirs.iter().map(|d| d.path().join("t.db")).collect();
    let mut repos = Vec::new();
    for path in &paths {
        let url = format!("sqlite://{}", path.display());
        repos.push(
            SqliteRepository::connect(&url, PoolSettings::default())
                .await
                .unwrap(),
        );
    }
    repos[1].sqlx_creates = true;
    assert!(!repos[0].sqlx_creates);

    // The same provider (copied row for row) and the same endpoint in both databases.
    let provider = repos[0].create_provider("Plattform «P»").await.unwrap().id;
    let copy = rusqlite::Connection::open(&paths[1]).unwrap();
    copy.execute("ATTACH DATABASE ?1 AS a", [paths[0].to_str().unwrap()])
        .unwrap();
    copy.execute("INSERT INTO companies SELECT * FROM a.companies", [])
        .unwrap();
    drop(copy);
    let sample = Sample::new(provider);
    for repo in &repos {
        sample.write(repo).await;
    }
    let (trade, tax, tax_id) = (&sample.trade, &sample.tax, sample.tax.id);

    for (table, random) in Sample::TABLES {
        let (direct, pooled) = (
            dump(&paths[0], table, random),
            dump(&paths[1], table, random),
        );
        assert!(!direct.is_empty(), "{table} is empty");
        assert_eq!(direct, pooled, "{table}");
    }
    // The outbox: the trade event for one endpoint, the tax event for both.
    assert_eq!(dump(&paths[0], "webhook_messages", &[]).len(), 3);
    let keys = dump(&paths[0], "idempotency_keys", &[]);
    assert!(keys[0].contains(&("state".into(), rusqlite::types::Value::Text("done".into()))));
    // And what was written directly reads back through sqlx as it was given.
    // (Documents are read in the order created, owner, type.)
    let sorted = |mut d: Vec<DocumentRecord>| {
        d.sort_by_key(|d| d.doc_type.as_str());
        d
    };
    let read = repos[0]
        .sql
        .trade_via_sqlx(trade.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (read.head.record, read.head.documents, read.head.history),
        (
            trade.record.clone(),
            sorted(trade.documents.clone()),
            // Its provider named, as every read names the history's accounts.
            trade
                .history
                .iter()
                .map(|h| StatusChange {
                    actor_name: (h.actor == domain::lifecycle::Actor::Provider(provider))
                        .then(|| "Plattform «P»".to_string()),
                    ..h.clone()
                })
                .collect::<Vec<_>>()
        )
    );
    let read = repos[0]
        .get_tax_registration(tax_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (read.head.record, read.head.documents),
        (tax.record.clone(), sorted(tax.documents.clone()))
    );
}

/// The direct path refuses as the sqlx path does and leaves nothing behind: a duplicate id
/// is a conflict naming the column, a second trade case of a company the company conflict,
/// a claim another request took over `IdempotencyClaimLost`; its connection is durable
/// (`synchronous = FULL`) and enforces foreign keys.
#[tokio::test]
async fn direct_creates_refuse_like_sqlx() {
    use crate::StoreError;
    let (_dir, path, repo) = file_repo().await;
    assert_eq!(repo.direct.writer.settings(), (2, 1));
    let provider = repo.create_provider("P").await.unwrap().id;
    let first = trade_case(provider);
    repo.create_trade_registration(&first).await.unwrap();
    let count = |table: &str| dump(&path, table, &[]).len();
    let counts = || {
        [
            "companies",
            "trade_registrations",
            "documents",
            "status_history",
        ]
        .map(count)
    };
    let before = counts();

    let other_company = trade_case(provider).new_company;
    let same_id = NewTradeRegistration {
        head: crate::CaseHead {
            company_id: other_company.as_ref().unwrap().0,
            documents: vec![],
            ..first.head.clone()
        },
        new_company: other_company,
        ..first.clone()
    };
    let e = repo.create_trade_registration(&same_id).await.unwrap_err();
    assert!(
        matches!(&e, StoreError::Conflict(c) if c.contains("trade_registrations.id")),
        "{e:?}"
    );

    let same_company = NewTradeRegistration {
        head: crate::CaseHead {
            id: Uuid::now_v7(),
            documents: vec![],
            ..first.head.clone()
        },
        new_company: None,
        ..first.clone()
    };
    let e = repo
        .create_trade_registration(&same_company)
        .await
        .unwrap_err();
    assert!(e.is_company_conflict(), "{e:?}");

    let unknown_company = NewTradeRegistration {
        head: crate::CaseHead {
            id: Uuid::now_v7(),
            company_id: Uuid::now_v7(),
            documents: vec![],
            ..first.head.clone()
        },
        new_company: None,
        ..first.clone()
    };
    let e = repo
        .create_trade_registration(&unknown_company)
        .await
        .unwrap_err();
    assert!(matches!(e, StoreError::Conflict(_)), "{e:?}");

    let unclaimed = unclaimed_trade_case(provider);
    let e = repo
        .create_trade_registration(&unclaimed)
        .await
        .unwrap_err();
    assert!(matches!(e, StoreError::IdempotencyClaimLost), "{e:?}");

    assert_eq!(before, counts(), "a refused create left rows");
    // The connection is still usable after the refusals.
    repo.create_trade_registration(&trade_case(provider))
        .await
        .unwrap();
    assert_eq!(count("trade_registrations"), 2);
}

/// Spawns a create of each case while holding the writer's turn, so that all of them
/// queue, runs `meanwhile`, and lets them go at once. On this one-thread runtime every
/// spawned create runs while the test sleeps: each sends its case, and the writer's task
/// takes what has arrived and waits for the turn.
async fn queued_creates(
    repo: &std::sync::Arc<SqliteRepository>,
    cases: &[NewTradeRegistration],
    meanwhile: impl FnOnce(),
) -> Vec<tokio::task::JoinHandle<crate::Result<()>>> {
    let turn = repo.sql.writer.acquire().await.unwrap();
    let tasks = cases
        .iter()
        .cloned()
        .map(|c| {
            let repo = repo.clone();
            tokio::spawn(async move { repo.create_trade_registration(&c).await })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    meanwhile();
    drop(turn);
    tasks
}

/// Creates that arrive while the writer is busy are written as one group: one commit for
/// many cases. Refusals in the group (a second case of a company, an unknown company, a
/// claim that is not in flight) are rolled back to their own savepoint and answered as
/// refusals; a case that fails otherwise (a CHECK constraint) sends the group back to
/// one transaction per case, so it fails alone. Every other case is written whole.
#[tokio::test]
async fn concurrent_creates_are_committed_in_groups_and_fail_alone() {
    use crate::{IdempotentAnswer, StoreError};
    let (_dir, path, repo) = file_repo().await;
    let repo = std::sync::Arc::new(repo);
    let provider = repo.create_provider("P").await.unwrap().id;
    let direct = &repo.direct;

    for broken_one in [false, true] {
        let commits_before = direct.writer.commits();
        let rows_before = dump(&path, "trade_registrations", &[]).len();
        let mut cases: Vec<NewTradeRegistration> = (0..20).map(|_| trade_case(provider)).collect();
        // 3: a second case of the company of 2; 5: an unknown company; 7: a lost claim.
        cases[3].new_company = None;
        cases[3].company_id = cases[2].company_id;
        cases[5].new_company = None;
        cases[5].company_id = Uuid::now_v7();
        cases[7].idempotency = Some(IdempotentAnswer {
            scope: provider,
            key: format!("never-claimed-{broken_one}"),
            status: 201,
            body: vec![],
        });
        // 11: a document with a size and no digest (CHECK), on the second round.
        if broken_one {
            cases[11].documents[0].sha256 = None;
        }
        let tasks = queued_creates(&repo, &cases, || ()).await;
        let mut outcomes = Vec::new();
        for t in tasks {
            outcomes.push(t.await.unwrap());
        }
        for (i, outcome) in outcomes.iter().enumerate() {
            match i {
                3 => assert!(
                    matches!(outcome, Err(e) if e.is_company_conflict()),
                    "{outcome:?}"
                ),
                5 => assert!(
                    matches!(outcome, Err(StoreError::Conflict(_))),
                    "{outcome:?}"
                ),
                7 => assert!(
                    matches!(outcome, Err(StoreError::IdempotencyClaimLost)),
                    "{outcome:?}"
                ),
                11 if broken_one => assert!(
                    matches!(outcome, Err(StoreError::Embedded(_))),
                    "{outcome:?}"
                ),
                _ => assert!(outcome.is_ok(), "case {i}: {outcome:?}"),
            }
        }
        let written: Vec<Uuid> = outcomes
            .iter()
            .zip(&cases)
            .filter(|(o, _)| o.is_ok())
            .map(|(_, c)| c.id)
            .collect();
        assert_eq!(written.len(), if broken_one { 16 } else { 17 });
        // Exactly the accepted cases are there, each with its documents and history.
        assert_eq!(
            dump(&path, "trade_registrations", &[]).len(),
            rows_before + written.len()
        );
        for (case, outcome) in cases.iter().zip(&outcomes) {
            let read = repo.get_trade_registration(case.id).await.unwrap();
            match outcome {
                Ok(()) => {
                    let read = read.unwrap();
                    assert_eq!(read.documents.len(), case.documents.len());
                    assert_eq!(read.history.len(), case.history.len());
                }
                Err(_) => assert!(read.is_none(), "{}", case.id),
            }
        }
        let commits = direct.writer.commits() - commits_before;
        if broken_one {
            // The group failed as a whole and its cases were written one by one.
            assert_eq!(commits, 16, "each accepted case alone");
        } else {
            assert!(commits <= 2, "{commits} commits for 20 creates");
        }
    }
}

/// A group that meets a database it cannot write (another process holds the write lock
/// past the busy timeout) is answered unavailable as a whole, after one busy timeout: not
/// tried again case by case, which would wait the timeout out once per case. Once the lock
/// is gone, creates go through again.
#[tokio::test]
async fn a_busy_database_fails_a_group_once() {
    use crate::StoreError;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let url = format!("sqlite://{}", path.display());
    let busy_timeout = std::time::Duration::from_millis(300);
    let settings = PoolSettings {
        busy_timeout,
        ..PoolSettings::default()
    };
    let repo = std::sync::Arc::new(SqliteRepository::connect(&url, settings).await.unwrap());
    let provider = repo.create_provider("P").await.unwrap().id;
    let direct = &repo.direct;
    let commits_before = direct.writer.commits();

    let cases: Vec<NewTradeRegistration> = (0..10).map(|_| trade_case(provider)).collect();
    // Another process's write lock, taken while the creates wait for the writer.
    let other = rusqlite::Connection::open(&path).unwrap();
    let tasks = queued_creates(&repo, &cases, || {
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
    })
    .await;
    let started = std::time::Instant::now();
    for t in tasks {
        let outcome = t.await.unwrap();
        assert!(
            matches!(outcome, Err(StoreError::Unavailable(_))),
            "{outcome:?}"
        );
    }
    let waited = started.elapsed();
    assert!(
        waited < busy_timeout * 4,
        "waited {waited:?}: the busy timeout once per case?"
    );
    assert_eq!(direct.writer.commits(), commits_before);
    other.execute_batch("ROLLBACK").unwrap();
    drop(other);

    repo.create_trade_registration(&trade_case(provider))
        .await
        .unwrap();
    assert_eq!(direct.writer.commits(), commits_before + 1);
}

/// Runs a store test that both backends run on a repository on a new database file.
async fn on_file_repo(
    test: impl for<'r> FnOnce(&'r dyn Repository) -> futures::future::BoxFuture<'r, ()>,
) {
    let (_dir, _path, repo) = file_repo().await;
    test(&repo).await;
}

// The case lists (`CaseListStore::list_case_page`), the operators' lists (its filters, searches
// and orders, `count_cases_by_status`) and a case's webhook deliveries
// (`CaseListStore::list_case_deliveries`): `sql/list_tests.rs` has the tests.
crate::sql::list_tests::backend_list_tests!(on_file_repo);

/// Issue 52.3: a read through the pool that runs past its budget (the acquire timeout) is
/// interrupted by the progress handler and answers `Unavailable` (503 with `Retry-After` in
/// the server), and its connection is free again at once: every one of the pool's connections
/// serves the next reads.
#[tokio::test]
async fn a_read_past_its_budget_is_interrupted_and_frees_its_connection() {
    use crate::StoreError;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let budget = std::time::Duration::from_millis(200);
    let settings = PoolSettings {
        acquire_timeout: budget,
        ..PoolSettings::default()
    };
    let repo = SqliteRepository::connect(&url, settings).await.unwrap();
    // A statement that would count for minutes.
    const ENDLESS: &str = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n \
                           WHERE i < 10000000000) SELECT count(*) FROM n";
    let started = std::time::Instant::now();
    let outcome: crate::Result<i64> = repo
        .sql
        .read(|c| Box::pin(async move { sqlx::query_scalar(ENDLESS).fetch_one(c).await }))
        .await;
    let took = started.elapsed();
    assert!(
        matches!(outcome, Err(StoreError::Unavailable(_))),
        "{outcome:?}"
    );
    assert!(took < budget * 5, "interrupted after {took:?}");
    // Every connection of the pool is usable again, and a quick read is within budget.
    for _ in 0..16 {
        let one: i64 = repo
            .sql
            .read(|c| Box::pin(async move { sqlx::query_scalar("SELECT 1").fetch_one(c).await }))
            .await
            .unwrap();
        assert_eq!(one, 1);
    }
    // All eight of the budgeted pool's connections at once: the interrupted read holds none.
    let held = futures::future::join_all((0..8).map(|_| repo.sql.reads.1.acquire())).await;
    assert!(held.iter().all(Result::is_ok), "a connection is still held");
    drop(held);
    // Long after the budget, the other paths' statements are not interrupted (the handler
    // lives only on the budgeted pool's connections), and budgeted reads work again.
    tokio::time::sleep(budget * 2).await;
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM companies")
        .fetch_one(&repo.sql.pool)
        .await
        .unwrap();
    assert!(n >= 0);
    for _ in 0..16 {
        let one: i64 = repo
            .sql
            .read(|c| Box::pin(async move { sqlx::query_scalar("SELECT 1").fetch_one(c).await }))
            .await
            .unwrap();
        assert_eq!(one, 1);
    }
}

// The webhook claim's limits, round robin and circuits: `sql/webhook_tests.rs`.
crate::sql::webhook_tests::backend_webhook_tests!(on_file_repo);

/// Issue 52.3: no list statement (every filter combination of the case lists, the operators'
/// lists and counts, the event log: `crate::plans`) reads a whole table, and every statement
/// of one tenant seeks it by an index on its provider, company or case. The service runs no
/// `ANALYZE`, so SQLite plans in production as here, from the indexes alone;
/// `examples/console_lists.rs --explain` shows the plans at a million cases
/// (docs/operations.md "Reads").
#[tokio::test]
async fn no_list_statement_reads_a_whole_table() {
    let (_dir, _path, repo) = file_repo().await;
    let ids = crate::plans::PlanIds {
        provider: Uuid::now_v7(),
        company: Uuid::now_v7(),
        case: Uuid::now_v7(),
    };
    let plans = repo.explain_lists(ids).await.unwrap();
    assert!(plans.len() > 500, "{} statements", plans.len());
    let whole: Vec<String> = plans
        .iter()
        .filter(|p| p.reads_a_whole_table() || (p.tenant && !p.seeks_its_tenant()))
        .map(|p| format!("{}:\n{}", p.statement, p.plan))
        .collect();
    assert!(
        whole.is_empty(),
        "{} read a whole table or walk it for one tenant:\n{}",
        whole.len(),
        whole.join("\n\n")
    );
}

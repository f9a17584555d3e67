//! The repository against both databases: what the trade registration endpoint will rely on.

mod common;

use common::TestApp;
use domain::case::{CaseKind, DocumentType};
use domain::lifecycle::{Actor, TaxStatus, TradeStatus};
use serde_json::json;
use store::{DocumentRecord, NewClientCompany, NewTradeRegistration, StatusChange};
use uuid::Uuid;

fn new_case(provider: Uuid, company: Uuid, new_company: bool) -> NewTradeRegistration {
    let id = Uuid::now_v7();
    let now = time::OffsetDateTime::now_utc();
    let now = now
        .replace_nanosecond(now.nanosecond() / 1000 * 1000)
        .unwrap();
    NewTradeRegistration {
        head: store::CaseHead {
            id,
            company_id: company,
            provider_id: provider,
            environment: domain::company::Environment::Sandbox,
            package: domain::trade::Package::SelfService,
            status: TradeStatus::FormRendered,
            record: json!({"name": "Mustermann GmbH", "owners": [{"first_name": "Erika"}]}),
            created_at: now,
            documents: vec![DocumentRecord {
                id: Uuid::now_v7(),
                case_id: id,
                case_kind: CaseKind::Trade,
                owner_index: Some(0),
                doc_type: DocumentType::TradeLicenceApplication,
                name: "GewA 1 - Erika Mustermann.pdf".into(),
                storage_key: format!("trade/{id}/gewa1-0.pdf"),
                content_type: "application/pdf".into(),
                size: Some(1234),
                sha256: Some(vec![7; 32]),
                created_at: now,
            }],
            history: vec![
                StatusChange::created(TradeStatus::Initiated, provider, now),
                StatusChange::step(TradeStatus::FormRendered, Some(TradeStatus::Initiated.into()), Actor::System, None, now),
            ],
        },
        new_company: new_company.then(|| {
            (
                company,
                NewClientCompany {
                    provider_id: provider,
                    name: "Mustermann GmbH".into(),
                    environment: domain::company::Environment::Sandbox,
                    legal_form: Some("gmbh".into()),
                    registration_number: None,
                    business_address: Some(json!({"street": "Musterstraße 1", "zip": "10115", "city": "Berlin", "country": "DE"})),
                },
            )
        }),
        price_cents: 4900,
        trade_office: Some(json!({"key": "11000000", "name": "Berlin"})),
        trade_office_candidates: None,
        idempotency: None,
    }
}

/// `history` as a read gives it back: the entries of `provider` carry its `name`.
fn named_provider(history: &[StatusChange], provider: Uuid, name: &str) -> Vec<StatusChange> {
    let actor = Actor::Provider(provider);
    history
        .iter()
        .map(|h| StatusChange {
            actor_name: (h.actor == actor).then(|| name.to_string()),
            ..h.clone()
        })
        .collect()
}

fn new_tax_case(provider: Uuid, company: Uuid, id: Uuid) -> store::NewTaxRegistration {
    let now = time::OffsetDateTime::now_utc();
    let now = now
        .replace_nanosecond(now.nanosecond() / 1000 * 1000)
        .unwrap();
    store::NewTaxRegistration {
        head: store::CaseHead {
            id,
            company_id: company,
            provider_id: provider,
            environment: domain::company::Environment::Production,
            package: domain::tax_core::TaxPackage::SelfService,
            status: TaxStatus::Validated,
            record: json!({"name": "Mustermann GmbH"}),
            created_at: now,
            documents: vec![DocumentRecord {
                id: Uuid::now_v7(),
                case_id: id,
                case_kind: CaseKind::Tax,
                owner_index: None,
                doc_type: DocumentType::TaxRegistrationXml,
                name: "Fragebogen.xml".into(),
                storage_key: format!("tax/{id}/fse.xml"),
                content_type: "application/xml".into(),
                size: Some(10),
                sha256: Some(vec![1; 32]),
                created_at: now,
            }],
            history: vec![StatusChange::created(TaxStatus::Validated, provider, now)],
        },
        public_id: id,
        new_company: None,
        legal_form: domain::tax::TaxLegalForm::Gmbh,
        tax_office_number: Some("1127".into()),
        tax_office_lookup: Some(json!({"status": "needs_confirmation"})),
        idempotency: None,
    }
}

backend_tests! {
    async fn api_keys_keep_their_environment_and_list_by_it(backend) {
        use domain::auth::KeyKind;
        use domain::company::Environment;
        let app = TestApp::spawn(backend).await.unwrap();
        let (provider, open) = app.provider("P").await;
        let repo = app.state.repo.as_ref();
        let mut made = Vec::new();
        for env in [Some(Environment::Sandbox), Some(Environment::Production), None, Some(Environment::Sandbox)] {
            let key = server::auth::issue_restricted_key(repo, KeyKind::Provider, provider, env).await.unwrap();
            let found = repo.find_api_key(&key.record.prefix).await.unwrap().unwrap();
            assert_eq!(found.environment, env);
            assert_eq!(found, store::ApiKeyRecord { company_provider_id: None, ..key.record.clone() });
            made.push(key.record);
        }
        // The capped insert keeps it too.
        let capped = server::auth::issue_company_key(repo, KeyKind::Provider, provider, Some(Environment::Production), 100).await.unwrap().unwrap();
        assert_eq!(repo.find_api_key(&capped.record.prefix).await.unwrap().unwrap().environment, Some(Environment::Production));

        let all = repo.list_api_keys(provider, None, None, 100).await.unwrap();
        assert_eq!(all.len(), 6);
        assert_eq!(all[0].prefix, domain::auth::parse_key(&open).unwrap().prefix);
        assert_eq!(all[0].environment, None);
        let sandbox = repo.list_api_keys(provider, Some(Environment::Sandbox), None, 100).await.unwrap();
        let prefixes: Vec<&str> = sandbox.iter().map(|k| k.prefix.as_str()).collect();
        assert_eq!(prefixes, [made[0].prefix.as_str(), made[3].prefix.as_str()]);
        assert!(sandbox.iter().all(|k| k.environment == Some(Environment::Sandbox)));
        // Paged after a restricted prefix.
        let rest = repo.list_api_keys(provider, Some(Environment::Sandbox), Some(&made[0].prefix), 100).await.unwrap();
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].prefix, made[3].prefix);
        let live = repo.list_api_keys(provider, Some(Environment::Production), None, 100).await.unwrap();
        assert_eq!(live.len(), 2);
    }

    async fn providers_and_operators_list_in_pages(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let repo = app.state.repo.as_ref();
        let mut providers = Vec::new();
        for name in ["A", "B", "C"] {
            providers.push(app.provider(name).await.0);
        }
        // A client company is no provider.
        app.client_company(providers[0], "Client GmbH").await;
        let page = repo.list_providers(None, 2).await.unwrap();
        let ids: Vec<Uuid> = page.iter().map(|c| c.id).collect();
        assert_eq!(ids, providers[..2]);
        assert_eq!(page[1].name, "B");
        assert!(page.iter().all(|c| c.kind == domain::company::CompanyKind::Provider));
        let rest = repo.list_providers(Some(ids[1]), 2).await.unwrap();
        assert_eq!(rest.iter().map(|c| c.id).collect::<Vec<_>>(), [providers[2]]);
        assert!(repo.list_providers(Some(providers[2]), 2).await.unwrap().is_empty());

        assert!(repo.list_operators(None, 10).await.unwrap().is_empty());
        let (first, _) = app.operator("Olga").await;
        let (second, _) = app.operator("Otto").await;
        let all = repo.list_operators(None, 10).await.unwrap();
        let names: Vec<(Uuid, &str)> = all.iter().map(|o| (o.id, o.name.as_str())).collect();
        assert_eq!(names, [(first, "Olga"), (second, "Otto")]);
        let after = repo.list_operators(Some(first), 10).await.unwrap();
        assert_eq!(after.iter().map(|o| o.id).collect::<Vec<_>>(), [second]);
    }

    async fn tax_registration_round_trip_race_and_duplicate_id(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (provider, _) = app.provider("P").await;
        let (company, _) = app.client_company(provider, "C").await;
        let (other, _) = app.client_company(provider, "D").await;
        let id = Uuid::now_v7();
        let case = new_tax_case(provider, company, id);
        app.state.repo.create_tax_registration(&case).await.unwrap();
        let stored = app.state.repo.get_tax_registration(id).await.unwrap().expect("stored");
        assert_eq!((stored.status, stored.legal_form.as_str()), (TaxStatus::Validated, "gmbh"));
        assert_eq!(stored.record, case.record);
        assert_eq!(stored.tax_office_number.as_deref(), Some("1127"));
        assert_eq!(stored.documents, case.documents);
        assert_eq!(stored.history, named_provider(&case.history, provider, "P"));
        // The trade registration of the same company is independent of its tax registration.
        assert_eq!(app.state.repo.get_trade_registration(id).await.unwrap(), None);

        // The same id for another company: a conflict that is not about the company.
        let mut dup = new_tax_case(provider, other, id);
        dup.documents.clear();
        let err = app.state.repo.create_tax_registration(&dup).await.unwrap_err();
        assert!(matches!(err, store::StoreError::Conflict(_)), "{err}");
        assert!(!err.is_company_conflict(), "{err}");

        // Ids are unique per provider: its own id again under another key is the id conflict;
        // another case's key again under another id the key conflict, which the create answers
        // by taking a fresh key.
        let mut dup = new_tax_case(provider, other, Uuid::now_v7());
        dup.public_id = id;
        dup.documents.clear();
        let err = app.state.repo.create_tax_registration(&dup).await.unwrap_err();
        assert!(err.is_public_id_conflict() && !err.is_case_key_conflict() && !err.is_company_conflict(), "{err}");
        let (provider_b, _) = app.provider("B").await;
        let (company_b, _) = app.client_company(provider_b, "C").await;
        let mut theirs = new_tax_case(provider_b, company_b, id);
        theirs.documents.clear();
        let err = app.state.repo.create_tax_registration(&theirs).await.unwrap_err();
        assert!(err.is_case_key_conflict() && !err.is_public_id_conflict() && !err.is_company_conflict(), "{err}");
        let use_of = |p, id| app.state.repo.tax_registration_id_use(p, id);
        assert_eq!(use_of(provider, id).await.unwrap(), store::CaseIdUse { by_provider: true, as_key: true });
        assert_eq!(use_of(provider_b, id).await.unwrap(), store::CaseIdUse { by_provider: false, as_key: true });
        assert_eq!(use_of(provider_b, Uuid::now_v7()).await.unwrap(), store::CaseIdUse::default());
        theirs.id = Uuid::now_v7();
        app.state.repo.create_tax_registration(&theirs).await.unwrap();
        // Each provider (and client company) finds its own case by the id, nobody another's.
        let find = |scope, id| app.state.repo.find_tax_registration(scope, id);
        use store::CaseScope::{Company, Provider};
        assert_eq!(find(Provider(provider), id).await.unwrap().map(|c| c.id), Some(id));
        assert_eq!(find(Company(company), id).await.unwrap().map(|c| c.id), Some(id));
        let b_case = find(Provider(provider_b), id).await.unwrap().expect("B's case");
        assert_eq!((b_case.id, b_case.public_id, b_case.company_id), (theirs.id, id, company_b));
        assert_eq!(find(Company(company_b), id).await.unwrap().map(|c| c.id), Some(theirs.id));
        assert_eq!(find(Company(other), id).await.unwrap(), None);
        assert_eq!(find(Provider(company), id).await.unwrap(), None);
        assert_eq!(app.state.repo.get_tax_registration(theirs.id).await.unwrap().map(|c| c.public_id), Some(id));

        // Racing creates for one company: exactly one wins.
        let (racing, _) = app.client_company(provider, "E").await;
        let attempts: Vec<_> = (0..6)
            .map(|_| {
                let repo = app.state.repo.clone();
                let mut case = new_tax_case(provider, racing, Uuid::now_v7());
                case.documents.clear();
                tokio::spawn(async move { repo.create_tax_registration(&case).await })
            })
            .collect();
        let mut ok = 0;
        for a in attempts {
            match a.await.unwrap() {
                Ok(()) => ok += 1,
                Err(e) => assert!(e.is_company_conflict(), "{e}"),
            }
        }
        assert_eq!(ok, 1);
    }

    async fn endpoint_secrets_are_replaced_only_while_unchanged(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (provider, _) = app.provider("P").await;
        let repo = &app.state.repo;
        let now = time::OffsetDateTime::now_utc().replace_nanosecond(0).unwrap();
        let mut ids = Vec::new();
        for (secret, deleted) in [("s1", false), ("s2", true)] {
            let endpoint = store::WebhookEndpoint { id: Uuid::now_v7(), provider_id: provider, url: "https://example.com/hook".into(), events: None, secret: secret.into(), previous_secret: None, previous_secret_expires_at: None, created_at: now, circuit: Default::default() };
            assert!(repo.create_webhook_endpoint(&endpoint, 20).await.unwrap());
            if deleted {
                assert!(repo.delete_webhook_endpoint(endpoint.id, now).await.unwrap());
            }
            ids.push(endpoint.id);
        }
        assert!(repo.rotate_webhook_secret(ids[0], "s1b", now).await.unwrap());
        let mut all = repo.webhook_endpoint_secrets().await.unwrap();
        all.sort_by_key(|s| s.endpoint_id);
        let stored = |id, secret: &str, previous: Option<&str>| store::StoredSecrets { endpoint_id: id, secret: secret.into(), previous_secret: previous.map(Into::into) };
        assert_eq!(all, [stored(ids[0], "s1b", Some("s1")), stored(ids[1], "s2", None)], "deleted endpoints included");

        // A rotation between the read and the write wins: the stale replacement changes nothing.
        assert!(repo.rotate_webhook_secret(ids[0], "s1c", now).await.unwrap());
        assert!(!repo.replace_webhook_endpoint_secrets(&all[0], &stored(ids[0], "x", Some("y"))).await.unwrap());
        let fresh = stored(ids[0], "s1c", Some("s1b"));
        assert!(repo.replace_webhook_endpoint_secrets(&fresh, &stored(ids[0], "x", Some("y"))).await.unwrap());
        // An endpoint without a previous secret (a NULL) is matched too.
        assert!(repo.replace_webhook_endpoint_secrets(&all[1], &stored(ids[1], "z", None)).await.unwrap());
        let mut all = repo.webhook_endpoint_secrets().await.unwrap();
        all.sort_by_key(|s| s.endpoint_id);
        assert_eq!(all, [stored(ids[0], "x", Some("y")), stored(ids[1], "z", None)]);
    }

    async fn the_endpoint_limit_holds_under_racing_creates(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (provider, _) = app.provider("P").await;
        let (other, _) = app.provider("Q").await;
        let now = time::OffsetDateTime::now_utc().replace_nanosecond(0).unwrap();
        let endpoint = |provider_id| store::WebhookEndpoint { id: Uuid::now_v7(), provider_id, url: "https://example.com/hook".into(), events: None, secret: "s".into(), previous_secret: None, previous_secret_expires_at: None, created_at: now, circuit: Default::default() };
        let repo = &app.state.repo;
        // One place left, then none; another provider's endpoints do not count.
        assert!(repo.create_webhook_endpoint(&endpoint(other), 1).await.unwrap());
        assert!(repo.create_webhook_endpoint(&endpoint(provider), 2).await.unwrap());
        let attempts: Vec<_> = (0..12)
            .map(|_| {
                let repo = repo.clone();
                let e = endpoint(provider);
                tokio::spawn(async move { repo.create_webhook_endpoint(&e, 5).await })
            })
            .collect();
        let mut created = 0;
        for a in attempts {
            created += usize::from(a.await.unwrap().unwrap());
        }
        assert_eq!(created, 4, "five in all");
        assert_eq!(repo.list_webhook_endpoints(provider).await.unwrap().len(), 5);
        // A deleted endpoint frees its place.
        let first = repo.list_webhook_endpoints(provider).await.unwrap()[0].id;
        assert!(!repo.create_webhook_endpoint(&endpoint(provider), 5).await.unwrap());
        assert!(repo.delete_webhook_endpoint(first, now).await.unwrap());
        assert!(repo.create_webhook_endpoint(&endpoint(provider), 5).await.unwrap());
    }

    async fn kept_answers_page_and_are_replaced_only_while_unchanged(backend) {
        use store::IdempotencyTimes;
        let app = TestApp::spawn(backend).await.unwrap();
        let (provider, _) = app.provider("P").await;
        let repo = &app.state.repo;
        let times = IdempotencyTimes { now: time::OffsetDateTime::now_utc(), ttl: time::Duration::hours(24), abandon_after: time::Duration::seconds(90) };
        for key in ["c", "a", "b", "in-flight"] {
            repo.claim_idempotency_key(provider, key, b"hash", times).await.unwrap();
            if key != "in-flight" {
                repo.complete_idempotency_key(provider, key, 201, key.as_bytes()).await.unwrap();
            }
        }
        let first = repo.kept_answers(None, 2).await.unwrap();
        assert_eq!(first, [(provider, "a".to_string(), b"a".to_vec()), (provider, "b".to_string(), b"b".to_vec())]);
        let rest = repo.kept_answers(Some((provider, "b")), 2).await.unwrap();
        assert_eq!(rest, [(provider, "c".to_string(), b"c".to_vec())], "answered ones only");
        assert!(!repo.replace_kept_answer(provider, "c", b"stale", b"new").await.unwrap());
        assert!(repo.replace_kept_answer(provider, "c", b"c", b"new").await.unwrap());
        assert_eq!(repo.kept_answers(Some((provider, "b")), 2).await.unwrap()[0].2, b"new");
    }

    async fn trade_office_directory_upserts_and_pages(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let repo = &app.state.repo;
        let now = time::OffsetDateTime::now_utc().replace_nanosecond(0).unwrap();
        for (key, name) in [("072355007", "Verbandsgemeinde Trier-Land"), ("01001000", "Stadt Flensburg"), ("11000000", "Berlin")] {
            repo.upsert_trade_office(&store::TradeOfficeEntry { key: key.into(), name: name.into(), address: None, email: None, phone: None, website: None, updated_at: now }).await.unwrap();
        }
        let mut e = repo.get_trade_office("01001000").await.unwrap().unwrap();
        e.email = Some("gewerbe@flensburg.de".into());
        repo.upsert_trade_office(&e).await.unwrap();
        assert_eq!(repo.get_trade_office("01001000").await.unwrap(), Some(e));
        assert_eq!(repo.get_trade_office("99999999").await.unwrap(), None);
        let first: Vec<String> = repo.list_trade_offices(None, 2).await.unwrap().into_iter().map(|e| e.key).collect();
        assert_eq!(first, ["01001000", "072355007"]);
        let rest: Vec<String> = repo.list_trade_offices(Some("072355007"), 2).await.unwrap().into_iter().map(|e| e.key).collect();
        assert_eq!(rest, ["11000000"]);
    }

    async fn trade_registration_round_trip(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (provider, _) = app.provider("P").await;
        let company = Uuid::now_v7();
        let case = new_case(provider, company, true);
        app.state.repo.create_trade_registration(&case).await.unwrap();

        let stored = app.state.repo.get_trade_registration(case.id).await.unwrap().expect("stored");
        assert_eq!(stored.company_id, company);
        assert_eq!(stored.record, case.record);
        assert_eq!(stored.status, TradeStatus::FormRendered);
        assert_eq!(stored.price_cents, 4900);
        assert_eq!(stored.trade_office, case.trade_office);
        assert_eq!(stored.trade_office_candidates, None);
        assert!(!stored.is_paid);
        assert_eq!(stored.documents, case.documents);
        // Read back with the provider's name (the system's entry has none).
        assert_eq!(stored.history, named_provider(&case.history, provider, "P"));
        let c = app.state.repo.get_company(company).await.unwrap().expect("company created with the case");
        assert_eq!(c.provider_id, Some(provider));
        let doc = app.state.repo.get_document(case.documents[0].id).await.unwrap();
        assert_eq!(doc.as_ref(), Some(&case.documents[0]));
        assert_eq!(app.state.repo.get_trade_registration(Uuid::now_v7()).await.unwrap(), None);
    }

    async fn a_guarded_trade_patch_writes_only_over_the_case_it_read(backend) {
        use store::{TradeCaseGuard, TradePatch, TradePatchOutcome};
        let app = TestApp::spawn(backend).await.unwrap();
        let (provider, _) = app.provider("P").await;
        let case = new_case(provider, Uuid::now_v7(), true);
        app.state.repo.create_trade_registration(&case).await.unwrap();
        let repo = &app.state.repo;
        let office = json!({"key": "072355007", "name": "Trier-Land", "municipality_key": "07235001"});
        let patch = TradePatch { trade_office: Some(office.clone()), ..TradePatch::default() };
        let mut form = case.documents[0].clone();
        form.id = Uuid::now_v7();
        form.storage_key = format!("trade/{}/gewa1-0-new.pdf", case.id);
        let read = TradeCaseGuard { status: TradeStatus::FormRendered, trade_office: case.trade_office.clone() };

        // A guard that read another status or office writes nothing.
        let (operator, _) = app.operator("Olga Operator").await;
        let actor = Actor::Operator(operator);
        let history_len = || async { repo.get_trade_registration(case.id).await.unwrap().unwrap().history.len() };
        for stale in [
            TradeCaseGuard { status: TradeStatus::Submitted, ..read.clone() },
            TradeCaseGuard { trade_office: None, ..read.clone() },
            TradeCaseGuard { trade_office: Some(json!({"key": "11000000", "name": "Berlin (old)"})), ..read.clone() },
        ] {
            let got = repo.patch_trade_registration(case.id, &patch, Some(&stale), std::slice::from_ref(&form), actor).await.unwrap();
            assert_eq!(got, TradePatchOutcome::Stale, "{stale:?}");
        }
        let unchanged = repo.get_trade_registration(case.id).await.unwrap().unwrap();
        assert_eq!(unchanged.trade_office, case.trade_office);
        assert_eq!(unchanged.documents, case.documents);
        // A patch that is not applied leaves no history entry.
        assert_eq!(unchanged.history.len(), case.history.len());

        // The guard that matches: the office and the new form in one write; the old form's key
        // comes back for deletion; one history entry names the office before and after.
        let got = repo.patch_trade_registration(case.id, &patch, Some(&read), std::slice::from_ref(&form), actor).await.unwrap();
        assert_eq!(got, TradePatchOutcome::Applied { replaced: vec![case.documents[0].storage_key.clone()] });
        let after = repo.get_trade_registration(case.id).await.unwrap().unwrap();
        assert_eq!(after.trade_office, Some(office));
        assert_eq!(after.documents, vec![form.clone()]);
        assert_eq!(repo.get_document(case.documents[0].id).await.unwrap(), None);
        assert_eq!(after.history.len(), case.history.len() + 1);
        let entry = after.history.last().unwrap();
        assert_eq!((entry.status, entry.previous_status), (TradeStatus::FormRendered.into(), Some(TradeStatus::FormRendered.into())));
        assert_eq!((entry.actor, entry.actor_name.as_deref()), (actor, Some("Olga Operator")));
        let change = |field: &str, old: Option<&str>, new: Option<&str>| store::FieldChange { field: field.into(), old: old.map(Into::into), new: new.map(Into::into) };
        assert_eq!(entry.changes, vec![
            change("trade_office", Some("11000000 Berlin"), Some("072355007 Trier-Land")),
            change("trade_office.municipality_key", None, Some("07235001")),
        ]);
        // The guard has become stale by the write itself.
        let got = repo.patch_trade_registration(case.id, &patch, Some(&read), &[], actor).await.unwrap();
        assert_eq!(got, TradePatchOutcome::Stale);
        // Without a guard, and for an unknown case.
        let fee = TradePatch { city_fee_cents: Some(2600), ..TradePatch::default() };
        let got = repo.patch_trade_registration(case.id, &fee, None, &[], actor).await.unwrap();
        assert_eq!(got, TradePatchOutcome::Applied { replaced: vec![] });
        let after = repo.get_trade_registration(case.id).await.unwrap().unwrap();
        assert_eq!(after.city_fee_cents, Some(2600));
        assert_eq!(after.history.last().unwrap().changes, vec![change("city_fee", None, Some("26.00"))]);
        // The same fee again changes nothing: applied, but no entry.
        let before = history_len().await;
        let got = repo.patch_trade_registration(case.id, &fee, None, &[], actor).await.unwrap();
        assert_eq!(got, TradePatchOutcome::Applied { replaced: vec![] });
        assert_eq!(history_len().await, before);
        let got = repo.patch_trade_registration(Uuid::now_v7(), &fee, None, &[], actor).await.unwrap();
        assert_eq!(got, TradePatchOutcome::NotFound);
    }

    async fn one_trade_registration_per_company_under_races(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (provider, _) = app.provider("P").await;
        let (company, _) = app.client_company(provider, "C").await;
        let attempts: Vec<_> = (0..8)
            .map(|_| {
                let repo = app.state.repo.clone();
                let case = new_case(provider, company, false);
                tokio::spawn(async move { repo.create_trade_registration(&case).await })
            })
            .collect();
        let mut ok = 0;
        for a in attempts {
            match a.await.unwrap() {
                Ok(()) => ok += 1,
                Err(e) => assert!(e.is_company_conflict(), "unexpected error {e}"),
            }
        }
        assert_eq!(ok, 1, "exactly one create wins");
    }

    async fn a_create_completes_its_idempotency_key_in_its_own_transaction(backend) {
        use store::{IdempotencyClaim, IdempotencyTimes, IdempotentAnswer, StoreError};
        let app = TestApp::spawn(backend).await.unwrap();
        let (provider, _) = app.provider("P").await;
        let repo = &app.state.repo;
        let now = time::OffsetDateTime::now_utc();
        let times = IdempotencyTimes { now, ttl: time::Duration::hours(24), abandon_after: time::Duration::seconds(90) };
        let answer = |key: &str| IdempotentAnswer { scope: provider, key: key.into(), status: 201, body: format!("{{\"response\":{{\"key\":\"{key}\"}}}}").into_bytes() };

        // Trade: the create itself completes the claim; no separate step is needed for a replay,
        // not even once an unfinished claim would count as abandoned (a crash right after the
        // commit cannot lead to a second case).
        assert_eq!(repo.claim_idempotency_key(provider, "t", b"hash-t", times).await.unwrap(), IdempotencyClaim::Claimed);
        let mut case = new_case(provider, Uuid::now_v7(), true);
        case.idempotency = Some(answer("t"));
        repo.create_trade_registration(&case).await.unwrap();
        let later = IdempotencyTimes { now: now + time::Duration::minutes(10), ..times };
        let replay = IdempotencyClaim::Replay { status: 201, body: answer("t").body };
        assert_eq!(repo.claim_idempotency_key(provider, "t", b"hash-t", later).await.unwrap(), replay);

        // Tax: the same.
        assert_eq!(repo.claim_idempotency_key(provider, "x", b"hash-x", times).await.unwrap(), IdempotencyClaim::Claimed);
        let (company, _) = app.client_company(provider, "C").await;
        let mut tax = new_tax_case(provider, company, Uuid::now_v7());
        tax.idempotency = Some(answer("x"));
        repo.create_tax_registration(&tax).await.unwrap();
        let replay = IdempotencyClaim::Replay { status: 201, body: answer("x").body };
        assert_eq!(repo.claim_idempotency_key(provider, "x", b"hash-x", later).await.unwrap(), replay);

        // A claim that is not in flight (never made, or taken over meanwhile): nothing is written.
        let company = Uuid::now_v7();
        let mut lost = new_case(provider, company, true);
        lost.idempotency = Some(answer("never-claimed"));
        let err = repo.create_trade_registration(&lost).await.unwrap_err();
        assert!(matches!(err, StoreError::IdempotencyClaimLost), "{err}");
        assert_eq!(repo.get_trade_registration(lost.id).await.unwrap(), None);
        assert_eq!(repo.get_company(company).await.unwrap(), None);
        let (other, _) = app.client_company(provider, "D").await;
        let mut lost = new_tax_case(provider, other, Uuid::now_v7());
        lost.idempotency = Some(answer("t"));
        let err = repo.create_tax_registration(&lost).await.unwrap_err();
        assert!(matches!(err, StoreError::IdempotencyClaimLost), "{err}");
        assert_eq!(repo.get_tax_registration(lost.id).await.unwrap(), None);
    }

    async fn a_failed_create_leaves_nothing(backend) {
        let app = TestApp::spawn(backend).await.unwrap();
        let (provider, _) = app.provider("P").await;
        let company = Uuid::now_v7();
        let mut case = new_case(provider, company, true);
        // Two documents with one storage key: the second insert fails inside the transaction.
        let mut dup = case.documents[0].clone();
        dup.id = Uuid::now_v7();
        case.documents.push(dup);
        assert!(app.state.repo.create_trade_registration(&case).await.is_err());
        assert_eq!(app.state.repo.get_trade_registration(case.id).await.unwrap(), None);
        assert_eq!(app.state.repo.get_company(company).await.unwrap(), None, "no company without its case");
        assert_eq!(app.state.repo.get_document(case.documents[0].id).await.unwrap(), None);
    }
    // Every write that changes a case's children (history, documents, identity verifications)
    // shows in the next read of the case. On PostgreSQL the read takes them from columns of the
    // case row that each changing transaction refreshes (migration 0010), so a write path that
    // forgets the refresh fails here: inserts (create, transition), upserts (verification),
    // deletes and inserts (tax office assignment), updates (a document rendered on first
    // download) and seeded copies.
    async fn every_write_to_a_case_shows_in_its_read(backend) {
        use store::CaseFields;
        let app = TestApp::spawn(backend).await.unwrap();
        let repo = &app.state.repo;
        let (provider, _) = app.provider("P").await;
        let case = new_case(provider, Uuid::now_v7(), true);
        repo.create_trade_registration(&case).await.unwrap();
        let at = |s: i64| case.created_at + time::Duration::seconds(s);

        let (operator, _) = app.operator("Olga Operator").await;
        let op = Actor::Operator(operator);
        let change = StatusChange::step(TradeStatus::Submitted, Some(TradeStatus::FormRendered.into()), op, Some("alles da".into()), at(1));
        let mut receipt = case.documents[0].clone();
        receipt.id = Uuid::now_v7();
        receipt.doc_type = DocumentType::TradeLicence;
        receipt.storage_key = format!("trade/{}/receipt.pdf", case.id);
        receipt.created_at = at(1);
        let moved = repo.transition_case(case.id, TradeStatus::FormRendered.into(), &change, std::slice::from_ref(&receipt), &CaseFields::default()).await.unwrap();
        assert!(moved);
        repo.verify_identity(case.id, 1, at(2), op, at(2)).await.unwrap();
        repo.verify_identity(case.id, 0, at(3), op, at(3)).await.unwrap();
        repo.verify_identity(case.id, 1, at(4), op, at(4)).await.unwrap();
        // The same time again changes no field: logged, but no history entry.
        repo.verify_identity(case.id, 1, at(4), op, at(5)).await.unwrap();

        let read = repo.get_trade_registration(case.id).await.unwrap().unwrap();
        let text = |s: i64| Some(at(s).format(&time::format_description::well_known::Rfc3339).unwrap());
        let named = |mut h: StatusChange, name: Option<&str>| { h.actor_name = name.map(Into::into); h };
        let verified = |owner: i32, old: Option<i64>, new: i64| {
            let mut h = StatusChange::step(TradeStatus::Submitted, Some(TradeStatus::Submitted.into()), op, None, at(new));
            h.changes = vec![store::FieldChange { field: format!("owners[{owner}].identity_verified_at"), old: old.and_then(text), new: text(new) }];
            named(h, Some("Olga Operator"))
        };
        let history = vec![
            named(case.history[0].clone(), Some("P")),
            case.history[1].clone(),
            named(change, Some("Olga Operator")),
            verified(1, None, 2),
            verified(0, None, 3),
            verified(1, Some(2), 4),
        ];
        assert_eq!(read.history, history);
        // A removal names the time it removes.
        assert!(repo.clear_identity_verification(case.id, 0, op, at(6)).await.unwrap());
        assert!(!repo.clear_identity_verification(case.id, 0, op, at(7)).await.unwrap());
        let removed = repo.get_trade_registration(case.id).await.unwrap().unwrap();
        assert_eq!(removed.history.len(), history.len() + 1);
        let last = removed.history.last().unwrap();
        assert_eq!((last.at, last.changes[0].old.clone(), last.changes[0].new.clone()), (at(6), text(3), None));
        assert_eq!(removed.identity_verifications, vec![(1, at(4))]);
        repo.verify_identity(case.id, 0, at(3), op, at(3)).await.unwrap();
        assert_eq!(read.documents, vec![case.documents[0].clone(), receipt]);
        assert_eq!(read.identity_verifications, vec![(0, at(3)), (1, at(4))]);
        assert_eq!(read.status, TradeStatus::Submitted);

        // Tax: the office assignment replaces the XML (a delete and an insert in one
        // transaction), and the new document's size is recorded on its first download.
        let (company, _) = app.client_company(provider, "C").await;
        let tax = new_tax_case(provider, company, Uuid::now_v7());
        repo.create_tax_registration(&tax).await.unwrap();
        let mut xml = tax.documents[0].clone();
        xml.id = Uuid::now_v7();
        xml.storage_key = format!("tax/{}/fse-2.xml", tax.id);
        xml.size = None;
        xml.sha256 = None;
        // A status the assignment is not allowed in writes nothing.
        assert_eq!(repo.assign_tax_office(tax.id, "2742", &[TaxStatus::Rejected], std::slice::from_ref(&xml), op).await.unwrap(), None);
        let replaced = repo.assign_tax_office(tax.id, "2742", &[TaxStatus::Validated], std::slice::from_ref(&xml), op).await.unwrap();
        assert_eq!(replaced, Some(vec![tax.documents[0].storage_key.clone()]));
        assert_eq!(repo.get_tax_registration(tax.id).await.unwrap().unwrap().documents, vec![xml.clone()]);
        assert!(repo.record_rendered(xml.id, 99, &[9; 32]).await.unwrap());
        let read = repo.get_tax_registration(tax.id).await.unwrap().unwrap();
        xml.size = Some(99);
        xml.sha256 = Some(vec![9; 32]);
        assert_eq!(read.documents, vec![xml.clone()]);
        let office = |n: &str| Some(format!("{n} {}", domain::offices::tax_office(n).unwrap().display_name()));
        let mut assigned = StatusChange::step(TaxStatus::Validated, Some(TaxStatus::Validated.into()), op, None, read.history[1].at);
        assigned.changes = vec![store::FieldChange { field: "tax_office".into(), old: office("1127"), new: office("2742") }];
        assigned.actor_name = Some("Olga Operator".into());
        assert_eq!(read.history, vec![named(tax.history[0].clone(), Some("P")), assigned]);
        // The same office again (new documents, say) changes no field.
        assert!(repo.assign_tax_office(tax.id, "2742", &[TaxStatus::Validated], &[], op).await.unwrap().is_some());
        assert_eq!(repo.get_tax_registration(tax.id).await.unwrap().unwrap().history.len(), 2);
        // The other case's children are untouched.
        let trade = repo.get_trade_registration(case.id).await.unwrap().unwrap();
        assert_eq!(trade.documents.len(), 2);

        // Seeded copies of a case (`filing seed-trade-copies`) carry its history, not its
        // documents.
        assert_eq!(repo.seed_trade_copies(case.id, 3).await.unwrap(), Some(3));
        let listed = repo.list_cases(CaseKind::Trade, &store::CaseFilter::default(), Some(case.id), 10).await.unwrap();
        assert_eq!(listed.len(), 3);
        for copy in listed {
            let copy = repo.get_trade_registration(copy.id).await.unwrap().unwrap();
            assert_ne!(copy.id, case.id);
            assert_eq!(copy.history, trade.history);
            assert_eq!(copy.documents, vec![]);
            assert_eq!(copy.identity_verifications, vec![]);
        }
    }
}

/// PostgreSQL keeps a case's children as one row (`case_children`) that every changing
/// transaction rebuilds. Two such transactions at once (a transition adding a history entry, an
/// identity verification) must both show in the read: the later rebuild waits for the earlier
/// commit and then sees it (migration 0012). Before, the later one built its arrays from a
/// snapshot taken before the earlier committed and overwrote them, losing the history entry.
#[cfg_attr(no_test_database, ignore = "TEST_DATABASE_URL is not set")]
#[tokio::test]
async fn concurrent_changes_to_a_case_all_show_in_its_read_on_postgres() {
    use sqlx::Connection;
    let app = common::app(common::Backend::Postgres).await;
    let repo = &app.state.repo;
    let (provider, _) = app.provider("P").await;
    let case = new_case(provider, Uuid::now_v7(), true);
    repo.create_trade_registration(&case).await.unwrap();
    let at = case.created_at + time::Duration::seconds(1);

    // The first transaction adds a history entry, rebuilds, and stays open.
    let mut first = sqlx::PgConnection::connect(&app.database_url)
        .await
        .unwrap();
    sqlx::raw_sql("BEGIN").execute(&mut first).await.unwrap();
    sqlx::query(
        "INSERT INTO status_history (case_id, case_kind, status, previous_status, actor, reason, at) \
         VALUES ($1, 'trade', 'submitted', 'form-rendered', 'operator:o', 'alles da', $2)",
    )
    .bind(case.id)
    .bind(at)
    .execute(&mut first)
    .await
    .unwrap();
    sqlx::query("SELECT refresh_case_children(ARRAY[$1::uuid])")
        .bind(case.id)
        .execute(&mut first)
        .await
        .unwrap();

    // The second verifies an owner and rebuilds meanwhile; it has to wait for the first.
    let url = app.database_url.clone();
    let id = case.id;
    let second = tokio::spawn(async move {
        let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
        sqlx::raw_sql("BEGIN").execute(&mut c).await.unwrap();
        sqlx::query(
            "INSERT INTO identity_verifications (case_id, owner_index, verified_at, actor) \
             VALUES ($1, 0, $2, 'operator:o')",
        )
        .bind(id)
        .bind(at)
        .execute(&mut c)
        .await
        .unwrap();
        sqlx::query("SELECT refresh_case_children(ARRAY[$1::uuid])")
            .bind(id)
            .execute(&mut c)
            .await
            .unwrap();
        sqlx::raw_sql("COMMIT").execute(&mut c).await.unwrap();
    });
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(!second.is_finished(), "the second rebuild did not wait");
    sqlx::raw_sql("COMMIT").execute(&mut first).await.unwrap();
    second.await.unwrap();

    let read = repo.get_trade_registration(case.id).await.unwrap().unwrap();
    let statuses: Vec<&str> = read.history.iter().map(|h| h.status.as_str()).collect();
    assert_eq!(statuses, ["initiated", "form-rendered", "submitted"]);
    assert_eq!(read.identity_verifications, vec![(0, at)]);
}

//! The store tests of the case lists (`lists.rs`) that both backends run: each backend's tests
//! call them through [`backend_list_tests!`] on a repository of its own.

use domain::lifecycle::Lifecycle;
use uuid::Uuid;

use crate::{
    CaseCursor, CaseKind, CaseListFilter, CaseListItem, CaseListScope, CaseOwner, CaseSearch,
};

/// What the migration tests of the search text (SQLite 0019, PostgreSQL 0022) check on either
/// backend: the cases written before the migration (`trade`: Ölmühle GmbH, owner Erika
/// Mustermann née Gabler, 10115, office 11000000; `tax`: Zoë UG, `crm-1`, director Anna Lena
/// Łukasik, 54298, office 1116) and after it as the release before writes them (`later`:
/// Später GmbH, 10117, office 11000000) are found by their words, postal codes and offices.
pub(crate) async fn assert_found_by_words_postal_code_and_office(
    repo: &dyn crate::Repository,
    (trade, tax, later): (Uuid, Uuid, Uuid),
) {
    let find = |kind: CaseKind, filter: CaseListFilter| async move {
        listed_ids(repo, kind, CaseOwner::All, &filter, 10).await
    };
    let office = |key: &str| CaseListFilter {
        office: Some(key.into()),
        ..Default::default()
    };
    use CaseKind::{Tax, Trade};
    assert_eq!(find(Trade, searching("ÖLMÜHLE gabler")).await, [trade]);
    assert_eq!(find(Trade, searching("10115")).await, [trade]);
    assert_eq!(find(Trade, searching("später")).await, [later]);
    assert_eq!(find(Trade, searching("10117")).await, [later]);
    assert_eq!(find(Trade, office("11000000")).await, [later, trade]);
    assert_eq!(find(Tax, searching("łukasik lena")).await, [tax]);
    assert_eq!(find(Tax, searching("CRM-1")).await, [tax]);
    assert_eq!(find(Tax, searching("54298")).await, [tax]);
    assert_eq!(find(Tax, office("1116")).await, [tax]);
}

/// This module's store tests, as tests of one backend: `$run` runs one on a new repository of
/// the backend (an `async fn` of a `for<'r> FnOnce(&'r dyn Repository) -> BoxFuture<'r, ()>`),
/// and each test has the attributes given after it.
macro_rules! backend_list_tests {
    ($run:path $(, #[$attr:meta])*) => {
        $crate::sql::list_tests::backend_list_tests!(
            @each $run [$(#[$attr])*]
            lists_cases_newest_first_within_the_scope
            operators_filter_search_order_and_count
            lists_a_cases_deliveries
        );
    };
    (@each $run:path [$($attr:tt)*] $test:ident $($rest:ident)*) => {
        $($attr)*
        #[tokio::test]
        async fn $test() {
            $run(|repo| Box::pin($crate::sql::list_tests::$test(repo))).await;
        }
        $crate::sql::list_tests::backend_list_tests!(@each $run [$($attr)*] $($rest)*);
    };
    (@each $run:path [$($attr:tt)*]) => {};
}
pub(crate) use backend_list_tests;

/// The ids of the first `limit` cases of `kind` that `owner` sees and `filter` selects, in the
/// list's order (a [`CaseListStore::list_case_page`] from the start, for the tests).
pub(crate) async fn listed_ids(
    repo: &dyn crate::Repository,
    kind: CaseKind,
    owner: CaseOwner,
    filter: &CaseListFilter,
    limit: i64,
) -> Vec<Uuid> {
    repo.list_case_page(kind, CaseListScope { owner }, filter, None, limit)
        .await
        .unwrap()
        .iter()
        .map(|c| c.id)
        .collect()
}

/// A filter by what an operator typed into the search box (for the tests).
pub(crate) fn searching(text: &str) -> CaseListFilter {
    CaseListFilter {
        search: CaseSearch::parse(text),
        ..Default::default()
    }
}

/// The store test both backends run (`sqlite/tests.rs`, `postgres/tests.rs`): scopes, every
/// filter, the order and the cursor, and the columns of an item.
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

    let list =
        |scope: CaseOwner, filter: CaseListFilter, before: Option<CaseCursor>, limit: i64| {
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
        Some(CaseCursor::Position(first[1].position)),
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
    assert_eq!(t.legal_form, Some(domain::tax::TaxLegalForm::Gmbh));
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

/// The store test of the operators' lists both backends run (`sqlite/tests.rs`,
/// `postgres/tests.rs`): every filter, each kind of search, both orders across pages, both
/// kinds of cursor, and the counts by status.
pub(crate) async fn operators_filter_search_order_and_count(repo: &dyn crate::Repository) {
    use crate::sqlite::tests::{Sample, trade_case};
    use domain::company::Environment;
    use domain::lifecycle::{TaxStatus, TradeStatus};
    use serde_json::json;

    let p = repo.create_provider("P").await.unwrap().id;
    let q = repo.create_provider("Q").await.unwrap().id;
    // (provider, environment, status, office, postal code, name, client reference, owners)
    let specs = [
        (
            p,
            Environment::Production,
            TradeStatus::Submitted,
            Some("11000000"),
            "10117",
            "Bäckerei Özdemir GmbH",
            Some("CRM-1"),
            json!([{"first_name": "Max", "last_name": "Mustermann"}]),
        ),
        (
            p,
            Environment::Production,
            TradeStatus::FormRendered,
            Some("09162000"),
            "80331",
            "Müller & Söhne GmbH",
            Some("CRM-2"),
            json!([{"first_name": "Zofia", "last_name": "Łukasiewicz", "birth_name": "Nowak"},
                {"first_name": "Jonas", "last_name": "Weber"}]),
        ),
        (
            q,
            Environment::Production,
            TradeStatus::Submitted,
            Some("11000000"),
            "10117",
            "ÆRØ Handel UG",
            Some("AB-12"),
            json!([{"first_name": "Jürgen", "last_name": "Schmidt"}]),
        ),
        (
            q,
            Environment::Sandbox,
            TradeStatus::Submitted,
            Some("11000000"),
            "10117",
            "Sandkasten GmbH",
            None,
            json!([{"first_name": "Max", "last_name": "Sand"}]),
        ),
        (
            p,
            Environment::Production,
            TradeStatus::Blocked,
            None,
            "20095",
            "Hafen Hamburg GmbH",
            Some("CRM-5"),
            json!([{"first_name": "Ole", "last_name": "Brandt"}]),
        ),
    ];
    let mut ids = Vec::new();
    for (provider, environment, status, office, zip, name, reference, owners) in specs {
        let mut case = trade_case(provider);
        case.environment = environment;
        case.new_company.as_mut().unwrap().1.environment = environment;
        case.new_company.as_mut().unwrap().1.name = name.into();
        case.status = status;
        case.trade_office = office.map(|o| json!({"key": o, "name": "Amt"}));
        case.record = json!({
            "name": name,
            "registered_office": {"street": "Hauptstraße 1", "zip": zip, "city": "Berlin"},
            "owners": owners,
        });
        if let Some(r) = reference {
            case.record["client_reference"] = json!(r);
        }
        repo.create_trade_registration(&case).await.unwrap();
        ids.push(case.id);
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    let (a, b, c, d, e) = (ids[0], ids[1], ids[2], ids[3], ids[4]);

    let page = |kind: CaseKind, filter: CaseListFilter, cursor: Option<CaseCursor>, limit: i64| async move {
        repo.list_case_page(
            kind,
            CaseListScope {
                owner: CaseOwner::All,
            },
            &filter,
            cursor,
            limit,
        )
        .await
        .unwrap()
    };
    let trade = |f: CaseListFilter| async move {
        page(CaseKind::Trade, f, None, 50)
            .await
            .iter()
            .map(|i| i.id)
            .collect::<Vec<_>>()
    };
    let by = |f: &dyn Fn(&mut CaseListFilter)| {
        let mut filter = CaseListFilter::default();
        f(&mut filter);
        filter
    };
    let production = |f: &mut CaseListFilter| f.environment = Some(Environment::Production);

    assert_eq!(trade(by(&|_| {})).await, [e, d, c, b, a], "newest first");
    assert_eq!(
        trade(by(&|f| f.oldest_first = true)).await,
        [a, b, c, d, e],
        "oldest first"
    );
    assert_eq!(trade(by(&production)).await, [e, c, b, a]);
    assert_eq!(
        trade(by(&|f| f.environment = Some(Environment::Sandbox))).await,
        [d]
    );
    let submitted = |f: &mut CaseListFilter| {
        production(f);
        f.status = Some(TradeStatus::Submitted.into());
    };
    assert_eq!(trade(by(&submitted)).await, [c, a]);
    assert_eq!(trade(by(&|f| f.provider_id = Some(p))).await, [e, b, a]);
    assert_eq!(
        trade(by(&|f| {
            f.provider_id = Some(q);
            production(f)
        }))
        .await,
        [c]
    );
    assert_eq!(
        trade(by(&|f| {
            f.provider_id = Some(q);
            f.oldest_first = true
        }))
        .await,
        [c, d]
    );
    assert_eq!(
        trade(by(&|f| f.office = Some("11000000".into()))).await,
        [d, c, a]
    );
    assert_eq!(
        trade(by(&|f| {
            f.office = Some("11000000".into());
            submitted(f)
        }))
        .await,
        [c, a]
    );
    assert_eq!(
        trade(by(&|f| {
            f.office = Some("11000000".into());
            f.provider_id = Some(p)
        }))
        .await,
        [a]
    );
    assert!(
        trade(by(&|f| f.office = Some("1100000".into())))
            .await
            .is_empty()
    );
    assert_eq!(
        trade(by(&|f| f.office = Some("09162000".into()))).await,
        [b]
    );

    // Searches: an id, a postal code, words.
    let search = |text: &str| {
        let s = CaseSearch::parse(text).unwrap_or_else(|| panic!("{text:?} is no search"));
        by(&move |f| f.search = Some(s.clone()))
    };
    assert_eq!(trade(search(&b.to_string())).await, [b]);
    assert!(trade(search(&Uuid::now_v7().to_string())).await.is_empty());
    assert_eq!(trade(search("10117")).await, [d, c, a]);
    let mut f = search("10117");
    submitted(&mut f);
    f.oldest_first = true;
    assert_eq!(trade(f).await, [a, c]);
    assert!(trade(search("10115")).await.is_empty());
    for (text, expected) in [
        ("müller", vec![b]),
        ("MÜLLER", vec![b]),
        ("özdemir", vec![a]),
        ("ÖZDEMİR", vec![]),
        ("ÖZDEMIR", vec![a]),
        ("ŁUKASIEWICZ", vec![b]),
        ("nowak", vec![b]),
        ("weber", vec![b]),
        ("max", vec![d, a]),
        ("Max Mustermann", vec![a]),
        ("mustermann  max", vec![a]),
        ("max zofia", vec![]),
        ("æRø", vec![c]),
        ("crm-2", vec![b]),
        ("crm", vec![e, b, a]),
        ("gmbh", vec![e, d, b, a]),
        ("b-1", vec![c]),
        // `_` and `%` are characters, not patterns.
        ("b_1", vec![]),
        ("b%1", vec![]),
        // Two-letter words do not count: "ab" is left out.
        ("ab hafen", vec![e]),
        ("ärzte", vec![]),
    ] {
        assert_eq!(trade(search(text)).await, expected, "{text}");
    }
    let mut f = search("gmbh");
    production(&mut f);
    f.provider_id = Some(p);
    f.status = Some(TradeStatus::Submitted.into());
    assert_eq!(trade(f).await, [a]);

    // Pages across their boundaries, in both orders, by either cursor: each page starts after
    // the last case of the one before, given by its position or by its key.
    let all = CaseListFilter::default();
    let oldest = CaseListFilter {
        oldest_first: true,
        ..all.clone()
    };
    let position: fn(&CaseListItem) -> CaseCursor = |item| CaseCursor::Position(item.position);
    let key: fn(&CaseListItem) -> CaseCursor = |item| CaseCursor::Case(item.id);
    let orders = [
        (&all, [position, key], [vec![e, d], vec![c, b], vec![a]]),
        (&oldest, [key, position], [vec![a, b], vec![c, d], vec![e]]),
    ];
    for (filter, cursors, pages) in orders {
        let mut cursor = None;
        for (n, expected) in pages.into_iter().enumerate() {
            let items = page(CaseKind::Trade, filter.clone(), cursor, 2).await;
            assert_eq!(items.iter().map(|i| i.id).collect::<Vec<_>>(), expected);
            cursor = cursors.get(n).map(|next| next(items.last().unwrap()));
        }
    }
    let mut walked = Vec::new();
    let mut cursor = None;
    let office = CaseListFilter {
        office: Some("11000000".into()),
        oldest_first: true,
        ..all.clone()
    };
    loop {
        let items = page(CaseKind::Trade, office.clone(), cursor, 1).await;
        let Some(last) = items.last() else { break };
        walked.push(last.id);
        cursor = Some(CaseCursor::Case(last.id));
    }
    assert_eq!(walked, [a, c, d]);

    // Counts: every status in the lifecycle's order; environment, provider and office only.
    let counts = |f: CaseListFilter| async move {
        let counts = repo
            .count_cases_by_status(CaseKind::Trade, &f)
            .await
            .unwrap();
        let statuses: Vec<_> = counts.iter().map(|(s, _)| *s).collect();
        let all: Vec<domain::case_state::CaseStatus> =
            TradeStatus::ALL.iter().map(|&s| s.into()).collect();
        assert_eq!(statuses, all);
        counts
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(s, n)| (s.as_str(), n))
            .collect::<Vec<_>>()
    };
    let order = |mut v: Vec<(&'static str, i64)>| {
        v.sort();
        v
    };
    assert_eq!(
        order(counts(all.clone()).await),
        [("blocked", 1), ("form-rendered", 1), ("submitted", 3)]
    );
    assert_eq!(
        order(counts(by(&production)).await),
        [("blocked", 1), ("form-rendered", 1), ("submitted", 2)]
    );
    assert_eq!(
        order(counts(by(&|f| f.provider_id = Some(p))).await),
        [("blocked", 1), ("form-rendered", 1), ("submitted", 1)]
    );
    let mut f = search("müller");
    f.office = Some("11000000".into());
    f.status = Some(TradeStatus::Blocked.into());
    f.oldest_first = true;
    assert_eq!(
        order(counts(f).await),
        [("submitted", 3)],
        "status and search are not counted"
    );
    assert_eq!(
        order(
            counts(by(&|f| {
                f.office = Some("11000000".into());
                production(f)
            }))
            .await
        ),
        [("submitted", 2)]
    );

    // Tax registrations: the id or the public id, the company's postal code, directors' and
    // partners' names, the tax office.
    let corporation = Sample::new(p).tax;
    let corporation = crate::NewTaxRegistration {
        head: crate::CaseHead {
            record: json!({
                "name": "Zoë Tech UG (haftungsbeschränkt)",
                "client_reference": "T-1",
                "address": {"street": "Am Markt 1", "zip": "04109", "city": "Leipzig"},
                "directors": [{"first_name": "Anna", "middle_name": "Lena", "last_name": "Groß"}],
            }),
            ..corporation.head
        },
        ..corporation
    };
    repo.create_tax_registration(&corporation).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    let partnership = Sample::new(q).tax;
    let partnership = crate::NewTaxRegistration {
        head: crate::CaseHead {
            status: TaxStatus::Validated,
            record: json!({
                "name": "Heide & Brandt GbR",
                "address": {"street": "Am Sande 12", "zip": "21335", "city": "Lüneburg"},
                "partners": {
                    "individuals": [{"first_name": "Jana", "last_name": "Heide"}],
                    "entities": [{"name": "Ørsted Holding ApS"}],
                },
            }),
            ..partnership.head
        },
        legal_form: domain::tax::TaxLegalForm::Gbr,
        tax_office_number: Some("2315".into()),
        ..partnership
    };
    repo.create_tax_registration(&partnership).await.unwrap();
    let (x, y) = (corporation.id, partnership.id);
    let tax = |f: CaseListFilter| async move {
        page(CaseKind::Tax, f, None, 50)
            .await
            .iter()
            .map(|i| i.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(tax(all.clone()).await, [y, x]);
    assert_eq!(tax(search(&corporation.public_id.to_string())).await, [x]);
    assert_eq!(tax(search(&x.to_string())).await, [x]);
    assert_eq!(tax(search("04109")).await, [x]);
    assert_eq!(tax(search("21335")).await, [y]);
    for (text, expected) in [
        ("lena", vec![x]),
        ("GROSS", vec![]),
        ("groß", vec![x]),
        ("zoë", vec![x]),
        ("t-1", vec![x]),
        ("heide", vec![y]),
        ("ØRSTED", vec![y]),
        ("jana heide", vec![y]),
        ("brandt", vec![y]),
    ] {
        assert_eq!(tax(search(text)).await, expected, "{text}");
    }
    assert_eq!(tax(by(&|f| f.office = Some("2315".into()))).await, [y]);
    assert_eq!(tax(by(&|f| f.provider_id = Some(p))).await, [x]);
    assert_eq!(
        tax(by(&|f| f.status = Some(TaxStatus::Validated.into()))).await,
        [y]
    );
    // The cursor of a tax registration: its position, or its key (which is not its position).
    let oldest_tax = CaseListFilter {
        oldest_first: true,
        ..all.clone()
    };
    let first = page(CaseKind::Tax, oldest_tax.clone(), None, 1).await;
    assert_eq!((first[0].id, first.len()), (x, 1));
    assert_ne!(first[0].position, x);
    for cursor in [CaseCursor::Case(x), CaseCursor::Position(first[0].position)] {
        let next = page(CaseKind::Tax, oldest_tax.clone(), Some(cursor), 1).await;
        assert_eq!(
            next.iter().map(|i| i.id).collect::<Vec<_>>(),
            [y],
            "{cursor:?}"
        );
    }
    let back = page(CaseKind::Tax, all.clone(), Some(CaseCursor::Case(y)), 5).await;
    assert_eq!(back.iter().map(|i| i.id).collect::<Vec<_>>(), [x]);
    assert!(
        page(
            CaseKind::Tax,
            all.clone(),
            Some(CaseCursor::Case(Uuid::now_v7())),
            5
        )
        .await
        .is_empty()
    );
    let tax_counts = repo
        .count_cases_by_status(CaseKind::Tax, &by(&|f| f.office = Some("1116".into())))
        .await
        .unwrap();
    assert_eq!(tax_counts.len(), TaxStatus::ALL.len());
    let nonzero: Vec<_> = tax_counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| (s.as_str(), *n))
        .collect();
    assert_eq!(nonzero, [("submitted", 1)]);
}

/// The webhook deliveries of a case, newest first, with their endpoint and last attempt (both
/// backends).
pub(crate) async fn lists_a_cases_deliveries(repo: &dyn crate::Repository) {
    use crate::{AttemptOutcome, WebhookAttempt, micros};

    let p = repo.create_provider("P").await.unwrap().id;
    let sample = crate::sqlite::tests::Sample::new(p);
    let [all, tax_only] = &sample.endpoints;
    for e in [all, tax_only] {
        assert!(repo.create_webhook_endpoint(e, 20).await.unwrap());
    }
    let trade = crate::NewTradeRegistration {
        idempotency: None,
        ..sample.trade.clone()
    };
    repo.create_trade_registration(&trade).await.unwrap();
    repo.create_tax_registration(&sample.tax).await.unwrap();
    let trade = trade.id;
    assert!(
        repo.list_case_deliveries(Uuid::now_v7(), 10)
            .await
            .unwrap()
            .is_empty()
    );
    let before = repo.list_case_deliveries(trade, 10).await.unwrap();
    assert_eq!(before.len(), 1, "{before:?}");
    let created = &before[0];
    assert_eq!(
        (
            created.endpoint_id,
            created.endpoint_url.as_str(),
            created.endpoint_deleted
        ),
        (all.id, "https://hooks.example.com/filing", false)
    );
    assert_eq!((created.state.as_str(), created.attempts), ("pending", 0));
    assert_eq!(
        (created.last_status_code, created.last_attempt_at),
        (None, None)
    );
    assert!(created.next_attempt_at.is_some() && created.finished_at.is_none());

    // A second message of the case (a status change), then attempts: the first message is
    // answered 500 and retried, then delivered; the second fails without an answer.
    let now = time::OffsetDateTime::now_utc();
    let change = crate::StatusChange::step(
        domain::lifecycle::TradeStatus::Blocked,
        Some(domain::lifecycle::TradeStatus::Submitted.into()),
        domain::lifecycle::Actor::Operator(Uuid::nil()),
        Some("fehlt".into()),
        now,
    );
    assert!(
        repo.transition_case(
            trade,
            domain::lifecycle::TradeStatus::Submitted.into(),
            &change,
            &[],
            &crate::CaseFields::default(),
        )
        .await
        .unwrap()
    );
    let far = micros(now) + 3_600_000_000;
    // Limits and a breaker that do not come into it (`webhook_tests.rs` tests those).
    const LIMITS: crate::ClaimLimits = crate::ClaimLimits {
        total: 10,
        per_endpoint: 10,
        per_provider: 10,
    };
    let rule = crate::CircuitRule {
        open_after: 100,
        open_until_us: far,
    };
    let claimed = repo
        .claim_webhook_messages(far, far + 60_000_000, LIMITS)
        .await
        .unwrap();
    let of_trade: Vec<_> = claimed.iter().filter(|m| m.case_id == trade).collect();
    assert_eq!(
        of_trade.len(),
        1,
        "one message of a case at a time: {claimed:?}"
    );
    let first = of_trade[0].id;
    let attempt =
        |message_id: Uuid, n: i32, status_code: Option<i32>, error: Option<&str>| WebhookAttempt {
            message_id,
            endpoint_id: all.id,
            attempt: n,
            at: now + time::Duration::seconds(n.into()),
            status_code,
            error: error.map(str::to_owned),
            duration_ms: 12,
        };
    repo.record_webhook_attempt(
        &attempt(first, 1, Some(500), Some("HTTP 500")),
        AttemptOutcome::RetryAt(far),
        rule,
    )
    .await
    .unwrap();
    let claimed = repo
        .claim_webhook_messages(far, far + 60_000_000, LIMITS)
        .await
        .unwrap();
    assert!(claimed.iter().any(|m| m.id == first));
    repo.record_webhook_attempt(
        &attempt(first, 2, Some(204), None),
        AttemptOutcome::Delivered,
        rule,
    )
    .await
    .unwrap();
    let claimed = repo
        .claim_webhook_messages(far, far + 60_000_000, LIMITS)
        .await
        .unwrap();
    let second = claimed
        .iter()
        .find(|m| m.case_id == trade)
        .expect("the change's message")
        .id;
    repo.record_webhook_attempt(
        &attempt(second, 1, None, Some("timed out")),
        AttemptOutcome::Failed,
        rule,
    )
    .await
    .unwrap();

    let listed = repo.list_case_deliveries(trade, 10).await.unwrap();
    assert_eq!(
        listed.iter().map(|d| d.message_id).collect::<Vec<_>>(),
        [second, first],
        "newest first"
    );
    let (s, f) = (&listed[0], &listed[1]);
    assert_eq!(s.event_type.as_str(), "registration.blocked");
    assert_eq!(
        (s.state.as_str(), s.attempts, s.last_status_code),
        ("failed", 1, None)
    );
    assert_eq!(s.last_error.as_deref(), Some("timed out"));
    assert!(s.finished_at.is_some() && s.next_attempt_at.is_none());
    assert_eq!(
        (f.state.as_str(), f.attempts, f.last_status_code),
        ("delivered", 2, Some(204))
    );
    assert_eq!(f.last_error, None);
    let at = f.last_attempt_at.unwrap();
    assert_eq!(
        at.unix_timestamp(),
        (now + time::Duration::seconds(2)).unix_timestamp()
    );
    assert!(f.created_at <= s.created_at);
    assert_eq!(repo.list_case_deliveries(trade, 1).await.unwrap().len(), 1);
    // Another case's messages are its own; a deleted endpoint's stay listed.
    let tax = repo.list_case_deliveries(sample.tax.id, 10).await.unwrap();
    assert_eq!(tax.len(), 2, "{tax:?}");
    assert!(
        repo.delete_webhook_endpoint(tax_only.id, now)
            .await
            .unwrap()
    );
    let tax = repo.list_case_deliveries(sample.tax.id, 10).await.unwrap();
    let gone: Vec<_> = tax
        .iter()
        .filter(|d| d.endpoint_id == tax_only.id)
        .collect();
    assert_eq!(gone.len(), 1);
    assert!(gone[0].endpoint_deleted);
    assert_eq!(gone[0].state, crate::MessageState::Failed);
}

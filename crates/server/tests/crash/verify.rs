//! The checks after a restart: every case read back against the ledger, and the debris left in
//! the document folder.

use super::*;

/// What a listed case looked like when read back.
#[derive(Debug)]
pub(crate) struct Seen {
    pub(crate) trade: bool,
    pub(crate) status: String,
    pub(crate) reference: Option<String>,
    pub(crate) documents: Vec<String>,
    pub(crate) has_tax_office: bool,
}

/// The `client_reference` of a case as read back (trade: top level; tax: in `registration`).
pub(crate) fn reference_of(r: &Value) -> Option<String> {
    r["client_reference"]
        .as_str()
        .or_else(|| r["registration"]["client_reference"].as_str())
        .map(str::to_string)
}

/// Every case of one operator list (all pages).
/// The ids an operator list shows, sandbox and production cases alike (a list shows one
/// environment at a time).
pub(crate) async fn list_ids(
    server: &Server,
    operator_key: &str,
    path: &str,
) -> Result<Vec<Uuid>, String> {
    let mut ids = Vec::new();
    for environment in ["production", "sandbox"] {
        ids.extend(list_environment(server, operator_key, path, environment).await?);
    }
    Ok(ids)
}

pub(crate) async fn list_environment(
    server: &Server,
    operator_key: &str,
    path: &str,
    environment: &str,
) -> Result<Vec<Uuid>, String> {
    let mut ids = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let query = match &after {
            Some(a) => format!("{path}?environment={environment}&limit=500&after={a}"),
            None => format!("{path}?environment={environment}&limit=500"),
        };
        let (status, v) = server.get_json(&query, operator_key).await?;
        if status != 200 {
            return Err(format!("GET {query}: {status} {v}"));
        }
        for c in v["response"]["cases"].as_array().into_iter().flatten() {
            let id = c["id"]
                .as_str()
                .and_then(|s| Uuid::parse_str(s).ok())
                .ok_or_else(|| format!("{path}: a case without an id: {c}"))?;
            ids.push(id);
        }
        match v["response"]["next_cursor"].as_str() {
            Some(c) => after = Some(c.to_string()),
            None => return Ok(ids),
        }
    }
}

/// Reads a case and downloads every document; any failure or incomplete file is an `Err`.
pub(crate) async fn read_case(
    server: &Server,
    operator_key: &str,
    trade: bool,
    id: Uuid,
    fixtures: &Fixtures,
) -> Result<Seen, String> {
    let path = if trade {
        format!("/v1/trade-registration/{id}")
    } else {
        format!("/v1/tax-registration/{id}")
    };
    let (status, v) = server.get_json(&path, operator_key).await?;
    if status != 200 {
        return Err(format!(
            "listed case {id}: GET {path} answered {status} {v}"
        ));
    }
    let r = &v["response"];
    let docs = r["documents"]
        .as_array()
        .ok_or_else(|| format!("{id}: no documents array: {r}"))?;
    let mut types = Vec::new();
    let mut uploaded_found = false;
    for d in docs {
        let kind = d["type"].as_str().unwrap_or("").to_string();
        let url = d["download_url"]
            .as_str()
            .ok_or_else(|| format!("{id}: a document without download_url: {d}"))?;
        let res = server
            .client
            .get(url)
            .send()
            .await
            .map_err(|e| format!("{id}: download {kind}: {e}"))?;
        let status = res.status().as_u16();
        let bytes = res
            .bytes()
            .await
            .map_err(|e| format!("{id}: download {kind}: {e}"))?;
        if status != 200 {
            return Err(format!(
                "{id}: document {kind} answered {status}: {}",
                String::from_utf8_lossy(&bytes)
            ));
        }
        if kind == "tax-registration-xml" {
            elster::validate(&bytes)
                .map_err(|e| format!("{id}: the XML does not parse and validate: {e:?}"))?;
        } else {
            let whole = bytes.starts_with(b"%PDF-") && bytes.trim_ascii_end().ends_with(b"%%EOF");
            if !whole {
                return Err(format!(
                    "{id}: document {kind} ({} bytes) is not a whole PDF",
                    bytes.len()
                ));
            }
            uploaded_found |= bytes.as_ref() == fixtures.signed_pdf.as_slice();
        }
        types.push(kind);
    }
    types.sort();
    if trade && r["package"] == "assisted" && !uploaded_found {
        return Err(format!(
            "{id}: the uploaded signed GewA 1 is not among the documents"
        ));
    }
    Ok(Seen {
        trade,
        status: r["status"].as_str().unwrap_or("").to_string(),
        reference: reference_of(r),
        documents: types,
        has_tax_office: !r["tax_office"].is_null(),
    })
}

#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) cases: usize,
    pub(crate) documents: usize,
    pub(crate) retried_replayed: usize,
    pub(crate) retried_created: usize,
    pub(crate) key_in_use: usize,
    pub(crate) unanswered_present: usize,
    pub(crate) unanswered_absent: usize,
}

/// Checks everything against the running server; returns the problems found.
pub(crate) async fn verify(
    server: &Server,
    operator_key: &str,
    ledger: &mut Ledger,
    fixtures: &Fixtures,
) -> (Vec<String>, Tally) {
    let mut problems = Vec::new();
    let mut tally = Tally::default();

    // Creates that got no answer and carry a key: the retry replays or creates once.
    for u in ledger.unanswered.iter_mut() {
        if u.attempt.idempotency_key.is_none() || matches!(u.fate, Fate::Retried { .. }) {
            continue;
        }
        match u.attempt.send(&server.client, &server.base, fixtures).await {
            Ok(a) if a.status == 201 => {
                let id = a.body["response"][u.attempt.kind.id_field()]
                    .as_str()
                    .and_then(|s| Uuid::parse_str(s).ok());
                match id {
                    Some(id) => {
                        u.fate = Fate::Retried {
                            id,
                            replayed: a.replayed,
                        }
                    }
                    None => problems.push(format!(
                        "{}: retry answered 201 without an id: {}",
                        u.attempt.reference, a.body
                    )),
                }
            }
            Ok(a) if a.status == 409 && a.body["response"]["code"] == "IDEMPOTENCY_KEY_IN_USE" => {
                u.fate = Fate::KeyInUse;
            }
            Ok(a) => problems.push(format!(
                "{}: the retry with its Idempotency-Key answered {} {}",
                u.attempt.reference, a.status, a.body
            )),
            Err(e) => problems.push(format!(
                "{}: the retry got no answer: {e}",
                u.attempt.reference
            )),
        }
    }

    // Everything the operator lists show: readable, complete, and sent by the load.
    let mut listed: Vec<(bool, Uuid)> = Vec::new();
    for (trade, path) in [
        (true, "/v1/operator/trade-registrations"),
        (false, "/v1/operator/tax-registrations"),
    ] {
        match list_ids(server, operator_key, path).await {
            Ok(ids) => listed.extend(ids.into_iter().map(|id| (trade, id))),
            Err(e) => problems.push(e),
        }
    }
    let results: Vec<(Uuid, Result<Seen, String>)> = futures::stream::iter(listed)
        .map(|(trade, id)| async move {
            (
                id,
                read_case(server, operator_key, trade, id, fixtures).await,
            )
        })
        .buffer_unordered(6)
        .collect()
        .await;
    let mut seen: HashMap<Uuid, Seen> = HashMap::new();
    for (id, r) in results {
        match r {
            Ok(s) => {
                seen.insert(id, s);
            }
            Err(e) => problems.push(e),
        }
    }
    tally.cases = seen.len();
    let mut by_reference: BTreeMap<String, Vec<Uuid>> = BTreeMap::new();
    for (id, s) in &seen {
        tally.documents += s.documents.len();
        let Some(reference) = &s.reference else {
            problems.push(format!("{id}: a case without client_reference"));
            continue;
        };
        by_reference.entry(reference.clone()).or_default().push(*id);
        let Some(kind) = ledger.sent.get(reference) else {
            problems.push(format!(
                "{id}: a case with reference {reference:?}, which the load never sent"
            ));
            continue;
        };
        if kind.is_trade() != s.trade {
            problems.push(format!("{id}: listed as the wrong kind of case"));
        }
        let expected = kind.documents(s.has_tax_office);
        if s.documents != expected {
            problems.push(format!(
                "{id} ({reference}): half-written? documents {:?}, expected {expected:?}",
                s.documents,
            ));
        }
        if s.status != kind.created_status() {
            problems.push(format!(
                "{id} ({reference}): status {:?}, expected {:?}",
                s.status,
                kind.created_status()
            ));
        }
    }
    for (reference, ids) in &by_reference {
        if ids.len() > 1 {
            problems.push(format!(
                "{reference}: {} cases for one create: {ids:?}",
                ids.len()
            ));
        }
    }

    // Every 201: listed, the same case, the status it was created with, readable by its provider.
    for c in &ledger.created {
        let Some(s) = seen.get(&c.id) else {
            problems.push(format!(
                "{} (round {}, {:?}) answered 201 with id {} but is not listed or not readable",
                c.attempt.reference, c.round, c.attempt.kind, c.id
            ));
            continue;
        };
        if s.reference.as_deref() != Some(c.attempt.reference.as_str()) {
            problems.push(format!(
                "{}: the case {} has reference {:?}",
                c.attempt.reference, c.id, s.reference
            ));
        }
        if c.status != c.attempt.kind.created_status() || s.status != c.status {
            problems.push(format!(
                "{}: created as {:?}, read back as {:?}",
                c.attempt.reference, c.status, s.status
            ));
        }
        match server
            .get_json(&c.attempt.kind.read_path(c.id), &c.attempt.provider_key)
            .await
        {
            Ok((200, v)) if v["response"][c.attempt.kind.id_field()] == c.id.to_string() => {}
            Ok((status, v)) => problems.push(format!(
                "{}: its provider reads {} as {status} {v}",
                c.attempt.reference, c.id
            )),
            Err(e) => problems.push(e),
        }
    }

    // No answer: complete or absent (checked above for what exists), and what the retry says
    // matches what exists.
    for u in &ledger.unanswered {
        let ids = by_reference
            .get(&u.attempt.reference)
            .cloned()
            .unwrap_or_default();
        // Whether the create itself happened (a case a retry made does not count).
        let happened = match &u.fate {
            Fate::Retried { replayed, .. } => *replayed,
            _ => !ids.is_empty(),
        };
        if happened {
            tally.unanswered_present += 1;
        } else {
            tally.unanswered_absent += 1;
        }
        match &u.fate {
            Fate::Open => {}
            Fate::KeyInUse => {
                tally.key_in_use += 1;
                if !ids.is_empty() {
                    problems.push(format!(
                        "{} (round {}): the case {ids:?} exists, but its Idempotency-Key is still \
                         claimed by the killed request (409 IDEMPOTENCY_KEY_IN_USE): once the claim \
                         expires, a retry creates it a second time",
                        u.attempt.reference, u.round
                    ));
                }
            }
            Fate::Retried { id, replayed } => {
                if *replayed {
                    tally.retried_replayed += 1;
                } else {
                    tally.retried_created += 1;
                }
                if ids != [*id] {
                    problems.push(format!(
                        "{} (round {}): the retry answered 201 with {id} (replayed: {replayed}), \
                         the lists show {ids:?}",
                        u.attempt.reference, u.round
                    ));
                }
            }
        }
    }
    (problems, tally)
}

/// Files in the document folder that no listed case owns, and object_store's unfinished
/// staging files: debris of killed creates, invisible through the API.
pub(crate) fn debris(deployment: &Deployment) -> (usize, usize) {
    fn walk(dir: &std::path::Path, files: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                walk(&p, files);
            } else {
                files.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&deployment.data_dir().join("documents"), &mut files);
    let staging = files
        .iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains('#'))
        })
        .count();
    (files.len(), staging)
}

/// What [`check`] needs of the run besides its server and ledger.
#[derive(Clone, Copy)]
pub(crate) struct Checked<'a> {
    pub(crate) deployment: &'a Deployment,
    pub(crate) operator_key: &'a str,
    pub(crate) fixtures: &'a Fixtures,
}

pub(crate) async fn check(
    label: &str,
    run: Checked<'_>,
    server: &Server,
    ledger: &mut Ledger,
) -> Tally {
    let Checked {
        deployment,
        operator_key,
        fixtures,
    } = run;
    let started = Instant::now();
    let (problems, tally) = verify(server, operator_key, ledger, fixtures).await;
    println!(
        "{label}: checked {} cases, {} documents in {:.1} s; no-answer creates: {} present, {} absent; \
         retried with key: {} replayed, {} created, {} key still in use",
        tally.cases,
        tally.documents,
        started.elapsed().as_secs_f64(),
        tally.unanswered_present,
        tally.unanswered_absent,
        tally.retried_replayed,
        tally.retried_created,
        tally.key_in_use,
    );
    assert!(
        problems.is_empty() && ledger.unexpected.is_empty(),
        "{label}: {} problems:\n{}\nanswers other than 201 under load:\n{}\nserver log:\n{}",
        problems.len(),
        problems.join("\n"),
        ledger.unexpected.join("\n"),
        deployment.log_tail()
    );
    tally
}

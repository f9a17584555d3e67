//! PostgreSQL case creates in one statement.
//!
//! Through sqlx a create was about ten round trips on its connection (the ping, `BEGIN`, the
//! company, the case, each document, each status change, the webhook targets, the children,
//! the claim, `COMMIT`); on two cores, the sends and wake-ups of each round trip on both sides
//! cost more than the statements. Here the whole create is one statement of data-modifying
//! `WITH` parts, atomic on its own (no `BEGIN`/`COMMIT`), with the documents, status changes and
//! webhook messages bound as arrays. The webhook targets (the provider's endpoints) are read
//! before it, on a reading connection: at `READ COMMITTED`, the isolation of the transaction
//! this replaces, a read inside the transaction saw no more than one just before it.
//!
//! The claim, the company and the case row are `sql/text.rs`'s statements (`COMPLETE_CLAIM`,
//! `INSERT_CLIENT_COMPANY`, `INSERT_TRADE`, `INSERT_TAX`), which SQLite runs (and the tests' sqlx transaction),
//! rewritten to depend on the claim; the children are inserted from arrays with the columns of
//! `INSERT_DOCUMENT`, `INSERT_HISTORY` and `INSERT_WEBHOOK_MESSAGE`. A test in `tests.rs`
//! writes cases both ways and compares the rows.

use std::sync::LazyLock;

use sqlx::Row;
use sqlx::types::Json;

use crate::new_case::{Common, NewCase};
use crate::rows::{documents_to_json, history_to_json};
use crate::sql::Shared;
use crate::sql::events::{EventTarget, Events, event_messages, has_events};
use crate::sql::text::{COMPLETE_CLAIM, INSERT_CLIENT_COMPANY, INSERT_TAX, INSERT_TRADE};
use crate::{Result, StoreError};

/// The parts every create shares after the claim, the gate and the company (see [`statement`]):
/// - `$15`-`$25`: the documents, a column each; `$26`-`$32`: the case id, kind and the status
///   changes; `$33`, `$34`: the case's children as JSON (`case_children`); `$35`-`$40`: the
///   webhook messages; `$41`-`$48`: the event log's entries (id, type, body, time of each; the
///   provider, company, case id as the provider knows it and environment they share).
///
/// Rows are inserted in the order of the arrays (`WITH ORDINALITY`), so the sequence numbers of
/// the history and of the outbox (its delivery order) follow the order of the changes, as the
/// sqlx transaction's one insert after another does. Foreign keys are checked at the end of the
/// statement, when the company and the case exist.
const CHILD_PARTS: &str = "documents AS (\
       INSERT INTO documents (id, case_id, case_kind, owner_index, doc_type, name, storage_key, \
         content_type, size, sha256, created_at) \
       SELECT d.id, d.case_id, d.case_kind, d.owner_index, d.doc_type, d.name, d.storage_key, \
         d.content_type, d.size, d.sha256, d.created_at \
       FROM go, unnest($15::uuid[], $16::uuid[], $17::text[], $18::int4[], $19::text[], \
         $20::text[], $21::text[], $22::text[], $23::int8[], $24::bytea[], $25::timestamptz[]) \
         WITH ORDINALITY AS d (id, case_id, case_kind, owner_index, doc_type, name, storage_key, \
         content_type, size, sha256, created_at, n) \
       WHERE go.ok ORDER BY d.n), \
     history AS (\
       INSERT INTO status_history (case_id, case_kind, status, previous_status, actor, reason, at) \
       SELECT $26, $27, h.status, h.previous_status, h.actor, h.reason, h.at \
       FROM go, unnest($28::text[], $29::text[], $30::text[], $31::text[], $32::timestamptz[]) \
         WITH ORDINALITY AS h (status, previous_status, actor, reason, at, n) \
       WHERE go.ok ORDER BY h.n), \
     children AS (\
       INSERT INTO case_children (case_id, history_json, documents_json, verified_json) \
       SELECT $26, $33, $34, '[]' FROM go WHERE go.ok), \
     messages AS (\
       INSERT INTO webhook_messages (id, endpoint_id, case_id, event_type, payload, state, \
         attempts, next_attempt_us, created_at) \
       SELECT m.id, m.endpoint_id, $26, m.event_type, m.payload, 'pending', 0, m.next, m.at \
       FROM go, unnest($35::uuid[], $36::uuid[], $37::text[], $38::text[], $39::int8[], \
         $40::timestamptz[]) WITH ORDINALITY AS m (id, endpoint_id, event_type, payload, next, \
         at, n) \
       WHERE go.ok ORDER BY m.n), \
     events AS (\
       INSERT INTO events (id, provider_id, company_id, case_id, environment, event_type, \
         payload, created_at) \
       SELECT e.id, $45, $46, $47, $48, e.event_type, e.payload, e.at \
       FROM go, unnest($41::uuid[], $42::text[], $43::text[], $44::timestamptz[]) \
         WITH ORDINALITY AS e (id, event_type, payload, at, n) \
       WHERE go.ok ORDER BY e.n), ";

static TRADE: LazyLock<String> = LazyLock::new(|| statement(INSERT_TRADE));
static TAX: LazyLock<String> = LazyLock::new(|| statement(INSERT_TAX));

/// The whole statement of a create whose case row `case_insert` writes (`INSERT_TRADE` or
/// `INSERT_TAX`). The claim, the company and the case row are the statements SQLite runs
/// (`sql/text.rs`), so their columns are written once, with their parameters moved up and each
/// made to depend on the gate:
/// - `$1`-`$5`: whether there is a claim, then `COMPLETE_CLAIM`'s status, body, scope and key.
///   The claim is completed first; when it is no longer in flight, `go` is false and nothing
///   is inserted.
/// - `$6`-`$14`: whether there is a new company, then `INSERT_CLIENT_COMPANY`'s values.
/// - `$15`-`$48`: [`CHILD_PARTS`].
/// - `$49` onwards: `case_insert`'s values.
fn statement(case_insert: &str) -> String {
    let claim = shift_params(COMPLETE_CLAIM, 1).replacen(" WHERE ", " WHERE $1 AND ", 1);
    format!(
        "WITH claim AS ({claim} RETURNING 1), \
         go AS (SELECT (NOT $1) OR EXISTS (SELECT 1 FROM claim) AS ok), \
         company AS ({}), {CHILD_PARTS}case_row AS ({}) SELECT ok FROM go",
        gated(INSERT_CLIENT_COMPANY, 6, "$6 AND go.ok"),
        gated(case_insert, 48, "go.ok"),
    )
}

/// `INSERT ... VALUES (...)` as `INSERT ... SELECT ... FROM go WHERE <condition>`, its
/// parameters moved up by `by`.
fn gated(insert: &str, by: usize, condition: &str) -> String {
    let shifted = shift_params(insert, by);
    let (head, values) = shifted
        .split_once(" VALUES (")
        .expect("a shared INSERT has VALUES");
    let values = values
        .strip_suffix(')')
        .expect("VALUES end the shared INSERT");
    format!("{head} SELECT {values} FROM go WHERE {condition}")
}

/// `sql` with every parameter `$n` renumbered `$(n + by)`.
fn shift_params(sql: &str, by: usize) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[..digits].parse::<usize>() {
            Ok(n) => out.push_str(&(n + by).to_string()),
            Err(_) => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// The provider's endpoints that may receive a case's events, in the order their messages are
/// written (as `event_targets_query` orders them).
const ENDPOINTS: &str = "SELECT id, events FROM webhook_endpoints \
     WHERE provider_id = $1 AND deleted_at IS NULL ORDER BY created_at, id";

/// The webhook targets of a new case: its provider's endpoints, with the case's company,
/// environment and client reference (as `event_targets_query` reads them from the case row).
async fn targets(sql: &Shared<sqlx::Postgres>, c: &Common<'_>) -> Result<Vec<EventTarget>> {
    // The status the create leaves the case in (its last history entry).
    let Some(status) = c.history.last().map(|h| h.status) else {
        return Ok(Vec::new());
    };
    if !has_events(c.history) {
        return Ok(Vec::new());
    }
    let provider = c.provider_id;
    let rows = sql
        .read(move |conn| {
            Box::pin(async move {
                sqlx::query(ENDPOINTS)
                    .bind(provider)
                    .fetch_all(&mut *conn)
                    .await
            })
        })
        .await?;
    // `record ->> 'client_reference'`: a string as it is, any other value as its JSON text.
    let client_reference = match c.record.get("client_reference") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    };
    let target = |endpoint_id, events| EventTarget {
        case_public_id: c.public_id,
        provider_id: c.provider_id,
        endpoint_id,
        events,
        company_id: c.company_id,
        status,
        environment: c.environment.to_owned(),
        client_reference: client_reference.clone(),
    };
    if rows.is_empty() {
        // No endpoint: the case alone, for the event log.
        return Ok(vec![target(None, None)]);
    }
    rows.iter()
        .map(|row| {
            let events: Option<Json<Vec<String>>> = row.try_get("events")?;
            Ok(target(Some(row.try_get("id")?), events.map(|e| e.0)))
        })
        .collect()
}

/// Writes the case in one statement; `IdempotencyClaimLost` (and nothing written) when its
/// claim is no longer in flight.
pub(super) async fn create(sql: &Shared<sqlx::Postgres>, case: &NewCase) -> Result<()> {
    let c = case.common();
    let targets = targets(sql, &c).await?;
    let events = event_messages(c.history, &targets);
    let ok: bool = bound(case, &events)?
        .fetch_one(&sql.writer)
        .await?
        .try_get("ok")?;
    if ok {
        Ok(())
    } else {
        Err(StoreError::IdempotencyClaimLost)
    }
}

/// The create statement of `case` with its values bound.
fn bound<'q>(
    case: &'q NewCase,
    events: &'q Events,
) -> Result<sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>> {
    let c = case.common();
    let statement = match case {
        NewCase::Trade(_) => TRADE.as_str(),
        NewCase::Tax(_) => TAX.as_str(),
    };
    let claim = c.idempotency;
    let company = c.new_company;
    let (docs, history) = (c.documents, c.history);
    let (messages, logged) = (&events.messages, &events.logged);
    let query = sqlx::query(statement)
        .bind(claim.is_some())
        .bind(claim.map(|a| i32::from(a.status)))
        .bind(claim.map(|a| a.body.as_slice()))
        .bind(claim.map(|a| a.scope))
        .bind(claim.map(|a| a.key.as_str()))
        .bind(company.is_some())
        .bind(company.map(|(id, _)| *id))
        .bind(company.map(|(_, n)| n.name.as_str()))
        .bind(company.map(|(_, n)| n.provider_id))
        .bind(company.map(|(_, n)| n.environment.as_str()))
        .bind(company.and_then(|(_, n)| n.legal_form.as_deref()))
        .bind(company.and_then(|(_, n)| n.registration_number.as_deref()))
        .bind(company.and_then(|(_, n)| n.business_address.as_ref().map(Json)))
        .bind(c.created_at)
        .bind(column(docs, |d| d.id))
        .bind(column(docs, |d| d.case_id))
        .bind(column(docs, |d| d.case_kind.as_str()))
        .bind(column(docs, |d| d.owner_index))
        .bind(column(docs, |d| d.doc_type.as_str()))
        .bind(column(docs, |d| d.name.as_str()))
        .bind(column(docs, |d| d.storage_key.as_str()))
        .bind(column(docs, |d| d.content_type.as_str()))
        .bind(column(docs, |d| d.size))
        .bind(column(docs, |d| d.sha256.as_deref()))
        .bind(column(docs, |d| d.created_at))
        .bind(c.id)
        .bind(c.kind.as_str())
        .bind(column(history, |h| h.status.as_str()))
        .bind(column(history, |h| h.previous_status.map(|s| s.as_str())))
        .bind(column(history, |h| h.actor.to_string()))
        .bind(column(history, |h| h.reason.as_deref()))
        .bind(column(history, |h| h.at))
        .bind(history_to_json(history)?)
        .bind(documents_to_json(docs)?)
        .bind(column(messages, |m| m.id))
        .bind(column(messages, |m| m.endpoint_id))
        .bind(column(messages, |m| m.event_type))
        .bind(column(messages, |m| m.body.as_str()))
        .bind(column(messages, |m| m.next_attempt_us))
        .bind(column(messages, |m| m.at))
        .bind(column(logged, |e| e.id))
        .bind(column(logged, |e| e.event_type))
        .bind(column(logged, |e| e.body.as_str()))
        .bind(column(logged, |e| e.at))
        .bind(c.provider_id)
        .bind(c.company_id)
        .bind(c.public_id)
        .bind(c.environment);
    Ok(Shared::bind_case_row(query, case))
}

/// One field of every row, as the array bound for it.
fn column<'a, T, U>(rows: &'a [T], field: impl Fn(&'a T) -> U) -> Vec<U> {
    rows.iter().map(field).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_statements_are_gated_and_renumbered() {
        assert_eq!(
            shift_params("a = $1, b = $12, c = '$', d = $2", 40),
            "a = $41, b = $52, c = '$', d = $42"
        );
        assert_eq!(
            gated("INSERT INTO t (a, b) VALUES ($1, $2)", 6, "$6 AND go.ok"),
            "INSERT INTO t (a, b) SELECT $7, $8 FROM go WHERE $6 AND go.ok"
        );
        let trade = statement(INSERT_TRADE);
        assert!(trade.contains("response_status = $2, response_body = $3 WHERE $1 AND scope = $4 AND key = $5 AND state = 'in-flight' RETURNING 1"), "{trade}");
        assert!(
            trade.contains(
                "SELECT $7, 'client', $8, $9, $10, $11, $12, $13, $14 FROM go WHERE $6 AND go.ok"
            ),
            "{trade}"
        );
        assert!(trade.contains("SELECT $49, $50, $51, $52, $53, $54, $55, $56, $57, $58, $59, $60, $60 FROM go WHERE go.ok) SELECT ok FROM go"), "{trade}");
        assert!(statement(INSERT_TAX).contains("$59, $59, $60, $61 FROM go WHERE go.ok)"));
    }
}

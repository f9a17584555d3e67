//! Rows read the same way in both dialects, and the JSON arrays of a case's children.

use sqlx::types::Json;
use sqlx::{Decode, Row, Type};
use time::OffsetDateTime;
use uuid::Uuid;

use domain::case::{CaseKind, DocumentType};
use domain::case_state::CaseStatus;
use domain::lifecycle::{Actor, Lifecycle};
use domain::tax_core::TaxPackage;

use crate::{DocumentRecord, TaxRegistrationRecord, TradeOfficeEntry, WebhookEndpoint};

/// A name read back as the domain's type (`parse`); a name the domain does not know is
/// corrupt data, named with `what` it was.
pub(crate) fn named<T>(what: &str, s: &str, parse: impl Fn(&str) -> Option<T>) -> crate::Result<T> {
    parse(s).ok_or_else(|| crate::StoreError::Corrupt(format!("unknown {what} {s:?}")))
}

/// A stored status of lifecycle `L`.
pub(crate) fn status<L: Lifecycle>(s: &str) -> crate::Result<L> {
    named("status", s, L::parse)
}

/// A stored actor (`provider:<id>`, `operator:<id>`, `system`); text in none of these forms
/// (never written, only by hand) reads as [`Actor::Unknown`] and fails nothing.
pub(crate) fn actor(s: &str) -> Actor {
    s.parse().unwrap_or(Actor::Unknown)
}

/// A stored webhook message state.
pub(crate) fn message_state(s: &str) -> crate::Result<crate::MessageState> {
    named("message state", s, crate::MessageState::parse)
}

/// A stored webhook event type.
pub(crate) fn event_type(s: &str) -> crate::Result<domain::webhook::EventType> {
    named("event type", s, domain::webhook::EventType::parse)
}

pub(crate) fn case_kind(s: &str) -> crate::Result<CaseKind> {
    named("case kind", s, CaseKind::parse)
}

pub(crate) fn doc_type(s: &str) -> crate::Result<DocumentType> {
    named("document type", s, DocumentType::parse)
}

/// A row of one of the statements both dialects share, decoded the same way in both.
pub(crate) struct Columns<'r, R>(pub(crate) &'r R);

impl<R> Columns<'_, R>
where
    R: Row,
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    for<'a> Uuid: Decode<'a, R::Database> + Type<R::Database>,
    for<'a> String: Decode<'a, R::Database> + Type<R::Database>,
    for<'a> i32: Decode<'a, R::Database> + Type<R::Database>,
    for<'a> i64: Decode<'a, R::Database> + Type<R::Database>,
    for<'a> Vec<u8>: Decode<'a, R::Database> + Type<R::Database>,
    for<'a> OffsetDateTime: Decode<'a, R::Database> + Type<R::Database>,
    for<'a> Json<serde_json::Value>: Decode<'a, R::Database> + Type<R::Database>,
    for<'a> Json<Vec<String>>: Decode<'a, R::Database> + Type<R::Database>,
{
    /// A `documents` row.
    pub(crate) fn document(&self) -> crate::Result<DocumentRecord> {
        let row = self.0;
        Ok(DocumentRecord {
            id: row.try_get("id")?,
            case_id: row.try_get("case_id")?,
            case_kind: case_kind(&row.try_get::<String, _>("case_kind")?)?,
            owner_index: row.try_get("owner_index")?,
            doc_type: doc_type(&row.try_get::<String, _>("doc_type")?)?,
            name: row.try_get("name")?,
            storage_key: row.try_get("storage_key")?,
            content_type: row.try_get("content_type")?,
            size: row.try_get("size")?,
            sha256: row.try_get("sha256")?,
            created_at: row.try_get("created_at")?,
        })
    }

    /// A `trade_offices` row selected with `office_columns!`.
    pub(crate) fn trade_office(&self) -> crate::Result<TradeOfficeEntry> {
        let row = self.0;
        Ok(TradeOfficeEntry {
            key: row.try_get("office_key")?,
            name: row.try_get("office_name")?,
            address: row.try_get("office_address")?,
            email: row.try_get("office_email")?,
            phone: row.try_get("office_phone")?,
            website: row.try_get("office_website")?,
            updated_at: row.try_get("office_updated_at")?,
        })
    }

    /// A `webhook_endpoints` row.
    pub(crate) fn endpoint(&self) -> crate::Result<WebhookEndpoint> {
        let row = self.0;
        let events: Option<Json<Vec<String>>> = row.try_get("events")?;
        Ok(WebhookEndpoint {
            id: row.try_get("id")?,
            provider_id: row.try_get("provider_id")?,
            url: row.try_get("url")?,
            events: events.map(|e| e.0),
            secret: row.try_get("secret")?,
            previous_secret: row.try_get("previous_secret")?,
            previous_secret_expires_at: row.try_get("previous_secret_expires_at")?,
            created_at: row.try_get("created_at")?,
            circuit: crate::EndpointCircuit {
                consecutive_failures: row.try_get("consecutive_failures")?,
                open_until_us: row.try_get("circuit_open_until_us")?,
            },
        })
    }

    /// A row of a tax registration read ([`DialectSql`](crate::sql::text::DialectSql)'s
    /// `tax_*`), its children as JSON arrays.
    pub(crate) fn tax(&self) -> crate::Result<TaxRegistrationRecord> {
        let row = self.0;
        let id: Uuid = row.try_get("id")?;
        let environment: String = row.try_get("environment")?;
        let record: Json<serde_json::Value> = row.try_get("record")?;
        let lookup: Option<Json<serde_json::Value>> = row.try_get("tax_office_lookup")?;
        let history: String = row.try_get("history_json")?;
        let provider_id: Uuid = row.try_get("provider_id")?;
        let operators: Option<String> = row.try_get("operators_json")?;
        let names = actor_names(
            provider_id,
            row.try_get("provider_name")?,
            operators.as_deref(),
        )?;
        let documents: String = row.try_get("documents_json")?;
        Ok(TaxRegistrationRecord {
            head: crate::CaseHead {
                id,
                company_id: row.try_get("company_id")?,
                provider_id,
                environment: crate::sql::environment(&environment)?,
                package: named(
                    "package",
                    &row.try_get::<String, _>("package")?,
                    TaxPackage::parse,
                )?,
                status: status(&row.try_get::<String, _>("status")?)?,
                record: record.0,
                created_at: row.try_get("created_at")?,
                documents: documents_from_json(&documents, id)?,
                history: history_from_json(CaseKind::Tax, &history, &names)?,
            },
            public_id: row.try_get("public_id")?,
            legal_form: named(
                "legal form",
                &row.try_get::<String, _>("legal_form")?,
                domain::tax::TaxLegalForm::parse,
            )?,
            tax_office_number: row.try_get("tax_office_number")?,
            tax_office_lookup: lookup.map(|j| j.0),
            tax_number: row.try_get("tax_number")?,
        })
    }
}

/// The current time at microsecond precision: what both databases store without rounding, so a
/// value read back compares equal to the one written.
pub(crate) fn now() -> time::OffsetDateTime {
    let t = time::OffsetDateTime::now_utc();
    let micros = t.nanosecond() / 1_000 * 1_000;
    t.replace_nanosecond(micros).unwrap_or(t)
}

/// A stored status of a `kind` case.
pub(crate) fn case_status(kind: CaseKind, s: &str) -> crate::Result<CaseStatus> {
    named("status", s, |s| CaseStatus::parse(kind, s))
}

/// An entry of the `history_json` column: `[status, previous_status, actor, reason, at]`, and a
/// sixth element, the changed fields, on field-change entries only (migrations sqlite 0020,
/// pg 0023), so that the arrays of status steps read as they were written before.
#[derive(serde::Deserialize)]
struct HistoryRow {
    status: String,
    previous_status: Option<String>,
    actor: String,
    reason: Option<String>,
    at: String,
    #[serde(default)]
    changes: Option<Vec<crate::FieldChange>>,
}

/// The names a case read found for its history's actors: its provider's (`provider_name`, the
/// one provider that acts on a case) and its operators' (`operators_json`: `[["operator:<id>",
/// name], ...]`; NULL reads as none), as (actor, name) pairs.
pub(crate) fn actor_names(
    provider_id: Uuid,
    provider_name: Option<String>,
    operators_json: Option<&str>,
) -> crate::Result<Vec<(Actor, String)>> {
    let operators: Vec<(String, String)> = match operators_json {
        Some(a) => serde_json::from_str(a).map_err(corrupt_json)?,
        None => Vec::new(),
    };
    let mut names = operators
        .into_iter()
        .map(|(a, name)| (actor(&a), name))
        .collect::<Vec<_>>();
    if let Some(name) = provider_name {
        names.push((Actor::Provider(provider_id), name));
    }
    Ok(names)
}

/// The status history as the `history_json` column gives it (see [`HistoryRow`]), in order,
/// of a `kind` case, each entry's `actor_name` from `names` ([`actor_names`]).
pub(crate) fn history_from_json(
    kind: CaseKind,
    json: &str,
    names: &[(Actor, String)],
) -> crate::Result<Vec<crate::StatusChange>> {
    let rows: Vec<HistoryRow> = serde_json::from_str(json).map_err(corrupt_json)?;
    rows.into_iter()
        .map(|r| {
            let by = actor(&r.actor);
            let actor_name = names
                .iter()
                .find(|(a, _)| *a == by)
                .map(|(_, name)| name.clone());
            Ok(crate::StatusChange {
                status: case_status(kind, &r.status)?,
                previous_status: r
                    .previous_status
                    .map(|s| case_status(kind, &s))
                    .transpose()?,
                actor: by,
                reason: r.reason,
                at: timestamp(&r.at)?,
                changes: r.changes.unwrap_or_default(),
                actor_name,
            })
        })
        .collect()
}

/// The JSON of [`history_from_json`], for a new case's history (PostgreSQL's `case_children`).
pub(crate) fn history_to_json(history: &[crate::StatusChange]) -> crate::Result<String> {
    let rows = history
        .iter()
        .map(|h| {
            let mut row = serde_json::json!([
                h.status.as_str(),
                h.previous_status.map(CaseStatus::as_str),
                h.actor.to_string(),
                &h.reason,
                rfc3339(h.at)?,
            ]);
            if h.is_field_change()
                && let Some(items) = row.as_array_mut()
            {
                items.push(serde_json::to_value(&h.changes).map_err(corrupt_json)?);
            }
            Ok(row)
        })
        .collect::<crate::Result<Vec<_>>>()?;
    serde_json::to_string(&rows).map_err(|e| crate::StoreError::Corrupt(e.to_string()))
}

/// The JSON of [`documents_from_json`], for a new case's documents (PostgreSQL's
/// `case_children`), in the order PostgreSQL's `refresh_case_children` gives them: by creation
/// time, owner (none last) and type (bytewise).
pub(crate) fn documents_to_json(documents: &[crate::DocumentRecord]) -> crate::Result<String> {
    let mut sorted: Vec<&crate::DocumentRecord> = documents.iter().collect();
    sorted.sort_by(|a, b| {
        (
            a.created_at,
            a.owner_index.is_none(),
            a.owner_index,
            a.doc_type.as_str().as_bytes(),
        )
            .cmp(&(
                b.created_at,
                b.owner_index.is_none(),
                b.owner_index,
                b.doc_type.as_str().as_bytes(),
            ))
    });
    let rows = sorted
        .into_iter()
        .map(|d| {
            Ok((
                d.id.simple().to_string(),
                d.case_kind.as_str(),
                d.owner_index,
                d.doc_type.as_str(),
                &d.name,
                &d.storage_key,
                &d.content_type,
                d.size,
                d.sha256.as_deref().map(to_hex),
                rfc3339(d.created_at)?,
            ))
        })
        .collect::<crate::Result<Vec<_>>>()?;
    serde_json::to_string(&rows).map_err(|e| crate::StoreError::Corrupt(e.to_string()))
}

/// A timestamp as RFC 3339 text: how sqlx stores it in SQLite (the rusqlite writes use it too)
/// and how [`timestamp`] reads it back from the child arrays.
pub(crate) fn rfc3339(at: time::OffsetDateTime) -> crate::Result<String> {
    at.format(&time::format_description::well_known::Rfc3339)
        .map_err(|e| crate::StoreError::Corrupt(format!("timestamp {at}: {e}")))
}

pub(crate) fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The documents as the `documents_json` column gives them: `[[id (hex), case_kind,
/// owner_index, doc_type, name, storage_key, content_type, size, sha256 (hex), created_at],
/// ...]`; size and sha256 are null for a document not rendered yet.
pub(crate) fn documents_from_json(
    json: &str,
    case_id: uuid::Uuid,
) -> crate::Result<Vec<crate::DocumentRecord>> {
    type Row = (
        String,
        String,
        Option<i32>,
        String,
        String,
        String,
        String,
        Option<i64>,
        Option<String>,
        String,
    );
    let rows: Vec<Row> = serde_json::from_str(json).map_err(corrupt_json)?;
    rows.into_iter()
        .map(
            |(
                id,
                case_kind,
                owner_index,
                doc_type,
                name,
                storage_key,
                content_type,
                size,
                sha,
                at,
            )| {
                Ok(crate::DocumentRecord {
                    id: uuid::Uuid::try_parse(&id).map_err(|e| {
                        crate::StoreError::Corrupt(format!("document id {id:?}: {e}"))
                    })?,
                    case_id,
                    case_kind: self::case_kind(&case_kind)?,
                    owner_index,
                    doc_type: self::doc_type(&doc_type)?,
                    name,
                    storage_key,
                    content_type,
                    size,
                    sha256: sha.as_deref().map(from_hex).transpose()?,
                    created_at: timestamp(&at)?,
                })
            },
        )
        .collect()
}

/// Identity verifications as the `verified_json` column gives them: `[[owner_index,
/// verified_at], ...]`.
pub(crate) fn verifications_from_json(
    json: &str,
) -> crate::Result<Vec<(i32, time::OffsetDateTime)>> {
    let rows: Vec<(i32, String)> = serde_json::from_str(json).map_err(corrupt_json)?;
    rows.into_iter()
        .map(|(i, at)| Ok((i, timestamp(&at)?)))
        .collect()
}

fn corrupt_json(e: serde_json::Error) -> crate::StoreError {
    crate::StoreError::Corrupt(format!("child rows unreadable: {e}"))
}

/// RFC 3339, as SQLite stores timestamps (sqlx) and PostgreSQL writes them in JSON.
pub(crate) fn timestamp(text: &str) -> crate::Result<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .map_err(|e| crate::StoreError::Corrupt(format!("timestamp {text:?}: {e}")))
}

fn from_hex(text: &str) -> crate::Result<Vec<u8>> {
    let bad = || crate::StoreError::Corrupt(format!("hex {text:?}"));
    if !text.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2).ok_or_else(bad)?, 16).map_err(|_| bad()))
        .collect()
}

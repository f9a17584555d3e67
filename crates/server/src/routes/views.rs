//! What trade and tax cases show alike when read back: their documents, with fresh signed
//! download links, and their status history.

use serde::Serialize;
use store::{DocumentRecord, StatusChange};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
pub struct DocumentView {
    pub id: Uuid,
    /// A trade registration's `trade-licence-application`, `power-of-attorney` or
    /// `trade-licence`; a tax registration's `tax-registration-xml` or
    /// `tax-registration-summary`.
    #[serde(rename = "type")]
    pub doc_type: String,
    pub name: String,
    /// `application/pdf` or `application/xml`: the download's `Content-Type`.
    #[schema(example = "application/pdf")]
    pub content_type: String,
    /// The file's length in bytes, as the download delivers it. `null` for a document the
    /// service renders on its first download (the tax registration summary) until that
    /// download.
    #[schema(example = 43512)]
    pub size: Option<i64>,
    /// The SHA-256 digest of the file, 64 lowercase hex digits, for checking a stored copy;
    /// `null` where `size` is.
    #[schema(example = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")]
    pub sha256: Option<String>,
    pub download_url: String,
    /// `true` once the case is cancelled: the document is kept (and can be downloaded) but no
    /// longer stands for a filing (docs/api/lifecycle.md, "Cancellation").
    pub void: bool,
}

/// An entry of a case's history: a status step, or an operator's change of the case's fields
/// (`changes`), which keeps the status (`previous_status` equals `status`) and sends no
/// webhook event.
#[derive(Debug, Serialize, ToSchema)]
pub struct StatusHistoryEntry {
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_status: Option<String>,
    /// `provider:<id>`, `operator:<id>` or `system`.
    pub actor: String,
    /// The operator's name for `operator:<id>`, the provider company's for `provider:<id>`;
    /// absent for `system`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "Erika Sachbearbeiterin")]
    pub actor_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub at: OffsetDateTime,
    /// The fields an operator changed, each with its old and new value; absent on status
    /// steps.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FieldChangeView>,
}

/// A field of a case an operator changed, its values as a clerk reads them (docs/api/lifecycle.md,
/// "History").
#[derive(Debug, Serialize, ToSchema)]
pub struct FieldChangeView {
    /// `city_fee`, `is_paid`, `trade_office`, `trade_office.municipality_key`,
    /// `source_product`, `tax_office` or `owners[<i>].identity_verified_at`.
    #[schema(example = "city_fee")]
    pub field: String,
    /// The value before; `null` when the field had none.
    #[schema(example = "26.00", required = true)]
    pub old: Option<String>,
    /// The value after; `null` when the change removed it.
    #[schema(example = "30.00", required = true)]
    pub new: Option<String>,
}

/// Documents with fresh signed links.
/// The views of a case's `documents`; `void` when the case is cancelled.
pub fn document_views(
    state: &AppState,
    documents: &[DocumentRecord],
    void: bool,
) -> Vec<DocumentView> {
    let now = OffsetDateTime::now_utc().unix_timestamp();
    documents
        .iter()
        .map(|d| DocumentView {
            id: d.id,
            doc_type: d.doc_type.as_str().into(),
            name: d.name.clone(),
            content_type: d.content_type.clone(),
            size: d.size,
            sha256: d.sha256_hex(),
            download_url: state.links.url(d.id, now),
            void,
        })
        .collect()
}

pub fn history_views(history: &[StatusChange]) -> Vec<StatusHistoryEntry> {
    history
        .iter()
        .map(|h| StatusHistoryEntry {
            status: h.status.as_str().into(),
            previous_status: h.previous_status.map(|s| s.as_str().into()),
            actor: h.actor.to_string(),
            actor_name: h.actor_name.clone(),
            reason: h.reason.clone(),
            at: h.at,
            changes: h
                .changes
                .iter()
                .map(|c| FieldChangeView {
                    field: c.field.clone(),
                    old: c.old.clone(),
                    new: c.new.clone(),
                })
                .collect(),
        })
        .collect()
}

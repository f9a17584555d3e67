//! A case's documents: their records, where they are stored, and the files no case refers to.

use domain::case::DocumentType;
use sha2::{Digest, Sha256};
use store::DocumentRecord;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::state::AppState;

/// The size and SHA-256 of a document's content, as recorded with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digested {
    pub size: i64,
    pub sha256: Vec<u8>,
}

impl Digested {
    pub fn of(bytes: &[u8]) -> Self {
        Self {
            size: bytes.len() as i64,
            sha256: Sha256::digest(bytes).to_vec(),
        }
    }
}

/// The record of a new document of case `case_id`: a new id, stored under
/// [`storage_key`] by its case kind and `ext` (`pdf` or `xml`, which also give its content
/// type). `content` is `None` for a document recorded now and rendered on its first download.
pub fn record(
    case_id: Uuid,
    doc_type: DocumentType,
    owner_index: Option<i32>,
    name: String,
    ext: &str,
    content: Option<Digested>,
    now: OffsetDateTime,
) -> DocumentRecord {
    let id = Uuid::now_v7();
    let kind = doc_type.case_kind();
    let (size, sha256) = content.map(|c| (c.size, c.sha256)).unzip();
    DocumentRecord {
        id,
        case_id,
        case_kind: kind,
        owner_index,
        doc_type,
        name,
        storage_key: storage_key(kind.as_str(), id, ext, now),
        content_type: if ext == "xml" {
            "application/xml"
        } else {
            "application/pdf"
        }
        .into(),
        size,
        sha256,
        created_at: now,
    }
}

/// Where a case document is stored: `<kind>/<yyyy-mm>/<document id>.<ext>`, the month of
/// `at` (UTC). Documents share a folder per kind and month rather than one per case: a folder
/// per case cost every create a `mkdir` (a new inode) and the flush of one more folder
/// (docs/adr/0016-storage-keys-by-month.md). Older cases keep the keys they were stored under.
pub fn storage_key(kind: &str, document_id: Uuid, ext: &str, at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{kind}/{:04}-{:02}/{document_id}.{ext}",
        at.year(),
        u8::from(at.month())
    )
}

/// Removes files no case refers to: those of a write that failed, or those a write replaced.
pub async fn remove_files(state: &AppState, keys: &[String]) {
    for key in keys {
        if let Err(e) = state.documents.delete(key).await {
            tracing::error!(%key, error = %e, "could not remove a file no case refers to");
        }
    }
}

/// Whether `documents` hold one of `doc_type` for `owner` with the content `bytes` (by SHA-256):
/// an office assignment that would write it again leaves it as it is and announces nothing.
pub fn holds_document(
    documents: &[DocumentRecord],
    owner: Option<i32>,
    doc_type: DocumentType,
    bytes: &[u8],
) -> bool {
    let sha256 = Sha256::digest(bytes);
    documents.iter().any(|d| {
        d.owner_index == owner
            && d.doc_type == doc_type
            && d.sha256.as_deref() == Some(sha256.as_slice())
    })
}

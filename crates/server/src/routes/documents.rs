//! Document downloads through signed links (docs/api/documents.md, "Download links"): no key needed, the link is the
//! authorisation; it expires after 24 hours.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use utoipa::IntoParams;
use uuid::Uuid;

use crate::envelope::Envelope;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ApiQuery;
use crate::state::AppState;

/// The query of a signed link. Both are required for a download; a link without them, or with
/// values that do not parse, is refused like a wrong signature (403), so they are read as text.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LinkParams {
    /// Unix time after which the link is refused.
    #[param(value_type = i64, required = true, example = 1795000000)]
    pub expires: Option<String>,
    /// HMAC-SHA256 over the document id and `expires`, base64url.
    #[param(value_type = String, required = true)]
    pub signature: Option<String>,
}

/// `attachment` with an ASCII fallback name and the UTF-8 name (RFC 6266 / RFC 5987).
pub fn content_disposition(name: &str) -> HeaderValue {
    let ascii: String = name
        .chars()
        .map(|c| match c {
            'ä' => 'a',
            'ö' => 'o',
            'ü' => 'u',
            'Ä' => 'A',
            'Ö' => 'O',
            'Ü' => 'U',
            'ß' => 's',
            c if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' => c,
            _ => '_',
        })
        .collect();
    let encoded: String = name
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    HeaderValue::from_str(&format!(
        "attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}"
    ))
    .unwrap_or_else(|_| HeaderValue::from_static("attachment"))
}

/// What a download link that fails answers.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)] // documents the answers; `content` gives them through `ApiError`
pub enum DownloadErrors {
    #[response(
        status = 403,
        description = "Expired or tampered link (`INVALID_DOWNLOAD_LINK`)"
    )]
    InvalidLink(Envelope<ErrorBody>),
    #[response(
        status = 404,
        description = "The document no longer exists (`NOT_FOUND`)"
    )]
    Gone(Envelope<ErrorBody>),
}

/// Download a document
///
/// Downloads a document. The address comes from a case's `download_url`; it carries its own
/// authorisation and expires 24 hours after it was issued.
#[utoipa::path(get, path = "/v1/documents/{document_id}/content", tag = "documents", security(()),
    params(("document_id" = Uuid, Path, description = "The document's id"), LinkParams),
    responses(
        (status = 200, description = "The document's bytes: a PDF, or the ELSTER XML of a tax \
registration (`content_type` and `sha256` in the case's `documents`)", content(
            (String = "application/pdf", example = json!("%PDF-1.7 ...")),
            (String = "application/xml", example = json!("<?xml version=\"1.0\" encoding=\"ISO-8859-15\"?> ...")),
        )),
        DownloadErrors,
    ))]
pub async fn content(
    State(state): State<Arc<AppState>>,
    Path(raw_id): Path<String>,
    params: Result<ApiQuery<LinkParams>, ApiError>,
) -> Result<Response, ApiError> {
    // A query that does not even decode (a parameter twice, say) is a tampered link too.
    let ApiQuery(params) = params.map_err(|_| ApiError::InvalidDownloadLink)?;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let id = Uuid::parse_str(&raw_id).map_err(|_| ApiError::InvalidDownloadLink)?;
    let expires: i64 = params
        .expires
        .as_deref()
        .and_then(|e| e.parse().ok())
        .ok_or(ApiError::InvalidDownloadLink)?;
    let signature = params.signature.as_deref().unwrap_or("");
    if !state.links.verify(id, expires, signature, now) {
        return Err(ApiError::InvalidDownloadLink);
    }
    let doc = state
        .repo
        .get_document(id)
        .await?
        .ok_or(ApiError::NotFound)?;
    document_response(&state, &doc, Disposition::Attachment).await
}

/// Whether a browser is to show a document (`inline`: the console's "open") or save it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    Attachment,
    Inline,
}

/// A document's bytes as an answer, rendering a recorded one first (the download link and the
/// console both answer with it).
pub async fn document_response(
    state: &AppState,
    doc: &store::DocumentRecord,
    disposition: Disposition,
) -> Result<Response, ApiError> {
    let mut res = if doc.size.is_none() {
        let bytes = render_recorded(state, doc).await?;
        let size = bytes.len() as u64;
        file_response(doc, size, Body::from(bytes))
    } else {
        let (size, stream) = state
            .documents
            .stream(&doc.storage_key)
            .await?
            .ok_or_else(|| {
                ApiError::Internal(anyhow::anyhow!(
                    "document {} has no file at {}",
                    doc.id,
                    doc.storage_key
                ))
            })?;
        file_response(doc, size, Body::from_stream(stream))
    };
    if disposition == Disposition::Inline
        && let Some(v) = res.headers().get(header::CONTENT_DISPOSITION)
        && let Ok(v) = v.to_str()
        && let Ok(inline) = HeaderValue::from_str(&v.replacen("attachment", "inline", 1))
    {
        res.headers_mut()
            .insert(header::CONTENT_DISPOSITION, inline);
    }
    Ok(res)
}

/// A document recorded before its file existed (the tax summary): rendered from the stored
/// case, written to the document store, and then its size and digest recorded, so later
/// downloads read the file. A concurrent first download renders the same bytes (rendering is
/// deterministic) and writes the same file; whichever records first wins.
async fn render_recorded(state: &AppState, doc: &store::DocumentRecord) -> Result<Bytes, ApiError> {
    if doc.doc_type != domain::case::DocumentType::TaxRegistrationSummary {
        return Err(ApiError::Internal(anyhow::anyhow!(
            "document {} ({}) has no file and cannot be rendered",
            doc.id,
            doc.doc_type.as_str()
        )));
    }
    let case = state
        .repo
        .get_tax_registration(doc.case_id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let at = doc.created_at;
    let bytes = tokio::task::spawn_blocking(move || crate::cases::tax::render_summary(&case, at))
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("summary rendering panicked: {e}")))??;
    let bytes = Bytes::from(bytes);
    let sha256 = Sha256::digest(&bytes);
    state.documents.put(&doc.storage_key, bytes.clone()).await?;
    state
        .repo
        .record_rendered(doc.id, bytes.len() as i64, &sha256)
        .await?;
    Ok(bytes)
}

fn file_response(doc: &store::DocumentRecord, size: u64, body: Body) -> Response {
    let mut res = Response::new(body);
    *res.status_mut() = StatusCode::OK;
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(&doc.content_type)
            .unwrap_or(HeaderValue::from_static("application/octet-stream")),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    h.insert(header::CONTENT_DISPOSITION, content_disposition(&doc.name));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disposition_keeps_utf8_names() {
        let v = content_disposition("GewA 1 - Jürgen Łukasz.pdf");
        let s = v.to_str().unwrap();
        assert!(
            s.starts_with("attachment; filename=\"GewA 1 - Jurgen _ukasz.pdf\""),
            "{s}"
        );
        assert!(
            s.contains("filename*=UTF-8''GewA%201%20-%20J%C3%BCrgen%20%C5%81ukasz.pdf"),
            "{s}"
        );
    }
}

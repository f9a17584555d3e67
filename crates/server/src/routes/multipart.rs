//! The creates that take files: a JSON body, or `multipart/form-data` with the payload in the
//! part `data` and each file in the part a field of the payload names (a trade owner's
//! `documents.gewa_1.file`, a tax registration's `attachments.*.file`). The parts are spooled
//! to disk as they arrive (docs/adr/0005-uploads-in-bounded-memory.md), a part the payload
//! (sent first) does not name is refused before it is read, and the payload is checked for
//! duplicate keys like every JSON body.

use axum::body::Bytes;
use axum::extract::Request;
use domain::Violations;
use serde_json::Value;

use crate::error::ApiError;
use crate::state::AppState;
use crate::uploads::{FileParts, PartRefused, Spooled};

/// The request as received: the payload, well-formed JSON without duplicate keys (400 and 422
/// otherwise), and the file parts, spooled.
pub struct Submission {
    pub value: Value,
    pub files: Vec<Spooled>,
}

/// A 422 for one file part refused while it arrived.
fn refused_part(field: String, code: &str, message: &str) -> ApiError {
    let mut errs = Violations::new();
    errs.push(field, code, message);
    ApiError::Validation(errs)
}

/// Reads a create's body as `spec` describes its files.
pub async fn receive(
    state: &AppState,
    req: Request,
    spec: &FileParts,
) -> Result<Submission, ApiError> {
    let (data, parsed, files) = receive_parts(state, req, spec).await?;
    let value: Value = match parsed {
        Some(value) => value,
        None => serde_json::from_slice(&data).map_err(|e| {
            ApiError::InvalidJson(format!(
                "the payload is not well-formed JSON (line {}, column {})",
                e.line(),
                e.column()
            ))
        })?,
    };
    crate::extract::refuse_duplicate_keys(&data)?;
    Ok(Submission { value, files })
}

/// The `data` bytes, the payload when it was parsed while the parts arrived (a multipart
/// `data` part sent first, to match the file parts against it), and the spooled files.
async fn receive_parts(
    state: &AppState,
    req: Request,
    spec: &FileParts,
) -> Result<(Bytes, Option<Value>, Vec<Spooled>), ApiError> {
    let max_body = state.config.max_body_bytes;
    if crate::extract::is_json(req.headers()) {
        // The route's limit is sized for uploads; a JSON body gets the JSON limit, enforced
        // while reading rather than after.
        let data = axum::body::to_bytes(req.into_body(), max_body)
            .await
            .map_err(|_| {
                ApiError::PayloadTooLarge(format!("the JSON body is larger than {max_body} bytes"))
            })?;
        return Ok((data, None, Vec::new()));
    }
    if !crate::extract::is_multipart(req.headers()) {
        return Err(ApiError::UnsupportedMediaType(format!(
            "send application/json, or multipart/form-data with a `data` part and {}",
            spec.what
        )));
    }
    let mut mp = crate::extract::multipart(req).await?;
    let mut data = None;
    let mut parsed: Option<Value> = None;
    // The parts the payload references, once it has arrived (`data` first is what clients
    // send; parts before it are spooled and judged once it is here).
    let mut refs: Option<Vec<(String, String)>> = None;
    let mut files: Vec<Spooled> = Vec::new();
    let mut parts = 0;
    while let Some(mut field) = mp
        .next_field()
        .await
        .map_err(crate::extract::multipart_error)?
    {
        parts += 1;
        if parts > spec.max_parts {
            return Err(ApiError::InvalidMultipart(format!(
                "at most {} parts: `data` and {}",
                spec.max_parts, spec.what
            )));
        }
        let name = field.name().unwrap_or("").to_string();
        if name.is_empty() {
            return Err(ApiError::InvalidMultipart("every part needs a name".into()));
        }
        if name == "data" {
            if data.is_some() {
                return Err(ApiError::InvalidMultipart(
                    "more than one `data` part".into(),
                ));
            }
            let part = crate::extract::read_part(&mut field, &name, max_body).await?;
            parsed = serde_json::from_slice::<Value>(&part).ok();
            refs = parsed.as_ref().map(spec.refs);
            data = Some(part);
            continue;
        }
        // Refused before a byte of it is read: a second part of a name, a part the payload
        // does not reference.
        if files.iter().any(|f| f.name == name) {
            return Err(ApiError::InvalidMultipart(format!(
                "more than one part named `{name}`"
            )));
        }
        let referenced = refs.as_ref().map(|r| {
            r.iter()
                .find(|(_, part)| *part == name)
                .map(|(f, _)| f.clone())
        });
        if referenced == Some(None) {
            return Err(refused_part(
                name,
                "unexpected_file",
                &format!(
                    "no field references this part in {} (refused unread)",
                    spec.named_by
                ),
            ));
        }
        match crate::uploads::spool(&mut field, &name, spec.max_file, &state.spool_dir).await {
            Ok(spooled) => files.push(spooled),
            Err(PartRefused::NotAPdf) => {
                return Err(refused_part(
                    referenced.flatten().unwrap_or(name),
                    "not_a_pdf",
                    &format!(
                        "must be {} as PDF: the file does not start with a PDF header",
                        spec.document
                    ),
                ));
            }
            Err(PartRefused::Error(e)) => return Err(e),
        }
    }
    let data = data.ok_or_else(|| {
        ApiError::InvalidMultipart("the multipart body has no `data` part with the JSON".into())
    })?;
    Ok((data, parsed, files))
}

//! Uploaded files of a multipart create, in bounded memory (docs/adr/0005-uploads-in-bounded-memory.md).
//!
//! A file part is never held whole in memory: it is written to a spool file in
//! `FILING_DATA_DIR/tmp` (beside the idempotency layer's spool) as it arrives, hashed (SHA-256)
//! and checked for a PDF header on the way, and refused before it is read when the payload, sent before it, does not reference it
//! (with an `Idempotency-Key` the idempotency layer has read the whole body to its end for the
//! fingerprint already, into a file of its own: still no memory, but the bytes were received).
//! Accepted files are checked as PDFs under a memory budget ([`PdfChecks`]) and copied into the
//! document store from their spool file. Spool files are deleted when the request ends (and at
//! start, for what a crash left).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use crate::error::ApiError;
use crate::extract::multipart_error;

/// An uploaded file part on disk.
#[derive(Debug)]
pub struct Spooled {
    /// The part's name.
    pub name: String,
    /// Deleted when dropped.
    pub path: tempfile::TempPath,
    pub len: u64,
    pub sha256: [u8; 32],
}

/// Why a part was refused while it was being received.
#[derive(Debug)]
pub enum PartRefused {
    /// Its first bytes are not a PDF header: refused without reading the rest.
    NotAPdf,
    /// Too large, unreadable multipart, or the spool failed.
    Error(ApiError),
}

impl From<ApiError> for PartRefused {
    fn from(e: ApiError) -> Self {
        PartRefused::Error(e)
    }
}

/// How long a spool file must have been left untouched before a start removes it. Instances
/// may share a data folder: a file another instance is writing or checking right now is young
/// (an upload at the minimum rate writes every second; a whole request is bounded by the
/// request timeout), a crash's leftover grows old.
const LEFTOVER_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The spool folder below the data directory (`tmp`, which the idempotency layer spools to as
/// well), created owner-only, emptied of the files earlier processes left (untouched for a day;
/// see [`LEFTOVER_AGE`]).
pub fn prepare_spool(data_dir: &Path) -> std::io::Result<PathBuf> {
    let dir = data_dir.join("tmp");
    std::fs::create_dir_all(&dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    }
    for entry in std::fs::read_dir(&dir)?.flatten() {
        let old = entry.metadata().ok().filter(|m| m.is_file()).and_then(|m| {
            let age = m.modified().ok()?.elapsed().ok()?;
            (age > LEFTOVER_AGE).then_some(())
        });
        if old.is_some() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(dir)
}

/// Receives the file part `field` into a new spool file in `dir`, at most `limit` bytes.
pub async fn spool(
    field: &mut axum::extract::multipart::Field<'_>,
    name: &str,
    limit: usize,
    dir: &Path,
) -> Result<Spooled, PartRefused> {
    // A full or failing disk is the instance's trouble, not the caller's: 503, as the
    // idempotency layer's spool answers.
    let spool_failed =
        |e: std::io::Error| ApiError::Unavailable(format!("cannot spool an upload: {e}"));
    let dir = dir.to_path_buf();
    let file = tokio::task::spawn_blocking(move || {
        tempfile::Builder::new().prefix("upload-").tempfile_in(&dir)
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("spool task: {e}")))?
    .map_err(spool_failed)?;
    let (file, path) = file.into_parts();
    let mut out = tokio::io::BufWriter::with_capacity(256 * 1024, tokio::fs::File::from_std(file));
    let mut hasher = Sha256::new();
    let mut len = 0u64;
    let mut head: Vec<u8> = Vec::with_capacity(5);
    while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
        len += chunk.len() as u64;
        if len > limit as u64 {
            return Err(ApiError::PayloadTooLarge(format!(
                "the part `{name}` is larger than {limit} bytes"
            ))
            .into());
        }
        if head.len() < 5 {
            let take = (5 - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
            if !b"%PDF-".starts_with(&head) {
                return Err(PartRefused::NotAPdf);
            }
        }
        hasher.update(&chunk);
        out.write_all(&chunk).await.map_err(spool_failed)?;
    }
    if head.len() < 5 {
        return Err(PartRefused::NotAPdf);
    }
    out.flush().await.map_err(spool_failed)?;
    Ok(Spooled {
        name: name.to_string(),
        path,
        len,
        sha256: hasher.finalize().into(),
    })
}

/// The memory budget of PDF checks: the parser reads a file whole, so at most this many
/// mebibytes of uploads are being checked at once on an instance; a larger file waits for the
/// ones before it. Small forms (a signed GewA 1 is about 100 KB) pass side by side.
pub const PDF_CHECK_BUDGET_MIB: u32 = 64;

/// See [`PDF_CHECK_BUDGET_MIB`].
#[derive(Clone)]
pub struct PdfChecks(Arc<tokio::sync::Semaphore>);

impl Default for PdfChecks {
    fn default() -> Self {
        PdfChecks(Arc::new(tokio::sync::Semaphore::new(
            PDF_CHECK_BUDGET_MIB as usize,
        )))
    }
}

impl PdfChecks {
    /// Checks the spooled file as a PDF within the budget; its page count, or why not.
    pub async fn check(&self, file: &Spooled) -> Result<usize, String> {
        let mib = file
            .len
            .div_ceil(1024 * 1024)
            .clamp(1, PDF_CHECK_BUDGET_MIB as u64) as u32;
        let _permit = self
            .0
            .clone()
            .acquire_many_owned(mib)
            .await
            .map_err(|_| "the file could not be checked".to_string())?;
        let path = file.path.to_path_buf();
        tokio::task::spawn_blocking(move || forms::check_pdf_file(&path))
            .await
            .map_err(|_| "the file could not be read as a PDF".to_string())?
            .map_err(|e| e.to_string())
    }
}

/// What a create takes as files.
pub struct FileParts {
    /// At most this many parts, `data` included.
    pub max_parts: usize,
    /// The largest file part, in bytes.
    pub max_file: usize,
    /// The payload's references to parts: `(field, part)`, e.g.
    /// `("owners[0].documents.gewa_1.file", "gewa1_erika")`, as sent (also when other rules
    /// fail), so that the parts can be matched while they arrive.
    pub refs: fn(&serde_json::Value) -> Vec<(String, String)>,
    /// What the parts are, for the messages: "one signed GewA 1 per owner".
    pub what: &'static str,
    /// Where the payload names its parts, for the messages: "documents.gewa_1.file".
    pub named_by: &'static str,
    /// What each file must be, for the messages: "a signed GewA 1".
    pub document: &'static str,
}

/// Every reference must have its part, every part must be referenced, and every part must be
/// a PDF (checked within the instance's budget, [`PdfChecks`]).
pub async fn check_files(
    pdf_checks: &PdfChecks,
    value: &serde_json::Value,
    files: &[Spooled],
    spec: &FileParts,
    errs: &mut domain::Violations,
) {
    let refs = (spec.refs)(value);
    for (field, name) in &refs {
        if !files.iter().any(|f| f.name == *name) {
            errs.push(
                field.clone(),
                "missing_file",
                format!("no multipart part named `{name}` was sent"),
            );
        }
    }
    for file in files {
        let Some((field, _)) = refs.iter().find(|(_, n)| *n == file.name) else {
            errs.push(
                file.name.clone(),
                "unexpected_file",
                format!("no field references this part in {}", spec.named_by),
            );
            continue;
        };
        if let Err(problem) = pdf_checks.check(file).await {
            errs.push(
                field.clone(),
                "not_a_pdf",
                format!("must be {} as PDF: {problem}", spec.document),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A start removes a crash's leftovers but not the spool files of another instance that
    /// shares the data folder and is receiving an upload right now.
    #[test]
    fn a_start_removes_only_old_spool_files() {
        let data = tempfile::tempdir().unwrap();
        let tmp = data.path().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let old = tmp.join("upload-old");
        let young = tmp.join("upload-young");
        std::fs::write(&old, b"left by a crash").unwrap();
        std::fs::write(&young, b"another instance's upload").unwrap();
        let long_ago =
            std::time::SystemTime::now() - LEFTOVER_AGE - std::time::Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        let dir = prepare_spool(data.path()).unwrap();
        assert_eq!(dir, tmp);
        assert!(!old.exists(), "the leftover stays");
        assert!(young.exists(), "another instance's spool file was removed");
    }
}

//! Checking that an uploaded file is a PDF: it must parse as one (header, cross-reference
//! table or stream, trailer, page tree), not merely start with `%PDF-`.

/// Why a file is not accepted as a PDF.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotAPdf(pub String);

/// Parses `bytes` as a PDF and returns its page count. Encrypted PDFs are accepted (a signed
/// form may be protected); files without pages are not.
pub fn check_pdf(bytes: &[u8]) -> Result<usize, NotAPdf> {
    if !bytes.starts_with(b"%PDF-") {
        return Err(NotAPdf("the file does not start with a PDF header".into()));
    }
    page_count(|| lopdf::Document::load_mem(bytes))
}

/// The page count of the document `load` parses. The parser is defensive, but a hostile file
/// must never take the process down: a panic is a file that could not be read.
fn page_count(
    load: impl FnOnce() -> Result<lopdf::Document, lopdf::Error> + std::panic::UnwindSafe,
) -> Result<usize, NotAPdf> {
    let parsed = std::panic::catch_unwind(load)
        .map_err(|_| NotAPdf("the file could not be read as a PDF".into()))?;
    let doc = parsed.map_err(|e| NotAPdf(format!("the file is not a readable PDF: {e}")))?;
    let pages = doc.get_pages().len();
    if pages == 0 {
        return Err(NotAPdf("the PDF has no pages".into()));
    }
    Ok(pages)
}

/// Like [`check_pdf`], for a file, in bounded memory: the file is read whole (as the parser
/// needs it) but the content of every stream other than object and cross-reference streams is
/// dropped as soon as it is parsed, so a 50 MB scan costs about 50 MB while it is checked, not
/// twice that. The caller bounds how many run at once (the server's check budget).
pub fn check_pdf_file(path: &std::path::Path) -> Result<usize, NotAPdf> {
    use std::io::Read;
    let mut head = [0u8; 5];
    let mut file = std::fs::File::open(path)
        .map_err(|e| NotAPdf(format!("the file could not be read: {e}")))?;
    if file.read_exact(&mut head).is_err() || &head != b"%PDF-" {
        return Err(NotAPdf("the file does not start with a PDF header".into()));
    }
    drop(file);
    page_count(|| lopdf::Document::load_filtered(path, drop_content))
}

/// Keeps every object but shrinks the content of streams the page tree does not need (images,
/// page contents, fonts) to one byte; object and cross-reference streams keep theirs. (lopdf
/// keeps the object the filter changed in place; it uses the returned copy only for objects
/// inside object streams, which are never streams. An emptied stream would be read again, as
/// one whose length was not known yet: hence one byte, not none.)
fn drop_content(
    id: lopdf::ObjectId,
    object: &mut lopdf::Object,
) -> Option<(lopdf::ObjectId, lopdf::Object)> {
    if let lopdf::Object::Stream(stream) = object {
        let kind = stream.dict.get(b"Type").and_then(|t| t.as_name()).ok();
        if !matches!(kind, Some(b"ObjStm" | b"XRef")) && stream.content.len() > 1 {
            stream.content = vec![0];
        }
    }
    Some((id, object.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_our_own_pdfs_and_refuses_the_rest() {
        let reg: domain::trade::TradeRegistration = serde_json::from_str(include_str!(
            "../../../examples/production/trade-registration-self.json"
        ))
        .unwrap();
        let ctx = crate::Gewa1Context {
            trade_office_name: None,
            municipality_key: None,
            main_office: None,
            created_on: time::macros::date!(2025 - 03 - 20),
            timestamp: time::macros::datetime!(2025-03-20 0:00 UTC),
        };
        let pdf = crate::render_gewa1(&reg, 0, &ctx).unwrap();
        assert_eq!(check_pdf(&pdf), Ok(2));
        assert!(check_pdf(b"").is_err());
        assert!(check_pdf(b"hello world").is_err());
        assert!(check_pdf(b"%PDF-1.7\n%%EOF\n").is_err());
        assert!(check_pdf(&pdf[..pdf.len() / 2]).is_err());
        let mut garbage = b"%PDF-1.4\n".to_vec();
        garbage.extend((0..5000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8));
        assert!(check_pdf(&garbage).is_err());
        // The file check agrees with the in-memory one on each.
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes, pages) in [
            ("form", pdf.clone(), Some(2)),
            ("empty", Vec::new(), None),
            ("text", b"hello world".to_vec(), None),
            ("bare", b"%PDF-1.7\n%%EOF\n".to_vec(), None),
            ("half", pdf[..pdf.len() / 2].to_vec(), None),
            ("garbage", garbage.clone(), None),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            assert_eq!(check_pdf_file(&path).ok(), pages, "{name}");
        }
    }
}

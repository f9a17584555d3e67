//! Validation of ElsterXML documents against the bundled XSDs with libxml2.
//!
//! The envelope schema imports the `FsE_KapG` schema by a relative `schemaLocation`, which is
//! what `xmllint --schema crates/elster/schemas/elster-v11-fse-kapg.xsd` follows. At run time
//! nothing is read from the file system: both schemas are compiled into the binary, and
//! libxml2 would resolve that import against the working directory. So the run-time copy of
//! the envelope schema drops the import and accepts any element of the `FsE_KapG` namespace
//! in `Nutzdaten` without looking into it (`processContents="skip"`), and the `FsE_KapG`
//! element is then validated on its own against the `FsE_KapG` schema. Together that is the
//! same check as xmllint's.

use std::cell::RefCell;

use libxml::error::StructuredError;
use libxml::parser::{Parser, ParserOptions};
use libxml::schemas::{SchemaParserContext, SchemaValidationContext};

use crate::write::FSE_KAPG_NS;

/// The ElsterXML v11 envelope schema (imports [`KAPG_XSD`] as `fse-kapg-v202401.xsd`).
pub const ENVELOPE_XSD: &str = include_str!("../schemas/elster-v11-fse-kapg.xsd");
/// The `FsE_KapG` schema, namespace `http://finkonsens.de/elster/elsterfse/kapg/v202401`.
pub const KAPG_XSD: &str = include_str!("../schemas/fse-kapg-v202401.xsd");

const IMPORT: &str = r#"<xs:import namespace="http://finkonsens.de/elster/elsterfse/kapg/v202401" schemaLocation="fse-kapg-v202401.xsd"/>"#;
const KAPG_REF: &str = r#"<xs:element ref="kapg:FsE_KapG"/>"#;
const KAPG_SKIP: &str = r#"<xs:any namespace="http://finkonsens.de/elster/elsterfse/kapg/v202401" processContents="skip"/>"#;

/// The envelope schema without its file import (see the module documentation).
pub(crate) fn standalone_envelope_xsd() -> Result<String, String> {
    if ENVELOPE_XSD.matches(IMPORT).count() != 1 || ENVELOPE_XSD.matches(KAPG_REF).count() != 1 {
        return Err("the envelope schema's import of FsE_KapG is not in the expected form".into());
    }
    Ok(ENVELOPE_XSD
        .replace(IMPORT, "")
        .replace(KAPG_REF, KAPG_SKIP))
}

struct Validators {
    envelope: SchemaValidationContext,
    kapg: SchemaValidationContext,
}

impl Validators {
    fn new() -> Result<Validators, Vec<String>> {
        let envelope_xsd = standalone_envelope_xsd().map_err(|e| vec![e])?;
        let compile = |xsd: &str, what: &str| {
            let mut parser = SchemaParserContext::from_buffer(xsd);
            SchemaValidationContext::from_parser(&mut parser).map_err(|errs| {
                errs.iter()
                    .map(|e| format!("bundled {what} schema: {}", message(e)))
                    .collect::<Vec<_>>()
            })
        };
        Ok(Validators {
            envelope: compile(&envelope_xsd, "envelope")?,
            kapg: compile(KAPG_XSD, "FsE_KapG")?,
        })
    }
}

thread_local! {
    // Compiled once per thread: libxml2's schema objects must not cross threads, and a
    // blocking-pool thread keeps its copy for the next document.
    static VALIDATORS: Result<RefCell<Validators>, Vec<String>> =
        Validators::new().map(RefCell::new);
}

/// Validates an ElsterXML document against the bundled envelope and `FsE_KapG` schemas.
///
/// `Err` holds libxml2's messages (with line numbers): the document is not well-formed, or it
/// violates a schema. Synchronous and CPU-bound (under a millisecond for a typical document);
/// from async code call it inside `tokio::task::spawn_blocking`. The schemas are compiled on
/// the first call in each thread.
pub fn validate(xml: &[u8]) -> Result<(), Vec<String>> {
    let options = ParserOptions {
        recover: false,
        no_net: true,
        no_error: true,
        no_warning: true,
        ..ParserOptions::default()
    };
    let doc = match Parser::default().parse_string_with_diagnostics(xml, options) {
        Ok((doc, _warnings)) => doc,
        Err(libxml::parser::XmlParseFailure::ParseFailed(errs)) if !errs.is_empty() => {
            return Err(errs
                .iter()
                .map(|e| format!("not well-formed: {}", message(e)))
                .collect());
        }
        Err(e) => return Err(vec![format!("not well-formed: {e:?}")]),
    };
    VALIDATORS.with(|v| {
        let v = v.as_ref().map_err(Clone::clone)?;
        let mut v = v.borrow_mut();
        v.envelope
            .validate_document(&doc)
            .map_err(|errs| errs.iter().map(message).collect::<Vec<_>>())?;
        let payload = doc
            .get_root_element()
            .into_iter()
            .flat_map(|root| root.get_child_elements())
            .filter(|n| n.get_name() == "DatenTeil")
            .flat_map(|n| n.get_child_elements())
            .filter(|n| n.get_name() == "Nutzdatenblock")
            .flat_map(|n| n.get_child_elements())
            .filter(|n| n.get_name() == "Nutzdaten")
            .flat_map(|n| n.get_child_elements())
            .collect::<Vec<_>>();
        // The envelope schema admits exactly one element of the FsE_KapG namespace here.
        let [kapg] = payload.as_slice() else {
            return Err(vec![format!(
                "expected one payload element in Nutzdaten, found {}",
                payload.len()
            )]);
        };
        if kapg.get_namespace().map(|ns| ns.get_href()).as_deref() != Some(FSE_KAPG_NS) {
            return Err(vec![format!(
                "the payload element is not in namespace {FSE_KAPG_NS}"
            )]);
        }
        v.kapg
            .validate_node(kapg)
            .map_err(|errs| errs.iter().map(message).collect())
    })
}

fn message(e: &StructuredError) -> String {
    let text = e.message.as_deref().unwrap_or("(no message)").trim();
    match e.line {
        Some(line) if line > 0 => format!("line {line}: {text}"),
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_time_envelope_schema_refers_to_no_file() {
        let xsd = standalone_envelope_xsd().unwrap();
        assert!(ENVELOPE_XSD.contains("schemaLocation=\"fse-kapg-v202401.xsd\""));
        assert!(!xsd.contains("schemaLocation"));
        assert!(!xsd.contains("xs:include"));
        assert!(!xsd.contains("kapg:FsE_KapG"));
        assert!(xsd.contains(KAPG_SKIP));
        assert!(!KAPG_XSD.contains("schemaLocation"));
    }
}

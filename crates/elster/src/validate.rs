//! Validation of ElsterXML documents against the bundled XSDs with libxml2.
//!
//! There are three pairs of schemas: the envelope for DatenArt `KapG` with the `FsE_KapG` schema
//! (UG, GmbH), the envelope for DatenArt `PersG` with the `FsE_PersG` schema (GbR, eGbR), and
//! the envelope for DatenArt `EUn` with the `FsE_EUn` schema (a sole proprietor).
//! A document is checked against the pair its payload's namespace names (or, when that is
//! neither, its `DatenArt`), so a document of one kind can never pass the other's schemas.
//!
//! Each envelope schema imports its payload schema by a relative `schemaLocation`, which is
//! what `xmllint --schema crates/elster/schemas/elster-v11-fse-kapg.xsd` follows. At run time
//! nothing is read from the file system: the schemas are compiled into the binary, and libxml2
//! would resolve that import against the working directory. So the run-time copy of an
//! envelope schema drops the import and accepts any element of the payload namespace in
//! `Nutzdaten` without looking into it (`processContents="skip"`), and the payload element is
//! then validated on its own against its schema. Together that is the same check as xmllint's.

use std::cell::RefCell;

use libxml::error::StructuredError;
use libxml::parser::{Parser, ParserOptions};
use libxml::schemas::{SchemaParserContext, SchemaValidationContext};
use libxml::tree::Document;

use crate::write::{ANHAENGE_NS, FSE_EUN_NS, FSE_KAPG_NS, FSE_PERSG_NS};

/// The ElsterXML v11 envelope schema for DatenArt KapG (imports [`KAPG_XSD`] as
/// `fse-kapg-v202401.xsd`).
pub const ENVELOPE_XSD: &str = include_str!("../schemas/elster-v11-fse-kapg.xsd");
/// The `FsE_KapG` schema, namespace `http://finkonsens.de/elster/elsterfse/kapg/v202401`.
pub const KAPG_XSD: &str = include_str!("../schemas/fse-kapg-v202401.xsd");
/// The ElsterXML v11 envelope schema for DatenArt PersG (imports [`PERSG_XSD`] as
/// `fse-persg-v202401.xsd`).
pub const PERSG_ENVELOPE_XSD: &str = include_str!("../schemas/elster-v11-fse-persg.xsd");
/// The `FsE_PersG` schema, namespace `http://finkonsens.de/elster/elsterfse/persg/v202401`.
pub const PERSG_XSD: &str = include_str!("../schemas/fse-persg-v202401.xsd");
/// The ElsterXML v11 envelope schema for DatenArt EUn (imports [`EUN_XSD`] as
/// `fse-eun-v202401.xsd`).
pub const EUN_ENVELOPE_XSD: &str = include_str!("../schemas/elster-v11-fse-eun.xsd");
/// The `FsE_EUn` schema, namespace `http://finkonsens.de/elster/elsterfse/eun/v202401`.
pub const EUN_XSD: &str = include_str!("../schemas/fse-eun-v202401.xsd");
/// The `Anhaenge` schema (the documents filed with a questionnaire), namespace
/// [`ANHAENGE_NS`], imported by both envelopes as `anhaenge-simple-v3.xsd`.
pub const ANHAENGE_XSD: &str = include_str!("../schemas/anhaenge-simple-v3.xsd");
/// How the envelopes import and refer to the attachments block.
const ANHAENGE_IMPORT: &str = r#"<xs:import namespace="http://finkonsens.de/elster/anhaenge/simple/v3" schemaLocation="anhaenge-simple-v3.xsd"/>"#;
const ANHAENGE_REFERENCE: &str = r#"<xs:element ref="anh:Anhaenge" minOccurs="0"/>"#;
const ANHAENGE_SKIP: &str = r#"<xs:any namespace="http://finkonsens.de/elster/anhaenge/simple/v3" processContents="skip" minOccurs="0"/>"#;

/// One kind of questionnaire: its envelope and payload schemas and how the envelope refers to
/// the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kind {
    pub name: &'static str,
    pub daten_art: &'static str,
    pub namespace: &'static str,
    pub envelope_xsd: &'static str,
    pub payload_xsd: &'static str,
    /// The payload schema's file name in the envelope's `xs:import`.
    pub file: &'static str,
    /// The envelope's reference to the payload root, e.g. `kapg:FsE_KapG`.
    pub reference: &'static str,
}

pub(crate) const KAPG: Kind = Kind {
    name: "FsE_KapG",
    daten_art: "KapG",
    namespace: FSE_KAPG_NS,
    envelope_xsd: ENVELOPE_XSD,
    payload_xsd: KAPG_XSD,
    file: "fse-kapg-v202401.xsd",
    reference: "kapg:FsE_KapG",
};

pub(crate) const PERSG: Kind = Kind {
    name: "FsE_PersG",
    daten_art: "PersG",
    namespace: FSE_PERSG_NS,
    envelope_xsd: PERSG_ENVELOPE_XSD,
    payload_xsd: PERSG_XSD,
    file: "fse-persg-v202401.xsd",
    reference: "persg:FsE_PersG",
};

pub(crate) const EUN: Kind = Kind {
    name: "FsE_EUn",
    daten_art: "EUn",
    namespace: FSE_EUN_NS,
    envelope_xsd: EUN_ENVELOPE_XSD,
    payload_xsd: EUN_XSD,
    file: "fse-eun-v202401.xsd",
    reference: "eun:FsE_EUn",
};

const KINDS: [Kind; 3] = [KAPG, PERSG, EUN];

impl Kind {
    fn import(&self) -> String {
        format!(
            r#"<xs:import namespace="{}" schemaLocation="{}"/>"#,
            self.namespace, self.file
        )
    }

    fn reference_element(&self) -> String {
        format!(r#"<xs:element ref="{}"/>"#, self.reference)
    }

    pub(crate) fn skip(&self) -> String {
        format!(
            r#"<xs:any namespace="{}" processContents="skip"/>"#,
            self.namespace
        )
    }

    /// The envelope schema without its file imports (see the module documentation): the
    /// payload's and the attachments'.
    pub(crate) fn standalone_envelope_xsd(&self) -> Result<String, String> {
        let (import, reference) = (self.import(), self.reference_element());
        let once = |text: &str| self.envelope_xsd.matches(text).count() == 1;
        if !(once(&import) && once(&reference) && once(ANHAENGE_IMPORT) && once(ANHAENGE_REFERENCE))
        {
            return Err(format!(
                "the envelope schema's imports of {} are not in the expected form",
                self.name
            ));
        }
        Ok(self
            .envelope_xsd
            .replace(&import, "")
            .replace(&reference, &self.skip())
            .replace(ANHAENGE_IMPORT, "")
            .replace(ANHAENGE_REFERENCE, ANHAENGE_SKIP))
    }
}

struct Pair {
    envelope: SchemaValidationContext,
    payload: SchemaValidationContext,
    attachments: SchemaValidationContext,
}

fn compile(xsd: &str, what: &str) -> Result<SchemaValidationContext, Vec<String>> {
    let mut parser = SchemaParserContext::from_buffer(xsd);
    SchemaValidationContext::from_parser(&mut parser).map_err(|errs| {
        errs.iter()
            .map(|e| format!("bundled {what} schema: {}", message(e)))
            .collect::<Vec<_>>()
    })
}

impl Pair {
    fn new(kind: &Kind) -> Result<Pair, Vec<String>> {
        let envelope_xsd = kind.standalone_envelope_xsd().map_err(|e| vec![e])?;
        Ok(Pair {
            envelope: compile(&envelope_xsd, &format!("{} envelope", kind.daten_art))?,
            payload: compile(kind.payload_xsd, kind.name)?,
            attachments: compile(ANHAENGE_XSD, "Anhaenge")?,
        })
    }
}

type Compiled = Result<RefCell<Pair>, Vec<String>>;

thread_local! {
    // Compiled once per thread and kind, on first use: libxml2's schema objects must not cross
    // threads, and a blocking-pool thread keeps its copies for the next document.
    static KAPG_PAIR: Compiled = Pair::new(&KAPG).map(RefCell::new);
    static PERSG_PAIR: Compiled = Pair::new(&PERSG).map(RefCell::new);
    static EUN_PAIR: Compiled = Pair::new(&EUN).map(RefCell::new);
}

/// The kind a document claims: by its payload's namespace, else by its `DatenArt` (so a wrong
/// namespace is reported by that kind's envelope schema), else KapG.
fn kind_of(doc: &Document) -> Kind {
    let root = doc.get_root_element();
    let children = |n: Option<libxml::tree::Node>, name: &str| -> Vec<libxml::tree::Node> {
        n.into_iter()
            .flat_map(|n| n.get_child_elements())
            .filter(|c| c.get_name() == name)
            .collect()
    };
    let payload_ns: Vec<String> = children(root.clone(), "DatenTeil")
        .into_iter()
        .flat_map(|n| children(Some(n), "Nutzdatenblock"))
        .flat_map(|n| children(Some(n), "Nutzdaten"))
        .flat_map(|n| n.get_child_elements())
        .filter_map(|n| n.get_namespace().map(|ns| ns.get_href()))
        .collect();
    if let Some(kind) = KINDS
        .iter()
        .find(|k| payload_ns.iter().any(|ns| ns == k.namespace))
    {
        return *kind;
    }
    let daten_art: Vec<String> = children(root, "TransferHeader")
        .into_iter()
        .flat_map(|n| children(Some(n), "DatenArt"))
        .map(|n| n.get_content().trim().to_owned())
        .collect();
    KINDS
        .iter()
        .find(|k| daten_art.iter().any(|d| d == k.daten_art))
        .copied()
        .unwrap_or(KAPG)
}

/// Validates an ElsterXML document against the bundled schemas of its kind: the KapG envelope
/// and `FsE_KapG`, or the PersG envelope and `FsE_PersG`.
///
/// `Err` holds libxml2's messages (with line numbers): the document is not well-formed, or it
/// violates a schema. Synchronous and CPU-bound (under a millisecond for a typical document);
/// from async code call it inside `tokio::task::spawn_blocking`. A kind's schemas are compiled
/// on its first document in each thread.
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
    let kind = kind_of(&doc);
    let run = |pair: &Compiled| validate_as(&kind, pair, &doc);
    if kind == PERSG {
        PERSG_PAIR.with(run)
    } else if kind == EUN {
        EUN_PAIR.with(run)
    } else {
        KAPG_PAIR.with(run)
    }
}

fn validate_as(kind: &Kind, pair: &Compiled, doc: &Document) -> Result<(), Vec<String>> {
    let pair = pair.as_ref().map_err(Clone::clone)?;
    let mut pair = pair.borrow_mut();
    pair.envelope
        .validate_document(doc)
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
    // The envelope schema admits one element of the payload namespace here, and after it
    // at most one of the attachments' namespace.
    let namespace = |n: &libxml::tree::Node| n.get_namespace().map(|ns| ns.get_href());
    let (element, attachments) = match payload.as_slice() {
        [element] => (element, None),
        [element, attachments] => (element, Some(attachments)),
        _ => {
            return Err(vec![format!(
                "expected the payload element in Nutzdaten and at most its attachments, found {} elements",
                payload.len()
            )]);
        }
    };
    if namespace(element).as_deref() != Some(kind.namespace) {
        return Err(vec![format!(
            "the payload element is not in namespace {}",
            kind.namespace
        )]);
    }
    pair.payload
        .validate_node(element)
        .map_err(|errs| errs.iter().map(message).collect::<Vec<_>>())?;
    if let Some(a) = attachments {
        if namespace(a).as_deref() != Some(ANHAENGE_NS) {
            return Err(vec![format!(
                "the element after the payload is not the attachments block of namespace {ANHAENGE_NS}"
            )]);
        }
        pair.attachments
            .validate_node(a)
            .map_err(|errs| errs.iter().map(message).collect::<Vec<_>>())?;
    }
    Ok(())
}

fn message(e: &StructuredError) -> String {
    let text = e.message.as_deref().unwrap_or("(no message)").trim();
    match e.line {
        Some(line) if line > 0 => format!("line {line}: {text}"),
        _ => text.to_owned(),
    }
}

/// [`write`](crate::write), then [`validate`]: the bytes only when they pass the bundled schemas.
///
/// A schema violation of a document this crate wrote is a bug of this crate (or of the request
/// validation before it), never a fault of the caller.
pub fn write_validated(
    reg: &domain::tax::TaxRegistration,
    ctx: &crate::XmlContext,
) -> Result<Vec<u8>, crate::XmlError> {
    write_validated_with(reg, ctx, &[])
}

/// [`write_with`](crate::write_with), then [`validate`]: the document with its attachments, only when it passes
/// the bundled schemas.
pub fn write_validated_with(
    reg: &domain::tax::TaxRegistration,
    ctx: &crate::XmlContext,
    attachments: &[crate::Attachment],
) -> Result<Vec<u8>, crate::XmlError> {
    passed(crate::write_with(reg, ctx, attachments)?)
}

/// [`write_persg`](crate::write_persg), then [`validate`]: the bytes only when they pass the bundled schemas (a
/// violation is a bug, as for [`write_validated`]).
pub fn write_persg_validated(
    reg: &domain::gbr::GbrTaxRegistration,
    ctx: &crate::XmlContext,
) -> Result<Vec<u8>, crate::XmlError> {
    passed(crate::write_persg(reg, ctx)?)
}

/// A document this crate wrote, when it passes the bundled schemas (every family's
/// `write_*_validated` ends here).
pub(crate) fn passed(xml: Vec<u8>) -> Result<Vec<u8>, crate::XmlError> {
    validate(&xml).map_err(crate::XmlError::SchemaViolations)?;
    Ok(xml)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_time_envelope_schemas_refer_to_no_file() {
        for kind in KINDS {
            let xsd = kind.standalone_envelope_xsd().unwrap();
            assert!(
                kind.envelope_xsd
                    .contains(&format!("schemaLocation=\"{}\"", kind.file))
            );
            assert!(!xsd.contains("schemaLocation"), "{}", kind.name);
            assert!(!xsd.contains("xs:include"), "{}", kind.name);
            assert!(!xsd.contains(kind.reference), "{}", kind.name);
            assert!(xsd.contains(&kind.skip()), "{}", kind.name);
            assert!(
                !kind.payload_xsd.contains("schemaLocation"),
                "{}",
                kind.name
            );
        }
    }

    /// The PersG envelope is the KapG envelope with another DatenArt and payload: a change to
    /// one must be made to the other.
    #[test]
    fn the_envelopes_differ_only_in_their_payload() {
        let strip_comments = |s: &str| {
            let mut out = String::new();
            let mut rest = s;
            while let Some(i) = rest.find("<!--") {
                out.push_str(&rest[..i]);
                rest = &rest[rest[i..]
                    .find("-->")
                    .map(|j| i + j + 3)
                    .unwrap_or(rest.len())..];
            }
            out.push_str(rest);
            out
        };
        let kapg = strip_comments(ENVELOPE_XSD)
            .replace(FSE_KAPG_NS, FSE_PERSG_NS)
            .replace("xmlns:kapg=", "xmlns:persg=")
            .replace(KAPG.file, PERSG.file)
            .replace(KAPG.reference, PERSG.reference)
            .replace(r#"value="KapG""#, r#"value="PersG""#);
        assert_eq!(kapg, strip_comments(PERSG_ENVELOPE_XSD));
    }
}

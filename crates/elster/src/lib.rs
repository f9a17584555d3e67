//! ElsterXML documents for the tax registration questionnaire (Fragebogen zur steuerlichen
//! Erfassung), the XSDs they are validated against, and the validation itself.
//!
//! [`write`] renders a validated [`domain::tax::TaxRegistration`] (UG, GmbH) as an ElsterXML v11
//! envelope around `FsE_KapG/KapG`, [`write_persg`] a [`domain::gbr::GbrTaxRegistration`] (GbR,
//! eGbR) around `FsE_PersG/PersG`; [`validate`] checks either document against the bundled schemas
//! with libxml2; [`write_validated`] and [`write_persg_validated`] do both. The mapping of
//! every field is documented in `docs/elster.md`.

mod manual;
mod notes;
mod validate;
mod write;

pub use domain::street::{HouseNumber, split_street};
pub use manual::{ManualEntry, ManualReason, address_line, not_in_xml, persg_not_in_xml};
pub use notes::{Transliteration, transliterations};
pub use validate::{ANHAENGE_XSD, ENVELOPE_XSD, KAPG_XSD, PERSG_ENVELOPE_XSD, PERSG_XSD, validate};
pub use write::{
    ANHAENGE_NS, Attachment, ELSTER_NS, FSE_KAPG_NS, FSE_KAPG_VERSION, FSE_PERSG_NS,
    FSE_PERSG_VERSION, TEST_HERSTELLER_ID, TESTMERKER_SANDBOX, XmlContext, XmlError, write,
    write_persg, write_with,
};

/// [`write`], then [`validate`]: the bytes only when they pass the bundled schemas.
///
/// A schema violation of a document this crate wrote is a bug of this crate (or of the request
/// validation before it), never a fault of the caller.
pub fn write_validated(
    reg: &domain::tax::TaxRegistration,
    ctx: &XmlContext,
) -> Result<Vec<u8>, XmlError> {
    let xml = write(reg, ctx)?;
    validate(&xml).map_err(XmlError::SchemaViolations)?;
    Ok(xml)
}

/// [`write_with`], then [`validate`]: the document with its attachments, only when it passes
/// the bundled schemas.
pub fn write_validated_with(
    reg: &domain::tax::TaxRegistration,
    ctx: &XmlContext,
    attachments: &[Attachment],
) -> Result<Vec<u8>, XmlError> {
    let xml = write_with(reg, ctx, attachments)?;
    validate(&xml).map_err(XmlError::SchemaViolations)?;
    Ok(xml)
}

/// [`write_persg`], then [`validate`]: the bytes only when they pass the bundled schemas (a
/// violation is a bug, as for [`write_validated`]).
pub fn write_persg_validated(
    reg: &domain::gbr::GbrTaxRegistration,
    ctx: &XmlContext,
) -> Result<Vec<u8>, XmlError> {
    let xml = write_persg(reg, ctx)?;
    validate(&xml).map_err(XmlError::SchemaViolations)?;
    Ok(xml)
}

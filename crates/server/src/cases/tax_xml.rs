//! The ELSTER XML of a tax registration: whether the case holds it and why not yet (writing it
//! later for the cases that wait is [`crate::cases::pending_xml`]).
//!
//! A create writes the XML when the tax office is known and the document may carry a
//! manufacturer id ([`crate::config::ElsterConfig::hersteller_id_for`]): always in the sandbox
//! (ELSTER's test id beside the `Testmerker`), in production only with the operator's own id.
//! Otherwise the case is validated and stored without it. An operator assigning the office
//! writes it then; a production case that waits for the manufacturer id gets it when the
//! service starts with one configured ([`crate::cases::pending_xml`]), through the same path as an
//! office assignment, announced as `documents.updated`.

use domain::company::Environment;
use serde::Serialize;
use store::TaxRegistrationRecord;
use utoipa::ToSchema;

use crate::config::ElsterConfig;

pub(crate) const DOC_XML: domain::case::DocumentType =
    domain::case::DocumentType::TaxRegistrationXml;

/// Whether the case holds its ELSTER XML.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum XmlStatus {
    /// The XML is among the case's documents.
    Written,
    /// Not yet: `pending_reason` says why.
    Pending,
}

/// Why a case has no XML yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PendingReason {
    /// No tax office could be determined; an operator assigns one (see
    /// `tax_office_determination`), and the XML is written then.
    TaxOfficeUnknown,
    /// A production XML needs the manufacturer id ELSTER assigned the service's operator
    /// (`FILING_ELSTER_HERSTELLER_ID`), which is not configured; it is written when the service
    /// starts with one.
    HerstellerIdMissing,
    /// The id is configured now; the XML is written in the background after the service's
    /// start (or, should that fail, when an operator assigns the office again).
    Queued,
}

/// The XML's state of `case` under `config`.
pub fn state(
    case: &TaxRegistrationRecord,
    config: &ElsterConfig,
) -> (XmlStatus, Option<PendingReason>) {
    if case.documents.iter().any(|d| d.doc_type == DOC_XML) {
        return (XmlStatus::Written, None);
    }
    let reason = if case.tax_office_number.is_none() {
        PendingReason::TaxOfficeUnknown
    } else if config
        .hersteller_id_for(case.environment == Environment::Sandbox)
        .is_none()
    {
        PendingReason::HerstellerIdMissing
    } else {
        PendingReason::Queued
    };
    (XmlStatus::Pending, Some(reason))
}

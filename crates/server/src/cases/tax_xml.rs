//! The ELSTER XML of a tax registration: whether the case holds it, why not yet, and writing
//! it later for the cases that wait.
//!
//! A create writes the XML when the tax office is known and the document may carry a
//! manufacturer id ([`crate::config::ElsterConfig::hersteller_id_for`]): always in the sandbox
//! (ELSTER's test id beside the `Testmerker`), in production only with the operator's own id.
//! Otherwise the case is validated and stored without it. An operator assigning the office
//! writes it then; a production case that waits for the manufacturer id gets it when the
//! service starts with one configured ([`spawn_pending_writer`]), through the same path as an
//! office assignment, announced as `documents.updated`.

use std::sync::Arc;

use domain::company::Environment;
use serde::Serialize;
use store::TaxRegistrationRecord;
use utoipa::ToSchema;

use crate::config::ElsterConfig;
use crate::state::AppState;

const DOC_XML: domain::case::DocumentType = domain::case::DocumentType::TaxRegistrationXml;

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

/// Production cases in `validated` or `rejected` with an office but without their XML (found
/// by one filtered query per page), written one after the other once a manufacturer id is
/// configured: through [`crate::cases::tax::assign_office`] with the case's own office,
/// so each is XSD-validated, stored with its summary in one write and announced as
/// `documents.updated`. Several instances may run it at once: the assignment writes nothing for
/// a case that holds the XML already. A case whose write fails stays `queued` until the next
/// start, or until an operator assigns its office again. Returns the number of cases written,
/// or `None` without a manufacturer id.
pub async fn write_pending(state: &Arc<AppState>) -> anyhow::Result<Option<u64>> {
    if state.config.elster.hersteller_id.is_none() {
        return Ok(None);
    }
    let mut after = None;
    let mut written = 0u64;
    loop {
        let page = state
            .repo
            .tax_registrations_missing_document(Environment::Production, DOC_XML, after, 500)
            .await?;
        let Some(last) = page.last() else { break };
        after = Some(*last);
        for id in page {
            let Some(case) = state.repo.get_tax_registration(id).await? else {
                continue;
            };
            let Some(office) = case.tax_office_number.clone() else {
                continue;
            };
            match crate::cases::tax::assign_office(state, &case, &office, None).await {
                Ok(()) => {
                    written += 1;
                    tracing::info!(tax_registration_id = %case.id, office, "ELSTER XML written for a case that waited for the manufacturer id");
                }
                // Moved on meanwhile (submitted by hand, say): nothing to write.
                Err(crate::error::ApiError::Conflict { .. }) => {}
                Err(e) => {
                    tracing::error!(tax_registration_id = %case.id, error = %e, "writing a pending ELSTER XML failed; it is tried again at the next start, or when an operator assigns the office again");
                }
            }
        }
    }
    Ok(Some(written))
}

/// At start: a warning when production XML cannot be written, else [`write_pending`] in the
/// background.
pub fn spawn_pending_writer(state: Arc<AppState>) -> Option<tokio::task::JoinHandle<()>> {
    if state.config.elster.hersteller_id.is_none() {
        tracing::warn!(
            "FILING_ELSTER_HERSTELLER_ID is not set: production tax registrations are validated and stored without their ELSTER XML (elster_xml.pending_reason hersteller_id_missing) until the service starts with the manufacturer id ELSTER assigned"
        );
        return None;
    }
    Some(tokio::spawn(async move {
        match write_pending(&state).await {
            Ok(Some(n)) if n > 0 => {
                tracing::info!(
                    cases = n,
                    "wrote the ELSTER XML of the production cases that waited for the manufacturer id"
                )
            }
            Ok(_) => {}
            Err(e) => {
                tracing::error!(error = %e, "looking for tax cases without their ELSTER XML failed")
            }
        }
    }))
}

//! Writing the ELSTER XML of the production tax registrations that waited for the manufacturer
//! id, once the service starts with one ([`spawn_pending_writer`]); what waits and why is
//! [`crate::cases::tax_xml`].

use std::sync::Arc;

use domain::company::Environment;

use crate::cases::tax_xml::DOC_XML;
use crate::state::AppState;

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

//! A UG's or GmbH's tax registration (`POST /v1/tax-registration`): the FsE_KapG with its
//! attachments.

use domain::offices::{LegalFamily, TaxOfficeLookup};
use domain::tax::TaxRegistration;
use serde_json::Value;
use time::Date;

use super::{ParsedTaxRequest, TaxFamily};
use crate::error::ApiError;
use crate::state::AppState;
use crate::uploads::Spooled;

/// A corporation's tax create's files: its attachments, each in the part its
/// `attachments.<kind>.file` names; `max_file` is set where the body is read (the smaller of
/// [`domain::tax::MAX_ATTACHMENT_BYTES`] and `FILING_MAX_UPLOAD_BYTES`).
pub const FILES: crate::uploads::FileParts = crate::uploads::FileParts {
    max_parts: 1 + domain::tax::Attachments::FIELDS.len(),
    max_file: domain::tax::MAX_ATTACHMENT_BYTES,
    refs: referenced_attachments,
    what: "the attachments it names (articles of association, shareholder list) as PDFs",
    named_by: "attachments.*.file",
    document: "a PDF document",
};

/// `attachments.<kind>.file` values as sent, as `(field, part)`.
pub fn referenced_attachments(value: &Value) -> Vec<(String, String)> {
    domain::tax::Attachments::FIELDS
        .iter()
        .filter_map(|kind| {
            value
                .pointer(&format!("/attachments/{kind}/file"))
                .and_then(Value::as_str)
                .map(|part| (format!("attachments.{kind}.file"), part.to_owned()))
        })
        .collect()
}

/// The request (`domain::tax_request`) and its attachment parts ([`FILES`]): every
/// broken rule and every unmatched or non-PDF part in one 422.
pub(crate) async fn parse(
    state: &AppState,
    body: &Value,
    files: &[Spooled],
    today: Date,
) -> Result<ParsedTaxRequest, ApiError> {
    let parsed = domain::tax_request::parse(body, today, &domain::offices::is_known_tax_office);
    let mut errs = domain::Violations::new();
    crate::uploads::check_files(&state.pdf_checks, body, files, &FILES, &mut errs).await;
    match parsed {
        Ok(r) if errs.is_empty() => Ok(parsed!(r, Corporation)),
        Ok(_) => Err(ApiError::Validation(errs)),
        Err(mut all) => {
            all.extend(errs);
            Err(ApiError::Validation(all))
        }
    }
}

impl TaxFamily for TaxRegistration {
    fn office_lookup(&self) -> Option<TaxOfficeLookup> {
        // The place of management prevails over the seat (§ 20 AO).
        let at = self.place_of_management.as_ref().unwrap_or(&self.address);
        super::company_office(at, LegalFamily::Corporation, self.belongs_to_group())
    }

    fn attachment_parts(&self) -> Vec<(&'static str, &str)> {
        self.attachments.parts()
    }

    fn write_xml(
        &self,
        ctx: &elster::XmlContext,
        attachments: &[elster::Attachment],
    ) -> Result<Vec<u8>, elster::XmlError> {
        elster::write_validated_with(self, ctx, attachments)
    }

    fn not_in_xml(&self) -> Vec<elster::ManualEntry> {
        elster::not_in_xml(self)
    }

    fn render_summary(
        &self,
        ctx: &forms::TaxSummaryContext,
    ) -> Result<Vec<u8>, forms::RenderError> {
        forms::render_tax_summary(self, ctx)
    }
}

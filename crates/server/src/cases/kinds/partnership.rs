//! A GbR's or eGbR's tax registration (`POST /v1/tax-registration/gbr`): the FsE_PersG, decided
//! by the seat, without attachments.

use domain::gbr::GbrTaxRegistration;
use domain::offices::{LegalFamily, TaxOfficeLookup};
use serde_json::Value;
use time::Date;

use super::{ParsedTaxRequest, TaxFamily};
use crate::error::ApiError;

/// The request (`domain::gbr_request`): every broken rule in one 422.
pub(crate) fn parse(body: &Value, today: Date) -> Result<ParsedTaxRequest, ApiError> {
    let r = domain::gbr_request::parse(body, today, &domain::offices::is_known_tax_office)?;
    Ok(parsed!(r, Partnership))
}

impl TaxFamily for GbrTaxRegistration {
    fn office_lookup(&self) -> Option<TaxOfficeLookup> {
        super::company_office(&self.address, LegalFamily::Partnership, false)
    }

    fn attachment_parts(&self) -> Vec<(&'static str, &str)> {
        Vec::new()
    }

    fn write_xml(
        &self,
        ctx: &elster::XmlContext,
        _attachments: &[elster::Attachment],
    ) -> Result<Vec<u8>, elster::XmlError> {
        elster::write_persg_validated(self, ctx)
    }

    fn not_in_xml(&self) -> Vec<elster::ManualEntry> {
        elster::persg_not_in_xml(self)
    }

    fn render_summary(
        &self,
        ctx: &forms::TaxSummaryContext,
    ) -> Result<Vec<u8>, forms::RenderError> {
        forms::render_partnership_tax_summary(self, ctx)
    }
}

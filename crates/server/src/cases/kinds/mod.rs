//! What differs between the families of tax registration once a request is parsed, in one
//! trait ([`TaxFamily`]) with one module per family: [`corporation`] (UG, GmbH: FsE_KapG),
//! [`partnership`] (GbR, eGbR: FsE_PersG) and [`sole_proprietor`] (FsE_EUn). The create, the office assignment and the summary
//! (`cases::tax`) call the family through [`of`] and never match on it; a new family is a
//! module here, its variant of `domain::tax::AnyTaxRegistration` and its arm in [`of`]
//! (docs/adding-a-case-kind.md).

use domain::offices::{LegalFamily, OfficeAddress, TaxOfficeLookup, TaxOfficeQuery};
use domain::tax::{AnyTaxRegistration, PostalAddress};
use uuid::Uuid;

/// A validated create request of any family: what the create does after parsing.
pub(crate) struct ParsedTaxRequest {
    pub(crate) company_id: Option<Uuid>,
    pub(crate) tax_registration_id: Option<Uuid>,
    /// The company to create when `company_id` is omitted.
    pub(crate) business_address: Option<PostalAddress>,
    pub(crate) registration: AnyTaxRegistration,
}

/// A family's parsed request (`domain::tax_request::TaxRequest`,
/// `domain::gbr_request::GbrTaxRequest`: the same fields but the registration, and no trait in
/// common) as a [`ParsedTaxRequest`], its registration the `AnyTaxRegistration` variant `$kind`.
macro_rules! parsed {
    ($request:expr, $kind:ident) => {{
        let r = $request;
        $crate::cases::kinds::ParsedTaxRequest {
            company_id: r.company_id,
            tax_registration_id: r.tax_registration_id,
            business_address: r.business_address,
            registration: domain::tax::AnyTaxRegistration::$kind(Box::new(r.registration)),
        }
    }};
}

pub mod corporation;
pub mod partnership;
pub mod sole_proprietor;

/// One family of tax registration, implemented by its validated registration.
pub trait TaxFamily: Send + Sync {
    /// The tax office as the rules for the family decide it (docs/offices.md): a corporation's
    /// at its place of management (§ 20 AO) or seat, a partnership's at its seat, a natural
    /// person's at the residence (§ 19 AO; [`domain::offices::natural_person_office`]); `None`
    /// when the deciding address is abroad.
    fn office_lookup(&self) -> Option<TaxOfficeLookup>;

    /// The attachments the registration names, as `(field, part)`, in filing order (none for a
    /// family whose XML carries no attachments).
    fn attachment_parts(&self) -> Vec<(&'static str, &str)>;

    /// The ELSTER XML, validated against the bundled schemas, with `attachments` where the
    /// family's XML carries them.
    fn write_xml(
        &self,
        ctx: &elster::XmlContext,
        attachments: &[elster::Attachment],
    ) -> Result<Vec<u8>, elster::XmlError>;

    /// The answers the XML does not carry (`elster_xml.not_in_xml`; the summary's last section).
    fn not_in_xml(&self) -> Vec<elster::ManualEntry>;

    /// The German summary PDF for the company to check and sign.
    fn render_summary(&self, ctx: &forms::TaxSummaryContext)
    -> Result<Vec<u8>, forms::RenderError>;
}

/// The family of `reg`: the one place that names every variant.
pub fn of(reg: &AnyTaxRegistration) -> &dyn TaxFamily {
    match reg {
        AnyTaxRegistration::Corporation(r) => r.as_ref(),
        AnyTaxRegistration::Partnership(r) => r.as_ref(),
        AnyTaxRegistration::SoleProprietor(r) => r.as_ref(),
    }
}

/// `address` as the office lookup reads it; `None` abroad.
pub(crate) fn office_address(address: &PostalAddress) -> Option<OfficeAddress<'_>> {
    address.country.is_germany().then_some(OfficeAddress {
        zip: &address.zip,
        city: &address.city,
        street: Some(&address.street),
    })
}

/// The office of a company at `address` by the rules of `family` (Berlin decides by the
/// address's district, several cities by the legal form: `domain::offices::tax_office_at`).
pub(crate) fn company_office(
    address: &PostalAddress,
    family: LegalFamily,
    group: bool,
) -> Option<TaxOfficeLookup> {
    let address = office_address(address)?;
    Some(domain::offices::tax_office_at(&TaxOfficeQuery {
        address,
        family,
        group,
    }))
}

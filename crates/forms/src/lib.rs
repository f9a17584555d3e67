//! GewA 1 and power-of-attorney PDFs for trade registrations, the tax registration summary,
//! and the sample trade licence of the sandbox.
//!
//! The trade registration renderers read the validated [`TradeRegistration`] model from `domain::trade`, are
//! synchronous, pure (no I/O: fonts and the form geometry are compiled in) and thread-safe, so
//! the server can call them from `spawn_blocking`. Output is PDF/A-2b, A4, with one embedded
//! font family (Noto Sans, subset per document; the GewA 1 adds subsets prepared once per
//! process, see `direct/`), and deterministic: the same input and context
//! (including `timestamp`) give the same bytes. Documents of a registration whose `environment`
//! is `sandbox` carry a diagonal "MUSTER - SANDBOX" mark on every page; the sample trade licence
//! carries it always.

mod canvas;
mod direct;
mod flow;
mod font;
mod gewa1;
mod pdf;
mod pdfcheck;
mod poa;
mod tax_summary;
mod text;
mod trade_licence;
// The PDFs read back in the unit tests as in the integration tests.
#[cfg(test)]
#[path = "../tests/common/read_back.rs"]
mod read_back;

pub use domain::trade::{Gewa1Form, TradeRegistration};
pub use font::has_glyph;
pub use gewa1::{
    FORM_VERSION as GEWA1_FORM_VERSION, field_boxes as gewa1_field_boxes,
    signature_box as gewa1_signature_box,
};
pub use pdfcheck::{NotAPdf, check_pdf, check_pdf_file};
// One render function per tax family, beside its sections (a new family adds its own there).
pub use tax_summary::*;

/// Render context of a GewA 1 that does not come from the request.
#[derive(Debug, Clone, PartialEq)]
pub struct Gewa1Context {
    /// Name of the receiving trade office (head of the form); `None` leaves it empty.
    pub trade_office_name: Option<String>,
    /// 8-digit Amtlicher Gemeindeschlüssel of the establishment's municipality; `None` leaves it
    /// empty.
    pub municipality_key: Option<String>,
    /// The stored address of the company a branch filing names by `company_id` (which then
    /// carries no `business_address`): field 16 prints it as the main office. The request's
    /// `business_address` comes first; only branches print field 16.
    pub main_office: Option<domain::trade::PostalAddress>,
    /// Field 32 "Datum": the creation date.
    pub created_on: time::Date,
    /// Creation timestamp written into the PDF metadata.
    pub timestamp: time::OffsetDateTime,
}

/// The service operator who is given power of attorney (from configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct Operator {
    /// Legal name, e.g. "Muster Filing GmbH".
    pub name: String,
    /// Postal address on one line, e.g. "Beispielweg 5, 10117 Berlin".
    pub address: String,
}

/// Render context of a power of attorney.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerOfAttorneyContext {
    /// The attorney. `None` (the service's operator is not configured) renders only in the
    /// sandbox, naming a placeholder under the sandbox mark; a production power of attorney
    /// without it is [`RenderError::OperatorNotConfigured`]: no production document carries a
    /// placeholder.
    pub operator: Option<Operator>,
    /// Place of signing. `None`: the owner's residential city, or the establishment's city
    /// when the owner has no address.
    pub place: Option<String>,
    /// Date of signing printed next to the place.
    pub created_on: time::Date,
    /// Creation timestamp written into the PDF metadata.
    pub timestamp: time::OffsetDateTime,
}

/// An answer the ELSTER XML does not carry, which the summary lists for the operator who
/// enters it in ELSTER's portal (the server's `elster_xml.not_in_xml`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManualRow {
    /// The request field, e.g. `tax_advisor`.
    pub field: String,
    /// The answer; `None` when it was not given.
    pub value: Option<String>,
    /// Where it is entered: the portal's sub-page and line ("5 Steuerliche Beratung, Zeile
    /// 24-30").
    pub place: String,
}

/// Render context of a tax registration summary that does not come from the request.
#[derive(Debug, Clone, PartialEq)]
pub struct TaxSummaryContext {
    /// The tax office the questionnaire goes to: number and display name, when known.
    pub tax_office: Option<(String, String)>,
    /// What the XML leaves out, in the questionnaire's order (its own last section; none
    /// without rows).
    pub not_in_xml: Vec<ManualRow>,
    /// Date printed next to the place above the signature.
    pub created_on: time::Date,
    /// Creation timestamp written into the PDF metadata.
    pub timestamp: time::OffsetDateTime,
}

/// Render context of a sample trade licence (sandbox): what a trade office would add to the
/// registration.
#[derive(Debug, Clone, PartialEq)]
pub struct TradeLicenceContext {
    /// The issuing trade office, e.g. "Gewerbeamt Musterstadt (Sandbox)".
    pub trade_office_name: String,
    /// Its address on one line, when known.
    pub trade_office_address: Option<String>,
    /// 8-digit Amtlicher Gemeindeschlüssel of the establishment, when known.
    pub municipality_key: Option<String>,
    /// The file reference printed as "Aktenzeichen".
    pub reference: String,
    /// When the notice reached the office (the case's submission), when known.
    pub received_on: Option<time::Date>,
    /// Date of the certificate.
    pub issued_on: time::Date,
    /// The trade office's fee in euro cents; `None` prints "nicht festgesetzt".
    pub fee_cents: Option<i64>,
    pub fee_paid: bool,
    /// Creation timestamp written into the PDF metadata.
    pub timestamp: time::OffsetDateTime,
}

/// Why a document could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// The owner index is out of range.
    #[error("there is no owner with index {0}")]
    NoSuchOwner(usize),
    /// The owner uploaded a signed GewA 1 (`documents.gewa_1`); the caller stores that PDF and
    /// renders nothing for this owner.
    #[error("owner {0} supplied a signed GewA 1; none is rendered")]
    SignedDocumentSupplied(usize),
    /// The signature the document needs is absent (`signatures.gewa_1` or
    /// `signatures.power_of_attorney`).
    #[error("owner {0} has no signature for this document")]
    MissingSignature(usize),
    /// A production power of attorney needs the operator it names
    /// ([`PowerOfAttorneyContext::operator`]).
    #[error("the operator the power of attorney names is not configured")]
    OperatorNotConfigured,
    /// The embedded font could not be loaded (a build defect, not an input problem).
    #[error("the embedded font could not be loaded")]
    Font,
    /// The PDF could not be written: krilla refused it (for example a PDF/A validation error),
    /// or a font could not be subset.
    #[error("PDF generation failed: {0}")]
    Pdf(String),
}

/// Renders the GewA 1 `reg.owners[owner]` is on ([`TradeRegistration::gewa1_form_of`]): his
/// own two pages, or, for a legal person, the company's one form with every further legal
/// representative on a supplementary sheet.
///
/// Errors: [`RenderError::NoSuchOwner`], [`RenderError::SignedDocumentSupplied`] when the
/// form's first owner uploaded a signed PDF instead (nothing to render),
/// [`RenderError::MissingSignature`] when an owner on it has no `signatures.gewa_1`.
pub fn render_gewa1(
    reg: &TradeRegistration,
    owner: usize,
    ctx: &Gewa1Context,
) -> Result<Vec<u8>, RenderError> {
    let form = reg
        .gewa1_form_of(owner)
        .ok_or(RenderError::NoSuchOwner(owner))?;
    gewa1::render(reg, &form, ctx)
}

/// Renders the Anmeldung `form` (one of [`TradeRegistration::gewa1_forms`], or
/// [`Gewa1Form::single`] for a stored case of the earlier shape): page 1 and 2 for its first
/// owner, a supplementary sheet per further legal representative, then the sheet of values too
/// long for their boxes. Errors as [`render_gewa1`].
pub fn render_gewa1_form(
    reg: &TradeRegistration,
    form: &Gewa1Form,
    ctx: &Gewa1Context,
) -> Result<Vec<u8>, RenderError> {
    gewa1::render(reg, form, ctx)
}

/// Renders the one-page power of attorney ("Vollmacht zur Einreichung") of `reg.owners[owner]`
/// for the operator in `ctx`, with a courtesy translation when the preferred language is not
/// German.
///
/// Errors: [`RenderError::NoSuchOwner`], [`RenderError::MissingSignature`] when
/// `signatures.power_of_attorney` is absent.
pub fn render_power_of_attorney(
    reg: &TradeRegistration,
    owner: usize,
    ctx: &PowerOfAttorneyContext,
) -> Result<Vec<u8>, RenderError> {
    poa::render(reg, owner, ctx)
}

/// Renders the one-page sample trade licence "Gewerbeanmeldung – Empfangsbescheinigung
/// (Muster)" of a registration: the office, reference, business, owners, establishment,
/// activity, start date and fee, always with the "MUSTER - SANDBOX" mark (it is never a real
/// licence, whatever `reg.environment` says).
pub fn render_trade_licence(
    reg: &TradeRegistration,
    ctx: &TradeLicenceContext,
) -> Result<Vec<u8>, RenderError> {
    trade_licence::render(reg, ctx)
}

/// Owner `index` of `reg` and the signature `which` picks of his (the GewA 1's, the power of
/// attorney's): [`RenderError::NoSuchOwner`] or [`RenderError::MissingSignature`] without them.
pub(crate) fn signed_owner(
    reg: &TradeRegistration,
    index: usize,
    which: impl FnOnce(&domain::trade::Signatures) -> Option<&domain::signature::SignaturePath>,
) -> Result<(&domain::trade::Owner, &domain::signature::SignaturePath), RenderError> {
    let owner = reg
        .owners
        .get(index)
        .ok_or(RenderError::NoSuchOwner(index))?;
    let signature = which(&owner.signatures).ok_or(RenderError::MissingSignature(index))?;
    Ok((owner, signature))
}

/// `DD.MM.YYYY`, as German forms write dates.
pub(crate) fn format_date(d: time::Date) -> String {
    format!("{:02}.{:02}.{:04}", d.day(), u8::from(d.month()), d.year())
}

/// The first parts of an address on one line: street, the second street line when it is not
/// blank, and "zip city".
pub(crate) fn street_zip_city(
    street: &str,
    second_line: Option<&str>,
    zip: &str,
    city: &str,
) -> Vec<String> {
    let mut parts = vec![street.to_owned()];
    if let Some(s) = second_line.filter(|s| !s.trim().is_empty()) {
        parts.push(s.to_owned());
    }
    parts.push(format!("{zip} {city}"));
    parts
}

//! `POST /v1/tax-registration/gbr`: the tax registration of a partnership (GbR, eGbR).
//!
//! Only the parsing is the partnership's own (`domain::gbr_request`); the create itself
//! (company, office, the FsE_PersG XML validated against its XSD, the summary PDF, the
//! transaction, the errors) is `tax_registrations::create_case`, and the case is read back
//! through `GET /v1/tax-registration/{id}` like a UG's or GmbH's.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use domain::auth::Caller;
use domain::company::Environment;
use domain::gbr::{Partners, PartnershipLegalForm};
use domain::tax::{CommercialRegister, FinancialEstimates, PostalAddress, TaxPackage};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::cases::tax::TaxPayload;
use crate::envelope::Envelope;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::openapi::responses::TaxCreateErrors;
use crate::routes::tax_registrations::{self, TaxCreateResponse, VatRequest};
use crate::state::AppState;

/// The payload of `POST /v1/tax-registration/gbr` (GbR or eGbR). Unknown fields are refused
/// (`unknown_field`); every broken rule is reported at once.
#[derive(Debug, ToSchema)]
#[allow(dead_code)] // Describes the payload for the OpenAPI document; parsing is domain's.
pub struct GbrTaxRegistrationRequest {
    /// An existing client company of the caller. Unknown or another provider's: 404
    /// `COMPANY_NOT_FOUND`; another environment: 409 `ENVIRONMENT_MISMATCH`; already having a
    /// tax registration: 409 `COMPANY_ALREADY_REGISTERED`. Omit it to create the company.
    pub company_id: Option<Uuid>,
    /// The address of the company to create; only without `company_id` (defaults to `address`).
    pub business_address: Option<PostalAddress>,
    /// The case's id, chosen by the caller (else the service makes one). Ids are unique per
    /// provider: one of the caller's own tax registrations (UG, GmbH, GbR, eGbR) having it is
    /// 409 `DUPLICATE_ID` (unless the request is an idempotent replay); another provider's case
    /// with the same id is neither visible nor in the way.
    pub tax_registration_id: Option<Uuid>,
    /// 4-digit tax office number of the bundled directory; without it the office is
    /// determined from `address` where that is certain, else an operator assigns it.
    #[schema(example = "2333", pattern = "^[0-9]{4}$")]
    pub tax_office_number: Option<String>,
    pub legal_form: PartnershipLegalForm,
    pub package: TaxPackage,
    /// The signature of the managing partners as an SVG path.
    #[schema(example = "M 10 20 C 20 0 30 40 40 20")]
    pub signature_path: String,
    /// Default `production`.
    pub environment: Option<Environment>,
    #[schema(max_length = 255)]
    pub client_reference: Option<String>,
    /// The partnership's name (DIN 91379 data type B).
    #[schema(max_length = 120, example = "Heide & Partner Hofladen GbR")]
    pub name: String,
    #[schema(max_length = 200)]
    pub purpose: String,
    /// YYYY-MM-DD, not in the future: the date of the partnership agreement.
    #[schema(format = Date, example = "2025-04-01")]
    pub partnership_agreement_date: String,
    /// YYYY-MM-DD, not before `partnership_agreement_date`.
    #[schema(format = Date, example = "2025-05-01")]
    pub operational_activity_start_date: String,
    pub fiscal_year_deviates_from_calendar: bool,
    /// YYYY-MM-DD; required when the flag is true, refused otherwise.
    #[schema(format = Date)]
    pub fiscal_year_deviating_start_date: Option<String>,
    /// The partnership's seat; a street with a house number.
    pub address: PostalAddress,
    /// 2 to 99 partners across `individuals` and `entities`; their `share_percentage` values
    /// (exact decimals, at most 4 places) sum to exactly 100 (`shares_do_not_sum_to_100`);
    /// at least one has `is_managing_partner: true` (`no_managing_partner`).
    pub partners: Partners,
    /// Required for an eGbR (`application-filed` or `registered`, never `not-applied`),
    /// refused for a GbR. `registration_number`: the number, a leading `GsR` is dropped.
    pub company_register: Option<CommercialRegister>,
    /// Checked (checksum, national format), stored without spaces.
    pub iban: Option<String>,
    /// 8 or 11 characters; required when the IBAN is not German.
    pub bic: Option<String>,
    /// Whole euros; revenue cannot be lower than profit.
    pub financial_estimates: FinancialEstimates,
    /// The same rules as for a UG or GmbH.
    pub vat: VatRequest,
    /// With `true`, the four payroll fields are required; with `false`, refused.
    pub has_employees: bool,
    /// At least 1.
    pub employee_count: Option<i64>,
    /// Employees who are partners; 0 to `employee_count`.
    pub shareholder_employee_count: Option<i64>,
    /// Of them marginally employed (geringfügig Beschäftigte); 0 to `employee_count`,
    /// optional with `has_employees: true`.
    pub marginal_employee_count: Option<i64>,
    /// YYYY-MM-DD, not before `operational_activity_start_date`.
    #[schema(format = Date)]
    pub payroll_start_date: Option<String>,
    /// Whole euros a year.
    pub estimated_annual_wage_tax: Option<i64>,
}

/// Create a tax registration for a GbR or eGbR
///
/// Creates a tax registration for a GbR or eGbR: validates it, generates the ELSTER XML
/// (DatenArt `PersG`, `FsE_PersG/PersG`, validated against the service's XSD) and a German
/// summary PDF, and stores them. The case is read with `GET /v1/tax-registration/{id}` and
/// follows the same lifecycle as a UG's or GmbH's.
///
/// No public source describes ELSTER's questionnaire for partnerships, so the element names of
/// its XML are the service's own until ERiC's schema is available: they follow the
/// corporation's questionnaire wherever the two share a block (addresses, persons, activity,
/// VAT, payroll, bank account), and the partnership's own elements and its legal-form value
/// are placeholders (docs/elster.md, "Partnerships").
#[utoipa::path(post, path = "/v1/tax-registration/gbr", tag = "tax registration",
    operation_id = "create_gbr_tax_registration",
    request_body(content((GbrTaxRegistrationRequest = "application/json", example = json!(crate::openapi::examples::gbr_tax_registration()))),
        description = "A partnership's tax registration: partners instead of directors and shareholders; the eGbR's Gesellschaftsregister; VAT and payroll as for a UG or GmbH"),
    responses(
        // Its links: `openapi::SharedLinks`.
        (status = 201, description = "Validated; awaiting manual submission", body = Envelope<TaxCreateResponse>),
        TaxCreateErrors,
    ))]
pub async fn create(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    claim: Option<Extension<crate::idempotency::Claim>>,
    body: Result<ApiJson<Value>, ApiError>,
) -> Result<Response, ApiError> {
    tax_registrations::create_case(
        &state,
        caller,
        claim,
        body,
        Vec::new(),
        TaxPayload::Partnership,
    )
    .await
}

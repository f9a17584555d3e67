//! `POST /v1/tax-registration/sole-proprietor`: the tax registration of a natural person who
//! takes up a trade, a liberal profession or agriculture and forestry.
//!
//! Only the parsing is the sole proprietor's own (`domain::sole_proprietor_request`, and the
//! trade-registration link in `cases::kinds::sole_proprietor`); the create itself (company,
//! office, the FsE_EUn XML validated against its XSD, the summary PDF, the transaction, the
//! errors) is `tax_registrations::create_case`, and the case is read back through
//! `GET /v1/tax-registration/{id}` like every tax registration.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use domain::auth::Caller;
use domain::company::Environment;
use domain::sole_proprietor::{
    ActivityKind, CashAccountingReason, EarlierCircumstances, Prepayments, ProfitDetermination,
    Proprietor, SoleProprietorLegalForm, Spouse,
};
use domain::tax::{FinancialEstimates, PostalAddress, TaxAdvisor, TaxPackage};
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

/// The payload of `POST /v1/tax-registration/sole-proprietor`. Unknown fields are refused
/// (`unknown_field`); every broken rule is reported at once.
#[derive(Debug, ToSchema)]
#[allow(dead_code)] // Describes the payload for the OpenAPI document; parsing is domain's.
pub struct SoleProprietorTaxRegistrationRequest {
    /// An existing client company of the caller (unknown or another provider's: 404
    /// `COMPANY_NOT_FOUND`; another environment: 409 `ENVIRONMENT_MISMATCH`; already having a
    /// tax registration: 409 `COMPANY_ALREADY_REGISTERED`). Omit it to create the company, or
    /// send `trade_registration_id` to use that case's company.
    pub company_id: Option<Uuid>,
    /// The address of the company to create; only without `company_id` (defaults to `address`).
    pub business_address: Option<PostalAddress>,
    /// The owner's own sole-trader trade registration (`legal_form` `einzelunternehmen`, one
    /// owner) of the calling provider, else 404 (a trade registration of another kind: 422
    /// `not_a_sole_trader`). What this request leaves out is taken from it: `company_id` and
    /// `environment` (another company is 404, another environment 409
    /// `ENVIRONMENT_MISMATCH`), `legal_form`, `activity_kind` (`trade`), `name`, `purpose`,
    /// `address` (the establishment), `operational_activity_start_date`, and the owner's
    /// names, birth date, residence (the establishment when the trade registration has none),
    /// phone, e-mail and salutation (from `gender`). The two cases name each other:
    /// `trade_registration_id` here, `tax_registration_id` on the trade registration.
    pub trade_registration_id: Option<Uuid>,
    /// The case's id, chosen by the caller (else the service makes one); unique among the
    /// caller's tax registrations (409 `DUPLICATE_ID`).
    pub tax_registration_id: Option<Uuid>,
    /// 4-digit tax office number of the bundled directory; without it the office is
    /// determined from the owner's residence where that is certain (§ 19 AO), else an operator
    /// assigns it.
    #[schema(example = "5215", pattern = "^[0-9]{4}$")]
    pub tax_office_number: Option<String>,
    pub legal_form: SoleProprietorLegalForm,
    pub package: TaxPackage,
    /// The owner's signature as an SVG path.
    #[schema(example = "M 10 20 C 20 0 30 40 40 20")]
    pub signature_path: String,
    /// Default `production`.
    pub environment: Option<Environment>,
    #[schema(max_length = 255)]
    pub client_reference: Option<String>,
    /// The business's name, or the owner's full name when there is none (DIN 91379 data type
    /// B); no legal-form designation is required.
    #[schema(max_length = 120, example = "Lena Vogt Übersetzungen")]
    pub name: String,
    /// The activity as the office should read it (`ArtTaet/GewerbeArt`).
    #[schema(max_length = 200)]
    pub purpose: String,
    /// Trade (`EinkGewBetr`), liberal profession (`EinkSelbst`) or agriculture and forestry
    /// (its income is listed for the operator: no public element).
    pub activity_kind: ActivityKind,
    /// YYYY-MM-DD, not in the future: the first preparatory acts (Betriebsbeginn).
    #[schema(format = Date, example = "2025-02-10")]
    pub preparations_start_date: String,
    /// YYYY-MM-DD, not before `preparations_start_date`: the day the activity is taken up.
    #[schema(format = Date, example = "2025-03-01")]
    pub operational_activity_start_date: String,
    /// Not for a liberal profession (§ 4a (1) no. 3 EStG: the calendar year).
    pub fiscal_year_deviates_from_calendar: bool,
    /// YYYY-MM-DD; required when the flag is true, refused otherwise.
    #[schema(format = Date)]
    pub fiscal_year_deviating_start_date: Option<String>,
    pub profit_determination: ProfitDetermination,
    /// Where the business is run; the residence again when it is run from home (the XML then
    /// says "entspricht der Wohnanschrift").
    pub address: PostalAddress,
    /// The owner: names, birth date, Steuer-IdNr, religion code, residence (which decides the
    /// tax office, § 19 AO), contact and marital status.
    pub owner: Proprietor,
    /// Required exactly when `owner.marital_status` is `married` or `civil-partnership`.
    pub spouse: Option<Spouse>,
    /// Checked (checksum, national format), stored without spaces.
    pub iban: Option<String>,
    /// 8 or 11 characters; required when the IBAN is not German.
    pub bic: Option<String>,
    /// Whole euros; revenue cannot be lower than profit; a loss is listed for the operator.
    pub financial_estimates: FinancialEstimates,
    /// The same rules as for a UG or GmbH (§ 19 UStG), except that cash accounting with
    /// `cash_accounting_reason` `no-bookkeeping-duty` or `liberal-profession` knows no turnover
    /// limit.
    pub vat: VatRequest,
    /// Required with `vat.accounting_method` `cash`, refused otherwise: § 20 sentence 1 no. 1
    /// (`turnover-below-limit`, up to 800,000 euros), no. 2 (`no-bookkeeping-duty`) or no. 3
    /// UStG (`liberal-profession`, only for `activity_kind` `liberal-profession`).
    pub cash_accounting_reason: Option<CashAccountingReason>,
    /// Other income and special expenses the prepayments are set from.
    pub prepayments: Option<Prepayments>,
    /// An earlier tax number, office, residence or self-employment.
    pub earlier_circumstances: Option<EarlierCircumstances>,
    pub tax_advisor: Option<TaxAdvisor>,
    /// With `true`, the payroll fields are required; with `false`, refused.
    pub has_employees: bool,
    /// At least 1.
    pub employee_count: Option<i64>,
    /// 0 for a sole proprietor (the field every tax registration has: employees who are
    /// partners).
    pub shareholder_employee_count: Option<i64>,
    /// Of them marginally employed; 0 to `employee_count`, optional.
    pub marginal_employee_count: Option<i64>,
    /// YYYY-MM-DD, not before `operational_activity_start_date`.
    #[schema(format = Date)]
    pub payroll_start_date: Option<String>,
    /// Whole euros a year.
    pub estimated_annual_wage_tax: Option<i64>,
}

/// Create a tax registration for a sole proprietor
///
/// Creates the tax registration of a sole trader, freelancer or farmer: validates it,
/// generates the ELSTER XML (DatenArt `EUn`, `FsE_EUn/EUn`, FragebogenTyp `AUFNTAET`,
/// validated against the service's XSD) and a German summary PDF, and stores them. The case is
/// read with `GET /v1/tax-registration/{id}` and follows the same lifecycle, steps, lists,
/// console pages and webhooks as every tax registration.
///
/// The tax office is the one of the owner's residence (§ 19 (1) AO), determined where the
/// register and the city's rules for natural persons are certain. When the business is run
/// in another office's district, that office assesses VAT (§ 21 AO), the trade-tax base
/// (§ 22 AO) and the separate profit determination (§ 18 (1) nos. 2 and 3, § 180 (1) no. 2 b
/// AO), so which of the two receives the questionnaire is left for an operator to confirm
/// (both suggested, the residence's first); without a residence in Germany the business
/// decides (§ 19 (3) AO). The XML carries only the elements the public EUn implementation
/// writes; every other answer (IdNr, spouse, bank account, adviser, payroll, prepayment
/// details ...) is listed in `elster_xml.not_in_xml` for the operator (docs/elster.md).
#[utoipa::path(post, path = "/v1/tax-registration/sole-proprietor", tag = "tax registration",
    operation_id = "create_sole_proprietor_tax_registration",
    request_body(content(
        (SoleProprietorTaxRegistrationRequest = "application/json", examples(
            ("freelancer" = (summary = "A freelancer, married, standard VAT with cash accounting, employees (sandbox)", value = json!(crate::openapi::examples::sole_proprietor_tax_registration()))),
            ("from_trade_registration" = (summary = "A sole trader whose person, business and activity come from the trade registration", value = json!(crate::openapi::examples::sole_proprietor_from_trade_registration()))),
        ))),
        description = "A natural person's tax registration: the owner instead of directors and shareholders, the kind of activity, the profit determination; VAT and payroll as for a company"),
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
        TaxPayload::SoleProprietor,
    )
    .await
}

//! `POST /v1/tax-registration` (UG, GmbH) and `GET /v1/tax-registration/{id}` (api.md;
//! docs/api/errors.md, idempotency.md, tax-registration.md). The partnership
//! endpoint (`routes::gbr_registrations`) parses
//! its own payload and then goes through the same create, documents and GET as here: every step
//! after validation works on [`AnyTaxRegistration`].
//!
//! A create validates every rule at once, resolves the tax office (sent, or determined from the
//! company's seat), writes the ELSTER XML and validates it against the bundled XSD, stores it,
//! and then writes the case in one transaction, with the record of the German summary PDF,
//! which is rendered from the stored case on its first download (`routes::documents`). When no
//! office can be determined the case is still validated and waits for an operator to assign
//! one; its XML is written then.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use domain::auth::Caller;
use domain::company::Environment;
use domain::lifecycle::{Lifecycle, TaxStatus};
use domain::tax::{AnyTaxRegistration, PostalAddress, TaxLegalForm, TaxPackage};
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::cases::tax::{self, CreatedTax, TaxPayload};
use crate::cases::{Written, access};
use crate::envelope::{Envelope, Outcome, respond};
use crate::error::ApiError;
use crate::extract::{ApiJson, PathId};
use crate::idempotency::{self, Claim};
use crate::openapi::responses::{CaseNotVisible, TaxCreateErrors};
use crate::routes::views::{self, DocumentView, StatusHistoryEntry};
use crate::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
pub struct TaxCreateResponse {
    pub result: Outcome,
    pub message: String,
    /// As sent, or made by the service; unique among the caller's tax registrations.
    pub tax_registration_id: Uuid,
    pub company_id: Uuid,
    /// `validated`.
    #[schema(example = "validated")]
    pub status: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub timestamp: OffsetDateTime,
}

/// The payload of `POST /v1/tax-registration` (UG or GmbH) as sent. The stored record
/// (`TaxRegistration`, read back under `registration`) differs: it nests the payroll fields
/// under `payroll` and adds the VAT outcome `small_business`. Unknown fields are refused
/// (`unknown_field`); every broken rule is reported at once.
#[derive(Debug, ToSchema)]
#[allow(dead_code)] // Describes the payload for the OpenAPI document; parsing is domain's.
pub struct TaxRegistrationRequest {
    /// An existing client company of the caller. Unknown or another provider's: 404
    /// `COMPANY_NOT_FOUND`; another environment: 409 `ENVIRONMENT_MISMATCH`; already having a
    /// tax registration: 409 `COMPANY_ALREADY_REGISTERED`. Omit it to create the company.
    pub company_id: Option<Uuid>,
    /// The address of the company to create; only without `company_id` (defaults to
    /// `address`). May be abroad.
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
    pub legal_form: domain::tax::KapLegalForm,
    pub package: TaxPackage,
    /// The client's signature as an SVG path.
    #[schema(example = "M 10 20 C 20 0 30 40 40 20")]
    pub signature_path: String,
    /// Default `production`.
    pub environment: Option<Environment>,
    #[schema(max_length = 255)]
    pub client_reference: Option<String>,
    /// With the legal form's designation (DIN 91379 data type B).
    #[schema(max_length = 120, example = "Muster Software GmbH")]
    pub name: String,
    #[schema(max_length = 200)]
    pub purpose: String,
    /// YYYY-MM-DD, not in the future: the date of the formation deed.
    #[schema(format = Date, example = "2025-04-01")]
    pub notarization_date: String,
    /// YYYY-MM-DD, not before `notarization_date`.
    #[schema(format = Date, example = "2025-05-01")]
    pub operational_activity_start_date: String,
    pub fiscal_year_deviates_from_calendar: bool,
    /// YYYY-MM-DD; required when the flag is true, refused otherwise.
    #[schema(format = Date)]
    pub fiscal_year_deviating_start_date: Option<String>,
    /// Whole euros: a UG 1 to 24,999, a GmbH at least 25,000.
    pub capital: i64,
    /// Whole euros, 0 to `capital`.
    pub paid_in_capital: i64,
    pub formation_type: domain::tax::FormationType,
    /// Required when `formation_type` is `conversion`, refused otherwise.
    pub conversion_type: Option<domain::tax::ConversionType>,
    pub is_holding: Option<bool>,
    /// The company's seat; a street with a house number.
    pub address: PostalAddress,
    /// When present, every field is required.
    pub notary: Option<domain::tax::Notary>,
    /// 1 to 9 directors.
    pub directors: Vec<domain::tax::Director>,
    /// 1 to 99 across `individuals` and `entities`; their `share_percentage` values (exact
    /// decimals, at most 4 places) sum to exactly 100 (`shares_do_not_sum_to_100`).
    pub shareholders: domain::tax::Shareholders,
    /// Omit it for a company not yet applied (the same as status `not-applied`).
    /// `registration_number`: the number, a leading `HRB` is dropped. With `registered`,
    /// `registration_application_date` (not after `registration_date`) is optional: the XML's
    /// `TagDesAntrags`, which the questionnaire asks (line 55); without it the case lists it
    /// in `elster_xml.not_in_xml`.
    pub commercial_register: Option<domain::tax::CommercialRegister>,
    /// The company's telephone (sub-page 1): a German number writes its area code apart
    /// (`+49 30 12345678`, `030 12345678`; `invalid_phone` otherwise), as the XML files it
    /// (`Komm/Tel`); a foreign one is taken and listed in `elster_xml.not_in_xml`.
    #[schema(example = "+49 30 12345678")]
    pub phone: Option<String>,
    /// The company's web address, `http://` or `https://`, at most 200 characters (line 12).
    #[schema(example = "https://www.spree-datenwerk.de", max_length = 200)]
    pub website: Option<String>,
    /// Where the company is managed when not at its seat (sub-page 2, lines 8-10): it decides
    /// the responsible tax office (§ 20 AO). Listed in `elster_xml.not_in_xml` (its element
    /// is not public).
    pub place_of_management: Option<PostalAddress>,
    /// The tax adviser (sub-page 5): `{"type": "person", "first_name", "last_name",
    /// "address", "phone"?}` or `{"type": "firm", "name", "address", "phone"?}`.
    pub tax_advisor: Option<domain::tax::TaxAdvisor>,
    /// The authorised recipient for every tax (sub-page 6): `{"type": "tax-advisor"}` (the
    /// tax adviser of `tax_advisor`, which must be sent), or a person or firm as there.
    pub authorized_recipient: Option<domain::tax::AuthorizedRecipient>,
    /// The account holder when it is not the company (sub-page 7, lines 52/53); only with
    /// `iban`.
    #[schema(max_length = 120)]
    pub bank_account_holder: Option<String>,
    /// Request the exemption certificate from the construction withholding tax (§ 48b EStG,
    /// sub-page 21): `Freistellungsbescheinigung/AntragFreistBauabzugsSt`.
    pub request_construction_exemption_certificate: Option<bool>,
    /// The PDFs filed with the questionnaire (sub-pages 22/23), each naming the multipart
    /// part that carries it (`{"articles_of_association": {"file": "articles"}}`); at most
    /// 10 MB each. Stored as documents of the case and written into the XML's `Anhaenge`.
    pub attachments: Option<domain::tax::Attachments>,
    /// The company's post office box (sub-page 1, line 7).
    pub po_box: Option<domain::tax::PoBox>,
    /// Whether the company only manages its own assets (sub-page 1, line 14).
    pub manages_own_assets_only: Option<bool>,
    /// Whether shares are held in trust (sub-page 10, line 90): the XML's `Treuhand`, `false`
    /// when not sent.
    pub has_trust_relationships: Option<bool>,
    /// Where the wages are computed, when not at the seat (sub-page 16, lines 174-177); only
    /// with `has_employees: true`.
    pub payroll_establishment: Option<PostalAddress>,
    /// Checked (checksum, national format), stored without spaces.
    pub iban: Option<String>,
    /// 8 or 11 characters; required when the IBAN is not German.
    pub bic: Option<String>,
    /// Whole euros; revenue cannot be lower than profit.
    pub financial_estimates: domain::tax::FinancialEstimates,
    pub vat: VatRequest,
    /// With `true`, the four payroll fields are required; with `false`, refused.
    pub has_employees: bool,
    /// At least 1.
    pub employee_count: Option<i64>,
    /// Employees who are shareholders; 0 to `employee_count`.
    pub shareholder_employee_count: Option<i64>,
    /// Of them marginally employed (geringfügig Beschäftigte, line 171); 0 to
    /// `employee_count`, optional with `has_employees: true`.
    pub marginal_employee_count: Option<i64>,
    /// YYYY-MM-DD, not before `operational_activity_start_date`.
    #[schema(format = Date)]
    pub payroll_start_date: Option<String>,
    /// Whole euros a year.
    pub estimated_annual_wage_tax: Option<i64>,
}

/// The multipart form of a corporation's tax create: the payload as JSON in the part `data`,
/// and each attachment in the part its `attachments.<kind>.file` names (1 to 100 letters,
/// digits, `-`, `_`, `.`); at most 3 parts. Written by hand as the trade create's is.
pub struct TaxRegistrationMultipart;

impl utoipa::PartialSchema for TaxRegistrationMultipart {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new()
            .description(Some(
                "The payload as JSON in the part `data`, and each attachment (a PDF of at most \
10 MB) in the part its `attachments.<kind>.file` names",
            ))
            .property(
                "data",
                utoipa::openapi::Ref::from_schema_name("TaxRegistrationRequest"),
            )
            .required("data")
            .additional_properties(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary))),
            ))
            .property_names(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some("^[A-Za-z0-9._-]{1,100}$")),
            ))
            .max_properties(Some(crate::cases::kinds::corporation::FILES.max_parts))
            .into()
    }
}

impl ToSchema for TaxRegistrationMultipart {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        schemas.push((
            TaxRegistrationRequest::name().into_owned(),
            <TaxRegistrationRequest as utoipa::PartialSchema>::schema(),
        ));
        <TaxRegistrationRequest as ToSchema>::schemas(schemas);
    }
}

/// The `vat` object as sent, by either tax create (the stored record adds the outcome
/// `small_business`). Let F be the founding-year and N the following-year revenue: the
/// small-business election is available when F <= 25,000 and N <= 100,000 euros, and then
/// `regime` is required.
#[derive(Debug, ToSchema)]
#[allow(dead_code)] // Describes the payload for the OpenAPI document; parsing is domain's.
pub struct VatRequest {
    /// Required when the election is available; `small-business` is refused when F <= 25,000
    /// but N > 100,000 (`small_business_unavailable`); without effect when F > 25,000.
    pub regime: Option<domain::tax::VatRegime>,
    /// Required unless small business; `cash` only when F <= 800,000 (`cash_not_allowed`).
    pub accounting_method: Option<domain::tax::AccountingMethod>,
    /// Required unless small business.
    pub estimated_balance_type: Option<domain::tax::BalanceType>,
    /// Whole euros; required unless small business.
    pub estimated_balance_amount: Option<i64>,
    /// Default `quarterly`; `monthly` only for a refund above 9,000 euros, and then required.
    pub return_frequency: Option<domain::tax::ReturnFrequency>,
    pub request_vat_id: Option<bool>,
    pub sells_via_online_marketplaces: Option<bool>,
    pub request_reverse_charge_certificate: Option<bool>,
    /// Required with `request_reverse_charge_certificate: true`, refused without it.
    pub reverse_charge_service_type: Option<domain::tax::ReverseChargeServiceType>,
}

/// The receiving tax office as read back.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaxOfficeView {
    /// 4-digit office number (BUFA).
    pub number: String,
    pub name: String,
    /// Street, postal code and city on one line, when the directory has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Why the service determined this office at the create: the rule, its source, the
    /// source's date and kind (`legal_text`, `official_page`, `official_data`, `evidence`).
    /// Absent for an office the caller sent or an operator assigned.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<domain::offices::Basis>)]
    pub basis: Option<Value>,
}

impl TaxOfficeView {
    pub fn from_number(number: &str) -> Option<Self> {
        let o = domain::offices::tax_office(number)?;
        let street = [o.street, o.house_number]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        let city = [o.postal_code, o.city]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        let address = [street, city]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(", ");
        Some(Self {
            number: o.number.to_string(),
            name: o.display_name(),
            address: (!address.is_empty()).then_some(address),
            basis: None,
        })
    }

    /// The basis of the create's determination (`lookup`, as stored), when it determined this
    /// office.
    pub fn with_basis(mut self, lookup: Option<&Value>) -> Self {
        self.basis = lookup
            .filter(|l| {
                l["status"] == "determined" && l["office"]["number"].as_str() == Some(&self.number)
            })
            .and_then(|l| l.get("basis").cloned());
        self
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TaxRegistrationResponse {
    pub result: Outcome,
    pub message: String,
    /// The id the provider chose or was given at the create; unique among its tax
    /// registrations.
    pub tax_registration_id: Uuid,
    /// Operators only: the case's key, which the operator routes take. It equals
    /// `tax_registration_id` unless the provider chose an id that another case had as its key
    /// already (tax registration ids are unique per provider, keys across the service).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case_id: Option<Uuid>,
    pub company_id: Uuid,
    /// `validated`, `submitted`, `completed` or `rejected`.
    #[schema(example = "validated")]
    pub status: String,
    pub environment: Environment,
    pub package: TaxPackage,
    /// `ug`, `gmbh`, `gbr`, `egbr` or `einzelunternehmen`.
    pub legal_form: TaxLegalForm,
    /// Present once known (sent, determined from the address, or assigned by an operator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tax_office: Option<TaxOfficeView>,
    /// When no office could be determined: why, and the suggestions for the operator.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub tax_office_determination: Option<Value>,
    /// The ELSTER XML: whether the case holds it, why not yet, and which fields it spells
    /// differently from `registration`.
    pub elster_xml: ElsterXmlView,
    /// The tax number (Steuernummer) the tax office issued, once completed, in ELSTER's
    /// 13-digit form (office, `0`, district, serial, check digit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tax_number: Option<String>,
    /// The request as stored, normalised (for example `registration_number` without `HRB` or
    /// `GsR`): a corporation's (UG, GmbH) or a partnership's (GbR, eGbR) record, as
    /// `legal_form` says.
    pub registration: AnyTaxRegistration,
    pub documents: Vec<DocumentView>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    pub status_history: Vec<StatusHistoryEntry>,
}

/// The state of a case's ELSTER XML.
#[derive(Debug, Serialize, ToSchema)]
pub struct ElsterXmlView {
    /// `written` when the XML is among `documents`, else `pending`.
    pub status: crate::cases::tax_xml::XmlStatus,
    /// Why the XML is not written yet: `tax_office_unknown` (an operator assigns the office;
    /// the XML is written then), `hersteller_id_missing` (a production XML needs the
    /// service's ELSTER manufacturer id, not configured yet; written when it is), `queued`
    /// (being written since the id was configured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_reason: Option<crate::cases::tax_xml::PendingReason>,
    /// Fields whose text the XML carries transliterated to ISO 8859-15, the character set
    /// ELSTER accepts (`Łukasiewicz` as `Lukasiewicz`); `registration`, the summary PDF and
    /// every other document keep the text as given. Empty when every text is in ISO 8859-15.
    pub transliterated: Vec<elster::Transliteration>,
    /// The answers the XML does not carry, for the operator to enter in ELSTER's portal by
    /// hand (each with the portal's sub-page and line): an answer without a public element
    /// name (the tax adviser, the bank account, ...), one whose value has no public form (a
    /// loss, an address abroad), and what the questionnaire needs and was not sent. A
    /// partnership's XML, all of whose element names are ours, is one entry
    /// (`unverified-document`). docs/elster.md, "Only what has a public source".
    pub not_in_xml: Vec<elster::ManualEntry>,
}

/// Create a tax registration for a UG or GmbH
///
/// Creates a tax registration for a UG or GmbH: validates it, determines the tax office (Berlin
/// by the seat's Bezirk; cities whose rule is not public wait for an operator), generates the
/// ELSTER XML when the office is known (validated against the service's XSD; a production XML
/// needs the service's ELSTER manufacturer id, see `elster_xml` in the GET) and stores it; the
/// German summary PDF is listed at once and rendered on its first download. The XML then awaits
/// manual submission to the tax office.
#[utoipa::path(post, path = "/v1/tax-registration", tag = "tax registration",
    operation_id = "create_tax_registration",
    request_body(content(
        (TaxRegistrationRequest = "application/json", examples(
            ("gmbh" = (summary = "A registered GmbH with three shareholders, its phone, tax adviser and nominal amounts", value = json!(crate::openapi::examples::tax_registration()))),
            ("founding_year_loss" = (summary = "A GmbH expecting a loss in its founding year (listed in `elster_xml.not_in_xml`)", value = json!(crate::openapi::examples::tax_registration_loss()))),
        )),
        (TaxRegistrationMultipart = "multipart/form-data", encoding(("data" = (content_type = "application/json")))),
    ), description = "The payload of docs/spec/api.md (UG or GmbH); `company_id` or `business_address`, `tax_registration_id` and `tax_office_number` are optional, the bank and payroll fields top-level. As multipart, the JSON goes into the part `data` and each attachment into the part its `attachments.<kind>.file` names"),
    responses(
        // Its links: `openapi::SharedLinks`.
        (status = 201, description = "Validated; awaiting manual submission", body = Envelope<TaxCreateResponse>),
        TaxCreateErrors,
    ))]
pub async fn create(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    claim: Option<Extension<Claim>>,
    req: Request,
) -> Result<Response, ApiError> {
    // The role first: a key that may not create gets 403 whatever its body.
    access::creator(caller, "tax registrations")?;
    let files = crate::uploads::FileParts {
        max_file: state.config.max_upload_bytes.min(tax::MAX_ATTACHMENT_BYTES),
        ..crate::cases::kinds::corporation::FILES
    };
    let received = crate::routes::multipart::receive(&state, req, &files).await?;
    create_case(
        &state,
        caller,
        claim,
        Ok(ApiJson(received.value)),
        received.files,
        TaxPayload::Corporation,
    )
    .await
}

/// Either tax create, of the payload `payload` and (a corporation's) its spooled attachments:
/// the caller's role first (a key that may not create gets 403 whatever its body), then the
/// body; the answer is kept for an `Idempotency-Key`.
pub(crate) async fn create_case(
    state: &AppState,
    caller: Caller,
    claim: Option<Extension<Claim>>,
    body: Result<ApiJson<Value>, ApiError>,
    files: Vec<crate::uploads::Spooled>,
    payload: TaxPayload,
) -> Result<Response, ApiError> {
    let creator = access::creator(caller, "tax registrations")?;
    let ApiJson(mut body) = body?;
    access::create_environment(caller, &mut body)?;
    let claim = claim.map(|Extension(c)| c);
    let mut response = None;
    let written = tax::create_tax(state, creator, payload, &body, files, |created| {
        answer(state, claim.as_ref(), created, &mut response)
    })
    .await?;
    respond_created(written, response)
}

/// Makes the create's answer (kept for an `Idempotency-Key`, sent as `response`).
fn answer(
    state: &AppState,
    claim: Option<&Claim>,
    created: &CreatedTax,
    response: &mut Option<Response>,
) -> Result<Option<store::IdempotentAnswer>, ApiError> {
    let body = TaxCreateResponse {
        result: Outcome::Success,
        message: if created.office.is_none() {
            "tax registration validated; awaiting the assignment of the tax office and manual submission".into()
        } else if created.has_xml {
            "tax registration validated; awaiting manual submission to the tax office".into()
        } else {
            "tax registration validated; its ELSTER XML is written once the service's ELSTER manufacturer id is configured".into()
        },
        tax_registration_id: created.public_id,
        company_id: created.company_id,
        status: created.status.as_str().into(),
        timestamp: created.at,
    };
    let (kept, res) = idempotency::prepare(&state.answer_keys, claim, StatusCode::CREATED, body)?;
    *response = Some(res);
    Ok(kept)
}

/// The answer of a create that was written, or the claim's when another request took it over.
pub(crate) fn respond_created<T>(
    written: Written<T>,
    response: Option<Response>,
) -> Result<Response, ApiError> {
    match (written, response) {
        (Written::Created(_), Some(response)) => Ok(response),
        (Written::Created(_), None) => Err(ApiError::Internal(anyhow::anyhow!("no answer made"))),
        (Written::ClaimLost, _) => Ok(idempotency::claim_lost()),
    }
}

/// Read a tax registration
///
/// Reads a tax registration: the provider that created it and the client company it is for, by
/// its `tax_registration_id` (ids are unique per provider, so another provider's case with the
/// same id is never found), and operators, by the case's key; anyone else gets 404.
#[utoipa::path(get, path = "/v1/tax-registration/{tax_registration_id}", tag = "tax registration",
    operation_id = "get_tax_registration",
    params(("tax_registration_id" = Uuid, Path, description = "As returned by the create (operators: the case's key, `case_id`)")),
    responses(
        (status = 200, description = "The tax registration with fresh download links", body = Envelope<TaxRegistrationResponse>),
        CaseNotVisible,
    ))]
pub async fn get(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
) -> Result<Response, ApiError> {
    let case = access::case::<crate::cases::kind::Tax>(&state, caller, id).await?;
    view(&state, caller, &case)
}

/// A tax registration as `GET` answers it to `caller`.
pub(crate) fn view(
    state: &AppState,
    caller: Caller,
    case: &store::TaxRegistrationRecord,
) -> Result<Response, ApiError> {
    let registration = AnyTaxRegistration::from_stored(case.legal_form, case.record.clone())
        .map_err(|e| ApiError::Internal(anyhow::anyhow!(e)))?;
    Ok(respond(
        StatusCode::OK,
        TaxRegistrationResponse {
            result: Outcome::Success,
            message: "tax registration found".into(),
            tax_registration_id: case.public_id,
            case_id: matches!(caller, Caller::Operator { .. }).then_some(case.id),
            company_id: case.company_id,
            status: case.status.as_str().into(),
            environment: case.environment,
            package: registration.package(),
            legal_form: registration.legal_form(),
            tax_office: case
                .tax_office_number
                .as_deref()
                .and_then(TaxOfficeView::from_number)
                .map(|v| v.with_basis(case.tax_office_lookup.as_ref())),
            tax_office_determination: if case.tax_office_number.is_none() {
                case.tax_office_lookup.clone()
            } else {
                None
            },
            elster_xml: {
                let (status, pending_reason) =
                    crate::cases::tax_xml::state(case, &state.config.elster);
                ElsterXmlView {
                    status,
                    pending_reason,
                    transliterated: elster::transliterations(&case.record),
                    not_in_xml: crate::cases::tax::not_in_xml(&registration),
                }
            },
            tax_number: case.tax_number.clone(),
            registration,
            documents: views::document_views(
                state,
                &case.documents,
                case.status == TaxStatus::Cancelled,
            ),
            created_at: case.created_at,
            status_history: views::history_views(&case.history),
        },
    ))
}

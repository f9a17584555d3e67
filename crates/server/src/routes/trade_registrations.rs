//! `POST /v1/trade-registration`, `GET /v1/trade-registration/{id}` and `mark-submitted`
//! (docs/spec/api.md; docs/spec/decisions.md §2-4, §8): the request read (a JSON body, or
//! multipart with the signed forms spooled as they arrive) and the answers. The create itself
//! is [`crate::cases::trade::create_trade`].

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use domain::Violations;
use domain::auth::Caller;
use domain::case::DocumentType;
use domain::company::Environment;
use domain::lifecycle::{Lifecycle, TradeStatus};
use domain::trade::{
    AcquisitionType, BusinessType, CraftCard, Employees, EstablishmentType, Gender,
    IndustrialLicense, Language, MainEstablishment, Package, PersonName, PostalAddress,
    PreviousBusiness, Reason, RegisteredOffice, ResidencePermit, ResidentialAddress,
    TradeRegistration,
};
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::cases::trade::{self, CreatedTrade, TradeSubmission};
use crate::cases::{access, steps};
use crate::envelope::{Envelope, Outcome, respond};
use crate::error::{ApiError, ErrorBody};
use crate::extract::PathId;
use crate::idempotency::{self, Claim};
use crate::openapi::responses::{
    CaseNotVisible, CompanyNotFound, CreateValidationFailed, ProviderForbidden, ValidationFailed,
};
use crate::routes::offices::TradeOfficeView;
use crate::routes::views;
use crate::state::AppState;

/// Most parts a multipart create may have: `data` and one signed GewA 1 per owner.
const MAX_PARTS: usize = 1 + domain::trade_request::MAX_OWNERS;

/// The create's body: its payload well-formed JSON without duplicate keys (400 and 422
/// otherwise), its file parts spooled.
async fn receive(state: &AppState, req: Request) -> Result<TradeSubmission, ApiError> {
    let files = crate::uploads::FileParts {
        max_file: state.config.max_upload_bytes,
        ..trade::FILES
    };
    let received = crate::routes::multipart::receive(state, req, &files).await?;
    Ok(TradeSubmission {
        value: received.value,
        files: received.files,
    })
}

/// A document of an owner in a create response.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OwnerDocument {
    pub id: Uuid,
    #[schema(example = "GewA 1 - Erika Mustermann.pdf")]
    pub name: String,
    /// Signed address, valid 24 hours, usable without a key.
    pub download_url: String,
}

/// An owner's documents in the create's answer. Documented as `CreatedOwnerDocuments`: the
/// request's `owners[].documents` (`domain::trade::OwnerDocuments`, an uploaded form's part
/// name) has the type's name, and one schema of a name would overwrite the other.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
#[schema(as = CreatedOwnerDocuments)]
pub struct OwnerDocuments {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gewa_1: Option<OwnerDocument>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_of_attorney: Option<OwnerDocument>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CreatedOwner {
    pub first_name: String,
    pub last_name: String,
    pub documents: OwnerDocuments,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CreateResponse {
    pub result: Outcome,
    pub message: String,
    pub company_id: Uuid,
    pub trade_registration_id: Uuid,
    /// `form-rendered` (package self) or `submitted` (package assisted).
    #[schema(example = "form-rendered")]
    pub status: String,
    pub owners: Vec<CreatedOwner>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_reference: Option<String>,
    pub client_preferred_language: Language,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub timestamp: OffsetDateTime,
}

/// Create a trade registration
///
/// Creates a trade registration. The body is `application/json` (the payload), or
/// `multipart/form-data` with the payload in the part `data` and each signed GewA 1 PDF in the
/// part its `owners[i].documents.gewa_1.file` names.
///
/// **One Anmeldung per company.** A legal person (`gmbh`, `ug`, `ggmbh`, `ag`, `kgaa`) and a
/// `gmbh-co-kg` or `ug-co-kg` (whose managing partner is its general partner) file one GewA 1:
/// `owners[0]` is the legal representative of fields 4 to 11, each further owner is a further
/// representative on a supplementary sheet of the same document, signing it with his own
/// `signatures.gewa_1`; every owner's `documents.gewa_1` in the answer names that one document.
/// A signed upload is the company's one form, signed by every representative: send it as
/// `owners[0].documents.gewa_1` and no signature (`not_allowed` on another owner). A
/// partnership (`gbr`, `ohg`, `kg`), a sole trader and `other` file one GewA 1 per owner.
///
/// **Before the register entry** (a legal person without `registration_number`), field 1 reads
/// "<name> (in Gründung)"; file it with the notarised articles of association (the trade office
/// asks for them in place of the register extract).
///
/// **A relocation** (`reason: reopening-after-relocation`, field 25 "Verlegung des Betriebs aus
/// einem anderen Meldebezirk") needs `previous_establishment` (field 17). Since 1.11.2025 this
/// one Anmeldung at the new office is also the deregistration at the old one (§ 14 Abs. 1
/// Satz 3 GewO): the new office passes it on, so no Abmeldung (GewA 3) is filed there.
///
/// A production `assisted` case needs the service's operator configured (its powers of
/// attorney name it): without, 503 `SERVICE_NOT_CONFIGURED` and nothing is written.
#[utoipa::path(post, path = "/v1/trade-registration", tag = "trade registration",
    operation_id = "create_trade_registration",
    request_body(content(
        (TradeRegistrationRequest = "application/json", examples(
            ("self" = (summary = "A registered GmbH with one managing director, filing its own form", value = json!(crate::openapi::examples::trade_registration()))),
            ("two_directors" = (summary = "A GmbH before its register entry with two managing directors: one GewA 1 with a supplementary sheet", value = json!(crate::openapi::examples::trade_registration_two_directors()))),
            ("relocation" = (summary = "A business moved from another district: the former establishment in field 17", value = json!(crate::openapi::examples::trade_registration_relocation()))),
        )),
        (TradeRegistrationMultipart = "multipart/form-data", encoding(("data" = (content_type = "application/json")))),
    ), description = "The payload; as multipart, the JSON goes into the part `data` and each signed PDF into the part its owner's `documents.gewa_1.file` names"),
    responses(
        (status = 201, description = "Created: every document is stored", body = Envelope<CreateResponse>,
        links(
            ("GetTradeRegistration" = (operation_id = "get_trade_registration", parameters(("trade_registration_id" = "$response.body#/response/trade_registration_id")))),
            ("MarkSubmitted" = (operation_id = "mark_submitted", parameters(("trade_registration_id" = "$response.body#/response/trade_registration_id")))),
            ("SandboxTransition" = (operation_id = "sandbox_transition_trade", parameters(("trade_registration_id" = "$response.body#/response/trade_registration_id")))),
        )),
        (status = 400, description = "`INVALID_JSON` or `INVALID_MULTIPART`", body = Envelope<ErrorBody>),
        ProviderForbidden,
        CompanyNotFound,
        (status = 409, description = "`COMPANY_ALREADY_REGISTERED`, `ENVIRONMENT_MISMATCH` or `IDEMPOTENCY_KEY_IN_USE`", body = Envelope<ErrorBody>),
        CreateValidationFailed,
    ))]
pub async fn create(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    req: Request,
) -> Result<Response, ApiError> {
    let creator = access::creator(caller, "trade registrations")?;
    let claim = req.extensions().get::<Claim>().cloned();
    let mut submission = receive(&state, req).await?;
    access::create_environment(caller, &mut submission.value)?;
    let mut response = None;
    let written = trade::create_trade(&state, creator, submission, |created| {
        let body = created_answer(&state, created);
        let (kept, res) = idempotency::prepare(
            &state.answer_keys,
            claim.as_ref(),
            StatusCode::CREATED,
            body,
        )?;
        response = Some(res);
        Ok(kept)
    })
    .await?;
    crate::routes::tax_registrations::respond_created(written, response)
}

/// The create's answer: the case, its status and each owner's documents with signed links.
fn created_answer(state: &AppState, created: &CreatedTrade) -> CreateResponse {
    let reg = &created.registration;
    let unix = created.at.unix_timestamp();
    // An owner's GewA 1 is the form he is on: a legal person's one form for every owner.
    let find = |i: usize, t: DocumentType| {
        let owner = if t == DocumentType::TradeLicenceApplication {
            reg.gewa1_form_of(i).and_then(|f| f.document_owner())
        } else {
            Some(i)
        };
        created
            .documents
            .iter()
            .find(|d| d.owner_index == owner.map(|o| o as i32) && d.doc_type == t)
            .map(|d| OwnerDocument {
                id: d.id,
                name: d.name.clone(),
                download_url: state.links.url(d.id, unix),
            })
    };
    let owners = reg
        .owners
        .iter()
        .enumerate()
        .map(|(i, o)| CreatedOwner {
            first_name: o.first_name.clone(),
            last_name: o.last_name.clone(),
            documents: OwnerDocuments {
                gewa_1: find(i, DocumentType::TradeLicenceApplication),
                power_of_attorney: find(i, DocumentType::PowerOfAttorney),
            },
        })
        .collect();
    CreateResponse {
        result: Outcome::Success,
        message: match reg.package {
            Package::SelfService => {
                "trade registration created; the GewA 1 forms are ready to sign and file".into()
            }
            Package::Assisted => {
                "trade registration created and submitted; we file it with the trade office".into()
            }
        },
        company_id: created.company_id,
        trade_registration_id: created.case_id,
        status: created.status.as_str().into(),
        owners,
        client_reference: reg.client_reference.clone(),
        client_preferred_language: reg.client_preferred_language,
        timestamp: created.at,
    }
}

/// The request payload, for the OpenAPI document (the server validates it field by field into
/// the domain model, reporting every broken rule).
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct TradeRegistrationRequest {
    /// An existing client company of the caller (omit to create one).
    company_id: Option<Uuid>,
    /// The registration's fields sit next to `company_id` (docs/spec/api.md), not under a key of their own.
    #[serde(flatten)]
    registration: TradeRegistration,
}

/// The multipart form of the create request: the payload as JSON in the part `data`, and one
/// signed GewA 1 (PDF) per owner in the part its `documents.gewa_1.file` names (1 to 100
/// letters, digits, `-`, `_`, `.`); at most 10 parts. Written by hand: utoipa's derive cannot
/// state the part names (`propertyNames`).
pub struct TradeRegistrationMultipart;

impl utoipa::PartialSchema for TradeRegistrationMultipart {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new()
            .description(Some(
                "The payload as JSON in the part `data`, and one signed GewA 1 (PDF) per owner in \
the part its `documents.gewa_1.file` names",
            ))
            .property(
                "data",
                utoipa::openapi::Ref::from_schema_name("TradeRegistrationRequest"),
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
            .max_properties(Some(MAX_PARTS))
            .into()
    }
}

impl ToSchema for TradeRegistrationMultipart {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        schemas.push((
            TradeRegistrationRequest::name().into_owned(),
            <TradeRegistrationRequest as utoipa::PartialSchema>::schema(),
        ));
        <TradeRegistrationRequest as ToSchema>::schemas(schemas);
    }
}

/// A PDF file part.
#[derive(Debug, ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)]
pub struct SignedPdf(Vec<u8>);

/// An owner as read back (signatures are not returned).
#[derive(Debug, Serialize, ToSchema)]
pub struct OwnerView {
    pub first_name: String,
    pub last_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub birth_name: Option<String>,
    #[schema(value_type = String, format = Date)]
    pub dob: String,
    pub place_of_birth: String,
    #[schema(example = "DE")]
    pub country_of_birth: String,
    #[schema(example = "DE")]
    pub nationality: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(example = json!(["PL"]))]
    pub other_nationalities: Vec<String>,
    pub gender: Gender,
    pub phone: String,
    pub email: String,
    /// Set once an operator verified the owner's identity.
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "time::serde::rfc3339::option"
    )]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub identity_verified_at: Option<OffsetDateTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<ResidentialAddress>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub residence_permit: Option<ResidencePermit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_employment_restrictions: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub employment_restriction_details: Option<String>,
}

/// The establishment as read back: always in Germany.
#[derive(Debug, Serialize, ToSchema)]
pub struct OfficeView {
    #[serde(flatten)]
    pub office: RegisteredOffice,
    #[schema(example = "DE")]
    pub country: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TradeRegistrationResponse {
    pub result: Outcome,
    pub message: String,
    pub trade_registration_id: Uuid,
    pub company_id: Uuid,
    /// A sole trader's (`legal_form` `einzelunternehmen`): the open tax registration of the
    /// same company, when one was filed (`POST /v1/tax-registration/sole-proprietor`, e.g.
    /// with this case's `trade_registration_id`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tax_registration_id: Option<Uuid>,
    #[schema(example = "form-rendered")]
    pub status: String,
    pub package: Package,
    pub environment: Environment,
    pub reason: Reason,
    #[schema(value_type = String, format = Date)]
    pub operational_activity_start_date: String,
    pub establishment_type: EstablishmentType,
    pub acquisition_type: AcquisitionType,
    /// Taken from the client company.
    pub name: String,
    /// Taken from the client company.
    pub legal_form: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration_number: Option<String>,
    /// As the request named it, in its canonical form (`Amtsgericht Charlottenburg`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration_court: Option<String>,
    pub business_type: Vec<BusinessType>,
    pub purpose: String,
    pub registered_office: OfficeView,
    pub phone: String,
    pub email: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub industrial_license: Option<IndustrialLicense>,
    pub has_public_sector_participation: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub employees: Option<Employees>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorized_representative: Option<PersonName>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub main_establishment: Option<MainEstablishment>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_business: Option<PreviousBusiness>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub craft_card: Option<CraftCard>,
    /// Field 17: the former establishment of a relocated business (reason
    /// `reopening-after-relocation`), as sent, with its `country`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_establishment: Option<PostalAddress>,
    pub owners: Vec<OwnerView>,
    /// Present once determined: from the establishment's address, with the contact data of
    /// the operator-maintained directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trade_office: Option<TradeOfficeView>,
    /// When the establishment's postal code spans several municipalities and its city did not
    /// decide: the candidate offices (an operator assigns one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trade_office_candidates: Vec<TradeOfficeView>,
    /// Euros.
    pub price: f64,
    /// Euros; present once an operator recorded it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub city_fee: Option<f64>,
    pub is_paid: bool,
    pub documents: Vec<views::DocumentView>,
    /// `gbr` when another product of the provider spawned the case, else null.
    pub source_product: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_reference: Option<String>,
    pub client_preferred_language: Language,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    pub status_history: Vec<views::StatusHistoryEntry>,
}

fn iso(d: time::Date) -> String {
    let f = time::macros::format_description!("[year]-[month]-[day]");
    d.format(&f).unwrap_or_default()
}

/// Read a trade registration
///
/// Reads a trade registration: the provider that created it, the client company it is for,
/// and operators may; anyone else gets 404.
#[utoipa::path(get, path = "/v1/trade-registration/{trade_registration_id}", tag = "trade registration",
    operation_id = "get_trade_registration",
    params(("trade_registration_id" = Uuid, Path, description = "As returned by the create")),
    responses(
        (status = 200, description = "The trade registration, with fresh download links", body = Envelope<TradeRegistrationResponse>),
        CaseNotVisible,
    ))]
pub async fn get(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
) -> Result<Response, ApiError> {
    let case = access::case::<crate::cases::kind::Trade>(&state, caller, id).await?;
    let mut answer = view(&state, &case)?;
    if answer.legal_form == "einzelunternehmen" {
        answer.tax_registration_id = state
            .repo
            .open_case_of_company(domain::case::CaseKind::Tax, case.company_id)
            .await?;
    }
    Ok(respond(StatusCode::OK, answer))
}

/// A trade registration as `GET` answers it.
fn view(
    state: &AppState,
    case: &store::TradeRegistrationRecord,
) -> Result<TradeRegistrationResponse, ApiError> {
    let reg = trade::stored_trade(case)?;
    let verified = &case.identity_verifications;
    let legal_form = case
        .company_legal_form
        .clone()
        .or_else(|| {
            serde_json::to_value(reg.legal_form)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
        })
        .unwrap_or_default();
    Ok(TradeRegistrationResponse {
        result: Outcome::Success,
        message: "trade registration found".into(),
        trade_registration_id: case.id,
        company_id: case.company_id,
        tax_registration_id: None,
        status: case.status.as_str().into(),
        package: reg.package,
        environment: case.environment,
        reason: reg.reason,
        operational_activity_start_date: iso(reg.operational_activity_start_date),
        establishment_type: reg.establishment_type,
        acquisition_type: reg.acquisition_type,
        name: case.company_name.clone().unwrap_or(reg.name.clone()),
        legal_form,
        registration_number: reg.registration_number.clone(),
        registration_court: reg.registration_court.clone(),
        business_type: reg.business_type.clone(),
        purpose: reg.purpose.clone(),
        registered_office: OfficeView {
            office: reg.registered_office.clone(),
            country: "DE".into(),
        },
        phone: reg.phone.clone(),
        email: reg.email.clone(),
        industrial_license: reg.industrial_license.clone(),
        has_public_sector_participation: reg.has_public_sector_participation,
        employees: reg.employees,
        authorized_representative: reg.authorized_representative.clone(),
        main_establishment: reg.main_establishment.clone(),
        previous_business: reg.previous_business.clone(),
        craft_card: reg.craft_card.clone(),
        previous_establishment: reg.previous_establishment.clone(),
        owners: reg
            .owners
            .iter()
            .enumerate()
            .map(|(i, o)| OwnerView {
                first_name: o.first_name.clone(),
                last_name: o.last_name.clone(),
                birth_name: o.birth_name.clone(),
                dob: iso(o.dob),
                place_of_birth: o.place_of_birth.clone(),
                country_of_birth: o.country_of_birth.as_str().into(),
                nationality: o.nationality.as_str().into(),
                other_nationalities: o
                    .other_nationalities
                    .iter()
                    .map(|c| c.as_str().to_owned())
                    .collect(),
                gender: o.gender,
                phone: o.phone.clone(),
                email: o.email.clone(),
                identity_verified_at: verified
                    .iter()
                    .find(|(index, _)| *index as usize == i)
                    .map(|(_, at)| *at),
                address: o.address.clone(),
                residence_permit: o.residence_permit.clone(),
                has_employment_restrictions: o.has_employment_restrictions,
                employment_restriction_details: o.employment_restriction_details.clone(),
            })
            .collect(),
        // The directory entry came with the case (one statement).
        trade_office: case
            .trade_office
            .as_ref()
            .and_then(TradeOfficeView::stored)
            .map(|view| view.with_directory(case.trade_office_entry.clone())),
        trade_office_candidates: case
            .trade_office_candidates
            .as_ref()
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default(),
        price: case.price_cents as f64 / 100.0,
        city_fee: case.city_fee_cents.map(|c| c as f64 / 100.0),
        is_paid: case.is_paid,
        documents: views::document_views(
            state,
            &case.documents,
            case.status == TradeStatus::Cancelled,
        ),
        source_product: case.source_product.clone(),
        client_reference: reg.client_reference.clone(),
        client_preferred_language: reg.client_preferred_language,
        created_at: case.created_at,
        status_history: views::history_views(&case.history),
    })
}

/// Body of `mark-submitted`: optional, `{}` or with a reason.
#[derive(Debug, Default, serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkSubmittedRequest {
    /// Why or how it was filed, for the history: a note of at most 500 characters after
    /// trimming, not blank, no control characters but line breaks and tabs.
    #[serde(default)]
    #[schema(max_length = 500, min_length = 1)]
    pub reason: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TransitionResponse {
    pub result: Outcome,
    pub message: String,
    pub trade_registration_id: Uuid,
    #[schema(example = "submitted")]
    pub status: String,
    #[schema(example = "form-rendered")]
    pub previous_status: String,
}

/// Mark a trade registration as filed by its owners
///
/// The owners filed the GewA 1 themselves: `form-rendered` -> `submitted` (docs/api/lifecycle.md).
#[utoipa::path(post, path = "/v1/trade-registration/{trade_registration_id}/mark-submitted", tag = "trade registration",
    params(("trade_registration_id" = Uuid, Path, description = "As returned by the create")),
    request_body(content = Option<MarkSubmittedRequest>, content_type = "application/json"),
    responses(
        (status = 200, description = "Now submitted", body = Envelope<TransitionResponse>),
        (status = 403, description = "Not the provider's key (`FORBIDDEN`)", body = Envelope<ErrorBody>),
        CaseNotVisible,
        (status = 409, description = "`INVALID_STATE_TRANSITION`: the message names the current status and the allowed ones", body = Envelope<ErrorBody>),
        ValidationFailed,
    ))]
pub async fn mark_submitted(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let input: MarkSubmittedRequest = crate::extract::decode_optional_json(&headers, &body)?;
    let mut errs = Violations::new();
    let reason = input
        .reason
        .and_then(|r| steps::checked_note(r, steps::TRADE_NOTE_MAX, &mut errs));
    errs.finish(())?;
    let moved = steps::mark_submitted(&state, caller, id, reason).await?;
    Ok(respond(
        StatusCode::OK,
        TransitionResponse {
            result: Outcome::Success,
            message: "trade registration marked submitted".into(),
            trade_registration_id: id,
            status: moved.status.as_str().into(),
            previous_status: moved.previous.as_str().into(),
        },
    ))
}

//! `POST /v1/trade-registration` and `GET /v1/trade-registration/{id}` (docs/spec/api.md;
//! docs/spec/decisions.md §2-4, §8).
//!
//! A create validates everything first (every broken rule in one 422), renders the documents,
//! writes the files, then writes the case, its company, documents and history in one
//! transaction. If that transaction fails, the files are removed again: a 201 means all of it is
//! durable, and a failure leaves nothing the service considers live.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use domain::Violations;
use domain::auth::Caller;
use domain::calendar::date_in_germany;
use domain::company::Environment;
use domain::lifecycle::{Lifecycle, TradeStatus};
use domain::trade::{
    AcquisitionType, BusinessType, CraftCard, Employees, EstablishmentType, Gender,
    IndustrialLicense, Language, MainEstablishment, Package, PersonName, PostalAddress,
    PreviousBusiness, Reason, RegisteredOffice, ResidencePermit, ResidentialAddress,
    TradeRegistration,
};
use domain::trade_request::TradeRequest;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use store::{DocumentRecord, NewClientCompany, NewTradeRegistration, StatusChange};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::app::AppState;
use crate::envelope::{Envelope, Outcome, respond};
use crate::error::{ApiError, ErrorBody, ErrorCode};
use crate::extract::{PathId, is_json};
use crate::routes::cases;
use crate::routes::offices::TradeOfficeView;
use crate::uploads::{PartRefused, Spooled};

/// Most parts a multipart create may have: `data` and one signed GewA 1 per owner.
const MAX_PARTS: usize = 1 + domain::trade_request::MAX_OWNERS;

pub const DOC_GEWA1: &str = "trade-licence-application";
pub const DOC_POA: &str = "power-of-attorney";

/// The request as received: the `data` JSON and the file parts, spooled to disk.
struct Received {
    data: Bytes,
    /// `data` parsed, when it was parsed while the parts arrived (a multipart `data` part sent
    /// first, to match the file parts against it); parsed once, by whoever needs it first.
    parsed: Option<Value>,
    files: Vec<Spooled>,
}

/// A 422 for one file part refused while it arrived.
fn refused_part(field: String, code: &str, message: &str) -> ApiError {
    let mut errs = Violations::new();
    errs.push(field, code, message);
    ApiError::Validation(errs)
}

async fn receive(state: &AppState, req: Request) -> Result<Received, ApiError> {
    let max_body = state.config.max_body_bytes;
    let max_upload = state.config.max_upload_bytes;
    if is_json(req.headers()) {
        // The route's limit is sized for uploads; a JSON body gets the JSON limit, enforced
        // while reading rather than after.
        let data = axum::body::to_bytes(req.into_body(), max_body)
            .await
            .map_err(|_| {
                ApiError::PayloadTooLarge(format!("the JSON body is larger than {max_body} bytes"))
            })?;
        return Ok(Received {
            data,
            parsed: None,
            files: Vec::new(),
        });
    }
    if !crate::extract::is_multipart(req.headers()) {
        return Err(ApiError::UnsupportedMediaType(
            "send application/json, or multipart/form-data with a `data` part and the signed PDFs"
                .into(),
        ));
    }
    let mut mp = cases::multipart(req).await?;
    let mut data = None;
    let mut parsed: Option<Value> = None;
    // The parts the payload references, once it has arrived (`data` first is what clients
    // send; parts before it are spooled and judged once it is here).
    let mut refs: Option<Vec<(usize, String)>> = None;
    let mut files: Vec<Spooled> = Vec::new();
    let mut parts = 0;
    while let Some(mut field) = mp.next_field().await.map_err(cases::multipart_error)? {
        parts += 1;
        if parts > MAX_PARTS {
            return Err(ApiError::InvalidMultipart(format!(
                "at most {MAX_PARTS} parts: `data` and one signed GewA 1 per owner"
            )));
        }
        let name = field.name().unwrap_or("").to_string();
        if name.is_empty() {
            return Err(ApiError::InvalidMultipart("every part needs a name".into()));
        }
        if name == "data" {
            if data.is_some() {
                return Err(ApiError::InvalidMultipart(
                    "more than one `data` part".into(),
                ));
            }
            let part = cases::read_part(&mut field, &name, max_body).await?;
            parsed = serde_json::from_slice::<Value>(&part).ok();
            refs = parsed.as_ref().map(referenced_files);
            data = Some(part);
            continue;
        }
        // Refused before a byte of it is read: a second part of a name, a part the payload
        // does not reference.
        if files.iter().any(|f| f.name == name) {
            return Err(ApiError::InvalidMultipart(format!(
                "more than one part named `{name}`"
            )));
        }
        let owner = refs
            .as_ref()
            .map(|r| r.iter().find(|(_, n)| *n == name).map(|(i, _)| *i));
        if owner == Some(None) {
            return Err(refused_part(
                name,
                "unexpected_file",
                "no owner references this part in documents.gewa_1.file (refused unread)",
            ));
        }
        match crate::uploads::spool(&mut field, &name, max_upload, &state.spool_dir).await {
            Ok(spooled) => files.push(spooled),
            Err(PartRefused::NotAPdf) => {
                let field = match owner.flatten() {
                    Some(i) => format!("owners[{i}].documents.gewa_1.file"),
                    None => name,
                };
                return Err(refused_part(
                    field,
                    "not_a_pdf",
                    "must be a signed GewA 1 as PDF: the file does not start with a PDF header",
                ));
            }
            Err(PartRefused::Error(e)) => return Err(e),
        }
    }
    let data = data.ok_or_else(|| {
        ApiError::InvalidMultipart("the multipart body has no `data` part with the JSON".into())
    })?;
    Ok(Received {
        data,
        parsed,
        files,
    })
}

/// `owners[i].documents.gewa_1.file` values as sent, for matching parts even when other rules
/// failed.
fn referenced_files(value: &Value) -> Vec<(usize, String)> {
    value
        .get("owners")
        .and_then(Value::as_array)
        .map(|owners| {
            owners
                .iter()
                .enumerate()
                .filter_map(|(i, o)| {
                    o.pointer("/documents/gewa_1/file")
                        .and_then(Value::as_str)
                        .map(|f| (i, f.to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every part must be referenced, every reference must have its part, and every part must be
/// a PDF (checked within the instance's budget, [`crate::uploads::PdfChecks`]).
async fn check_files(state: &AppState, value: &Value, files: &[Spooled], errs: &mut Violations) {
    let refs = referenced_files(value);
    for (i, name) in &refs {
        if !files.iter().any(|f| f.name == *name) {
            errs.push(
                format!("owners[{i}].documents.gewa_1.file"),
                "missing_file",
                format!("no multipart part named `{name}` was sent"),
            );
        }
    }
    for file in files {
        let Some((i, _)) = refs.iter().find(|(_, n)| *n == file.name) else {
            errs.push(
                file.name.clone(),
                "unexpected_file",
                "no owner references this part in documents.gewa_1.file",
            );
            continue;
        };
        if let Err(problem) = state.pdf_checks.check(file).await {
            errs.push(
                format!("owners[{i}].documents.gewa_1.file"),
                "not_a_pdf",
                format!("must be a signed GewA 1 as PDF: {problem}"),
            );
        }
    }
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

fn display_name(kind: &str, first: &str, last: &str) -> String {
    let what = if kind == DOC_GEWA1 {
        "GewA 1"
    } else {
        "Vollmacht"
    };
    // Names are DIN 91379 text: no path separators or quotes can reach the file name.
    format!("{what} - {first} {last}.pdf")
}

/// One rendered or uploaded document, before it is stored.
struct Produced {
    owner: usize,
    doc_type: &'static str,
    content: Content,
}

/// A document's content: rendered here, or an upload in its spool file.
enum Content {
    Rendered(Bytes),
    Uploaded(Spooled),
}

/// What the GewA 1 prints that is not in the request: the receiving office's name and the
/// establishment's municipality key (the head), and a branch's main office from the company.
#[derive(Debug, Clone, Default)]
struct Head {
    office_name: Option<String>,
    municipality_key: Option<String>,
    main_office: Option<PostalAddress>,
}

fn render_all(
    reg: &TradeRegistration,
    mut uploads: HashMap<String, Spooled>,
    head: Head,
    operator: forms::Operator,
    now: OffsetDateTime,
) -> Result<Vec<Produced>, forms::RenderError> {
    let gewa1_ctx = forms::Gewa1Context {
        trade_office_name: head.office_name,
        municipality_key: head.municipality_key,
        main_office: head.main_office,
        created_on: date_in_germany(now),
        timestamp: now,
    };
    let poa_ctx = forms::PowerOfAttorneyContext {
        operator,
        place: None,
        created_on: date_in_germany(now),
        timestamp: now,
    };
    let mut out = Vec::new();
    for (i, owner) in reg.owners.iter().enumerate() {
        let gewa1 = match &owner.documents.gewa_1 {
            Some(upload) => Content::Uploaded(
                uploads
                    .remove(&upload.file)
                    .ok_or(forms::RenderError::MissingSignature(i))?,
            ),
            None => Content::Rendered(Bytes::from(forms::render_gewa1(reg, i, &gewa1_ctx)?)),
        };
        out.push(Produced {
            owner: i,
            doc_type: DOC_GEWA1,
            content: gewa1,
        });
        if reg.package.needs_power_of_attorney() {
            out.push(Produced {
                owner: i,
                doc_type: DOC_POA,
                content: Content::Rendered(Bytes::from(forms::render_power_of_attorney(
                    reg, i, &poa_ctx,
                )?)),
            });
        }
    }
    Ok(out)
}

/// Writes rendered or uploaded documents of case `case_id` to the document store and returns
/// their records (for the case's write) and storage keys; on a failure, removes what it wrote.
async fn store_produced(
    state: &AppState,
    case_id: Uuid,
    reg: &TradeRegistration,
    produced: Vec<Produced>,
    now: OffsetDateTime,
) -> Result<(Vec<DocumentRecord>, Vec<String>), ApiError> {
    let mut documents = Vec::with_capacity(produced.len());
    let mut written: Vec<String> = Vec::with_capacity(produced.len());
    for p in produced {
        let id = Uuid::now_v7();
        let key = cases::storage_key("trade", id, "pdf", now);
        let owner = &reg.owners[p.owner];
        let (sha256, size, put) = match p.content {
            Content::Rendered(bytes) => (
                Sha256::digest(&bytes).to_vec(),
                bytes.len() as i64,
                state.documents.put(&key, bytes).await,
            ),
            Content::Uploaded(file) => (
                file.sha256.to_vec(),
                file.len as i64,
                state.documents.put_file(&key, &file.path).await,
            ),
        };
        if let Err(e) = put {
            cases::remove_files(state, &written).await;
            return Err(e.into());
        }
        written.push(key.clone());
        documents.push(DocumentRecord {
            id,
            case_id,
            case_kind: "trade".into(),
            owner_index: Some(p.owner as i32),
            doc_type: p.doc_type.into(),
            name: display_name(p.doc_type, &owner.first_name, &owner.last_name),
            storage_key: key,
            content_type: "application/pdf".into(),
            size: Some(size),
            sha256: Some(sha256),
            created_at: now,
        });
    }
    Ok((documents, written))
}

/// The GewA 1 forms of a stored case that the service rendered (not the callers' uploads),
/// rendered again with a new head (`office_name`, `municipality_key`): every other field as at
/// the create, dated the day of the create (when the owners signed), field 16 from the
/// company's stored address for a branch as at the create. The forms whose bytes differ from
/// the case's are written to the document store and returned as [`store_produced`] returns
/// them; a form the new head leaves as it is is not replaced.
pub(crate) async fn rerender_gewa1(
    state: &AppState,
    case: &store::TradeRegistrationRecord,
    office_name: String,
    municipality_key: String,
) -> Result<(Vec<DocumentRecord>, Vec<String>), ApiError> {
    let reg = cases::stored_trade(case)?;
    if reg.owners.iter().all(|o| o.documents.gewa_1.is_some()) {
        return Ok((Vec::new(), Vec::new()));
    }
    let main_office = if reg.establishment_type.is_branch() && reg.business_address.is_none() {
        state
            .repo
            .get_company(case.company_id)
            .await?
            .and_then(|c| c.business_address)
            .and_then(|a| serde_json::from_value::<PostalAddress>(a).ok())
    } else {
        None
    };
    let ctx = forms::Gewa1Context {
        trade_office_name: Some(office_name),
        municipality_key: Some(municipality_key),
        main_office,
        created_on: date_in_germany(case.created_at),
        timestamp: case.created_at,
    };
    let reg_for_render = reg.clone();
    let produced = tokio::task::spawn_blocking(move || {
        let mut out = Vec::new();
        for (i, owner) in reg_for_render.owners.iter().enumerate() {
            if owner.documents.gewa_1.is_none() {
                out.push(Produced {
                    owner: i,
                    doc_type: DOC_GEWA1,
                    content: Content::Rendered(Bytes::from(forms::render_gewa1(
                        &reg_for_render,
                        i,
                        &ctx,
                    )?)),
                });
            }
        }
        Ok::<_, forms::RenderError>(out)
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("rendering panicked: {e}")))?
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("rendering failed: {e}")))?;
    let changed = produced
        .into_iter()
        .filter(|p| match &p.content {
            Content::Rendered(bytes) => {
                !cases::holds_document(&case.documents, Some(p.owner as i32), p.doc_type, bytes)
            }
            Content::Uploaded(_) => true,
        })
        .collect();
    store_produced(state, case.id, &reg, changed, crate::clock::now_micros()).await
}

/// The client company the case is for: an existing one of this provider in the same
/// environment, or a new one described by the request. For a branch naming an existing
/// company, also that company's stored address: its main office (GewA 1 field 16).
async fn resolve_company(
    state: &AppState,
    provider: Uuid,
    request: &TradeRequest,
) -> Result<
    (
        Uuid,
        Option<(Uuid, NewClientCompany)>,
        Option<PostalAddress>,
    ),
    ApiError,
> {
    let reg = &request.registration;
    // The API value (`gmbh-co-kg`), as serde writes it.
    let legal_form = serde_json::to_value(reg.legal_form)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string));
    match request.company_id {
        Some(id) => {
            let company = cases::check_named_company(
                state,
                provider,
                id,
                reg.environment,
                (&reg.name, legal_form.as_deref().unwrap_or_default()),
            )
            .await?;
            // Stored by the create that made the company, in the shape of `business_address`
            // (a tax registration's seat, or a trade request's address).
            let main_office = company
                .business_address
                .filter(|_| reg.establishment_type.is_branch())
                .and_then(|a| serde_json::from_value::<PostalAddress>(a).ok());
            Ok((id, None, main_office))
        }
        None => {
            // The company's address: business_address, else a branch's main establishment,
            // else the establishment itself.
            let main = reg
                .main_establishment
                .as_ref()
                .filter(|_| reg.establishment_type.is_branch())
                .map(|m| &m.address);
            let address = match reg.business_address.as_ref().or(main) {
                Some(a) => serde_json::to_value(a),
                None => {
                    let o = &reg.registered_office;
                    serde_json::to_value(PostalAddress {
                        street: o.street.clone(),
                        street_second_line: o.street_second_line.clone(),
                        zip: o.zip.clone(),
                        city: o.city.clone(),
                        state: None,
                        country: domain::country::CountryCode::DE,
                    })
                }
            }
            .map_err(|e| ApiError::Internal(e.into()))?;
            let id = Uuid::now_v7();
            Ok((
                id,
                Some((
                    id,
                    NewClientCompany {
                        provider_id: provider,
                        name: reg.name.clone(),
                        environment: reg.environment,
                        legal_form,
                        registration_number: reg.registration_number.clone(),
                        business_address: Some(address),
                    },
                )),
                None,
            ))
        }
    }
}

/// Creates a trade registration. The body is `application/json` (the payload), or
/// `multipart/form-data` with the payload in the part `data` and one signed GewA 1 PDF per
/// `owners[i].documents.gewa_1.file`.
#[utoipa::path(post, path = "/v1/trade-registration", tag = "trade registration",
    operation_id = "create_trade_registration",
    request_body(content(
        (TradeRegistrationRequest = "application/json", example = json!(crate::openapi::examples::trade_registration())),
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
        (status = 403, description = "Not a provider key (`FORBIDDEN`)", body = Envelope<ErrorBody>),
        (status = 404, description = "`COMPANY_NOT_FOUND`", body = Envelope<ErrorBody>),
        (status = 409, description = "`COMPANY_ALREADY_REGISTERED`, `ENVIRONMENT_MISMATCH` or `IDEMPOTENCY_KEY_IN_USE`", body = Envelope<ErrorBody>),
        (status = 422, description = "`VALIDATION_FAILED` (every broken field) or `IDEMPOTENCY_KEY_REUSED`", body = Envelope<ErrorBody>),
    ))]
pub async fn create(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    req: Request,
) -> Result<Response, ApiError> {
    let Caller::Provider {
        company_id: provider,
    } = caller
    else {
        return Err(ApiError::Forbidden(
            "only provider keys can create trade registrations".into(),
        ));
    };
    let claim = req.extensions().get::<crate::idempotency::Claim>().cloned();
    let mut received = receive(&state, req).await?;
    let value: Value = match received.parsed.take() {
        Some(value) => value,
        None => serde_json::from_slice(&received.data).map_err(|e| {
            ApiError::InvalidJson(format!(
                "the payload is not well-formed JSON (line {}, column {})",
                e.line(),
                e.column()
            ))
        })?,
    };
    crate::extract::refuse_duplicate_keys(&received.data)?;
    let now = crate::clock::now_micros();
    let mut errs = Violations::new();
    let parsed = match domain::trade_request::parse(&value, date_in_germany(now)) {
        Ok(p) => Some(p),
        Err(v) => {
            errs.extend(v);
            None
        }
    };
    check_files(&state, &value, &received.files, &mut errs).await;
    let request = match parsed {
        Some(p) if errs.is_empty() => p,
        _ => return Err(ApiError::Validation(errs)),
    };
    let (company_id, new_company, main_office) =
        resolve_company(&state, provider, &request).await?;
    let reg = request.registration;
    let (trade_office, trade_office_candidates, mut head) =
        determine_trade_office(&state, &reg.registered_office).await?;
    head.main_office = main_office;

    // Render (CPU work) off the async threads.
    let uploads: HashMap<String, Spooled> = received
        .files
        .into_iter()
        .map(|f| (f.name.clone(), f))
        .collect();
    let operator = state.config.operator.clone();
    let reg_for_render = reg.clone();
    let produced = tokio::task::spawn_blocking(move || {
        render_all(&reg_for_render, uploads, head, operator, now)
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("rendering panicked: {e}")))?
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("rendering failed: {e}")))?;

    let case_id = Uuid::now_v7();
    let (documents, written) = store_produced(&state, case_id, &reg, produced, now).await?;

    // Every case passes through `initiated`; the package decides the next status.
    let status = TradeStatus::Initiated
        .transition(reg.package.first_status())
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("lifecycle table: {e}")))?
        .as_str();
    let package = reg.package.as_str();
    let price_cents = match reg.package {
        Package::SelfService => state.config.price_self_cents,
        Package::Assisted => state.config.price_assisted_cents,
    };
    let unix = now.unix_timestamp();
    let link = |d: &DocumentRecord| OwnerDocument {
        id: d.id,
        name: d.name.clone(),
        download_url: state.links.url(d.id, unix),
    };
    let owners = reg
        .owners
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let find = |t: &str| {
                documents
                    .iter()
                    .find(|d| d.owner_index == Some(i as i32) && d.doc_type == t)
                    .map(link)
            };
            CreatedOwner {
                first_name: o.first_name.clone(),
                last_name: o.last_name.clone(),
                documents: OwnerDocuments {
                    gewa_1: find(DOC_GEWA1),
                    power_of_attorney: find(DOC_POA),
                },
            }
        })
        .collect();
    // The answer is made before the transaction: under an Idempotency-Key it commits with the
    // case (store::IdempotentAnswer).
    let (answer, response) = crate::idempotency::prepare(
        &state.answer_keys,
        claim.as_ref(),
        StatusCode::CREATED,
        CreateResponse {
            result: Outcome::Success,
            message: match reg.package {
                Package::SelfService => {
                    "trade registration created; the GewA 1 forms are ready to sign and file".into()
                }
                Package::Assisted => {
                    "trade registration created and submitted; we file it with the trade office"
                        .into()
                }
            },
            company_id,
            trade_registration_id: case_id,
            status: status.into(),
            owners,
            client_reference: reg.client_reference.clone(),
            client_preferred_language: reg.client_preferred_language,
            timestamp: now,
        },
    )?;
    let new = NewTradeRegistration {
        id: case_id,
        new_company,
        company_id,
        provider_id: provider,
        environment: reg.environment,
        package: package.into(),
        status: status.into(),
        record: serde_json::to_value(&reg).map_err(|e| ApiError::Internal(e.into()))?,
        price_cents,
        trade_office,
        trade_office_candidates,
        created_at: now,
        documents,
        history: vec![
            StatusChange {
                status: TradeStatus::Initiated.as_str().into(),
                previous_status: None,
                actor: format!("provider:{provider}"),
                reason: None,
                at: now,
            },
            StatusChange {
                status: status.into(),
                previous_status: Some(TradeStatus::Initiated.as_str().into()),
                actor: "system".into(),
                reason: None,
                at: now,
            },
        ],
        idempotency: answer,
    };
    if let Err(e) = state.repo.create_trade_registration(&new).await {
        cases::remove_files(&state, &written).await;
        if e.is_company_conflict() {
            return Err(ApiError::Conflict {
                code: ErrorCode::CompanyAlreadyRegistered,
                message: "this company already has a trade registration".into(),
            });
        }
        if matches!(e, store::StoreError::IdempotencyClaimLost) {
            return Ok(crate::idempotency::claim_lost());
        }
        return Err(e.into());
    }
    state.wake_webhooks();
    tracing::info!(trade_registration_id = %case_id, %company_id, status, "trade registration created");
    Ok(response)
}

/// Determines the receiving trade office from the establishment's address (domain::offices);
/// the head of the GewA 1 takes the directory's name for it when the directory has one.
async fn determine_trade_office(
    state: &AppState,
    office: &RegisteredOffice,
) -> Result<(Option<Value>, Option<Value>, Head), ApiError> {
    use domain::offices::TradeOfficeLookup;
    Ok(
        match domain::offices::trade_office_at(&office.zip, &office.city, &office.street) {
            TradeOfficeLookup::Found { office } => {
                let entry = match state.trade_offices.get(office.key) {
                    Some(entry) => entry,
                    None => {
                        let entry = state.repo.get_trade_office(office.key).await?;
                        state.trade_offices.put(office.key, entry.clone());
                        entry
                    }
                };
                let view = TradeOfficeView::from_ref(&office);
                let head = Head {
                    office_name: Some(entry.map(|e| e.name).unwrap_or_else(|| view.name.clone())),
                    municipality_key: Some(view.municipality_key.clone()),
                    main_office: None,
                };
                (Some(to_json(&view)?), None, head)
            }
            TradeOfficeLookup::Ambiguous { candidates } => {
                let views: Vec<TradeOfficeView> =
                    candidates.iter().map(TradeOfficeView::from_ref).collect();
                (None, Some(to_json(&views)?), Head::default())
            }
            // Berlin or Hamburg without its district: the city, and so the head's
            // Gemeindekennzahl, is certain; the office waits for an operator.
            TradeOfficeLookup::DistrictNotDetermined { candidates, .. } => {
                let views: Vec<TradeOfficeView> =
                    candidates.iter().map(TradeOfficeView::from_ref).collect();
                let head = Head {
                    office_name: None,
                    municipality_key: candidates.first().map(|c| c.municipality_key.to_string()),
                    main_office: None,
                };
                (None, Some(to_json(&views)?), head)
            }
            TradeOfficeLookup::NotFound => (None, None, Head::default()),
        },
    )
}

fn to_json<T: Serialize>(v: &T) -> Result<Value, ApiError> {
    serde_json::to_value(v).map_err(|e| ApiError::Internal(e.into()))
}

/// The request payload, for the OpenAPI document (the server validates it field by field into
/// the domain model, reporting every broken rule).
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct TradeRegistrationRequest {
    /// An existing client company of the caller (omit to create one).
    company_id: Option<Uuid>,
    /// The registration's fields sit next to `company_id` (api.md), not under a key of their own.
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
pub struct DocumentView {
    pub id: Uuid,
    /// `trade-licence-application`, `power-of-attorney` or `trade-licence`.
    #[serde(rename = "type")]
    pub doc_type: String,
    pub name: String,
    pub download_url: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StatusHistoryEntry {
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_status: Option<String>,
    /// `provider:<id>`, `operator:<id>` or `system`.
    pub actor: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub at: OffsetDateTime,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TradeRegistrationResponse {
    pub result: Outcome,
    pub message: String,
    pub trade_registration_id: Uuid,
    pub company_id: Uuid,
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
    pub documents: Vec<DocumentView>,
    /// `gbr` when another product of the provider spawned the case, else null.
    pub source_product: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_reference: Option<String>,
    pub client_preferred_language: Language,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    pub status_history: Vec<StatusHistoryEntry>,
}

fn iso(d: time::Date) -> String {
    let f = time::macros::format_description!("[year]-[month]-[day]");
    d.format(&f).unwrap_or_default()
}

/// Reads a trade registration: the provider that created it, the client company it is for,
/// and operators may; anyone else gets 404.
#[utoipa::path(get, path = "/v1/trade-registration/{trade_registration_id}", tag = "trade registration",
    operation_id = "get_trade_registration",
    params(("trade_registration_id" = Uuid, Path, description = "As returned by the create")),
    responses(
        (status = 200, description = "The trade registration, with fresh download links", body = Envelope<TradeRegistrationResponse>),
        (status = 404, description = "No such case visible to the caller (`NOT_FOUND`)", body = Envelope<ErrorBody>),
    ))]
pub async fn get(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
) -> Result<Response, ApiError> {
    let case = state
        .repo
        .get_trade_registration(id)
        .await?
        .ok_or(ApiError::NotFound)?;
    cases::ensure_visible(caller, case.provider_id, case.company_id)?;
    let reg = cases::stored_trade(&case)?;
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
    let body = TradeRegistrationResponse {
        result: Outcome::Success,
        message: "trade registration found".into(),
        trade_registration_id: case.id,
        company_id: case.company_id,
        status: case.status.clone(),
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
        documents: cases::document_views(&state, &case.documents),
        source_product: case.source_product.clone(),
        client_reference: reg.client_reference.clone(),
        client_preferred_language: reg.client_preferred_language,
        created_at: case.created_at,
        status_history: cases::history_views(&case.history),
    };
    Ok(respond(StatusCode::OK, body))
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

/// The owners filed the GewA 1 themselves: `form-rendered` -> `submitted` (docs/api/lifecycle.md).
#[utoipa::path(post, path = "/v1/trade-registration/{trade_registration_id}/mark-submitted", tag = "trade registration",
    params(("trade_registration_id" = Uuid, Path, description = "As returned by the create")),
    request_body(content = Option<MarkSubmittedRequest>, content_type = "application/json"),
    responses(
        (status = 200, description = "Now submitted", body = Envelope<TransitionResponse>),
        (status = 403, description = "Not the provider's key (`FORBIDDEN`)", body = Envelope<ErrorBody>),
        (status = 404, description = "No such case visible to the caller (`NOT_FOUND`)", body = Envelope<ErrorBody>),
        (status = 409, description = "`INVALID_STATE_TRANSITION`: the message names the current status and the allowed ones", body = Envelope<ErrorBody>),
        (status = 422, description = "`VALIDATION_FAILED`", body = Envelope<ErrorBody>),
    ))]
pub async fn mark_submitted(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathId(id): PathId,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let input: MarkSubmittedRequest = crate::extract::decode_optional_json(&headers, &body)?;
    let reason = match input.reason {
        None => None,
        Some(r) => {
            let mut errs = Violations::new();
            let r = domain::rules::note(
                &Value::from(r),
                "reason",
                crate::routes::transitions::TRADE_NOTE_MAX,
                &mut errs,
            );
            errs.finish(r)?
        }
    };
    let case = state
        .repo
        .get_trade_registration(id)
        .await?
        .ok_or(ApiError::NotFound)?;
    cases::ensure_visible(caller, case.provider_id, case.company_id)?;
    let Caller::Provider {
        company_id: provider,
    } = caller
    else {
        return Err(ApiError::Forbidden(
            "only the provider that created the case marks it submitted".into(),
        ));
    };
    let current: TradeStatus = cases::stored_status(&case.status)?;
    // The provider's action exists only from form-rendered (the table's other way into
    // submitted, from initiated, is the create's own step).
    if current != TradeStatus::FormRendered {
        return Err(ApiError::Conflict {
            code: ErrorCode::InvalidStateTransition,
            message: {
                let allowed: Vec<&str> = current.next().iter().map(|s| s.as_str()).collect();
                if allowed.is_empty() {
                    format!(
                        "the case is {} (final); mark-submitted is only possible from form-rendered",
                        current.as_str()
                    )
                } else {
                    format!(
                        "the case is {}; it can become {} (through an operator), and mark-submitted is only possible from form-rendered",
                        current.as_str(),
                        allowed.join(" or ")
                    )
                }
            },
        });
    }
    let to = current
        .transition(TradeStatus::Submitted)
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("lifecycle table: {e}")))?;
    let change = StatusChange {
        status: to.as_str().into(),
        previous_status: Some(current.as_str().into()),
        actor: format!("provider:{provider}"),
        reason,
        at: crate::clock::now_micros(),
    };
    cases::move_case(
        &state,
        store::CaseKind::Trade,
        id,
        current.as_str(),
        &change,
        &[],
        &store::CaseFields::default(),
    )
    .await?;
    Ok(respond(
        StatusCode::OK,
        TransitionResponse {
            result: Outcome::Success,
            message: "trade registration marked submitted".into(),
            trade_registration_id: id,
            status: to.as_str().into(),
            previous_status: current.as_str().into(),
        },
    ))
}

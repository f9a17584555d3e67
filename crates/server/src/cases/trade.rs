//! Creating a trade registration: everything after the request arrived. It validates
//! everything first (every broken rule in one 422), determines the trade office, renders the
//! documents, writes the files, then writes the case, its company, documents and history in one
//! transaction. If that transaction fails, the files are removed again: a 201 means all of it is
//! durable, and a failure leaves nothing the service considers live.

use std::collections::HashMap;

use axum::body::Bytes;
use domain::Violations;
use domain::calendar::date_in_germany;
use domain::case::DocumentType;
use domain::lifecycle::{Lifecycle, TradeStatus};
use domain::trade::{Gewa1Form, Package, PostalAddress, RegisteredOffice, TradeRegistration};
use domain::trade_request::TradeRequest;
use serde::Serialize;
use serde_json::Value;
use store::{
    DocumentRecord, IdempotentAnswer, NewClientCompany, NewTradeRegistration, StatusChange,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::cases::documents::{self, Digested};
use crate::cases::offices::TradeOfficeView;
use crate::cases::{Written, access};
use crate::error::ApiError;
use crate::state::AppState;
use crate::uploads::Spooled;

/// A create as received: the payload (well-formed JSON without duplicate keys) and the file
/// parts, spooled to disk.
pub struct TradeSubmission {
    pub value: Value,
    pub files: Vec<Spooled>,
}

/// What a create made, for its answer.
#[derive(Debug)]
pub struct CreatedTrade {
    pub case_id: Uuid,
    pub company_id: Uuid,
    /// Where the package took the case (`TradeStatus::Initiated` was its first step).
    pub status: TradeStatus,
    pub registration: TradeRegistration,
    pub documents: Vec<DocumentRecord>,
    pub at: OffsetDateTime,
}

/// The stored request of a trade case as its domain type, read from the record in place (no copy
/// of the JSON tree: the copy was a tenth of a GET's CPU on PostgreSQL).
pub fn stored_trade(case: &store::TradeRegistrationRecord) -> Result<TradeRegistration, ApiError> {
    serde::Deserialize::deserialize(&case.record)
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("stored record unreadable: {e}")))
}

/// Creates a trade registration for `provider` from a received request. `answer` makes the
/// create's answer from what it made, before the transaction, and returns what to keep for an
/// `Idempotency-Key` (committed with the case).
pub async fn create_trade(
    state: &AppState,
    creator: access::Creator,
    submission: TradeSubmission,
    answer: impl FnOnce(&CreatedTrade) -> Result<Option<IdempotentAnswer>, ApiError>,
) -> Result<Written<CreatedTrade>, ApiError> {
    let TradeSubmission { value, files } = submission;
    let provider = creator.provider;
    let now = crate::clock::now_micros();
    let mut errs = Violations::new();
    let parsed = match domain::trade_request::parse(&value, date_in_germany(now)) {
        Ok(p) => Some(p),
        Err(v) => {
            errs.extend(v);
            None
        }
    };
    crate::uploads::check_files(&state.pdf_checks, &value, &files, &FILES, &mut errs).await;
    let request = match parsed {
        Some(p) if errs.is_empty() => p,
        _ => return Err(ApiError::Validation(errs)),
    };
    let operator = operator_for(state, &request.registration)?;
    let (company_id, new_company, main_office) = resolve_company(state, creator, &request).await?;
    let reg = request.registration;
    let (trade_office, trade_office_candidates, mut head) =
        determine_trade_office(state, &reg.registered_office).await?;
    head.main_office = main_office;

    // Render (CPU work) off the async threads.
    let uploads: HashMap<String, Spooled> =
        files.into_iter().map(|f| (f.name.clone(), f)).collect();
    let reg_for_render = reg.clone();
    let produced = tokio::task::spawn_blocking(move || {
        render_all(&reg_for_render, uploads, head, operator, now)
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("rendering panicked: {e}")))?
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("rendering failed: {e}")))?;

    let case_id = Uuid::now_v7();
    let (documents, written) = store_produced(state, case_id, &reg, produced, now).await?;

    // Every case passes through `initiated`; the package decides the next status.
    let status = TradeStatus::Initiated
        .transition(reg.package.initial_status())
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("lifecycle table: {e}")))?;
    let price_cents = match reg.package {
        Package::SelfService => state.config.price_self_cents,
        Package::Assisted => state.config.price_assisted_cents,
    };
    let mut created = CreatedTrade {
        case_id,
        company_id,
        status,
        registration: reg,
        documents,
        at: now,
    };
    // The answer is made before the transaction: under an Idempotency-Key it commits with the
    // case (store::IdempotentAnswer).
    let idempotency = answer(&created)?;
    let reg = &created.registration;
    let new = NewTradeRegistration {
        head: store::CaseHead {
            id: case_id,
            company_id,
            provider_id: provider,
            environment: reg.environment,
            package: reg.package,
            status,
            record: serde_json::to_value(reg).map_err(|e| ApiError::Internal(e.into()))?,
            created_at: now,
            documents: std::mem::take(&mut created.documents),
            history: vec![
                StatusChange::created(TradeStatus::Initiated, provider, now),
                StatusChange::step(
                    status,
                    Some(TradeStatus::Initiated.into()),
                    domain::lifecycle::Actor::System,
                    None,
                    now,
                ),
            ],
        },
        new_company,
        price_cents,
        trade_office,
        trade_office_candidates,
        idempotency,
    };
    let written_case = state.repo.create_trade_registration(&new).await;
    created.documents = new.head.documents;
    if let Err(e) = written_case {
        documents::remove_files(state, &written).await;
        if e.is_company_conflict() {
            let kind = domain::case::CaseKind::Trade;
            return Err(crate::cases::cancel::already_registered(state, kind, company_id).await);
        }
        if matches!(e, store::StoreError::IdempotencyClaimLost) {
            return Ok(Written::ClaimLost);
        }
        return Err(e.into());
    }
    state.wake_webhooks();
    state
        .metrics
        .case_created(domain::case::CaseKind::Trade, new.head.environment);
    tracing::info!(trade_registration_id = %case_id, %company_id, status = status.as_str(), "trade registration created");
    Ok(Written::Created(created))
}

/// The trade create's files: one signed GewA 1 per owner (a legal person's one, for the
/// company), in the part its `documents.gewa_1.file` names; each at most
/// `FILING_MAX_UPLOAD_BYTES` (`max_file` is set from it where the body is read).
pub const FILES: crate::uploads::FileParts = crate::uploads::FileParts {
    max_parts: 1 + domain::trade_request::MAX_OWNERS,
    max_file: usize::MAX,
    refs: referenced_files,
    what: "one signed GewA 1 per owner",
    named_by: "documents.gewa_1.file",
    document: "a signed GewA 1",
};

/// `owners[i].documents.gewa_1.file` values as sent, as `(field, part)`, for matching parts
/// even when other rules failed.
pub fn referenced_files(value: &Value) -> Vec<(String, String)> {
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
                        .map(|f| (format!("owners[{i}].documents.gewa_1.file"), f.to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The attorney an `assisted` case's powers of attorney name: the configured operator. A
/// production one is refused (503 `SERVICE_NOT_CONFIGURED`, nothing written) while the
/// operator's name and address are not configured, as no production document may carry a
/// placeholder (docs/api/trade-registration.md, "The operator in the power of attorney"); a
/// sandbox one names the sandbox placeholder under the sandbox mark.
fn operator_for(
    state: &AppState,
    reg: &TradeRegistration,
) -> Result<Option<forms::Operator>, ApiError> {
    let operator = state.config.operator.clone();
    if operator.is_none()
        && reg.package.needs_power_of_attorney()
        && reg.environment == domain::company::Environment::Production
    {
        return Err(ApiError::NotConfigured(
            "production assisted trade registrations are refused until the service's operator \
             is configured: FILING_OPERATOR_NAME and FILING_OPERATOR_ADDRESS name the attorney \
             in every power of attorney (sandbox cases and the self package work meanwhile)",
        ));
    }
    Ok(operator)
}

/// A document's display name: the GewA 1 or power of attorney of an owner ("GewA 1 - Erika
/// Mustermann.pdf"), or the company's one GewA 1 of a legal person ("GewA 1 - Spree Datenwerk
/// GmbH.pdf").
fn display_name(kind: DocumentType, reg: &TradeRegistration, owner: Option<usize>) -> String {
    let what = if kind == DocumentType::TradeLicenceApplication {
        "GewA 1"
    } else {
        "Vollmacht"
    };
    // Names are DIN 91379 text: no path separators or quotes can reach the file name.
    match owner.and_then(|i| reg.owners.get(i)) {
        Some(o) => format!("{what} - {} {}.pdf", o.first_name, o.last_name),
        None => format!("{what} - {}.pdf", reg.name),
    }
}

/// One rendered or uploaded document, before it is stored: an owner's, or the company's (a
/// legal person's one GewA 1).
struct Produced {
    owner: Option<usize>,
    doc_type: DocumentType,
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
    operator: Option<forms::Operator>,
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
    let poa = reg.package.needs_power_of_attorney();
    let forms = reg.gewa1_forms();
    let mut out = Vec::new();
    for i in 0..reg.owners.len() {
        // Each Anmeldung after its first owner (a legal person's one after owners[0]), each
        // power of attorney after its owner's form.
        if let Some(form) = forms.iter().find(|f| f.owner() == i) {
            let content = match &reg.owners[i].documents.gewa_1 {
                Some(upload) => Content::Uploaded(
                    uploads
                        .remove(&upload.file)
                        .ok_or(forms::RenderError::MissingSignature(i))?,
                ),
                None => Content::Rendered(Bytes::from(forms::render_gewa1_form(
                    reg, form, &gewa1_ctx,
                )?)),
            };
            out.push(Produced {
                owner: form.document_owner(),
                doc_type: DocumentType::TradeLicenceApplication,
                content,
            });
        }
        if poa {
            out.push(Produced {
                owner: Some(i),
                doc_type: DocumentType::PowerOfAttorney,
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
    let mut records = Vec::with_capacity(produced.len());
    let mut written: Vec<String> = Vec::with_capacity(produced.len());
    for p in produced {
        let name = display_name(p.doc_type, reg, p.owner);
        let digest = match &p.content {
            Content::Rendered(bytes) => Digested::of(bytes),
            Content::Uploaded(file) => Digested {
                size: file.len as i64,
                sha256: file.sha256.to_vec(),
            },
        };
        let doc = documents::record(
            case_id,
            p.doc_type,
            p.owner.map(|i| i as i32),
            name,
            "pdf",
            Some(digest),
            now,
        );
        let put = match p.content {
            Content::Rendered(bytes) => state.documents.put(&doc.storage_key, bytes).await,
            Content::Uploaded(file) => state.documents.put_file(&doc.storage_key, &file.path).await,
        };
        if let Err(e) = put {
            documents::remove_files(state, &written).await;
            return Err(e.into());
        }
        written.push(doc.storage_key.clone());
        records.push(doc);
    }
    Ok((records, written))
}

/// The GewA 1 forms of a stored case that the service rendered (not the callers' uploads),
/// rendered again with a new head (`office_name`, `municipality_key`): every other field as at
/// the create, dated the day of the create (when the owners signed), field 16 from the
/// company's stored address for a branch as at the create. Each stored form keeps the shape it
/// was created in: a legal person's case from before 2026-12-01 holds one form per owner and
/// gets them again ([`Gewa1Form::single`]). The forms whose bytes differ from the case's are
/// written to the document store and returned as [`store_produced`] returns them; a form the
/// new head leaves as it is is not replaced.
pub async fn rerender_gewa1(
    state: &AppState,
    case: &store::TradeRegistrationRecord,
    office_name: String,
    municipality_key: String,
) -> Result<(Vec<DocumentRecord>, Vec<String>), ApiError> {
    let reg = stored_trade(case)?;
    let forms = stored_forms(&reg, &case.documents);
    if forms.is_empty() {
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
        forms
            .iter()
            .map(|form| {
                Ok(Produced {
                    owner: form.document_owner(),
                    doc_type: DocumentType::TradeLicenceApplication,
                    content: Content::Rendered(Bytes::from(forms::render_gewa1_form(
                        &reg_for_render,
                        form,
                        &ctx,
                    )?)),
                })
            })
            .collect::<Result<Vec<_>, forms::RenderError>>()
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("rendering panicked: {e}")))?
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("rendering failed: {e}")))?;
    let changed = produced
        .into_iter()
        .filter(|p| match &p.content {
            Content::Rendered(bytes) => !documents::holds_document(
                &case.documents,
                p.owner.map(|i| i as i32),
                p.doc_type,
                bytes,
            ),
            Content::Uploaded(_) => true,
        })
        .collect();
    store_produced(state, case.id, &reg, changed, crate::clock::now_micros()).await
}

/// The Anmeldungen a stored case's GewA 1 documents stand for that the service rendered: the
/// company's form for a document of no owner, an owner's own form for an owner's document (a
/// legal person's case from before 2026-12-01 has those), each once; the forms whose first
/// owner uploaded his signed form are left out.
fn stored_forms(reg: &TradeRegistration, documents: &[DocumentRecord]) -> Vec<Gewa1Form> {
    let mut forms: Vec<Gewa1Form> = Vec::new();
    for d in documents
        .iter()
        .filter(|d| d.doc_type == DocumentType::TradeLicenceApplication)
    {
        let form = match d.owner_index {
            Some(i) => Gewa1Form::single(i as usize),
            None => match reg.gewa1_forms().into_iter().find(|f| f.company) {
                Some(form) => form,
                None => continue,
            },
        };
        let uploaded = reg
            .owners
            .get(form.owner())
            .is_none_or(|o| o.documents.gewa_1.is_some());
        if !uploaded && !forms.contains(&form) {
            forms.push(form);
        }
    }
    forms
}

/// The client company the case is for: an existing one of this provider in the same
/// environment, or a new one described by the request. For a branch naming an existing
/// company, also that company's stored address: its main office (GewA 1 field 16).
async fn resolve_company(
    state: &AppState,
    creator: access::Creator,
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
            let company = access::check_named_company(
                state,
                creator,
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
            let (id, company) = access::new_company(
                creator.provider,
                (&reg.name, reg.environment),
                legal_form,
                reg.registration_number.as_deref(),
                Ok(address),
            )?;
            Ok((id, company, None))
        }
    }
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

pub(crate) fn to_json<T: Serialize>(v: &T) -> Result<Value, ApiError> {
    serde_json::to_value(v).map_err(|e| ApiError::Internal(e.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_directors() -> TradeRegistration {
        serde_json::from_value(domain::rule_cases::example("two-directors")).unwrap()
    }

    fn form_document(owner: Option<i32>) -> DocumentRecord {
        documents::record(
            Uuid::now_v7(),
            DocumentType::TradeLicenceApplication,
            owner,
            "GewA 1.pdf".into(),
            "pdf",
            None,
            crate::clock::now_micros(),
        )
    }

    /// A legal person's case re-renders the one form it holds; one stored before 2026-12-01
    /// holds one per owner and keeps that shape; uploads are never rendered.
    #[test]
    fn stored_forms_keep_the_shape_they_were_created_in() {
        let reg = two_directors();
        let company = reg.gewa1_forms();
        assert_eq!(company.len(), 1);
        assert_eq!(stored_forms(&reg, &[form_document(None)]), company);
        assert_eq!(
            stored_forms(&reg, &[form_document(Some(0)), form_document(Some(1))]),
            [Gewa1Form::single(0), Gewa1Form::single(1)]
        );
        let mut uploaded = reg.clone();
        uploaded.owners[0].documents.gewa_1 = Some(domain::trade::UploadedDocument {
            file: "gewa1_company".into(),
        });
        assert_eq!(stored_forms(&uploaded, &[form_document(None)]), []);
        // Another document type stands for no form.
        let mut poa = form_document(Some(0));
        poa.doc_type = DocumentType::PowerOfAttorney;
        assert_eq!(stored_forms(&reg, &[poa]), []);
    }
}

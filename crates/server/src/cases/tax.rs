//! Creating a tax registration, for a UG or GmbH and for a GbR or eGbR: every step after the
//! request's own parser works on [`AnyTaxRegistration`]. A create resolves the tax office (sent,
//! or determined from the company's seat), writes the ELSTER XML and validates it against the
//! bundled XSD, stores it, and then writes the case in one transaction, with the record of the
//! German summary PDF, which is rendered from the stored case on its first download
//! ([`render_summary`]). When no office can be determined the case is still validated and waits
//! for an operator to assign one ([`assign_office`]); its XML is written then.

use std::sync::Arc;

use axum::body::Bytes;
use domain::calendar::date_in_germany;
use domain::case::DocumentType;
use domain::company::Environment;
use domain::lifecycle::TaxStatus;
use domain::offices::TaxOfficeLookup;
use domain::tax::{AnyTaxRegistration, PostalAddress};
use serde_json::Value;
use store::{DocumentRecord, IdempotentAnswer, NewClientCompany, NewTaxRegistration, StatusChange};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::cases::documents::{self, Digested};
use crate::cases::kinds::{self, ParsedTaxRequest};
use crate::cases::{Written, access};
use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;
use crate::uploads::Spooled;

/// What a create made, for its answer.
#[derive(Debug)]
pub struct CreatedTax {
    /// The id the provider knows the case by (`tax_registration_id`).
    pub public_id: Uuid,
    pub company_id: Uuid,
    pub status: TaxStatus,
    /// The tax office, when sent or determined.
    pub office: Option<String>,
    /// Whether the ELSTER XML was written (an office, and a manufacturer id where needed).
    pub has_xml: bool,
    pub at: OffsetDateTime,
}

/// Whose payload a tax create reads: a UG's or GmbH's, or a GbR's or eGbR's. Only the parsing
/// differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaxPayload {
    /// `domain::tax_request`.
    Corporation,
    /// `domain::gbr_request`.
    Partnership,
    /// `domain::sole_proprietor_request`.
    SoleProprietor,
}

pub use domain::tax::MAX_ATTACHMENT_BYTES;

/// Creates a tax registration from its payload (`body`) and its spooled attachments
/// (`files`, a corporation's only), parsed as `payload` says; `answer` as for
/// [`crate::cases::trade::create_trade`].
pub async fn create_tax(
    state: &AppState,
    creator: access::Creator,
    payload: TaxPayload,
    body: &Value,
    files: Vec<Spooled>,
    answer: impl FnOnce(&CreatedTax) -> Result<Option<IdempotentAnswer>, ApiError>,
) -> Result<Written<CreatedTax>, ApiError> {
    let now = crate::clock::now_micros();
    let today = date_in_germany(now);
    let request = match payload {
        TaxPayload::Corporation => kinds::corporation::parse(state, body, &files, today).await?,
        TaxPayload::Partnership => kinds::partnership::parse(body, today)?,
        TaxPayload::SoleProprietor => {
            kinds::sole_proprietor::parse(state, creator, body, today).await?
        }
    };
    create_case(state, creator, request, files, now, answer).await
}

/// Everything after validation, for either kind: the id, the company, the office, the
/// documents (written and XSD-validated off the async threads), and one transaction, which
/// under an `Idempotency-Key` also completes `claim` with the answer.
async fn create_case(
    state: &AppState,
    creator: access::Creator,
    request: ParsedTaxRequest,
    files: Vec<Spooled>,
    now: OffsetDateTime,
    answer: impl FnOnce(&CreatedTax) -> Result<Option<IdempotentAnswer>, ApiError>,
) -> Result<Written<CreatedTax>, ApiError> {
    let provider = creator.provider;
    // Ids are unique per provider (docs/adr/0006-case-ids-per-provider.md): one of the caller's
    // own cases with the id is a duplicate; another provider's case with it as its key gives
    // this case a key of its own, and nothing the caller sees differs.
    let public_id = request.tax_registration_id.unwrap_or_else(Uuid::now_v7);
    let mut id = public_id;
    if request.tax_registration_id.is_some() {
        let used = state
            .repo
            .tax_registration_id_use(provider, public_id)
            .await?;
        if used.by_provider {
            return Err(duplicate_id());
        }
        if used.as_key {
            id = Uuid::now_v7();
        }
    }
    let (company_id, new_company) = resolve_company(state, creator, &request).await?;
    let reg = request.registration;
    // The family's rule decides: the place of management or seat of a company, the residence
    // of a natural person (kinds::TaxFamily::office_lookup).
    let (office, lookup) = resolve_tax_office(&reg)?;
    // The attachments as the XML carries them, and their spool files to store.
    let uploads = sent_attachments(&reg, files).await?;
    let attachments: Vec<elster::Attachment> = uploads.iter().map(|(a, _, _)| a.clone()).collect();

    let elster_config = state.config.elster.clone();
    let (reg_for_docs, office_for_docs) = (reg.clone(), office.clone());
    let produced = tokio::task::spawn_blocking(move || {
        produce(
            &reg_for_docs,
            public_id,
            office_for_docs.as_deref(),
            &elster_config,
            &attachments,
        )
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("document generation panicked: {e}")))??;

    let (mut documents, mut written) = store_produced(state, id, reg.name(), produced, now).await?;
    for (attachment, doc_type, file) in uploads {
        let name = format!("{} - {}.pdf", attachment.name, reg.name());
        let doc = documents::record(
            id,
            doc_type,
            None,
            name,
            "pdf",
            Some(Digested {
                size: file.len as i64,
                sha256: file.sha256.to_vec(),
            }),
            now,
        );
        if let Err(e) = state.documents.put_file(&doc.storage_key, &file.path).await {
            documents::remove_files(state, &written).await;
            return Err(e.into());
        }
        written.push(doc.storage_key.clone());
        documents.push(doc);
    }
    let created = CreatedTax {
        public_id,
        company_id,
        status: TaxStatus::Validated,
        office: office.clone(),
        has_xml: documents
            .iter()
            .any(|d| d.doc_type == DocumentType::TaxRegistrationXml),
        at: now,
    };
    let idempotency = answer(&created)?;
    let mut new = NewTaxRegistration {
        head: store::CaseHead {
            id,
            company_id,
            provider_id: provider,
            environment: reg.environment(),
            package: reg.package(),
            status: TaxStatus::Validated,
            record: reg.to_record().map_err(|e| ApiError::Internal(e.into()))?,
            created_at: now,
            documents,
            history: vec![StatusChange::created(TaxStatus::Validated, provider, now)],
        },
        public_id,
        new_company,
        legal_form: reg.legal_form(),
        tax_office_number: office.clone(),
        tax_office_lookup: lookup,
        idempotency,
    };
    let mut written_case = state.repo.create_tax_registration(&new).await;
    if new.id == public_id && matches!(&written_case, Err(e) if e.is_case_key_conflict()) {
        // Another provider's create took the id as its key since the check: this case takes
        // a key of its own (the documents name their case by key; the files stay as written).
        let key = Uuid::now_v7();
        new.id = key;
        for d in &mut new.documents {
            d.case_id = key;
        }
        written_case = state.repo.create_tax_registration(&new).await;
    }
    if let Err(e) = written_case {
        documents::remove_files(state, &written).await;
        return match e {
            store::StoreError::IdempotencyClaimLost => Ok(Written::ClaimLost),
            e if e.is_company_conflict() => {
                let kind = domain::case::CaseKind::Tax;
                Err(crate::cases::cancel::already_registered(state, kind, company_id).await)
            }
            store::StoreError::Conflict(_) => Err(duplicate_id()),
            other => Err(other.into()),
        };
    }
    state.wake_webhooks();
    state
        .metrics
        .case_created(domain::case::CaseKind::Tax, new.environment);
    tracing::info!(tax_registration_id = %public_id, case_id = %new.id, %company_id, legal_form = reg.legal_form().as_str(), office = ?office, "tax registration validated");
    Ok(Written::Created(created))
}

fn duplicate_id() -> ApiError {
    ApiError::Conflict {
        code: ErrorCode::DuplicateId,
        message: "one of your tax registrations has this tax_registration_id".into(),
    }
}

/// The client company: an existing one of this provider in the same environment, or one to
/// create from the request.
async fn resolve_company(
    state: &AppState,
    creator: access::Creator,
    request: &ParsedTaxRequest,
) -> Result<(Uuid, Option<(Uuid, NewClientCompany)>), ApiError> {
    let reg = &request.registration;
    if let Some(id) = request.company_id {
        access::check_named_company(
            state,
            creator,
            id,
            reg.environment(),
            (reg.name(), reg.legal_form().as_str()),
        )
        .await?;
        return Ok((id, None));
    }
    let address: &PostalAddress = request.business_address.as_ref().unwrap_or(reg.address());
    access::new_company(
        creator.provider,
        (reg.name(), reg.environment()),
        Some(reg.legal_form().as_str().into()),
        reg.registration_number(),
        serde_json::to_value(address),
    )
}

/// The office: as sent, or determined from `address` (the address that decides: the seat, or
/// the place of management where it differs, § 20 AO), the legal form and whether the company
/// is a holding (never guessed: an office that needs confirmation is left for an operator,
/// with the determination's suggestions, the likeliest first; a determination keeps its
/// basis).
fn resolve_tax_office(
    reg: &AnyTaxRegistration,
) -> Result<(Option<String>, Option<Value>), ApiError> {
    if let Some(n) = reg.tax_office_number() {
        return Ok((Some(n.to_owned()), None));
    }
    let Some(lookup) = kinds::of(reg).office_lookup() else {
        return Ok((None, None));
    };
    let json = serde_json::to_value(&lookup).map_err(|e| ApiError::Internal(e.into()))?;
    Ok(match lookup {
        TaxOfficeLookup::Determined { office, .. } => (Some(office.number.to_string()), Some(json)),
        _ => (None, Some(json)),
    })
}

/// A generated file: document type, file extension, bytes.
pub type Produced = (DocumentType, &'static str, Vec<u8>);

/// The document type and the designation (`Dateibezeichnung`) of each attachment kind.
fn attachment_kind(field: &str) -> (DocumentType, &'static str) {
    match field {
        "articles_of_association" => (DocumentType::ArticlesOfAssociation, "Gesellschaftsvertrag"),
        "shareholder_list" => (DocumentType::ShareholderList, "Gesellschafterliste"),
        _ => (DocumentType::SepaMandate, "SEPA-Lastschriftmandat"),
    }
}

/// The attachments from the spooled parts the request names, in filing order (a
/// corporation's; other families name none): each as the XML carries it, its document type
/// and its spool file.
async fn sent_attachments(
    reg: &AnyTaxRegistration,
    mut files: Vec<Spooled>,
) -> Result<Vec<(elster::Attachment, DocumentType, Spooled)>, ApiError> {
    let mut out = Vec::new();
    for (field, part) in kinds::of(reg).attachment_parts() {
        let Some(i) = files.iter().position(|f| f.name == part) else {
            return Err(ApiError::Internal(anyhow::anyhow!(
                "attachment part {part} checked but gone"
            )));
        };
        let file = files.swap_remove(i);
        let bytes = tokio::fs::read(&file.path).await.map_err(|e| {
            ApiError::Internal(anyhow::anyhow!("reading a spooled attachment: {e}"))
        })?;
        let (doc_type, name) = attachment_kind(field);
        out.push((
            elster::Attachment {
                name: name.to_owned(),
                content_type: "application/pdf".to_owned(),
                bytes,
            },
            doc_type,
            file,
        ));
    }
    Ok(out)
}

/// The attachments a stored case holds, read from the document store, as the XML carries
/// them (an office assigned later writes the XML with them again).
async fn stored_attachments(
    state: &AppState,
    case: &store::TaxRegistrationRecord,
) -> Result<Vec<elster::Attachment>, ApiError> {
    let mut out = Vec::new();
    for field in domain::tax::Attachments::FIELDS {
        let (doc_type, name) = attachment_kind(field);
        let Some(doc) = case.documents.iter().find(|d| d.doc_type == doc_type) else {
            continue;
        };
        let bytes = state
            .documents
            .get(&doc.storage_key)
            .await?
            .ok_or_else(|| {
                ApiError::Internal(anyhow::anyhow!(
                    "attachment {} of the case is missing from the document store",
                    doc.id
                ))
            })?;
        out.push(elster::Attachment {
            name: name.to_owned(),
            content_type: "application/pdf".to_owned(),
            bytes: bytes.to_vec(),
        });
    }
    Ok(out)
}

/// The ELSTER XML (validated against the bundled XSD) when the office is known and the document
/// may carry a manufacturer id (production only with the operator's own:
/// [`crate::cases::tax_xml`]). A document that fails its own schema is a server bug: 500,
/// logged, nothing stored. The summary PDF is not produced here: it is recorded with the case
/// and rendered on its first download ([`render_summary`]).
pub fn produce(
    reg: &AnyTaxRegistration,
    public_id: Uuid,
    office: Option<&str>,
    elster: &crate::config::ElsterConfig,
    attachments: &[elster::Attachment],
) -> Result<Vec<Produced>, ApiError> {
    let mut out = Vec::new();
    let sandbox = reg.environment() == Environment::Sandbox;
    if let Some(number) = office
        && let Some(hersteller_id) = elster.hersteller_id_for(sandbox)
    {
        let ctx = elster::XmlContext {
            tax_office_number: number.to_string(),
            sandbox,
            hersteller_id: hersteller_id.to_owned(),
            daten_lieferant: elster.daten_lieferant.clone(),
            nutzdaten_ticket: public_id.simple().to_string()[..15].to_string(),
        };
        // FsE_KapG for a corporation, FsE_PersG for a partnership.
        let xml = kinds::of(reg).write_xml(&ctx, attachments).map_err(|e| {
            tracing::error!(tax_registration_id = %public_id, error = %e, "generated ELSTER XML is invalid");
            ApiError::Internal(anyhow::anyhow!("ELSTER XML generation failed: {e}"))
        })?;
        out.push((DocumentType::TaxRegistrationXml, "xml", xml));
    }
    Ok(out)
}

/// The answers the case's XML does not carry (`elster_xml.not_in_xml`; the summary's last
/// section).
pub fn not_in_xml(reg: &AnyTaxRegistration) -> Vec<elster::ManualEntry> {
    kinds::of(reg).not_in_xml()
}

/// The German summary PDF of a tax registration as it stands in `case`, dated `at` (when its
/// document was recorded). Rendering is deterministic: the same case and time give the same
/// bytes, so concurrent first downloads store identical files.
pub fn render_summary(
    case: &store::TaxRegistrationRecord,
    at: OffsetDateTime,
) -> Result<Vec<u8>, ApiError> {
    let mut reg = AnyTaxRegistration::from_stored(case.legal_form, case.record.clone())
        .map_err(|e| ApiError::Internal(anyhow::anyhow!(e)))?;
    let office = case.tax_office_number.as_deref();
    if let Some(number) = office {
        // As the XML: the office the case is filed with (sent, determined or assigned).
        reg.set_tax_office_number(number.to_string());
    }
    let summary_ctx = forms::TaxSummaryContext {
        not_in_xml: not_in_xml(&reg)
            .into_iter()
            .map(|e| forms::ManualRow {
                place: match &e.line {
                    Some(line) => format!("{}, Zeile {line}", e.sub_page),
                    None => e.sub_page.clone(),
                },
                field: e.field,
                value: e.value,
            })
            .collect(),
        tax_office: office
            .and_then(domain::offices::tax_office)
            .map(|o| (o.number.to_string(), o.display_name())),
        created_on: date_in_germany(at),
        timestamp: at,
    };
    kinds::of(&reg)
        .render_summary(&summary_ctx)
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("summary PDF failed: {e}")))
}

/// Writes generated files to the document store; on a failure the ones written are removed.
/// Returns the document records and the keys written.
async fn store_produced(
    state: &AppState,
    id: Uuid,
    company: &str,
    produced: Vec<Produced>,
    now: OffsetDateTime,
) -> Result<(Vec<DocumentRecord>, Vec<String>), ApiError> {
    let mut records = Vec::new();
    let mut written = Vec::new();
    for (doc_type, ext, bytes) in produced {
        let name = display_name(doc_type, company, ext);
        let doc = documents::record(
            id,
            doc_type,
            None,
            name,
            ext,
            Some(Digested::of(&bytes)),
            now,
        );
        if let Err(e) = state
            .documents
            .put(&doc.storage_key, Bytes::from(bytes))
            .await
        {
            documents::remove_files(state, &written).await;
            return Err(e.into());
        }
        written.push(doc.storage_key.clone());
        records.push(doc);
    }
    // The summary is recorded now and rendered on its first download.
    let summary = DocumentType::TaxRegistrationSummary;
    let name = display_name(summary, company, "pdf");
    records.push(documents::record(id, summary, None, name, "pdf", None, now));
    Ok((records, written))
}

fn display_name(doc_type: DocumentType, company: &str, ext: &str) -> String {
    let what = if doc_type == DocumentType::TaxRegistrationXml {
        "Fragebogen zur steuerlichen Erfassung"
    } else {
        "Fragebogen zur steuerlichen Erfassung - Zusammenfassung"
    };
    format!("{what} - {company}.{ext}")
}

/// Assigns tax office `number` (checked against the directory) to a validated or rejected tax
/// registration: its XML is written for that office and XSD-validated, the summary re-rendered,
/// and the old files replaced in one write, with a `documents.updated` event; nothing is
/// written when the case already holds that XML. A write that changes the office records it in
/// the case's history (the old and new office) by `by`, the service itself (`system`) when
/// `None`, in the same transaction. Shared by the operator, the sandbox and the writer of
/// pending XML.
pub async fn assign_office(
    state: &Arc<AppState>,
    case: &store::TaxRegistrationRecord,
    number: &str,
    by: Option<domain::lifecycle::Actor>,
) -> Result<(), ApiError> {
    let number = number.trim().to_string();
    if !domain::offices::is_known_tax_office(&number) {
        return Err(ApiError::validation(
            "tax_office_number",
            "unknown_tax_office",
            "is not a 4-digit office number of the tax office directory",
        ));
    }
    let (id, public_id) = (case.id, case.public_id);
    // A corporation's or a partnership's record: its XML is FsE_KapG or FsE_PersG.
    let mut reg =
        domain::tax::AnyTaxRegistration::from_stored(case.legal_form, case.record.clone())
            .map_err(|e| ApiError::Internal(anyhow::anyhow!(e)))?;
    reg.set_tax_office_number(number.clone());
    let now = crate::clock::now_micros();
    let elster = state.config.elster.clone();
    let (reg_for_docs, office) = (reg.clone(), number.clone());
    let attachments = stored_attachments(state, case).await?;
    let produced = tokio::task::spawn_blocking(move || {
        // The XML's ticket is made from the id the provider knows (as at the create).
        produce(
            &reg_for_docs,
            public_id,
            Some(&office),
            &elster,
            &attachments,
        )
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("document generation panicked: {e}")))??;
    let allowed = [TaxStatus::Validated, TaxStatus::Rejected];
    let conflict = || ApiError::Conflict {
        code: ErrorCode::InvalidStateTransition,
        message: "the tax office can only be assigned while the case is validated or rejected"
            .into(),
    };
    // The XML the case already holds (it names the office, so this is the case's office
    // again): nothing to replace and nothing to announce, as for a trade office that leaves
    // the forms as they are. The summary, dated when it was recorded, stays too.
    // Without an XML to write (production without a manufacturer id), the case's own office
    // again changes nothing either.
    let unchanged = if produced.is_empty() {
        case.tax_office_number.as_deref() == Some(number.as_str())
    } else {
        produced.iter().all(|(doc_type, _, bytes)| {
            documents::holds_document(&case.documents, None, *doc_type, bytes)
        })
    };
    if unchanged {
        return if allowed.contains(&case.status) {
            Ok(())
        } else {
            Err(conflict())
        };
    }
    let (documents, written) = store_produced(state, id, reg.name(), produced, now).await?;
    match state
        .repo
        .assign_tax_office(
            id,
            &number,
            &allowed,
            &documents,
            by.unwrap_or(domain::lifecycle::Actor::System),
        )
        .await
    {
        Ok(Some(replaced)) => {
            // Its `documents.updated` event is in the outbox.
            state.wake_webhooks();
            documents::remove_files(state, &replaced).await;
        }
        Ok(None) => {
            documents::remove_files(state, &written).await;
            return Err(conflict());
        }
        Err(e) => {
            documents::remove_files(state, &written).await;
            return Err(e.into());
        }
    }
    Ok(())
}

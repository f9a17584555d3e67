//! A sole proprietor's tax registration (`POST /v1/tax-registration/sole-proprietor`): the
//! FsE_EUn, decided by the residence (§ 19 AO), without attachments; optionally filled from the
//! owner's own trade registration.

use domain::offices::TaxOfficeLookup;
use domain::sole_proprietor::SoleProprietorTaxRegistration;
use serde_json::{Map, Value, json};
use time::Date;
use uuid::Uuid;

use super::{ParsedTaxRequest, TaxFamily, office_address};
use crate::cases::access::Creator;
use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;

/// The request (`domain::sole_proprietor_request`): every broken rule in one 422. With
/// `trade_registration_id`, what the request leaves out of the person, the business and the
/// activity is taken from that trade registration first ([`from_trade_registration`]).
pub(crate) async fn parse(
    state: &AppState,
    creator: Creator,
    body: &Value,
    today: Date,
) -> Result<ParsedTaxRequest, ApiError> {
    let linked = match body.get("trade_registration_id").and_then(Value::as_str) {
        Some(id) => match Uuid::parse_str(id) {
            Ok(id) => Some(from_trade_registration(state, creator, body, id).await?),
            // Reported by the parser with every other broken field.
            Err(_) => None,
        },
        None => None,
    };
    let body = linked.as_ref().unwrap_or(body);
    let r =
        domain::sole_proprietor_request::parse(body, today, &domain::offices::is_known_tax_office)?;
    Ok(parsed!(r, SoleProprietor))
}

/// `body` completed from the trade registration `id`: a sole trader's (`einzelunternehmen`, one
/// owner) of the calling provider, else 404 (as an unknown one; a restricted key sees its own
/// environment's only). The company is the trade registration's (a `company_id` naming another
/// is 404 too), and so is the environment (another one sent is 409 `ENVIRONMENT_MISMATCH`);
/// the name, activity, business address, start and the owner's person, residence and contact are
/// taken where the request does not send them. What a trade registration does not hold (the
/// religion, the marital status, the estimates, VAT ...) the request sends as always.
async fn from_trade_registration(
    state: &AppState,
    creator: Creator,
    body: &Value,
    id: Uuid,
) -> Result<Value, ApiError> {
    let trade = state
        .repo
        .get_trade_registration(id)
        .await?
        .filter(|t| t.provider_id == creator.provider)
        .filter(|t| creator.key_environment.is_none_or(|e| e == t.environment))
        .ok_or(ApiError::NotFound)?;
    let record = &trade.record;
    let owners = record.get("owners").and_then(Value::as_array);
    let sole_trader = record.get("legal_form").and_then(Value::as_str) == Some("einzelunternehmen")
        && owners.is_some_and(|o| o.len() == 1);
    if !sole_trader {
        return Err(ApiError::validation(
            "trade_registration_id",
            "not_a_sole_trader",
            "names a trade registration that is not a sole trader's (legal_form einzelunternehmen, one owner)",
        ));
    }
    let mut out = body.as_object().cloned().unwrap_or_default();
    match out.get("company_id").and_then(Value::as_str) {
        Some(company) if Uuid::parse_str(company).ok() != Some(trade.company_id) => {
            return Err(ApiError::NotFound);
        }
        _ => {
            out.insert("company_id".into(), json!(trade.company_id));
        }
    }
    let environment = trade.environment.as_str();
    match out.get("environment").and_then(Value::as_str) {
        Some(sent) if sent != environment => {
            return Err(ApiError::Conflict {
                code: ErrorCode::EnvironmentMismatch,
                message: format!(
                    "the trade registration is a {environment} case; the request is for {sent}"
                ),
            });
        }
        _ => {
            out.insert("environment".into(), json!(environment));
        }
    }
    let office = record.get("registered_office").cloned().map(|mut o| {
        if let Some(o) = o.as_object_mut() {
            o.insert("country".into(), json!("DE"));
        }
        o
    });
    let fill = |out: &mut Map<String, Value>, field: &str, value: Option<Value>| {
        if let Some(v) = value
            && !out.contains_key(field)
        {
            out.insert(field.to_owned(), v);
        }
    };
    fill(&mut out, "legal_form", Some(json!("einzelunternehmen")));
    fill(&mut out, "activity_kind", Some(json!("trade")));
    fill(&mut out, "name", record.get("name").cloned());
    fill(&mut out, "purpose", record.get("purpose").cloned());
    fill(&mut out, "address", office.clone());
    fill(
        &mut out,
        "operational_activity_start_date",
        record.get("operational_activity_start_date").cloned(),
    );
    let owner = owners.and_then(|o| o.first()).cloned().unwrap_or_default();
    let mut person = match out.remove("owner") {
        Some(Value::Object(sent)) => sent,
        // Not an object: left for the parser to refuse.
        Some(other) => {
            out.insert("owner".into(), other);
            return Ok(Value::Object(out));
        }
        None => Map::new(),
    };
    for field in [
        "first_name",
        "last_name",
        "birth_name",
        "dob",
        "phone",
        "email",
    ] {
        fill(&mut person, field, owner.get(field).cloned());
    }
    // The owner lives at the establishment when the trade registration has no residence.
    fill(
        &mut person,
        "address",
        owner.get("address").cloned().or(office),
    );
    let salutation = match owner.get("gender").and_then(Value::as_str) {
        Some("male") => Some(json!("mr")),
        Some("female") => Some(json!("ms")),
        _ => None,
    };
    fill(&mut person, "salutation", salutation);
    out.insert("owner".into(), Value::Object(person));
    Ok(Value::Object(out))
}

impl TaxFamily for SoleProprietorTaxRegistration {
    fn office_lookup(&self) -> Option<TaxOfficeLookup> {
        domain::offices::natural_person_office(
            office_address(&self.owner.address),
            office_address(&self.address),
        )
    }

    fn attachment_parts(&self) -> Vec<(&'static str, &str)> {
        Vec::new()
    }

    fn write_xml(
        &self,
        ctx: &elster::XmlContext,
        _attachments: &[elster::Attachment],
    ) -> Result<Vec<u8>, elster::XmlError> {
        elster::write_eun_validated(self, ctx)
    }

    fn not_in_xml(&self) -> Vec<elster::ManualEntry> {
        elster::eun_not_in_xml(self)
    }

    fn render_summary(
        &self,
        ctx: &forms::TaxSummaryContext,
    ) -> Result<Vec<u8>, forms::RenderError> {
        forms::render_sole_proprietor_tax_summary(self, ctx)
    }
}

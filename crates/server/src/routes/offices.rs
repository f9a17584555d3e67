//! Which authority receives a filing: trade office and tax office lookups for integrators
//! (`GET /v1/trade-offices`, `GET /v1/tax-offices`, `GET /v1/tax-offices/{number}`), and the
//! operator-maintained trade office directory (`/v1/operator/trade-offices`).

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use domain::Violations;
use domain::auth::Caller;
use domain::offices::{TaxOfficeLookup, TradeOfficeLookup};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use store::TradeOfficeEntry;
use utoipa::openapi::Required;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::{IntoParams, ToSchema};

pub use crate::cases::offices::{TradeOfficeView, directory_entry};
use crate::envelope::{Envelope, Outcome, respond};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{ApiJson, ApiQuery};
use crate::openapi::responses::{OperatorForbidden, ValidationFailed};
use crate::state::AppState;

/// The trade office lookup's address (documented by [`address_params`]).
#[derive(Debug, Deserialize)]
pub struct AddressQuery {
    pub zip: Option<String>,
    pub city: Option<String>,
    pub street: Option<String>,
}

impl IntoParams for AddressQuery {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        address_params(
            "City; decides between municipalities that share the postal code (at most 72 characters,\nno control characters).",
            "Street and house number on one line (`Karl-Marx-Allee 31`): in Berlin it decides the\ndistrict (Bezirk), and with it the trade office and a corporation's tax office (at most\n72 characters, no control characters).",
        )
    }
}

/// The query parameters `zip`, `city` and `street` of both lookups, the city and the street
/// described in the lookup's words: the postal code is required (5 digits), the city and the
/// street are at most 72 characters without control characters.
fn address_params(city: &str, street: &str) -> Vec<Parameter> {
    let param = |name: &str, required: Required, description: &str, schema: ObjectBuilder| {
        ParameterBuilder::new()
            .name(name)
            .parameter_in(ParameterIn::Query)
            .required(required)
            .description(Some(description))
            .schema(Some(schema.schema_type(Type::String)))
            .build()
    };
    let printable = || {
        ObjectBuilder::new()
            .max_length(Some(72))
            .pattern(Some(r"^[^\u0000-\u001F\u007F-\u009F]*$"))
    };
    vec![
        param(
            "zip",
            Required::True,
            "German postal code (5 digits).",
            ObjectBuilder::new().pattern(Some("^[0-9]{5}$")),
        ),
        param("city", Required::False, city, printable()),
        param("street", Required::False, street, printable()),
    ]
}

/// The tax office lookup's address (documented by [`address_params`]) and what the rules ask
/// of the company.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TaxOfficeQueryParams {
    #[param(ignore)]
    pub zip: Option<String>,
    #[param(ignore)]
    pub city: Option<String>,
    #[param(ignore)]
    pub street: Option<String>,
    /// `ug`, `gmbh` (the default), `gbr`, `egbr` or `einzelunternehmen`: Berlin, München and
    /// Stuttgart send corporations and partnerships to different offices; a sole proprietor's
    /// address is read as the residence (§ 19 AO; the create also weighs the business's
    /// address, docs/api/tax-registration-sole-proprietor.md).
    #[param(value_type = Option<String>, pattern = "^(ug|gmbh|gbr|egbr|einzelunternehmen)$")]
    pub legal_form: Option<String>,
    /// `true` for a holding (a group company), which Berlin assigns by the group's industry.
    pub is_holding: Option<bool>,
}

fn address(q: &AddressQuery) -> Result<(String, String), ApiError> {
    let mut errs = Violations::new();
    checked_street(q.street.as_deref(), &mut errs);
    // Checked as sent (the document's pattern), not trimmed first.
    let zip = q.zip.as_deref().unwrap_or("");
    if zip.is_empty() {
        errs.push("zip", "required", "is required");
    } else if !(zip.len() == 5 && zip.bytes().all(|b| b.is_ascii_digit())) {
        errs.push(
            "zip",
            "invalid_zip",
            "must be a German postal code of 5 digits",
        );
    }
    let city = q.city.as_deref().unwrap_or("");
    if city.chars().count() > 72 || city.chars().any(char::is_control) {
        errs.push(
            "city",
            "invalid_value",
            "must be at most 72 printable characters",
        );
    }
    // As the creates: a postal code that does not exist, or a city of another postal code, is
    // refused, never answered from one half of the address (docs/api/offices.md).
    if errs.is_empty() {
        let street = q.street.as_deref().unwrap_or("").trim();
        domain::offices::check_address(zip, city.trim(), street).push_violations(
            ("zip", "city"),
            (zip, city.trim()),
            &mut errs,
        );
    }
    errs.finish((zip.to_string(), city.trim().to_string()))
        .map_err(ApiError::Validation)
}

fn checked_street(street: Option<&str>, errs: &mut Violations) {
    if let Some(s) = street
        && (s.chars().count() > 72 || s.chars().any(char::is_control))
    {
        errs.push(
            "street",
            "invalid_value",
            "must be at most 72 printable characters",
        );
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TradeOfficeLookupResponse {
    pub result: Outcome,
    pub message: String,
    /// `found`, `ambiguous` (the postal code spans several municipalities and the city did not
    /// decide, or the city may name another municipality), or `district_not_determined`
    /// (Berlin or Hamburg: a district office receives the notice and the address does not
    /// decide which; see `reason`). An unknown postal code or a city of another postal code is
    /// a 422, as at the trade create.
    #[schema(example = "found")]
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub office: Option<TradeOfficeView>,
    /// With `ambiguous`: one office per candidate municipality; with `district_not_determined`:
    /// the district offices, the likeliest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<TradeOfficeView>,
    /// With `district_not_determined`: why (`street_not_in_register`,
    /// `house_number_not_in_register`, `no_house_number`, `no_district_data`) and in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub reason: Option<Value>,
}

/// Find the trade office for an address
///
/// The trade office that receives a trade registration for an establishment at this address.
#[utoipa::path(get, path = "/v1/trade-offices", tag = "offices", params(AddressQuery),
    responses(
        (status = 200, description = "The office or the candidates", body = Envelope<TradeOfficeLookupResponse>),
        (status = 422, description = "`VALIDATION_FAILED`: zip missing or not 5 digits, no German postal code (`unknown_postal_code`), or a city that names another municipality than the postal code's (`city_not_in_postal_code`)", body = Envelope<ErrorBody>),
    ))]
pub async fn lookup_trade_office(
    State(state): State<Arc<AppState>>,
    ApiQuery(q): ApiQuery<AddressQuery>,
) -> Result<Response, ApiError> {
    let (zip, city) = address(&q)?;
    let street = q.street.as_deref().unwrap_or("").trim();
    let repo = state.repo.as_ref();
    let mut reason = None;
    let (status, office, candidates) = match domain::offices::trade_office_at(&zip, &city, street) {
        TradeOfficeLookup::Found { office } => {
            let entry = repo.get_trade_office(office.key).await?;
            (
                "found",
                Some(TradeOfficeView::from_ref(&office).with_directory(entry)),
                vec![],
            )
        }
        TradeOfficeLookup::Ambiguous { candidates } => {
            let mut views = Vec::with_capacity(candidates.len());
            for c in &candidates {
                let entry = repo.get_trade_office(c.key).await?;
                views.push(TradeOfficeView::from_ref(c).with_directory(entry));
            }
            ("ambiguous", None, views)
        }
        TradeOfficeLookup::DistrictNotDetermined { cause, candidates } => {
            let mut views = Vec::with_capacity(candidates.len());
            for c in &candidates {
                let entry = repo.get_trade_office(c.key).await?;
                views.push(TradeOfficeView::from_ref(c).with_directory(entry));
            }
            reason = Some(serde_json::json!({"code": cause, "message": cause.message()}));
            ("district_not_determined", None, views)
        }
        TradeOfficeLookup::NotFound => ("not_found", None, vec![]),
    };
    Ok(respond(
        StatusCode::OK,
        TradeOfficeLookupResponse {
            result: Outcome::Success,
            message: match status {
                "found" => "trade office determined".into(),
                "ambiguous" => "the address spans several municipalities; pick one".into(),
                "district_not_determined" => {
                    "a district office receives the notice and the address does not decide which; pick one".into()
                }
                _ => "no municipality with this postal code".into(),
            },
            status: status.into(),
            office,
            candidates,
            reason,
        },
    ))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TaxOfficeLookupResponse {
    pub result: Outcome,
    pub message: String,
    /// `status`: `determined` (with `office`, `municipalities` and `basis`: the rule, its
    /// source, the source's date and kind), `needs_confirmation` (with `reasons` and clearly
    /// marked `suggestions`, the likeliest first; never a guess). The same determination as a
    /// tax registration's create for this address and legal form; an unknown postal code or a
    /// city of another postal code is a 422, as at the create.
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub lookup: TaxOfficeLookup,
}

/// The address parameters of the tax office lookup, ahead of the rest of
/// [`TaxOfficeQueryParams`].
pub struct TaxOfficeAddress;

impl IntoParams for TaxOfficeAddress {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        address_params(
            "City (at most 72 characters, no control characters).",
            "Street and house number on one line: in Berlin it decides the district (at most 72\ncharacters, no control characters).",
        )
    }
}

/// Find the tax office for an address
///
/// The tax office of a company seated at this address.
#[utoipa::path(get, path = "/v1/tax-offices", tag = "offices", params(TaxOfficeAddress, TaxOfficeQueryParams),
    responses(
        (status = 200, description = "The office, or why a person must confirm it", body = Envelope<TaxOfficeLookupResponse>),
        (status = 422, description = "`VALIDATION_FAILED`: zip missing or not 5 digits, no German postal code (`unknown_postal_code`), a city that names another municipality than the postal code's (`city_not_in_postal_code`), city or street too long or with control characters, an unknown legal_form (each broken parameter named)", body = Envelope<ErrorBody>),
    ))]
pub async fn lookup_tax_office(
    ApiQuery(q): ApiQuery<TaxOfficeQueryParams>,
) -> Result<Response, ApiError> {
    let family = match q.legal_form.as_deref().map(str::trim) {
        None | Some("ug" | "gmbh") => Some(domain::offices::LegalFamily::Corporation),
        Some("gbr" | "egbr") => Some(domain::offices::LegalFamily::Partnership),
        Some("einzelunternehmen") => Some(domain::offices::LegalFamily::NaturalPerson),
        Some(_) => None,
    };
    let (zip, city) = match address(&AddressQuery {
        zip: q.zip.clone(),
        city: q.city.clone(),
        street: q.street.clone(),
    }) {
        // Every broken parameter at once.
        Err(ApiError::Validation(mut errs)) => {
            if family.is_none() {
                errs.push(
                    "legal_form",
                    "invalid_value",
                    "must be one of: ug, gmbh, gbr, egbr, einzelunternehmen",
                );
            }
            return Err(ApiError::Validation(errs));
        }
        other => other?,
    };
    let Some(family) = family else {
        return Err(ApiError::validation(
            "legal_form",
            "invalid_value",
            "must be one of: ug, gmbh, gbr, egbr, einzelunternehmen",
        ));
    };
    let lookup = domain::offices::tax_office_at(&domain::offices::TaxOfficeQuery {
        address: domain::offices::OfficeAddress {
            zip: &zip,
            city: &city,
            street: q.street.as_deref().map(str::trim),
        },
        family,
        group: q.is_holding.unwrap_or(false),
    });
    let message = match &lookup {
        TaxOfficeLookup::Determined { .. } => "tax office determined",
        TaxOfficeLookup::NeedsConfirmation { .. } => {
            "the tax office must be confirmed by a person; see reasons"
        }
        TaxOfficeLookup::NotFound => "no municipality with this postal code",
    };
    Ok(respond(
        StatusCode::OK,
        TaxOfficeLookupResponse {
            result: Outcome::Success,
            message: message.into(),
            lookup,
        },
    ))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TaxOfficeResponse {
    pub result: Outcome,
    pub message: String,
    /// The full name, e.g. "Finanzamt Trier".
    pub display_name: String,
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub office: &'static domain::offices::TaxOffice,
}

/// Read a tax office
///
/// A tax office of the bundled directory by its 4-digit number.
#[utoipa::path(get, path = "/v1/tax-offices/{number}", tag = "offices",
    params(("number" = String, Path, description = "4-digit office number (BUFA)", pattern = "^[0-9]{4}$")),
    responses(
        (status = 200, description = "The office", body = Envelope<TaxOfficeResponse>),
        (status = 404, description = "No office with this number (`NOT_FOUND`)", body = Envelope<ErrorBody>),
    ))]
pub async fn get_tax_office(Path(number): Path<String>) -> Result<Response, ApiError> {
    let office = domain::offices::tax_office(&number).ok_or(ApiError::NotFound)?;
    Ok(respond(
        StatusCode::OK,
        TaxOfficeResponse {
            result: Outcome::Success,
            message: "tax office found".into(),
            display_name: office.display_name(),
            office,
        },
    ))
}

/// A register court (Registergericht) as `registration_court` accepts it.
#[derive(Debug, Serialize, ToSchema)]
pub struct RegisterCourtItem {
    /// What `registration_court` stores and the GewA 1 prints.
    #[schema(example = "Amtsgericht Charlottenburg")]
    pub name: String,
    /// The place alone, also accepted by `registration_court`.
    #[schema(example = "Charlottenburg")]
    pub place: &'static str,
    /// The court's code in the XUnternehmen code list "Registergerichte" (also accepted).
    #[schema(example = "F1103R")]
    pub code: Option<&'static str>,
    /// The Land, two letters.
    #[schema(example = "BE")]
    pub land: &'static str,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RegisterCourtsResponse {
    pub result: Outcome,
    pub message: String,
    pub courts: Vec<RegisterCourtItem>,
}

/// List the register courts
///
/// The German register courts a trade registration's `registration_court` may name (GewA 1
/// field 2), from the XUnternehmen code list "Registergerichte" (version 12, XRepository);
/// sorted by place. A court is named by `name`, `place` or `code`, case-insensitively.
#[utoipa::path(get, path = "/v1/register-courts", tag = "offices",
    responses(
        (status = 200, description = "Every register court", body = Envelope<RegisterCourtsResponse>),
    ))]
pub async fn list_register_courts() -> Response {
    let courts = domain::register_court::all()
        .iter()
        .map(|c| RegisterCourtItem {
            name: c.name(),
            place: c.place,
            code: c.code,
            land: c.land,
        })
        .collect::<Vec<_>>();
    respond(
        StatusCode::OK,
        RegisterCourtsResponse {
            result: Outcome::Success,
            message: format!("{} register courts", courts.len()),
            courts,
        },
    )
}

// ---- operator directory -------------------------------------------------------------------

use crate::cases::access::operator_only;

/// Checks a directory key: an 8-digit AGS, a 9-digit Gemeindeverband key, or the key of a
/// district office of Berlin or Hamburg.
pub fn valid_office_key(key: &str) -> bool {
    ((key.len() == 8 || key.len() == 9) && key.bytes().all(|b| b.is_ascii_digit()))
        || domain::offices::district::district(key).is_some()
}

/// The editable fields of a directory entry.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TradeOfficeInput {
    pub name: String,
    #[serde(default)]
    pub address: Option<String>,
    #[serde(default)]
    pub email: Option<String>,
    #[serde(default)]
    pub phone: Option<String>,
    #[serde(default)]
    pub website: Option<String>,
}

impl TradeOfficeInput {
    /// Validates into an entry; every broken field at once, with `prefix` before each path.
    pub fn into_entry(self, key: &str, prefix: &str) -> Result<TradeOfficeEntry, Violations> {
        use domain::din91379::TextType;
        use domain::rules;
        let mut errs = Violations::new();
        let p = |f: &str| format!("{prefix}{f}");
        if !valid_office_key(key) {
            errs.push(
                p("key"),
                "invalid_value",
                "must be an 8-digit municipality key, a 9-digit Gemeindeverband key or a district office key of Berlin or Hamburg (1100000001 to 1100000012, 0200000001 to 0200000007)",
            );
        }
        let name = rules::text(
            &Value::from(self.name),
            &p("name"),
            200,
            TextType::B,
            &mut errs,
        );
        let opt = |v: Option<String>, field: &str, errs: &mut Violations| {
            v.filter(|s| !s.trim().is_empty())
                .and_then(|s| rules::text(&Value::from(s), &p(field), 300, TextType::C, errs))
        };
        let address = opt(self.address, "address", &mut errs);
        let email = self
            .email
            .filter(|s| !s.trim().is_empty())
            .and_then(|s| rules::email(&Value::from(s), &p("email"), &mut errs));
        let phone = self
            .phone
            .filter(|s| !s.trim().is_empty())
            .and_then(|s| rules::phone(&Value::from(s), &p("phone"), &mut errs));
        let website = opt(self.website, "website", &mut errs);
        if let Some(w) = &website
            && !(w.starts_with("https://") || w.starts_with("http://"))
        {
            errs.push(p("website"), "invalid_value", "must be an http(s) address");
        }
        let entry = TradeOfficeEntry {
            key: key.to_string(),
            name: name.unwrap_or_default(),
            address,
            email,
            phone,
            website,
            updated_at: time::OffsetDateTime::now_utc(),
        };
        errs.finish(entry)
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DirectoryEntry {
    pub key: String,
    pub name: String,
    pub address: Option<String>,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub website: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: time::OffsetDateTime,
}

impl From<TradeOfficeEntry> for DirectoryEntry {
    fn from(e: TradeOfficeEntry) -> Self {
        Self {
            key: e.key,
            name: e.name,
            address: e.address,
            email: e.email,
            phone: e.phone,
            website: e.website,
            updated_at: e.updated_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DirectoryEntryResponse {
    pub result: Outcome,
    pub message: String,
    #[serde(flatten)]
    pub entry: DirectoryEntry,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DirectoryPage {
    pub result: Outcome,
    pub message: String,
    pub trade_offices: Vec<DirectoryEntry>,
    /// Pass as `after` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// The `next_cursor` of the previous page (an office key).
    pub after: Option<String>,
    /// 1 to 500, default 100.
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

/// List the trade office directory
///
/// Lists the trade office directory by key.
#[utoipa::path(get, path = "/v1/operator/trade-offices", tag = "operator", params(PageQuery),
    responses(
        (status = 200, description = "A page of entries", body = Envelope<DirectoryPage>),
        OperatorForbidden,
    ))]
pub async fn list_directory(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Response, ApiError> {
    operator_only(caller)?;
    let limit = q.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::validation(
            "limit",
            "invalid_value",
            "must be 1 to 500",
        ));
    }
    let entries = state
        .repo
        .list_trade_offices(q.after.as_deref(), limit + 1)
        .await?;
    let more = entries.len() as i64 > limit;
    let mut entries: Vec<DirectoryEntry> = entries.into_iter().map(Into::into).collect();
    entries.truncate(limit as usize);
    let next_cursor = more
        .then(|| entries.last().map(|e| e.key.clone()))
        .flatten();
    Ok(respond(
        StatusCode::OK,
        DirectoryPage {
            result: Outcome::Success,
            message: format!("{} trade offices", entries.len()),
            trade_offices: entries,
            next_cursor,
        },
    ))
}

/// Read a trade office directory entry
///
/// Reads one directory entry.
#[utoipa::path(get, path = "/v1/operator/trade-offices/{key}", tag = "operator",
    params(("key" = String, Path, description = "8-digit AGS or 9-digit Gemeindeverband key", pattern = "^[0-9]{8,9}$")),
    responses(
        (status = 200, description = "The entry", body = Envelope<DirectoryEntryResponse>),
        OperatorForbidden,
        (status = 404, description = "No entry (`NOT_FOUND`)", body = Envelope<ErrorBody>),
    ))]
pub async fn get_directory_entry(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    Path(key): Path<String>,
) -> Result<Response, ApiError> {
    operator_only(caller)?;
    let entry = state
        .repo
        .get_trade_office(&key)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(respond(
        StatusCode::OK,
        DirectoryEntryResponse {
            result: Outcome::Success,
            message: "trade office found".into(),
            entry: entry.into(),
        },
    ))
}

/// Create or replace a trade office directory entry
///
/// Creates or replaces a directory entry.
#[utoipa::path(put, path = "/v1/operator/trade-offices/{key}", tag = "operator",
    params(("key" = String, Path, description = "8-digit AGS or 9-digit Gemeindeverband key", pattern = "^[0-9]{8,9}$")),
    request_body = TradeOfficeInput,
    responses(
        (status = 200, description = "The stored entry", body = Envelope<DirectoryEntryResponse>),
        OperatorForbidden,
        ValidationFailed,
    ))]
pub async fn put_directory_entry(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    Path(key): Path<String>,
    ApiJson(input): ApiJson<TradeOfficeInput>,
) -> Result<Response, ApiError> {
    operator_only(caller)?;
    let entry = input.into_entry(&key, "")?;
    state.repo.upsert_trade_office(&entry).await?;
    state.trade_offices.forget(&entry.key);
    Ok(respond(
        StatusCode::OK,
        DirectoryEntryResponse {
            result: Outcome::Success,
            message: "trade office saved".into(),
            entry: entry.into(),
        },
    ))
}

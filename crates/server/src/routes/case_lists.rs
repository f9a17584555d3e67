//! The case lists: `GET /v1/trade-registration` and `GET /v1/tax-registration`, the paths of
//! the creates (docs/api/lists.md).

use std::sync::Arc;

use axum::Extension;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use domain::auth::Caller;
use domain::case::CaseKind;
use domain::company::Environment;
use domain::lifecycle::{TaxStatus, TradeStatus};
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::cases::lists;
use crate::envelope::{Envelope, Outcome, respond};
use crate::error::ApiError;
use crate::openapi::responses::ListInvalid;
use crate::state::AppState;

/// The query of both lists but `status`, whose values differ (read whole by
/// `cases::lists::parse_query`; any other parameter is 422).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // documents the query; `parse_query` reads it
pub struct ListParams {
    /// Only the case of this client company (a company has at most one case of each kind).
    /// Another provider's company gives an empty list, as an unknown one does.
    company_id: Option<Uuid>,
    /// Only cases created with this `client_reference` (exact match)
    #[param(max_length = 255)]
    client_reference: Option<String>,
    /// Only cases of this environment; both when left out
    environment: Option<Environment>,
    /// Only cases created at or after this time (RFC 3339 with offset)
    created_after: Option<OffsetDateTime>,
    /// Only cases created before this time (RFC 3339 with offset)
    created_before: Option<OffsetDateTime>,
    /// The `next_cursor` of the previous page (opaque)
    #[param(pattern = "^[A-Za-z0-9_-]{22}$", example = "AZq1c2nXd8mH4pZk0f3x9g")]
    cursor: Option<String>,
    /// 1 to 100, default 20
    #[param(minimum = 1, maximum = 100)]
    limit: Option<i64>,
}

/// A trade registration's receiving office, as determined for it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ListedTradeOffice {
    #[schema(example = "072355007")]
    pub key: String,
    #[schema(example = "Verbandsgemeinde Trier-Land")]
    pub name: String,
}

/// A trade registration in a list.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "trade_registration_id": "019ac2f0-5b1e-7c3a-9d4e-2f6a8b0c1d2e",
    "company_id": "019ac2f0-5a90-7b11-8e2f-0c1d2e3f4a5b",
    "company_name": "Mustermann Webdesign",
    "status": "form-rendered",
    "package": "self",
    "environment": "production",
    "client_reference": "crm-4711",
    "created_at": "2026-11-26T09:14:03.512047Z",
    "trade_office": {"key": "072355007", "name": "Verbandsgemeinde Trier-Land"}
}))]
pub struct TradeListItem {
    pub trade_registration_id: Uuid,
    pub company_id: Uuid,
    pub company_name: String,
    #[schema(value_type = TradeStatus)]
    pub status: String,
    /// `self` or `assisted`
    pub package: String,
    pub environment: Environment,
    pub client_reference: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// `null` while no office is determined (an operator assigns it).
    pub trade_office: Option<ListedTradeOffice>,
}

/// A tax registration's tax office.
#[derive(Debug, Serialize, ToSchema)]
pub struct ListedTaxOffice {
    #[schema(example = "2742")]
    pub number: String,
    /// The directory's name; absent for a number it does not know.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "Finanzamt Trier")]
    pub name: Option<String>,
}

/// A tax registration (UG, GmbH, GbR, eGbR or Einzelunternehmen) in a list.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "tax_registration_id": "019ac2f1-0c44-7e55-a1b2-3c4d5e6f7a8b",
    "company_id": "019ac2f1-0b20-7d33-b4c5-d6e7f8a9b0c1",
    "company_name": "Trierer Software UG (haftungsbeschränkt)",
    "legal_form": "ug",
    "status": "validated",
    "package": "self",
    "environment": "production",
    "client_reference": "crm-4712",
    "created_at": "2026-11-26T09:20:41.077310Z",
    "tax_office": {"number": "2742", "name": "Finanzamt Trier"}
}))]
pub struct TaxListItem {
    /// The id the caller reads the case by: a provider's and a client company's
    /// `tax_registration_id`, an operator's the case's key.
    pub tax_registration_id: Uuid,
    pub company_id: Uuid,
    pub company_name: String,
    /// `ug`, `gmbh`, `gbr`, `egbr` or `einzelunternehmen`
    pub legal_form: String,
    #[schema(value_type = TaxStatus)]
    pub status: String,
    pub package: String,
    pub environment: Environment,
    pub client_reference: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// `null` while no tax office is known (an operator assigns it).
    pub tax_office: Option<ListedTaxOffice>,
}

/// A page of a list (`cases` newest first), of `TradeListItem` or `TaxListItem`.
macro_rules! list_page {
    ($name:ident, $item:ty) => {
        #[derive(Debug, Serialize, ToSchema)]
        pub struct $name {
            pub result: Outcome,
            #[schema(example = "2 cases")]
            pub message: String,
            /// Newest first.
            pub cases: Vec<$item>,
            /// Pass as `cursor` for the next page; absent on the last page.
            #[serde(skip_serializing_if = "Option::is_none")]
            #[schema(example = "AZq1c2nXd8mH4pZk0f3x9g")]
            pub next_cursor: Option<String>,
        }

        impl $name {
            fn answer(cases: Vec<$item>, next_cursor: Option<String>) -> Response {
                let page = Self {
                    result: Outcome::Success,
                    message: format!("{} cases", cases.len()),
                    cases,
                    next_cursor,
                };
                respond(StatusCode::OK, page)
            }
        }
    };
}

list_page!(TradeRegistrationList, TradeListItem);
list_page!(TaxRegistrationList, TaxListItem);

/// List trade registrations
///
/// Lists the caller's trade registrations, newest first: a provider's own, a client company's
/// the one of its company, an operator's every case.
#[utoipa::path(get, path = "/v1/trade-registration", tag = "trade registration",
    operation_id = "list_trade_registrations",
    params(("status" = Option<TradeStatus>, Query, description = "Only cases in this status"), ListParams),
    responses(
        (status = 200, description = "A page of trade registrations, newest first", body = Envelope<TradeRegistrationList>),
        (status = 409, description = "`ENVIRONMENT_MISMATCH`: a key restricted to one environment asked for the other", body = Envelope<crate::error::ErrorBody>),
        ListInvalid,
    ))]
pub async fn list_trade(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let q = lists::parse_query(CaseKind::Trade, query.as_deref())?;
    let (items, next) = lists::page(&state, caller, CaseKind::Trade, &q).await?;
    let cases = items
        .into_iter()
        .map(|i| TradeListItem {
            trade_registration_id: i.public_id,
            company_id: i.company_id,
            company_name: i.company_name,
            status: i.status.as_str().into(),
            package: i.package.as_str().into(),
            environment: i.environment,
            client_reference: i.client_reference,
            created_at: i.created_at,
            trade_office: i
                .office_key
                .zip(i.office_name)
                .map(|(key, name)| ListedTradeOffice { key, name }),
        })
        .collect();
    Ok(TradeRegistrationList::answer(cases, next))
}

/// List tax registrations
///
/// Lists the caller's tax registrations (UG, GmbH, GbR and eGbR), newest first: a provider's
/// own, a client company's the one of its company, an operator's every case.
#[utoipa::path(get, path = "/v1/tax-registration", tag = "tax registration",
    operation_id = "list_tax_registrations",
    params(("status" = Option<TaxStatus>, Query, description = "Only cases in this status"), ListParams),
    responses(
        (status = 200, description = "A page of tax registrations, newest first", body = Envelope<TaxRegistrationList>),
        (status = 409, description = "`ENVIRONMENT_MISMATCH`: a key restricted to one environment asked for the other", body = Envelope<crate::error::ErrorBody>),
        ListInvalid,
    ))]
pub async fn list_tax(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let q = lists::parse_query(CaseKind::Tax, query.as_deref())?;
    let (items, next) = lists::page(&state, caller, CaseKind::Tax, &q).await?;
    let operator = matches!(caller, Caller::Operator { .. });
    let cases = items
        .into_iter()
        .map(|i| TaxListItem {
            tax_registration_id: if operator { i.id } else { i.public_id },
            company_id: i.company_id,
            company_name: i.company_name,
            legal_form: i
                .legal_form
                .map(|f| f.as_str().to_owned())
                .unwrap_or_default(),
            status: i.status.as_str().into(),
            package: i.package.as_str().into(),
            environment: i.environment,
            client_reference: i.client_reference,
            created_at: i.created_at,
            tax_office: i.office_key.map(|number| ListedTaxOffice {
                name: domain::offices::tax_office(&number).map(|o| o.display_name()),
                number,
            }),
        })
        .collect();
    Ok(TaxRegistrationList::answer(cases, next))
}

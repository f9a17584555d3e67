//! Which office receives a case: the trade office as stored with a case and shown with the
//! operator directory's contact data.

use domain::offices::TradeOfficeRef;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use store::TradeOfficeEntry;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::state::AppState;

/// A trade office with the contact data of the operator-maintained directory, when it has an
/// entry for the office's key.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TradeOfficeView {
    /// 8-digit municipality key (AGS), 9-digit Gemeindeverband key, or for a district office
    /// (Bezirksamt) of Berlin or Hamburg the city's AGS and the district's number
    /// (`1100000001`: Bezirksamt Mitte von Berlin).
    pub key: String,
    pub name: String,
    /// `municipality`, `verband` or `district` (a Bezirksamt of Berlin or Hamburg).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The establishment's municipality key: the GewA 1 head's "Gemeindekennzahl".
    pub municipality_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub municipality_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website: Option<String>,
    /// A caveat for people, e.g. that Berlin's district offices receive the notices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl TradeOfficeView {
    /// The determination with the contact data the service ships for a district office
    /// (docs/offices.md; the directory's entry overrides it: [`Self::with_directory`]).
    pub fn from_ref(r: &TradeOfficeRef) -> Self {
        let district = domain::offices::district::district(r.key);
        Self {
            key: r.key.to_string(),
            name: r.name.clone(),
            kind: serde_json::to_value(r.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string)),
            municipality_key: r.municipality_key.to_string(),
            municipality_name: Some(r.municipality_name.clone()),
            address: district.and_then(|d| d.address).map(str::to_string),
            email: district.and_then(|d| d.email).map(str::to_string),
            phone: district.and_then(|d| d.phone).map(str::to_string),
            website: district.and_then(|d| d.website).map(str::to_string),
            note: r.note.map(str::to_string),
        }
    }

    /// Adds the directory's name and contact data.
    pub fn with_directory(mut self, entry: Option<TradeOfficeEntry>) -> Self {
        if let Some(e) = entry {
            self.name = e.name;
            self.address = e.address;
            self.email = e.email;
            self.phone = e.phone;
            self.website = e.website;
        }
        self
    }

    /// A stored determination as it was stored (`None` when it does not read as one); the
    /// directory's data comes with the case ([`store::TradeRegistrationRecord::trade_office_entry`]).
    pub fn stored(value: &Value) -> Option<Self> {
        serde_json::from_value::<TradeOfficeView>(value.clone()).ok()
    }
}

/// The directory's entry for an office key, or for a district office without one the entry the
/// service ships (its name and the contact data of docs/offices.md).
pub async fn directory_entry(
    state: &AppState,
    key: &str,
) -> Result<Option<TradeOfficeEntry>, ApiError> {
    if let Some(entry) = state.repo.get_trade_office(key).await? {
        return Ok(Some(entry));
    }
    Ok(
        domain::offices::district::district(key).map(|d| TradeOfficeEntry {
            key: d.key.to_string(),
            name: d.office_name.to_string(),
            address: d.address.map(str::to_string),
            email: d.email.map(str::to_string),
            phone: d.phone.map(str::to_string),
            website: d.website.map(str::to_string),
            updated_at: time::OffsetDateTime::UNIX_EPOCH,
        }),
    )
}

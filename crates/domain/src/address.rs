//! The postal address every registration shares: the trade registration's business address and
//! main establishment, and every address of a tax registration (seat, persons, notary).

use serde::{Deserialize, Serialize};

use crate::country::CountryCode;

/// An address that may be outside Germany (`business_address`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PostalAddress {
    pub street: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub street_second_line: Option<String>,
    pub zip: String,
    pub city: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "DE"))]
    pub country: CountryCode,
}

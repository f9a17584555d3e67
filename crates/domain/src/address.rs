//! The postal address every registration shares: the trade registration's business address and
//! main establishment, and every address of a tax registration (seat, persons, notary).

use crate::country::CountryCode;

/// Declares an address struct with the fields of [`PostalAddress`], serialised and described
/// alike: a registration whose address is a schema of its own (the trade registration's
/// owner's `ResidentialAddress`) declares it with these fields once.
macro_rules! address_struct {
    ($(#[$meta:meta])* pub struct $name:ident;) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        pub struct $name {
            pub street: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub street_second_line: Option<String>,
            pub zip: String,
            pub city: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub state: Option<String>,
            #[cfg_attr(feature = "openapi", schema(value_type = String, example = "DE"))]
            pub country: $crate::country::CountryCode,
        }
    };
}
pub(crate) use address_struct;

address_struct! {
    /// An address that may be outside Germany (`business_address`).
    pub struct PostalAddress;
}

impl PostalAddress {
    /// The keys of the Address object of a request.
    pub(crate) const FIELDS: &[&str] = &[
        "street",
        "street_second_line",
        "zip",
        "city",
        "state",
        "country",
    ];

    /// The address from its fields as read: `None` when a required one is missing or broken.
    pub(crate) fn assemble(
        street: Option<String>,
        street_second_line: Option<String>,
        zip: Option<String>,
        city: Option<String>,
        state: Option<String>,
        country: Option<CountryCode>,
    ) -> Option<Self> {
        Some(PostalAddress {
            street: street?,
            street_second_line,
            zip: zip?,
            city: city?,
            state,
            country: country?,
        })
    }
}

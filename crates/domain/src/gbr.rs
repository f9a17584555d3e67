//! The validated tax registration (Fragebogen zur steuerlichen Erfassung) of a partnership: a
//! GbR (Gesellschaft bürgerlichen Rechts) or an eGbR (one entered in the Gesellschaftsregister).
//!
//! The shape the request validator (`gbr_request`) produces and the ELSTER `FsE_PersG` writer
//! and the summary PDF read. What a partnership shares with a corporation (addresses, tax ids,
//! exact percentages, the register status, financial estimates, VAT and payroll) uses the types
//! of [`crate::tax_core`], so both are validated, stored and rendered alike.

use serde::{Deserialize, Serialize};
use time::Date;

use crate::address::PostalAddress;
use crate::tax_core::{CommercialRegister, Percentage, TaxId, iso_date};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum PartnershipLegalForm {
    /// Gesellschaft bürgerlichen Rechts.
    Gbr,
    /// Eingetragene GbR: entered in (or applied to) the Gesellschaftsregister.
    Egbr,
}

impl PartnershipLegalForm {
    /// The API value: `gbr` or `egbr`.
    pub fn as_str(self) -> &'static str {
        match self {
            PartnershipLegalForm::Gbr => "gbr",
            PartnershipLegalForm::Egbr => "egbr",
        }
    }

    /// The German abbreviation on forms: `GbR` or `eGbR`.
    pub fn german(self) -> &'static str {
        match self {
            PartnershipLegalForm::Gbr => "GbR",
            PartnershipLegalForm::Egbr => "eGbR",
        }
    }
}

/// A natural person who is a partner (Gesellschafter/in, in the filing a Beteiligte/r).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IndividualPartner {
    pub first_name: String,
    pub last_name: String,
    #[serde(with = "iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub dob: Date,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_identification_number: Option<TaxId>,
    pub address: PostalAddress,
    /// Exact decimal, up to 4 places; all partners' shares sum to exactly 100.
    #[cfg_attr(feature = "openapi", schema(value_type = f64, example = 50))]
    pub share_percentage: Percentage,
    /// Manages and represents the partnership (Geschäftsführung und Vertretung).
    pub is_managing_partner: bool,
}

/// A legal person or another partnership that is a partner: its name, seat and share.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EntityPartner {
    pub name: String,
    /// The entity's seat.
    pub address: PostalAddress,
    #[cfg_attr(feature = "openapi", schema(value_type = f64, example = 50))]
    pub share_percentage: Percentage,
    /// Manages and represents the partnership (through its own legal representatives).
    pub is_managing_partner: bool,
}

/// The partners: 2 to 99 across both lists, at least one managing.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Partners {
    #[serde(default)]
    pub individuals: Vec<IndividualPartner>,
    #[serde(default)]
    pub entities: Vec<EntityPartner>,
}

impl Partners {
    pub fn len(&self) -> usize {
        self.individuals.len() + self.entities.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every share, individuals first (the order of the filing).
    pub fn shares(&self) -> impl Iterator<Item = Percentage> + '_ {
        self.individuals
            .iter()
            .map(|p| p.share_percentage)
            .chain(self.entities.iter().map(|p| p.share_percentage))
    }

    /// The managing partners' names, individuals first (`Erika Muster`, `Beispiel GmbH`).
    pub fn managing_names(&self) -> Vec<String> {
        self.individuals
            .iter()
            .filter(|p| p.is_managing_partner)
            .map(|p| format!("{} {}", p.first_name, p.last_name))
            .chain(
                self.entities
                    .iter()
                    .filter(|p| p.is_managing_partner)
                    .map(|p| p.name.clone()),
            )
            .collect()
    }
}

crate::tax_core::tax_registration! {
    /// A validated tax registration for a GbR or eGbR.
    pub struct GbrTaxRegistration / PartnershipFields {
        legal_form: PartnershipLegalForm,
        /// The date of the partnership agreement (Gesellschaftsvertrag).
        founded: partnership_agreement_date,
        before_address: {}
        /// The partnership's seat (where it is managed).
        address,
        after_address: {
            pub partners: Partners,
            /// The Gesellschaftsregister: present exactly for an eGbR (application filed or
            /// registered; `registration_number` without `GsR`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub company_register: Option<CommercialRegister>,
        }
    }
}

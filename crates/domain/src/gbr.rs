//! The validated tax registration (Fragebogen zur steuerlichen Erfassung) of a partnership: a
//! GbR (Gesellschaft bürgerlichen Rechts) or an eGbR (one entered in the Gesellschaftsregister).
//!
//! The shape the request validator (`gbr_request`) produces and the ELSTER `FsE_PersG` writer
//! and the summary PDF read. What a partnership shares with a corporation (addresses, tax ids,
//! exact percentages, the register status, financial estimates, VAT and payroll) uses the types
//! of [`crate::tax`], so both are validated, stored and rendered alike.

use serde::{Deserialize, Serialize};
use time::Date;

use crate::company::Environment;
use crate::signature::SignaturePath;
use crate::tax::{
    CommercialRegister, FinancialEstimates, Payroll, Percentage, TaxAddress, TaxId, TaxPackage,
    Vat, iso_date, opt_iso_date,
};

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
    pub address: TaxAddress,
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
    pub address: TaxAddress,
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

/// A validated tax registration for a GbR or eGbR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GbrTaxRegistration {
    pub legal_form: PartnershipLegalForm,
    pub package: TaxPackage,
    #[serde(default)]
    pub environment: Environment,
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "M 10 20 C 20 0 30 40 40 20"))]
    pub signature_path: SignaturePath,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_reference: Option<String>,
    /// 4-digit tax office number (BUFA), when the caller named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_office_number: Option<String>,
    pub name: String,
    pub purpose: String,
    /// The date of the partnership agreement (Gesellschaftsvertrag).
    #[serde(with = "iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub partnership_agreement_date: Date,
    #[serde(with = "iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub operational_activity_start_date: Date,
    pub fiscal_year_deviates_from_calendar: bool,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "opt_iso_date"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
    pub fiscal_year_deviating_start_date: Option<Date>,
    /// The partnership's seat (where it is managed).
    pub address: TaxAddress,
    pub partners: Partners,
    /// The Gesellschaftsregister: present exactly for an eGbR (application filed or
    /// registered; `registration_number` without `GsR`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub company_register: Option<CommercialRegister>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iban: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bic: Option<String>,
    pub financial_estimates: FinancialEstimates,
    pub vat: Vat,
    pub has_employees: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payroll: Option<Payroll>,
}

//! What every tax registration shares, whatever the legal form: the fields and types of the
//! corporation's (UG, GmbH; [`crate::tax`]) and the partnership's (GbR, eGbR; [`crate::gbr`])
//! model, declared once here, and their rules ([`request`]), applied once for both.
//!
//! Money is whole euros (`i64`), percentages are exact decimals ([`Percentage`], no floating
//! point), dates `time::Date`.

use serde::{Deserialize, Serialize};
use time::Date;

use crate::address::PostalAddress;

pub mod request;

/// § 19 (1) UStG, small businesses: the revenue of the founding year (in its place, the
/// expected one) up to which the rule applies, in whole euros ...
pub const SMALL_BUSINESS_FOUNDING_YEAR: i64 = 25_000;
/// ... and that of the following year.
pub const SMALL_BUSINESS_FOLLOWING_YEAR: i64 = 100_000;
/// § 20 UStG: the founding-year revenue up to which cash accounting (Ist-Versteuerung) may be
/// applied for, in whole euros.
pub const CASH_ACCOUNTING_LIMIT: i64 = 800_000;
/// § 18 (2) UStG: the expected VAT balance above which advance returns are monthly.
pub const MONTHLY_RETURNS_ABOVE: i64 = 9_000;

time::serde::format_description!(pub(crate) iso_date, Date, "[year]-[month]-[day]");

/// A share in percent with at most four decimal places, held exactly as ten-thousandths of a
/// percent (`33.3333` is `333_333`; `100` is `1_000_000`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Percentage(pub u32);

impl Percentage {
    pub const HUNDRED: Percentage = Percentage(1_000_000);

    /// Parses a decimal such as `25`, `33.3333` or `0.5` exactly; `None` for more than four
    /// decimal places, signs, exponents or anything else.
    pub fn parse(text: &str) -> Option<Percentage> {
        let (whole, frac) = text.split_once('.').unwrap_or((text, "0"));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || whole.len() > 3 || !digits(frac) {
            return None;
        }
        let frac = frac.trim_end_matches('0');
        if frac.len() > 4 {
            return None;
        }
        let whole: u32 = whole.parse().ok()?;
        let frac_value: u32 = if frac.is_empty() {
            0
        } else {
            format!("{frac:0<4}").parse().ok()?
        };
        Some(Percentage(whole * 10_000 + frac_value))
    }

    /// The decimal text, without trailing zeros (`33.3333`, `25`, `12.5`).
    pub fn to_decimal_string(self) -> String {
        let whole = self.0 / 10_000;
        let frac = self.0 % 10_000;
        if frac == 0 {
            whole.to_string()
        } else {
            let f = format!("{frac:04}");
            format!("{whole}.{}", f.trim_end_matches('0'))
        }
    }
}

impl Serialize for Percentage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // As a JSON number; the shortest f64 text of a 4-decimal value is that value.
        let text = self.to_decimal_string();
        let n: f64 = text.parse().map_err(serde::ser::Error::custom)?;
        s.serialize_f64(n)
    }
}

impl<'de> Deserialize<'de> for Percentage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = f64::deserialize(d)?;
        Percentage::parse(&n.to_string())
            .ok_or_else(|| serde::de::Error::custom("a percentage with at most 4 decimals"))
    }
}

impl Percentage {
    /// `part` of `whole` euros as a percentage, rounded half up to four decimals (the share a
    /// nominal amount is of the capital).
    pub fn of_whole(part: i64, whole: i64) -> Percentage {
        let units =
            (i128::from(part) * 1_000_000 * 2 + i128::from(whole)) / (2 * i128::from(whole));
        Percentage(u32::try_from(units.max(0)).unwrap_or(u32::MAX))
    }

    /// The decimal text with exactly four decimals, as the ELSTER XML writes `ProzentAnteil`
    /// (`33.3333`, `50.0000`, `100.0000`).
    pub fn to_four_decimals(self) -> String {
        format!("{}.{:04}", self.0 / 10_000, self.0 % 10_000)
    }

    /// `capital` euros times this share, in millionths of a euro (exact).
    pub(crate) fn of_capital_micro(self, capital: i64) -> i128 {
        // capital * share.0 / 1_000_000 euros (share.0 is ten-thousandths of a percent).
        i128::from(capital) * i128::from(self.0)
    }
}

/// A German tax identification number (Steuer-IdNr): 11 digits, validated.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(transparent)]
pub struct TaxId(pub String);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum TaxPackage {
    #[serde(rename = "self")]
    SelfService,
    Guided,
}

impl TaxPackage {
    /// The request value: `self` or `guided`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaxPackage::SelfService => "self",
            TaxPackage::Guided => "guided",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [TaxPackage::SelfService, TaxPackage::Guided]
            .into_iter()
            .find(|p| p.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IndividualShareholder {
    pub first_name: String,
    pub last_name: String,
    #[serde(with = "iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub dob: Date,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_identification_number: Option<TaxId>,
    pub address: PostalAddress,
    /// As sent; derived from `nominal_amount` (rounded to four decimals) when only that was.
    #[cfg_attr(feature = "openapi", schema(value_type = f64, example = 33.3333))]
    pub share_percentage: Percentage,
    /// The share's nominal amount (Nennbetrag) in whole euros, as the shareholder list at the
    /// register states it: sent for every shareholder or for none (a UG's or GmbH's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(example = 12500))]
    pub nominal_amount: Option<i64>,
    /// The running number(s) of the holder's shares in the list of shareholders
    /// (Gesellschafterliste, § 40 GmbHG), as it states them: `"1"`, `"1-3"`, `"2, 5"`. The
    /// questionnaire asks for them (`Anteilseigner/ZeichnerNummer`); the XML writes them only
    /// as sent, never a holder's position (a UG's or GmbH's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(example = "1", max_length = 100))]
    pub share_numbers: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EntityShareholder {
    pub name: String,
    pub address: PostalAddress,
    /// As for an individual shareholder.
    #[cfg_attr(feature = "openapi", schema(value_type = f64, example = 50))]
    pub share_percentage: Percentage,
    /// As for an individual shareholder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(example = 12500))]
    pub nominal_amount: Option<i64>,
    /// As for an individual shareholder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(example = "2", max_length = 100))]
    pub share_numbers: Option<String>,
}

/// A register status: the commercial register (Handelsregister) of a UG or GmbH, or the
/// Gesellschaftsregister of an eGbR (which is never `not-applied`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum CommercialRegister {
    NotApplied,
    ApplicationFiled {
        #[serde(with = "iso_date")]
        #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
        registration_application_date: Date,
    },
    Registered {
        /// When the entry was applied for (questionnaire line 55), when the caller knows it;
        /// the XML's `TagDesAntrags` (docs/elster.md, "The register").
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "crate::tax_core::opt_iso_date"
        )]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
        registration_application_date: Option<Date>,
        /// Normalised: without a leading `HRB` (or `GsR`), a suffix kept without its space
        /// (`12345B`).
        registration_number: String,
        #[serde(with = "iso_date")]
        #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
        registration_date: Date,
        registration_court: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Estimate {
    /// Whole euros.
    pub revenue_amount: i64,
    /// Whole euros (may be negative: a loss).
    pub profit_amount: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FinancialEstimates {
    pub formation_year: Estimate,
    pub following_year: Estimate,
}

impl FinancialEstimates {
    /// Whether the small-business election (§ 19 UStG) is open: founding-year revenue at most
    /// 25,000 euros and the following year's at most 100,000. Otherwise the regular regime
    /// applies and `vat.regime` has no effect.
    pub fn small_business_election_available(&self) -> bool {
        self.formation_year.revenue_amount <= SMALL_BUSINESS_FOUNDING_YEAR
            && self.following_year.revenue_amount <= SMALL_BUSINESS_FOLLOWING_YEAR
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum VatRegime {
    /// § 19 UStG: no VAT charged, no VAT returns.
    SmallBusiness,
    Standard,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum AccountingMethod {
    /// Soll-Versteuerung.
    Accrual,
    /// Ist-Versteuerung (founding-year revenue at most 800,000 euros).
    Cash,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum BalanceType {
    Payable,
    Refundable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ReturnFrequency {
    Monthly,
    Quarterly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ReverseChargeServiceType {
    Construction,
    BuildingCleaning,
    Both,
}

/// The VAT block, after the rules: `small_business` is the outcome (election made and
/// available), and the four standard-regime fields are present exactly when it is false.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Vat {
    /// As sent; `None` when the election was not available and nothing was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regime: Option<VatRegime>,
    /// Whether the small-business rule (§ 19 UStG) applies.
    pub small_business: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accounting_method: Option<AccountingMethod>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_balance_type: Option<BalanceType>,
    /// Whole euros.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_balance_amount: Option<i64>,
    /// `quarterly` unless sent as `monthly`; absent under the small-business rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_frequency: Option<ReturnFrequency>,
    #[serde(default)]
    pub request_vat_id: bool,
    #[serde(default)]
    pub sells_via_online_marketplaces: bool,
    #[serde(default)]
    pub request_reverse_charge_certificate: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_charge_service_type: Option<ReverseChargeServiceType>,
}

impl Vat {
    /// Whether the filing waives the small-business rule (§ 19 (2) UStG): only when the
    /// election was open and the standard regime chosen. A `standard` sent above the thresholds
    /// is no waiver, and filing one would bind the company for five years.
    pub fn waives_small_business(&self, estimates: &FinancialEstimates) -> bool {
        self.regime == Some(VatRegime::Standard) && estimates.small_business_election_available()
    }
}

/// The payroll block (present exactly when `has_employees` is true).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Payroll {
    pub employee_count: i64,
    pub shareholder_employee_count: i64,
    /// Of `employee_count`, the marginal employees (geringfügig Beschäftigte, questionnaire
    /// line 171), when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marginal_employee_count: Option<i64>,
    #[serde(with = "iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub payroll_start_date: Date,
    /// Whole euros a year.
    pub estimated_annual_wage_tax: i64,
}

/// A person the questionnaire names besides the company's own (a tax adviser, an authorised
/// recipient): a natural person or a firm, with address and phone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PartyPerson {
    pub first_name: String,
    pub last_name: String,
    pub address: PostalAddress,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
}

/// A firm the questionnaire names (a tax advisory firm, an authorised recipient).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PartyFirm {
    pub name: String,
    pub address: PostalAddress,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
}

/// The tax adviser (Steuerliche Beratung, questionnaire sub-page 5, lines 24-30): a natural
/// person or a firm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum TaxAdvisor {
    Person(PartyPerson),
    Firm(PartyFirm),
}

/// The authorised recipient for every tax (Empfangsbevollmächtigte(r), sub-page 6, lines
/// 41-48): the tax adviser of `tax_advisor` (the form's tick), or another person or firm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum AuthorizedRecipient {
    TaxAdvisor,
    Person(PartyPerson),
    Firm(PartyFirm),
}

/// A validated tax registration's fields that every legal form has/// A validated tax registration's fields that every legal form has, in the order of the API
/// and the stored record (the legal form's own fields stand between them): built by the
/// request parser ([`request`]) and completed by a model of [`tax_registration!`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TaxCore<L> {
    pub legal_form: L,
    pub package: TaxPackage,
    pub environment: crate::company::Environment,
    pub signature_path: crate::signature::SignaturePath,
    pub client_reference: Option<String>,
    pub tax_office_number: Option<String>,
    pub name: String,
    pub purpose: String,
    /// The founding date: the notarization of a corporation, the partnership agreement of a
    /// partnership.
    pub founded: Date,
    pub operational_activity_start_date: Date,
    pub fiscal_year_deviates_from_calendar: bool,
    pub fiscal_year_deviating_start_date: Option<Date>,
    pub address: crate::address::PostalAddress,
    pub iban: Option<String>,
    pub bic: Option<String>,
    pub financial_estimates: FinancialEstimates,
    pub vat: Vat,
    pub has_employees: bool,
    pub payroll: Option<Payroll>,
}

/// Declares a tax registration model (`pub struct $name`) with the fields of [`TaxCore`] and
/// the legal form's own ones: `founded` names its founding date, the `before_address` fields
/// follow the fiscal year, the `after_address` ones the seat. Also declares `$own`, the own
/// fields alone, and `$name::from_core`, so a field every tax registration has is added once,
/// here and in [`TaxCore`].
macro_rules! tax_registration {
    (
        $(#[$meta:meta])*
        pub struct $name:ident / $own:ident {
            legal_form: $legal_form:ty,
            $(#[$founded_meta:meta])*
            founded: $founded:ident,
            before_address: { $($(#[$b_meta:meta])* pub $b_field:ident: $b_ty:ty,)* }
            $(#[$address_meta:meta])*
            address,
            after_address: { $($(#[$a_meta:meta])* pub $a_field:ident: $a_ty:ty,)* }
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        pub struct $name {
            pub legal_form: $legal_form,
            pub package: $crate::tax_core::TaxPackage,
            #[serde(default)]
            pub environment: $crate::company::Environment,
            #[cfg_attr(feature = "openapi", schema(value_type = String, example = "M 10 20 C 20 0 30 40 40 20"))]
            pub signature_path: $crate::signature::SignaturePath,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub client_reference: Option<String>,
            /// 4-digit tax office number (BUFA), when the caller named it.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub tax_office_number: Option<String>,
            pub name: String,
            pub purpose: String,
            $(#[$founded_meta])*
            #[serde(with = "crate::tax_core::iso_date")]
            #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
            pub $founded: time::Date,
            #[serde(with = "crate::tax_core::iso_date")]
            #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
            pub operational_activity_start_date: time::Date,
            pub fiscal_year_deviates_from_calendar: bool,
            #[serde(
                default,
                skip_serializing_if = "Option::is_none",
                with = "crate::tax_core::opt_iso_date"
            )]
            #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
            pub fiscal_year_deviating_start_date: Option<time::Date>,
            $($(#[$b_meta])* pub $b_field: $b_ty,)*
            $(#[$address_meta])*
            pub address: $crate::address::PostalAddress,
            $($(#[$a_meta])* pub $a_field: $a_ty,)*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub iban: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub bic: Option<String>,
            pub financial_estimates: $crate::tax_core::FinancialEstimates,
            pub vat: $crate::tax_core::Vat,
            pub has_employees: bool,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub payroll: Option<$crate::tax_core::Payroll>,
        }

        /// The fields of the legal form's own, besides those of every tax registration.
        pub(crate) struct $own {
            $(pub $b_field: $b_ty,)*
            $(pub $a_field: $a_ty,)*
        }

        impl $name {
            /// The registration of `core` and the legal form's `own` fields.
            pub(crate) fn from_core(core: $crate::tax_core::TaxCore<$legal_form>, own: $own) -> Self {
                $name {
                    legal_form: core.legal_form,
                    package: core.package,
                    environment: core.environment,
                    signature_path: core.signature_path,
                    client_reference: core.client_reference,
                    tax_office_number: core.tax_office_number,
                    name: core.name,
                    purpose: core.purpose,
                    $founded: core.founded,
                    operational_activity_start_date: core.operational_activity_start_date,
                    fiscal_year_deviates_from_calendar: core.fiscal_year_deviates_from_calendar,
                    fiscal_year_deviating_start_date: core.fiscal_year_deviating_start_date,
                    $($b_field: own.$b_field,)*
                    address: core.address,
                    $($a_field: own.$a_field,)*
                    iban: core.iban,
                    bic: core.bic,
                    financial_estimates: core.financial_estimates,
                    vat: core.vat,
                    has_employees: core.has_employees,
                    payroll: core.payroll,
                }
            }
        }
    };
}
pub(crate) use tax_registration;

pub(crate) mod opt_iso_date {
    use serde::{Deserialize, Deserializer, Serializer};
    use time::Date;

    pub fn serialize<S: Serializer>(d: &Option<Date>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::iso_date::serialize(d, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Date>, D::Error> {
        #[derive(Deserialize)]
        struct W(#[serde(with = "super::iso_date")] Date);
        Ok(Option::<W>::deserialize(d)?.map(|w| w.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_are_exact() {
        let p = |s| Percentage::parse(s).unwrap();
        assert_eq!(
            p("33.3333").0 + p("33.3333").0 + p("33.3334").0,
            Percentage::HUNDRED.0
        );
        assert_eq!(p("100"), Percentage::HUNDRED);
        assert_eq!(p("12.50").to_decimal_string(), "12.5");
        assert_eq!(p("0.0001").0, 1);
        for bad in ["", ".5", "1.", "1.23456", "-1", "1e2", "abc", "1000"] {
            assert_eq!(Percentage::parse(bad), None, "{bad}");
        }
        let json = serde_json::to_string(&p("33.3333")).unwrap();
        assert_eq!(json, "33.3333");
        let back: Percentage = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p("33.3333"));
        assert_eq!(p("33.3333").to_four_decimals(), "33.3333");
        assert_eq!(p("50").to_four_decimals(), "50.0000");
        assert_eq!(p("100").to_four_decimals(), "100.0000");
        assert_eq!(p("0.5").to_four_decimals(), "0.5000");
    }
}

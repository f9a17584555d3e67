//! The validated tax registration (Fragebogen zur steuerlichen Erfassung) of a UG or GmbH.
//!
//! The shape the request validator produces and the ELSTER XML writer and summary PDF read.
//! Field names and enum values are the API's. Money is whole euros (`i64`), percentages are
//! exact decimals ([`Percentage`], no floating point), dates `time::Date`.

use serde::{Deserialize, Serialize};
use time::Date;

use crate::company::Environment;
use crate::country::CountryCode;
use crate::signature::SignaturePath;

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

impl KapLegalForm {
    /// The API value: `ug` or `gmbh`.
    pub fn as_str(self) -> &'static str {
        match self {
            KapLegalForm::Ug => "ug",
            KapLegalForm::Gmbh => "gmbh",
        }
    }
}

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
    /// The decimal text with exactly four decimals, as the ELSTER XML writes `ProzentAnteil`
    /// (`33.3333`, `50.0000`, `100.0000`).
    pub fn to_four_decimals(self) -> String {
        format!("{}.{:04}", self.0 / 10_000, self.0 % 10_000)
    }

    /// `capital` euros times this share, in millionths of a euro (exact).
    fn of_capital_micro(self, capital: i64) -> i128 {
        // capital * share.0 / 1_000_000 euros (share.0 is ten-thousandths of a percent).
        i128::from(capital) * i128::from(self.0)
    }
}

/// The nominal amounts of the shares (Geschäftsanteile) of `capital` euros that `shares`
/// describe, in whole euros: the shares of a GmbH or UG have whole-euro nominal amounts that
/// sum exactly to the share capital (§ 5 (2), (3) GmbHG). Largest remainder: each share gets
/// its amount rounded down, and the euros left (fewer than there are shares) go one each to
/// the shares with the largest fractions, the earlier share first on a tie. Each amount is
/// then within one euro of `capital × share / 100`.
///
/// `shares` must sum to exactly 100 (the request rule `shares_do_not_sum_to_100`); each of at
/// least one euro ([`share_below_one_euro`]) gives amounts of at least one euro.
pub fn nominal_amounts(capital: i64, shares: &[Percentage]) -> Vec<i64> {
    const EURO: i128 = 1_000_000;
    let exact: Vec<i128> = shares.iter().map(|s| s.of_capital_micro(capital)).collect();
    let mut amounts: Vec<i64> = exact.iter().map(|x| (x / EURO) as i64).collect();
    let left = capital - amounts.iter().sum::<i64>();
    let mut by_fraction: Vec<usize> = (0..shares.len()).collect();
    // Stable: on equal fractions the earlier share comes first.
    by_fraction.sort_by_key(|&i| std::cmp::Reverse(exact[i] % EURO));
    for &i in by_fraction.iter().take(left.max(0) as usize) {
        amounts[i] += 1;
    }
    amounts
}

/// Whether `share` of `capital` euros is less than one euro, so that no whole-euro share of at
/// least one euro (§ 5 (2) GmbHG) can correspond to it.
pub fn share_below_one_euro(capital: i64, share: Percentage) -> bool {
    share.of_capital_micro(capital) < 1_000_000
}

/// A German tax identification number (Steuer-IdNr): 11 digits, validated.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(transparent)]
pub struct TaxId(pub String);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum KapLegalForm {
    Ug,
    Gmbh,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum TaxPackage {
    #[serde(rename = "self")]
    SelfService,
    Guided,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum FormationType {
    Cash,
    InKind,
    Conversion,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ConversionType {
    Merger,
    Division,
    FormChange,
    AssetTransfer,
}

/// The tax registration's Address object: a street with a house number; a German 5-digit
/// postal code when `country` is DE.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaxAddress {
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Notary {
    pub first_name: String,
    pub last_name: String,
    pub address: TaxAddress,
}

/// A managing director (Geschäftsführer): a Vertreter in the filing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Director {
    pub first_name: String,
    /// Appended to the first name in the filing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub middle_name: Option<String>,
    pub last_name: String,
    /// Contact only, not in the filing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Contact only, not in the filing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(with = "iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub dob: Date,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_identification_number: Option<TaxId>,
    pub address: TaxAddress,
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
    pub address: TaxAddress,
    #[cfg_attr(feature = "openapi", schema(value_type = f64, example = 33.3333))]
    pub share_percentage: Percentage,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EntityShareholder {
    pub name: String,
    pub address: TaxAddress,
    #[cfg_attr(feature = "openapi", schema(value_type = f64, example = 50))]
    pub share_percentage: Percentage,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Shareholders {
    #[serde(default)]
    pub individuals: Vec<IndividualShareholder>,
    #[serde(default)]
    pub entities: Vec<EntityShareholder>,
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
    #[serde(with = "iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub payroll_start_date: Date,
    /// Whole euros a year.
    pub estimated_annual_wage_tax: i64,
}

/// A validated tax registration for a UG or GmbH.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaxRegistration {
    pub legal_form: KapLegalForm,
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
    #[serde(with = "iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub notarization_date: Date,
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
    /// Whole euros.
    pub capital: i64,
    /// Whole euros.
    pub paid_in_capital: i64,
    pub formation_type: FormationType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversion_type: Option<ConversionType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_holding: Option<bool>,
    /// The company's seat.
    pub address: TaxAddress,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notary: Option<Notary>,
    pub directors: Vec<Director>,
    pub shareholders: Shareholders,
    pub commercial_register: CommercialRegister,
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

impl TaxRegistration {
    /// The shareholders' percentages in filing order: the individuals, then the entities.
    pub fn share_percentages(&self) -> Vec<Percentage> {
        self.shareholders
            .individuals
            .iter()
            .map(|s| s.share_percentage)
            .chain(
                self.shareholders
                    .entities
                    .iter()
                    .map(|s| s.share_percentage),
            )
            .collect()
    }

    /// Whether the company belongs to a group as far as the request shows: it is a holding
    /// (`is_holding`), or a company holds more than half of it (a majority holding presumes
    /// dependence and a group, §§ 17 (2), 18 (1) AktG). Berlin assigns such companies to the
    /// corporation office of the group's industry (docs/offices.md). A minority company
    /// shareholder alone does not make a group here.
    pub fn belongs_to_group(&self) -> bool {
        self.is_holding == Some(true)
            || self
                .shareholders
                .entities
                .iter()
                .any(|e| u64::from(e.share_percentage.0) * 2 > u64::from(Percentage::HUNDRED.0))
    }

    /// The shares' whole-euro nominal amounts in filing order ([`nominal_amounts`]).
    pub fn nominal_amounts(&self) -> Vec<i64> {
        nominal_amounts(self.capital, &self.share_percentages())
    }
}

/// The legal form of any tax registration: a corporation's or a partnership's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum TaxLegalForm {
    Ug,
    Gmbh,
    Gbr,
    Egbr,
}

impl TaxLegalForm {
    /// The API value, which is also what the store keeps in `tax_registrations.legal_form`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaxLegalForm::Ug => "ug",
            TaxLegalForm::Gmbh => "gmbh",
            TaxLegalForm::Gbr => "gbr",
            TaxLegalForm::Egbr => "egbr",
        }
    }

    pub fn parse(s: &str) -> Option<TaxLegalForm> {
        [
            TaxLegalForm::Ug,
            TaxLegalForm::Gmbh,
            TaxLegalForm::Gbr,
            TaxLegalForm::Egbr,
        ]
        .into_iter()
        .find(|f| f.as_str() == s)
    }

    /// A partnership (GbR, eGbR) rather than a corporation (UG, GmbH).
    pub fn is_partnership(self) -> bool {
        matches!(self, TaxLegalForm::Gbr | TaxLegalForm::Egbr)
    }
}

/// A validated tax registration as stored and read back: a corporation's (UG, GmbH) or a
/// partnership's (GbR, eGbR); the case's `legal_form` says which.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum AnyTaxRegistration {
    /// UG or GmbH (`POST /v1/tax-registration`).
    Corporation(Box<TaxRegistration>),
    /// GbR or eGbR (`POST /v1/tax-registration/gbr`).
    Partnership(Box<crate::gbr::GbrTaxRegistration>),
}

impl AnyTaxRegistration {
    /// The stored record of a case whose `legal_form` column is `legal_form`.
    pub fn from_stored(legal_form: &str, record: serde_json::Value) -> Result<Self, String> {
        let form = TaxLegalForm::parse(legal_form)
            .ok_or_else(|| format!("unknown stored legal_form {legal_form:?}"))?;
        let parsed = if form.is_partnership() {
            serde_json::from_value(record).map(|r| AnyTaxRegistration::Partnership(Box::new(r)))
        } else {
            serde_json::from_value(record).map(|r| AnyTaxRegistration::Corporation(Box::new(r)))
        };
        let reg = parsed.map_err(|e| format!("stored {legal_form} record unreadable: {e}"))?;
        if reg.legal_form() != form {
            return Err(format!(
                "stored legal_form {legal_form} differs from the record's {}",
                reg.legal_form().as_str()
            ));
        }
        Ok(reg)
    }

    /// The JSON the store keeps.
    pub fn to_record(&self) -> serde_json::Result<serde_json::Value> {
        match self {
            AnyTaxRegistration::Corporation(r) => serde_json::to_value(r.as_ref()),
            AnyTaxRegistration::Partnership(r) => serde_json::to_value(r.as_ref()),
        }
    }

    pub fn legal_form(&self) -> TaxLegalForm {
        match self {
            AnyTaxRegistration::Corporation(r) => match r.legal_form {
                KapLegalForm::Ug => TaxLegalForm::Ug,
                KapLegalForm::Gmbh => TaxLegalForm::Gmbh,
            },
            AnyTaxRegistration::Partnership(r) => match r.legal_form {
                crate::gbr::PartnershipLegalForm::Gbr => TaxLegalForm::Gbr,
                crate::gbr::PartnershipLegalForm::Egbr => TaxLegalForm::Egbr,
            },
        }
    }

    pub fn name(&self) -> &str {
        match self {
            AnyTaxRegistration::Corporation(r) => &r.name,
            AnyTaxRegistration::Partnership(r) => &r.name,
        }
    }

    pub fn environment(&self) -> Environment {
        match self {
            AnyTaxRegistration::Corporation(r) => r.environment,
            AnyTaxRegistration::Partnership(r) => r.environment,
        }
    }

    pub fn package(&self) -> TaxPackage {
        match self {
            AnyTaxRegistration::Corporation(r) => r.package,
            AnyTaxRegistration::Partnership(r) => r.package,
        }
    }

    /// The company's seat.
    pub fn address(&self) -> &TaxAddress {
        match self {
            AnyTaxRegistration::Corporation(r) => &r.address,
            AnyTaxRegistration::Partnership(r) => &r.address,
        }
    }

    /// The office number the caller sent (or an operator assigned).
    pub fn tax_office_number(&self) -> Option<&str> {
        match self {
            AnyTaxRegistration::Corporation(r) => r.tax_office_number.as_deref(),
            AnyTaxRegistration::Partnership(r) => r.tax_office_number.as_deref(),
        }
    }

    pub fn set_tax_office_number(&mut self, number: String) {
        match self {
            AnyTaxRegistration::Corporation(r) => r.tax_office_number = Some(number),
            AnyTaxRegistration::Partnership(r) => r.tax_office_number = Some(number),
        }
    }

    /// The register number once registered (Handelsregister or Gesellschaftsregister).
    pub fn registration_number(&self) -> Option<&str> {
        let register = match self {
            AnyTaxRegistration::Corporation(r) => Some(&r.commercial_register),
            AnyTaxRegistration::Partnership(r) => r.company_register.as_ref(),
        };
        match register {
            Some(CommercialRegister::Registered {
                registration_number,
                ..
            }) => Some(registration_number),
            _ => None,
        }
    }
}

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

    #[test]
    fn nominal_amounts_are_whole_euros_summing_to_the_capital() {
        let p = |s| Percentage::parse(s).unwrap();
        // The example: 8333.33 + 8333.33 + 8333.35 was 25,000.01.
        let thirds = [p("33.3333"), p("33.3333"), p("33.3334")];
        assert_eq!(nominal_amounts(25_000, &thirds), [8333, 8333, 8334]);
        // Equal fractions: the earlier share gets the euro.
        assert_eq!(nominal_amounts(100, &[p("50"), p("50")]), [50, 50]);
        assert_eq!(
            nominal_amounts(1001, &[p("25"), p("25"), p("25"), p("25")]),
            [251, 250, 250, 250]
        );
        // The largest fraction wins over the order.
        assert_eq!(nominal_amounts(10, &[p("14"), p("16"), p("70")]), [1, 2, 7]);
        assert_eq!(nominal_amounts(25_000, &[p("100")]), [25_000]);
        assert!(share_below_one_euro(1, p("50")));
        assert!(share_below_one_euro(199, p("0.5")));
        assert!(!share_below_one_euro(200, p("0.5")));
    }
}

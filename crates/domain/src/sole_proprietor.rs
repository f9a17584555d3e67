//! The validated tax registration of a natural person who takes up a trade, a liberal
//! profession or agriculture and forestry: the Fragebogen zur steuerlichen Erfassung bei
//! Aufnahme einer gewerblichen, selbständigen (freiberuflichen) oder land- und
//! forstwirtschaftlichen Tätigkeit (ELSTER `FsE_EUn`).
//!
//! The shape the request validator (`sole_proprietor_request`) produces and the ELSTER writer
//! and the summary PDF read. What it shares with a company's registration (the business
//! address, bank, estimates, VAT and payroll) uses the types of [`crate::tax_core`]; the owner,
//! the spouse, the kind of activity and the profit determination are its own.

use serde::{Deserialize, Serialize};
use time::Date;
use uuid::Uuid;

use crate::address::PostalAddress;
use crate::tax_core::{TaxAdvisor, TaxId, iso_date, opt_iso_date};

/// The legal form: one value, a business of one natural person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum SoleProprietorLegalForm {
    /// Einzelunternehmen: a sole trader, a freelancer or a farmer.
    Einzelunternehmen,
}

impl SoleProprietorLegalForm {
    pub fn as_str(self) -> &'static str {
        "einzelunternehmen"
    }
}

/// The kind of activity (the questionnaire's income kinds): it decides the income element of
/// the XML and which reasons for cash accounting are open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ActivityKind {
    /// Gewerbebetrieb (§ 15 EStG): income from trade, `EinkGewBetr`.
    Trade,
    /// Selbständige Arbeit, freie Berufe (§ 18 EStG): `EinkSelbst`.
    LiberalProfession,
    /// Land- und Forstwirtschaft (§ 13 EStG): its XML element is not public, so its profit
    /// estimate is listed for the operator.
    AgricultureForestry,
}

impl ActivityKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActivityKind::Trade => "trade",
            ActivityKind::LiberalProfession => "liberal-profession",
            ActivityKind::AgricultureForestry => "agriculture-forestry",
        }
    }
}

/// How the profit is determined (Gewinnermittlung, `GewinnErmittlung`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ProfitDetermination {
    /// Einnahmenüberschussrechnung (§ 4 Abs. 3 EStG): code `01`.
    CashBasis,
    /// Betriebsvermögensvergleich, a balance sheet (§ 4 Abs. 1, § 5 EStG): code `02`.
    BalanceSheet,
}

/// The form of address (`AnredeId`): `1` Herr, `2` Frau; omitted, none is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Salutation {
    Mr,
    Ms,
}

/// Marital status (Familienstand, questionnaire sub-page "Allgemeine Angaben").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum MaritalStatus {
    Single,
    Married,
    CivilPartnership,
    Widowed,
    Divorced,
    PermanentlySeparated,
}

impl MaritalStatus {
    /// Whether the questionnaire asks for the spouse or partner.
    pub fn has_spouse(self) -> bool {
        matches!(
            self,
            MaritalStatus::Married | MaritalStatus::CivilPartnership
        )
    }

    pub fn german(self) -> &'static str {
        match self {
            MaritalStatus::Single => "ledig",
            MaritalStatus::Married => "verheiratet",
            MaritalStatus::CivilPartnership => "eingetragene Lebenspartnerschaft",
            MaritalStatus::Widowed => "verwitwet",
            MaritalStatus::Divorced => "geschieden",
            MaritalStatus::PermanentlySeparated => "dauernd getrennt lebend",
        }
    }
}

/// The religion codes of the questionnaire (church tax), with their meaning: the 23 of the
/// reference (docs/elster-eun-reference.md, section 3). `11`: not subject to church tax.
pub const RELIGIONS: &[(&str, &str)] = &[
    ("11", "nicht kirchensteuerpflichtig"),
    ("02", "evangelisch"),
    ("03", "römisch-katholisch"),
    ("04", "altkatholisch"),
    ("05", "evangelisch-reformiert"),
    ("07", "französisch-reformiert"),
    ("10", "sonstige"),
    ("12", "Israelitische Religionsgemeinschaft Württemberg"),
    ("13", "Freireligiöse Landesgemeinde Baden"),
    ("14", "Freireligiöse Landesgemeinde Pfalz"),
    ("15", "Freireligiöse Gemeinde Mainz"),
    ("16", "Freie Religionsgemeinschaft Alzey"),
    ("17", "Freireligiöse Gemeinde Offenbach"),
    ("18", "Jüdische Gemeinde Frankfurt (Hessen)"),
    ("19", "Jüdische Gemeinden im Landesverband Hessen"),
    ("20", "Evangelisch-reformierte Kirche Bückeburg"),
    ("21", "Evangelisch-reformierte Kirche Stadthagen"),
    ("24", "Jüdische Gemeinde Hamburg"),
    ("25", "Israelitische Religionsgemeinschaft Baden"),
    (
        "26",
        "Landesverband der israelitischen Kultusgemeinden in Bayern",
    ),
    ("27", "Jüdische Kultusgemeinden Bad Kreuznach und Koblenz"),
    ("28", "israelitisch (Saarland)"),
    ("29", "Nordrhein-Westfalen: israelitisch (jüdisch)"),
];

/// The German meaning of a religion code.
pub fn religion_name(code: &str) -> Option<&'static str> {
    RELIGIONS.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// The owner (Inhaber/in): the natural person the registration is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Proprietor {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub salutation: Option<Salutation>,
    /// Academic title (`Dr.`), when any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub first_name: String,
    pub last_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub birth_name: Option<String>,
    #[serde(with = "iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub dob: Date,
    /// The Steuer-IdNr (11 digits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_identification_number: Option<TaxId>,
    /// The profession practised (ausgeübter Beruf), when it differs from the activity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occupation: Option<String>,
    /// The two-digit religion code for church tax ([`RELIGIONS`]; `11`: none).
    #[cfg_attr(feature = "openapi", schema(example = "11"))]
    pub religion: String,
    /// The residence (Wohnsitz): where the tax office is decided (§ 19 AO).
    pub address: PostalAddress,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    pub marital_status: MaritalStatus,
    /// Since when the marital status holds; not for `single`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "opt_iso_date"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
    pub marital_status_since: Option<Date>,
}

/// The spouse or registered partner (Ehegatte / Lebenspartner), when married or in a civil
/// partnership.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Spouse {
    pub first_name: String,
    pub last_name: String,
    #[serde(with = "iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub dob: Date,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_identification_number: Option<TaxId>,
    /// As for the owner; when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub religion: Option<String>,
}

/// Why cash accounting (Ist-Versteuerung, § 20 UStG) is applied for: one reason of the form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum CashAccountingReason {
    /// § 20 sentence 1 no. 1: expected turnover up to 800,000 euros (`IstVerstUStGrundUmsatz`).
    TurnoverBelowLimit,
    /// § 20 sentence 1 no. 2: exempted from bookkeeping (§ 148 AO; `IstVerstUStGrundAO`).
    NoBookkeepingDuty,
    /// § 20 sentence 1 no. 3: turnover of a liberal profession without a duty to keep books
    /// (`IstVerstUStGrundFreierBeruf`).
    LiberalProfession,
}

/// Whole euros for the year the activity starts and the one after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct YearAmounts {
    pub formation_year: i64,
    pub following_year: i64,
}

/// The expected income besides the new activity and the deductions the prepayments of income
/// tax are set from (Festsetzung der Vorauszahlungen), each when there is any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Prepayments {
    /// Nichtselbständige Arbeit: wages of an employment kept beside the activity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub employment_income: Option<YearAmounts>,
    /// Kapitalvermögen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capital_income: Option<YearAmounts>,
    /// Vermietung und Verpachtung.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rental_income: Option<YearAmounts>,
    /// Sonstige Einkünfte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_income: Option<YearAmounts>,
    /// Sonderausgaben.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub special_expenses: Option<YearAmounts>,
}

/// The earlier circumstances the questionnaire asks for (Bisherige persönliche Verhältnisse):
/// a tax number and office of before, the address of before a move, an earlier business.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EarlierCircumstances {
    /// A tax number the owner already has (an earlier assessment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_tax_number: Option<String>,
    /// The office of that tax number, by name or number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_tax_office: Option<String>,
    /// The residence before a move in the last twelve months.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_address: Option<PostalAddress>,
    /// An earlier self-employed activity in the last five years: what, when, at which office.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_self_employment: Option<String>,
}

crate::tax_core::tax_registration! {
    /// A validated tax registration for a sole trader, freelancer or farmer.
    pub struct SoleProprietorTaxRegistration / SoleProprietorFields {
        legal_form: SoleProprietorLegalForm,
        /// The start of the activity including its preparations (Betriebsbeginn, the first
        /// preparatory acts): not in the future.
        founded: preparations_start_date,
        before_address: {
            pub activity_kind: ActivityKind,
            pub profit_determination: ProfitDetermination,
        }
        /// Where the business is run (Anschrift des Unternehmens); the residence when it is run
        /// from home (then the XML says so instead of repeating it).
        address,
        after_address: {
            pub owner: Proprietor,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub spouse: Option<Spouse>,
            /// With `vat.accounting_method` `cash`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub cash_accounting_reason: Option<CashAccountingReason>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub prepayments: Option<Prepayments>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub earlier_circumstances: Option<EarlierCircumstances>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub tax_advisor: Option<TaxAdvisor>,
            /// The owner's trade registration the person, address and activity were taken
            /// from, when the create named one.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub trade_registration_id: Option<Uuid>,
        }
    }
}

impl SoleProprietorTaxRegistration {
    /// Whether the business is run at the residence (the form's "entspricht meiner privaten
    /// Adresse"): the same street, postal code, city and country, spaces and case aside.
    pub fn runs_from_home(&self) -> bool {
        let norm = |s: &str| {
            s.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase()
        };
        let (a, b) = (&self.address, &self.owner.address);
        norm(&a.street) == norm(&b.street)
            && norm(&a.zip) == norm(&b.zip)
            && norm(&a.city) == norm(&b.city)
            && a.country == b.country
            && a.street_second_line.as_deref().map(norm)
                == b.street_second_line.as_deref().map(norm)
    }

    /// The owner's full name (`Erika Muster`).
    pub fn owner_name(&self) -> String {
        format!("{} {}", self.owner.first_name, self.owner.last_name)
    }
}

//! The validated tax registration (Fragebogen zur steuerlichen Erfassung) of a UG or GmbH.
//!
//! The shape the request validator produces and the ELSTER XML writer and summary PDF read.
//! Field names and enum values are the API's. Money is whole euros (`i64`), percentages are
//! exact decimals ([`Percentage`], no floating point), dates `time::Date`.

use serde::{Deserialize, Serialize};
use time::Date;

pub use crate::address::PostalAddress;
use crate::company::Environment;
use crate::tax_core::iso_date;
pub use crate::tax_core::{
    AccountingMethod, AuthorizedRecipient, BalanceType, CASH_ACCOUNTING_LIMIT, CommercialRegister,
    EntityShareholder, Estimate, FinancialEstimates, IndividualShareholder, MONTHLY_RETURNS_ABOVE,
    PartyFirm, PartyPerson, Payroll, Percentage, ReturnFrequency, ReverseChargeServiceType,
    SMALL_BUSINESS_FOLLOWING_YEAR, SMALL_BUSINESS_FOUNDING_YEAR, TaxAdvisor, TaxId, TaxPackage,
    Vat, VatRegime,
};

impl KapLegalForm {
    /// The API value: `ug` or `gmbh`.
    pub fn as_str(self) -> &'static str {
        match self {
            KapLegalForm::Ug => "ug",
            KapLegalForm::Gmbh => "gmbh",
        }
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Notary {
    pub first_name: String,
    pub last_name: String,
    pub address: PostalAddress,
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
    pub address: PostalAddress,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Shareholders {
    #[serde(default)]
    pub individuals: Vec<IndividualShareholder>,
    #[serde(default)]
    pub entities: Vec<EntityShareholder>,
}

crate::tax_core::tax_registration! {
    /// A validated tax registration for a UG or GmbH.
    pub struct TaxRegistration / CorporationFields {
        legal_form: KapLegalForm,
        founded: notarization_date,
        before_address: {
            /// Whole euros.
            pub capital: i64,
            /// Whole euros.
            pub paid_in_capital: i64,
            pub formation_type: FormationType,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub conversion_type: Option<ConversionType>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub is_holding: Option<bool>,
        }
        /// The company's seat.
        address,
        after_address: {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub notary: Option<Notary>,
            pub directors: Vec<Director>,
            pub shareholders: Shareholders,
            pub commercial_register: CommercialRegister,
            /// The company's telephone (questionnaire sub-page 1): filed when it is a German
            /// number with its area code apart (`Komm/Tel`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub phone: Option<String>,
            /// The company's web address (sub-page 1, line 12; `Komm/Web/Adresse`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub website: Option<String>,
            /// Where the company is managed, when not at its seat (sub-page 2, lines 8-10):
            /// it decides the responsible tax office (§ 20 AO).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub place_of_management: Option<PostalAddress>,
            /// Sub-page 5, lines 24-30.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub tax_advisor: Option<TaxAdvisor>,
            /// Sub-page 6, lines 41-48.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub authorized_recipient: Option<AuthorizedRecipient>,
            /// The account holder when it is not the company (sub-page 7, lines 52/53); only
            /// with an `iban`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub bank_account_holder: Option<String>,
            /// Request the exemption certificate from the construction withholding tax
            /// (§ 48b EStG, sub-page 21, line 223).
            #[serde(default, skip_serializing_if = "std::ops::Not::not")]
            pub request_construction_exemption_certificate: bool,
            /// PDFs filed with the questionnaire (sub-pages 22/23), sent as file parts of a
            /// multipart create.
            #[serde(default, skip_serializing_if = "Attachments::is_empty")]
            pub attachments: Attachments,
            /// A post office box of the company (sub-page 1, line 7).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub po_box: Option<PoBox>,
            /// Whether the company only manages its own assets (sub-page 1, line 14).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub manages_own_assets_only: Option<bool>,
            /// Whether shares are held in trust (sub-page 10, line 90; `Treuhand`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub has_trust_relationships: Option<bool>,
            /// Where the wages are computed, when not at the seat (sub-page 16, lines 174-177);
            /// only with employees.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub payroll_establishment: Option<PostalAddress>,
        }
    }
}

/// A post office box (Postfach): its number, postal code and place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"number": "120045", "zip": "10117", "city": "Berlin"})))]
pub struct PoBox {
    /// 1 to 6 digits (as the reference's `Postfach`, St66:344).
    pub number: String,
    /// German 5-digit postal code.
    pub zip: String,
    pub city: String,
}

/// The documents a corporation's questionnaire goes with (sub-pages 22 and 23): each names the
/// multipart part of its PDF (`{"file": "articles"}`), stored as a document of the case.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Attachments {
    /// The articles of association (Gesellschaftsvertrag, line 227: required at formation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub articles_of_association: Option<crate::trade::UploadedDocument>,
    /// The list of shareholders (Gesellschafterliste).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shareholder_list: Option<crate::trade::UploadedDocument>,
    /// The SEPA direct debit mandate for the tax office (sub-page 7); only with an `iban`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sepa_mandate: Option<crate::trade::UploadedDocument>,
}

/// The most bytes of one attachment: ELSTER's portal takes PDFs of at most 10 MB each
/// (questionnaire sub-page 23), and the XML carries them whole (in base64).
pub const MAX_ATTACHMENT_BYTES: usize = 10 * 1024 * 1024;

impl Attachments {
    /// The attachment fields, in filing order, with the part each names.
    pub const FIELDS: [&'static str; 3] = [
        "articles_of_association",
        "shareholder_list",
        "sepa_mandate",
    ];

    pub fn is_empty(&self) -> bool {
        self.parts().is_empty()
    }

    /// `(field, part)` of each attachment sent, in filing order.
    pub fn parts(&self) -> Vec<(&'static str, &str)> {
        [
            ("articles_of_association", &self.articles_of_association),
            ("shareholder_list", &self.shareholder_list),
            ("sepa_mandate", &self.sepa_mandate),
        ]
        .into_iter()
        .filter_map(|(field, d)| d.as_ref().map(|d| (field, d.file.as_str())))
        .collect()
    }
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

    /// The shares' whole-euro nominal amounts in filing order: as sent (`nominal_amount`, for
    /// every shareholder or none), else derived from the percentages ([`nominal_amounts`]).
    pub fn nominal_amounts(&self) -> Vec<i64> {
        let sent: Option<Vec<i64>> = self
            .shareholders
            .individuals
            .iter()
            .map(|s| s.nominal_amount)
            .chain(self.shareholders.entities.iter().map(|s| s.nominal_amount))
            .collect();
        sent.unwrap_or_else(|| nominal_amounts(self.capital, &self.share_percentages()))
    }

    /// What the filing states of each share, in filing order: its nominal amount and the
    /// percentage that amount is of the capital (four decimals), so that the two always agree
    /// (docs/elster.md, "Nominal amounts"): 8,333 of 25,000 euros is 33.3320 %, not the
    /// 33.3333 % a caller may have sent.
    pub fn filed_shares(&self) -> Vec<(i64, Percentage)> {
        self.nominal_amounts()
            .into_iter()
            .map(|n| (n, Percentage::of_whole(n, self.capital)))
            .collect()
    }
}

/// The legal form of any tax registration: a corporation's, a partnership's or a sole
/// proprietor's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum TaxLegalForm {
    Ug,
    Gmbh,
    Gbr,
    Egbr,
    Einzelunternehmen,
}

impl TaxLegalForm {
    pub const ALL: [TaxLegalForm; 5] = [
        TaxLegalForm::Ug,
        TaxLegalForm::Gmbh,
        TaxLegalForm::Gbr,
        TaxLegalForm::Egbr,
        TaxLegalForm::Einzelunternehmen,
    ];

    /// The API value, which is also what the store keeps in `tax_registrations.legal_form`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaxLegalForm::Ug => "ug",
            TaxLegalForm::Gmbh => "gmbh",
            TaxLegalForm::Gbr => "gbr",
            TaxLegalForm::Egbr => "egbr",
            TaxLegalForm::Einzelunternehmen => "einzelunternehmen",
        }
    }

    pub fn parse(s: &str) -> Option<TaxLegalForm> {
        TaxLegalForm::ALL.into_iter().find(|f| f.as_str() == s)
    }

    /// A partnership (GbR, eGbR) rather than a corporation (UG, GmbH).
    pub fn is_partnership(self) -> bool {
        matches!(self, TaxLegalForm::Gbr | TaxLegalForm::Egbr)
    }
}

/// A validated tax registration as stored and read back: a corporation's (UG, GmbH), a
/// partnership's (GbR, eGbR) or a sole proprietor's; the case's `legal_form` says which.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum AnyTaxRegistration {
    /// UG or GmbH (`POST /v1/tax-registration`).
    Corporation(Box<TaxRegistration>),
    /// GbR or eGbR (`POST /v1/tax-registration/gbr`).
    Partnership(Box<crate::gbr::GbrTaxRegistration>),
    /// A sole trader, freelancer or farmer (`POST /v1/tax-registration/sole-proprietor`).
    SoleProprietor(Box<crate::sole_proprietor::SoleProprietorTaxRegistration>),
}

/// `$body` with `$r` bound to the registration of whichever variant `$reg` is (the fields
/// every tax registration has, by name).
macro_rules! each {
    ($reg:expr, $r:ident => $body:expr) => {
        match $reg {
            AnyTaxRegistration::Corporation($r) => $body,
            AnyTaxRegistration::Partnership($r) => $body,
            AnyTaxRegistration::SoleProprietor($r) => $body,
        }
    };
}

impl AnyTaxRegistration {
    /// The stored record of a case whose `legal_form` column is `form`.
    pub fn from_stored(form: TaxLegalForm, record: serde_json::Value) -> Result<Self, String> {
        let legal_form = form.as_str();
        let parsed =
            match form {
                TaxLegalForm::Gbr | TaxLegalForm::Egbr => serde_json::from_value(record)
                    .map(|r| AnyTaxRegistration::Partnership(Box::new(r))),
                TaxLegalForm::Ug | TaxLegalForm::Gmbh => serde_json::from_value(record)
                    .map(|r| AnyTaxRegistration::Corporation(Box::new(r))),
                TaxLegalForm::Einzelunternehmen => serde_json::from_value(record)
                    .map(|r| AnyTaxRegistration::SoleProprietor(Box::new(r))),
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
        each!(self, r => serde_json::to_value(r.as_ref()))
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
            AnyTaxRegistration::SoleProprietor(_) => TaxLegalForm::Einzelunternehmen,
        }
    }

    pub fn name(&self) -> &str {
        each!(self, r => &r.name)
    }

    pub fn environment(&self) -> Environment {
        each!(self, r => r.environment)
    }

    pub fn package(&self) -> TaxPackage {
        each!(self, r => r.package)
    }

    /// The company's seat (a sole proprietor's business address).
    pub fn address(&self) -> &PostalAddress {
        each!(self, r => &r.address)
    }

    /// The office number the caller sent (or an operator assigned).
    pub fn tax_office_number(&self) -> Option<&str> {
        each!(self, r => r.tax_office_number.as_deref())
    }

    pub fn set_tax_office_number(&mut self, number: String) {
        each!(self, r => r.tax_office_number = Some(number))
    }

    /// The register number once registered (Handelsregister or Gesellschaftsregister).
    pub fn registration_number(&self) -> Option<&str> {
        let register = match self {
            AnyTaxRegistration::Corporation(r) => Some(&r.commercial_register),
            AnyTaxRegistration::Partnership(r) => r.company_register.as_ref(),
            AnyTaxRegistration::SoleProprietor(_) => None,
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

#[cfg(test)]
mod tests {
    use super::*;

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

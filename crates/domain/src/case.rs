//! The vocabulary every layer shares about a case: which kind it is and what its documents are.
//! The store takes and returns these types; their strings are the names written in the
//! database and shown in the API, so each is spelled here once.

use serde::{Deserialize, Serialize};

/// Declares [`CaseKind`] with its stored names, and [`CaseKind::ALL`] from the same list, so that
/// a kind added here is in `ALL` as well: every per-kind table that is not a `match` (webhook
/// events, metrics series, the checklist test of docs/adding-a-case-kind.md) iterates `ALL`.
macro_rules! case_kinds {
    ($($(#[$doc:meta])* $kind:ident => $name:literal,)+) => {
        /// A trade registration (Gewerbeanmeldung) or a tax registration (Fragebogen zur
        /// steuerlichen Erfassung, either legal family).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "lowercase")]
        pub enum CaseKind {
            $($(#[$doc])* $kind,)+
        }

        impl CaseKind {
            /// Every kind, in the order of the API's reference.
            pub const ALL: &'static [CaseKind] = &[$(CaseKind::$kind,)+];

            /// The stored name, also the first folder of the case's documents in the document
            /// store.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(CaseKind::$kind => $name,)+
                }
            }
        }
    };
}

case_kinds! {
    /// A trade registration (`/v1/trade-registration`).
    Trade => "trade",
    /// A tax registration of either legal family (`/v1/tax-registration/...`).
    Tax => "tax",
}

impl CaseKind {
    pub fn parse(s: &str) -> Option<Self> {
        CaseKind::ALL.iter().copied().find(|k| k.as_str() == s)
    }
}

/// The documents a case holds, by their API name (`type` in a GET's `documents`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DocumentType {
    /// The GewA 1 of one owner: rendered by the service, or the owner's signed upload.
    TradeLicenceApplication,
    /// One owner's power of attorney for an `assisted` case.
    PowerOfAttorney,
    /// The trade licence the office issued, uploaded by an operator.
    TradeLicence,
    /// The ELSTER XML of a tax registration.
    TaxRegistrationXml,
    /// The German summary PDF of a tax registration (rendered on its first download).
    TaxRegistrationSummary,
    /// A corporation's articles of association, sent with its tax registration and filed in
    /// its ELSTER XML (`Anhaenge`).
    ArticlesOfAssociation,
    /// A corporation's list of shareholders, likewise.
    ShareholderList,
    /// The SEPA direct debit mandate sent with a corporation's tax registration, likewise.
    SepaMandate,
}

impl DocumentType {
    pub const ALL: [DocumentType; 8] = [
        DocumentType::TradeLicenceApplication,
        DocumentType::PowerOfAttorney,
        DocumentType::TradeLicence,
        DocumentType::TaxRegistrationXml,
        DocumentType::TaxRegistrationSummary,
        DocumentType::ArticlesOfAssociation,
        DocumentType::ShareholderList,
        DocumentType::SepaMandate,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            DocumentType::TradeLicenceApplication => "trade-licence-application",
            DocumentType::PowerOfAttorney => "power-of-attorney",
            DocumentType::TradeLicence => "trade-licence",
            DocumentType::TaxRegistrationXml => "tax-registration-xml",
            DocumentType::TaxRegistrationSummary => "tax-registration-summary",
            DocumentType::ArticlesOfAssociation => "articles-of-association",
            DocumentType::ShareholderList => "shareholder-list",
            DocumentType::SepaMandate => "sepa-mandate",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.as_str() == s)
    }

    /// The kind of case that holds documents of this type.
    pub fn case_kind(self) -> CaseKind {
        match self {
            DocumentType::TradeLicenceApplication
            | DocumentType::PowerOfAttorney
            | DocumentType::TradeLicence => CaseKind::Trade,
            DocumentType::TaxRegistrationXml
            | DocumentType::TaxRegistrationSummary
            | DocumentType::ArticlesOfAssociation
            | DocumentType::ShareholderList
            | DocumentType::SepaMandate => CaseKind::Tax,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for kind in [CaseKind::Trade, CaseKind::Tax] {
            assert_eq!(CaseKind::parse(kind.as_str()), Some(kind));
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
        for doc in DocumentType::ALL {
            assert_eq!(DocumentType::parse(doc.as_str()), Some(doc));
            assert_eq!(serde_json::to_value(doc).unwrap(), doc.as_str());
        }
        assert_eq!(CaseKind::parse("gbr"), None);
        assert_eq!(DocumentType::parse("gewa1"), None);
        assert_eq!(
            DocumentType::TradeLicence.case_kind(),
            CaseKind::Trade,
            "an issued licence belongs to the trade case"
        );
    }
}

//! What the store records about where a case stands, for either kind of case: its status and
//! its package. The store takes and returns these types and writes their names
//! ([`CaseStatus::as_str`], [`CasePackage::as_str`]), which are also the API's, so a status or
//! package is parsed once, when a row is read, and never compared as a string.

use crate::case::CaseKind;
use crate::lifecycle::{Lifecycle, TaxStatus, TradeStatus};
use crate::tax_core::TaxPackage;
use crate::trade::Package;

/// The status of a trade or a tax registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CaseStatus {
    Trade(TradeStatus),
    Tax(TaxStatus),
}

impl CaseStatus {
    /// The kind of case whose lifecycle has this status.
    pub fn kind(self) -> CaseKind {
        match self {
            CaseStatus::Trade(_) => CaseKind::Trade,
            CaseStatus::Tax(_) => CaseKind::Tax,
        }
    }

    /// The stored and API name (`form-rendered`, `validated`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            CaseStatus::Trade(s) => s.as_str(),
            CaseStatus::Tax(s) => s.as_str(),
        }
    }

    /// Every status of a `kind` case, in its lifecycle's order.
    pub fn of(kind: CaseKind) -> Vec<CaseStatus> {
        match kind {
            CaseKind::Trade => TradeStatus::ALL
                .iter()
                .map(|s| CaseStatus::Trade(*s))
                .collect(),
            CaseKind::Tax => TaxStatus::ALL.iter().map(|s| CaseStatus::Tax(*s)).collect(),
        }
    }

    /// Every status of every kind ([`CaseKind::ALL`]), kind by kind.
    pub fn all() -> impl Iterator<Item = CaseStatus> {
        CaseKind::ALL.iter().flat_map(|k| CaseStatus::of(*k))
    }

    /// The status of a `kind` case named `s`, if its lifecycle has one.
    pub fn parse(kind: CaseKind, s: &str) -> Option<Self> {
        match kind {
            CaseKind::Trade => TradeStatus::parse(s).map(CaseStatus::Trade),
            CaseKind::Tax => TaxStatus::parse(s).map(CaseStatus::Tax),
        }
    }
}

impl From<TradeStatus> for CaseStatus {
    fn from(s: TradeStatus) -> Self {
        CaseStatus::Trade(s)
    }
}

impl From<TaxStatus> for CaseStatus {
    fn from(s: TaxStatus) -> Self {
        CaseStatus::Tax(s)
    }
}

/// The package of a trade or a tax registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CasePackage {
    Trade(Package),
    Tax(TaxPackage),
}

impl CasePackage {
    /// The stored and API name (`self`, `assisted`, `guided`).
    pub fn as_str(self) -> &'static str {
        match self {
            CasePackage::Trade(p) => p.as_str(),
            CasePackage::Tax(p) => p.as_str(),
        }
    }

    /// The package of a `kind` case named `s`, if that kind has one.
    pub fn parse(kind: CaseKind, s: &str) -> Option<Self> {
        match kind {
            CaseKind::Trade => Package::parse(s).map(CasePackage::Trade),
            CaseKind::Tax => TaxPackage::parse(s).map(CasePackage::Tax),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_per_kind_and_match_serde() {
        for s in TradeStatus::ALL {
            let status = CaseStatus::from(*s);
            assert_eq!(
                CaseStatus::parse(CaseKind::Trade, status.as_str()),
                Some(status)
            );
            assert_eq!(serde_json::to_value(s).unwrap(), status.as_str());
            assert_eq!(status.kind(), CaseKind::Trade);
        }
        for s in TaxStatus::ALL {
            let status = CaseStatus::from(*s);
            assert_eq!(
                CaseStatus::parse(CaseKind::Tax, status.as_str()),
                Some(status)
            );
            assert_eq!(serde_json::to_value(s).unwrap(), status.as_str());
            assert_eq!(status.kind(), CaseKind::Tax);
        }
        // A status of the other lifecycle is no status of this one.
        assert_eq!(CaseStatus::parse(CaseKind::Tax, "form-rendered"), None);
        assert_eq!(CaseStatus::parse(CaseKind::Trade, "validated"), None);
        assert_eq!(CaseStatus::parse(CaseKind::Trade, "Submitted"), None);

        for p in [Package::SelfService, Package::Assisted] {
            let package = CasePackage::Trade(p);
            assert_eq!(
                CasePackage::parse(CaseKind::Trade, package.as_str()),
                Some(package)
            );
            assert_eq!(serde_json::to_value(p).unwrap(), package.as_str());
        }
        for p in [TaxPackage::SelfService, TaxPackage::Guided] {
            let package = CasePackage::Tax(p);
            assert_eq!(
                CasePackage::parse(CaseKind::Tax, package.as_str()),
                Some(package)
            );
            assert_eq!(serde_json::to_value(p).unwrap(), package.as_str());
        }
        assert_eq!(CasePackage::parse(CaseKind::Tax, "assisted"), None);
        assert_eq!(CasePackage::parse(CaseKind::Trade, "guided"), None);
    }
}

//! The lifecycles of trade and tax registrations (docs/api/lifecycle.md),
//! checked in one place:
//! a transition not in the table is refused with the current status and the allowed next ones.

use serde::{Deserialize, Serialize};

/// Trade registration statuses (api.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum TradeStatus {
    Initiated,
    FormRendered,
    Submitted,
    Completed,
    Blocked,
}

/// Tax registration statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum TaxStatus {
    Validated,
    Submitted,
    Completed,
    Rejected,
}

/// A refused transition: where the case is and where it may go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidTransition {
    pub current: &'static str,
    pub requested: &'static str,
    pub allowed: Vec<&'static str>,
}

impl std::fmt::Display for InvalidTransition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.allowed.is_empty() {
            write!(
                f,
                "the case is {} (final); it cannot become {}",
                self.current, self.requested
            )
        } else {
            write!(
                f,
                "the case is {}; it can become {}, not {}",
                self.current,
                self.allowed.join(" or "),
                self.requested
            )
        }
    }
}

/// A status with a transition table.
pub trait Lifecycle: Copy + Eq + 'static {
    const ALL: &'static [Self];
    fn as_str(self) -> &'static str;
    /// The statuses this one may move to.
    fn next(self) -> &'static [Self];

    fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|x| x.as_str() == s)
    }

    /// `to` when the table allows it, else why not.
    fn transition(self, to: Self) -> Result<Self, InvalidTransition> {
        if self.next().contains(&to) {
            Ok(to)
        } else {
            Err(InvalidTransition {
                current: self.as_str(),
                requested: to.as_str(),
                allowed: self.next().iter().map(|s| s.as_str()).collect(),
            })
        }
    }

    fn is_final(self) -> bool {
        self.next().is_empty()
    }
}

impl Lifecycle for TradeStatus {
    const ALL: &'static [Self] = &[
        TradeStatus::Initiated,
        TradeStatus::FormRendered,
        TradeStatus::Submitted,
        TradeStatus::Completed,
        TradeStatus::Blocked,
    ];

    fn as_str(self) -> &'static str {
        match self {
            TradeStatus::Initiated => "initiated",
            TradeStatus::FormRendered => "form-rendered",
            TradeStatus::Submitted => "submitted",
            TradeStatus::Completed => "completed",
            TradeStatus::Blocked => "blocked",
        }
    }

    fn next(self) -> &'static [Self] {
        use TradeStatus::*;
        match self {
            Initiated => &[FormRendered, Submitted],
            FormRendered => &[Submitted],
            Submitted => &[Completed, Blocked],
            Blocked => &[Submitted],
            Completed => &[],
        }
    }
}

impl TradeStatus {
    /// Whether a case's GewA 1 forms still follow its trade office (an office assigned later
    /// heads them): until someone files them. Our operators file an assisted case's forms (it
    /// is `submitted` from the create, and `blocked` when the office asks for more, such as
    /// filing with another office), so they follow until the case is completed; a self case's
    /// owners file their own, so they follow only while `form-rendered`.
    pub fn forms_follow_office(self, package: crate::trade::Package) -> bool {
        use crate::trade::Package;
        match self {
            TradeStatus::FormRendered => true,
            TradeStatus::Submitted | TradeStatus::Blocked => package == Package::Assisted,
            TradeStatus::Initiated | TradeStatus::Completed => false,
        }
    }
}

impl Lifecycle for TaxStatus {
    const ALL: &'static [Self] = &[
        TaxStatus::Validated,
        TaxStatus::Submitted,
        TaxStatus::Completed,
        TaxStatus::Rejected,
    ];

    fn as_str(self) -> &'static str {
        match self {
            TaxStatus::Validated => "validated",
            TaxStatus::Submitted => "submitted",
            TaxStatus::Completed => "completed",
            TaxStatus::Rejected => "rejected",
        }
    }

    fn next(self) -> &'static [Self] {
        use TaxStatus::*;
        match self {
            Validated => &[Submitted],
            Submitted => &[Completed, Rejected],
            Rejected => &[Submitted],
            Completed => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_follow_the_office_until_someone_files_them() {
        use crate::trade::Package::{Assisted, SelfService};
        let follows: Vec<(&str, &str)> = TradeStatus::ALL
            .iter()
            .flat_map(|&s| [(s, SelfService), (s, Assisted)])
            .filter(|&(s, p)| s.forms_follow_office(p))
            .map(|(s, p)| (s.as_str(), if p == Assisted { "assisted" } else { "self" }))
            .collect();
        assert_eq!(
            follows,
            [
                ("form-rendered", "self"),
                ("form-rendered", "assisted"),
                ("submitted", "assisted"),
                ("blocked", "assisted"),
            ]
        );
    }

    /// Every pair (from, to): allowed exactly when the decisions' table lists it.
    fn check_all<L: Lifecycle + std::fmt::Debug>(allowed: &[(&str, &str)]) {
        let mut seen = 0;
        for &from in L::ALL {
            for &to in L::ALL {
                let listed = allowed.contains(&(from.as_str(), to.as_str()));
                match from.transition(to) {
                    Ok(s) => {
                        assert!(listed, "{from:?} -> {to:?} must be refused");
                        assert_eq!(s, to);
                        seen += 1;
                    }
                    Err(e) => {
                        assert!(!listed, "{from:?} -> {to:?} must be allowed");
                        assert_eq!(e.current, from.as_str());
                        assert_eq!(
                            e.allowed,
                            from.next().iter().map(|s| s.as_str()).collect::<Vec<_>>()
                        );
                        assert!(e.to_string().contains(from.as_str()));
                    }
                }
            }
            assert_eq!(L::parse(from.as_str()), Some(from));
        }
        assert_eq!(seen, allowed.len());
    }

    #[test]
    fn trade_lifecycle() {
        check_all::<TradeStatus>(&[
            ("initiated", "form-rendered"),
            ("initiated", "submitted"),
            ("form-rendered", "submitted"),
            ("submitted", "completed"),
            ("submitted", "blocked"),
            ("blocked", "submitted"),
        ]);
        assert!(TradeStatus::Completed.is_final());
        let e = TradeStatus::Completed
            .transition(TradeStatus::Blocked)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "the case is completed (final); it cannot become blocked"
        );
        assert_eq!(TradeStatus::parse("nope"), None);
    }

    #[test]
    fn tax_lifecycle() {
        check_all::<TaxStatus>(&[
            ("validated", "submitted"),
            ("submitted", "completed"),
            ("submitted", "rejected"),
            ("rejected", "submitted"),
        ]);
        let e = TaxStatus::Validated
            .transition(TaxStatus::Completed)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "the case is validated; it can become submitted, not completed"
        );
        // Serde names are the API's.
        assert_eq!(
            serde_json::to_string(&TradeStatus::FormRendered).unwrap(),
            "\"form-rendered\""
        );
    }
}

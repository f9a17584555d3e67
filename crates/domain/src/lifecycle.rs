//! The lifecycles of trade and tax registrations (docs/api/lifecycle.md),
//! checked in one place:
//! a transition not in the table is refused with the current status and the allowed next ones.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Trade registration statuses (docs/spec/api.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum TradeStatus {
    Initiated,
    FormRendered,
    Submitted,
    Completed,
    Blocked,
    /// Withdrawn by the provider before it went to the trade office (final).
    Cancelled,
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
    /// Withdrawn by the provider before it went to the tax office, or after a rejection
    /// (final).
    Cancelled,
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

    /// The statuses `role` may ask a case to move to; the table then decides from where.
    fn targets(role: Role) -> &'static [Self];

    /// The statuses from which `role` may move a case at all (`None`: wherever the table
    /// allows).
    fn origins(role: Role) -> Option<&'static [Self]> {
        let _ = role;
        None
    }

    /// `to` when `role` may take the case there from `self`: a target of the role, from one of
    /// its origins, and a transition of the table; else why not.
    ///
    /// The role's origins are checked first, then the table (whose refusal names where the
    /// case can go), then the role's targets.
    fn step(self, to: Self, role: Role) -> Result<Self, StepRefused> {
        if let Some(origins) = Self::origins(role)
            && !origins.contains(&self)
        {
            return Err(StepRefused::NotFromHere {
                current: self.as_str(),
                origins: origins.iter().map(|s| s.as_str()).collect(),
                allowed: self.next().iter().map(|s| s.as_str()).collect(),
            });
        }
        let to = self.transition(to).map_err(StepRefused::Transition)?;
        if !Self::targets(role).contains(&to) {
            return Err(StepRefused::NotATarget {
                requested: to.as_str(),
                targets: Self::targets(role).iter().map(|s| s.as_str()).collect(),
            });
        }
        Ok(to)
    }
}

/// Who takes a step, as the lifecycle rules tell them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The provider that created the case: a `self` case's owners filed their forms
    /// (`mark-submitted`).
    Provider,
    /// An operator moving the case with the office's answer.
    Operator,
    /// A provider simulating the operator on its own sandbox case.
    SandboxProvider,
}

/// Who did something to a case: the actor of its history entries, identity verifications and
/// field changes, and, for a step, who asks (its [`Role`]). Recorded as text ([`fmt::Display`],
/// [`std::str::FromStr`]): `provider:<id>`, `operator:<id>` or `system`, the forms the API's
/// history has always shown; a sandbox provider is recorded as the provider (the entry's reason
/// says it was a simulation, [`Actor::history_reason`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Actor {
    /// The service itself: a move made at create (a `self` case to `submitted`) or an office
    /// found by a rule.
    System,
    /// The provider that created the case.
    Provider(uuid::Uuid),
    /// An operator, by the id of the operator account.
    Operator(uuid::Uuid),
    /// A provider simulating the operator on its own sandbox case.
    SandboxProvider(uuid::Uuid),
    /// A stored actor in none of these forms (the service writes none; a row edited by hand
    /// reads as this, shown as `unknown`, rather than failing the read of its case).
    Unknown,
}

impl Actor {
    /// The role whose steps the lifecycle allows this actor; `None` for the service itself,
    /// which asks for no step (its moves are made where the case is written).
    pub fn role(self) -> Option<Role> {
        match self {
            Actor::System | Actor::Unknown => None,
            Actor::Provider(_) => Some(Role::Provider),
            Actor::Operator(_) => Some(Role::Operator),
            Actor::SandboxProvider(_) => Some(Role::SandboxProvider),
        }
    }

    /// Whether this is a provider simulating the operator.
    pub fn is_sandbox(self) -> bool {
        matches!(self, Actor::SandboxProvider(_))
    }

    /// The reason as recorded: a simulated step says so (`sandbox simulation: ...`).
    pub fn history_reason(self, reason: Option<String>) -> Option<String> {
        match self {
            Actor::SandboxProvider(_) => Some(match reason {
                Some(r) => format!("{}: {r}", crate::sandbox::SIMULATION),
                None => crate::sandbox::SIMULATION.to_string(),
            }),
            _ => reason,
        }
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actor::System => f.write_str("system"),
            Actor::Unknown => f.write_str("unknown"),
            Actor::Provider(id) | Actor::SandboxProvider(id) => write!(f, "provider:{id}"),
            Actor::Operator(id) => write!(f, "operator:{id}"),
        }
    }
}

/// Text that is not an [`Actor`]'s record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownActor(pub String);

impl fmt::Display for UnknownActor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not an actor: {:?}", self.0)
    }
}

impl std::error::Error for UnknownActor {}

impl std::str::FromStr for Actor {
    type Err = UnknownActor;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let id = |rest: &str| uuid::Uuid::parse_str(rest).map_err(|_| UnknownActor(s.to_owned()));
        match s.split_once(':') {
            None if s == "system" => Ok(Actor::System),
            Some(("provider", rest)) => id(rest).map(Actor::Provider),
            Some(("operator", rest)) => id(rest).map(Actor::Operator),
            _ => Err(UnknownActor(s.to_owned())),
        }
    }
}

/// A step refused by the per-role rules or the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepRefused {
    /// The role never asks for this status.
    NotATarget {
        requested: &'static str,
        targets: Vec<&'static str>,
    },
    /// The role moves a case only from `origins`; from `current` others may take it to
    /// `allowed`.
    NotFromHere {
        current: &'static str,
        origins: Vec<&'static str>,
        allowed: Vec<&'static str>,
    },
    /// The table does not allow it.
    Transition(InvalidTransition),
}

impl std::fmt::Display for StepRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepRefused::NotATarget { requested, targets } => write!(
                f,
                "{requested} is not a step of this caller; it can ask for {}",
                targets.join(" or ")
            ),
            StepRefused::NotFromHere {
                current, origins, ..
            } => write!(
                f,
                "the case is {current}; this step is only possible from {}",
                origins.join(" or ")
            ),
            StepRefused::Transition(e) => e.fmt(f),
        }
    }
}

impl Lifecycle for TradeStatus {
    const ALL: &'static [Self] = &[
        TradeStatus::Initiated,
        TradeStatus::FormRendered,
        TradeStatus::Submitted,
        TradeStatus::Completed,
        TradeStatus::Blocked,
        TradeStatus::Cancelled,
    ];

    fn as_str(self) -> &'static str {
        match self {
            TradeStatus::Initiated => "initiated",
            TradeStatus::FormRendered => "form-rendered",
            TradeStatus::Submitted => "submitted",
            TradeStatus::Completed => "completed",
            TradeStatus::Blocked => "blocked",
            TradeStatus::Cancelled => "cancelled",
        }
    }

    fn next(self) -> &'static [Self] {
        use TradeStatus::*;
        match self {
            Initiated => &[FormRendered, Submitted, Cancelled],
            FormRendered => &[Submitted, Cancelled],
            Submitted => &[Completed, Blocked],
            Blocked => &[Submitted],
            Completed | Cancelled => &[],
        }
    }

    /// The provider only marks its owners' filing (`submitted`) or withdraws the case
    /// (`cancelled`); operators and the sandbox
    /// answer for the office: `submitted` (filed, or unblocked), `blocked`, `completed` (an
    /// operator with the issued licence: [`TradeStatus::needs_licence`]).
    fn targets(role: Role) -> &'static [Self] {
        use TradeStatus::*;
        match role {
            Role::Provider => &[Submitted, Cancelled],
            Role::Operator | Role::SandboxProvider => &[Submitted, Blocked, Completed],
        }
    }

    /// The table's other way into `submitted`, from `initiated`, is the create's own step: the
    /// provider's step starts only at `form-rendered`.
    fn origins(role: Role) -> Option<&'static [Self]> {
        match role {
            Role::Provider => Some(&[TradeStatus::FormRendered]),
            Role::Operator | Role::SandboxProvider => None,
        }
    }
}

impl TradeStatus {
    /// Whether `role`'s step to `self` must carry the trade licence the office issued: an
    /// operator completes a case only by uploading it (the sandbox generates a sample).
    pub fn needs_licence(self, role: Role) -> bool {
        self == TradeStatus::Completed && role == Role::Operator
    }
}

impl Lifecycle for TaxStatus {
    const ALL: &'static [Self] = &[
        TaxStatus::Validated,
        TaxStatus::Submitted,
        TaxStatus::Completed,
        TaxStatus::Rejected,
        TaxStatus::Cancelled,
    ];

    fn as_str(self) -> &'static str {
        match self {
            TaxStatus::Validated => "validated",
            TaxStatus::Submitted => "submitted",
            TaxStatus::Completed => "completed",
            TaxStatus::Rejected => "rejected",
            TaxStatus::Cancelled => "cancelled",
        }
    }

    fn next(self) -> &'static [Self] {
        use TaxStatus::*;
        match self {
            Validated => &[Submitted, Cancelled],
            Submitted => &[Completed, Rejected],
            Rejected => &[Submitted, Cancelled],
            Completed | Cancelled => &[],
        }
    }

    /// Operators (and the sandbox, simulating them) move a tax case; the provider only
    /// withdraws it (`cancelled`). `validated` is where a case starts, never a step's target.
    fn targets(role: Role) -> &'static [Self] {
        use TaxStatus::*;
        match role {
            Role::Provider => &[Cancelled],
            Role::Operator | Role::SandboxProvider => &[Submitted, Completed, Rejected],
        }
    }
}

impl TaxStatus {
    /// Whether `role`'s step to `self` must carry the issued tax number: an operator's
    /// completion does; the sandbox generates a demo number when none is sent.
    pub fn needs_tax_number(self, role: Role) -> bool {
        self == TaxStatus::Completed && role == Role::Operator
    }

    /// Whether a step to `self` must say why: a rejection carries the filing system's message.
    pub fn needs_reason(self) -> bool {
        self == TaxStatus::Rejected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_actor_is_recorded_as_the_history_has_always_shown_it() {
        let id = uuid::Uuid::parse_str("0190f1a0-0000-7000-8000-000000000001").unwrap();
        for (actor, text) in [
            (Actor::System, "system".to_string()),
            (Actor::Provider(id), format!("provider:{id}")),
            (Actor::Operator(id), format!("operator:{id}")),
        ] {
            assert_eq!(actor.to_string(), text);
            assert_eq!(text.parse::<Actor>(), Ok(actor));
        }
        // A simulation is the provider's, as the API showed it; its reason says so.
        assert_eq!(
            Actor::SandboxProvider(id).to_string(),
            format!("provider:{id}")
        );
        assert_eq!(
            Actor::SandboxProvider(id).history_reason(None).as_deref(),
            Some(crate::sandbox::SIMULATION)
        );
        for bad in [
            "",
            "sys",
            "provider:",
            "operator:nope",
            "admin:x",
            "system:1",
        ] {
            assert!(bad.parse::<Actor>().is_err(), "{bad}");
        }
    }

    #[test]
    fn each_role_takes_its_own_steps() {
        use Role::*;
        use TradeStatus::*;
        // The provider marks a self case's filing, only from form-rendered.
        assert_eq!(FormRendered.step(Submitted, Provider), Ok(Submitted));
        let e = Initiated.step(Submitted, Provider).unwrap_err();
        assert!(
            matches!(
                e,
                StepRefused::NotFromHere {
                    current: "initiated",
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(matches!(
            FormRendered.step(Initiated, Provider),
            Err(StepRefused::Transition(_))
        ));
        assert!(matches!(
            Initiated.step(FormRendered, Operator),
            Err(StepRefused::NotATarget {
                requested: "form-rendered",
                ..
            })
        ));
        // Operators and the sandbox answer for the office; the table still decides.
        for role in [Operator, SandboxProvider] {
            assert_eq!(Submitted.step(Blocked, role), Ok(Blocked));
            assert_eq!(Blocked.step(Submitted, role), Ok(Submitted));
            assert_eq!(Submitted.step(Completed, role), Ok(Completed));
            assert!(matches!(
                FormRendered.step(Blocked, role),
                Err(StepRefused::Transition(_))
            ));
            // The table speaks first: its message names where the case can go.
            assert!(matches!(
                Submitted.step(FormRendered, role),
                Err(StepRefused::Transition(_))
            ));
        }
        assert!(Completed.needs_licence(Operator));
        assert!(!Completed.needs_licence(SandboxProvider));
        assert!(!Blocked.needs_licence(Operator));
        // A tax case is moved by operators and the sandbox only.
        assert!(matches!(
            TaxStatus::Validated.step(TaxStatus::Submitted, Provider),
            Err(StepRefused::NotATarget { .. })
        ));
        assert!(matches!(
            TaxStatus::Validated.step(TaxStatus::Completed, Operator),
            Err(StepRefused::Transition(_))
        ));
        assert_eq!(
            TaxStatus::Validated.step(TaxStatus::Submitted, Operator),
            Ok(TaxStatus::Submitted)
        );
        assert!(TaxStatus::Completed.needs_tax_number(Operator));
        assert!(!TaxStatus::Completed.needs_tax_number(SandboxProvider));
        assert!(TaxStatus::Rejected.needs_reason());
        // The provider withdraws a case before it reaches the authority; nobody else does.
        assert_eq!(FormRendered.step(Cancelled, Provider), Ok(Cancelled));
        assert!(matches!(
            Submitted.step(Cancelled, Provider),
            Err(StepRefused::NotFromHere { .. })
        ));
        assert!(matches!(
            FormRendered.step(Cancelled, Operator),
            Err(StepRefused::NotATarget { .. })
        ));
        assert_eq!(
            TaxStatus::Validated.step(TaxStatus::Cancelled, Provider),
            Ok(TaxStatus::Cancelled)
        );
        assert_eq!(
            TaxStatus::Rejected.step(TaxStatus::Cancelled, Provider),
            Ok(TaxStatus::Cancelled)
        );
        assert!(matches!(
            TaxStatus::Submitted.step(TaxStatus::Cancelled, Provider),
            Err(StepRefused::Transition(_))
        ));
        assert!(matches!(
            TaxStatus::Validated.step(TaxStatus::Cancelled, SandboxProvider),
            Err(StepRefused::NotATarget { .. })
        ));
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
            ("initiated", "cancelled"),
            ("form-rendered", "cancelled"),
        ]);
        assert!(TradeStatus::Cancelled.is_final());
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
            ("validated", "cancelled"),
            ("rejected", "cancelled"),
        ]);
        assert!(TaxStatus::Cancelled.is_final());
        let e = TaxStatus::Validated
            .transition(TaxStatus::Completed)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "the case is validated; it can become submitted or cancelled, not completed"
        );
        // Serde names are the API's.
        assert_eq!(
            serde_json::to_string(&TradeStatus::FormRendered).unwrap(),
            "\"form-rendered\""
        );
    }
}

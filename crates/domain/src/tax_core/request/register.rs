//! The register objects: a corporation's Handelsregister (`commercial_register`) and an eGbR's
//! Gesellschaftsregister (`company_register`), and their normalised numbers.

use serde_json::Value;

use crate::Violations;
use crate::din91379::TextType;
use crate::rules::{self, object};
use crate::tax_core::CommercialRegister;

use super::fields::{req_date, req_text};

/// `HRB 12345 B` -> `12345B`: the number only, a leading `HRB` dropped, the suffix kept
/// without its space.
pub fn normalise_register_number(raw: &str) -> Option<String> {
    register_number(raw, RegisterKind::Commercial.prefix())
}

/// `GsR 1234` -> `1234`: a Gesellschaftsregister number, normalised as a Handelsregister one
/// with the prefix `GsR` instead of `HRB`.
pub fn normalise_company_register_number(raw: &str) -> Option<String> {
    register_number(raw, RegisterKind::Company.prefix())
}

/// The number only: a leading `prefix` (any case) dropped, spaces removed, 1 to 7 digits and a
/// suffix of at most 3 letters kept upper-case.
fn register_number(raw: &str, prefix: &str) -> Option<String> {
    let t = raw.trim();
    let t = match t.get(..prefix.len()) {
        Some(head) if head.eq_ignore_ascii_case(prefix) => &t[prefix.len()..],
        _ => t,
    };
    let compact: String = t.chars().filter(|c| !c.is_whitespace()).collect();
    let digits = compact.chars().take_while(char::is_ascii_digit).count();
    let suffix = &compact[digits..];
    let ok = (1..=7).contains(&digits)
        && suffix.len() <= 3
        && suffix.chars().all(|c| c.is_ascii_alphabetic());
    ok.then(|| compact.to_ascii_uppercase())
}

/// Which register a register object describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RegisterKind {
    /// Handelsregister (UG, GmbH): `commercial_register`, numbers `HRB ...`; a company may not
    /// have applied yet.
    Commercial,
    /// Gesellschaftsregister (eGbR): `company_register`, numbers `GsR ...`; an eGbR is
    /// registered or has applied, otherwise it is a plain GbR.
    Company,
}

impl RegisterKind {
    fn prefix(self) -> &'static str {
        match self {
            RegisterKind::Commercial => "HRB",
            RegisterKind::Company => "GsR",
        }
    }

    fn statuses(self) -> &'static [&'static str] {
        match self {
            RegisterKind::Commercial => &["not-applied", "application-filed", "registered"],
            RegisterKind::Company => &["application-filed", "registered"],
        }
    }
}

/// The fields of a register object: its `status` and the fields of the statuses.
const REGISTER_FIELDS: &[&str] = &[
    "status",
    "registration_application_date",
    "registration_number",
    "registration_date",
    "registration_court",
];

/// The fields a status may need.
const STATUS_FIELDS: &[&str] = REGISTER_FIELDS.split_at(1).1;

/// A register object (`commercial_register`, `company_register`) at `path`: its `status` and
/// exactly the fields that status needs.
pub(crate) fn register(
    v: &Value,
    path: &str,
    kind: RegisterKind,
    e: &mut Violations,
) -> Option<CommercialRegister> {
    let o = object(v, path, REGISTER_FIELDS, e)?;
    let status_path = o.path("status");
    let status: &str = o
        .req("status", e)
        .and_then(|s| rules::string(s, &status_path, e))?;
    let allowed: &[&str] = match status {
        s if !kind.statuses().contains(&s) => {
            let message = match kind {
                RegisterKind::Commercial => {
                    "must be one of: not-applied, application-filed, registered".to_owned()
                }
                RegisterKind::Company => "must be one of: application-filed, registered (an eGbR \
                    is registered or has applied; a partnership without either is a gbr)"
                    .to_owned(),
            };
            e.push(status_path, "invalid_value", message);
            return None;
        }
        "not-applied" => &[],
        "application-filed" => &["registration_application_date"],
        // A registered company may say when it applied (since 2026-12-01).
        _ => &[
            "registration_application_date",
            "registration_number",
            "registration_date",
            "registration_court",
        ],
    };
    for &field in STATUS_FIELDS {
        if o.has(field) && !allowed.contains(&field) {
            e.push(
                o.path(field),
                "not_allowed",
                format!("is not accepted with status {status}"),
            );
        }
    }
    match status {
        "not-applied" => Some(CommercialRegister::NotApplied),
        "application-filed" => Some(CommercialRegister::ApplicationFiled {
            registration_application_date: req_date(&o, "registration_application_date", e)?,
        }),
        _ => {
            let number = o.req("registration_number", e).and_then(|v| {
                let p = o.path("registration_number");
                let s = rules::string(v, &p, e)?;
                let n = register_number(s, kind.prefix());
                if n.is_none() {
                    let prefix = kind.prefix();
                    e.push(
                        p,
                        "invalid_register_number",
                        format!("must be a register number such as {prefix} 12345 or 12345 B"),
                    );
                }
                n
            });
            let date = req_date(&o, "registration_date", e);
            let applied = o
                .opt("registration_application_date")
                .and_then(|v| rules::date(v, &o.path("registration_application_date"), e));
            if let (Some(a), Some(d)) = (applied, date)
                && a > d
            {
                e.push(
                    o.path("registration_application_date"),
                    "after_registration",
                    "cannot be after registration_date: the entry follows the application",
                );
                return None;
            }
            if o.has("registration_application_date") && applied.is_none() {
                return None;
            }
            let court = req_text(&o, "registration_court", 120, TextType::B, e);
            Some(CommercialRegister::Registered {
                registration_application_date: applied,
                registration_number: number?,
                registration_date: date?,
                registration_court: court?,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_numbers_normalise() {
        for (raw, want) in [
            ("HRB 12345", Some("12345")),
            ("HRB 12345 B", Some("12345B")),
            ("hrb12345b", Some("12345B")),
            ("12345", Some("12345")),
            (" 245789 B ", Some("245789B")),
            ("HRB", None),
            ("HRB B 12", None),
            ("12 34", Some("1234")),
            ("12345678", None),
            // A multi-byte character where the prefix would end is no prefix (and no panic).
            ("ÜÜ", None),
            ("Ü1", None),
        ] {
            assert_eq!(normalise_register_number(raw).as_deref(), want, "{raw}");
        }
        for (raw, want) in [
            ("GsR 1234", Some("1234")),
            ("gsr 77 a", Some("77A")),
            ("1234", Some("1234")),
            ("HRB 1234", None),
            ("GsR", None),
        ] {
            assert_eq!(
                normalise_company_register_number(raw).as_deref(),
                want,
                "{raw}"
            );
        }
    }
}

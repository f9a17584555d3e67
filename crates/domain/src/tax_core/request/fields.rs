//! The field readers of the tax registration requests: texts that must fit the ELSTER XML,
//! enumerations, flags, dates, euros, tax ids, shares and the Address object.

use serde_json::Value;
use time::Date;

use crate::Violations;
use crate::address::PostalAddress;
use crate::company::Environment;
use crate::din91379::TextType;
use crate::rules::{self, Obj, object};
use crate::tax_core::{Percentage, TaxId};

/// A text of the tax registration: [`rules::text`], and at most `max` characters also in the
/// ELSTER XML, which carries it transliterated to ISO 8859-15 ([`crate::latin9`]; `Ĳ` becomes
/// `IJ`, `½` becomes `1/2`), so a text at the limit cannot grow past the document's limit.
pub(crate) fn elster_text(
    v: &Value,
    path: &str,
    max: usize,
    ty: TextType,
    e: &mut Violations,
) -> Option<String> {
    let text = rules::text(v, path, max, ty, e)?;
    fits_in_xml(text, path, max, e)
}

/// `text` when its ISO 8859-15 spelling in the ELSTER XML has at most `max` characters and is
/// not empty (a combining mark alone has no spelling there).
fn fits_in_xml(text: String, path: &str, max: usize, e: &mut Violations) -> Option<String> {
    let spelled = crate::latin9::transliterate(&text);
    if spelled.trim().is_empty() {
        e.push(
            path,
            "empty",
            "must contain a letter, digit or sign that the ELSTER XML can spell in ISO 8859-15",
        );
        return None;
    }
    let in_xml = spelled.chars().count();
    if in_xml > max {
        e.push(
            path,
            "too_long",
            format!(
                "must have at most {max} characters also in the ELSTER XML, which spells it in \
                 ISO 8859-15 with {in_xml} (IJ for \u{132}, 1/2 for \u{bd})"
            ),
        );
        return None;
    }
    Some(text)
}

rules::text_fields!(pub(crate) elster_text);
pub(crate) use rules::req_enum;

pub(crate) fn req_bool(o: &Obj, name: &str, e: &mut Violations) -> Option<bool> {
    o.read(name, true, e, rules::boolean)
}

pub(crate) fn opt_bool(o: &Obj, name: &str, e: &mut Violations) -> Option<bool> {
    o.read(name, false, e, rules::boolean)
}

pub(crate) fn req_date(o: &Obj, name: &str, e: &mut Violations) -> Option<Date> {
    o.read(name, true, e, rules::date)
}

pub(crate) fn req_euros(o: &Obj, name: &str, e: &mut Violations) -> Option<i64> {
    o.read(name, true, e, rules::whole_euros)
}

/// Each of `fields` that `o` has is `not_allowed`, for `reason`.
pub(crate) fn refuse(o: &Obj, fields: &[&str], reason: &str, e: &mut Violations) {
    for &f in fields {
        if o.has(f) {
            e.push(o.path(f), "not_allowed", reason);
        }
    }
}

/// A street must carry a house number: a word after the first (`Musterstraße 1`, `Hafenstraße
/// 5a`, `Am Markt 12-14`, `Rue de Rivoli 10`), or the first abroad (`10 Downing Street`), that
/// starts with a digit and is no ordinal: `17.` in `Straße des 17. Juni` is part of the name.
fn has_house_number(street: &str) -> bool {
    let words: Vec<&str> = street.split_whitespace().collect();
    words.len() >= 2
        && words
            .iter()
            .any(|w| w.starts_with(|c: char| c.is_ascii_digit()) && !w.ends_with('.'))
}

/// The tax registration's Address object.
pub fn tax_address(v: &Value, path: &str, e: &mut Violations) -> Option<PostalAddress> {
    let o = object(v, path, PostalAddress::FIELDS, e)?;
    let street = req_text(&o, "street", 72, TextType::B, e).and_then(|s| {
        if has_house_number(&s) {
            Some(s)
        } else {
            e.push(
                o.path("street"),
                "missing_house_number",
                "must include a house number",
            );
            None
        }
    });
    let second = opt_text(&o, "street_second_line", 72, TextType::B, e);
    let country = o.read("country", true, e, rules::country);
    let zip = o.req("zip", e).and_then(|v| match &country {
        Some(c) if c.is_germany() => rules::german_zip(v, &o.path("zip"), e),
        other => rules::zip_for_country(v, &o.path("zip"), other.as_ref(), 12, e),
    });
    let city = o
        .read("city", true, e, rules::city)
        .and_then(|c| fits_in_xml(c, &o.path("city"), 72, e));
    let state = opt_text(&o, "state", 72, TextType::B, e);
    PostalAddress::assemble(street, second, zip, city, state, country)
}

pub(crate) fn tax_id(
    o: &Obj,
    name: &str,
    environment: Option<Environment>,
    e: &mut Violations,
) -> Option<TaxId> {
    let v = o.opt(name)?;
    let p = o.path(name);
    let s = rules::string(v, &p, e)?.trim();
    let sandbox = environment == Some(Environment::Sandbox);
    match crate::taxid::validate(s, sandbox) {
        Ok(()) => Some(TaxId(s.to_string())),
        Err(err) => {
            e.push(p, err.code(), err.message());
            None
        }
    }
}

pub(crate) fn past_date(o: &Obj, name: &str, today: Date, e: &mut Violations) -> Option<Date> {
    let p = o.path(name);
    let d = req_date(o, name, e)?;
    if d >= today {
        e.push(p, "not_in_past", "must be a date in the past");
        return None;
    }
    Some(d)
}

/// `share_percentage`: required, unless `nominal_amount` is sent (a corporation's shareholder),
/// which it then follows from: absent beside one, it reads as 0 until the corporation's rules
/// derive it (`tax_request::nominal_shares`).
pub(crate) fn percentage(o: &Obj, e: &mut Violations) -> Option<Percentage> {
    if o.has("nominal_amount") && !o.has("share_percentage") {
        return Some(Percentage(0));
    }
    let v = o.req("share_percentage", e)?;
    let p = o.path("share_percentage");
    let parsed = match v {
        Value::Number(n) => Percentage::parse(&n.to_string()),
        _ => {
            e.push(p, "invalid_type", "must be a number");
            return None;
        }
    };
    match parsed {
        Some(pc) if pc.0 > 0 && pc <= Percentage::HUNDRED => Some(pc),
        _ => {
            e.push(
                p,
                "invalid_percentage",
                "must be above 0 and at most 100, with at most 4 decimal places",
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn house_numbers_in_germany_and_abroad() {
        for (street, ok) in [
            ("Musterstraße 1", true),
            ("Hauptstr. 5 a", true),
            ("Am Markt 12 - 14", true),
            ("Straße des 17. Juni 135", true),
            ("Ludwigstraße 12 Rückgebäude", true),
            ("10 Downing Street", true),
            ("Rue de Rivoli 10 bis", true),
            // An ordinal is part of the street's name, not its number.
            ("Straße des 17. Juni", false),
            ("Am 1. Mai", false),
            ("Musterstraße", false),
            ("Nørregade", false),
        ] {
            assert_eq!(has_house_number(street), ok, "{street}");
        }
    }
}

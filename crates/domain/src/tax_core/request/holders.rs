//! The holders of a tax registration: a corporation's shareholders and a partnership's
//! partners share their lists, fields and the rule that the shares sum to exactly 100.

use serde_json::Value;
use time::Date;

use crate::Violations;
use crate::company::Environment;
use crate::din91379::TextType;
use crate::rules::{Obj, object};
use crate::tax_core::{EntityShareholder, IndividualShareholder, Percentage};

use super::fields::{past_date, percentage, req_text, tax_address, tax_id};

/// The fields of an individual holder (a shareholder; a partner adds its own).
pub const INDIVIDUAL_HOLDER_FIELDS: &[&str] = &[
    "first_name",
    "last_name",
    "dob",
    "tax_identification_number",
    "address",
    "share_percentage",
];

/// The fields of an entity holder (a shareholder; a partner adds its own).
pub const ENTITY_HOLDER_FIELDS: &[&str] = &["name", "address", "share_percentage"];

/// The `individuals` and `entities` arrays of a holders object (`shareholders`, `partners`),
/// when both are arrays (absent is empty) and `min..=max` entries are in them together.
pub(crate) fn holder_lists<'v>(
    v: &'v Value,
    path: &str,
    min: usize,
    max: usize,
    e: &mut Violations,
) -> Option<(&'v [Value], &'v [Value])> {
    let s = object(v, path, &["individuals", "entities"], e)?;
    let list = |name: &str, e: &mut Violations| -> Option<&'v [Value]> {
        match s.opt(name) {
            None => Some(&[]),
            Some(Value::Array(a)) => Some(a.as_slice()),
            Some(_) => {
                e.push(s.path(name), "invalid_type", "must be an array");
                None
            }
        }
    };
    let individuals = list("individuals", e);
    let entities = list("entities", e);
    let (Some(ind), Some(ent)) = (individuals, entities) else {
        return None;
    };
    let total = ind.len() + ent.len();
    if total < min || total > max {
        let code = if total < min { "too_few" } else { "too_many" };
        e.push(
            path,
            code,
            format!("must have {min} to {max} {path} (individuals and entities together)"),
        );
        return None;
    }
    Some((ind, ent))
}

/// Each entry of `items`, the array at `path`, read by `read` as an object of `fields`; `None`
/// when any is broken (every entry is read, so each violation is reported).
pub(crate) fn each<T>(
    items: &[Value],
    path: &str,
    fields: &[&str],
    e: &mut Violations,
    mut read: impl FnMut(&Obj, &mut Violations) -> Option<T>,
) -> Option<Vec<T>> {
    let read: Vec<Option<T>> = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let x = object(item, &format!("{path}[{i}]"), fields, e)?;
            read(&x, e)
        })
        .collect();
    read.into_iter().collect()
}

/// An individual holder's fields of [`INDIVIDUAL_HOLDER_FIELDS`] (the caller checks the keys).
pub(crate) fn individual_holder(
    x: &Obj,
    today: Date,
    environment: Option<Environment>,
    e: &mut Violations,
) -> Option<IndividualShareholder> {
    let first = req_text(x, "first_name", 72, TextType::A, e);
    let last = req_text(x, "last_name", 72, TextType::A, e);
    let dob = past_date(x, "dob", today, e);
    let tin = tax_id(x, "tax_identification_number", environment, e);
    let addr = x
        .req("address", e)
        .and_then(|v| tax_address(v, &x.path("address"), e));
    let share = percentage(x, e);
    if x.has("tax_identification_number") && tin.is_none() {
        return None;
    }
    Some(IndividualShareholder {
        first_name: first?,
        last_name: last?,
        dob: dob?,
        tax_identification_number: tin,
        address: addr?,
        share_percentage: share?,
        nominal_amount: None,
        share_numbers: None,
    })
}

/// An entity holder's fields of [`ENTITY_HOLDER_FIELDS`] (the caller checks the keys).
pub(crate) fn entity_holder(x: &Obj, e: &mut Violations) -> Option<EntityShareholder> {
    let name = req_text(x, "name", 120, TextType::B, e);
    let addr = x
        .req("address", e)
        .and_then(|v| tax_address(v, &x.path("address"), e));
    let share = percentage(x, e);
    Some(EntityShareholder {
        name: name?,
        address: addr?,
        share_percentage: share?,
        nominal_amount: None,
        share_numbers: None,
    })
}

/// Whether `shares` sum to exactly 100 (in exact decimals); if not, a violation on `path`.
pub(crate) fn shares_sum_to_100(
    shares: impl IntoIterator<Item = Percentage>,
    path: &str,
    e: &mut Violations,
) -> bool {
    let sum: u64 = shares.into_iter().map(|p| u64::from(p.0)).sum();
    if sum == u64::from(Percentage::HUNDRED.0) {
        return true;
    }
    e.push(
        path,
        "shares_do_not_sum_to_100",
        format!(
            "share_percentage values must sum to exactly 100 (they sum to {})",
            Percentage(u32::try_from(sum).unwrap_or(u32::MAX)).to_decimal_string()
        ),
    );
    false
}

//! The fields an operator's change alters, as the history entry records them
//! ([`FieldChange`]): the values before (read in the change's own transaction) against the
//! values after, as a clerk reads them. Only fields whose value differs are named.

use serde_json::Value;
use time::OffsetDateTime;

use crate::{FieldChange, TradePatch};

/// A trade registration's operator-set fields as the patch's transaction found them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TradeFields {
    pub trade_office: Option<Value>,
    pub city_fee_cents: Option<i64>,
    pub is_paid: bool,
    pub source_product: Option<String>,
}

/// The changes `patch` makes to a case whose fields are `before`.
pub(crate) fn trade_patch_changes(before: &TradeFields, patch: &TradePatch) -> Vec<FieldChange> {
    let mut changes = Vec::new();
    if let Some(office) = &patch.trade_office {
        let old = before.trade_office.as_ref();
        push(
            &mut changes,
            "trade_office",
            old.and_then(trade_office_text),
            trade_office_text(office),
        );
        push(
            &mut changes,
            "trade_office.municipality_key",
            old.and_then(municipality_key),
            municipality_key(office),
        );
    }
    if let Some(fee) = patch.city_fee_cents {
        push(
            &mut changes,
            "city_fee",
            before.city_fee_cents.map(euro),
            Some(euro(fee)),
        );
    }
    if let Some(paid) = patch.is_paid {
        push(
            &mut changes,
            "is_paid",
            Some(before.is_paid.to_string()),
            Some(paid.to_string()),
        );
    }
    if let Some(product) = &patch.source_product {
        push(
            &mut changes,
            "source_product",
            before.source_product.clone(),
            product.clone(),
        );
    }
    changes
}

/// The change of a tax registration's office from `old` to `new` (numbers), if it is one.
pub(crate) fn tax_office_change(old: Option<&str>, new: &str) -> Vec<FieldChange> {
    let mut changes = Vec::new();
    push(
        &mut changes,
        "tax_office",
        old.map(tax_office_text),
        Some(tax_office_text(new)),
    );
    changes
}

/// The change of owner `owner_index`'s identity verification from `old` to `new`, if it is
/// one.
pub(crate) fn identity_change(
    owner_index: i32,
    old: Option<OffsetDateTime>,
    new: Option<OffsetDateTime>,
) -> crate::Result<Vec<FieldChange>> {
    let text = |at: Option<OffsetDateTime>| {
        at.map(|at| crate::rows::rfc3339(at.to_offset(time::UtcOffset::UTC)))
            .transpose()
    };
    let mut changes = Vec::new();
    push(
        &mut changes,
        &format!("owners[{owner_index}].identity_verified_at"),
        text(old)?,
        text(new)?,
    );
    Ok(changes)
}

fn push(changes: &mut Vec<FieldChange>, field: &str, old: Option<String>, new: Option<String>) {
    if old != new {
        changes.push(FieldChange {
            field: field.to_string(),
            old,
            new,
        });
    }
}

/// Cents as euros with two decimals: `2600` as `26.00`.
pub(crate) fn euro(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

/// A stored trade office (`{"key", "name", ...}`) as its key and name.
fn trade_office_text(office: &Value) -> Option<String> {
    let key = office.get("key").and_then(Value::as_str);
    let name = office.get("name").and_then(Value::as_str);
    match (key, name) {
        (Some(k), Some(n)) => Some(format!("{k} {n}")),
        (Some(one), None) | (None, Some(one)) => Some(one.to_string()),
        (None, None) => None,
    }
}

fn municipality_key(office: &Value) -> Option<String> {
    office
        .get("municipality_key")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// A tax office number with the directory's name when it knows the office.
fn tax_office_text(number: &str) -> String {
    match domain::offices::tax_office(number) {
        Some(o) => format!("{number} {}", o.display_name()),
        None => number.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn before() -> TradeFields {
        TradeFields {
            trade_office: Some(
                json!({"key": "11000000", "name": "Berlin", "municipality_key": "11000000"}),
            ),
            city_fee_cents: None,
            is_paid: false,
            source_product: None,
        }
    }

    #[test]
    fn only_fields_whose_value_changes_are_named() {
        let patch = TradePatch {
            trade_office: Some(
                json!({"key": "11000000", "name": "Berlin", "municipality_key": "11000000", "kind": "x"}),
            ),
            city_fee_cents: Some(2600),
            is_paid: Some(false),
            source_product: Some(None),
            updated_at: None,
        };
        assert_eq!(
            trade_patch_changes(&before(), &patch),
            vec![FieldChange {
                field: "city_fee".into(),
                old: None,
                new: Some("26.00".into())
            }]
        );
        assert!(trade_patch_changes(&before(), &TradePatch::default()).is_empty());
    }

    #[test]
    fn every_changed_field_with_old_and_new_value() {
        let b = TradeFields {
            city_fee_cents: Some(2600),
            source_product: Some("gbr".into()),
            ..before()
        };
        let patch = TradePatch {
            trade_office: Some(
                json!({"key": "072355007", "name": "Verbandsgemeinde Trier-Land", "municipality_key": "07235001"}),
            ),
            city_fee_cents: Some(3005),
            is_paid: Some(true),
            source_product: Some(None),
            updated_at: None,
        };
        let got: Vec<(String, Option<String>, Option<String>)> = trade_patch_changes(&b, &patch)
            .into_iter()
            .map(|c| (c.field, c.old, c.new))
            .collect();
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            got,
            vec![
                (
                    "trade_office".into(),
                    s("11000000 Berlin"),
                    s("072355007 Verbandsgemeinde Trier-Land")
                ),
                (
                    "trade_office.municipality_key".into(),
                    s("11000000"),
                    s("07235001")
                ),
                ("city_fee".into(), s("26.00"), s("30.05")),
                ("is_paid".into(), s("false"), s("true")),
                ("source_product".into(), s("gbr"), None),
            ]
        );
    }

    #[test]
    fn euros_have_two_decimals() {
        assert_eq!(euro(0), "0.00");
        assert_eq!(euro(5), "0.05");
        assert_eq!(euro(2600), "26.00");
        assert_eq!(euro(99_999_999_999), "999999999.99");
        assert_eq!(euro(-150), "-1.50");
    }

    #[test]
    fn tax_offices_by_number_and_name() {
        let c = tax_office_change(None, "2115");
        assert_eq!(c[0].new.as_deref(), Some("2115 Finanzamt Flensburg"));
        assert_eq!(c[0].old, None);
        assert!(tax_office_change(Some("2115"), "2115").is_empty());
        // A number the directory does not know (any more) stays a number.
        assert_eq!(
            tax_office_change(Some("0000"), "2115")[0].old.as_deref(),
            Some("0000")
        );
    }

    #[test]
    fn identity_times_in_utc() {
        let at = time::macros::datetime!(2026-11-20 14:05 +01:00);
        let c = identity_change(1, None, Some(at)).unwrap();
        assert_eq!(c[0].field, "owners[1].identity_verified_at");
        assert_eq!(c[0].new.as_deref(), Some("2026-11-20T13:05:00Z"));
        assert!(identity_change(1, Some(at), Some(at)).unwrap().is_empty());
        assert_eq!(identity_change(0, Some(at), None).unwrap()[0].new, None);
    }
}

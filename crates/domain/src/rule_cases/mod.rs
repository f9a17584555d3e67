//! Test support: one broken request per rule of each request (trade, UG/GmbH tax, GbR/eGbR tax),
//! with the field path and code the answer must name. Shared by the domain's unit tests and the server's HTTP tests so
//! the table exists once.

use serde_json::Value;

mod gbr;
mod sole_proprietor;
mod tax;
mod trade;

pub use gbr::gbr_cases;
pub use sole_proprietor::sole_proprietor_cases;
pub use tax::tax_cases;
pub use trade::trade_cases;

/// A request with one rule broken.
pub struct RuleCase {
    /// Which example request to start from (see [`example`]).
    pub base: &'static str,
    /// JSON pointer edits: `Some` sets, `None` removes.
    pub edits: Vec<(&'static str, Option<Value>)>,
    pub field: &'static str,
    pub code: &'static str,
}

/// The example request files of `examples/`: `self`, `assisted` and `two-directors` (trade), `gmbh` and `ug`
/// (tax), `gbr` and `egbr` (partnership tax), `sole-proprietor` (sandbox, a freelancer) and
/// `sole-trader` (production, a trader) (sole-proprietor tax).
pub fn example(name: &str) -> Value {
    let text = match name {
        "self" => include_str!("../../../../examples/production/trade-registration-self.json"),
        "assisted" => {
            include_str!("../../../../examples/production/trade-registration-assisted.json")
        }
        "two-directors" => {
            include_str!("../../../../examples/trade-registration-two-directors.json")
        }
        "gmbh" => include_str!("../../../../examples/tax-registration-gmbh.json"),
        "ug" => include_str!("../../../../examples/production/tax-registration-ug.json"),
        "gbr" => include_str!("../../../../examples/production/tax-registration-gbr.json"),
        "egbr" => include_str!("../../../../examples/tax-registration-egbr.json"),
        "sole-proprietor" => {
            include_str!("../../../../examples/tax-registration-sole-proprietor.json")
        }
        "sole-trader" => {
            include_str!("../../../../examples/production/tax-registration-sole-proprietor.json")
        }
        other => panic!("no example {other}"),
    };
    serde_json::from_str(text).expect("example JSON")
}

/// Sets (or with `None` removes) the value at a JSON pointer.
pub fn edit(v: &mut Value, pointer: &str, new: Option<Value>) {
    let (parent, key) = pointer.rsplit_once('/').expect("pointer");
    let target = if parent.is_empty() {
        &mut *v
    } else {
        v.pointer_mut(parent)
            .unwrap_or_else(|| panic!("no {parent}"))
    };
    match (target, new) {
        (Value::Object(m), Some(n)) => {
            m.insert(key.to_string(), n);
        }
        (Value::Object(m), None) => {
            m.remove(key);
        }
        (Value::Array(a), Some(n)) => a[key.parse::<usize>().expect("index")] = n,
        (Value::Array(a), None) => {
            a.remove(key.parse::<usize>().expect("index"));
        }
        _ => panic!("cannot edit {pointer}"),
    }
}

/// The day the cases are judged on (what is in the past).
pub fn today() -> time::Date {
    time::macros::date!(2026 - 11 - 22)
}

/// Whether a 4-digit tax office number is in the bundled directory.
pub fn known(number: &str) -> bool {
    crate::offices::is_known_tax_office(number)
}

/// The field and code of each violation.
pub fn field_codes(errs: &crate::Violations) -> Vec<(String, String)> {
    errs.iter()
        .map(|e| (e.field.clone(), e.code.clone()))
        .collect()
}

impl RuleCase {
    /// Asserts that `errs`, the answer to [`RuleCase::request`], name this case's field and code.
    pub fn assert_named_in(&self, errs: &crate::Violations) {
        let found = field_codes(errs);
        assert!(
            found.contains(&(self.field.to_string(), self.code.to_string())),
            "{} {} ({}): got {found:?}",
            self.field,
            self.code,
            self.base
        );
    }

    /// The broken request.
    pub fn request(&self) -> Value {
        let mut v = example(self.base);
        for (pointer, new) in &self.edits {
            edit(&mut v, pointer, new.clone());
        }
        v
    }
}

/// A case: `edits` to the example `base` break the rule of `field` named `code`.
fn c(
    base: &'static str,
    edits: Vec<(&'static str, Option<Value>)>,
    field: &'static str,
    code: &'static str,
) -> RuleCase {
    RuleCase {
        base,
        edits,
        field,
        code,
    }
}

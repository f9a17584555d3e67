//! Complete, valid request bodies for the document (the files in `examples/`, in the sandbox):
//! integrators can send them as they are, and schemathesis's first phase does, so later steps
//! work on real cases.

use serde_json::Value;

fn sandbox(json: &str) -> Value {
    let mut v: Value = serde_json::from_str(json).expect("examples/ hold valid JSON");
    v["environment"] = "sandbox".into();
    v
}

pub fn trade_registration() -> Value {
    sandbox(include_str!(
        "../../../../examples/trade-registration-self.json"
    ))
}

pub fn tax_registration() -> Value {
    sandbox(include_str!(
        "../../../../examples/tax-registration-gmbh.json"
    ))
}

pub fn gbr_tax_registration() -> Value {
    sandbox(include_str!(
        "../../../../examples/tax-registration-egbr.json"
    ))
}

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

/// A GmbH before its register entry with two managing directors: one GewA 1 for the company,
/// the second director on its supplementary sheet.
pub fn trade_registration_two_directors() -> Value {
    sandbox(include_str!(
        "../../../../examples/trade-registration-two-directors.json"
    ))
}

/// A business moved here from another office's district: field 25 "Verlegung" with the former
/// establishment (field 17); this Anmeldung also deregisters it at the old office.
pub fn trade_registration_relocation() -> Value {
    let mut v = trade_registration();
    v["reason"] = "reopening-after-relocation".into();
    v["previous_establishment"] = serde_json::json!({
        "street": "Leopoldstraße 10",
        "zip": "80802",
        "city": "München"
    });
    v["client_reference"] = "KD-2025-0043".into();
    v
}

pub fn tax_registration() -> Value {
    sandbox(include_str!(
        "../../../../examples/tax-registration-gmbh.json"
    ))
}

/// The GmbH example expecting a loss in its founding year: the XML leaves the loss out (no
/// public form) and the case lists it for the operator.
pub fn tax_registration_loss() -> Value {
    let mut v = tax_registration();
    v["financial_estimates"]["formation_year"]["profit_amount"] = (-20_000).into();
    v["client_reference"] = "KD-2025-0099".into();
    v
}

/// The sandbox freelancer (`examples/tax-registration-sole-proprietor.json`).
pub fn sole_proprietor_tax_registration() -> Value {
    sandbox(include_str!(
        "../../../../examples/tax-registration-sole-proprietor.json"
    ))
}

/// A sole trader filed from the trade registration: what that case holds is not repeated.
pub fn sole_proprietor_from_trade_registration() -> Value {
    serde_json::json!({
        "trade_registration_id": "0196a1f0-0000-7000-8000-0000000000aa",
        "package": "self",
        "signature_path": "M 6 28 C 16 4 30 4 40 28 S 70 50 82 24",
        "preparations_start_date": "2025-03-15",
        "fiscal_year_deviates_from_calendar": false,
        "profit_determination": "cash-basis",
        "owner": { "religion": "11", "marital_status": "single" },
        "financial_estimates": {
            "formation_year": { "revenue_amount": 18000, "profit_amount": 6000 },
            "following_year": { "revenue_amount": 38000, "profit_amount": 15000 }
        },
        "vat": { "regime": "small-business" },
        "has_employees": false
    })
}

pub fn gbr_tax_registration() -> Value {
    sandbox(include_str!(
        "../../../../examples/tax-registration-egbr.json"
    ))
}

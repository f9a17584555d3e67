//! Test support: one broken request per trade registration rule, with the field path and
//! code the answer must name. Shared by the domain's unit tests and the server's HTTP tests so
//! the table exists once.

use serde_json::{Value, json};

/// A request with one rule broken.
pub struct RuleCase {
    /// `self` or `assisted`: which example request to start from.
    pub base: &'static str,
    /// JSON pointer edits: `Some` sets, `None` removes.
    pub edits: Vec<(&'static str, Option<Value>)>,
    pub field: &'static str,
    pub code: &'static str,
}

/// The example request files of `examples/`.
pub fn example(name: &str) -> Value {
    let text = match name {
        "self" => include_str!("../../../examples/trade-registration-self.json"),
        _ => include_str!("../../../examples/trade-registration-assisted.json"),
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

impl RuleCase {
    /// The broken request.
    pub fn request(&self) -> Value {
        let mut v = example(self.base);
        for (pointer, new) in &self.edits {
            edit(&mut v, pointer, new.clone());
        }
        v
    }
}

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

/// One case per rule of the trade registration request.
pub fn trade_cases() -> Vec<RuleCase> {
    let long = |n: usize| Value::from("a".repeat(n));
    vec![
        c(
            "self",
            vec![(
                "/owners/0/signatures/gewa_1",
                Some(Value::from("M0 0 L1 1 ".repeat(12_000))),
            )],
            "owners[0].signatures.gewa_1",
            "signature_too_large",
        ),
        c(
            "self",
            vec![("/owners/0/signatures/gewa_1", Some(json!("")))],
            "owners[0].signatures.gewa_1",
            "empty_signature",
        ),
        c("self", vec![("/package", None)], "package", "required"),
        c(
            "self",
            vec![("/package", Some(json!("premium")))],
            "package",
            "invalid_value",
        ),
        c(
            "self",
            vec![("/environment", Some(json!("staging")))],
            "environment",
            "invalid_value",
        ),
        c(
            "self",
            vec![("/client_preferred_language", Some(json!("pl")))],
            "client_preferred_language",
            "invalid_value",
        ),
        c(
            "self",
            vec![("/reason", Some(json!("whim")))],
            "reason",
            "invalid_value",
        ),
        c(
            "self",
            vec![("/establishment_type", Some(json!("home")))],
            "establishment_type",
            "invalid_value",
        ),
        c(
            "self",
            vec![("/acquisition_type", Some(json!(1)))],
            "acquisition_type",
            "invalid_type",
        ),
        c(
            "self",
            vec![("/legal_form", Some(json!("plc")))],
            "legal_form",
            "invalid_value",
        ),
        c(
            "self",
            vec![("/employees/full_time", Some(json!("7")))],
            "employees.full_time",
            "invalid_value",
        ),
        c(
            "self",
            vec![("/employees/part_time", None)],
            "employees.part_time",
            "required",
        ),
        c(
            "self",
            vec![("/owners/0/gender", Some(json!("m")))],
            "owners[0].gender",
            "invalid_value",
        ),
        c("self", vec![("/name", Some(long(121)))], "name", "too_long"),
        c(
            "self",
            vec![("/purpose", Some(long(201)))],
            "purpose",
            "too_long",
        ),
        c(
            "self",
            vec![("/registration_number", Some(long(31)))],
            "registration_number",
            "too_long",
        ),
        c(
            "self",
            vec![("/registered_office/street", Some(long(73)))],
            "registered_office.street",
            "too_long",
        ),
        c(
            "self",
            vec![("/registered_office/city", Some(long(73)))],
            "registered_office.city",
            "too_long",
        ),
        c(
            "self",
            vec![("/owners/0/first_name", Some(long(73)))],
            "owners[0].first_name",
            "too_long",
        ),
        c(
            "self",
            vec![("/industrial_license/issuing_authority", Some(long(121)))],
            "industrial_license.issuing_authority",
            "too_long",
        ),
        c(
            "self",
            vec![("/owners/0/address/zip", Some(json!("1234567890123")))],
            "owners[0].address.zip",
            "invalid_zip",
        ),
        c(
            "self",
            vec![("/registered_office/zip", Some(json!("1011")))],
            "registered_office.zip",
            "invalid_zip",
        ),
        c(
            "self",
            vec![("/industrial_license/zip", Some(json!("ABCDE")))],
            "industrial_license.zip",
            "invalid_zip",
        ),
        c(
            "self",
            vec![
                ("/owners/0/address/country", Some(json!("AT"))),
                ("/owners/0/address/zip", Some(json!("10115"))),
            ],
            "owners[0].address.zip",
            "invalid_zip",
        ),
        c(
            "self",
            vec![("/registered_office/city", Some(json!("Berlin 1")))],
            "registered_office.city",
            "digits_not_allowed",
        ),
        c(
            "self",
            vec![("/owners/0/nationality", Some(json!("XX")))],
            "owners[0].nationality",
            "invalid_country",
        ),
        c(
            "self",
            vec![("/owners/0/country_of_birth", Some(json!("DEU")))],
            "owners[0].country_of_birth",
            "invalid_country",
        ),
        c(
            "self",
            vec![(
                "/operational_activity_start_date",
                Some(json!("2025-02-30")),
            )],
            "operational_activity_start_date",
            "invalid_date",
        ),
        c(
            "self",
            vec![("/owners/0/dob", Some(json!("01.02.1980")))],
            "owners[0].dob",
            "invalid_date",
        ),
        c(
            "self",
            vec![("/owners/0/dob", Some(json!("2027-01-01")))],
            "owners[0].dob",
            "not_in_past",
        ),
        c(
            "self",
            vec![("/industrial_license/issue_date", Some(json!("2030-01-01")))],
            "industrial_license.issue_date",
            "not_in_past",
        ),
        c(
            "self",
            vec![(
                "/owners/0/residence_permit/issue_date",
                Some(json!("2030-01-01")),
            )],
            "owners[0].residence_permit.issue_date",
            "not_in_past",
        ),
        c(
            "self",
            vec![("/phone", Some(json!("call me")))],
            "phone",
            "invalid_phone",
        ),
        c(
            "self",
            vec![("/phone", Some(json!("12345")))],
            "phone",
            "invalid_phone",
        ),
        c(
            "self",
            vec![("/owners/0/phone", Some(Value::from("1".repeat(33))))],
            "owners[0].phone",
            "invalid_phone",
        ),
        c(
            "self",
            vec![("/email", Some(json!("kontakt@")))],
            "email",
            "invalid_email",
        ),
        c(
            "self",
            vec![("/owners/0/email", Some(json!("a b@example.de")))],
            "owners[0].email",
            "invalid_email",
        ),
        c(
            "self",
            vec![("/business_type", Some(json!([])))],
            "business_type",
            "too_few",
        ),
        c(
            "self",
            vec![("/business_type", Some(json!(["trade", "trade"])))],
            "business_type[1]",
            "duplicate",
        ),
        c(
            "self",
            vec![("/owners", Some(json!([])))],
            "owners",
            "too_few",
        ),
        c(
            "self",
            vec![("/owners/0/signatures/gewa_1", None)],
            "owners[0].signatures.gewa_1",
            "required",
        ),
        c(
            "self",
            vec![(
                "/owners/0/documents",
                Some(json!({"gewa_1": {"file": "signed"}})),
            )],
            "owners[0].signatures.gewa_1",
            "conflict",
        ),
        c(
            "self",
            vec![("/owners/0/signatures/gewa_1", Some(json!("M 0 0 Q")))],
            "owners[0].signatures.gewa_1",
            "invalid_svg_path",
        ),
        c(
            "self",
            vec![("/owners/0/signatures/gewa_1", Some(json!("M 5 5 L 5 5")))],
            "owners[0].signatures.gewa_1",
            "degenerate_signature",
        ),
        c(
            "self",
            vec![(
                "/owners/0/signatures/power_of_attorney",
                Some(json!("M0 0 L10 10")),
            )],
            "owners[0].signatures.power_of_attorney",
            "not_allowed",
        ),
        c(
            "assisted",
            vec![("/owners/1/signatures/power_of_attorney", None)],
            "owners[1].signatures.power_of_attorney",
            "required",
        ),
        c(
            "self",
            vec![("/owners/0/has_employment_restrictions", None)],
            "owners[0].has_employment_restrictions",
            "required",
        ),
        c(
            "self",
            vec![("/owners/0/residence_permit", None)],
            "owners[0].has_employment_restrictions",
            "not_allowed",
        ),
        c(
            "self",
            vec![
                (
                    "/company_id",
                    Some(json!("0196a1f0-0000-7000-8000-000000000001")),
                ),
                (
                    "/business_address",
                    Some(
                        json!({"street": "Rue 1", "zip": "75001", "city": "Paris", "country": "FR"}),
                    ),
                ),
            ],
            "business_address",
            "not_allowed",
        ),
        c(
            "self",
            vec![("/company_id", Some(json!("not-a-uuid")))],
            "company_id",
            "invalid_uuid",
        ),
        c(
            "self",
            vec![("/owners/0/last_name", Some(json!("Петров")))],
            "owners[0].last_name",
            "invalid_characters",
        ),
        c(
            "self",
            vec![("/owners/0/first_name", Some(json!("Erika2")))],
            "owners[0].first_name",
            "invalid_characters",
        ),
        c(
            "self",
            vec![("/purpose", Some(json!("Handel\nmit Waren")))],
            "purpose",
            "invalid_characters",
        ),
        c(
            "self",
            vec![("/owners/0/extra", Some(json!(true)))],
            "owners[0].extra",
            "unknown_field",
        ),
        c(
            "self",
            vec![("/has_public_sector_participation", Some(json!("no")))],
            "has_public_sector_participation",
            "invalid_type",
        ),
    ]
}

//! Test support: one broken request per trade registration rule, with the field path and
//! code the answer must name. Shared by the domain's unit tests and the server's HTTP tests so
//! the table exists once.

use serde_json::{Value, json};

/// A request with one rule broken.
pub struct RuleCase {
    /// Which example request to start from (see [`example`]).
    pub base: &'static str,
    /// JSON pointer edits: `Some` sets, `None` removes.
    pub edits: Vec<(&'static str, Option<Value>)>,
    pub field: &'static str,
    pub code: &'static str,
}

/// The example request files of `examples/`: `self` and `assisted` (trade), `gmbh` and `ug`
/// (tax), `gbr` and `egbr` (partnership tax).
pub fn example(name: &str) -> Value {
    let text = match name {
        "self" => include_str!("../../../examples/trade-registration-self.json"),
        "assisted" => include_str!("../../../examples/trade-registration-assisted.json"),
        "gmbh" => include_str!("../../../examples/tax-registration-gmbh.json"),
        "ug" => include_str!("../../../examples/tax-registration-ug.json"),
        "gbr" => include_str!("../../../examples/tax-registration-gbr.json"),
        "egbr" => include_str!("../../../examples/tax-registration-egbr.json"),
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
        // "with legal-form suffix where one applies" (domain::legal_name).
        c(
            "self",
            vec![("/name", Some(json!("Mustermann Software")))],
            "name",
            "missing_legal_form",
        ),
        c(
            "self",
            vec![("/legal_form", Some(json!("ug")))],
            "name",
            "missing_legal_form",
        ),
        // Printed on the GewA 1, so Latin only, as the other free text.
        c(
            "self",
            vec![("/email", Some(json!("用户@例子.中国")))],
            "email",
            "invalid_characters",
        ),
        c(
            "self",
            vec![("/owners/0/email", Some(json!("erika\u{1F600}@example.de")))],
            "owners[0].email",
            "invalid_characters",
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
            "assisted",
            vec![("/business_address", None)],
            "business_address",
            "required",
        ),
        c(
            "assisted",
            vec![
                ("/establishment_type", Some(json!("dependent-branch"))),
                ("/business_address", None),
            ],
            "business_address",
            "required",
        ),
        // GewA 1 field 10: nationalities the official list names.
        c(
            "self",
            vec![("/owners/0/nationality", Some(json!("AQ")))],
            "owners[0].nationality",
            "no_nationality",
        ),
        c(
            "self",
            vec![("/owners/0/other_nationalities", Some(json!(["AQ"])))],
            "owners[0].other_nationalities[0]",
            "no_nationality",
        ),
        c(
            "self",
            vec![("/owners/0/other_nationalities", Some(json!(["tr"])))],
            "owners[0].other_nationalities[0]",
            "duplicate",
        ),
        c(
            "self",
            vec![(
                "/owners/0/other_nationalities",
                Some(json!(["AT", "DE", "PL", "FR"])),
            )],
            "owners[0].other_nationalities",
            "too_many",
        ),
        c(
            "self",
            vec![("/owners/0/other_nationalities", Some(json!(["XX"])))],
            "owners[0].other_nationalities[0]",
            "invalid_country",
        ),
        // Field 30 is for foreigners who need a residence title.
        c(
            "self",
            vec![("/owners/0/other_nationalities", Some(json!(["DE"])))],
            "owners[0].residence_permit",
            "not_allowed",
        ),
        // Field 31: the restriction's wording when there is one.
        c(
            "self",
            vec![("/owners/0/has_employment_restrictions", Some(json!(true)))],
            "owners[0].employment_restriction_details",
            "required",
        ),
        c(
            "self",
            vec![(
                "/owners/0/employment_restriction_details",
                Some(json!("Selbständige Tätigkeit nicht gestattet")),
            )],
            "owners[0].employment_restriction_details",
            "not_allowed",
        ),
        c(
            "self",
            vec![
                ("/owners/0/has_employment_restrictions", Some(json!(true))),
                ("/owners/0/employment_restriction_details", Some(long(201))),
            ],
            "owners[0].employment_restriction_details",
            "too_long",
        ),
        // Field 2: the register court.
        c(
            "self",
            vec![("/registration_court", Some(json!("Amtsgericht Atlantis")))],
            "registration_court",
            "unknown_register_court",
        ),
        c(
            "self",
            vec![("/registration_number", None)],
            "registration_court",
            "not_allowed",
        ),
        // Field 14: only for a branch or an AG.
        c(
            "self",
            vec![(
                "/authorized_representative",
                Some(json!({"first_name": "Jonas", "last_name": "Weber"})),
            )],
            "authorized_representative",
            "not_allowed",
        ),
        c(
            "assisted",
            vec![("/authorized_representative/last_name", None)],
            "authorized_representative.last_name",
            "required",
        ),
        c(
            "assisted",
            vec![(
                "/authorized_representative/first_name",
                Some(json!("Jonas 2")),
            )],
            "authorized_representative.first_name",
            "invalid_characters",
        ),
        // Field 16: the main establishment of a branch.
        c(
            "self",
            vec![(
                "/main_establishment",
                Some(json!({"street": "Rue 1", "zip": "75001", "city": "Paris", "country": "FR"})),
            )],
            "main_establishment",
            "not_allowed",
        ),
        c(
            "assisted",
            vec![(
                "/main_establishment",
                Some(
                    json!({"street": "Rue 1", "zip": "75001", "city": "Paris", "country": "FR", "phone": "call me"}),
                ),
            )],
            "main_establishment.phone",
            "invalid_phone",
        ),
        c(
            "assisted",
            vec![(
                "/main_establishment",
                Some(json!({"street": "Rue 1", "zip": "75001", "city": "Paris"})),
            )],
            "main_establishment.country",
            "required",
        ),
        // Fields 26 and 27: not for a new foundation.
        c(
            "self",
            vec![(
                "/previous_business",
                Some(json!({"name": "Gabler Software e. K."})),
            )],
            "previous_business",
            "not_allowed",
        ),
        c(
            "self",
            vec![
                ("/reason", Some(json!("takeover"))),
                (
                    "/previous_business",
                    Some(json!({"accident_insurer": "BG ETEM"})),
                ),
            ],
            "previous_business.name",
            "required",
        ),
        c(
            "self",
            vec![
                ("/reason", Some(json!("takeover"))),
                (
                    "/previous_business",
                    Some(
                        json!({"name": "Gabler Software e. K.", "accident_insurance_number": "1".repeat(31)}),
                    ),
                ),
            ],
            "previous_business.accident_insurance_number",
            "too_long",
        ),
        // Field 29: the Handwerkskarte of a craft business.
        c(
            "self",
            vec![("/craft_card", Some(json!({"held": false})))],
            "craft_card",
            "not_allowed",
        ),
        c(
            "assisted",
            vec![("/craft_card/issue_date", None)],
            "craft_card.issue_date",
            "required",
        ),
        c(
            "assisted",
            vec![("/craft_card/held", Some(json!(false)))],
            "craft_card.chamber",
            "not_allowed",
        ),
        c(
            "assisted",
            vec![("/craft_card/issue_date", Some(json!("2099-01-01")))],
            "craft_card.issue_date",
            "not_in_past",
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

/// One case per rule of the UG/GmbH tax registration request.
pub fn tax_cases() -> Vec<RuleCase> {
    let long = |n: usize| Value::from("a".repeat(n));
    let share = |a: f64, b: f64, c: f64| {
        vec![
            (
                "/shareholders/individuals/0/share_percentage",
                Some(json!(a)),
            ),
            (
                "/shareholders/individuals/1/share_percentage",
                Some(json!(b)),
            ),
            ("/shareholders/entities/0/share_percentage", Some(json!(c))),
        ]
    };
    vec![
        c(
            "gmbh",
            vec![("/legal_form", Some(json!("ag")))],
            "legal_form",
            "invalid_value",
        ),
        c(
            "gmbh",
            vec![("/package", Some(json!("assisted")))],
            "package",
            "invalid_value",
        ),
        c(
            "gmbh",
            vec![
                ("/environment", None),
                ("/environment", Some(json!("test"))),
            ],
            "environment",
            "invalid_value",
        ),
        c(
            "gmbh",
            vec![("/signature_path", Some(json!("M 1 1 X")))],
            "signature_path",
            "invalid_svg_path",
        ),
        c(
            "gmbh",
            vec![("/signature_path", None)],
            "signature_path",
            "required",
        ),
        c(
            "gmbh",
            vec![(
                "/company_id",
                Some(json!("0196a1f0-0000-7000-8000-000000000001")),
            )],
            "business_address",
            "not_allowed",
        ),
        c(
            "gmbh",
            vec![("/tax_registration_id", Some(json!("nope")))],
            "tax_registration_id",
            "invalid_uuid",
        ),
        c(
            "gmbh",
            vec![("/tax_office_number", Some(json!("12")))],
            "tax_office_number",
            "invalid_value",
        ),
        c(
            "gmbh",
            vec![("/tax_office_number", Some(json!("9999")))],
            "tax_office_number",
            "unknown_tax_office",
        ),
        c("gmbh", vec![("/name", Some(long(121)))], "name", "too_long"),
        c(
            "gmbh",
            vec![("/purpose", Some(long(201)))],
            "purpose",
            "too_long",
        ),
        c(
            "gmbh",
            vec![("/notarization_date", Some(json!("2099-01-01")))],
            "notarization_date",
            "not_in_past",
        ),
        c(
            "gmbh",
            vec![(
                "/operational_activity_start_date",
                Some(json!("2025-02-01")),
            )],
            "operational_activity_start_date",
            "before_notarization",
        ),
        c(
            "gmbh",
            vec![("/fiscal_year_deviates_from_calendar", Some(json!(true)))],
            "fiscal_year_deviating_start_date",
            "required",
        ),
        c(
            "gmbh",
            vec![(
                "/fiscal_year_deviating_start_date",
                Some(json!("2025-07-01")),
            )],
            "fiscal_year_deviating_start_date",
            "not_allowed",
        ),
        c(
            "gmbh",
            vec![("/capital", Some(json!(24999)))],
            "capital",
            "out_of_range",
        ),
        c(
            "ug",
            vec![("/capital", Some(json!(25000)))],
            "capital",
            "out_of_range",
        ),
        c(
            "ug",
            vec![("/capital", Some(json!(0)))],
            "capital",
            "out_of_range",
        ),
        c(
            "gmbh",
            vec![("/capital", Some(json!(25000.5)))],
            "capital",
            "not_whole_euros",
        ),
        c(
            "gmbh",
            vec![("/paid_in_capital", Some(json!(30000)))],
            "paid_in_capital",
            "exceeds_capital",
        ),
        c(
            "gmbh",
            vec![("/formation_type", Some(json!("conversion")))],
            "conversion_type",
            "required",
        ),
        c(
            "gmbh",
            vec![("/conversion_type", Some(json!("merger")))],
            "conversion_type",
            "not_allowed",
        ),
        c(
            "gmbh",
            vec![("/address/street", Some(json!("Musterstraße")))],
            "address.street",
            "missing_house_number",
        ),
        // An ordinal is part of the street's name, not its number.
        c(
            "gmbh",
            vec![("/address/street", Some(json!("Straße des 17. Juni")))],
            "address.street",
            "missing_house_number",
        ),
        c(
            "gmbh",
            vec![("/directors/0/address/street", Some(json!("Am 1. Mai")))],
            "directors[0].address.street",
            "missing_house_number",
        ),
        c(
            "gmbh",
            vec![("/address/zip", Some(json!("1011")))],
            "address.zip",
            "invalid_zip",
        ),
        c(
            "gmbh",
            vec![("/address/city", Some(json!("Berlin 10")))],
            "address.city",
            "digits_not_allowed",
        ),
        c(
            "gmbh",
            vec![("/address/country", Some(json!("XX")))],
            "address.country",
            "invalid_country",
        ),
        c(
            "gmbh",
            vec![("/notary/last_name", None)],
            "notary.last_name",
            "required",
        ),
        c(
            "gmbh",
            vec![("/notary/address", None)],
            "notary.address",
            "required",
        ),
        c(
            "gmbh",
            vec![("/directors", Some(json!([])))],
            "directors",
            "too_few",
        ),
        c(
            "gmbh",
            vec![("/directors/0/first_name", Some(long(73)))],
            "directors[0].first_name",
            "too_long",
        ),
        c(
            "gmbh",
            vec![("/directors/0/dob", Some(json!("2099-01-01")))],
            "directors[0].dob",
            "not_in_past",
        ),
        c(
            "gmbh",
            vec![(
                "/directors/0/tax_identification_number",
                Some(json!("86095742718")),
            )],
            "directors[0].tax_identification_number",
            "invalid_tax_id",
        ),
        c(
            "gmbh",
            vec![(
                "/directors/0/tax_identification_number",
                Some(json!("12345678901")),
            )],
            "directors[0].tax_identification_number",
            "invalid_tax_id",
        ),
        c(
            "ug",
            vec![(
                "/shareholders/individuals/0/tax_identification_number",
                Some(json!("02476291358")),
            )],
            "shareholders.individuals[0].tax_identification_number",
            "test_tax_id",
        ),
        c(
            "gmbh",
            vec![("/directors/0/email", Some(json!("erika@")))],
            "directors[0].email",
            "invalid_email",
        ),
        c(
            "gmbh",
            vec![("/directors/0/email", Some(json!("эрика@пример.рф")))],
            "directors[0].email",
            "invalid_characters",
        ),
        c(
            "gmbh",
            vec![(
                "/shareholders",
                Some(json!({"individuals": [], "entities": []})),
            )],
            "shareholders",
            "too_few",
        ),
        c(
            "gmbh",
            share(33.3333, 33.3333, 33.3333),
            "shareholders",
            "shares_do_not_sum_to_100",
        ),
        // 0.0001 % of 25,000 euros is 2.5 cents: no whole-euro share of at least one euro.
        c(
            "gmbh",
            share(99.9998, 0.0001, 0.0001),
            "shareholders.individuals[1].share_percentage",
            "share_below_one_euro",
        ),
        // 120 characters, but 235 in the ELSTER XML's ISO 8859-15 (Ĳ is IJ there).
        c(
            "gmbh",
            vec![(
                "/name",
                Some(json!(format!("{} GmbH", "\u{132}".repeat(115)))),
            )],
            "name",
            "too_long",
        ),
        // A combining mark alone passes DIN 91379 but has no spelling in the XML.
        c(
            "gmbh",
            vec![("/directors/0/last_name", Some(json!("\u{301}")))],
            "directors[0].last_name",
            "empty",
        ),
        c(
            "gmbh",
            share(33.33333, 33.3333, 33.33337),
            "shareholders.individuals[0].share_percentage",
            "invalid_percentage",
        ),
        c(
            "gmbh",
            share(0.0, 50.0, 50.0),
            "shareholders.individuals[0].share_percentage",
            "invalid_percentage",
        ),
        c(
            "gmbh",
            vec![(
                "/shareholders/entities/0/share_percentage",
                Some(json!(100.5)),
            )],
            "shareholders.entities[0].share_percentage",
            "invalid_percentage",
        ),
        c(
            "gmbh",
            vec![("/shareholders/entities/0/name", Some(long(121)))],
            "shareholders.entities[0].name",
            "too_long",
        ),
        c(
            "gmbh",
            vec![("/commercial_register/status", Some(json!("pending")))],
            "commercial_register.status",
            "invalid_value",
        ),
        c(
            "gmbh",
            vec![("/commercial_register/registration_court", None)],
            "commercial_register.registration_court",
            "required",
        ),
        c(
            "gmbh",
            vec![(
                "/commercial_register/registration_number",
                Some(json!("HRB B 12")),
            )],
            "commercial_register.registration_number",
            "invalid_register_number",
        ),
        c(
            "ug",
            vec![("/commercial_register/registration_application_date", None)],
            "commercial_register.registration_application_date",
            "required",
        ),
        c(
            "ug",
            vec![("/commercial_register/registration_number", Some(json!("1")))],
            "commercial_register.registration_number",
            "not_allowed",
        ),
        c(
            "gmbh",
            vec![("/iban", Some(json!("DE89370400440532013001")))],
            "iban",
            "invalid_iban",
        ),
        c(
            "gmbh",
            vec![("/bic", Some(json!("COBADE")))],
            "bic",
            "invalid_bic",
        ),
        // Replayed on the eGbR, whose name must say eGbR.
        c(
            "gmbh",
            vec![("/name", Some(json!("Mustermann Software")))],
            "name",
            "missing_legal_form",
        ),
        c(
            "gmbh",
            vec![("/bic", Some(json!("MULTIPLE")))],
            "bic",
            "invalid_bic",
        ),
        c(
            "gmbh",
            vec![("/iban", None), ("/bic", Some(json!("COBADEFFXXX")))],
            "bic",
            "not_allowed",
        ),
        c(
            "gmbh",
            vec![
                ("/iban", Some(json!("FR1420041010050500013M02606"))),
                ("/bic", None),
            ],
            "bic",
            "required",
        ),
        c(
            "gmbh",
            vec![("/financial_estimates/following_year", None)],
            "financial_estimates.following_year",
            "required",
        ),
        c(
            "gmbh",
            vec![(
                "/financial_estimates/formation_year/profit_amount",
                Some(json!(200000)),
            )],
            "financial_estimates.formation_year.revenue_amount",
            "revenue_below_profit",
        ),
        c(
            "gmbh",
            vec![(
                "/financial_estimates/formation_year/revenue_amount",
                Some(json!(10.5)),
            )],
            "financial_estimates.formation_year.revenue_amount",
            "not_whole_euros",
        ),
        c("ug", vec![("/vat/regime", None)], "vat.regime", "required"),
        c(
            "ug",
            vec![(
                "/financial_estimates/following_year/revenue_amount",
                Some(json!(150000)),
            )],
            "vat.regime",
            "small_business_unavailable",
        ),
        c(
            "ug",
            vec![("/vat/accounting_method", Some(json!("cash")))],
            "vat.accounting_method",
            "not_allowed",
        ),
        c(
            "ug",
            vec![("/vat/return_frequency", Some(json!("quarterly")))],
            "vat.return_frequency",
            "not_allowed",
        ),
        c(
            "gmbh",
            vec![("/vat/accounting_method", None)],
            "vat.accounting_method",
            "required",
        ),
        c(
            "gmbh",
            vec![("/vat/estimated_balance_type", None)],
            "vat.estimated_balance_type",
            "required",
        ),
        c(
            "gmbh",
            vec![("/vat/estimated_balance_amount", None)],
            "vat.estimated_balance_amount",
            "required",
        ),
        c(
            "gmbh",
            vec![
                ("/vat/accounting_method", Some(json!("cash"))),
                (
                    "/financial_estimates/formation_year/revenue_amount",
                    Some(json!(900000)),
                ),
            ],
            "vat.accounting_method",
            "cash_not_allowed",
        ),
        c(
            "gmbh",
            vec![("/vat/estimated_balance_amount", Some(json!(9000)))],
            "vat.return_frequency",
            "monthly_not_allowed",
        ),
        c(
            "gmbh",
            vec![("/vat/return_frequency", None)],
            "vat.return_frequency",
            "required",
        ),
        c(
            "gmbh",
            vec![("/vat/request_reverse_charge_certificate", Some(json!(true)))],
            "vat.reverse_charge_service_type",
            "required",
        ),
        c(
            "gmbh",
            vec![("/vat/reverse_charge_service_type", Some(json!("both")))],
            "vat.reverse_charge_service_type",
            "not_allowed",
        ),
        c(
            "gmbh",
            vec![("/employee_count", None)],
            "employee_count",
            "required",
        ),
        c(
            "gmbh",
            vec![("/payroll_start_date", Some(json!("2025-02-01")))],
            "payroll_start_date",
            "before_activity_start",
        ),
        c(
            "gmbh",
            vec![("/shareholder_employee_count", Some(json!(5)))],
            "shareholder_employee_count",
            "out_of_range",
        ),
        c(
            "ug",
            vec![("/employee_count", Some(json!(1)))],
            "employee_count",
            "not_allowed",
        ),
        c(
            "gmbh",
            vec![("/has_employees", None)],
            "has_employees",
            "required",
        ),
        c(
            "gmbh",
            vec![("/surprise", Some(json!(1)))],
            "surprise",
            "unknown_field",
        ),
        c(
            "gmbh",
            vec![("/directors/0/last_name", Some(json!("Müller\u{0}")))],
            "directors[0].last_name",
            "invalid_characters",
        ),
    ]
}

/// Whether a top-level field has the same rule on the GbR endpoint as on the UG/GmbH one (one
/// implementation in `tax_request`): it is a field of both requests, except the activity
/// start, which is checked against a different founding date. `surprise` is the unknown field
/// the cases send.
fn shared_with_gbr(field: &str) -> bool {
    field == "surprise"
        || (field != "operational_activity_start_date"
            && crate::tax_request::FIELDS.contains(&field)
            && crate::gbr_request::FIELDS.contains(&field))
}

fn top_level(path: &str) -> &str {
    let path = path.trim_start_matches('/');
    let end = path.find(['/', '.', '[']).unwrap_or(path.len());
    &path[..end]
}

/// One case per rule of the GbR/eGbR tax registration request: the partnership's own rules,
/// then every UG/GmbH case about a shared field, started from the partnership example that
/// mirrors its base (`ug` -> `gbr`: small business, no payroll; `gmbh` -> `egbr`: standard
/// VAT with a monthly refund, payroll, bank, business address, sandbox).
pub fn gbr_cases() -> Vec<RuleCase> {
    let long = |n: usize| Value::from("a".repeat(n));
    let shares = |a: f64, b: f64, c: f64| {
        vec![
            ("/partners/individuals/0/share_percentage", Some(json!(a))),
            ("/partners/individuals/1/share_percentage", Some(json!(b))),
            ("/partners/individuals/2/share_percentage", Some(json!(c))),
        ]
    };
    let one_partner =
        json!({"individuals": [example("gbr")["partners"]["individuals"][0].clone()]});
    let mut own = vec![
        c(
            "gbr",
            vec![("/legal_form", Some(json!("gmbh")))],
            "legal_form",
            "invalid_value",
        ),
        c("gbr", vec![("/legal_form", None)], "legal_form", "required"),
        c(
            "gbr",
            vec![("/partnership_agreement_date", None)],
            "partnership_agreement_date",
            "required",
        ),
        c(
            "gbr",
            vec![("/partnership_agreement_date", Some(json!("2099-01-01")))],
            "partnership_agreement_date",
            "not_in_past",
        ),
        c(
            "gbr",
            vec![("/partnership_agreement_date", Some(json!("01.04.2025")))],
            "partnership_agreement_date",
            "invalid_date",
        ),
        c(
            "gbr",
            vec![(
                "/operational_activity_start_date",
                Some(json!("2025-03-31")),
            )],
            "operational_activity_start_date",
            "before_partnership_agreement",
        ),
        c("gbr", vec![("/partners", None)], "partners", "required"),
        c(
            "gbr",
            vec![("/partners", Some(json!([])))],
            "partners",
            "invalid_type",
        ),
        c(
            "gbr",
            vec![("/partners/individuals", Some(json!({})))],
            "partners.individuals",
            "invalid_type",
        ),
        c(
            "gbr",
            vec![("/partners", Some(one_partner))],
            "partners",
            "too_few",
        ),
        c(
            "gbr",
            vec![("/partners", Some(json!({})))],
            "partners",
            "too_few",
        ),
        c(
            "gbr",
            shares(33.33, 33.33, 33.33),
            "partners",
            "shares_do_not_sum_to_100",
        ),
        c(
            "gbr",
            shares(33.33, 33.33, 33.35),
            "partners",
            "shares_do_not_sum_to_100",
        ),
        c(
            "gbr",
            shares(0.0, 50.0, 50.0),
            "partners.individuals[0].share_percentage",
            "invalid_percentage",
        ),
        c(
            "gbr",
            shares(33.33333, 33.33, 33.33667),
            "partners.individuals[0].share_percentage",
            "invalid_percentage",
        ),
        c(
            "gbr",
            vec![(
                "/partners/individuals/0/share_percentage",
                Some(json!("33.33")),
            )],
            "partners.individuals[0].share_percentage",
            "invalid_type",
        ),
        c(
            "gbr",
            vec![("/partners/individuals/0/share_percentage", None)],
            "partners.individuals[0].share_percentage",
            "required",
        ),
        c(
            "gbr",
            vec![
                (
                    "/partners/individuals/0/is_managing_partner",
                    Some(json!(false)),
                ),
                (
                    "/partners/individuals/1/is_managing_partner",
                    Some(json!(false)),
                ),
            ],
            "partners",
            "no_managing_partner",
        ),
        c(
            "gbr",
            vec![("/partners/individuals/2/is_managing_partner", None)],
            "partners.individuals[2].is_managing_partner",
            "required",
        ),
        c(
            "gbr",
            vec![(
                "/partners/individuals/2/is_managing_partner",
                Some(json!("no")),
            )],
            "partners.individuals[2].is_managing_partner",
            "invalid_type",
        ),
        c(
            "gbr",
            vec![("/partners/individuals/1/first_name", Some(long(73)))],
            "partners.individuals[1].first_name",
            "too_long",
        ),
        c(
            "gbr",
            vec![("/partners/individuals/1/last_name", Some(json!("Брандт")))],
            "partners.individuals[1].last_name",
            "invalid_characters",
        ),
        c(
            "gbr",
            vec![("/partners/individuals/1/dob", Some(json!("2099-01-01")))],
            "partners.individuals[1].dob",
            "not_in_past",
        ),
        c(
            "gbr",
            vec![(
                "/partners/individuals/0/tax_identification_number",
                Some(json!("65929970488")),
            )],
            "partners.individuals[0].tax_identification_number",
            "invalid_tax_id",
        ),
        c(
            "gbr",
            vec![(
                "/partners/individuals/0/tax_identification_number",
                Some(json!("02476291358")),
            )],
            "partners.individuals[0].tax_identification_number",
            "test_tax_id",
        ),
        c(
            "gbr",
            vec![(
                "/partners/individuals/2/address/street",
                Some(json!("Nørregade")),
            )],
            "partners.individuals[2].address.street",
            "missing_house_number",
        ),
        c(
            "gbr",
            vec![("/partners/individuals/2/address/zip", Some(json!("11650")))],
            "partners.individuals[2].address.zip",
            "invalid_zip",
        ),
        c(
            "gbr",
            vec![("/partners/individuals/0/middle_name", Some(json!("Maria")))],
            "partners.individuals[0].middle_name",
            "unknown_field",
        ),
        c(
            "egbr",
            vec![("/partners/entities/0/name", Some(long(121)))],
            "partners.entities[0].name",
            "too_long",
        ),
        c(
            "egbr",
            vec![("/partners/entities/0/share_percentage", Some(json!(100.5)))],
            "partners.entities[0].share_percentage",
            "invalid_percentage",
        ),
        c(
            "egbr",
            vec![("/partners/entities/0/is_managing_partner", None)],
            "partners.entities[0].is_managing_partner",
            "required",
        ),
        c(
            "egbr",
            vec![("/partners/entities/0/dob", Some(json!("1990-01-01")))],
            "partners.entities[0].dob",
            "unknown_field",
        ),
        c(
            "egbr",
            vec![("/partners/entities/0/address", None)],
            "partners.entities[0].address",
            "required",
        ),
        c(
            "egbr",
            vec![("/company_register", None)],
            "company_register",
            "required",
        ),
        c(
            "gbr",
            vec![(
                "/company_register",
                Some(
                    json!({"status": "application-filed", "registration_application_date": "2025-04-02"}),
                ),
            )],
            "company_register",
            "not_allowed",
        ),
        c(
            "egbr",
            vec![("/company_register", Some(json!({"status": "not-applied"})))],
            "company_register.status",
            "invalid_value",
        ),
        c(
            "egbr",
            vec![("/company_register/status", None)],
            "company_register.status",
            "required",
        ),
        c(
            "egbr",
            vec![("/company_register/registration_court", None)],
            "company_register.registration_court",
            "required",
        ),
        c(
            "egbr",
            vec![(
                "/company_register/registration_number",
                Some(json!("HRB 1234")),
            )],
            "company_register.registration_number",
            "invalid_register_number",
        ),
        c(
            "egbr",
            vec![(
                "/company_register/registration_date",
                Some(json!("2025-02-30")),
            )],
            "company_register.registration_date",
            "invalid_date",
        ),
        c(
            "egbr",
            vec![
                ("/company_register/status", Some(json!("application-filed"))),
                ("/company_register/registration_date", None),
                ("/company_register/registration_court", None),
                ("/company_register/registration_number", None),
            ],
            "company_register.registration_application_date",
            "required",
        ),
        c(
            "egbr",
            vec![
                ("/company_register/status", Some(json!("application-filed"))),
                (
                    "/company_register/registration_application_date",
                    Some(json!("2025-01-20")),
                ),
            ],
            "company_register.registration_number",
            "not_allowed",
        ),
        // What only a corporation has.
        c(
            "gbr",
            vec![("/capital", Some(json!(1000)))],
            "capital",
            "unknown_field",
        ),
        c(
            "gbr",
            vec![("/notarization_date", Some(json!("2025-04-01")))],
            "notarization_date",
            "unknown_field",
        ),
        c(
            "egbr",
            vec![("/shareholders", Some(json!({"individuals": []})))],
            "shareholders",
            "unknown_field",
        ),
        c(
            "egbr",
            vec![(
                "/commercial_register",
                Some(json!({"status": "not-applied"})),
            )],
            "commercial_register",
            "unknown_field",
        ),
        c(
            "egbr",
            vec![("/directors", Some(json!([])))],
            "directors",
            "unknown_field",
        ),
    ];
    let shared = tax_cases().into_iter().filter_map(|case| {
        let all_shared = std::iter::once(case.field)
            .chain(case.edits.iter().map(|(p, _)| *p))
            .all(|p| shared_with_gbr(top_level(p)));
        let base = match case.base {
            "ug" => "gbr",
            "gmbh" => "egbr",
            _ => return None,
        };
        all_shared.then_some(RuleCase { base, ..case })
    });
    own.extend(shared);
    own
}

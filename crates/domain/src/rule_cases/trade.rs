//! One broken trade registration request per rule.

use serde_json::{Value, json};

use super::{RuleCase, c};

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
        // Fields 30 and 31 are for foreigners who need a residence title: not a citizen of
        // the EU, the EEA or Switzerland (issue 49).
        c(
            "self",
            vec![("/owners/0/nationality", Some(json!("PL")))],
            "owners[0].residence_permit",
            "not_allowed",
        ),
        c(
            "self",
            vec![("/owners/0/other_nationalities", Some(json!(["CH"])))],
            "owners[0].has_employment_restrictions",
            "not_allowed",
        ),
        // Field 17: the former establishment of a relocation, and only there.
        c(
            "self",
            vec![("/reason", Some(json!("reopening-after-relocation")))],
            "previous_establishment",
            "required",
        ),
        c(
            "self",
            vec![(
                "/previous_establishment",
                Some(json!({"street": "Leopoldstraße 10", "zip": "80802", "city": "München"})),
            )],
            "previous_establishment",
            "not_allowed",
        ),
        c(
            "self",
            vec![
                ("/reason", Some(json!("reopening-after-relocation"))),
                (
                    "/previous_establishment",
                    Some(json!({"street": "Leopoldstraße 10", "zip": "8080", "city": "München"})),
                ),
            ],
            "previous_establishment.zip",
            "invalid_zip",
        ),
        c(
            "self",
            vec![
                ("/reason", Some(json!("reopening-after-relocation"))),
                (
                    "/previous_establishment",
                    Some(json!({"street": "Leopoldstraße 10", "zip": "80802"})),
                ),
            ],
            "previous_establishment.city",
            "required",
        ),
        c(
            "self",
            vec![
                ("/reason", Some(json!("reopening-after-relocation"))),
                (
                    "/previous_establishment",
                    Some(json!({"street": "Musterstraße 1", "zip": "10115", "city": "Berlin"})),
                ),
            ],
            "previous_establishment",
            "conflict",
        ),
        // A legal person files one GewA 1: a signed upload is the company's, once.
        c(
            "two-directors",
            vec![(
                "/owners/1/documents",
                Some(json!({"gewa_1": {"file": "gewa1_jan"}})),
            )],
            "owners[1].documents.gewa_1",
            "not_allowed",
        ),
        c(
            "two-directors",
            vec![
                ("/owners/0/signatures/gewa_1", None),
                (
                    "/owners/0/documents",
                    Some(json!({"gewa_1": {"file": "gewa1_company"}})),
                ),
            ],
            "owners[1].signatures.gewa_1",
            "not_allowed",
        ),
        c(
            "two-directors",
            vec![("/owners/1/signatures/gewa_1", None)],
            "owners[1].signatures.gewa_1",
            "required",
        ),
    ]
}

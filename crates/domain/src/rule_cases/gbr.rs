//! One broken GbR/eGbR tax registration request per rule: the partnership's own, and the
//! UG/GmbH ones about a field both requests have.

use serde_json::{Value, json};

use super::{RuleCase, c};

use super::{example, tax_cases};

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

//! One broken sole-proprietor tax registration request per rule: the natural person's own, and
//! the UG/GmbH ones about a field both requests have.

use serde_json::{Value, json};

use super::{RuleCase, c, tax_cases};

/// Whether a top-level field has the same rule here as on the UG/GmbH endpoint: a field of both
/// requests, except those whose rules differ for a natural person (the name carries no
/// legal-form designation; the activity start follows the preparations; a sole proprietor has
/// no partners among the employees to count against).
fn shared(field: &str) -> bool {
    field == "surprise"
        || (!matches!(
            field,
            "name" | "operational_activity_start_date" | "shareholder_employee_count"
        ) && crate::tax_request::FIELDS.contains(&field)
            && crate::sole_proprietor_request::FIELDS.contains(&field))
}

fn top_level(path: &str) -> &str {
    let path = path.trim_start_matches('/');
    let end = path.find(['/', '.', '[']).unwrap_or(path.len());
    &path[..end]
}

/// One case per rule of the sole-proprietor request: its own rules, then every UG/GmbH case
/// about a shared field, started from the example that mirrors its base (`ug` -> the
/// production sole trader: small business, no payroll; `gmbh` -> the sandbox freelancer:
/// standard VAT with a monthly refund, payroll, bank).
pub fn sole_proprietor_cases() -> Vec<RuleCase> {
    const F: &str = "sole-proprietor";
    const T: &str = "sole-trader";
    let long = |n: usize| Value::from("a".repeat(n));
    let mut own = vec![
        c(
            F,
            vec![("/legal_form", Some(json!("gbr")))],
            "legal_form",
            "invalid_value",
        ),
        c(F, vec![("/legal_form", None)], "legal_form", "required"),
        c(
            F,
            vec![("/activity_kind", None)],
            "activity_kind",
            "required",
        ),
        c(
            F,
            vec![("/activity_kind", Some(json!("hobby")))],
            "activity_kind",
            "invalid_value",
        ),
        c(
            F,
            vec![("/profit_determination", Some(json!("estimate")))],
            "profit_determination",
            "invalid_value",
        ),
        c(
            T,
            vec![("/profit_determination", None)],
            "profit_determination",
            "required",
        ),
        c(
            F,
            vec![("/preparations_start_date", None)],
            "preparations_start_date",
            "required",
        ),
        c(
            F,
            vec![("/preparations_start_date", Some(json!("2099-01-01")))],
            "preparations_start_date",
            "not_in_past",
        ),
        c(
            F,
            vec![(
                "/operational_activity_start_date",
                Some(json!("2025-02-09")),
            )],
            "operational_activity_start_date",
            "before_preparations",
        ),
        c(
            F,
            vec![
                ("/fiscal_year_deviates_from_calendar", Some(json!(true))),
                (
                    "/fiscal_year_deviating_start_date",
                    Some(json!("2025-07-01")),
                ),
            ],
            "fiscal_year_deviates_from_calendar",
            "not_allowed",
        ),
        // The owner.
        c(F, vec![("/owner", None)], "owner", "required"),
        c(
            F,
            vec![("/owner", Some(json!([])))],
            "owner",
            "invalid_type",
        ),
        c(
            F,
            vec![("/owner/first_name", None)],
            "owner.first_name",
            "required",
        ),
        c(
            F,
            vec![("/owner/last_name", Some(long(73)))],
            "owner.last_name",
            "too_long",
        ),
        c(
            F,
            vec![("/owner/dob", Some(json!("2099-01-01")))],
            "owner.dob",
            "not_in_past",
        ),
        c(
            F,
            vec![("/owner/dob", Some(json!("19.05.1987")))],
            "owner.dob",
            "invalid_date",
        ),
        c(
            T,
            vec![(
                "/owner/tax_identification_number",
                Some(json!("12345678901")),
            )],
            "owner.tax_identification_number",
            "invalid_tax_id",
        ),
        c(
            F,
            vec![("/owner/religion", None)],
            "owner.religion",
            "required",
        ),
        c(
            F,
            vec![("/owner/religion", Some(json!("01")))],
            "owner.religion",
            "invalid_value",
        ),
        c(
            F,
            vec![("/owner/religion", Some(json!(3)))],
            "owner.religion",
            "invalid_type",
        ),
        c(
            F,
            vec![("/owner/salutation", Some(json!("dr")))],
            "owner.salutation",
            "invalid_value",
        ),
        c(
            F,
            vec![("/owner/address", None)],
            "owner.address",
            "required",
        ),
        c(
            F,
            vec![("/owner/address/street", Some(json!("Lindenstraße")))],
            "owner.address.street",
            "missing_house_number",
        ),
        c(
            F,
            vec![("/owner/address/zip", Some(json!("5067")))],
            "owner.address.zip",
            "invalid_zip",
        ),
        c(
            F,
            vec![("/owner/email", Some(json!("lena")))],
            "owner.email",
            "invalid_email",
        ),
        c(
            F,
            vec![("/owner/nickname", Some(json!("Leni")))],
            "owner.nickname",
            "unknown_field",
        ),
        c(
            F,
            vec![("/owner/marital_status", Some(json!("engaged")))],
            "owner.marital_status",
            "invalid_value",
        ),
        c(
            T,
            vec![("/owner/marital_status", None)],
            "owner.marital_status",
            "required",
        ),
        c(
            T,
            vec![("/owner/marital_status_since", Some(json!("2020-01-01")))],
            "owner.marital_status_since",
            "not_allowed",
        ),
        c(
            F,
            vec![("/owner/marital_status_since", Some(json!("2099-01-01")))],
            "owner.marital_status_since",
            "not_in_past",
        ),
        // The spouse follows the marital status.
        c(F, vec![("/spouse", None)], "spouse", "required"),
        c(
            T,
            vec![(
                "/spouse",
                Some(json!({"first_name": "A", "last_name": "B", "dob": "1990-01-01"})),
            )],
            "spouse",
            "not_allowed",
        ),
        c(F, vec![("/spouse/dob", None)], "spouse.dob", "required"),
        c(
            F,
            vec![("/spouse/religion", Some(json!("00")))],
            "spouse.religion",
            "invalid_value",
        ),
        c(
            F,
            vec![("/spouse/tax_identification_number", Some(json!("1234")))],
            "spouse.tax_identification_number",
            "invalid_tax_id",
        ),
        // Cash accounting and its reason (§ 20 UStG).
        c(
            F,
            vec![("/cash_accounting_reason", None)],
            "cash_accounting_reason",
            "required",
        ),
        c(
            F,
            vec![("/cash_accounting_reason", Some(json!("because")))],
            "cash_accounting_reason",
            "invalid_value",
        ),
        c(
            F,
            vec![
                ("/activity_kind", Some(json!("trade"))),
                ("/cash_accounting_reason", Some(json!("liberal-profession"))),
            ],
            "cash_accounting_reason",
            "not_a_liberal_profession",
        ),
        c(
            F,
            vec![("/vat/accounting_method", Some(json!("accrual")))],
            "cash_accounting_reason",
            "not_allowed",
        ),
        c(
            T,
            vec![(
                "/cash_accounting_reason",
                Some(json!("turnover-below-limit")),
            )],
            "cash_accounting_reason",
            "not_allowed",
        ),
        c(
            F,
            vec![
                (
                    "/cash_accounting_reason",
                    Some(json!("turnover-below-limit")),
                ),
                (
                    "/financial_estimates/formation_year/revenue_amount",
                    Some(json!(800_001)),
                ),
            ],
            "vat.accounting_method",
            "cash_not_allowed",
        ),
        // Prepayments and earlier circumstances.
        c(
            F,
            vec![(
                "/prepayments/employment_income/formation_year",
                Some(json!(-1)),
            )],
            "prepayments.employment_income.formation_year",
            "out_of_range",
        ),
        c(
            F,
            vec![("/prepayments/special_expenses/following_year", None)],
            "prepayments.special_expenses.following_year",
            "required",
        ),
        c(
            F,
            vec![("/prepayments/pension_income", Some(json!({})))],
            "prepayments.pension_income",
            "unknown_field",
        ),
        c(
            F,
            vec![(
                "/prepayments/rental_income",
                Some(json!({"formation_year": 1.5, "following_year": 0})),
            )],
            "prepayments.rental_income.formation_year",
            "not_whole_euros",
        ),
        c(
            F,
            vec![("/earlier_circumstances/previous_tax_office", Some(long(73)))],
            "earlier_circumstances.previous_tax_office",
            "too_long",
        ),
        c(
            F,
            vec![(
                "/earlier_circumstances/previous_address",
                Some(json!({"street": "Ring 1", "zip": "1", "city": "Köln", "country": "DE"})),
            )],
            "earlier_circumstances.previous_address.zip",
            "invalid_zip",
        ),
        c(
            F,
            vec![("/tax_advisor/type", Some(json!("tax-advisor")))],
            "tax_advisor.type",
            "invalid_value",
        ),
        c(
            F,
            vec![("/trade_registration_id", Some(json!("not-a-uuid")))],
            "trade_registration_id",
            "invalid_uuid",
        ),
        // What only a company has.
        c(
            F,
            vec![("/capital", Some(json!(1000)))],
            "capital",
            "unknown_field",
        ),
        c(
            F,
            vec![("/directors", Some(json!([])))],
            "directors",
            "unknown_field",
        ),
        c(
            T,
            vec![("/partners", Some(json!({})))],
            "partners",
            "unknown_field",
        ),
    ];
    let shared_cases = tax_cases().into_iter().filter_map(|case| {
        let all_shared = std::iter::once(case.field)
            .chain(case.edits.iter().map(|(p, _)| *p))
            .all(|p| shared(top_level(p)));
        let base = match case.base {
            "ug" => T,
            "gmbh" => F,
            _ => return None,
        };
        // The freelancer's cash accounting has no turnover limit (§ 20 sentence 1 no. 3 UStG):
        // the limit's own case is above, with the reason that has one.
        let limit = case.code == "cash_not_allowed";
        (all_shared && !limit).then_some(RuleCase { base, ..case })
    });
    own.extend(shared_cases);
    own
}

//! One broken UG/GmbH tax registration request per rule.

use serde_json::{Value, json};

use super::{RuleCase, c};

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
        // The questions of ELSTER's questionnaire the XML left out (issue 50).
        c(
            "gmbh",
            vec![(
                "/commercial_register/registration_application_date",
                Some(json!("2025-02-21")),
            )],
            "commercial_register.registration_application_date",
            "after_registration",
        ),
        c(
            "gmbh",
            vec![("/phone", Some(json!("+493098765400")))],
            "phone",
            "invalid_phone",
        ),
        c(
            "gmbh",
            vec![("/website", Some(json!("www.example.de")))],
            "website",
            "invalid_url",
        ),
        c(
            "gmbh",
            vec![("/tax_advisor/type", Some(json!("notary")))],
            "tax_advisor.type",
            "invalid_value",
        ),
        c(
            "gmbh",
            vec![(
                "/tax_advisor",
                Some(json!({"type": "person", "first_name": "Paula",
                    "address": {"street": "Weg 1", "zip": "10115", "city": "Berlin", "country": "DE"}})),
            )],
            "tax_advisor.last_name",
            "required",
        ),
        c(
            "gmbh",
            vec![("/tax_advisor/first_name", Some(json!("Paula")))],
            "tax_advisor.first_name",
            "not_allowed",
        ),
        c(
            "gmbh",
            vec![("/tax_advisor", None)],
            "authorized_recipient.type",
            "conflict",
        ),
        c(
            "gmbh",
            vec![
                ("/bank_account_holder", Some(json!("Erika Mustermann"))),
                ("/iban", None),
                ("/bic", None),
            ],
            "bank_account_holder",
            "not_allowed",
        ),
        c(
            "gmbh",
            vec![("/marginal_employee_count", Some(json!(4)))],
            "marginal_employee_count",
            "out_of_range",
        ),
        c(
            "ug",
            vec![("/marginal_employee_count", Some(json!(1)))],
            "marginal_employee_count",
            "not_allowed",
        ),
        c(
            "gmbh",
            vec![(
                "/request_construction_exemption_certificate",
                Some(json!("yes")),
            )],
            "request_construction_exemption_certificate",
            "invalid_type",
        ),
        c(
            "gmbh",
            vec![(
                "/attachments",
                Some(json!({"articles_of_association": {"file": "data"}})),
            )],
            "attachments.articles_of_association.file",
            "invalid_value",
        ),
        c(
            "gmbh",
            vec![(
                "/attachments",
                Some(
                    json!({"articles_of_association": {"file": "a"}, "shareholder_list": {"file": "a"}}),
                ),
            )],
            "attachments.shareholder_list.file",
            "duplicate",
        ),
        c(
            "gmbh",
            vec![("/attachments", Some(json!({"minutes": {"file": "a"}})))],
            "attachments.minutes",
            "unknown_field",
        ),
        // Nominal amounts: for all or none, summing to the capital, agreeing with a percentage.
        c(
            "gmbh",
            vec![(
                "/shareholders/individuals/0/nominal_amount",
                Some(json!(8333)),
            )],
            "shareholders.individuals[1].nominal_amount",
            "required",
        ),
        c(
            "ug",
            vec![(
                "/shareholders/individuals/0/nominal_amount",
                Some(json!(999)),
            )],
            "shareholders",
            "nominal_sum_mismatch",
        ),
        c(
            "ug",
            vec![(
                "/shareholders/individuals/0/share_percentage",
                Some(json!(50)),
            )],
            "shareholders.individuals[0].share_percentage",
            "conflict",
        ),
        c(
            "ug",
            vec![("/shareholders/individuals/0/nominal_amount", Some(json!(0)))],
            "shareholders.individuals[0].nominal_amount",
            "out_of_range",
        ),
        // The shares' running numbers: free text, at most 100 characters.
        c(
            "gmbh",
            vec![("/shareholders/entities/0/share_numbers", Some(json!(3)))],
            "shareholders.entities[0].share_numbers",
            "invalid_type",
        ),
        c(
            "gmbh",
            vec![(
                "/shareholders/individuals/1/share_numbers",
                Some(json!("1".repeat(101))),
            )],
            "shareholders.individuals[1].share_numbers",
            "too_long",
        ),
        c(
            "ug",
            vec![(
                "/shareholders/individuals/0/share_numbers",
                Some(json!(" ")),
            )],
            "shareholders.individuals[0].share_numbers",
            "empty",
        ),
    ]
}

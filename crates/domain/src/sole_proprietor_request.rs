//! `POST /v1/tax-registration/sole-proprietor`: every field rule, applied to the request JSON
//! at once, producing the validated [`SoleProprietorTaxRegistration`].
//!
//! Only what is a natural person's own is written here: the owner, the spouse, the kind of
//! activity, the profit determination, the reason for cash accounting, the prepayment details
//! and the earlier circumstances. The fields every tax registration has (the core fields, the
//! business address, bank, estimates, VAT and payroll) are read by
//! [`crate::tax_core::request`], as for a company.

use serde_json::Value;
use time::Date;

use crate::Violations;
use crate::company::Environment;
use crate::din91379::TextType;
use crate::rules::{self, Obj, object};
use crate::sole_proprietor::{
    ActivityKind, CashAccountingReason, EarlierCircumstances, MaritalStatus, Prepayments,
    ProfitDetermination, Proprietor, RELIGIONS, Salutation, SoleProprietorFields,
    SoleProprietorLegalForm, SoleProprietorTaxRegistration, Spouse, YearAmounts,
};
use crate::tax_core::request::{
    CoreRequest, CreateRequest, LegalFormRules, opt_text, past_date, req_enum, req_text,
    tax_address, tax_id, with_core,
};
use crate::tax_core::{AccountingMethod, CASH_ACCOUNTING_LIMIT};

/// A validated create request.
pub type SoleProprietorTaxRequest = CreateRequest<SoleProprietorTaxRegistration>;

/// The top-level fields of the request (anything else is `unknown_field`).
pub const FIELDS: &[&str] = &with_core::<35>(&[
    "preparations_start_date",
    "activity_kind",
    "profit_determination",
    "owner",
    "spouse",
    "cash_accounting_reason",
    "prepayments",
    "earlier_circumstances",
    "tax_advisor",
    "trade_registration_id",
]);

/// The fields of `owner`.
pub const OWNER_FIELDS: &[&str] = &[
    "salutation",
    "title",
    "first_name",
    "last_name",
    "birth_name",
    "dob",
    "tax_identification_number",
    "occupation",
    "religion",
    "address",
    "phone",
    "email",
    "marital_status",
    "marital_status_since",
];

/// The fields of `spouse`.
pub const SPOUSE_FIELDS: &[&str] = &[
    "first_name",
    "last_name",
    "dob",
    "tax_identification_number",
    "religion",
];

/// The kinds of income of `prepayments`, besides `special_expenses`.
pub const PREPAYMENT_FIELDS: &[&str] = &[
    "employment_income",
    "capital_income",
    "rental_income",
    "other_income",
    "special_expenses",
];

/// The fields of `earlier_circumstances`.
pub const EARLIER_FIELDS: &[&str] = &[
    "previous_tax_number",
    "previous_tax_office",
    "previous_address",
    "previous_self_employment",
];

impl LegalFormRules for SoleProprietorLegalForm {
    const VALUES: &'static [&'static str] = &["einzelunternehmen"];
    const FOUNDED: &'static str = "preparations_start_date";
    const BEFORE_FOUNDED: &'static str = "before_preparations";

    /// A sole proprietor's name carries no legal-form designation (the owner's name or a
    /// business name).
    fn designations(self) -> &'static [&'static [&'static str]] {
        &[]
    }
}

/// A religion code of [`RELIGIONS`].
fn religion(o: &Obj, name: &str, required: bool, e: &mut Violations) -> Option<String> {
    o.read(name, required, e, |v, path, e| {
        let s = rules::string(v, path, e)?.trim();
        if RELIGIONS.iter().any(|(code, _)| *code == s) {
            Some(s.to_string())
        } else {
            let codes: Vec<&str> = RELIGIONS.iter().map(|(c, _)| *c).collect();
            e.push(
                path,
                "invalid_value",
                format!(
                    "must be a two-digit religion code of the questionnaire ({}; 11: not subject to church tax)",
                    codes.join(", ")
                ),
            );
            None
        }
    })
}

/// A date that is not after `today`.
fn not_future(o: &Obj, name: &str, today: Date, e: &mut Violations) -> Option<Date> {
    let d = o.read(name, false, e, rules::date)?;
    if d > today {
        e.push(o.path(name), "not_in_past", "cannot be in the future");
        return None;
    }
    Some(d)
}

fn owner(
    v: &Value,
    today: Date,
    environment: Option<Environment>,
    e: &mut Violations,
) -> Option<Proprietor> {
    let o = object(v, "owner", OWNER_FIELDS, e)?;
    let salutation: Option<Salutation> = o
        .opt("salutation")
        .and_then(|v| rules::enumeration(v, "owner.salutation", &["mr", "ms"], e));
    let title = opt_text(&o, "title", 30, TextType::B, e);
    let first_name = req_text(&o, "first_name", 72, TextType::A, e);
    let last_name = req_text(&o, "last_name", 72, TextType::A, e);
    let birth_name = opt_text(&o, "birth_name", 72, TextType::A, e);
    let dob = past_date(&o, "dob", today, e);
    let tin = tax_id(&o, "tax_identification_number", environment, e);
    let occupation = opt_text(&o, "occupation", 72, TextType::C, e);
    let religion = religion(&o, "religion", true, e);
    let address = o
        .req("address", e)
        .and_then(|v| tax_address(v, "owner.address", e));
    if let Some(a) = &address
        && a.country.is_germany()
    {
        // The residence decides the tax office (§ 19 AO): checked as a seat is.
        crate::offices::check_request_address(
            "owner.address",
            Some(&a.zip),
            Some(&a.city),
            Some(&a.street),
            e,
        );
    }
    let phone = o
        .opt("phone")
        .and_then(|v| rules::phone(v, "owner.phone", e));
    let email = o
        .opt("email")
        .and_then(|v| rules::email(v, "owner.email", e));
    let status: Option<MaritalStatus> = req_enum(
        &o,
        "marital_status",
        &[
            "single",
            "married",
            "civil-partnership",
            "widowed",
            "divorced",
            "permanently-separated",
        ],
        e,
    );
    let since = not_future(&o, "marital_status_since", today, e);
    if status == Some(MaritalStatus::Single) && o.has("marital_status_since") {
        e.push(
            "owner.marital_status_since",
            "not_allowed",
            "is not accepted with marital_status single",
        );
        return None;
    }
    let broken = |field: &str, value: bool| o.has(field) && !value;
    if broken("salutation", salutation.is_some())
        || broken("tax_identification_number", tin.is_some())
        || broken("phone", phone.is_some())
        || broken("email", email.is_some())
        || broken("marital_status_since", since.is_some())
    {
        return None;
    }
    Some(Proprietor {
        salutation,
        title,
        first_name: first_name?,
        last_name: last_name?,
        birth_name,
        dob: dob?,
        tax_identification_number: tin,
        occupation,
        religion: religion?,
        address: address?,
        phone,
        email,
        marital_status: status?,
        marital_status_since: since,
    })
}

/// `spouse`: required when married or in a civil partnership, refused otherwise. `Some(None)`
/// when rightly absent, `None` when broken.
fn spouse(
    o: &Obj,
    status: Option<MaritalStatus>,
    today: Date,
    environment: Option<Environment>,
    e: &mut Violations,
) -> Option<Option<Spouse>> {
    let Some(status) = status else {
        // The owner's marital status is broken or missing (reported): judge nothing more.
        return o.opt("spouse").map_or(Some(None), |_| None);
    };
    match (status.has_spouse(), o.opt("spouse")) {
        (true, None) => {
            e.push(
                "spouse",
                "required",
                "is required when the owner is married or in a civil partnership",
            );
            None
        }
        (false, Some(_)) => {
            e.push(
                "spouse",
                "not_allowed",
                "is only accepted when the owner is married or in a civil partnership",
            );
            None
        }
        (false, None) => Some(None),
        (true, Some(v)) => {
            let s = object(v, "spouse", SPOUSE_FIELDS, e)?;
            let first_name = req_text(&s, "first_name", 72, TextType::A, e);
            let last_name = req_text(&s, "last_name", 72, TextType::A, e);
            let dob = past_date(&s, "dob", today, e);
            let tin = tax_id(&s, "tax_identification_number", environment, e);
            let religion = religion(&s, "religion", false, e);
            if (s.has("tax_identification_number") && tin.is_none())
                || (s.has("religion") && religion.is_none())
            {
                return None;
            }
            Some(Some(Spouse {
                first_name: first_name?,
                last_name: last_name?,
                dob: dob?,
                tax_identification_number: tin,
                religion,
            }))
        }
    }
}

/// `{formation_year, following_year}` in whole euros; `non_negative` for deductions.
fn year_amounts(
    v: &Value,
    path: &str,
    non_negative: bool,
    e: &mut Violations,
) -> Option<YearAmounts> {
    let o = object(v, path, &["formation_year", "following_year"], e)?;
    let mut year = |name: &str| {
        let amount = o.read(name, true, e, rules::whole_euros)?;
        if non_negative && amount < 0 {
            e.push(o.path(name), "out_of_range", "must not be negative");
            return None;
        }
        Some(amount)
    };
    let formation = year("formation_year");
    let following = year("following_year");
    Some(YearAmounts {
        formation_year: formation?,
        following_year: following?,
    })
}

fn prepayments(v: &Value, e: &mut Violations) -> Option<Prepayments> {
    let o = object(v, "prepayments", PREPAYMENT_FIELDS, e)?;
    let mut broken = false;
    let mut read = |name: &str, non_negative: bool, e: &mut Violations| {
        let v = o.opt(name)?;
        let amounts = year_amounts(v, &o.path(name), non_negative, e);
        broken |= amounts.is_none();
        amounts
    };
    let p = Prepayments {
        employment_income: read("employment_income", true, e),
        capital_income: read("capital_income", false, e),
        rental_income: read("rental_income", false, e),
        other_income: read("other_income", false, e),
        special_expenses: read("special_expenses", true, e),
    };
    (!broken).then_some(p)
}

fn earlier(v: &Value, e: &mut Violations) -> Option<EarlierCircumstances> {
    let o = object(v, "earlier_circumstances", EARLIER_FIELDS, e)?;
    let number = opt_text(&o, "previous_tax_number", 30, TextType::C, e);
    let office = opt_text(&o, "previous_tax_office", 72, TextType::C, e);
    let address = o
        .opt("previous_address")
        .and_then(|v| tax_address(v, "earlier_circumstances.previous_address", e));
    let business = opt_text(&o, "previous_self_employment", 200, TextType::C, e);
    let broken = |field: &str, value: bool| o.has(field) && !value;
    if broken("previous_tax_number", number.is_some())
        || broken("previous_tax_office", office.is_some())
        || broken("previous_address", address.is_some())
        || broken("previous_self_employment", business.is_some())
    {
        return None;
    }
    Some(EarlierCircumstances {
        previous_tax_number: number,
        previous_tax_office: office,
        previous_address: address,
        previous_self_employment: business,
    })
}

/// `cash_accounting_reason`: with cash accounting exactly, the liberal profession's only for
/// one. `Some(None)` when rightly absent, `None` when broken.
fn cash_reason(
    o: &Obj,
    reason: Option<CashAccountingReason>,
    kind: Option<ActivityKind>,
    method: Option<AccountingMethod>,
    e: &mut Violations,
) -> Option<Option<CashAccountingReason>> {
    let sent = o.has("cash_accounting_reason");
    match method {
        Some(AccountingMethod::Cash) if !sent => {
            e.push(
                "cash_accounting_reason",
                "required",
                "is required with vat.accounting_method cash: turnover-below-limit, no-bookkeeping-duty or liberal-profession (§ 20 UStG)",
            );
            None
        }
        Some(AccountingMethod::Cash) => {
            let reason = reason?;
            if reason == CashAccountingReason::LiberalProfession
                && kind.is_some_and(|k| k != ActivityKind::LiberalProfession)
            {
                e.push(
                    "cash_accounting_reason",
                    "not_a_liberal_profession",
                    "liberal-profession is only a reason for an activity_kind liberal-profession",
                );
                return None;
            }
            Some(Some(reason))
        }
        _ if sent => {
            e.push(
                "cash_accounting_reason",
                "not_allowed",
                "is only accepted with vat.accounting_method cash",
            );
            None
        }
        _ => Some(None),
    }
}

/// Applies every rule; `today` decides which dates are in the past. `known_tax_office` says
/// whether a 4-digit office number is in the bundled directory.
pub fn parse(
    body: &Value,
    today: Date,
    known_tax_office: &dyn Fn(&str) -> bool,
) -> Result<SoleProprietorTaxRequest, Violations> {
    let mut errs = Violations::new();
    let Some(o) = object(body, "", FIELDS, &mut errs) else {
        return Err(errs);
    };
    let e = &mut errs;

    let mut core = CoreRequest::<SoleProprietorLegalForm>::head(&o, today, known_tax_office, e);
    let kind: Option<ActivityKind> = req_enum(
        &o,
        "activity_kind",
        &["trade", "liberal-profession", "agriculture-forestry"],
        e,
    );
    let profit: Option<ProfitDetermination> = req_enum(
        &o,
        "profit_determination",
        &["cash-basis", "balance-sheet"],
        e,
    );
    // § 4a (1) no. 3 EStG: a liberal profession's fiscal year is the calendar year.
    if kind == Some(ActivityKind::LiberalProfession) && core.fiscal_year_deviates == Some(true) {
        e.push(
            "fiscal_year_deviates_from_calendar",
            "not_allowed",
            "a liberal profession's fiscal year is the calendar year (§ 4a (1) no. 3 EStG)",
        );
        core.fiscal_year_deviates = None;
    }
    core.address(&o, e);
    let owner = o
        .req("owner", e)
        .and_then(|v| owner(v, today, core.environment, e));
    // The spouse follows the owner's marital status as sent, even when another owner field is
    // broken.
    let status = o
        .opt("owner")
        .and_then(|v| v.get("marital_status"))
        .and_then(|v| serde_json::from_value::<MaritalStatus>(v.clone()).ok());
    let spouse = spouse(&o, status, today, core.environment, e);
    let reason: Option<CashAccountingReason> = o.opt("cash_accounting_reason").and_then(|v| {
        rules::enumeration(
            v,
            "cash_accounting_reason",
            &[
                "turnover-below-limit",
                "no-bookkeeping-duty",
                "liberal-profession",
            ],
            e,
        )
    });
    // § 20 sentence 1 nos. 2 and 3 UStG know no turnover limit; no. 1 is the 800,000 euros.
    core.cash_accounting_limit = match reason {
        Some(CashAccountingReason::NoBookkeepingDuty | CashAccountingReason::LiberalProfession) => {
            None
        }
        _ => Some(CASH_ACCOUNTING_LIMIT),
    };
    core.tail(&o, e);
    let method = core
        .vat
        .as_ref()
        .filter(|v| !v.small_business)
        .and_then(|v| v.accounting_method);
    // A broken VAT block is reported already: the reason is judged against a valid one only.
    let reason = if core.vat.is_some() {
        cash_reason(&o, reason, kind, method, e)
    } else {
        None
    };
    let prepayments = match o.opt("prepayments") {
        Some(v) => prepayments(v, e).map(Some),
        None => Some(None),
    };
    let earlier = match o.opt("earlier_circumstances") {
        Some(v) => earlier(v, e).map(Some),
        None => Some(None),
    };
    let tax_advisor = match o.opt("tax_advisor") {
        Some(v) => crate::tax_request::tax_advisor(v, e).map(Some),
        None => Some(None),
    };
    let trade_registration_id = match o.opt("trade_registration_id") {
        Some(v) => rules::uuid(v, "trade_registration_id", e).map(Some),
        None => Some(None),
    };

    let registration = (|| {
        let own = SoleProprietorFields {
            activity_kind: kind?,
            profit_determination: profit?,
            owner: owner?,
            spouse: spouse?,
            cash_accounting_reason: reason?,
            prepayments: prepayments?,
            earlier_circumstances: earlier?,
            tax_advisor: tax_advisor?,
            trade_registration_id: trade_registration_id?,
        };
        Some(SoleProprietorTaxRegistration::from_core(
            core.complete()?,
            own,
        ))
    })();
    core.request(registration, errs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule_cases::{edit, example, field_codes, known, sole_proprietor_cases, today};
    use crate::tax::{AnyTaxRegistration, TaxLegalForm};
    use serde_json::json;

    fn ok(v: &Value) -> SoleProprietorTaxRegistration {
        parse(v, today(), &known)
            .unwrap_or_else(|e| panic!("{e}"))
            .registration
    }

    fn codes(v: &Value) -> Vec<(String, String)> {
        field_codes(&parse(v, today(), &known).expect_err("should be refused"))
    }

    #[test]
    fn examples_are_valid() {
        let f = ok(&example("sole-proprietor"));
        assert_eq!(f.activity_kind, ActivityKind::LiberalProfession);
        assert_eq!(f.owner.marital_status, MaritalStatus::Married);
        assert_eq!(
            f.spouse.as_ref().map(|s| s.first_name.as_str()),
            Some("Jonas")
        );
        assert_eq!(
            f.cash_accounting_reason,
            Some(CashAccountingReason::LiberalProfession)
        );
        assert!(f.runs_from_home());
        assert!(!f.vat.small_business);
        assert_eq!(f.payroll.as_ref().map(|p| p.employee_count), Some(3));

        let t = ok(&example("sole-trader"));
        assert_eq!(t.activity_kind, ActivityKind::Trade);
        assert!(t.vat.small_business);
        assert!(!t.runs_from_home());
        assert_eq!(t.spouse, None);
        assert_eq!(t.financial_estimates.following_year.profit_amount, -2000);

        // Stored as JSON and read back by its legal form.
        for reg in [f, t] {
            let any = AnyTaxRegistration::SoleProprietor(Box::new(reg));
            assert_eq!(any.legal_form(), TaxLegalForm::Einzelunternehmen);
            let back = AnyTaxRegistration::from_stored(any.legal_form(), any.to_record().unwrap())
                .unwrap();
            assert_eq!(back, any);
            assert!(
                AnyTaxRegistration::from_stored(TaxLegalForm::Gbr, any.to_record().unwrap())
                    .is_err()
            );
        }
    }

    #[test]
    fn each_rule_names_its_field_and_code() {
        let cases = sole_proprietor_cases();
        assert!(cases.iter().any(|c| c.field == "vat.return_frequency"));
        assert!(cases.iter().any(|c| c.field == "owner.religion"));
        let accepted: Vec<String> = cases
            .iter()
            .filter(|c| parse(&c.request(), today(), &known).is_ok())
            .map(|c| format!("{} {} ({})", c.field, c.code, c.base))
            .collect();
        assert!(accepted.is_empty(), "accepted: {accepted:?}");
        for case in cases {
            case.assert_named_in(&parse(&case.request(), today(), &known).expect_err("refused"));
        }
    }

    #[test]
    fn cash_accounting_above_the_limit_only_for_a_reason_without_one() {
        let mut v = example("sole-proprietor");
        edit(
            &mut v,
            "/financial_estimates/formation_year/revenue_amount",
            Some(json!(900_000)),
        );
        edit(
            &mut v,
            "/financial_estimates/following_year/revenue_amount",
            Some(json!(900_000)),
        );
        // A freelancer: § 20 sentence 1 no. 3 UStG has no turnover limit.
        assert_eq!(
            ok(&v).cash_accounting_reason,
            Some(CashAccountingReason::LiberalProfession)
        );
        edit(
            &mut v,
            "/cash_accounting_reason",
            Some(json!("turnover-below-limit")),
        );
        assert!(codes(&v).contains(&("vat.accounting_method".into(), "cash_not_allowed".into())));
    }

    #[test]
    fn every_broken_field_is_named_at_once() {
        let mut v = example("sole-proprietor");
        edit(&mut v, "/owner/religion", Some(json!("99")));
        edit(&mut v, "/spouse", None);
        edit(&mut v, "/activity_kind", Some(json!("hobby")));
        edit(&mut v, "/vat/accounting_method", None);
        edit(&mut v, "/name", Some(json!("")));
        let found = codes(&v);
        for want in [
            ("owner.religion", "invalid_value"),
            ("spouse", "required"),
            ("activity_kind", "invalid_value"),
            ("vat.accounting_method", "required"),
            ("name", "empty"),
        ] {
            assert!(
                found.contains(&(want.0.to_string(), want.1.to_string())),
                "{want:?}: {found:?}"
            );
        }
    }
}

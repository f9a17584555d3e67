//! `POST /v1/tax-registration` (UG and GmbH): every field rule of the specification, applied
//! to the request JSON at once, producing the validated [`TaxRegistration`].
//!
//! Only what is a corporation's own is written here: the notarization date, the capital and
//! formation, the notary, the directors, the shareholders and the Handelsregister. What every
//! tax registration has is read by [`crate::tax_core::request`].

use serde_json::Value;
use time::Date;

use crate::Violations;
use crate::din91379::TextType;
use crate::rules::{self, object};
use crate::tax::*;
use crate::tax_core::request::{
    CoreRequest, CreateRequest, LegalFormRules, RegisterKind, each, entity_holder, holder_lists,
    individual_holder, opt_bool, opt_text, past_date, register, req_enum, req_euros, req_text,
    shares_sum_to_100, tax_address, tax_id, with_core,
};
// The field lists of the request's objects that every tax registration request has.
pub use crate::tax_core::request::{ENTITY_HOLDER_FIELDS, INDIVIDUAL_HOLDER_FIELDS, VAT_FIELDS};

pub const MAX_DIRECTORS: usize = 9;
pub const MAX_SHAREHOLDERS: usize = 99;

impl LegalFormRules for KapLegalForm {
    const VALUES: &'static [&'static str] = &["ug", "gmbh"];
    const FOUNDED: &'static str = "notarization_date";
    const BEFORE_FOUNDED: &'static str = "before_notarization";

    fn designations(self) -> &'static [&'static [&'static str]] {
        crate::legal_name::kap_designations(self)
    }
}

/// A validated create request.
pub type TaxRequest = CreateRequest<TaxRegistration>;

/// The top-level fields of the request (anything else is `unknown_field`); the OpenAPI
/// document's request schema is checked against it.
pub const FIELDS: &[&str] = &with_core::<34>(&[
    "notarization_date",
    "capital",
    "paid_in_capital",
    "formation_type",
    "conversion_type",
    "is_holding",
    "notary",
    "directors",
    "shareholders",
    "commercial_register",
]);

/// The fields of a `directors` entry.
pub const DIRECTOR_FIELDS: &[&str] = &[
    "first_name",
    "middle_name",
    "last_name",
    "email",
    "phone",
    "dob",
    "tax_identification_number",
    "address",
];

/// The fields of `notary`.
pub const NOTARY_FIELDS: &[&str] = &["first_name", "last_name", "address"];

/// Whether every share of `capital` euros can be a whole-euro share of at least one euro
/// (§ 5 (2) GmbHG): the filing derives the nominal amounts from the percentages
/// ([`crate::tax::nominal_amounts`]), each within a euro of its exact amount, so a share worth
/// less than one euro has no whole-euro amount. Each such share is a violation.
fn shares_are_whole_euros(holders: &Shareholders, capital: i64, e: &mut Violations) -> bool {
    let individuals = holders
        .individuals
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("shareholders.individuals[{i}]"), s.share_percentage));
    let entities = holders
        .entities
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("shareholders.entities[{i}]"), s.share_percentage));
    let mut ok = true;
    for (path, share) in individuals.chain(entities) {
        if crate::tax::share_below_one_euro(capital, share) {
            e.push(
                format!("{path}.share_percentage"),
                "share_below_one_euro",
                format!(
                    "is less than one euro of the capital of {capital} euros; a share's nominal \
                     amount is whole euros, at least 1 (§ 5 (2) GmbHG)"
                ),
            );
            ok = false;
        }
    }
    ok
}

/// Applies every rule; `today` decides which dates are in the past. `known_tax_office` says
/// whether a 4-digit office number is in the bundled directory.
pub fn parse(
    body: &Value,
    today: Date,
    known_tax_office: &dyn Fn(&str) -> bool,
) -> Result<TaxRequest, Violations> {
    let mut errs = Violations::new();
    let Some(o) = object(body, "", FIELDS, &mut errs) else {
        return Err(errs);
    };
    let e = &mut errs;

    let mut core = CoreRequest::<KapLegalForm>::head(&o, today, known_tax_office, e);
    let (legal_form, environment) = (core.legal_form, core.environment);
    let capital = req_euros(&o, "capital", e).and_then(|c| {
        let ok = match legal_form {
            Some(KapLegalForm::Ug) => (1..=24_999).contains(&c),
            Some(KapLegalForm::Gmbh) => c >= 25_000,
            None => true,
        };
        if !ok {
            let rule = if legal_form == Some(KapLegalForm::Ug) {
                "a UG's capital must be 1 to 24,999 euros"
            } else {
                "a GmbH's capital must be at least 25,000 euros"
            };
            e.push("capital", "out_of_range", rule);
            return None;
        }
        Some(c)
    });
    let paid_in = req_euros(&o, "paid_in_capital", e).and_then(|p| {
        if p < 0 {
            e.push("paid_in_capital", "out_of_range", "must not be negative");
            None
        } else if capital.is_some_and(|c| p > c) {
            e.push(
                "paid_in_capital",
                "exceeds_capital",
                "cannot exceed capital",
            );
            None
        } else {
            Some(p)
        }
    });
    let formation_type: Option<FormationType> =
        req_enum(&o, "formation_type", &["cash", "in-kind", "conversion"], e);
    let conversion_type = match (formation_type, o.opt("conversion_type")) {
        (Some(FormationType::Conversion), None) => {
            e.push(
                "conversion_type",
                "required",
                "is required when formation_type is conversion",
            );
            None
        }
        (Some(FormationType::Conversion), Some(v)) => rules::enumeration(
            v,
            "conversion_type",
            &["merger", "division", "form-change", "asset-transfer"],
            e,
        ),
        (_, Some(_)) => {
            e.push(
                "conversion_type",
                "not_allowed",
                "is only accepted when formation_type is conversion",
            );
            None
        }
        (_, None) => None,
    };
    let is_holding = opt_bool(&o, "is_holding", e);
    core.address(&o, e);
    let notary = o.opt("notary").and_then(|v| {
        let n = object(v, "notary", NOTARY_FIELDS, e)?;
        let first = req_text(&n, "first_name", 72, TextType::A, e);
        let last = req_text(&n, "last_name", 72, TextType::A, e);
        let addr = n
            .req("address", e)
            .and_then(|v| tax_address(v, "notary.address", e));
        Some(Notary {
            first_name: first?,
            last_name: last?,
            address: addr?,
        })
    });

    let directors = o.req("directors", e).and_then(|v| {
        let items = rules::array(v, "directors", 1, MAX_DIRECTORS, e)?;
        each(items, "directors", DIRECTOR_FIELDS, e, |d, e| {
            let first = req_text(d, "first_name", 72, TextType::A, e);
            let middle = opt_text(d, "middle_name", 72, TextType::A, e);
            let last = req_text(d, "last_name", 72, TextType::A, e);
            let email = d
                .opt("email")
                .and_then(|v| rules::email(v, &d.path("email"), e));
            let phone = d
                .opt("phone")
                .and_then(|v| rules::phone(v, &d.path("phone"), e));
            let dob = past_date(d, "dob", today, e);
            let tin = tax_id(d, "tax_identification_number", environment, e);
            let addr = d
                .req("address", e)
                .and_then(|v| tax_address(v, &d.path("address"), e));
            let ok_tin = !d.has("tax_identification_number") || tin.is_some();
            let ok_contact =
                (!d.has("email") || email.is_some()) && (!d.has("phone") || phone.is_some());
            if !(ok_tin && ok_contact) || (d.has("middle_name") && middle.is_none()) {
                return None;
            }
            Some(Director {
                first_name: first?,
                middle_name: middle,
                last_name: last?,
                email,
                phone,
                dob: dob?,
                tax_identification_number: tin,
                address: addr?,
            })
        })
    });
    let shareholders = o.req("shareholders", e).and_then(|v| {
        let (ind, ent) = holder_lists(v, "shareholders", 1, MAX_SHAREHOLDERS, e)?;
        let individuals = each(
            ind,
            "shareholders.individuals",
            INDIVIDUAL_HOLDER_FIELDS,
            e,
            |x, e| individual_holder(x, today, environment, e),
        );
        let entities = each(
            ent,
            "shareholders.entities",
            ENTITY_HOLDER_FIELDS,
            e,
            entity_holder,
        );
        let (individuals, entities) = (individuals?, entities?);
        let shares = individuals
            .iter()
            .map(|x| x.share_percentage)
            .chain(entities.iter().map(|x| x.share_percentage));
        if !shares_sum_to_100(shares, "shareholders", e) {
            return None;
        }
        let holders = Shareholders {
            individuals,
            entities,
        };
        if let Some(capital) = capital
            && !shares_are_whole_euros(&holders, capital, e)
        {
            return None;
        }
        Some(holders)
    });

    let register = match o.opt("commercial_register") {
        None => Some(CommercialRegister::NotApplied),
        Some(v) => register(v, "commercial_register", RegisterKind::Commercial, e),
    };
    core.tail(&o, e);

    let registration = (|| {
        let own = CorporationFields {
            capital: capital?,
            paid_in_capital: paid_in?,
            formation_type: formation_type?,
            conversion_type,
            is_holding,
            notary: notary.clone(),
            directors: directors.clone()?,
            shareholders: shareholders.clone()?,
            commercial_register: register.clone()?,
        };
        Some(TaxRegistration::from_core(core.complete()?, own))
    })();
    core.request(registration, errs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule_cases::{example, known, tax_cases, today};

    /// 1 to 9 directors (api.md; ELSTER's `Vertreter` occurs at most 9 times).
    #[test]
    fn nine_directors_and_no_more() {
        let with = |n: usize| {
            let mut v = example("gmbh");
            let first = v["directors"][0].clone();
            v["directors"] = Value::Array(vec![first; n]);
            v
        };
        let nine = parse(&with(9), today(), &known).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(nine.registration.directors.len(), 9);
        for (n, code) in [(0, "too_few"), (10, "too_many")] {
            let errs = parse(&with(n), today(), &known).expect_err("refused");
            let got: Vec<(&str, &str)> = errs
                .iter()
                .map(|e| (e.field.as_str(), e.code.as_str()))
                .collect();
            assert_eq!(got, [("directors", code)], "{n}");
        }
    }

    #[test]
    fn examples_are_valid() {
        let g = parse(&example("gmbh"), today(), &known).unwrap_or_else(|e| panic!("gmbh: {e}"));
        let r = &g.registration;
        assert_eq!(r.capital, 25_000);
        assert!(!r.vat.small_business);
        assert_eq!(r.vat.return_frequency, Some(ReturnFrequency::Monthly));
        assert_eq!(
            r.commercial_register,
            CommercialRegister::Registered {
                registration_number: "245789B".into(),
                registration_date: time::macros::date!(2025 - 02 - 20),
                registration_court: "Amtsgericht Charlottenburg".into(),
            }
        );
        assert_eq!(r.payroll.as_ref().map(|p| p.employee_count), Some(3));
        assert_eq!(
            r.shareholders.individuals.len() + r.shareholders.entities.len(),
            3
        );
        assert!(g.business_address.is_some());

        let u = parse(&example("ug"), today(), &known).unwrap_or_else(|e| panic!("ug: {e}"));
        assert!(u.registration.vat.small_business);
        assert_eq!(u.registration.vat.return_frequency, None);
        assert_eq!(u.registration.payroll, None);
        // The model round-trips through JSON (it is stored that way).
        let json = serde_json::to_value(&u.registration).unwrap();
        let back: TaxRegistration = serde_json::from_value(json).unwrap();
        assert_eq!(back, u.registration);
    }

    #[test]
    fn each_rule_names_its_field_and_code() {
        for case in tax_cases() {
            let errs = parse(&case.request(), today(), &known)
                .expect_err(&format!("{} {} should be refused", case.field, case.code));
            case.assert_named_in(&errs);
        }
    }

    /// Shares are summed as exact ten-thousandths of a percent, not as floating point (where
    /// 33.3333 + 33.3333 + 33.3334 is not 100.0): the example's thirds are accepted, and a sum
    /// one ten-thousandth short of 100 or over it is refused with that sum.
    #[test]
    fn decimal_shares_sum_exactly() {
        let g = parse(&example("gmbh"), today(), &known).unwrap_or_else(|e| panic!("{e}"));
        let shares: Vec<u32> = g
            .registration
            .share_percentages()
            .iter()
            .map(|p| p.0)
            .collect();
        assert_eq!(shares, [333_333, 333_333, 333_334]);
        assert_eq!(shares.iter().sum::<u32>(), Percentage::HUNDRED.0);
        for (last, sum) in [(33.3333, "99.9999"), (33.3335, "100.0001")] {
            let mut v = example("gmbh");
            v["shareholders"]["entities"][0]["share_percentage"] = last.into();
            let errs = parse(&v, today(), &known).expect_err(sum);
            assert_eq!(
                crate::rule_cases::field_codes(&errs),
                [(
                    "shareholders".to_string(),
                    "shares_do_not_sum_to_100".to_string()
                )],
                "{sum}"
            );
            assert!(
                errs.iter()
                    .any(|e| e.message.ends_with(&format!("(they sum to {sum})"))),
                "{errs}"
            );
        }
    }

    #[test]
    fn vat_rule_table() {
        // (founding revenue, following revenue, regime, small business?, ok?)
        let rows: &[(i64, i64, Option<&str>, bool, bool)] = &[
            (18_000, 60_000, Some("small-business"), true, true),
            (18_000, 60_000, Some("standard"), false, true),
            (25_000, 100_000, Some("small-business"), true, true),
            (18_000, 150_000, Some("small-business"), false, false),
            (18_000, 150_000, Some("standard"), false, true),
            (30_000, 60_000, Some("small-business"), false, true),
            (30_000, 60_000, None, false, true),
        ];
        for &(founding, following, regime, small, ok) in rows {
            let mut v = example("ug");
            v["financial_estimates"]["formation_year"]["revenue_amount"] = founding.into();
            v["financial_estimates"]["following_year"]["revenue_amount"] = following.into();
            match regime {
                Some(r) => v["vat"]["regime"] = r.into(),
                None => {
                    v["vat"].as_object_mut().unwrap().remove("regime");
                }
            }
            if !small {
                v["vat"]["accounting_method"] = "accrual".into();
                v["vat"]["estimated_balance_type"] = "payable".into();
                v["vat"]["estimated_balance_amount"] = 1000.into();
            }
            let r = parse(&v, today(), &known);
            assert_eq!(r.is_ok(), ok, "{founding} {following} {regime:?}: {r:?}");
            if let Ok(r) = r {
                assert_eq!(
                    r.registration.vat.small_business, small,
                    "{founding} {following} {regime:?}"
                );
            }
        }
    }
}

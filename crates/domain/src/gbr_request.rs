//! `POST /v1/tax-registration/gbr` (GbR and eGbR): every field rule, applied to the request
//! JSON at once, producing the validated [`GbrTaxRegistration`].
//!
//! Only what is a partnership's own is written here: the partnership agreement date, the
//! partners with their managing flag, and the eGbR's Gesellschaftsregister. Everything the UG /
//! GmbH endpoint also has (the core fields, addresses, persons, shares, register objects, bank,
//! estimates, VAT and payroll) is read by the same functions of [`crate::tax_core::request`].

use serde_json::Value;
use time::Date;

use crate::Violations;
use crate::gbr::{
    EntityPartner, GbrTaxRegistration, IndividualPartner, Partners, PartnershipFields,
    PartnershipLegalForm,
};
use crate::rules::{Obj, object};
use crate::tax_core::request::{
    CoreRequest, CreateRequest, ENTITY_HOLDER_FIELDS, INDIVIDUAL_HOLDER_FIELDS, LegalFormRules,
    RegisterKind, each, entity_holder, holder_lists, individual_holder, register, req_bool,
    shares_sum_to_100, with_core,
};

/// A partnership has at least two partners.
pub const MIN_PARTNERS: usize = 2;
pub const MAX_PARTNERS: usize = 99;

/// A validated create request.
pub type GbrTaxRequest = CreateRequest<GbrTaxRegistration>;

/// The top-level fields of the request (anything else is `unknown_field`).
pub const FIELDS: &[&str] =
    &with_core::<28>(&["partnership_agreement_date", "partners", "company_register"]);

impl LegalFormRules for PartnershipLegalForm {
    const VALUES: &'static [&'static str] = &["gbr", "egbr"];
    const FOUNDED: &'static str = "partnership_agreement_date";
    const BEFORE_FOUNDED: &'static str = "before_partnership_agreement";

    fn designations(self) -> &'static [&'static [&'static str]] {
        crate::legal_name::partnership_designations(self)
    }
}

/// The partner's own field, besides a shareholder's.
pub const MANAGING_FLAG: &str = "is_managing_partner";

/// The fields of `partners.individuals[i]`.
pub fn individual_partner_fields() -> Vec<&'static str> {
    [INDIVIDUAL_HOLDER_FIELDS, &[MANAGING_FLAG]].concat()
}

/// The fields of `partners.entities[i]`.
pub fn entity_partner_fields() -> Vec<&'static str> {
    [ENTITY_HOLDER_FIELDS, &[MANAGING_FLAG]].concat()
}

/// The `holder` read from the partner `x`, and its managing flag.
fn managing<H>(x: &Obj, holder: Option<H>, e: &mut Violations) -> Option<(H, bool)> {
    let managing = req_bool(x, MANAGING_FLAG, e);
    Some((holder?, managing?))
}

fn partners(
    v: &Value,
    today: Date,
    environment: Option<crate::company::Environment>,
    e: &mut Violations,
) -> Option<Partners> {
    let (ind, ent) = holder_lists(v, "partners", MIN_PARTNERS, MAX_PARTNERS, e)?;
    let individual_fields = individual_partner_fields();
    let entity_fields = entity_partner_fields();
    let individuals = each(
        ind,
        "partners.individuals",
        &individual_fields,
        e,
        |x, e| {
            let (h, managing) = managing(x, individual_holder(x, today, environment, e), e)?;
            Some(IndividualPartner {
                first_name: h.first_name,
                last_name: h.last_name,
                dob: h.dob,
                tax_identification_number: h.tax_identification_number,
                address: h.address,
                share_percentage: h.share_percentage,
                is_managing_partner: managing,
            })
        },
    );
    let entities = each(ent, "partners.entities", &entity_fields, e, |x, e| {
        let (h, managing) = managing(x, entity_holder(x, e), e)?;
        Some(EntityPartner {
            name: h.name,
            address: h.address,
            share_percentage: h.share_percentage,
            is_managing_partner: managing,
        })
    });
    let partners = Partners {
        individuals: individuals?,
        entities: entities?,
    };
    let shares_ok = shares_sum_to_100(partners.shares(), "partners", e);
    let managed = !partners.managing_names().is_empty();
    if !managed {
        e.push(
            "partners",
            "no_managing_partner",
            "at least one partner must manage the partnership (is_managing_partner: true)",
        );
    }
    (shares_ok && managed).then_some(partners)
}

/// `company_register`: required for an eGbR, refused for a GbR. `Some(None)` when rightly
/// absent, `None` when broken.
fn company_register(
    legal_form: Option<PartnershipLegalForm>,
    v: Option<&Value>,
    e: &mut Violations,
) -> Option<Option<crate::tax::CommercialRegister>> {
    match (legal_form, v) {
        (Some(PartnershipLegalForm::Egbr), None) => {
            e.push(
                "company_register",
                "required",
                "is required for an eGbR: its Gesellschaftsregister status (application-filed or registered)",
            );
            None
        }
        (Some(PartnershipLegalForm::Gbr), Some(_)) => {
            e.push(
                "company_register",
                "not_allowed",
                "is only accepted for an eGbR (a GbR entered in the Gesellschaftsregister is filed with legal_form egbr)",
            );
            None
        }
        // An unknown legal form is reported already; the register's own rules still apply.
        (_, Some(v)) => register(v, "company_register", RegisterKind::Company, e).map(Some),
        (_, None) => Some(None),
    }
}

/// Applies every rule; `today` decides which dates are in the past. `known_tax_office` says
/// whether a 4-digit office number is in the bundled directory.
pub fn parse(
    body: &Value,
    today: Date,
    known_tax_office: &dyn Fn(&str) -> bool,
) -> Result<GbrTaxRequest, Violations> {
    let mut errs = Violations::new();
    let Some(o) = object(body, "", FIELDS, &mut errs) else {
        return Err(errs);
    };
    let e = &mut errs;

    let mut core = CoreRequest::<PartnershipLegalForm>::head(&o, today, known_tax_office, e);
    core.address(&o, e);
    let partners = o
        .req("partners", e)
        .and_then(|v| partners(v, today, core.environment, e));
    let register = company_register(core.legal_form, o.opt("company_register"), e);
    core.tail(&o, e);

    let registration = (|| {
        let own = PartnershipFields {
            partners: partners?,
            company_register: register?,
        };
        Some(GbrTaxRegistration::from_core(core.complete()?, own))
    })();
    core.request(registration, errs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gbr::PartnershipLegalForm;
    use crate::rule_cases::{edit, example, field_codes, gbr_cases, known, today};
    use crate::tax::{AnyTaxRegistration, CommercialRegister, Percentage, TaxLegalForm};
    use serde_json::json;

    fn ok(v: &Value) -> GbrTaxRegistration {
        parse(v, today(), &known)
            .unwrap_or_else(|e| panic!("{e}"))
            .registration
    }

    fn codes(v: &Value) -> Vec<(String, String)> {
        field_codes(&parse(v, today(), &known).expect_err("should be refused"))
    }

    #[test]
    fn examples_are_valid() {
        let g = ok(&example("gbr"));
        assert_eq!(g.legal_form, PartnershipLegalForm::Gbr);
        assert_eq!(g.partners.len(), 3);
        assert_eq!(g.company_register, None);
        assert!(g.vat.small_business);
        assert_eq!(g.payroll, None);
        assert_eq!(
            g.partners.managing_names(),
            ["Jana Heide", "Ole Brandt"],
            "the third partner does not manage"
        );

        let request = parse(&example("egbr"), today(), &known).unwrap();
        assert!(request.business_address.is_some());
        let e = request.registration;
        assert_eq!(e.legal_form, PartnershipLegalForm::Egbr);
        assert_eq!(
            e.company_register,
            Some(CommercialRegister::Registered {
                registration_application_date: None,
                registration_number: "1234".into(),
                registration_date: time::macros::date!(2025 - 02 - 10),
                registration_court: "Amtsgericht Köln".into(),
            })
        );
        assert_eq!(
            e.partners.managing_names(),
            ["Katharina Rhein", "Rhein Verwaltungs GmbH"]
        );
        assert_eq!(e.payroll.as_ref().map(|p| p.employee_count), Some(2));
        assert_eq!(e.iban.as_deref(), Some("DE89370400440532013000"));

        // Stored as JSON and read back by its legal form.
        for reg in [g, e] {
            let any = AnyTaxRegistration::Partnership(Box::new(reg.clone()));
            let form = any.legal_form();
            assert!(form.is_partnership());
            let back = AnyTaxRegistration::from_stored(form, any.to_record().unwrap()).unwrap();
            assert_eq!(back, any);
            // The wrong kind or a mismatching legal form is an error, never a silent misread.
            let gmbh = TaxLegalForm::Gmbh;
            assert!(AnyTaxRegistration::from_stored(gmbh, any.to_record().unwrap()).is_err());
            let other = if form == TaxLegalForm::Gbr {
                TaxLegalForm::Egbr
            } else {
                TaxLegalForm::Gbr
            };
            assert!(AnyTaxRegistration::from_stored(other, any.to_record().unwrap()).is_err());
            // A name that is no legal form is refused where the store reads it.
            assert_eq!(TaxLegalForm::parse("kg"), None);
        }
    }

    #[test]
    fn each_rule_names_its_field_and_code() {
        let cases = gbr_cases();
        // The shared UG/GmbH cases are part of the table (VAT, payroll, bank, address ...).
        assert!(cases.iter().any(|c| c.field == "vat.return_frequency"));
        assert!(cases.iter().any(|c| c.field == "payroll_start_date"));
        assert!(cases.iter().any(|c| c.field == "bic"));
        assert!(!cases.iter().any(|c| c.field.starts_with("shareholders.")));
        for case in cases {
            case.assert_named_in(&parse(&case.request(), today(), &known).expect_err("refused"));
        }
    }

    #[test]
    fn shares_are_summed_in_exact_decimals() {
        let set = |a: f64, b: f64, c: f64| {
            let mut v = example("gbr");
            for (i, s) in [a, b, c].into_iter().enumerate() {
                v["partners"]["individuals"][i]["share_percentage"] = json!(s);
            }
            v
        };
        let g = ok(&set(33.33, 33.33, 33.34));
        let total: u32 = g.partners.shares().map(|p| p.0).sum();
        assert_eq!(total, Percentage::HUNDRED.0);
        // 64.02 + 0.07 + 35.91 is 100 exactly; summed as f64 it is 99.99999999999999.
        assert_ne!(64.02f64 + 0.07 + 35.91, 100.0);
        ok(&set(64.02, 0.07, 35.91));
        ok(&set(33.3333, 33.3333, 33.3334));
        ok(&set(0.0001, 49.9999, 50.0));
        for (a, b, c, sum) in [
            (33.33, 33.33, 33.33, "99.99"),
            (33.33, 33.33, 33.35, "100.01"),
            (33.3333, 33.3333, 33.3333, "99.9999"),
            (50.0, 50.0, 0.0001, "100.0001"),
        ] {
            let errs = parse(&set(a, b, c), today(), &known).unwrap_err();
            let e = errs
                .iter()
                .find(|e| e.code == "shares_do_not_sum_to_100")
                .unwrap_or_else(|| panic!("{a} {b} {c}: {errs}"));
            assert_eq!(e.field, "partners");
            assert!(
                e.message.contains(&format!("sum to {sum})")),
                "{}",
                e.message
            );
        }
    }

    #[test]
    fn two_to_ninety_nine_partners() {
        let person = example("gbr")["partners"]["individuals"][0].clone();
        let with = |n: usize| {
            let mut v = example("gbr");
            let people: Vec<Value> = (0..n)
                .map(|i| {
                    let mut p = person.clone();
                    // 100 / n in ten-thousandths, the remainder on the first.
                    let each = 1_000_000 / n as u32;
                    let first = 1_000_000 - each * (n as u32 - 1);
                    let share = Percentage(if i == 0 { first } else { each });
                    p["share_percentage"] =
                        serde_json::from_str(&share.to_decimal_string()).unwrap();
                    p
                })
                .collect();
            v["partners"] = json!({ "individuals": people });
            v
        };
        assert_eq!(ok(&with(2)).partners.len(), 2);
        assert_eq!(ok(&with(99)).partners.len(), 99);
        assert!(codes(&with(1)).contains(&("partners".into(), "too_few".into())));
        assert!(codes(&with(100)).contains(&("partners".into(), "too_many".into())));
        // Individuals and entities count together.
        let mut v = with(99);
        v["partners"]["entities"] = example("egbr")["partners"]["entities"].clone();
        v["partners"]["entities"][0]["share_percentage"] = json!(0.0001);
        assert!(codes(&v).contains(&("partners".into(), "too_many".into())));
    }

    #[test]
    fn an_entity_alone_may_manage() {
        let mut v = example("egbr");
        edit(
            &mut v,
            "/partners/individuals/0/is_managing_partner",
            Some(json!(false)),
        );
        let e = ok(&v);
        assert_eq!(e.partners.managing_names(), ["Rhein Verwaltungs GmbH"]);
        edit(
            &mut v,
            "/partners/entities/0/is_managing_partner",
            Some(json!(false)),
        );
        assert!(codes(&v).contains(&("partners".into(), "no_managing_partner".into())));
    }

    #[test]
    fn egbr_register_application_and_normalised_numbers() {
        let mut v = example("egbr");
        v["company_register"] =
            json!({"status": "application-filed", "registration_application_date": "2025-01-20"});
        assert_eq!(
            ok(&v).company_register,
            Some(CommercialRegister::ApplicationFiled {
                registration_application_date: time::macros::date!(2025 - 01 - 20)
            })
        );
        for (raw, want) in [("GsR 1234", "1234"), ("gsr 77 a", "77A"), ("501", "501")] {
            let mut v = example("egbr");
            v["company_register"]["registration_number"] = json!(raw);
            match ok(&v).company_register {
                Some(CommercialRegister::Registered {
                    registration_number,
                    ..
                }) => assert_eq!(registration_number, want, "{raw}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn every_broken_field_is_named_at_once() {
        let mut v = example("egbr");
        edit(&mut v, "/name", Some(json!("")));
        edit(
            &mut v,
            "/partners/individuals/1/dob",
            Some(json!("1990-13-01")),
        );
        edit(&mut v, "/company_register", None);
        edit(&mut v, "/vat/accounting_method", None);
        edit(&mut v, "/employee_count", None);
        let found = codes(&v);
        for want in [
            ("name", "empty"),
            ("partners.individuals[1].dob", "invalid_date"),
            ("company_register", "required"),
            ("vat.accounting_method", "required"),
            ("employee_count", "required"),
        ] {
            assert!(
                found.contains(&(want.0.to_string(), want.1.to_string())),
                "{want:?}: {found:?}"
            );
        }
        // Not an object at all.
        assert_eq!(
            codes(&json!([1])),
            [("body".to_string(), "invalid_type".to_string())]
        );
    }
}

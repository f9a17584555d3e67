//! Property tests (proptest): the request decoders (trade, UG/GmbH tax and GbR tax), the
//! signature path check and the DIN 91379 check take any input without panicking, and what they
//! accept is stable; the shares' nominal amounts are whole euros that sum to the capital; the
//! ELSTER transliteration always lands in ISO 8859-15. CI runs the default number of cases (256 per property) inside
//! `cargo test`; proptest reads `PROPTEST_CASES`, so `PROPTEST_CASES=100000 cargo test -p domain
//! properties` runs longer.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use time::macros::date;

use crate::din91379::{self, TextType};
use crate::rule_cases::example;
use crate::signature::SignaturePath;

/// Field names the decoders know, so generated objects reach past the unknown-field check.
const KEYS: &[&str] = &[
    "company",
    "owners",
    "activity",
    "signatures",
    "first_name",
    "last_name",
    "dob",
    "street",
    "house_number",
    "zip",
    "city",
    "country",
    "name",
    "legal_form",
    "address",
    "directors",
    "shareholders",
    "share_percentage",
    "iban",
    "bic",
    "vat",
    "has_employees",
    "employee_count",
    "start_date",
    "signature_path",
    "environment",
    "package",
    "company_id",
    "business_address",
    "partners",
    "individuals",
    "entities",
    "is_managing_partner",
    "partnership_agreement_date",
    "company_register",
    "status",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        prop::sample::select(vec![i64::MIN, i64::MAX, -1, 0]).prop_map(|n| json!(n)),
        Just(json!(u64::MAX)),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,40}".prop_map(Value::String),
        "[0-9]{1,6}".prop_map(Value::String),
        Just(json!("2024-02-29")),
        Just(json!("9999-12-31")),
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        prop::sample::select(KEYS).prop_map(str::to_string),
                        ".{0,12}"
                    ],
                    inner
                ),
                0..8
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Every path (object keys and array indexes) of a document.
fn paths(v: &Value, prefix: Vec<PathStep>, out: &mut Vec<Vec<PathStep>>) {
    out.push(prefix.clone());
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let mut p = prefix.clone();
                p.push(PathStep::Key(k.clone()));
                paths(child, p, out);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                let mut p = prefix.clone();
                p.push(PathStep::Index(i));
                paths(child, p, out);
            }
        }
        _ => {}
    }
}

#[derive(Debug, Clone)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn replace_at(doc: &mut Value, path: &[PathStep], with: Value) {
    let mut cur = doc;
    for step in path {
        cur = match (step, cur) {
            (PathStep::Key(k), Value::Object(m)) => m.get_mut(k).expect("path exists"),
            (PathStep::Index(i), Value::Array(a)) => &mut a[*i],
            _ => unreachable!("paths come from the document"),
        };
    }
    *cur = with;
}

/// A valid example with one value (anywhere in it) replaced by an arbitrary one.
fn mutated(name: &'static str) -> impl Strategy<Value = Value> {
    let base = example(name);
    let mut all = Vec::new();
    paths(&base, Vec::new(), &mut all);
    (prop::sample::select(all), arb_json()).prop_map(move |(path, value)| {
        let mut doc = base.clone();
        replace_at(&mut doc, &path, value);
        doc
    })
}

fn violations_are_named(v: &crate::Violations) {
    assert!(
        v.iter().next().is_some(),
        "an error names at least one field"
    );
    for e in v.iter() {
        assert!(!e.code.is_empty() && !e.message.is_empty(), "{e:?}");
    }
}

/// The examples the mutations start from are valid, so a mutation reaches the rules behind the
/// first one it breaks rather than stopping at the shape.
#[test]
fn unmutated_examples_are_accepted() {
    let today = date!(2026 - 11 - 23);
    let office = |_: &str| true;
    for name in ["self", "assisted"] {
        assert!(
            crate::trade_request::parse(&example(name), today).is_ok(),
            "{name}"
        );
    }
    for name in ["gmbh", "ug"] {
        let r = crate::tax_request::parse(&example(name), today, &office);
        assert!(r.is_ok(), "{name}: {:?}", r.err());
    }
    for name in ["gbr", "egbr"] {
        let r = crate::gbr_request::parse(&example(name), today, &office);
        assert!(r.is_ok(), "{name}: {:?}", r.err());
    }
    for name in ["sole-proprietor", "sole-trader"] {
        let r = crate::sole_proprietor_request::parse(&example(name), today, &office);
        assert!(r.is_ok(), "{name}: {:?}", r.err());
    }
}

proptest! {
    #[test]
    fn trade_decoder_takes_anything(doc in prop_oneof![arb_json(), mutated("self"), mutated("assisted")]) {
        if let Err(v) = crate::trade_request::parse(&doc, date!(2026 - 11 - 23)) {
            violations_are_named(&v);
        }
    }

    #[test]
    fn tax_decoder_takes_anything(doc in prop_oneof![arb_json(), mutated("gmbh"), mutated("ug")]) {
        if let Err(v) = crate::tax_request::parse(&doc, date!(2026 - 11 - 23), &|n: &str| n == "2742") {
            violations_are_named(&v);
        }
    }

    #[test]
    fn gbr_decoder_takes_anything(doc in prop_oneof![arb_json(), mutated("gbr"), mutated("egbr")]) {
        if let Err(v) = crate::gbr_request::parse(&doc, date!(2026 - 11 - 23), &|n: &str| n == "2742") {
            violations_are_named(&v);
        }
    }

    #[test]
    fn sole_proprietor_decoder_takes_anything(doc in prop_oneof![arb_json(), mutated("sole-proprietor"), mutated("sole-trader")]) {
        if let Err(v) = crate::sole_proprietor_request::parse(&doc, date!(2026 - 11 - 23), &|n: &str| n == "2742") {
            violations_are_named(&v);
        }
    }

    #[test]
    fn signature_check_takes_anything(text in prop_oneof![
        ".{0,200}",
        "[MLHVCSQTAZmlhvcsqtaz0-9 .,eE+-]{0,400}",
    ]) {
        if let Ok(p) = SignaturePath::parse(&text) {
            let b = p.bounding_box();
            prop_assert!(b.min_x.is_finite() && b.max_x.is_finite() && b.min_y.is_finite() && b.max_y.is_finite());
            prop_assert!(b.min_x <= b.max_x && b.min_y <= b.max_y);
            // What was accepted is accepted again, the same.
            let again = SignaturePath::parse(p.as_str()).expect("accepted text stays accepted");
            prop_assert_eq!(again.as_str(), p.as_str());
        }
    }

    #[test]
    fn din91379_check_is_stable(text in prop_oneof![".{0,60}", "[a-zA-ZÀ-ž \\-'.,ḂẞŁ]{0,60}"]) {
        for ty in [TextType::A, TextType::B, TextType::C] {
            if let Ok(normalised) = din91379::check(&text, ty) {
                // Accepted text is normal already: checking it again changes nothing.
                let again = din91379::check(&normalised, ty).ok();
                prop_assert_eq!(again.as_deref(), Some(normalised.as_str()));
                // A narrower type never accepts what a wider one refuses.
                if ty == TextType::A {
                    prop_assert!(din91379::check(&normalised, TextType::C).is_ok());
                }
            }
        }
    }

    /// Any split of the capital into shares (1 to 99 of them, four decimals, summing to 100,
    /// each worth at least a euro) gives whole-euro nominal amounts that sum exactly to the
    /// capital, each within a euro of its exact amount and at least one euro.
    #[test]
    fn nominal_amounts_sum_to_the_capital(
        capital in prop_oneof![1i64..=1_000, 1i64..=25_000, 25_000i64..=10_000_000_000],
        weights in prop::collection::vec(1u32..=1_000_000, 1..=99),
    ) {
        use crate::tax::{Percentage, nominal_amounts, share_below_one_euro};
        // Percentages (ten-thousandths) proportional to the weights, summing to exactly 100.
        let total: u64 = weights.iter().map(|w| u64::from(*w)).sum();
        let mut shares: Vec<u32> = weights
            .iter()
            .map(|w| (u64::from(*w) * 1_000_000 / total) as u32)
            .collect();
        for s in shares.iter_mut() {
            *s = (*s).max(1);
        }
        let sum: u32 = shares.iter().sum();
        let largest = (0..shares.len()).max_by_key(|&i| shares[i]).unwrap();
        shares[largest] = shares[largest] + 1_000_000 - sum;
        let shares: Vec<Percentage> = shares.into_iter().map(Percentage).collect();
        prop_assert_eq!(shares.iter().map(|s| s.0).sum::<u32>(), 1_000_000);
        let amounts = nominal_amounts(capital, &shares);
        prop_assert_eq!(amounts.iter().sum::<i64>(), capital);
        // Shares under a euro are refused by the request rules; the others get at least one.
        let all_whole = shares.iter().all(|s| !share_below_one_euro(capital, *s));
        for (amount, share) in amounts.iter().zip(&shares) {
            let exact = i128::from(capital) * i128::from(share.0); // millionths of a euro
            let diff = (i128::from(*amount) * 1_000_000 - exact).abs();
            prop_assert!(diff < 1_000_000, "{amount} for {share:?} of {capital}");
            prop_assert!(*amount >= 0);
            if all_whole {
                prop_assert!(*amount >= 1);
            }
        }
    }

    /// Whatever DIN 91379 text the API accepts, the ELSTER XML can spell: the transliteration
    /// is in ISO 8859-15, changes nothing there, and applied twice changes nothing more.
    #[test]
    fn transliteration_lands_in_iso_8859_15(text in prop_oneof![
        ".{0,40}",
        "[a-zA-ZÀ-ʒḂ-ỹẞ \\-'.,’‡·©¼½¾\u{300}-\u{36F}]{0,40}",
    ]) {
        use crate::latin9::{is_elster_text, transliterate};
        if let Ok(accepted) = din91379::check(&text, TextType::C) {
            let spelled = transliterate(&accepted);
            prop_assert!(is_elster_text(&spelled), "{accepted:?} -> {spelled:?}");
            prop_assert!(!spelled.contains('?') || accepted.contains('?'));
            let again = transliterate(&spelled).into_owned();
            prop_assert_eq!(again.as_str(), spelled.as_ref());
            if is_elster_text(&accepted) {
                prop_assert_eq!(spelled.as_ref(), accepted.as_str());
            }
        }
    }
}

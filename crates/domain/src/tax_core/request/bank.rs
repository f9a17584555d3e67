//! The bank account: `iban` and `bic`.

use crate::Violations;
use crate::rules::{self, Obj};

/// ISO 9362: a 4-letter institution code, the country (an ISO 3166-1 alpha-2 code, or `XK`,
/// which SWIFT uses for Kosovo), a 2-character location and an optional 3-character branch.
fn valid_bic(bic: &str) -> bool {
    let b = bic.as_bytes();
    (b.len() == 8 || b.len() == 11)
        && b[..6].iter().all(u8::is_ascii_uppercase)
        && b[6..]
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && (&bic[4..6] == "XK" || crate::country::CountryCode::parse(&bic[4..6]).is_ok())
}

/// The top-level `iban` (checked, in its electronic form) and `bic` (required for an IBAN
/// outside Germany).
pub(crate) fn bank(o: &Obj, e: &mut Violations) -> (Option<String>, Option<String>) {
    let iban = o.opt("iban").and_then(|v| {
        let s = rules::string(v, "iban", e)?;
        match s.parse::<iban::Iban>() {
            Ok(i) => Some(iban::IbanLike::electronic_str(&i).to_string()),
            Err(_) => {
                e.push("iban", "invalid_iban", "is not a valid IBAN");
                None
            }
        }
    });
    let bic = o.opt("bic").and_then(|v| {
        let s = rules::string(v, "bic", e)?.trim().to_ascii_uppercase();
        if valid_bic(&s) {
            Some(s)
        } else {
            e.push(
                "bic",
                "invalid_bic",
                "must be a BIC of 8 or 11 characters with a country code (e.g. COBADEFFXXX)",
            );
            None
        }
    });
    // The filing carries a BIC only in the bank account beside its IBAN; one sent alone would
    // be stored and never filed.
    if o.has("bic") && !o.has("iban") {
        e.push(
            "bic",
            "not_allowed",
            "is only accepted together with an iban",
        );
    }
    if let Some(i) = &iban
        && !i.starts_with("DE")
        && !o.has("bic")
    {
        e.push("bic", "required", "is required for an IBAN outside Germany");
    }
    (iban, bic)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::object;
    use serde_json::Value;

    fn bank_of(body: Value) -> Result<(Option<String>, Option<String>), Vec<String>> {
        let mut e = Violations::new();
        let o = object(&body, "", &["iban", "bic"], &mut e).unwrap();
        let out = bank(&o, &mut e);
        if e.is_empty() {
            Ok(out)
        } else {
            Err(e
                .iter()
                .map(|x| format!("{} {}", x.field, x.code))
                .collect())
        }
    }

    /// The IBAN and BIC vectors (data/test-vectors/iban_bic.csv), each through the request's
    /// own rule: an IBAN alone (a German one needs no BIC), a BIC beside a German IBAN.
    #[test]
    fn iban_and_bic_vectors() {
        let csv = include_str!("../../../data/test-vectors/iban_bic.csv");
        let mut n = 0;
        for line in csv.lines().skip(1) {
            let cols: Vec<&str> = line.splitn(4, ',').collect();
            let (value, kind, valid) = (cols[0], cols[1], cols[2] == "true");
            let body = match kind {
                "IBAN" => serde_json::json!({ "iban": value }),
                "BIC" => serde_json::json!({ "iban": "DE89370400440532013000", "bic": value }),
                other => panic!("unknown kind {other}"),
            };
            let got = bank_of(body);
            assert_eq!(got.is_ok(), valid, "{kind} {value}: {got:?}");
            if !valid {
                let code = if kind == "IBAN" {
                    "iban invalid_iban"
                } else {
                    "bic invalid_bic"
                };
                assert_eq!(got, Err(vec![code.to_string()]), "{value}");
            }
            n += 1;
        }
        assert!(n >= 10, "only {n} vectors");
        // Stored in the electronic form, upper-case.
        assert_eq!(
            bank_of(
                serde_json::json!({"iban": "DE89 3704 0044 0532 0130 00", "bic": "cobadeffxxx"})
            ),
            Ok((
                Some("DE89370400440532013000".into()),
                Some("COBADEFFXXX".into())
            ))
        );
        // Kosovo's SWIFT code is no ISO 3166 code but a BIC country.
        assert!(
            bank_of(serde_json::json!({"iban": "XK051212012345678906", "bic": "RBKOXKPRXXX"}))
                .is_ok()
        );
        assert_eq!(
            bank_of(serde_json::json!({"iban": "AT611904300234573201"})),
            Err(vec!["bic required".to_string()])
        );
        assert_eq!(
            bank_of(serde_json::json!({"bic": "COBADEFFXXX"})),
            Err(vec!["bic not_allowed".to_string()])
        );
    }
}

//! Whether a German address agrees with itself: a postal code that exists, and a city that
//! names one of its municipalities. The creates refuse an address that certainly does not (a 422
//! naming the field), and no lookup chooses an office from one half of a contradictory address
//! (docs/offices.md, "Address checks").

use serde::Serialize;

use super::{Municipality, Resolution, municipalities_for};
use crate::Violations;

/// The result of [`check_address`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum AddressCheck {
    /// The city names one of the postal code's municipalities (after normalisation, by its
    /// name's core, or followed by an Ortsteil), or the address is in Berlin's register.
    Consistent,
    /// The city names no German municipality: an Ortsteil ("Pasing" for 81241), or a spelling
    /// the data does not know. Accepted; the postal code decides where it has one municipality.
    CityNotRecognised,
    /// The city is another municipality's name only by its core or first words ("Frankfurt"
    /// or "Berlin-Mitte" with 80331), which may also be an Ortsteil of the same name
    /// ("Mülheim" in Köln): accepted, and no office is determined from it.
    Doubtful { named: Vec<Municipality> },
    /// The postal code is malformed or not a German postal code of the data.
    UnknownPostalCode,
    /// The city is the full name of municipalities that do not have the postal code, whose own
    /// municipalities are `candidates` ("Berlin" with 80331).
    Contradicted {
        candidates: Vec<Municipality>,
        named: Vec<Municipality>,
    },
}

/// Checks postal code and city (and, for Berlin's edge, the street line) against the data.
pub fn check_address(zip: &str, city: &str, street: &str) -> AddressCheck {
    if super::berlin_by_register(zip, city, street).is_some() {
        return AddressCheck::Consistent;
    }
    match municipalities_for(zip, city) {
        Resolution::NotFound => AddressCheck::UnknownPostalCode,
        Resolution::Unique {
            city_matches: true, ..
        } => AddressCheck::Consistent,
        Resolution::Unique { .. } => AddressCheck::CityNotRecognised,
        // Several municipalities share the name (Hamfelde in 22929), or none has it.
        Resolution::Ambiguous { candidates } => {
            let wanted = super::normalize_city(city);
            if candidates
                .iter()
                .any(|m| super::normalize_city(m.name) == wanted)
            {
                AddressCheck::Consistent
            } else {
                AddressCheck::CityNotRecognised
            }
        }
        // A Berlin postal code that the postal code data gives to Brandenburg (15537, 15566,
        // 15569): a Berlin street the register of 2023 does not have yet is not refused.
        Resolution::Contradicted { named, .. }
            if named.iter().any(|m| m.key == super::district::BERLIN)
                && super::district::berlin_has_postal_code(zip) =>
        {
            AddressCheck::Doubtful { named }
        }
        Resolution::Contradicted {
            candidates,
            named,
            certain: true,
        } => AddressCheck::Contradicted { candidates, named },
        Resolution::Contradicted { named, .. } => AddressCheck::Doubtful { named },
    }
}

impl AddressCheck {
    /// Whether a create refuses the address.
    pub fn refused(&self) -> bool {
        matches!(
            self,
            AddressCheck::UnknownPostalCode | AddressCheck::Contradicted { .. }
        )
    }

    /// Pushes the violation of a refused address: `zip_path` for an unknown postal code,
    /// `city_path` for a city of another postal code.
    pub fn push_violations(
        &self,
        (zip_path, city_path): (&str, &str),
        (zip, city): (&str, &str),
        errs: &mut Violations,
    ) {
        match self {
            AddressCheck::UnknownPostalCode => errs.push(
                zip_path,
                "unknown_postal_code",
                format!("{zip} is not a German postal code"),
            ),
            AddressCheck::Contradicted { candidates, .. } => errs.push(
                city_path,
                "city_not_in_postal_code",
                format!(
                    "'{}' is not in postal code {zip}, which is {}",
                    city.trim(),
                    names(candidates)
                ),
            ),
            _ => {}
        }
    }
}

/// "München" or "Preetz, Schellhorn or Wahlstorf".
fn names(ms: &[Municipality]) -> String {
    let names: Vec<String> = ms.iter().map(Municipality::display_name).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Checks a German address of a request and pushes its violations (`prefix` is the address's
/// path, `registered_office` or `address`); nothing when `zip` or `city` is missing (their own
/// rules said so).
pub(crate) fn check_request_address(
    prefix: &str,
    zip: Option<&str>,
    city: Option<&str>,
    street: Option<&str>,
    errs: &mut Violations,
) {
    let (Some(zip), Some(city)) = (zip, city) else {
        return;
    };
    let check = check_address(zip, city, street.unwrap_or(""));
    check.push_violations(
        (&format!("{prefix}.zip"), &format!("{prefix}.city")),
        (zip, city),
        errs,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(zip: &str, city: &str) -> AddressCheck {
        check_address(zip, city, "")
    }

    #[test]
    fn real_addresses_and_their_spellings_are_consistent() {
        for (zip, city) in [
            ("80331", "München"),
            ("80331", "Muenchen"),
            ("80331", "MÜNCHEN"),
            ("80331", "Landeshauptstadt München"),
            ("81243", "München-Pasing"),
            ("60311", "Frankfurt am Main"),
            ("60311", "Frankfurt a. M."),
            ("60311", "Frankfurt/Main"),
            ("60311", "Frankfurt"),
            ("65929", "Frankfurt am Main-Höchst"),
            ("06108", "Halle (Saale)"),
            ("06108", "Halle"),
            ("06108", "Halle/Saale"),
            ("04229", "Leipzig-Plagwitz"),
            ("04229", "Leipzig OT Plagwitz"),
            ("01099", "Dresden, Neustadt"),
            ("22765", "Hamburg-Altona"),
            ("54298", "Aach"),
            ("15230", "Frankfurt (Oder)"),
            ("15230", "Frankfurt/Oder"),
            ("10115", "Berlin"),
        ] {
            assert_eq!(check(zip, city), AddressCheck::Consistent, "{zip} {city}");
        }
    }

    #[test]
    fn an_ortsteil_named_alone_is_not_refused() {
        // Pasing is a part of München, no municipality: the postal code decides.
        assert_eq!(check("81241", "Pasing"), AddressCheck::CityNotRecognised);
        assert!(!check("81241", "Pasing").refused());
    }

    #[test]
    fn a_city_of_another_postal_code_is_refused() {
        let c = check("80331", "Berlin");
        assert!(c.refused(), "{c:?}");
        let mut errs = Violations::new();
        c.push_violations(("a.zip", "a.city"), ("80331", "Berlin"), &mut errs);
        let e: Vec<_> = errs.iter().collect();
        assert_eq!(e.len(), 1);
        assert_eq!(
            (e[0].field.as_str(), e[0].code.as_str()),
            ("a.city", "city_not_in_postal_code")
        );
        assert!(e[0].message.contains("München"), "{}", e[0].message);
        // Frankfurt (Oder) is not Frankfurt am Main, though both are "Frankfurt".
        assert!(check("60311", "Frankfurt (Oder)").refused());
        assert!(check("15230", "Frankfurt am Main").refused());
        // A postal code of several municipalities and a city of none of them.
        assert!(check("24211", "Hamburg").refused());
    }

    #[test]
    fn a_name_that_may_be_an_ortsteil_is_doubtful_not_refused() {
        for (zip, city) in [("80331", "Frankfurt"), ("80331", "Berlin-Mitte")] {
            let c = check(zip, city);
            assert!(matches!(c, AddressCheck::Doubtful { .. }), "{city}: {c:?}");
            assert!(!c.refused());
        }
    }

    #[test]
    fn unknown_postal_codes_are_refused() {
        for zip in ["99999", "00000", "1234", "abcde"] {
            let c = check(zip, "Berlin");
            assert_eq!(c, AddressCheck::UnknownPostalCode, "{zip}");
            let mut errs = Violations::new();
            c.push_violations(("a.zip", "a.city"), (zip, "Berlin"), &mut errs);
            assert_eq!(errs.iter().next().unwrap().field, "a.zip");
        }
    }

    #[test]
    fn berlin_at_the_city_edge_is_consistent() {
        // 15537 is Erkner's postal code in the data; Berlin's register has the street.
        assert_eq!(
            check_address("15537", "Berlin", "Am Zwiebusch 52"),
            AddressCheck::Consistent
        );
        // A street the register lacks: not refused (the register is of 2023).
        assert!(!check_address("15537", "Berlin", "Neue Straße 1").refused());
    }
}

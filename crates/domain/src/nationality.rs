//! German nationality designations (Staatsangehörigkeit), as field 10 of the GewA 1 asks for
//! them: "deutsch" for Germany, "polnisch", "türkisch", "der Vereinigten Arabischen Emirate"
//! for others.
//!
//! The designations are those of the Auswärtiges Amt's "Verzeichnis der Staatennamen für den
//! amtlichen Gebrauch in der Bundesrepublik Deutschland", with the Federal Statistical Office's
//! nationality key (Staatsangehörigkeitsschlüssel, dl-de/by-2-0), compiled into
//! `data/nationalities.tsv` (source and licence in its head and in
//! `data/nationalities-README.md`). Territories that are no state carry the designation of the
//! state whose nationality their people hold (our reading, marked `sovereign:XX` in the file).
//! The Palestinian territories and Western Sahara have no designation on the list: their name is
//! printed (marked `name`). Antarctica has no people and is refused as a nationality.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::country::CountryCode;

const TABLE: &str = include_str!("../data/nationalities.tsv");

/// Where a designation comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// The official list has the state.
    Source,
    /// A territory: the designation of the state named (our reading).
    Sovereign(CountryCode),
    /// No designation on the official list: the place's name is printed (the Palestinian
    /// territories, Destatis key 459; Western Sahara).
    Name,
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nationality {
    pub code: CountryCode,
    /// The Destatis key (three digits), for states of the official list.
    pub destatis_key: Option<&'static str>,
    /// As the official list spells it ("polnisch", "der Vereinigten Arabischen Emirate").
    pub designation: &'static str,
    pub basis: Basis,
}

fn table() -> &'static HashMap<CountryCode, Nationality> {
    static TABLE_MAP: OnceLock<HashMap<CountryCode, Nationality>> = OnceLock::new();
    TABLE_MAP.get_or_init(|| {
        let mut map = HashMap::new();
        for line in TABLE.lines() {
            if line.starts_with('#') || line.starts_with("iso2\t") || line.trim().is_empty() {
                continue;
            }
            let cols: Vec<&'static str> = line.split('\t').collect();
            let [iso2, key, _name, designation, basis] = cols[..] else {
                panic!("nationalities.tsv: bad row {line:?}");
            };
            let code = CountryCode::parse(iso2).expect("nationalities.tsv: known code");
            let basis = match basis {
                "source" => Basis::Source,
                "name" => Basis::Name,
                "none" => continue,
                other => Basis::Sovereign(
                    other
                        .strip_prefix("sovereign:")
                        .and_then(|c| CountryCode::parse(c).ok())
                        .unwrap_or_else(|| panic!("nationalities.tsv: bad basis {other:?}")),
                ),
            };
            assert!(!designation.is_empty(), "nationalities.tsv: {iso2} empty");
            map.insert(
                code,
                Nationality {
                    code,
                    destatis_key: (!key.is_empty()).then_some(key),
                    designation,
                    basis,
                },
            );
        }
        map
    })
}

/// The nationality of the people of `code`, `None` for a place without one (Antarctica).
pub fn of(code: CountryCode) -> Option<&'static Nationality> {
    table().get(&code)
}

/// The designation to print ("deutsch", "polnisch"), `None` as in [`of`].
pub fn designation(code: CountryCode) -> Option<&'static str> {
    of(code).map(|n| n.designation)
}

/// The states whose citizens need no residence title (Aufenthaltstitel) to work in Germany,
/// as ISO 3166-1 codes: the 27 member states of the European Union (§ 1 and § 2 FreizügG/EU),
/// the other states of the European Economic Area, Iceland, Liechtenstein and Norway (§ 12
/// FreizügG/EU), and Switzerland (Freizügigkeitsabkommen EG–Schweiz of 21.6.1999, BGBl. 2001
/// II S. 810; § 28 AufenthV, § 1 Abs. 2 Nr. 1 AufenthG). GewA 1 fields 30 and 31 are "nur für
/// Ausländer, die einen Aufenthaltstitel benötigen", so they stay empty for these citizens
/// (docs/forms.md, "Fields 30 and 31"). Greece is `GR` (ISO), not the EU's `EL`.
pub const FREE_MOVEMENT: [&str; 31] = [
    "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU", "IE", "IT",
    "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK", // the EU
    "IS", "LI", "NO", // the rest of the EEA
    "CH",
];

/// Whether a citizen of `code` needs no residence title: [`FREE_MOVEMENT`].
pub fn free_movement(code: CountryCode) -> bool {
    FREE_MOVEMENT.contains(&code.as_str())
}

/// The designations of several nationalities for field 10, in the given order, each once:
/// `(german, others)` where `german` says whether "deutsch" is to be ticked and `others` is
/// the comma-separated list of the rest ("polnisch, türkisch").
pub fn field_10(codes: impl IntoIterator<Item = CountryCode>) -> (bool, String) {
    let mut german = false;
    let mut others: Vec<&str> = Vec::new();
    for code in codes {
        if code.is_germany() {
            german = true;
        } else {
            // A code without a designation (Antarctica, in a record older than the rule)
            // keeps its country name.
            let d = designation(code).unwrap_or(code.german_name());
            if !others.contains(&d) {
                others.push(d);
            }
        }
    }
    (german, others.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(s: &str) -> CountryCode {
        CountryCode::parse(s).unwrap()
    }

    #[test]
    fn every_accepted_code_has_a_designation_but_antarctica() {
        let mut missing = Vec::new();
        for c in CountryCode::all() {
            match of(c) {
                Some(n) => {
                    assert_eq!(n.code, c);
                    assert!(!n.designation.trim().is_empty(), "{c}");
                    assert_eq!(n.designation, n.designation.trim(), "{c}");
                    if let Basis::Sovereign(s) = n.basis {
                        // A territory takes a state's designation from the official list.
                        assert_eq!(of(s).map(|n| n.basis), Some(Basis::Source), "{c} -> {s}");
                        assert_eq!(designation(s), Some(n.designation), "{c} -> {s}");
                    }
                    if n.basis == Basis::Name {
                        assert_eq!(n.designation, c.german_name(), "{c}");
                    }
                    if n.basis == Basis::Source {
                        let key = n.destatis_key.unwrap_or_else(|| panic!("{c}: no key"));
                        assert!(key.len() == 3 && key.bytes().all(|b| b.is_ascii_digit()));
                    }
                }
                None => missing.push(c.as_str()),
            }
        }
        // Antarctica has no people (docs/forms.md, "Field 10").
        assert_eq!(missing, ["AQ"]);
    }

    #[test]
    fn official_designations() {
        for (c, d, key) in [
            ("DE", "deutsch", "000"),
            ("PL", "polnisch", "152"),
            ("TR", "türkisch", "163"),
            ("FR", "französisch", "129"),
            ("AT", "österreichisch", "151"),
            ("GB", "britisch", "168"),
            ("US", "amerikanisch", "368"),
            ("UA", "ukrainisch", "166"),
            ("SY", "syrisch", "475"),
            ("XK", "kosovarisch", "150"),
        ] {
            let n = of(code(c)).unwrap();
            assert_eq!((n.designation, n.destatis_key), (d, Some(key)), "{c}");
        }
        // No designation on the list: the name.
        assert_eq!(designation(code("PS")), Some("Palästinensische Gebiete"));
        assert_eq!(of(code("PS")).unwrap().destatis_key, Some("459"));
        assert_eq!(designation(code("EH")), Some("Westsahara"));
        // Territories take their state's.
        assert_eq!(designation(code("GL")), Some("dänisch"));
        assert_eq!(designation(code("PR")), Some("amerikanisch"));
    }

    #[test]
    fn field_10_ticks_german_and_lists_the_others_once() {
        assert_eq!(field_10([code("DE")]), (true, String::new()));
        assert_eq!(
            field_10([code("PL"), code("DE"), code("TR")]),
            (true, "polnisch, türkisch".into())
        );
        // A stored record with a code refused today keeps its country name.
        assert_eq!(field_10([code("AQ")]), (false, "Antarktis".into()));
        // Two codes with the same designation are written once.
        assert_eq!(
            field_10([code("US"), code("PR")]),
            (false, "amerikanisch".into())
        );
    }
}

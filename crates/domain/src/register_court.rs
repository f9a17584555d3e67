//! The German register courts (Registergerichte): the Amtsgerichte that keep the commercial,
//! cooperative, partnership and association registers. Field 2 of the GewA 1 asks for the place
//! of the register entry, which is its court ("Amtsgericht Charlottenburg, HRB 123456 B").
//!
//! The list is compiled into `data/register-courts.tsv` (source, edition and licence in its
//! head and in `data/register-courts-README.md`). A court is named by its place, with or
//! without "Amtsgericht" in front, or by its register portal code (`F1103R`); the canonical
//! form stored and printed is `Amtsgericht <place>`.

use std::sync::OnceLock;

const TABLE: &str = include_str!("../data/register-courts.tsv");

/// One register court.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterCourt {
    /// The court code of the common register portal (XJustiz), when the source gives it.
    pub code: Option<&'static str>,
    /// The place, as the court is officially named after "Amtsgericht" ("Charlottenburg").
    pub place: &'static str,
    /// The Land (two letters, e.g. `BE`).
    pub land: &'static str,
}

impl RegisterCourt {
    /// `Amtsgericht <place>`, as stored and printed.
    pub fn name(&self) -> String {
        format!("Amtsgericht {}", self.place)
    }
}

/// Every register court, in the order of the data file (by place).
pub fn all() -> &'static [RegisterCourt] {
    static COURTS: OnceLock<Vec<RegisterCourt>> = OnceLock::new();
    COURTS.get_or_init(|| {
        TABLE
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("code\t") && !l.trim().is_empty())
            .map(|line| {
                let cols: Vec<&'static str> = line.split('\t').collect();
                let [code, place, land, ..] = cols[..] else {
                    panic!("register-courts.tsv: bad row {line:?}");
                };
                RegisterCourt {
                    code: (!code.is_empty()).then_some(code),
                    place,
                    land,
                }
            })
            .collect()
    })
}

/// Lower case, "Amtsgericht"/"AG" prefix dropped, runs of spaces as one, dots followed by a
/// space as a dot ("v. d. Höhe" = "v.d.Höhe").
fn key(s: &str) -> String {
    let s = s.trim();
    let lower = s.to_lowercase();
    let rest = ["amtsgericht ", "ag "]
        .iter()
        .find_map(|p| lower.strip_prefix(p))
        .unwrap_or(&lower);
    let mut out = String::with_capacity(rest.len());
    for word in rest.split_whitespace() {
        // "St. Wendel" is "Sankt Wendel".
        let word = if word == "st." { "sankt" } else { word };
        if !out.is_empty() && !out.ends_with('.') {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Other spellings of courts, as the register portal's older search form and common usage
/// write them (`data/register-courts-README.md`): `(alias, place in the list)`.
const ALIASES: &[(&str, &str)] = &[
    ("Berlin (Charlottenburg)", "Charlottenburg"),
    ("Charlottenburg (Berlin)", "Charlottenburg"),
    // Berlin's commercial, cooperative and partnership registers are kept at Charlottenburg.
    ("Berlin", "Charlottenburg"),
    ("Berlin-Charlottenburg", "Charlottenburg"),
    ("Frankfurt/Oder", "Frankfurt (Oder)"),
    ("Frankfurt/Main", "Frankfurt am Main"),
    ("Frankfurt a.M.", "Frankfurt am Main"),
    ("Bad Homburg v.d.H.", "Bad Homburg v.d. Höhe"),
    ("St. Ingbert", "Sankt Ingbert"),
    ("Ludwigshafen a.Rhein", "Ludwigshafen am Rhein"),
    ("Ludwigshafen", "Ludwigshafen am Rhein"),
    ("Freiburg im Breisgau", "Freiburg"),
    ("Offenbach", "Offenbach am Main"),
];

/// The court `input` names: its place (with or without "Amtsgericht"), case-insensitive, or
/// its code. `None` when no register court has that name.
pub fn find(input: &str) -> Option<&'static RegisterCourt> {
    let k = key(input);
    if k.is_empty() {
        return None;
    }
    let courts = all();
    courts
        .iter()
        .find(|c| {
            c.code
                .is_some_and(|code| code.eq_ignore_ascii_case(input.trim()))
        })
        .or_else(|| courts.iter().find(|c| key(c.place) == k))
        .or_else(|| {
            let (_, place) = ALIASES.iter().find(|(alias, _)| key(alias) == k)?;
            courts.iter().find(|c| c.place == *place)
        })
        .or_else(|| {
            // The place without its qualifier ("Kempten" for "Kempten (Allgäu)", "Landau" for
            // "Landau in der Pfalz") when exactly one court's place begins with it.
            let mut found = courts.iter().filter(|c| {
                key(c.place)
                    .strip_prefix(&k)
                    .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with('('))
            });
            let first = found.next()?;
            found.next().is_none().then_some(first)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sound() {
        let courts = all();
        assert!(courts.len() > 80, "{}", courts.len());
        let lands = [
            "BW", "BY", "BE", "BB", "HB", "HH", "HE", "MV", "NI", "NW", "RP", "SL", "SN", "ST",
            "SH", "TH",
        ];
        for c in courts {
            assert!(lands.contains(&c.land), "{c:?}");
            assert_eq!(c.place, c.place.trim(), "{c:?}");
            assert!(!c.place.to_lowercase().starts_with("amtsgericht"), "{c:?}");
            // Each name finds its own court, and no other court shares its key.
            assert_eq!(find(c.place), Some(c), "{c:?}");
            assert_eq!(find(&c.name()), Some(c), "{c:?}");
        }
        // Every Land keeps at least one register.
        for land in lands {
            assert!(courts.iter().any(|c| c.land == land), "{land}");
        }
    }

    #[test]
    fn names_codes_and_spellings() {
        let charlottenburg = find("Amtsgericht Charlottenburg").unwrap();
        assert_eq!(charlottenburg.land, "BE");
        assert_eq!(charlottenburg.name(), "Amtsgericht Charlottenburg");
        assert_eq!(find("  charlottenburg "), Some(charlottenburg));
        assert_eq!(find("AG Charlottenburg"), Some(charlottenburg));
        if let Some(code) = charlottenburg.code {
            assert_eq!(find(code), Some(charlottenburg));
        }
        assert_eq!(find("Amtsgericht München").unwrap().land, "BY");
        assert_eq!(find("Frankfurt am Main").unwrap().land, "HE");
        assert_eq!(find("Hamburg").unwrap().land, "HH");
        // Spellings of the register portal's older form, and a bare "Frankfurt" refused.
        assert_eq!(find("Berlin (Charlottenburg)"), Some(charlottenburg));
        assert_eq!(find("Frankfurt/Oder").unwrap().land, "BB");
        assert_eq!(find("Frankfurt"), None, "Frankfurt am Main or (Oder)");
        assert_eq!(find("Bad"), None);
        assert_eq!(find("St. Wendel").unwrap().place, "Sankt Wendel");
        assert_eq!(find("Kempten").unwrap().place, "Kempten (Allgäu)");
        assert_eq!(find("Landau").unwrap().place, "Landau in der Pfalz");
        assert_eq!(find("Berlin"), Some(charlottenburg));
        assert_eq!(find("Charlottenburg (Berlin)"), Some(charlottenburg));
        // A place is not a prefix of another word: "Hamm" is not "Hamburg".
        assert_ne!(find("Ham").map(|c| c.place), Some("Hamburg"));
        // Every alias names a court of the list.
        for (alias, place) in ALIASES {
            assert_eq!(find(alias).map(|c| c.place), Some(*place), "{alias}");
        }
        for bad in [
            "",
            "Amtsgericht",
            "Amtsgericht Atlantis",
            "Landgericht Berlin",
            "Berlin-Mitte",
        ] {
            assert_eq!(find(bad), None, "{bad:?}");
        }
    }
}

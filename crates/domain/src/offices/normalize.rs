//! City name normalisation for matching an address's city against municipality names.
//!
//! Both sides (the user's input and the register / OpenStreetMap names) go through the same
//! function, so the rules only have to make equal what people write differently:
//!
//! - everything after the first comma is dropped ("Flensburg, Stadt", "Kiel, Landeshauptstadt");
//! - case is folded, umlauts become `ae`/`oe`/`ue`, `ß` becomes `ss`, other Latin diacritics are
//!   dropped (Sorbian names such as "Budyšin");
//! - punctuation, hyphens, slashes, brackets and repeated spaces become one space
//!   ("Halle (Saale)" = "Halle/Saale" = "Halle Saale", "Alt-Mölln" = "Alt Mölln");
//! - leading titles are dropped: "Stadt", "Hansestadt", "Landeshauptstadt", "Universitätsstadt",
//!   "Freie und Hansestadt", "Gemeinde", "Markt", "Flecken", ... ("HANSESTADT Rostock" = "Rostock");
//! - connecting words and their register abbreviations are unified: "am"/"an"/"a."/"auf" -> `a`,
//!   "im"/"in"/"i." -> `i`, "der"/"dem"/"den"/"d." -> `d`, "bei"/"b." -> `b`, "vor"/"v." -> `v`,
//!   "Sankt"/"St." -> `st` ("Bad Homburg vor der Höhe" = "Bad Homburg v. d. Höhe").
//!
//! [`core`] additionally cuts a name at its first qualifier (bracket, slash, " - " or connecting
//! word), so "Halle" matches "Halle (Saale)" and "Frankfurt" matches "Frankfurt am Main". It is
//! only used as a second tier among the few municipalities of one postal code.

/// Leading title words dropped from a name (already folded). Multi-word titles are listed as
/// token sequences; the longest match is removed, repeatedly ("Große Kreisstadt").
const TITLES: &[&[&str]] = &[
    &["freie", "und", "hansestadt"],
    &["grosse", "kreisstadt"],
    &["stadt"],
    &["hansestadt"],
    &["landeshauptstadt"],
    &["universitaetsstadt"],
    &["wissenschaftsstadt"],
    &["hochschulstadt"],
    &["kreisstadt"],
    &["lutherstadt"],
    &["gemeinde"],
    &["markt"],
    &["marktgemeinde"],
    &["flecken"],
    &["ostseebad"],
    &["nordseebad"],
    &["seebad"],
    &["ostseeheilbad"],
    &["kurort"],
];

/// Folds one character to lowercase ASCII (possibly several letters); `None` for separators.
fn fold(c: char, out: &mut String) {
    match c {
        'ä' | 'Ä' => out.push_str("ae"),
        'ö' | 'Ö' => out.push_str("oe"),
        'ü' | 'Ü' => out.push_str("ue"),
        'ß' | 'ẞ' => out.push_str("ss"),
        'æ' | 'Æ' => out.push_str("ae"),
        'œ' | 'Œ' => out.push_str("oe"),
        c if c.is_ascii_alphanumeric() => out.push(c.to_ascii_lowercase()),
        c if c.is_alphabetic() => {
            let base = strip_diacritic(c);
            if base.is_ascii_alphanumeric() {
                out.push(base.to_ascii_lowercase());
            } else {
                out.extend(c.to_lowercase());
            }
        }
        _ => out.push(' '),
    }
}

/// The base letter of a Latin letter with diacritic, for the letters found in German place names
/// (including Sorbian, Danish and Frisian ones); other characters are returned unchanged.
fn strip_diacritic(c: char) -> char {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'å' | 'ā' | 'ă' | 'ą' => 'a',
        'À' | 'Á' | 'Â' | 'Ã' | 'Å' | 'Ā' | 'Ă' | 'Ą' => 'a',
        'ç' | 'ć' | 'č' | 'Ç' | 'Ć' | 'Č' => 'c',
        'ď' | 'Ď' | 'đ' | 'Đ' => 'd',
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ė' | 'ę' | 'ě' => 'e',
        'È' | 'É' | 'Ê' | 'Ë' | 'Ē' | 'Ė' | 'Ę' | 'Ě' => 'e',
        'ì' | 'í' | 'î' | 'ï' | 'Ì' | 'Í' | 'Î' | 'Ï' => 'i',
        'ł' | 'Ł' | 'ľ' | 'Ľ' => 'l',
        'ñ' | 'ń' | 'ň' | 'Ñ' | 'Ń' | 'Ň' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ø' | 'Ò' | 'Ó' | 'Ô' | 'Õ' | 'Ø' => 'o',
        'ŕ' | 'ř' | 'Ŕ' | 'Ř' => 'r',
        'ś' | 'š' | 'Ś' | 'Š' => 's',
        'ť' | 'Ť' => 't',
        'ù' | 'ú' | 'û' | 'ů' | 'Ù' | 'Ú' | 'Û' | 'Ů' => 'u',
        'ý' | 'ÿ' | 'Ý' => 'y',
        'ź' | 'ż' | 'ž' | 'Ź' | 'Ż' | 'Ž' => 'z',
        other => other,
    }
}

/// Canonical token for connecting words and their abbreviations.
fn canonical(token: &str) -> &str {
    match token {
        "am" | "an" | "a" | "auf" => "a",
        "im" | "in" | "i" => "i",
        "der" | "dem" | "den" | "d" => "d",
        "bei" | "b" => "b",
        "vor" | "vorm" | "v" => "v",
        "sankt" | "st" => "st",
        other => other,
    }
}

fn is_connector(token: &str) -> bool {
    matches!(
        token,
        "a" | "i" | "d" | "b" | "v" | "ob" | "u" | "unter" | "zu" | "zum"
    )
}

/// Folded, canonical tokens of `name` with titles removed.
fn tokens(name: &str) -> Vec<String> {
    let head = name.split(',').next().unwrap_or("");
    let mut folded = String::with_capacity(head.len() + 4);
    for c in head.chars() {
        fold(c, &mut folded);
    }
    let mut tokens: Vec<String> = folded
        .split_whitespace()
        .map(|t| canonical(t).to_owned())
        .collect();
    // Drop leading titles, but never the last token ("Stadt Wehlen" -> "wehlen", "Markt" stays).
    'strip: loop {
        for title in TITLES {
            if tokens.len() > title.len() && tokens.iter().zip(title.iter()).all(|(t, w)| t == w) {
                tokens.drain(..title.len());
                continue 'strip;
            }
        }
        break;
    }
    tokens
}

/// The normalised form of a city or municipality name (see the module documentation).
///
/// ```
/// use domain::offices::normalize_city;
/// assert_eq!(normalize_city("Flensburg, Stadt"), "flensburg");
/// assert_eq!(normalize_city("HANSESTADT Rostock"), "rostock");
/// assert_eq!(normalize_city("Halle (Saale)"), normalize_city("Halle/Saale"));
/// assert_eq!(normalize_city("Gießen"), "giessen");
/// ```
pub fn normalize_city(name: &str) -> String {
    tokens(name).join(" ")
}

/// The name up to its first qualifier, normalised: "Halle (Saale)" -> `halle`,
/// "Frankfurt am Main" -> `frankfurt`, "Bautzen / Budyšin" -> `bautzen`.
pub(crate) fn core(name: &str) -> String {
    let head = name.split(',').next().unwrap_or("");
    let cut = head
        .find(['(', '/'])
        .into_iter()
        .chain(head.find(" - "))
        .min()
        .unwrap_or(head.len());
    let tokens = tokens(&head[..cut]);
    let end = tokens
        .iter()
        .skip(1)
        .position(|t| is_connector(t))
        .map_or(tokens.len(), |p| p + 1);
    tokens[..end].join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_commas_case_and_umlauts() {
        assert_eq!(normalize_city("Flensburg, Stadt"), "flensburg");
        assert_eq!(normalize_city("  HANSESTADT   Rostock "), "rostock");
        assert_eq!(
            normalize_city("Hansestadt Lübeck"),
            normalize_city("Lübeck, Hansestadt")
        );
        assert_eq!(normalize_city("Landeshauptstadt Kiel"), "kiel");
        assert_eq!(normalize_city("Universitätsstadt Tübingen"), "tuebingen");
        assert_eq!(normalize_city("Freie und Hansestadt Hamburg"), "hamburg");
        assert_eq!(normalize_city("Große Kreisstadt Weinheim"), "weinheim");
        assert_eq!(normalize_city("MÜNCHEN"), "muenchen");
        assert_eq!(normalize_city("Muenchen"), "muenchen");
        assert_eq!(normalize_city("Gießen"), normalize_city("Giessen"));
        assert_eq!(
            normalize_city("Bautzen / Budyšin"),
            normalize_city("Bautzen - Budysin")
        );
        // A title is never the whole name.
        assert_eq!(normalize_city("Markt"), "markt");
        // "Neustadt" is a name, not a title.
        assert_eq!(
            normalize_city("Neustadt an der Weinstraße"),
            "neustadt a d weinstrasse"
        );
    }

    #[test]
    fn punctuation_and_connecting_words() {
        assert_eq!(normalize_city("Frankfurt am Main"), "frankfurt a main");
        assert_eq!(normalize_city("Frankfurt a. M."), "frankfurt a m");
        assert_eq!(normalize_city("Halle (Saale)"), "halle saale");
        assert_eq!(normalize_city("Halle/Saale"), "halle saale");
        assert_eq!(normalize_city("Halle an der Saale"), "halle a d saale");
        assert_eq!(normalize_city("Alt-Mölln"), normalize_city("Alt Mölln"));
        assert_eq!(
            normalize_city("Bad Homburg vor der Höhe"),
            normalize_city("Bad Homburg v. d. Höhe, Stadt")
        );
        assert_eq!(
            normalize_city("Altenmarkt an der Alz"),
            normalize_city("Altenmarkt a.d.Alz")
        );
        assert_eq!(
            normalize_city("St. Ingbert"),
            normalize_city("Sankt Ingbert")
        );
        assert_ne!(
            normalize_city("Frankfurt (Oder)"),
            normalize_city("Frankfurt am Main")
        );
    }

    #[test]
    fn cores() {
        assert_eq!(core("Halle (Saale), Stadt"), "halle");
        assert_eq!(core("Frankfurt am Main"), "frankfurt");
        assert_eq!(core("Frankfurt (Oder)"), "frankfurt");
        assert_eq!(core("Bautzen / Budyšin, Stadt"), "bautzen");
        assert_eq!(core("Auerbach i.d.OPf., St"), "auerbach");
        assert_eq!(core("Stadt Wehlen, Stadt"), "wehlen");
        assert_eq!(core("Bad Soden am Taunus"), "bad soden");
    }
}

//! Splitting the one-line street of the API into the street's name and its house number: for
//! ELSTER's `Str`, `HausNr` and `HausNrZu`, and for finding an address in Berlin's register.

/// A street split for `StrAdr`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HouseNumber<'a> {
    /// `Str`: the street name.
    pub street: &'a str,
    /// `HausNr`: the digits of the house number; `None` when no house number was recognised
    /// (the whole text is then the street).
    pub number: Option<&'a str>,
    /// `HausNrZu`: what follows the digits, a letter (`a`) or a range (`-14`, `/2`), without
    /// spaces; `None` when nothing follows.
    pub suffix: Option<String>,
}

/// Splits `"Musterstraße 1"` into `Musterstraße` / `1`, `"Hafenstraße 5a"` into
/// `Hafenstraße` / `5` / `a`, `"Am Markt 12-14"` into `Am Markt` / `12` / `-14`.
///
/// The house number starts at the leftmost whitespace-separated token (not the first) that
/// starts with a digit and from which the rest of the text is at most 6 digits and a
/// recognisable addition: up to two letters, optionally followed by `-` or `/` and digits (and
/// one letter), spaces ignored (`"5 a"`, `"12 - 14"`). Otherwise (`"Straße des 17. Juni"`, no digits at all, or nothing
/// before the number) the whole text is the street and there is no house number.
pub fn split_street(text: &str) -> HouseNumber<'_> {
    let text = text.trim();
    let whole = HouseNumber {
        street: text,
        number: None,
        suffix: None,
    };
    // Byte offsets of the starts of whitespace-separated tokens.
    let mut starts = Vec::new();
    let mut prev_ws = true;
    for (i, c) in text.char_indices() {
        if !c.is_whitespace() && prev_ws {
            starts.push(i);
        }
        prev_ws = c.is_whitespace();
    }
    // The leftmost token starting with a digit (after the first token) from which the rest
    // of the text is a house number with an addition.
    for &start in starts.iter().skip(1) {
        if !text[start..].starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let tail = &text[start..];
        let digits_end = tail
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(tail.len());
        let number = &tail[..digits_end];
        let rest: String = tail[digits_end..]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if number.len() <= 6 && is_addition(&rest) {
            return HouseNumber {
                street: text[..start].trim_end(),
                number: Some(number),
                suffix: (!rest.is_empty()).then_some(rest),
            };
        }
    }
    whole
}

/// `""`, `"a"`, `"ab"`, `"-14"`, `"/2"`, `"a-c"`, `"-14a"`: letters (at most two), then
/// optionally `-` or `/` with digits or one letter, then optionally one letter.
fn is_addition(rest: &str) -> bool {
    let b = rest.as_bytes();
    let mut i = 0;
    while i < b.len() && i < 2 && b[i].is_ascii_alphabetic() {
        i += 1;
    }
    if i < b.len() && (b[i] == b'-' || b[i] == b'/') {
        i += 1;
        let digits_from = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == digits_from {
            // "a-c": a letter range.
            if i < b.len() && b[i].is_ascii_alphabetic() {
                i += 1;
            } else {
                return false;
            }
        } else if i < b.len() && b[i].is_ascii_alphabetic() {
            i += 1;
        }
    }
    i == b.len() && rest.len() <= 10
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(s: &str) -> (&str, Option<&str>, Option<String>) {
        let h = split_street(s);
        (h.street, h.number, h.suffix)
    }

    #[test]
    fn splits_street_and_house_number() {
        assert_eq!(parts("Musterstraße 1"), ("Musterstraße", Some("1"), None));
        assert_eq!(
            parts("Hafenstraße 5a"),
            ("Hafenstraße", Some("5"), Some("a".into()))
        );
        assert_eq!(
            parts("Am Markt 12-14"),
            ("Am Markt", Some("12"), Some("-14".into()))
        );
        assert_eq!(
            parts("Am Markt 12 - 14"),
            ("Am Markt", Some("12"), Some("-14".into()))
        );
        assert_eq!(
            parts("Hauptstr. 5 a"),
            ("Hauptstr.", Some("5"), Some("a".into()))
        );
        assert_eq!(
            parts("Rue de Rivoli 10"),
            ("Rue de Rivoli", Some("10"), None)
        );
        assert_eq!(
            parts("Straße des 17. Juni 100"),
            ("Straße des 17. Juni", Some("100"), None)
        );
        assert_eq!(
            parts("  Kurfürstendamm   100  "),
            ("Kurfürstendamm", Some("100"), None)
        );
        assert_eq!(
            parts("Lindenweg 3/2"),
            ("Lindenweg", Some("3"), Some("/2".into()))
        );
    }

    #[test]
    fn keeps_the_whole_text_when_no_house_number_is_recognised() {
        for s in [
            "Straße des 17. Juni",
            "Marktplatz",
            "7 Oaks Road",
            "Weg 12 Hinterhaus",
        ] {
            assert_eq!(parts(s), (s, None, None), "{s}");
        }
    }
}

//! The character set of ELSTER documents, and the transliteration of DIN 91379 text into it.
//!
//! ELSTER's base string type (`BaseStringSType` of its `headerbasis` schema, "KONSENS-Vorgabe
//! VDMZulZeichensatz") admits printable ISO 8859-15 (Latin-9) only. The list of characters
//! ELSTER supports that `tech4germany/steuerlotse` keeps (`webapp/app/forms/valid_characters.py`)
//! is that set without the no-break space, `©`, the soft hyphen and `·`; we use that narrower
//! list ([`is_elster_char`]), so a document we write passes either reading.
//!
//! The API accepts DIN 91379 (String.Latin+ 1.3), which is much larger: `Ł`, `ő`, `ș`, `Ǻ`,
//! letters with combining marks. The record and the PDFs keep the text as given; the ELSTER XML
//! carries [`transliterate`]d text, and the case says which fields differ (docs/elster.md,
//! "Characters"). The transliteration, character by character (a base letter with its combining
//! marks is one unit):
//!
//! 1. A character ELSTER supports stays.
//! 2. A letter with diacritics loses them from the last until what is left is supported:
//!    `Ǻ` (A, ring, acute) becomes `Å`, `ő` becomes `o`, `ș` becomes `s`, `C̨̆` becomes `C`.
//! 3. A letter without a decomposition becomes its base letter as DIN 91379's search form
//!    (`latin_list_search_form_1.3.txt`) gives it, in the letter's own case (`Ł` → `L`,
//!    `ł` → `l`, `Đ` → `D`, `ı` → `i`, `Ĳ` → `IJ`, `Ə` → `E`), except `ẞ` → `ß`, as the
//!    public FsE implementation does, and `ŉ` → `'n`, its compatibility decomposition.
//! 4. Non-letters become their plain equivalents (`’` → `'`, `¼` → `1/4`, `©` → `(C)`,
//!    `·` → `.`); a combining mark on its own is dropped. `¤` (the generic currency sign) has
//!    no equivalent and becomes `*`.
//!
//! Anything else (never DIN 91379 text, which the API checks first) becomes `?`.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Whether ELSTER supports `c`: printable ISO 8859-15 without the no-break space, `©`, the soft
/// hyphen and `·`.
pub fn is_elster_char(c: char) -> bool {
    match c as u32 {
        0x20..=0x7E => true,
        // ISO 8859-15 replaced ¤ ¦ ¨ ´ ¸ ¼ ½ ¾ of Latin-1 (with € Š š Ž ž Œ œ Ÿ); the no-break
        // space, ©, the soft hyphen and · are not in ELSTER's list.
        0xA0 | 0xA4 | 0xA6 | 0xA8 | 0xA9 | 0xAD | 0xB4 | 0xB7 | 0xB8 | 0xBC..=0xBE => false,
        0xA1..=0xFF => true,
        _ => matches!(c, '€' | 'Š' | 'š' | 'Ž' | 'ž' | 'Œ' | 'œ' | 'Ÿ'),
    }
}

/// Whether every character of `text` is one ELSTER supports.
pub fn is_elster_text(text: &str) -> bool {
    text.chars().all(is_elster_char)
}

/// `text` in ELSTER's character set (see the module documentation); borrowed when it is
/// already.
pub fn transliterate(text: &str) -> Cow<'_, str> {
    if is_elster_text(text) {
        return Cow::Borrowed(text);
    }
    let decomposed: Vec<char> = text.nfd().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < decomposed.len() {
        let mut end = i + 1;
        while end < decomposed.len() && is_combining_mark(decomposed[end]) {
            end += 1;
        }
        unit(&decomposed[i..end], &mut out);
        i = end;
    }
    Cow::Owned(out)
}

/// One base character with the combining marks that follow it.
fn unit(chars: &[char], out: &mut String) {
    let (base, marks) = (chars[0], &chars[1..]);
    if is_combining_mark(base) {
        // A mark with nothing to sit on.
        return;
    }
    // Drop marks from the last until the composed rest is supported.
    for keep in (0..=marks.len()).rev() {
        let composed: String = std::iter::once(base)
            .chain(marks[..keep].iter().copied())
            .nfc()
            .collect();
        if is_elster_text(&composed) {
            out.push_str(&composed);
            return;
        }
    }
    out.push_str(replacement(base));
}

/// The replacement of a character that no dropping of marks makes supported.
fn replacement(c: char) -> &'static str {
    match c {
        // Letters: the base letter of DIN 91379's search form, in the letter's case.
        'Đ' => "D",
        'đ' => "d",
        'Ħ' => "H",
        'ħ' => "h",
        'ı' => "i",
        'Ĳ' => "IJ",
        'ĳ' => "ij",
        'ĸ' => "k",
        'Ŀ' => "L",
        'ŀ' => "l",
        'Ł' => "L",
        'ł' => "l",
        'ŉ' => "'n",
        'Ŋ' => "N",
        'ŋ' => "n",
        'Ŧ' => "T",
        'ŧ' => "t",
        'Ƈ' => "C",
        'ƈ' => "c",
        'Ə' => "E",
        'ə' => "e",
        'Ɨ' => "I",
        'ɨ' => "i",
        'Ʒ' => "Z",
        'ʒ' => "z",
        'Ǥ' => "G",
        'ǥ' => "g",
        'ẞ' => "ß",
        // Non-letters.
        '\u{A0}' => " ",
        '¨' | 'ʺ' | '″' | '“' | '”' | '„' => "\"",
        '´' | 'ʹ' | 'ʾ' | 'ʿ' | 'ˈ' | '’' | '‘' | '‚' | '′' => "'",
        'ˌ' => ",",
        '‡' => "+",
        '·' => ".",
        '©' => "(C)",
        '¤' => "*",
        '¦' => "|",
        '¸' => ",",
        '¼' => "1/4",
        '½' => "1/2",
        '¾' => "3/4",
        '\u{AD}' => "",
        _ => "?",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character and sequence of the DIN 91379 groups the API accepts (letters, N1-N3,
    /// combining diacritics), from the bundled list.
    fn din91379_entries() -> Vec<(String, String)> {
        include_str!("../data/din91379/latin_list_1.3.txt")
            .lines()
            .filter_map(|line| {
                let parts: Vec<&str> = line.split(';').map(str::trim).collect();
                if !matches!(
                    parts.first(),
                    Some(&("bll" | "bnlreq" | "bnl" | "bnlopt" | "dc"))
                ) {
                    return None;
                }
                let text: String = parts[2]
                    .split_whitespace()
                    .map(|h| char::from_u32(u32::from_str_radix(h, 16).unwrap()).unwrap())
                    .collect::<String>()
                    .nfc()
                    .collect();
                Some((parts[0].to_owned(), text))
            })
            .collect()
    }

    #[test]
    fn every_din91379_character_outside_latin9_is_transliterated() {
        let entries = din91379_entries();
        assert_eq!(entries.len(), 753, "the bundled list changed");
        let mut outside = 0;
        for (group, text) in &entries {
            let t = transliterate(text);
            assert!(is_elster_text(&t), "{text:?} -> {t:?}");
            assert!(
                !t.contains('?') || text == "?",
                "{text:?} has no transliteration"
            );
            if is_elster_text(text) {
                assert_eq!(t, *text, "{text:?} is supported and must stay");
                continue;
            }
            outside += 1;
            // A letter (with or without marks) stays a letter; only a lone mark may vanish.
            if group == "bll" {
                assert!(
                    !t.is_empty() && t.chars().all(|c| c.is_alphabetic() || c == '\''),
                    "{text:?} -> {t:?}"
                );
                // And keeps its case (but for ẞ, which becomes ß as in the reference).
                let upper = text.chars().next().unwrap().is_uppercase() && text != "ẞ";
                assert_eq!(
                    t.chars()
                        .find(|c| c.is_alphabetic())
                        .unwrap()
                        .is_uppercase(),
                    upper,
                    "{text:?} -> {t:?}"
                );
            } else if group != "dc" {
                assert!(!t.is_empty(), "{text:?}");
            }
        }
        // 528 letters and sequences, 20 marks, 10 N1, 6 N3 of the list are outside ISO 8859-15;
        // © and · are in it but not in ELSTER's list.
        assert_eq!(outside, 566);
    }

    #[test]
    fn names_as_the_docs_show_them() {
        for (given, xml) in [
            ("Łukasiewicz", "Lukasiewicz"),
            ("Józef Piłsudski", "Józef Pilsudski"),
            ("Ştefan Ţiriac", "Stefan Tiriac"),
            ("Erdoğan", "Erdogan"),
            ("Nguyễn", "Nguyên"),
            ("Ǻsa", "Åsa"),
            ("Đorđević", "Dordevic"),
            ("ĲSSELMEER", "IJSSELMEER"),
            ("Straẞe", "Straße"),
            ("K\u{35F}Han", "KHan"),
            ("O’Brien", "O'Brien"),
            ("Paraŀlel", "Parallel"),
            ("½ Anteil", "1/2 Anteil"),
            ("Müller-Lüdenscheidt", "Müller-Lüdenscheidt"),
            ("Œuvre Šárka Žižka Ÿves €", "Œuvre Šárka Žižka Ÿves €"),
        ] {
            assert_eq!(transliterate(given), xml, "{given}");
        }
        assert!(matches!(transliterate("Mustermann"), Cow::Borrowed(_)));
    }

    #[test]
    fn the_set_is_elsters_list() {
        let supported: String = (0u32..0x3000)
            .filter_map(char::from_u32)
            .filter(|c| is_elster_char(*c))
            .collect();
        // 95 printable ASCII characters, 84 of Latin-1's upper half, 8 of ISO 8859-15's own.
        assert_eq!(supported.chars().count(), 95 + 84 + 8);
        for c in [
            '\u{1F}', '\u{7F}', '\u{85}', '\u{A0}', '©', '·', '¤', 'Ł', '’',
        ] {
            assert!(!is_elster_char(c), "{c:?}");
        }
        for c in ['ß', 'ÿ', '€', '§', 'Æ', '×'] {
            assert!(is_elster_char(c), "{c:?}");
        }
    }
}

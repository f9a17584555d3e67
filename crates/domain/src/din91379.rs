//! DIN 91379 ("String.Latin+ 1.3"): the characters that may appear in text that lands on
//! official forms (docs/api/trade-registration.md "Field rules").
//!
//! Data types: **A** (names of natural persons) = letters (`bll`) + N1 non-letters (`bnlreq`) +
//! combining diacritics (`dc`); **B** (names of legal persons, addresses) = A + N2 (`bnl`);
//! **C** (other text) = B + N3 (`bnlopt`). The character list is bundled from
//! String-Latin/DIN-91379-Characters-and-Sequences (CC BY 4.0), `data/din91379/`.
//!
//! Text is NFC-normalised first; then every character must belong to the type, or be part of
//! one of the normative sequences (a few use marks outside `dc`, such as `K͟H`).

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use unicode_normalization::UnicodeNormalization;

const LIST: &str = include_str!("../data/din91379/latin_list_1.3.txt");

/// A DIN 91379 data type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextType {
    /// Names of natural persons.
    A,
    /// Names of legal persons, addresses, authorities.
    B,
    /// Any other text.
    C,
}

impl TextType {
    fn label(self) -> &'static str {
        match self {
            TextType::A => "names of persons (DIN 91379 data type A)",
            TextType::B => "names and addresses (DIN 91379 data type B)",
            TextType::C => "text on forms (DIN 91379 data type C)",
        }
    }
}

struct Tables {
    /// Single characters allowed per type.
    a: HashSet<char>,
    b: HashSet<char>,
    c: HashSet<char>,
    /// Normative sequences (type A and up), keyed by their first character, longest first.
    sequences: HashMap<char, Vec<Vec<char>>>,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut t = Tables {
            a: HashSet::new(),
            b: HashSet::new(),
            c: HashSet::new(),
            sequences: HashMap::new(),
        };
        for line in LIST.lines() {
            let parts: Vec<&str> = line.split(';').map(str::trim).collect();
            if parts.len() < 3 {
                continue;
            }
            let chars: Vec<char> = parts[2]
                .split_whitespace()
                .filter_map(|h| u32::from_str_radix(h, 16).ok())
                .filter_map(char::from_u32)
                .collect();
            let types: &[TextType] = match parts[0] {
                "bll" | "bnlreq" | "dc" => &[TextType::A, TextType::B, TextType::C],
                "bnl" => &[TextType::B, TextType::C],
                "bnlopt" => &[TextType::C],
                _ => &[],
            };
            match (parts[1], chars.as_slice()) {
                ("char", [c]) => {
                    for ty in types {
                        match ty {
                            TextType::A => t.a.insert(*c),
                            TextType::B => t.b.insert(*c),
                            TextType::C => t.c.insert(*c),
                        };
                    }
                }
                ("seq", [first, ..]) if !types.is_empty() => {
                    t.sequences.entry(*first).or_default().push(chars.clone());
                }
                _ => {}
            }
        }
        for seqs in t.sequences.values_mut() {
            seqs.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
        t
    })
}

/// The first character of `text` (already NFC) that is not allowed in `ty`.
fn first_disallowed(text: &[char], ty: TextType) -> Option<char> {
    let t = tables();
    let set = match ty {
        TextType::A => &t.a,
        TextType::B => &t.b,
        TextType::C => &t.c,
    };
    let mut i = 0;
    'outer: while i < text.len() {
        if let Some(seqs) = t.sequences.get(&text[i]) {
            for seq in seqs {
                if text[i..].starts_with(seq) {
                    i += seq.len();
                    continue 'outer;
                }
            }
        }
        if !set.contains(&text[i]) {
            return Some(text[i]);
        }
        i += 1;
    }
    None
}

/// Why a text is not allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disallowed {
    pub character: char,
    pub ty: TextType,
}

impl std::fmt::Display for Disallowed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = self.character;
        let shown = if c.is_control() {
            String::new()
        } else {
            format!(" '{c}'")
        };
        write!(
            f,
            "U+{:04X}{shown} is not allowed in {}",
            c as u32,
            self.ty.label()
        )
    }
}

/// NFC-normalises `text` and checks it against `ty`; returns the normalised text.
pub fn check(text: &str, ty: TextType) -> Result<String, Disallowed> {
    let normalised: String = text.nfc().collect();
    let chars: Vec<char> = normalised.chars().collect();
    match first_disallowed(&chars, ty) {
        None => Ok(normalised),
        Some(character) => Err(Disallowed { character, ty }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin_names_pass_and_normalise() {
        // "é" decomposed becomes the precomposed character.
        assert_eq!(check("Rene\u{301}", TextType::A).unwrap(), "René");
        for name in [
            "Erika Mustermann",
            "Łukasz Żółć",
            "ŉ",
            "L\u{325}",
            "O'Connor-Smith",
            "K\u{35F}H",
            "Ǹ",
        ] {
            assert!(check(name, TextType::A).is_ok(), "{name}");
        }
    }

    #[test]
    fn types_nest() {
        // Digits are N2: fine in an address (B), not in a person's name (A).
        assert!(check("Musterstraße 12a", TextType::B).is_ok());
        let e = check("Erika 2", TextType::A).unwrap_err();
        assert_eq!(e.character, '2');
        // ¼ is N3: only in other text (C).
        assert!(check("¼ Anteil", TextType::B).is_err());
        assert!(check("¼ Anteil", TextType::C).is_ok());
    }

    #[test]
    fn foreign_scripts_and_controls_fail_with_the_character() {
        let e = check("Жанна", TextType::A).unwrap_err();
        assert_eq!(
            e.to_string(),
            "U+0416 'Ж' is not allowed in names of persons (DIN 91379 data type A)"
        );
        assert_eq!(check("a\nb", TextType::C).unwrap_err().character, '\n');
        assert_eq!(check("x\u{0}", TextType::C).unwrap_err().character, '\u{0}');
        assert!(check("😀", TextType::C).is_err());
        assert!(check("Müller\u{200B}", TextType::A).is_err());
        // A lone combining mark outside the list is refused.
        assert!(check("a\u{483}", TextType::A).is_err());
    }
}

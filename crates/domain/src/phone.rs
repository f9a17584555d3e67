//! A telephone number as the ELSTER questionnaire asks for it: the international prefix, the
//! area code (Vorwahl) and the subscriber number, apart (`Komm/Tel{IntVorw, NatVorw, RufNr}`
//! in the reference implementation, which fills `IntVorw` with `+49` and keeps the number only
//! when both other parts are there, its rule `Tel_vollstaendig`; docs/elster.md).
//!
//! The API takes one line ([`crate::rules::phone`]). Where the area code ends is not in the
//! digits themselves (German area codes have 2 to 5 digits), so a German number must write it
//! apart: `+49 30 12345678`, `030 12345678`, `030/12345678`, `(030) 12345678`,
//! `+49 (0)30 12345678`. The first group after the country code or the trunk `0` is the area
//! code, every digit after it the subscriber number.

/// What a phone line is, for the questionnaire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhoneParts {
    /// A German number: its area code without the trunk `0` (`30`, `170`) and the
    /// subscriber number, digits only.
    German { area: String, number: String },
    /// A number with another country code: the reference files German numbers only.
    Foreign,
    /// A German number whose area code is not written apart (`+493012345678`).
    Unsplit,
}

/// Splits `line` (a number [`crate::rules::phone`] accepted).
pub fn parts(line: &str) -> PhoneParts {
    let t = line.trim();
    let national = if let Some(rest) = t.strip_prefix("+49").or_else(|| t.strip_prefix("0049")) {
        // "+49 (0)30 ..." writes the trunk 0 it drops.
        let rest = rest.trim_start();
        rest.strip_prefix("(0)").unwrap_or(rest).to_owned()
    } else if t.starts_with('+') || t.starts_with("00") {
        return PhoneParts::Foreign;
    } else {
        // "030 ...", "(030) ...": the trunk 0 before the area code.
        let rest = t.strip_prefix('(').unwrap_or(t);
        match rest.strip_prefix('0') {
            Some(r) => r.to_owned(),
            None => return PhoneParts::Unsplit,
        }
    };
    let separator = |c: char| c.is_whitespace() || "/-().".contains(c);
    let mut groups = national.split(separator).filter(|g| !g.is_empty());
    let Some(area) = groups.next() else {
        return PhoneParts::Unsplit;
    };
    let number: String = groups.collect::<Vec<_>>().concat();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(area)
        || !(2..=5).contains(&area.len())
        || area.starts_with('0')
        || !digits(&number)
        || number.len() < 3
    {
        return PhoneParts::Unsplit;
    }
    PhoneParts::German {
        area: area.to_owned(),
        number,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn german(area: &str, number: &str) -> PhoneParts {
        PhoneParts::German {
            area: area.into(),
            number: number.into(),
        }
    }

    #[test]
    fn german_numbers_split_at_the_area_code() {
        for (line, want) in [
            ("+49 30 12345678", german("30", "12345678")),
            ("+49 30 123 456 78", german("30", "12345678")),
            ("0049 89 1234567", german("89", "1234567")),
            ("030 12345678", german("30", "12345678")),
            ("030/12345678", german("30", "12345678")),
            ("(030) 12345678", german("30", "12345678")),
            ("+49 (0)30 12345678", german("30", "12345678")),
            ("+49 170 1234567", german("170", "1234567")),
            ("04131-123456", german("4131", "123456")),
            ("+49 (30) 987 654-0", german("30", "9876540")),
        ] {
            assert_eq!(parts(line), want, "{line}");
        }
        for line in [
            "+493012345678",
            "03012345678",
            "12345678",
            "+49 0 123",
            "+49 30 12",
        ] {
            assert_eq!(parts(line), PhoneParts::Unsplit, "{line}");
        }
        for line in ["+33 1 42 60 00 00", "0033 1 42600000", "+48 600 123 456"] {
            assert_eq!(parts(line), PhoneParts::Foreign, "{line}");
        }
    }
}

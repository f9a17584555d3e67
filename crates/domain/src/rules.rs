//! Field rules shared by every request: reading a JSON document field by field and recording
//! every broken rule with its path, so one answer names all of them.
//!
//! Each reader returns `Option<T>`: `None` when the value is missing or broken (the violation is
//! recorded), so callers carry on and find the next one.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use time::{Date, OffsetDateTime};

use crate::Violations;
use crate::country::CountryCode;
use crate::din91379::{self, TextType};

/// A JSON object being read, with its path and the violations found so far.
pub struct Obj<'v> {
    map: &'v Map<String, Value>,
    path: String,
}

/// Appends `name` to `path` (`owners[0]` + `dob` -> `owners[0].dob`).
pub fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// `value` as an object whose keys are all in `allowed`; unknown keys are `unknown_field`.
pub fn object<'v>(
    value: &'v Value,
    path: &str,
    allowed: &[&str],
    errs: &mut Violations,
) -> Option<Obj<'v>> {
    let Value::Object(map) = value else {
        errs.push(
            if path.is_empty() { "body" } else { path },
            "invalid_type",
            "must be an object",
        );
        return None;
    };
    for key in map.keys() {
        if !allowed.contains(&key.as_str()) {
            errs.push(join(path, key), "unknown_field", "is not a known field");
        }
    }
    Some(Obj {
        map,
        path: path.to_string(),
    })
}

impl<'v> Obj<'v> {
    pub fn path(&self, name: &str) -> String {
        join(&self.path, name)
    }

    /// The field, or `None` when absent or `null`.
    pub fn opt(&self, name: &str) -> Option<&'v Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// The field; a missing or `null` one is `required`.
    pub fn req(&self, name: &str, errs: &mut Violations) -> Option<&'v Value> {
        let v = self.opt(name);
        if v.is_none() {
            errs.push(self.path(name), "required", "is required");
        }
        v
    }

    pub fn has(&self, name: &str) -> bool {
        self.opt(name).is_some()
    }

    /// The field `name` read by `read` at its path; absent or `null`, it is `None`, and
    /// `required` when `required`.
    pub fn read<T>(
        &self,
        name: &str,
        required: bool,
        errs: &mut Violations,
        read: impl FnOnce(&'v Value, &str, &mut Violations) -> Option<T>,
    ) -> Option<T> {
        let v = if required {
            self.req(name, errs)
        } else {
            self.opt(name)
        }?;
        read(v, &self.path(name), errs)
    }

    /// The field `name`, to be sent exactly when `wanted` is `Some(true)`: missing then, it is
    /// `required` (saying `required`); sent when `wanted` is `Some(false)`, it is `not_allowed`
    /// (saying `not_allowed`). `None` (what decides is itself missing or broken) says nothing.
    pub fn sent_exactly_when(
        &self,
        name: &str,
        wanted: Option<bool>,
        required: &str,
        not_allowed: &str,
        errs: &mut Violations,
    ) {
        match (wanted, self.has(name)) {
            (Some(true), false) => errs.push(self.path(name), "required", required),
            (Some(false), true) => errs.push(self.path(name), "not_allowed", not_allowed),
            _ => {}
        }
    }
}

/// Declares `req_text` and `opt_text`: the required and the optional text field of an [`Obj`],
/// read by `$read` (a reader like [`text`]: value, path, at most so many characters, DIN 91379
/// type, violations).
macro_rules! text_fields {
    ($vis:vis $read:path) => {
        $vis fn req_text(o: &$crate::rules::Obj, name: &str, max: usize, ty: $crate::din91379::TextType, e: &mut $crate::Violations) -> Option<String> {
            o.read(name, true, e, |v, path, e| $read(v, path, max, ty, e))
        }

        $vis fn opt_text(o: &$crate::rules::Obj, name: &str, max: usize, ty: $crate::din91379::TextType, e: &mut $crate::Violations) -> Option<String> {
            o.read(name, false, e, |v, path, e| $read(v, path, max, ty, e))
        }
    };
}
pub(crate) use text_fields;

/// The required field `name` of `o`, one of the values of a kebab-case enum.
pub fn req_enum<T: DeserializeOwned>(
    o: &Obj,
    name: &str,
    allowed: &[&str],
    errs: &mut Violations,
) -> Option<T> {
    o.read(name, true, errs, |v, path, errs| {
        enumeration(v, path, allowed, errs)
    })
}

pub fn string<'v>(v: &'v Value, path: &str, errs: &mut Violations) -> Option<&'v str> {
    match v {
        Value::String(s) => Some(s),
        _ => {
            errs.push(path, "invalid_type", "must be a string");
            None
        }
    }
}

pub fn boolean(v: &Value, path: &str, errs: &mut Violations) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        _ => {
            errs.push(path, "invalid_type", "must be true or false");
            None
        }
    }
}

/// Free text: trimmed, NFC-normalised, not empty, at most `max` characters, DIN 91379 `ty`.
pub fn text(
    v: &Value,
    path: &str,
    max: usize,
    ty: TextType,
    errs: &mut Violations,
) -> Option<String> {
    let s = string(v, path, errs)?.trim();
    if s.is_empty() {
        errs.push(path, "empty", "must not be empty");
        return None;
    }
    let normalised = match din91379::check(s, ty) {
        Ok(n) => n,
        Err(e) => {
            errs.push(path, "invalid_characters", e.to_string());
            return None;
        }
    };
    at_most(normalised, path, max, errs)
}

/// A note for people, never printed on a form (an operator's reason for a step: a trade
/// office's letter, an ELSTER rejection pasted whole): trimmed, NFC-normalised, not empty, at
/// most `max` characters, line breaks (CR LF kept as LF) and tabs allowed, any other control
/// character or a bidirectional override refused, since the text goes to webhooks and
/// operators' screens.
pub fn note(v: &Value, path: &str, max: usize, errs: &mut Violations) -> Option<String> {
    use unicode_normalization::UnicodeNormalization;
    let s = string(v, path, errs)?.trim();
    if s.is_empty() {
        errs.push(path, "empty", "must not be empty");
        return None;
    }
    let normalised: String = s.replace("\r\n", "\n").nfc().collect();
    let bidi = |c: char| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
    if let Some(c) = normalised
        .chars()
        .find(|&c| (c.is_control() && c != '\n' && c != '\t') || bidi(c))
    {
        errs.push(
            path,
            "invalid_characters",
            format!(
                "must not contain U+{:04X} (control or bidirectional override)",
                c as u32
            ),
        );
        return None;
    }
    at_most(normalised, path, max, errs)
}

/// `s` when it has at most `max` characters; else `too_long` on `path`.
fn at_most(s: String, path: &str, max: usize, errs: &mut Violations) -> Option<String> {
    let len = s.chars().count();
    if len > max {
        errs.push(
            path,
            "too_long",
            format!("must be at most {max} characters (is {len})"),
        );
        return None;
    }
    Some(s)
}

/// A city or place name: text of type B without digits.
pub fn city(v: &Value, path: &str, errs: &mut Violations) -> Option<String> {
    let s = text(v, path, 72, TextType::B, errs)?;
    if s.chars().any(|c| c.is_ascii_digit()) {
        errs.push(path, "digits_not_allowed", "must not contain digits");
        return None;
    }
    Some(s)
}

/// One of the values of a kebab-case enum.
pub fn enumeration<T: DeserializeOwned>(
    v: &Value,
    path: &str,
    allowed: &[&str],
    errs: &mut Violations,
) -> Option<T> {
    let s = string(v, path, errs)?;
    match serde_json::from_value::<T>(Value::String(s.to_string())) {
        Ok(t) => Some(t),
        Err(_) => {
            errs.push(
                path,
                "invalid_value",
                format!("must be one of: {}", allowed.join(", ")),
            );
            None
        }
    }
}

/// A real calendar date written `YYYY-MM-DD`.
pub fn date(v: &Value, path: &str, errs: &mut Violations) -> Option<Date> {
    let s = string(v, path, errs)?;
    let format = time::macros::format_description!("[year]-[month]-[day]");
    let shape_ok = s.len() == 10
        && s.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    match Date::parse(s, &format) {
        Ok(d) if shape_ok && d.year() >= 1800 => Some(d),
        _ => {
            errs.push(path, "invalid_date", "must be a real date YYYY-MM-DD");
            None
        }
    }
}

/// A date on or before `today` (issue dates).
pub fn past_date(v: &Value, path: &str, today: Date, errs: &mut Violations) -> Option<Date> {
    let d = date(v, path, errs)?;
    if d > today {
        errs.push(
            path,
            "not_in_past",
            "must be today or earlier (the date in Germany)",
        );
        return None;
    }
    Some(d)
}

/// An instant written in RFC 3339 with its offset (`2026-11-20T14:05:00+01:00`), within
/// `[earliest, latest]` (for a step recorded afterwards: not before its case, not in the future),
/// returned in UTC.
pub fn instant(
    v: &Value,
    path: &str,
    earliest: OffsetDateTime,
    latest: OffsetDateTime,
    errs: &mut Violations,
) -> Option<OffsetDateTime> {
    let s = string(v, path, errs)?;
    let Ok(at) = OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339) else {
        errs.push(
            path,
            "invalid_timestamp",
            "must be an RFC 3339 time with its offset, e.g. 2026-11-20T14:05:00+01:00",
        );
        return None;
    };
    // In UTC, as every time the API answers with, and kept to whole microseconds, as stored.
    // A time whose UTC lies beyond year 9999 (or before year 0) is later (earlier) than any
    // bound: `to_offset` would panic on it.
    let Some(at) = at.checked_to_offset(time::UtcOffset::UTC) else {
        if at.offset().is_negative() {
            errs.push(path, "in_future", "must not lie in the future");
        } else {
            errs.push(path, "too_early", "must not lie before the year 0");
        }
        return None;
    };
    let at = at
        .replace_nanosecond(at.nanosecond() / 1000 * 1000)
        .unwrap_or(at);
    if at > latest {
        errs.push(path, "in_future", "must not lie in the future");
        return None;
    }
    if at < earliest {
        errs.push(
            path,
            "too_early",
            format!(
                "must be {} or later",
                earliest
                    .format(&time::format_description::well_known::Rfc3339)
                    .unwrap_or_default()
            ),
        );
        return None;
    }
    Some(at)
}

/// A German postal code: five digits.
pub fn german_zip(v: &Value, path: &str, errs: &mut Violations) -> Option<String> {
    let s = string(v, path, errs)?.trim();
    if s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit()) {
        Some(s.to_string())
    } else {
        errs.push(
            path,
            "invalid_zip",
            "must be a German postal code of 5 digits",
        );
        None
    }
}

/// Postal code formats of common countries: `9` a digit, `A` a letter, others literal.
fn zip_patterns(country: &str) -> Option<&'static [&'static str]> {
    Some(match country {
        "DE" | "FR" | "IT" | "ES" | "FI" | "HR" | "EE" | "MC" | "SM" | "VA" | "TR" | "UA" => {
            &["99999"]
        }
        "AT" | "CH" | "LI" | "BE" | "DK" | "LU" | "NO" | "HU" | "SI" | "BG" | "CY" | "AU"
        | "NZ" | "ZA" | "TN" | "GE" | "AM" => &["9999"],
        "NL" => &["9999 AA", "9999AA"],
        "PL" => &["99-999"],
        "CZ" | "SK" | "SE" | "GR" => &["999 99", "99999"],
        "PT" => &["9999-999"],
        "US" => &["99999", "99999-9999"],
        "RU" | "IN" | "CN" | "BY" | "KZ" | "SG" | "RO" => &["999999"],
        "JP" => &["999-9999"],
        "BR" => &["99999-999"],
        "LT" => &["LT-99999", "99999"],
        "LV" => &["LV-9999"],
        "IS" => &["999"],
        "IE" => &["A99 AAAA", "A9A AAAA"],
        _ => return None,
    })
}

fn matches_pattern(s: &str, pattern: &str) -> bool {
    s.len() == pattern.len()
        && s.bytes().zip(pattern.bytes()).all(|(c, p)| match p {
            b'9' => c.is_ascii_digit(),
            b'A' => c.is_ascii_alphanumeric(),
            other => c.eq_ignore_ascii_case(&other),
        })
}

/// A postal code for `country`: the country's format where we know it (Germany: 5 digits),
/// otherwise 2 to `max` letters, digits, spaces and hyphens.
pub fn zip_for_country(
    v: &Value,
    path: &str,
    country: Option<&CountryCode>,
    max: usize,
    errs: &mut Violations,
) -> Option<String> {
    let s = string(v, path, errs)?.trim();
    let generic_ok = (2..=max).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b' ' || b == b'-')
        && s.bytes().any(|b| b.is_ascii_alphanumeric());
    if !generic_ok {
        errs.push(
            path,
            "invalid_zip",
            format!("must be 2 to {max} letters, digits, spaces or hyphens"),
        );
        return None;
    }
    if let Some(country) = country
        && let Some(patterns) = zip_patterns(country.as_str())
        && !patterns.iter().any(|p| matches_pattern(s, p))
    {
        let shown: Vec<String> = patterns
            .iter()
            .map(|p| p.replace('9', "#").replace('A', "X"))
            .collect();
        errs.push(
            path,
            "invalid_zip",
            format!(
                "is not a postal code of {} (expected {})",
                country.as_str(),
                shown.join(" or ")
            ),
        );
        return None;
    }
    Some(s.to_string())
}

/// Digits, spaces and `+ ( ) . / -` only, 6 to 32 characters, with at least 5 digits.
pub fn phone(v: &Value, path: &str, errs: &mut Violations) -> Option<String> {
    let s = string(v, path, errs)?.trim();
    let chars_ok = s
        .chars()
        .all(|c| c.is_ascii_digit() || " +()./-".contains(c));
    let len = s.chars().count();
    let digits = s.chars().filter(char::is_ascii_digit).count();
    if !chars_ok || !(6..=32).contains(&len) || digits < 5 {
        errs.push(
            path,
            "invalid_phone",
            "must be 6 to 32 characters: digits, spaces and + ( ) . / - only",
        );
        return None;
    }
    Some(s.to_string())
}

/// An e-mail address: `local@domain.tld`, ASCII or internationalised, no spaces, at most 254
/// characters, a domain of dot-separated labels; NFC-normalised, and printable on the forms
/// that carry it (the GewA 1, the tax summary): DIN 91379 characters, so `müller@bäcker.de`
/// but not `用户@例子.中国`, which would print as question marks.
pub fn email(v: &Value, path: &str, errs: &mut Violations) -> Option<String> {
    let s = string(v, path, errs)?.trim();
    let s = match din91379::check(s, TextType::C) {
        Ok(normalised) => normalised,
        Err(e) => {
            errs.push(path, "invalid_characters", e.to_string());
            return None;
        }
    };
    let s = s.as_str();
    let valid = (|| {
        if s.len() > 254 || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return false;
        }
        let Some((local, domain)) = s.rsplit_once('@') else {
            return false;
        };
        if local.is_empty() || local.len() > 64 || local.contains('@') {
            return false;
        }
        if local.starts_with('.') || local.ends_with('.') || local.contains("..") {
            return false;
        }
        let forbidden_local = "()<>[]\\,;:\"";
        if local.chars().any(|c| forbidden_local.contains(c)) {
            return false;
        }
        let labels: Vec<&str> = domain.split('.').collect();
        labels.len() >= 2
            && labels.iter().all(|l| {
                !l.is_empty()
                    && l.len() <= 63
                    && !l.starts_with('-')
                    && !l.ends_with('-')
                    && l.chars().all(|c| c.is_alphanumeric() || c == '-')
            })
            && labels.last().is_some_and(|tld| tld.chars().count() >= 2)
    })();
    if valid {
        Some(s.to_string())
    } else {
        errs.push(
            path,
            "invalid_email",
            "must be an e-mail address like name@example.com",
        );
        None
    }
}

/// An ISO 3166-1 alpha-2 code that exists (any case).
pub fn country(v: &Value, path: &str, errs: &mut Violations) -> Option<CountryCode> {
    let s = string(v, path, errs)?;
    match CountryCode::parse(s.trim()) {
        Ok(c) => Some(c),
        Err(_) => {
            errs.push(
                path,
                "invalid_country",
                "must be an ISO 3166-1 alpha-2 country code such as DE (or XK for Kosovo)",
            );
            None
        }
    }
}

/// A UUID in its hyphenated form.
pub fn uuid(v: &Value, path: &str, errs: &mut Violations) -> Option<uuid::Uuid> {
    let s = string(v, path, errs)?;
    match uuid::Uuid::try_parse(s) {
        Ok(u) if s.len() == 36 => Some(u),
        _ => {
            errs.push(path, "invalid_uuid", "must be a UUID");
            None
        }
    }
}

/// An array of `min..=max` items; each item is passed to `each` with its path.
pub fn array<'v>(
    v: &'v Value,
    path: &str,
    min: usize,
    max: usize,
    errs: &mut Violations,
) -> Option<&'v [Value]> {
    let Value::Array(items) = v else {
        errs.push(path, "invalid_type", "must be an array");
        return None;
    };
    if items.len() < min || items.len() > max {
        let code = if items.len() < min {
            "too_few"
        } else {
            "too_many"
        };
        errs.push(path, code, format!("must have {min} to {max} entries"));
        return None;
    }
    Some(items)
}

/// Whole euros: a JSON integer (or a number with no fraction) of at most 12 digits.
pub fn whole_euros(v: &Value, path: &str, errs: &mut Violations) -> Option<i64> {
    let n = match v {
        Value::Number(n) => n,
        _ => {
            errs.push(path, "invalid_type", "must be a number of whole euros");
            return None;
        }
    };
    let value = n.as_i64().or_else(|| {
        n.as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
            .map(|f| f as i64)
    });
    match value {
        // `unsigned_abs`: `i64::MIN.abs()` overflows (a panic, or in release a negative value
        // that would pass).
        Some(x) if x.unsigned_abs() <= 999_999_999_999 => Some(x),
        Some(_) => {
            errs.push(path, "out_of_range", "is too large");
            None
        }
        None => {
            errs.push(
                path,
                "not_whole_euros",
                "must be whole euros, without cents",
            );
            None
        }
    }
}

/// A whole number of at least `min`.
pub fn count(v: &Value, path: &str, min: i64, errs: &mut Violations) -> Option<i64> {
    match v.as_i64() {
        Some(n) if n >= min && n <= 999_999 => Some(n),
        Some(_) => {
            errs.push(
                path,
                "out_of_range",
                format!("must be a whole number of at least {min}"),
            );
            None
        }
        None => {
            errs.push(path, "invalid_type", "must be a whole number");
            None
        }
    }
}

/// Euros with at most two decimals (`26`, `26.5`, `26.50`), at least 0, as cents.
pub fn euro_cents(v: &Value, path: &str, errs: &mut Violations) -> Option<i64> {
    let Value::Number(n) = v else {
        errs.push(path, "invalid_type", "must be an amount in euros");
        return None;
    };
    let text = n.to_string();
    let (whole, frac) = text.split_once('.').unwrap_or((&text, ""));
    let frac = frac.trim_end_matches('0');
    let ok = !whole.is_empty()
        && whole.len() <= 9
        && whole.bytes().all(|b| b.is_ascii_digit())
        && frac.len() <= 2
        && frac.bytes().all(|b| b.is_ascii_digit());
    if !ok {
        errs.push(
            path,
            "invalid_amount",
            "must be euros and cents at or above 0, e.g. 26.50",
        );
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    let cents: i64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<2}").parse().ok()?
    };
    Some(whole * 100 + cents)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_need_an_offset_and_lie_within_their_bounds() {
        let earliest = time::macros::datetime!(2026-11-20 12:00 UTC);
        let latest = time::macros::datetime!(2026-11-25 12:00 UTC);
        let of = |v: Value| {
            let mut errs = Violations::default();
            instant(&v, "at", earliest, latest, &mut errs)
                .ok_or_else(|| errs.iter().map(|e| e.code.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(
            of("2026-11-21T14:05:00.1234567+01:00".into()),
            Ok(time::macros::datetime!(2026-11-21 13:05:00.123456 UTC))
        );
        assert_eq!(
            of("2026-11-20T13:00:00+01:00".into()).map(|t| t.offset()),
            Ok(time::UtcOffset::UTC)
        );
        assert_eq!(of("2026-11-20T13:00:00+01:00".into()), Ok(earliest));
        assert_eq!(of("2026-11-25T12:00:00Z".into()), Ok(latest));
        for (bad, code) in [
            ("2026-11-21T14:05:00", "invalid_timestamp"),
            ("2026-11-21", "invalid_timestamp"),
            ("yesterday", "invalid_timestamp"),
            ("2026-11-25T12:00:01Z", "in_future"),
            ("2026-11-20T11:59:59Z", "too_early"),
        ] {
            assert_eq!(of(bad.into()), Err(vec![code.to_string()]), "{bad}");
        }
        assert_eq!(of(Value::from(5)), Err(vec!["invalid_type".to_string()]));
    }

    fn email_of(s: &str) -> Result<String, Vec<String>> {
        let mut errs = Violations::default();
        email(&Value::from(s), "email", &mut errs)
            .ok_or_else(|| errs.iter().map(|e| e.code.to_string()).collect())
    }

    #[test]
    fn emails_latin_and_internationalised() {
        for ok in [
            "kontakt@example.de",
            "erika.mustermann+gewerbe@example.co.uk",
            "müller@bäckerei-müller.de",
            "łukasz@żółw.pl",
        ] {
            assert_eq!(email_of(ok).as_deref(), Ok(ok), "{ok}");
        }
        // Decomposed umlauts are stored composed, as the other text.
        assert_eq!(
            email_of("mu\u{308}ller@example.de").as_deref(),
            Ok("müller@example.de")
        );
        for (bad, code) in [
            ("用户@例子.中国", "invalid_characters"),
            ("erika@пример.рф", "invalid_characters"),
            ("erika\u{1F600}@example.de", "invalid_characters"),
            ("kontakt@", "invalid_email"),
            ("a b@example.de", "invalid_email"),
        ] {
            assert_eq!(email_of(bad), Err(vec![code.to_string()]), "{bad}");
        }
    }

    #[test]
    fn notes_take_what_people_paste_but_no_control_characters() {
        let note = |s: &str| {
            let mut e = Violations::new();
            let r = note(&Value::from(s), "reason", 40, &mut e);
            (r, e.iter().map(|v| v.code.clone()).collect::<Vec<_>>())
        };
        assert_eq!(
            note(" „Gewerbe“ – Zeile 1\r\nZeile\t2 ").0.as_deref(),
            Some("„Gewerbe“ – Zeile 1\nZeile\t2")
        );
        assert_eq!(note("Bescheid 😀").0.as_deref(), Some("Bescheid 😀"));
        for bad in ["a\u{0}b", "a\u{1b}[31m", "a\u{7f}", "a\u{202E}b", "a\rb"] {
            assert_eq!(
                note(bad),
                (None, vec!["invalid_characters".to_string()]),
                "{bad:?}"
            );
        }
        assert_eq!(note("  ").1, ["empty"]);
        assert_eq!(note(&"x".repeat(41)).1, ["too_long"]);
    }
}

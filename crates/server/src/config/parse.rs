//! The value parsers of the settings: each turns the text of one variable or flag into its
//! typed value or says what it expects, and [`Setting`] adds which variable and flag it was.

use std::ffi::OsStr;
use std::fmt::Display;
use std::net::SocketAddr;
use std::ops::{Bound, RangeBounds};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use clap::builder::TypedValueParser;

use super::ConfigError;
use crate::sealing::SealingKey;

type Parse<T> = dyn Fn(&OsStr) -> Result<T, String> + Send + Sync;

/// A clap value parser from a function that knows the form of one setting. Its error names
/// the variable and the flag with the value (hidden for a secret, a password in a URL
/// masked) and what was expected.
#[derive(Clone)]
pub struct Setting<T>(Arc<Parse<T>>);

/// A setting given as text.
pub fn setting<T>(parse: impl Fn(&str) -> Result<T, String> + Send + Sync + 'static) -> Setting<T> {
    Setting(Arc::new(move |value: &OsStr| {
        parse(value.to_str().ok_or("expected UTF-8 text")?)
    }))
}

impl<T: 'static> Setting<T> {
    /// Adds `note` to what the error says is expected.
    pub fn note(self, note: &'static str) -> Self {
        let parse = self.0;
        Setting(Arc::new(move |value: &OsStr| {
            parse(value).map_err(|e| format!("{e} ({note})"))
        }))
    }

    /// The value turned into another type (the check stays this one's).
    pub fn map<U: 'static>(self, f: fn(T) -> U) -> Setting<U> {
        let parse = self.0;
        Setting(Arc::new(move |value: &OsStr| parse(value).map(f)))
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Setting<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        (self.0)(value).map_err(|problem| {
            let text = value.to_string_lossy();
            let error = match arg {
                Some(arg) => ConfigError::of(arg, &text, problem),
                None => ConfigError {
                    var: "a setting".into(),
                    flag: None,
                    value: text.into_owned(),
                    problem,
                },
            };
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("{error}\n"),
            )
            .with_cmd(cmd)
        })
    }
}

fn describe<T: Display + Default + PartialEq>(range: &impl RangeBounds<T>) -> String {
    match (range.start_bound(), range.end_bound()) {
        (Bound::Included(a), Bound::Included(b)) => format!("a whole number from {a} to {b}"),
        (Bound::Included(a), _) if *a != T::default() => format!("a whole number of at least {a}"),
        _ => "a whole number".into(),
    }
}

/// A whole number within `range`.
pub fn whole<T, R>(range: R) -> Setting<T>
where
    T: FromStr + PartialOrd + Display + Default + 'static,
    R: RangeBounds<T> + Send + Sync + 'static,
{
    setting(move |value| match value.trim().parse::<T>() {
        Ok(v) if range.contains(&v) => Ok(v),
        _ => Err(format!("expected {}", describe(&range))),
    })
}

/// Whole seconds within `range`.
pub fn seconds(range: impl RangeBounds<u64> + Send + Sync + 'static) -> Setting<Duration> {
    whole(range).map(Duration::from_secs)
}

/// `true`/`1`/`yes` or `false`/`0`/`no`.
pub fn boolean() -> Setting<bool> {
    setting(|value| match value.trim() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err("expected true or false".into()),
    })
}

/// Text of 1 to 200 printable characters, trimmed.
pub fn line() -> Setting<String> {
    setting(|value| {
        let v = value.trim();
        if v.is_empty() || v.chars().count() > 200 || v.chars().any(char::is_control) {
            Err("must be 1 to 200 printable characters".into())
        } else {
            Ok(v.to_owned())
        }
    })
}

/// A folder that is named (not the empty path).
pub fn folder() -> Setting<PathBuf> {
    Setting(Arc::new(|value: &OsStr| {
        if value.is_empty() {
            Err("must not be empty".into())
        } else {
            Ok(PathBuf::from(value))
        }
    }))
}

pub fn listen() -> Setting<SocketAddr> {
    setting(|value| {
        value
            .parse()
            .map_err(|_| "expected IP:PORT, e.g. 127.0.0.1:8080 or 0.0.0.0:8080".into())
    })
}

/// An absolute http(s) URL without query, without a trailing slash.
pub fn public_url() -> Setting<String> {
    setting(|value| {
        let trimmed = value.trim_end_matches('/');
        let valid = (trimmed.starts_with("http://") || trimmed.starts_with("https://"))
            && trimmed.len() > "https://".len()
            && !trimmed.contains(['?', '#', ' ']);
        if valid {
            Ok(trimmed.to_owned())
        } else {
            Err(
                "expected an absolute http(s) URL without query, e.g. https://filing.example.com"
                    .into(),
            )
        }
    })
}

pub fn database_url() -> Setting<String> {
    setting(|url| {
        let ok = url.starts_with("sqlite:")
            || url.starts_with("postgres://")
            || url.starts_with("postgresql://");
        if ok {
            Ok(url.to_owned())
        } else {
            Err("expected sqlite://PATH or postgres://USER@HOST/DATABASE".into())
        }
    })
}

/// Where in a bucket documents are kept: `s3://BUCKET[/PREFIX]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Location {
    pub bucket: String,
    /// Without leading or trailing slashes; empty for the whole bucket.
    pub prefix: String,
}

impl std::fmt::Display for S3Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.prefix.as_str() {
            "" => write!(f, "s3://{}", self.bucket),
            prefix => write!(f, "s3://{}/{prefix}", self.bucket),
        }
    }
}

/// `s3://BUCKET[/PREFIX]`: a bucket name as S3 allows them (3 to 63 lower-case letters,
/// digits, dots and hyphens), and an optional key prefix.
impl FromStr for S3Location {
    type Err = String;

    fn from_str(url: &str) -> Result<Self, String> {
        let expected = || "expected s3://BUCKET or s3://BUCKET/PREFIX".to_owned();
        let rest = url.strip_prefix("s3://").ok_or_else(expected)?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let bucket_ok = (3..=63).contains(&bucket.len())
            && bucket
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
        if !bucket_ok {
            return Err(expected());
        }
        Ok(S3Location {
            bucket: bucket.to_owned(),
            prefix: prefix.trim_matches('/').to_owned(),
        })
    }
}

pub fn s3_location() -> Setting<S3Location> {
    setting(str::parse)
}

pub fn log_format() -> Setting<super::LogFormat> {
    setting(|value| match value {
        "text" => Ok(super::LogFormat::Text),
        "json" => Ok(super::LogFormat::Json),
        _ => Err("expected `text` or `json`".into()),
    })
}

/// A `tracing` EnvFilter: directives as `EnvFilter` parses them, where a word alone must be a
/// level. (EnvFilter takes any other word alone as a target with every level, so a typo such
/// as `inof` would silently log nothing but that target.)
pub fn log_filter() -> Setting<String> {
    const LEVELS: [&str; 6] = ["error", "warn", "info", "debug", "trace", "off"];
    setting(|value| {
        let expected = "expected a level (error, warn, info, debug, trace, off) and/or \
                        comma-separated TARGET=LEVEL directives, e.g. info,server=debug";
        tracing_subscriber::EnvFilter::builder()
            .parse(value)
            .map_err(|e| format!("{e}; {expected}"))?;
        for directive in value.split(',').map(str::trim).filter(|d| !d.is_empty()) {
            let alone = !directive.contains(['=', '[']);
            if alone && !LEVELS.contains(&directive.to_ascii_lowercase().as_str()) {
                return Err(format!("{directive:?} is not a level; {expected}"));
            }
        }
        Ok(value.to_owned())
    })
}

/// Euros with at most two decimals (`49`, `49.5`, `49.00`) as cents.
pub fn euros(value: &str) -> Result<i64, String> {
    let v = value.trim();
    let (whole, frac) = v.split_once('.').unwrap_or((v, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole)
        || whole.len() > 7
        || (!frac.is_empty() && (!digits(frac) || frac.len() > 2))
        || v.ends_with('.')
    {
        return Err("expected an amount in euros such as 49.00".into());
    }
    let whole: i64 = whole.parse().map_err(|_| "amount too large")?;
    let cents: i64 = format!("{frac:0<2}").parse().unwrap_or(0);
    Ok(whole * 100 + cents)
}

/// The sender name of ELSTER documents.
pub fn elster_text() -> Setting<String> {
    setting(|value| {
        let d = value.trim();
        if d.is_empty() || d.chars().count() > 256 || !domain::latin9::is_elster_text(d) {
            Err(
                "must be 1 to 256 characters of ELSTER's character set (printable ISO 8859-15)"
                    .into(),
            )
        } else {
            Ok(d.to_owned())
        }
    })
}

pub fn signing_secret() -> Setting<String> {
    setting(|value| {
        if value.len() < 32 {
            Err("must be at least 32 characters".into())
        } else {
            Ok(value.to_owned())
        }
    })
}

/// Pauses between webhook attempts: comma-separated seconds.
pub fn retry_schedule() -> Setting<Box<[Duration]>> {
    setting(|value| {
        domain::webhook::parse_retry_schedule(value)
            .map(Vec::into_boxed_slice)
            .map_err(|e| format!("{e}; expected comma-separated seconds such as 5,300,1800"))
    })
}

const KEY_FORM: &str = "expected base64 of exactly 32 bytes, e.g. from `openssl rand -base64 32`";

pub fn sealing_key() -> Setting<SealingKey> {
    setting(|value| SealingKey::parse(value).ok_or_else(|| KEY_FORM.to_owned()))
}

/// Comma-separated sealing keys; empty entries are skipped.
pub fn sealing_keys() -> Setting<Box<[SealingKey]>> {
    setting(|value| {
        value
            .split(',')
            .filter(|v| !v.trim().is_empty())
            .enumerate()
            .map(|(i, v)| {
                SealingKey::parse(v).ok_or_else(|| format!("key {} of the list: {KEY_FORM}", i + 1))
            })
            .collect()
    })
}

/// Bytes per second that earn a body one more second: 0 (none) or at least a KiB/s, below
/// which the rule stops bounding anything (1 B/s would let a 1 MiB JSON body take twelve days).
pub fn min_rate() -> Setting<u64> {
    let rate = whole(1024..=1 << 30);
    setting(move |value| match value.trim() {
        "0" => Ok(0),
        _ => (rate.0)(OsStr::new(value)).map_err(|e| format!("{e}, or 0")),
    })
}

/// Requests at once before the rate applies; `None` (the rate) when set to the empty text, as
/// when unset (an alias: clap would take `Option<Option<_>>` for a flag without a value).
pub type Burst = Option<std::num::NonZeroU32>;

pub fn burst() -> Setting<Burst> {
    setting(|value| match value.trim() {
        "" => Ok(None),
        v => v
            .parse()
            .map(Some)
            .map_err(|_| "expected a whole number of at least 1".into()),
    })
}

//! Request decoding that answers in our error format: JSON bodies whose decoding errors become
//! per-field 422s (wrong type, missing field, unknown field), and path ids that are 404 when
//! malformed.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::HeaderMap;
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use uuid::Uuid;

use crate::error::ApiError;

/// A JSON body decoded into `T`, or the matching error of docs/api/errors.md.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

/// `true` when the content type is `application/json` (parameters such as charset allowed).
pub fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|m| {
            let m = m.trim();
            m.eq_ignore_ascii_case("application/json")
                || (m.len() > 5 && m[m.len() - 5..].eq_ignore_ascii_case("+json"))
        })
        .unwrap_or(false)
}

/// `true` for a `multipart/form-data` content type.
pub fn is_multipart(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("multipart/form-data")
        })
}

/// Reads the whole body within the route's limit, mapping an oversized body to 413.
pub async fn read_body(req: Request) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, &()).await.map_err(|rejection| {
        if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::PayloadTooLarge("the request body is larger than allowed".into())
        } else {
            ApiError::InvalidJson(format!("the request body could not be read: {rejection}"))
        }
    })
}

impl<S, T> FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(req.headers()) {
            return Err(ApiError::UnsupportedMediaType(
                "send the body as application/json".into(),
            ));
        }
        let bytes = read_body(req).await?;
        decode_json(&bytes).map(ApiJson)
    }
}

/// Decodes a JSON object, reporting a malformed document as 400 `INVALID_JSON` and a well-formed
/// one of the wrong shape (also one that is not an object: every request body of the API is one)
/// as a 422 naming the field.
pub fn decode_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // Well-formed as a whole first: the typed decoder streams, so a shape error could come before
    // a syntax error further on. (A quick check; strings are validated fully below when needed.)
    if let Err(syntax) = serde_json::from_slice::<serde::de::IgnoredAny>(bytes)
        && syntax.classify() != serde_json::error::Category::Data
    {
        return Err(ApiError::InvalidJson(syntax_message(&syntax)));
    }
    if bytes.trim_ascii_start().first() != Some(&b'{') {
        fully_well_formed(bytes)?;
        return Err(ApiError::validation(
            "body",
            "invalid_type",
            "must be a JSON object",
        ));
    }
    refuse_duplicate_keys(bytes)?;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        use serde_json::error::Category;
        match e.inner().classify() {
            // A syntax error from the typed decoder is either a string the quick check lets
            // through (a lone surrogate escape) or a shape it cannot take that looks like one
            // (`[1, 2]` for a struct of one field ends in "trailing characters").
            Category::Syntax | Category::Eof | Category::Io => match fully_well_formed(bytes) {
                Err(e) => e,
                Ok(()) => json_error(e),
            },
            Category::Data => json_error(e),
        }
    })?;
    de.end()
        .map_err(|e| ApiError::InvalidJson(syntax_message(&e)))?;
    Ok(value)
}

/// 422 naming every key that appears twice in one object, anywhere in the document. JSON
/// allows such documents and decoders disagree on them (serde_json keeps the last, others the
/// first), so a repeated key is refused rather than guessed at. A document that does not parse
/// passes here; the decoder after this reports it.
pub fn refuse_duplicate_keys(bytes: &[u8]) -> Result<(), ApiError> {
    use serde::de::DeserializeSeed;
    let mut found = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let scan = KeyScan {
        path: String::new(),
        found: &mut found,
    };
    if scan.deserialize(&mut de).is_err() || found.is_empty() {
        return Ok(());
    }
    let mut errs = domain::Violations::new();
    for (path, key) in found {
        errs.push(
            path,
            "duplicate_key",
            format!("the key {key:?} appears more than once in this object; send each key once"),
        );
    }
    Err(ApiError::Validation(errs))
}

/// The most repeated keys one answer names.
const MAX_REPORTED: usize = 100;

/// Walks a JSON document and records `(path, key)` for every repeated key of an object.
struct KeyScan<'a> {
    path: String,
    found: &'a mut Vec<(String, String)>,
}

impl<'de> serde::de::DeserializeSeed<'de> for KeyScan<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeyScan<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let found = self.found;
        let mut i = 0usize;
        while seq
            .next_element_seed(KeyScan {
                path: format!("{}[{i}]", self.path),
                found: &mut *found,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let found = self.found;
        let mut seen = std::collections::HashSet::new();
        let mut reported = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = join_path(&self.path, &key);
            // Each repeated key once per object; at most MAX_REPORTED in all (a hostile body
            // could repeat keys in tens of thousands of objects).
            if !seen.insert(key.clone())
                && reported.insert(key.clone())
                && found.len() < MAX_REPORTED
            {
                found.push((path.clone(), key));
            }
            map.next_value_seed(KeyScan {
                path,
                found: &mut *found,
            })?;
        }
        Ok(())
    }
}

/// 400 `INVALID_JSON` unless the document parses completely, strings included.
fn fully_well_formed(bytes: &[u8]) -> Result<(), ApiError> {
    serde_json::from_slice::<serde_json::Value>(bytes)
        .map(drop)
        .map_err(|e| ApiError::InvalidJson(syntax_message(&e)))
}

/// An optional JSON body: none, `null` or an object. Another content type is 415.
pub fn decode_optional_json<T: DeserializeOwned + Default>(
    headers: &HeaderMap,
    bytes: &[u8],
) -> Result<T, ApiError> {
    if bytes.is_empty() {
        return Ok(T::default());
    }
    if !is_json(headers) {
        return Err(ApiError::UnsupportedMediaType(
            "send no body, or an application/json body".into(),
        ));
    }
    if bytes.trim_ascii() == b"null" {
        return Ok(T::default());
    }
    decode_json(bytes)
}

fn syntax_message(e: &serde_json::Error) -> String {
    match e.classify() {
        serde_json::error::Category::Eof => "the body is not complete JSON".to_string(),
        _ => format!(
            "the body is not well-formed JSON (line {}, column {})",
            e.line(),
            e.column()
        ),
    }
}

/// The message of a serde error without its ` at line L column C` suffix.
fn bare_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    match full.rfind(" at line ") {
        Some(i) => full[..i].to_string(),
        None => full,
    }
}

/// The text between the first pair of backticks in a serde message (`missing field `x``).
fn quoted(msg: &str) -> Option<&str> {
    let start = msg.find('`')? + 1;
    let len = msg[start..].find('`')?;
    Some(&msg[start..start + len])
}

fn join_path(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

fn json_error(err: serde_path_to_error::Error<serde_json::Error>) -> ApiError {
    use serde_json::error::Category;
    let path = err.path().to_string();
    let path = if path == "." { String::new() } else { path };
    let inner = err.into_inner();
    match inner.classify() {
        // The document is well-formed (decode_json checked), so the typed decoder stumbled over
        // its shape, e.g. an array with more elements than the struct it stands for.
        Category::Syntax | Category::Eof | Category::Io => {
            let field = if path.is_empty() { "body".into() } else { path };
            ApiError::validation(field, "invalid_type", "has the wrong shape")
        }
        Category::Data => {
            let msg = bare_message(&inner);
            let (field, code, message) = if msg.starts_with("missing field") {
                let name = quoted(&msg).unwrap_or("?");
                (
                    join_path(&path, name),
                    "required",
                    "is required".to_string(),
                )
            } else if msg.starts_with("unknown field") {
                let name = quoted(&msg).unwrap_or("?");
                // serde_path_to_error already names the unknown key in the path.
                let field = if path.ends_with(name) {
                    path.clone()
                } else {
                    join_path(&path, name)
                };
                let expected = msg
                    .split_once(", expected ")
                    .map(|(_, rest)| format!("; expected {rest}"))
                    .unwrap_or_default();
                (
                    field,
                    "unknown_field",
                    format!("is not a known field{expected}"),
                )
            } else if msg.starts_with("invalid type") {
                (path.clone(), "invalid_type", msg)
            } else if msg.starts_with("unknown variant") {
                let expected = msg
                    .split_once(", expected ")
                    .map(|(_, rest)| format!("must be {rest}"))
                    .unwrap_or(msg.clone());
                (path.clone(), "invalid_value", expected)
            } else {
                (path.clone(), "invalid_value", msg)
            };
            let field = if field.is_empty() {
                "body".to_string()
            } else {
                field
            };
            ApiError::validation(field, code, message)
        }
    }
}

/// Query parameters decoded into `T`; a value of the wrong type is a 422 naming the parameter
/// (like a body field), not the framework's 400.
#[derive(Debug)]
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or("");
        let de = serde_urlencoded::Deserializer::new(url::form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(de)
            .map(ApiQuery)
            .map_err(|e| {
                let field = match e.path().to_string() {
                    p if p == "." || p.is_empty() => "query".to_string(),
                    p => p,
                };
                let message = e.into_inner().to_string();
                let message = if message.contains("digit") || message.contains("number") {
                    "must be an integer".to_string()
                } else {
                    message
                };
                ApiError::validation(field, "invalid_type", message)
            })
    }
}

/// A UUID from the path; anything else is the same 404 as an unknown id, so ids cannot be
/// probed and malformed ones are not a 400.
#[derive(Debug, Clone, Copy)]
pub struct PathId(pub Uuid);

impl<S: Send + Sync> FromRequestParts<S> for PathId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Path(raw): axum::extract::Path<String> =
            axum::extract::Path::from_request_parts(parts, state)
                .await
                .map_err(|_| ApiError::NotFound)?;
        Uuid::parse_str(&raw)
            .map(PathId)
            .map_err(|_| ApiError::NotFound)
    }
}

/// Two UUIDs from the path (a resource below another), with [`PathId`]'s rule: anything that
/// is not a UUID is the same 404 as an unknown id.
#[derive(Debug, Clone, Copy)]
pub struct PathIds(pub Uuid, pub Uuid);

impl<S: Send + Sync> FromRequestParts<S> for PathIds {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Path((a, b)): axum::extract::Path<(String, String)> =
            axum::extract::Path::from_request_parts(parts, state)
                .await
                .map_err(|_| ApiError::NotFound)?;
        match (Uuid::parse_str(&a), Uuid::parse_str(&b)) {
            (Ok(a), Ok(b)) => Ok(PathIds(a, b)),
            _ => Err(ApiError::NotFound),
        }
    }
}

/// A `multipart/form-data` body to read part by part: another content type is 415, a
/// multipart content type without a usable boundary 400 `INVALID_MULTIPART`.
pub async fn multipart(req: axum::extract::Request) -> Result<axum::extract::Multipart, ApiError> {
    use axum::extract::FromRequest;
    if !crate::extract::is_multipart(req.headers()) {
        return Err(ApiError::UnsupportedMediaType(
            "send multipart/form-data".into(),
        ));
    }
    axum::extract::Multipart::from_request(req, &())
        .await
        .map_err(|e| ApiError::InvalidMultipart(format!("not a multipart body: {e}")))
}

/// A multipart error as an answer: over the body limit is 413, anything else 400.
pub fn multipart_error(e: axum::extract::multipart::MultipartError) -> ApiError {
    if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::PayloadTooLarge("the request body is larger than allowed".into())
    } else {
        ApiError::InvalidMultipart(format!(
            "the multipart body cannot be read: {}",
            e.body_text()
        ))
    }
}

/// Reads one multipart part whole, refusing it (413) as soon as it exceeds `limit`.
pub async fn read_part(
    field: &mut axum::extract::multipart::Field<'_>,
    name: &str,
    limit: usize,
) -> Result<bytes::Bytes, ApiError> {
    let mut buf = bytes::BytesMut::new();
    while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
        if buf.len() + chunk.len() > limit {
            return Err(ApiError::PayloadTooLarge(format!(
                "the part `{name}` is larger than {limit} bytes"
            )));
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf.freeze())
}

/// Query parameter `field` read with `parse`; a value that does not parse is recorded in
/// `errs` (`invalid_value`, `message`) and read as absent.
pub fn query_param<T>(
    field: &str,
    value: Option<&str>,
    parse: impl Fn(&str) -> Option<T>,
    message: &str,
    errs: &mut domain::Violations,
) -> Option<T> {
    let raw = value?;
    let parsed = parse(raw);
    if parsed.is_none() {
        errs.push(field, "invalid_value", message);
    }
    parsed
}

/// base64url without padding; the bits past a cursor's bytes are ignored, so that every string
/// of the documented pattern (22 such characters for a row's id, 27 for a delivery attempt's) is
/// a cursor. A cursor names the caller's own last row, never a position in a table every tenant
/// writes to (docs/api/lists.md, issue 52.7).
use base64::Engine as _;

const CURSOR: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    base64::engine::GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(true),
);

/// The opaque `next_cursor` for a page that ends at the row `position`.
pub fn cursor(position: uuid::Uuid) -> String {
    CURSOR.encode(position.as_bytes())
}

/// The row a cursor of [`cursor`] names.
pub fn parse_cursor(s: &str) -> Option<uuid::Uuid> {
    if s.len() != 22 {
        return None;
    }
    uuid::Uuid::from_slice(&CURSOR.decode(s).ok()?).ok()
}

/// The opaque cursor of a delivery attempt: its message and its number.
pub fn attempt_cursor(message: uuid::Uuid, attempt: i32) -> String {
    let mut bytes = [0u8; 20];
    bytes[..16].copy_from_slice(message.as_bytes());
    bytes[16..].copy_from_slice(&attempt.to_be_bytes());
    CURSOR.encode(bytes)
}

/// The attempt a cursor of [`attempt_cursor`] names.
pub fn parse_attempt_cursor(s: &str) -> Option<(uuid::Uuid, i32)> {
    if s.len() != 27 {
        return None;
    }
    let bytes = CURSOR.decode(s).ok()?;
    let message = uuid::Uuid::from_slice(bytes.get(..16)?).ok()?;
    let attempt = i32::from_be_bytes(bytes.get(16..20)?.try_into().ok()?);
    Some((message, attempt))
}

/// Reads a page's cursor (query parameter `field`, parsed by `parse`) and `limit` (1 to 500,
/// default 100), recording what is wrong in `errs`.
pub fn page_params<T>(
    field: &str,
    cursor: Option<&str>,
    parse: impl Fn(&str) -> Option<T>,
    limit: Option<i64>,
    errs: &mut domain::Violations,
) -> (Option<T>, i64) {
    let cursor = cursor.and_then(|c| {
        let parsed = parse(c);
        if parsed.is_none() {
            errs.push(
                field,
                "invalid_value",
                "must be a next_cursor of an earlier page",
            );
        }
        parsed
    });
    let limit = limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        errs.push("limit", "invalid_value", "must be 1 to 500");
    }
    (cursor, limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    fn duplicates(body: &str) -> Vec<(String, String)> {
        match refuse_duplicate_keys(body.as_bytes()) {
            Ok(()) => Vec::new(),
            Err(ApiError::Validation(v)) => v
                .iter()
                .map(|e| (e.field.clone(), e.code.to_string()))
                .collect(),
            Err(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn repeated_keys_are_named_by_path_once_each() {
        assert!(duplicates(r#"{"a": 1, "b": {"a": 2}, "c": [{"a": 1}, {"a": 2}]}"#).is_empty());
        let found =
            duplicates(r#"{"a": 1, "a": 2, "a": 3, "o": [{"x": 1}, {"x": 1, "y": 2, "x": 3}]}"#);
        let fields: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(fields, ["a", "o[1].x"]);
        assert!(found.iter().all(|(_, c)| c == "duplicate_key"));
        // Broken JSON is left to the decoder.
        assert!(duplicates(r#"{"a": 1, "a""#).is_empty());
    }

    /// A body of 1 MiB repeating keys in ~75,000 objects names at most MAX_REPORTED of them
    /// (and each object's check is its own: no scan of what was found before, which made such
    /// a body cost seconds of a worker thread).
    #[test]
    fn many_repeated_keys_are_capped() {
        let body = format!(
            "{{\"x\": [{}]}}",
            vec![r#"{"a":0,"a":0}"#; 75_000].join(",")
        );
        let found = duplicates(&body);
        assert_eq!(found.len(), MAX_REPORTED);
        assert_eq!(found[0].0, "x[0].a");
        assert_eq!(
            found[MAX_REPORTED - 1].0,
            format!("x[{}].a", MAX_REPORTED - 1)
        );
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        dob: String,
        n: u32,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        owners: Vec<Inner>,
        #[serde(default)]
        kind: Option<Kind>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    enum Kind {
        Alpha,
    }

    fn field_error(body: &str) -> (String, String) {
        match decode_json::<Outer>(body.as_bytes()) {
            Err(ApiError::Validation(v)) => {
                let e = v.iter().next().unwrap().clone();
                (e.field, e.code)
            }
            other => panic!("expected validation error, got {other:?}"),
        }
    }

    #[test]
    fn decoding_errors_name_the_field() {
        assert_eq!(
            field_error(r#"{"owners":[{"dob":"x","n":1},{"n":1}]}"#),
            ("owners[1].dob".into(), "required".into())
        );
        assert_eq!(
            field_error(r#"{"owners":[{"dob":"x","n":"one"}]}"#),
            ("owners[0].n".into(), "invalid_type".into())
        );
        assert_eq!(
            field_error(r#"{"owners":[{"dob":"x","n":1,"extra":true}]}"#),
            ("owners[0].extra".into(), "unknown_field".into())
        );
        assert_eq!(
            field_error(r#"{"owners":[],"kind":"beta"}"#),
            ("kind".into(), "invalid_value".into())
        );
        assert_eq!(field_error(r#"{}"#), ("owners".into(), "required".into()));
        assert_eq!(
            field_error(r#"{"owners": {}}"#),
            ("owners".into(), "invalid_type".into())
        );
        // Well-formed documents of the wrong shape are 422, never 400 (found by schemathesis:
        // `[null, null]` used to be "not well-formed JSON").
        assert_eq!(
            field_error(r#"{"owners":[["x", 1, 2]]}"#),
            ("owners[0]".into(), "invalid_type".into())
        );
        for body in [
            "[null, null]",
            "[]",
            "null",
            "1",
            "\"x\"",
            " [{\"dob\":\"x\",\"n\":1}]",
        ] {
            assert_eq!(
                field_error(body),
                ("body".into(), "invalid_type".into()),
                "{body}"
            );
        }
    }

    #[test]
    fn optional_bodies() {
        #[derive(Debug, Default, Deserialize, PartialEq)]
        #[serde(deny_unknown_fields)]
        struct Opt {
            reason: Option<String>,
        }
        let json = {
            let mut h = HeaderMap::new();
            h.insert(CONTENT_TYPE, "application/json".parse().unwrap());
            h
        };
        let none = HeaderMap::new();
        assert_eq!(
            decode_optional_json::<Opt>(&none, b"").unwrap(),
            Opt::default()
        );
        assert_eq!(
            decode_optional_json::<Opt>(&json, b" null ").unwrap(),
            Opt::default()
        );
        assert_eq!(
            decode_optional_json::<Opt>(&json, br#"{"reason":"r"}"#).unwrap(),
            Opt {
                reason: Some("r".into())
            }
        );
        assert!(matches!(
            decode_optional_json::<Opt>(&none, b"{}"),
            Err(ApiError::UnsupportedMediaType(_))
        ));
        assert!(matches!(
            decode_optional_json::<Opt>(&json, b"[]"),
            Err(ApiError::Validation(_))
        ));
    }

    #[test]
    fn malformed_json_is_400() {
        for body in [
            "",
            "{",
            "{\"owners\": [}",
            "{} {}",
            "nul",
            "\"\\ud800\"",
            "{\"owners\": \"\\ud800\"}",
        ] {
            assert!(
                matches!(
                    decode_json::<serde_json::Value>(body.as_bytes()),
                    Err(ApiError::InvalidJson(_))
                ),
                "{body:?}"
            );
        }
        let deep = "[".repeat(10_000);
        assert!(matches!(
            decode_json::<serde_json::Value>(deep.as_bytes()),
            Err(ApiError::InvalidJson(_))
        ));
    }
}

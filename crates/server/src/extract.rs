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

/// A JSON body decoded into `T`, or the matching error of decisions.md §2.
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

/// Decodes JSON, reporting a malformed document as 400 `INVALID_JSON` and a well-formed one of
/// the wrong shape as a 422 naming the field.
pub fn decode_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        // The decoder streams, so a shape error can come before a syntax error further on: a
        // document that is not well-formed as a whole is 400, whatever came first.
        match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
            Err(syntax) if syntax.classify() != serde_json::error::Category::Data => {
                ApiError::InvalidJson(syntax_message(&syntax))
            }
            _ => json_error(e),
        }
    })?;
    de.end()
        .map_err(|e| ApiError::InvalidJson(syntax_message(&e)))?;
    Ok(value)
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
        Category::Syntax | Category::Eof | Category::Io => {
            ApiError::InvalidJson(syntax_message(&inner))
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

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
    }

    #[test]
    fn malformed_json_is_400() {
        for body in ["", "{", "{\"owners\": [}", "{} {}", "nul", "\"\\ud800\""] {
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

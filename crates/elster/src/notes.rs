//! Which texts of a stored tax registration the ELSTER XML carries transliterated.
//!
//! The record and the summary PDF keep every name as given (DIN 91379); the XML carries its
//! ISO 8859-15 spelling ([`domain::latin9::transliterate`]). A case lists the fields where the
//! two differ, so that whoever reads the XML (an operator, the tax office's answer) knows.

use domain::latin9::{is_elster_text, transliterate};
use serde::Serialize;
use serde_json::Value;

/// Record fields that never reach the XML: contact details, the caller's reference, the
/// signature, the address's state, and the answers an operator enters by hand
/// ([`crate::not_in_xml`]).
const NOT_IN_XML: &[&str] = &[
    "attachments",
    "authorized_recipient",
    "bank_account_holder",
    "client_reference",
    "email",
    "phone",
    "place_of_management",
    "signature_path",
    "state",
    "tax_advisor",
];

/// A text the XML spells differently from the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Transliteration {
    /// The field in the case's `registration`, e.g. `directors[0].last_name`.
    #[cfg_attr(feature = "openapi", schema(example = "directors[0].last_name"))]
    pub field: String,
    /// As given (and as in the record and the summary).
    #[cfg_attr(feature = "openapi", schema(example = "Łukasiewicz"))]
    pub value: String,
    /// As written in the XML.
    #[cfg_attr(feature = "openapi", schema(example = "Lukasiewicz"))]
    pub xml_value: String,
}

/// The fields of a stored registration record (a corporation's or a partnership's, as JSON)
/// whose text the ELSTER XML carries transliterated, in the record's order. Fields the XML
/// does not carry are not listed.
pub fn transliterations(record: &Value) -> Vec<Transliteration> {
    let mut out = Vec::new();
    // A corporation's XML writes no address abroad (it has no public form); a partnership's,
    // all of whose names are ours, does.
    let corporation = matches!(
        record.get("legal_form").and_then(Value::as_str),
        Some("gmbh" | "ug")
    );
    walk(record, &mut String::new(), corporation, &mut out);
    out
}

/// Whether `v` is an address object abroad.
fn abroad(v: &Value) -> bool {
    v.get("street").is_some()
        && v.get("country")
            .and_then(Value::as_str)
            .is_some_and(|c| !c.eq_ignore_ascii_case("DE"))
}

fn walk(v: &Value, path: &mut String, corporation: bool, out: &mut Vec<Transliteration>) {
    if corporation && abroad(v) {
        return;
    }
    match v {
        Value::String(s) if !is_elster_text(s) => {
            let spelled = transliterate(s.trim()).trim().to_owned();
            out.push(Transliteration {
                field: path.clone(),
                value: s.clone(),
                xml_value: spelled,
            });
        }
        Value::Object(m) => {
            for (k, child) in m {
                if NOT_IN_XML.contains(&k.as_str()) {
                    continue;
                }
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
                walk(child, path, corporation, out);
                path.truncate(len);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(child, path, corporation, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

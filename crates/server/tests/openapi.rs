//! The OpenAPI document is generated from the code; this snapshot makes every API change visible
//! in review (`cargo insta review` after an intended change).

mod common;

use std::collections::BTreeSet;

use common::{Backend, TestApp};
use server::error::{ApiError, ErrorCode};

#[test]
fn openapi_document_snapshot() {
    let doc = server::openapi::document();
    let value = serde_json::to_value(&doc).expect("serialisable");
    insta::assert_json_snapshot!("openapi", value);
}

#[test]
fn every_error_code_is_documented() {
    // Each documented error response of each path names its code, and the error schema exists.
    let doc = serde_json::to_value(server::openapi::document()).unwrap();
    assert!(doc["components"]["schemas"]["ErrorBody"].is_object());
    let paths = doc["paths"].as_object().unwrap();
    assert!(!paths.is_empty());
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            let responses = op["responses"].as_object().unwrap();
            assert!(
                !responses.is_empty(),
                "{method} {path} documents no response"
            );
            for (status, r) in responses {
                let r = match r["$ref"].as_str() {
                    Some(name) => {
                        let name = name.strip_prefix("#/components/responses/").unwrap();
                        &doc["components"]["responses"][name]
                    }
                    None => r,
                };
                assert!(
                    r["description"].as_str().is_some_and(|d| !d.is_empty()),
                    "{method} {path} {status} has no description"
                );
            }
        }
    }
}

/// The documented partnership payload lists exactly the fields the parser accepts, with the
/// ones the parser asks for in an empty body marked required, so the document cannot drift
/// from the rules.
#[test]
fn gbr_request_schema_matches_the_parser() {
    let doc = serde_json::to_value(server::openapi::document()).unwrap();
    let keys = |name: &str| schema_keys(&doc, name);
    assert_eq!(
        keys("GbrTaxRegistrationRequest"),
        sorted(domain::gbr_request::FIELDS)
    );
    assert_eq!(keys("VatRequest"), sorted(domain::tax_request::VAT_FIELDS));
    assert_eq!(
        keys("IndividualPartner"),
        sorted(&domain::gbr_request::individual_partner_fields())
    );
    assert_eq!(
        keys("EntityPartner"),
        sorted(&domain::gbr_request::entity_partner_fields())
    );
    let empty = domain::gbr_request::parse(&serde_json::json!({}), today(), &|_| true)
        .expect_err("an empty body is refused");
    let required = parser_required(empty, "");
    assert!(required.contains(&"partners".to_string()), "{required:?}");
    assert_eq!(schema_required(&doc, "GbrTaxRegistrationRequest"), required);
    let post = &doc["paths"]["/v1/tax-registration/gbr"]["post"];
    assert_eq!(
        post["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/GbrTaxRegistrationRequest"
    );
    for status in ["201", "403", "404", "409", "422"] {
        assert!(post["responses"][status].is_object(), "{status}");
    }
}

/// The documented sole-proprietor payload lists exactly the fields the parser accepts (its
/// objects too), with the ones an empty body lacks marked required.
#[test]
fn sole_proprietor_request_schema_matches_the_parser() {
    use domain::sole_proprietor_request as r;
    let doc = serde_json::to_value(server::openapi::document()).unwrap();
    let keys = |name: &str| schema_keys(&doc, name);
    assert_eq!(
        keys("SoleProprietorTaxRegistrationRequest"),
        sorted(r::FIELDS)
    );
    assert_eq!(keys("Proprietor"), sorted(r::OWNER_FIELDS));
    assert_eq!(keys("Spouse"), sorted(r::SPOUSE_FIELDS));
    assert_eq!(keys("Prepayments"), sorted(r::PREPAYMENT_FIELDS));
    assert_eq!(keys("EarlierCircumstances"), sorted(r::EARLIER_FIELDS));
    // The trade registration's owner keeps its own schema.
    assert!(keys("Owner").contains(&"place_of_birth".to_string()));
    let empty =
        r::parse(&serde_json::json!({}), today(), &|_| true).expect_err("an empty body is refused");
    let required = parser_required(empty, "");
    assert!(required.contains(&"owner".to_string()), "{required:?}");
    assert_eq!(
        schema_required(&doc, "SoleProprietorTaxRegistrationRequest"),
        required
    );
    let post = &doc["paths"]["/v1/tax-registration/sole-proprietor"]["post"];
    assert_eq!(
        post["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/SoleProprietorTaxRegistrationRequest"
    );
    let examples = post["requestBody"]["content"]["application/json"]["examples"]
        .as_object()
        .expect("examples");
    assert_eq!(examples.len(), 2);
    for status in ["201", "403", "404", "409", "422"] {
        assert!(post["responses"][status].is_object(), "{status}");
    }
}

/// The names of a component schema's properties, sorted.
fn schema_keys(doc: &serde_json::Value, name: &str) -> Vec<String> {
    let mut k: Vec<String> = doc["components"]["schemas"][name]["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("schema {name}"))
        .keys()
        .cloned()
        .collect();
    k.sort();
    k
}

/// A component schema's `required` list, sorted.
fn schema_required(doc: &serde_json::Value, name: &str) -> Vec<String> {
    sorted_strings(&doc["components"]["schemas"][name]["required"])
}

/// A JSON array of strings, sorted; absent is empty.
fn sorted_strings(v: &serde_json::Value) -> Vec<String> {
    let mut r: Vec<String> = v
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    r.sort();
    r
}

/// The fields directly under `prefix` (`""` for the top level, `owners[0].`) that the parser
/// calls `required` in `violations`, sorted.
fn parser_required(violations: domain::Violations, prefix: &str) -> Vec<String> {
    let mut r: Vec<String> = violations
        .iter()
        .filter(|v| v.code == "required")
        .filter_map(|v| v.field.strip_prefix(prefix))
        .filter(|f| !f.contains(['.', '[']))
        .map(str::to_string)
        .collect();
    r.sort();
    r
}

fn sorted(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

fn today() -> time::Date {
    time::OffsetDateTime::now_utc().date()
}

/// The documented UG/GmbH payload is the request as sent, not the stored record (which nests
/// the payroll fields and adds `vat.small_business`): its fields are exactly those the parser
/// accepts, at every level, and its required ones those the parser asks for in an empty body.
#[test]
fn tax_request_schema_matches_the_parser() {
    let doc = serde_json::to_value(server::openapi::document()).unwrap();
    let post = &doc["paths"]["/v1/tax-registration"]["post"];
    assert_eq!(
        post["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/TaxRegistrationRequest"
    );
    assert_eq!(
        schema_keys(&doc, "TaxRegistrationRequest"),
        sorted(domain::tax_request::FIELDS)
    );
    assert_eq!(
        schema_keys(&doc, "VatRequest"),
        sorted(domain::tax_request::VAT_FIELDS)
    );
    assert_eq!(
        schema_keys(&doc, "Director"),
        sorted(domain::tax_request::DIRECTOR_FIELDS)
    );
    assert_eq!(
        schema_keys(&doc, "Notary"),
        sorted(domain::tax_request::NOTARY_FIELDS)
    );
    // A corporation's shareholders add the share's nominal amount to a holder's fields.
    assert_eq!(
        schema_keys(&doc, "IndividualShareholder"),
        sorted(&domain::tax_request::shareholder_individual_fields())
    );
    assert_eq!(
        schema_keys(&doc, "EntityShareholder"),
        sorted(&domain::tax_request::SHAREHOLDER_ENTITY_FIELDS)
    );
    let empty = domain::tax_request::parse(&serde_json::json!({}), today(), &|_| true)
        .expect_err("an empty body is refused");
    let required = parser_required(empty, "");
    assert!(required.contains(&"vat".to_string()), "{required:?}");
    assert_eq!(schema_required(&doc, "TaxRegistrationRequest"), required);
    // The document's own examples are payloads the parser accepts.
    let examples = post["requestBody"]["content"]["application/json"]["examples"]
        .as_object()
        .expect("the tax create documents its examples");
    assert!(examples.len() >= 2, "{examples:?}");
    for (name, example) in examples {
        domain::tax_request::parse(&example["value"], today(), &|_| true)
            .unwrap_or_else(|e| panic!("the documented example {name} is refused: {e:?}"));
    }
}

/// An owner of the trade create is documented as sent: `documents.gewa_1` names the multipart
/// part of an uploaded form (`{file}`), and the required fields are those the parser asks for
/// in an empty owner. The create's answer documents its own `documents` (links) under another
/// name, so neither overwrites the other.
#[test]
fn trade_owner_schema_matches_the_parser() {
    let doc = serde_json::to_value(server::openapi::document()).unwrap();
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["Owner"]["properties"]["documents"]["$ref"],
        "#/components/schemas/OwnerDocuments"
    );
    assert_eq!(schema_keys(&doc, "OwnerDocuments"), ["gewa_1"]);
    assert_eq!(
        schemas["OwnerDocuments"]["properties"]["gewa_1"]["oneOf"][1]["$ref"],
        "#/components/schemas/UploadedDocument",
        "{}",
        schemas["OwnerDocuments"]
    );
    assert_eq!(schema_keys(&doc, "UploadedDocument"), ["file"]);
    assert_eq!(
        schemas["CreatedOwner"]["properties"]["documents"]["$ref"],
        "#/components/schemas/CreatedOwnerDocuments"
    );
    assert_eq!(
        schema_keys(&doc, "CreatedOwnerDocuments"),
        ["gewa_1", "power_of_attorney"]
    );
    let empty_owner = serde_json::json!({"package": "assisted", "owners": [{}]});
    let refused =
        domain::trade_request::parse(&empty_owner, today()).expect_err("an empty owner is refused");
    let required = parser_required(refused, "owners[0].");
    assert!(required.contains(&"signatures".to_string()), "{required:?}");
    assert_eq!(schema_required(&doc, "Owner"), required);
}

/// One error of every `ApiError` variant. The match below does not compile when a variant is
/// added, so a new kind of error cannot miss this test.
fn one_of_each_error() -> Vec<ApiError> {
    let all = vec![
        ApiError::InvalidJson("x".into()),
        ApiError::InvalidMultipart("x".into()),
        ApiError::Unauthorized("x"),
        ApiError::Forbidden("x".into()),
        ApiError::InvalidDownloadLink,
        ApiError::NotFound,
        ApiError::CompanyNotFound,
        ApiError::Conflict {
            code: ErrorCode::InvalidStateTransition,
            message: "x".into(),
        },
        ApiError::AlreadyRegistered {
            kind: "trade registration",
            existing_id: None,
        },
        ApiError::IdempotencyKeyInUse,
        ApiError::IdempotencyKeyReused,
        ApiError::PayloadTooLarge("x".into()),
        ApiError::StorageQuota {
            used: 1,
            quota: 2,
            upload: 3,
        },
        ApiError::UnsupportedMediaType("x".into()),
        ApiError::validation("f", "required", "is required"),
        ApiError::MethodNotAllowed,
        ApiError::RateLimited {
            retry_after_secs: 1,
        },
        ApiError::UploadShareUsed { share: 4 },
        ApiError::Timeout,
        ApiError::BodyTimeout {
            secs: 30,
            min_rate: 65536,
        },
        ApiError::Unavailable("x".into()),
        ApiError::Overloaded("x"),
        ApiError::NotConfigured("x"),
        ApiError::Internal(anyhow::anyhow!("x")),
    ];
    for e in &all {
        match e {
            ApiError::InvalidJson(_)
            | ApiError::InvalidMultipart(_)
            | ApiError::Unauthorized(_)
            | ApiError::Forbidden(_)
            | ApiError::InvalidDownloadLink
            | ApiError::NotFound
            | ApiError::CompanyNotFound
            | ApiError::Conflict { .. }
            | ApiError::AlreadyRegistered { .. }
            | ApiError::IdempotencyKeyInUse
            | ApiError::IdempotencyKeyReused
            | ApiError::PayloadTooLarge(_)
            | ApiError::StorageQuota { .. }
            | ApiError::UnsupportedMediaType(_)
            | ApiError::Validation(_)
            | ApiError::MethodNotAllowed
            | ApiError::RateLimited { .. }
            | ApiError::UploadShareUsed { .. }
            | ApiError::Timeout
            | ApiError::BodyTimeout { .. }
            | ApiError::Unavailable(_)
            | ApiError::Overloaded(_)
            | ApiError::NotConfigured(_)
            | ApiError::Internal(_) => {}
        }
    }
    all
}

/// The rows `| status | CODE | when |` of the code table in docs/api/errors.md ("Codes").
fn decisions_table() -> Vec<(u16, String)> {
    const DECISIONS: &str = include_str!("../../../docs/api/errors.md");
    let section = DECISIONS
        .split("\n## ")
        .find(|s| s.starts_with("Codes\n"))
        .expect("docs/api/errors.md has a section \"Codes\"");
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim().split('|').map(str::trim).collect();
            // ["", status, code, when, ""]
            let status = cells.get(1)?.parse::<u16>().ok()?;
            Some((status, cells.get(2)?.to_string()))
        })
        .collect()
}

/// Every error code the service can answer with is in the served document (the enum of
/// `ErrorBody.code`), every code of docs/api/errors.md's table is one of them with the same
/// status, and every generic error response of the document uses the one error envelope.
#[tokio::test]
async fn every_error_code_is_in_the_served_document() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite");
    let res = app.get("/openapi.json", None).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let doc: serde_json::Value = res.json().await.unwrap();
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["ErrorBody"]["properties"]["code"]["$ref"], "#/components/schemas/ErrorCode",
        "ErrorBody.code names the code enum"
    );
    let documented: BTreeSet<String> = schemas["ErrorCode"]["enum"]
        .as_array()
        .expect("ErrorCode is an enum")
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();

    // What the code can produce.
    let all: BTreeSet<String> = ErrorCode::ALL
        .iter()
        .map(|c| c.as_str().to_string())
        .collect();
    assert_eq!(documented, all, "document vs ErrorCode::ALL");
    for c in ErrorCode::ALL {
        assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
    }
    for e in one_of_each_error() {
        let code = e.code();
        assert!(documented.contains(code.as_str()), "{code} not documented");
        assert_eq!(e.status(), code.status(), "{code}");
        // What goes over the wire is the documented string.
        let body = serde_json::to_value(e.body()).unwrap();
        assert_eq!(body["code"], code.as_str());
    }

    // What docs/api/errors.md promises.
    let table = decisions_table();
    let in_table: BTreeSet<String> = table.iter().map(|(_, c)| c.clone()).collect();
    assert_eq!(in_table, all, "api/errors.md's table vs ErrorCode::ALL");
    assert_eq!(in_table.len(), table.len(), "a code listed twice");
    for (status, code) in &table {
        let known = ErrorCode::ALL.iter().find(|c| c.as_str() == code).unwrap();
        assert_eq!(known.status().as_u16(), *status, "{code}");
    }

    // The generic responses are declared once and all use the error envelope.
    let responses = doc["components"]["responses"]
        .as_object()
        .expect("responses");
    for status in [
        "400", "401", "408", "413", "415", "422", "429", "500", "503",
    ] {
        let (name, r) = responses
            .iter()
            .find(|(_, r)| {
                r["description"].as_str().is_some_and(|d| {
                    ErrorCode::ALL
                        .iter()
                        .any(|c| c.status().as_str() == status && d.contains(c.as_str()))
                })
            })
            .unwrap_or_else(|| panic!("no shared response for {status}"));
        assert_eq!(
            r["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Envelope_ErrorBody",
            "{name}"
        );
    }
    // The headers an error is sent with are declared on its documented response
    // (`Retry-After` on 429 and 503, `WWW-Authenticate` on 401).
    for e in one_of_each_error() {
        use axum::response::IntoResponse;
        let code = e.code().as_str().to_string();
        let Some((name, r)) = responses.iter().find(|(_, r)| {
            r["description"]
                .as_str()
                .is_some_and(|d| d.contains(&format!("`{code}`")))
        }) else {
            continue; // a route's own response, documented with the route
        };
        let sent = e.into_response();
        let declared: BTreeSet<String> = r["headers"]
            .as_object()
            .map(|h| h.keys().map(|k| k.to_ascii_lowercase()).collect())
            .unwrap_or_default();
        for header in sent.headers().keys() {
            if header == "content-type" || header == "content-length" {
                continue;
            }
            assert!(
                declared.contains(header.as_str()),
                "{code} is sent with {header}, which {name} does not declare"
            );
        }
    }
    // Every operation documents the generic statuses that apply to it.
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let public = op["security"]
                .as_array()
                .is_some_and(|s| s.iter().all(|r| r.as_object().unwrap().is_empty()));
            let mut want = vec!["400", "408", "429", "500", "503"];
            if !public {
                want.push("401");
            }
            if op.get("requestBody").is_some() {
                want.extend(["413", "415", "422"]);
            }
            if method == "post" && !public {
                want.extend(["409", "422"]);
                assert!(
                    op["parameters"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header"),
                    "{method} {path} lacks Idempotency-Key"
                );
            }
            for status in want {
                assert!(
                    op["responses"][status].is_object(),
                    "{method} {path} does not document {status}"
                );
            }
        }
    }
    app.stop().await;
}

/// Every `$ref` of the document names a component that exists (schemathesis skips the parts of
/// a schema behind a dangling reference, so such a part would go untested).
#[test]
fn every_reference_resolves() {
    fn refs(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(r) = m.get("$ref").and_then(|r| r.as_str()) {
                    out.push(r.to_string());
                }
                m.values().for_each(|c| refs(c, out));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|c| refs(c, out)),
            _ => {}
        }
    }
    let doc = serde_json::to_value(server::openapi::document()).unwrap();
    let mut all = Vec::new();
    refs(&doc, &mut all);
    assert!(all.len() > 100, "the document uses references");
    for r in all {
        let pointer = r.strip_prefix('#').expect("local reference");
        assert!(doc.pointer(pointer).is_some(), "dangling reference {r}");
    }
}

/// The documented webhook event types are the ones the service knows.
#[test]
fn webhook_event_types_are_the_services() {
    let doc = serde_json::to_value(server::openapi::document()).unwrap();
    let documented: Vec<&str> = doc["components"]["schemas"]["WebhookEventType"]["enum"]
        .as_array()
        .expect("WebhookEventType is an enum")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(documented, domain::webhook::event_types());
}

/// The document's `webhooks` section (OpenAPI 3.1) has every event the service sends, each a
/// POST with the Standard Webhooks headers and the `WebhookEvent` body, and an example whose
/// `type` is the event's and whose fields are the schema's (for `documents.updated`, with its
/// documents; for status events, without), and the test ping with its own body.
#[test]
fn every_event_is_in_the_webhooks_section() {
    let doc = serde_json::to_value(server::openapi::document()).unwrap();
    let hooks = doc["webhooks"].as_object().expect("a webhooks section");
    let names: Vec<&str> = hooks.keys().map(String::as_str).collect();
    let mut sent: Vec<&str> = domain::webhook::event_types().to_vec();
    sent.push(domain::webhook::PING);
    assert_eq!(sorted(&names), sorted(&sent));
    let data_fields = schema_keys(&doc, "WebhookEventData");
    let document_fields = schema_keys(&doc, "WebhookDocument");
    for (event, item) in hooks {
        let post = &item["post"];
        let headers: Vec<&str> = post["parameters"]
            .as_array()
            .expect("parameters")
            .iter()
            .filter(|p| p["in"] == "header" && p["required"] == true)
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            headers,
            ["webhook-id", "webhook-timestamp", "webhook-signature"],
            "{event}"
        );
        let body = &post["requestBody"]["content"]["application/json"];
        let example = &body["example"];
        assert_eq!(example["type"], event.as_str());
        assert!(
            example["timestamp"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z')),
            "{event}"
        );
        assert!(post["responses"]["2XX"].is_object(), "{event}");
        if event == domain::webhook::PING {
            // The ping has a body of its own: which endpoint was tested.
            assert_eq!(body["schema"]["$ref"], "#/components/schemas/WebhookPing");
            let keys: Vec<&str> = example["data"]
                .as_object()
                .expect("data")
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(sorted(&keys), schema_keys(&doc, "WebhookPingData"));
            continue;
        }
        assert_eq!(
            body["schema"]["$ref"], "#/components/schemas/WebhookEvent",
            "{event}"
        );
        let data = example["data"].as_object().expect("data");
        for key in data.keys() {
            assert!(
                data_fields.contains(key),
                "{event}: {key} is not in WebhookEventData"
            );
        }
        let id_field = if event.starts_with("tax-") {
            "tax_registration_id"
        } else {
            "trade_registration_id"
        };
        assert!(data[id_field].is_string(), "{event}: {id_field}");
        if event == domain::webhook::DOCUMENTS_UPDATED {
            let docs = data["documents"].as_array().expect("documents");
            for d in docs {
                for key in d.as_object().unwrap().keys() {
                    assert!(
                        document_fields.contains(key),
                        "{key} is not in WebhookDocument"
                    );
                }
            }
            assert!(data.get("previous_status").is_none());
        } else {
            assert!(data.get("documents").is_none(), "{event}");
            let status = event.rsplit('.').next().unwrap();
            assert_eq!(data["status"], status, "{event}");
        }
    }
}

/// Operation ids are unique (the specification requires it; clients generated from the
/// document name their methods after them), and every response link names one by the
/// specification's `operationId` and fills parameters the target has.
#[test]
fn operation_ids_are_unique_and_links_resolve() {
    let doc = serde_json::to_value(server::openapi::document()).unwrap();
    let mut ids: std::collections::BTreeMap<String, &serde_json::Value> = Default::default();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let id = op["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("{method} {path} has no operationId"));
            assert!(
                ids.insert(id.to_string(), op).is_none(),
                "operationId {id} twice"
            );
        }
    }
    let mut links = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for (status, r) in op["responses"].as_object().unwrap() {
                let Some(ls) = r["links"].as_object() else {
                    continue;
                };
                for (name, link) in ls {
                    links += 1;
                    let at = format!("{method} {path} {status} {name}");
                    assert!(link.get("operation_id").is_none(), "{at}: operation_id");
                    let target = link["operationId"]
                        .as_str()
                        .and_then(|id| ids.get(id))
                        .unwrap_or_else(|| panic!("{at}: no such operationId"));
                    for param in link["parameters"].as_object().unwrap().keys() {
                        assert!(
                            target["parameters"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .any(|p| p["name"] == param.as_str()),
                            "{at}: the target has no parameter {param}"
                        );
                    }
                }
            }
        }
    }
    assert!(links >= 9, "the creates link to their cases");
}

/// The steps' `status` enums are the statuses the step checks accept (the sandbox's, which
/// accept the most; a known trade status the case cannot move to passes them and is 409), and
/// every note field states the length its parser allows: a client generated from the document
/// refuses what the service would refuse for these reasons.
#[test]
fn step_schemas_match_what_the_steps_accept() {
    use domain::lifecycle::{Actor, Lifecycle, TaxStatus, TradeStatus};
    use server::cases::steps::{
        TAX_NOTE_MAX, TRADE_NOTE_MAX, TaxTransitionRequest, TradeTransitionRequest, tax_step,
        trade_step,
    };
    let doc = serde_json::to_value(server::openapi::document()).unwrap();
    let schemas = &doc["components"]["schemas"];
    let enum_of = |name: &str| {
        let values = sorted_strings(&schemas[name]["enum"]);
        assert!(!values.is_empty(), "enum {name}");
        values
    };
    let sandbox = Actor::SandboxProvider(uuid::Uuid::nil());
    let trade: Vec<&str> = TradeStatus::ALL
        .iter()
        .map(|s| s.as_str())
        .filter(|s| {
            let input = TradeTransitionRequest {
                status: (*s).into(),
                reason: Some("the office asked for a copy".into()),
            };
            trade_step(input, sandbox).is_ok()
        })
        .collect();
    assert_eq!(
        schemas["TradeTransitionRequest"]["properties"]["status"]["$ref"],
        "#/components/schemas/TradeTarget"
    );
    assert_eq!(enum_of("TradeTarget"), sorted(&trade));
    let tax: Vec<&str> = TaxStatus::ALL
        .iter()
        .map(|s| s.as_str())
        .filter(|s| {
            let input = TaxTransitionRequest {
                status: (*s).into(),
                reason: Some("Fehler 0815".into()),
                tax_number: None,
            };
            tax_step(input, sandbox).is_ok()
        })
        .collect();
    assert_eq!(
        schemas["TaxTransitionRequest"]["properties"]["status"]["$ref"],
        "#/components/schemas/TaxTarget"
    );
    assert_eq!(enum_of("TaxTarget"), sorted(&tax));
    assert!(!tax.contains(&"validated"), "{tax:?}");

    // Every note field: the parser's limit as maxLength, and a blank note refused (minLength).
    let notes = [
        ("TradeTransitionRequest", TRADE_NOTE_MAX),
        ("MarkSubmittedRequest", TRADE_NOTE_MAX),
        ("TradeLicenceUpload", TRADE_NOTE_MAX),
        ("TaxTransitionRequest", TAX_NOTE_MAX),
        ("CancelRequest", TRADE_NOTE_MAX),
    ];
    for (name, max) in notes {
        let reason = &schemas[name]["properties"]["reason"];
        assert_eq!(reason["maxLength"], max, "{name}: {reason}");
        assert_eq!(reason["minLength"], 1, "{name}: {reason}");
    }
    let long = |n: usize| Some("x".repeat(n));
    let trade_note = |reason| {
        trade_step(
            TradeTransitionRequest {
                status: "blocked".into(),
                reason,
            },
            sandbox,
        )
        .is_ok()
    };
    assert!(trade_note(long(TRADE_NOTE_MAX)));
    assert!(!trade_note(long(TRADE_NOTE_MAX + 1)));
    let tax_note = |reason| {
        tax_step(
            TaxTransitionRequest {
                status: "rejected".into(),
                reason,
                tax_number: None,
            },
            sandbox,
        )
        .is_ok()
    };
    assert!(tax_note(long(TAX_NOTE_MAX)));
    assert!(!tax_note(long(TAX_NOTE_MAX + 1)));
}

/// Each documented example of the trade create (a GmbH, two directors, a relocation) is a
/// payload the parser accepts.
#[test]
fn trade_examples_are_accepted() {
    let doc = serde_json::to_value(server::openapi::document()).unwrap();
    let examples = doc["paths"]["/v1/trade-registration"]["post"]["requestBody"]["content"]
        ["application/json"]["examples"]
        .as_object()
        .expect("the trade create documents its examples");
    let names: Vec<&str> = examples.keys().map(String::as_str).collect();
    assert_eq!(sorted(&names), ["relocation", "self", "two_directors"]);
    for (name, example) in examples {
        domain::trade_request::parse(&example["value"], today())
            .unwrap_or_else(|e| panic!("the documented example {name} is refused: {e:?}"));
    }
}

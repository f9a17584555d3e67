//! The OpenAPI document is generated from the code; this snapshot makes every API change visible
//! in review (`cargo insta review` after an intended change).

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
                assert!(
                    r["description"].as_str().is_some_and(|d| !d.is_empty()),
                    "{method} {path} {status} has no description"
                );
            }
        }
    }
}

/// The documented partnership payload lists exactly the fields the parser accepts, with the
/// always-required ones marked required, so the document cannot drift from the rules.
#[test]
fn gbr_request_schema_matches_the_parser() {
    let doc = serde_json::to_value(server::openapi::document()).unwrap();
    let schemas = &doc["components"]["schemas"];
    let keys = |name: &str| -> Vec<String> {
        let mut k: Vec<String> = schemas[name]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("schema {name}"))
            .keys()
            .cloned()
            .collect();
        k.sort();
        k
    };
    let sorted = |v: &[&str]| {
        let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    };
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
    let mut required: Vec<String> = schemas["GbrTaxRegistrationRequest"]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    required.sort();
    assert_eq!(
        required,
        sorted(&[
            "legal_form",
            "package",
            "signature_path",
            "name",
            "purpose",
            "partnership_agreement_date",
            "operational_activity_start_date",
            "fiscal_year_deviates_from_calendar",
            "address",
            "partners",
            "financial_estimates",
            "vat",
            "has_employees",
        ])
    );
    let post = &doc["paths"]["/v1/tax-registration/gbr"]["post"];
    assert_eq!(
        post["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/GbrTaxRegistrationRequest"
    );
    for status in ["201", "403", "404", "409", "422"] {
        assert!(post["responses"][status].is_object(), "{status}");
    }
}

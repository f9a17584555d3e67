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

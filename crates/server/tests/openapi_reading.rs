//! The OpenAPI document as its readers meet it: the reference page's one-line summaries, error
//! bodies that say `error`, parameters where a generated client sends them, references only to
//! files that exist, and a reference page that works behind a path prefix.

mod common;

use std::path::Path;

use common::{Backend, TestApp};
use serde_json::Value;

fn document() -> Value {
    serde_json::to_value(server::openapi::document()).expect("serialisable")
}

/// Every operation of the document: (method, path, operation).
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            if op.get("responses").is_some() {
                out.push((method.to_uppercase(), path.clone(), op.clone()));
            }
        }
    }
    out
}

#[test]
fn every_summary_is_one_short_line_and_the_rest_is_the_description() {
    let doc = document();
    let mut bad = Vec::new();
    for (method, path, op) in operations(&doc) {
        let summary = op["summary"].as_str().unwrap_or("");
        let problem = if summary.is_empty() {
            Some("no summary")
        } else if summary.contains('\n') {
            Some("more than one line")
        } else if summary.chars().count() > 70 {
            Some("longer than 70 characters")
        } else if summary.contains('`') {
            Some("raw backticks")
        } else if summary.ends_with('.') {
            Some("ends with a full stop")
        } else if op["description"].as_str().unwrap_or("").trim().is_empty() {
            Some("no description")
        } else {
            None
        };
        if let Some(p) = problem {
            bad.push(format!("{method} {path}: {p}: {summary:?}"));
        }
    }
    assert!(bad.is_empty(), "operations:\n{}", bad.join("\n"));
}

#[test]
fn error_bodies_say_error() {
    let doc = document();
    let result = &doc["components"]["schemas"]["ErrorBody"]["properties"]["result"];
    let target = result["$ref"].as_str().expect("result names a schema");
    let name = target.rsplit('/').next().unwrap();
    assert_eq!(
        doc["components"]["schemas"][name]["enum"],
        serde_json::json!(["error"]),
        "an error body's result can only be \"error\""
    );
}

#[test]
fn the_signed_link_parameters_are_in_the_query() {
    let doc = document();
    let op = &doc["paths"]["/v1/documents/{document_id}/content"]["get"];
    let params = op["parameters"].as_array().expect("parameters");
    let find = |name: &str| {
        params
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no parameter {name}"))
    };
    assert_eq!(find("document_id")["in"], "path");
    for (name, ty) in [("expires", "integer"), ("signature", "string")] {
        let p = find(name);
        assert_eq!(p["in"], "query", "{name}");
        assert_eq!(p["required"], true, "{name}");
        assert_eq!(p["schema"]["type"], ty, "{name}: {p}");
    }
    // Every path parameter is a segment of the path, and every segment one parameter.
    for (method, path, op) in operations(&doc) {
        for p in op["parameters"].as_array().into_iter().flatten() {
            if p["in"] == "path" {
                let name = p["name"].as_str().unwrap();
                assert!(
                    path.contains(&format!("{{{name}}}")),
                    "{method} {path}: path parameter {name} is not in the path"
                );
            }
        }
    }
}

/// Paths such as `docs/api/lifecycle.md` the document names, each a file of the repository.
#[test]
fn every_file_the_document_names_exists() {
    let text = serde_json::to_string(&document()).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut named = std::collections::BTreeSet::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || "./_-".contains(c))) {
        let word = word.trim_end_matches('.');
        if [".md", ".json", ".xsd", ".csv", ".toml", ".rs"]
            .iter()
            .any(|ext| word.ends_with(ext))
            && !word.starts_with("http")
        {
            named.insert(word.to_string());
        }
    }
    assert!(named.contains("docs/api/lifecycle.md"), "{named:?}");
    let missing: Vec<_> = named
        .iter()
        .filter(|f| *f != "openapi.json" && !root.join(f).is_file())
        .collect();
    assert!(
        missing.is_empty(),
        "named but not in the repository: {missing:?}"
    );
}

#[tokio::test]
async fn the_reference_page_loads_the_document_by_a_relative_address() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite");
    let res = app
        .get("/docs/swagger-initializer.js", None)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let script = res.text().await.unwrap();
    assert!(
        script.contains("\"../openapi.json\""),
        "the page names the document relatively: {script}"
    );
    assert!(
        !script.contains("\"/openapi.json\""),
        "no absolute address: {script}"
    );
    // And the address it names answers, from the page's own folder.
    let res = app.get("/docs/../openapi.json", None).send().await.unwrap();
    assert_eq!(res.status(), 200);
}

/// The reference page shares the console's origin (issue 52.8): a script injected into it could
/// read console pages with an operator's cookie. Every file under `/docs/` carries a policy that
/// runs only the page's own files and that no page may frame; the page itself has no inline
/// script the policy would have to allow. (The browser test renders it under this policy.)
#[tokio::test]
async fn the_reference_page_runs_only_its_own_scripts_and_is_never_framed() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite");
    for path in [
        "/docs/",
        "/docs/index.html",
        "/docs/swagger-initializer.js",
        "/docs/swagger-ui-bundle.js",
        "/openapi.json",
    ] {
        let res = app.get(path, None).send().await.unwrap();
        assert_eq!(res.status(), 200, "{path}");
        let h = res.headers();
        let csp = h["content-security-policy"].to_str().unwrap();
        for directive in [
            "default-src 'none'",
            "script-src 'self'",
            "frame-ancestors 'none'",
            "base-uri 'none'",
            "form-action 'none'",
            "connect-src 'self'",
        ] {
            assert!(csp.contains(directive), "{path}: {csp}");
        }
        assert!(!csp.contains("unsafe-eval"), "{path}: {csp}");
        assert!(
            !csp.split(';')
                .any(|d| d.trim().starts_with("script-src") && d.contains("unsafe-inline")),
            "{path}: {csp}"
        );
        assert_eq!(h["x-frame-options"], "DENY", "{path}");
        assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
    }
    let page = app
        .get("/docs/", None)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let inline_scripts = page
        .split("<script")
        .skip(1)
        .filter(|tag| !tag.split('>').next().unwrap_or("").contains("src="))
        .count();
    assert_eq!(
        inline_scripts, 0,
        "the page has an inline script the policy blocks: {page}"
    );
}

//! Test support: a minimal element tree read back with quick-xml, and xmllint.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use quick_xml::events::Event;
use quick_xml::{Reader, XmlVersion};

/// The corporation's questionnaire data in a document: `FsE_KapG/KapG`.
pub fn kapg(doc: &El) -> &El {
    doc.at("DatenTeil/Nutzdatenblock/Nutzdaten/FsE_KapG/KapG")
}

/// A minimal element tree read back with quick-xml.
#[derive(Debug, Default)]
pub struct El {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub text: String,
    pub children: Vec<El>,
}

impl El {
    pub fn parse(xml: &[u8]) -> El {
        let text = std::str::from_utf8(xml).expect("UTF-8");
        let mut reader = Reader::from_str(text);
        let mut stack = vec![El::default()];
        loop {
            match reader.read_event().expect("well-formed") {
                Event::Start(s) => {
                    let attrs = s
                        .attributes()
                        .map(|a| {
                            let a = a.unwrap();
                            let key = a.key.as_ref().to_owned();
                            (
                                key,
                                a.normalized_value(XmlVersion::Explicit1_0)
                                    .unwrap()
                                    .into_owned(),
                            )
                        })
                        .collect();
                    let name = s.name().as_ref().to_owned();
                    stack.push(El {
                        name,
                        attrs,
                        ..El::default()
                    });
                }
                Event::End(_) => {
                    let done = stack.pop().unwrap();
                    stack.last_mut().unwrap().children.push(done);
                }
                Event::Empty(_) => panic!("the writer writes no empty-element tags"),
                Event::Text(t) => stack.last_mut().unwrap().text.push_str(&t.xml10_content()),
                Event::GeneralRef(r) => {
                    let name = r.xml10_content();
                    let c = match name.as_ref() {
                        "amp" => "&",
                        "lt" => "<",
                        "gt" => ">",
                        "quot" => "\"",
                        "apos" => "'",
                        other => panic!("unexpected reference &{other};"),
                    };
                    stack.last_mut().unwrap().text.push_str(c);
                }
                Event::Eof => break,
                _ => {}
            }
        }
        let mut doc = stack.pop().unwrap();
        assert_eq!(doc.children.len(), 1);
        doc.children.pop().unwrap()
    }

    pub fn child(&self, name: &str) -> &El {
        self.children
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("{} has no {name}", self.name))
    }

    pub fn all(&self, name: &str) -> Vec<&El> {
        self.children.iter().filter(|c| c.name == name).collect()
    }

    pub fn has(&self, name: &str) -> bool {
        self.children.iter().any(|c| c.name == name)
    }

    /// Follows a `/`-separated path of first children.
    pub fn at(&self, path: &str) -> &El {
        path.split('/').fold(self, |el, name| el.child(name))
    }

    /// Asserts that the children are named as in `expected`, in that order, and that each
    /// given a text there has it.
    pub fn assert_children(&self, expected: &[(&str, Option<&str>)]) {
        let names: Vec<&str> = expected.iter().map(|(name, _)| *name).collect();
        assert_eq!(self.names(), names);
        for (name, text) in expected {
            if let Some(text) = text {
                assert_eq!(self.child(name).text(), *text, "{name}");
            }
        }
    }

    /// Asserts that the children are named `expected`, in that order (names separated by
    /// spaces).
    pub fn assert_names(&self, expected: &str) {
        assert_eq!(self.names(), expected.split(' ').collect::<Vec<_>>());
    }

    pub fn names(&self) -> Vec<&str> {
        self.children.iter().map(|c| c.name.as_str()).collect()
    }

    pub fn text(&self) -> &str {
        self.text.trim()
    }

    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn walk<'a>(&'a self, out: &mut Vec<&'a El>) {
        out.push(self);
        for c in &self.children {
            c.walk(out);
        }
    }
}

/// Runs `xmllint --noout --schema schemas/<envelope> file`; `Ok` when valid, else its stderr.
pub fn xmllint(doc: &[u8], envelope: &str) -> Result<(), String> {
    let schema = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schemas")
        .join(envelope);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("doc.xml");
    std::fs::write(&file, doc).unwrap();
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&schema)
        .arg(&file)
        .output()
        .expect("xmllint is installed (libxml2-utils)");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        assert!(stderr.contains("validates"), "{stderr}");
        Ok(())
    } else {
        Err(stderr)
    }
}

/// `doc` without the white space between tags (the indentation), which the schemas ignore.
pub fn compact(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len());
    let mut rest = doc;
    while let Some(i) = rest.find(">\n") {
        out.push_str(&rest[..=i]);
        rest = rest[i + 1..].trim_start();
    }
    out.push_str(rest);
    out
}

/// `doc` with `from`, which must occur exactly once, replaced by `to`.
pub fn replace_once(doc: &str, from: &str, to: &str) -> String {
    assert_eq!(
        doc.matches(from).count(),
        1,
        "{from:?} once in the document"
    );
    doc.replace(from, to)
}

/// The cases of `doc` each changed by one [`replace_once`]: `(name, from, to)`.
pub fn edits(doc: &str, cases: &[(&'static str, &str, &str)]) -> Vec<(&'static str, String)> {
    cases
        .iter()
        .map(|&(name, from, to)| (name, replace_once(doc, from, to)))
        .collect()
}

/// Asserts that validating `doc` fails with an error that names `element` and its line.
pub fn assert_violation_named(doc: &str, element: &str) {
    let errs = elster::validate(doc.as_bytes()).unwrap_err();
    assert!(
        errs.iter()
            .any(|e| e.contains(element) && e.starts_with("line ")),
        "{errs:?}"
    );
}

/// Each `(what, document)` is rejected by the crate's libxml2 validation: by the schema, or by
/// the parser exactly when `what` is "not well-formed".
pub fn assert_rejected_by_libxml2(cases: Vec<(&str, String)>) {
    for (what, doc) in cases {
        match elster::validate(doc.as_bytes()) {
            Ok(()) => panic!("accepted: {what}"),
            Err(errs) => {
                assert!(!errs.is_empty(), "{what}");
                let parse_error = errs.iter().any(|e| e.starts_with("not well-formed"));
                assert_eq!(parse_error, what == "not well-formed", "{what}: {errs:?}");
            }
        }
    }
}

/// Each `(what, document)` is rejected by xmllint with the envelope schema `envelope`: it fails
/// to validate, or fails to parse exactly when `what` is "not well-formed".
pub fn assert_rejected_by_xmllint(cases: Vec<(&str, String)>, envelope: &str) {
    for (what, doc) in cases {
        let err = xmllint(doc.as_bytes(), envelope).expect_err(what);
        assert!(
            err.contains("fails to validate") || what == "not well-formed",
            "{what}: {err}"
        );
        assert_eq!(
            err.contains("parser error"),
            what == "not well-formed",
            "{what}: {err}"
        );
    }
}

/// Every element has text or children, except `Version`, which ERiC fills in.
pub fn assert_no_empty_elements(doc: &El) {
    let mut all = Vec::new();
    doc.walk(&mut all);
    for el in all {
        if el.name == "Version" {
            continue; // Filled in by ERiC.
        }
        assert!(
            !el.children.is_empty() || !el.text().is_empty(),
            "{} is empty",
            el.name
        );
    }
}

/// The two tests that every case of the test file's `broken_documents()` is rejected: by
/// libxml2, and by xmllint against the envelope schema `$envelope`.
#[allow(unused_macros)] // not every test file that includes el.rs has broken documents
macro_rules! broken_documents_are_rejected {
    ($envelope:expr) => {
        #[test]
        fn broken_documents_are_rejected_by_libxml2() {
            el::assert_rejected_by_libxml2(broken_documents());
        }

        #[test]
        fn broken_documents_are_rejected_by_xmllint() {
            el::assert_rejected_by_xmllint(broken_documents(), $envelope);
        }
    };
}
#[allow(unused_imports)]
pub(crate) use broken_documents_are_rejected;

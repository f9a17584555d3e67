//! Helpers shared by the integration tests: example requests, contexts and poppler tools.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use forms::{
    Gewa1Context, Operator, PowerOfAttorneyContext, TradeLicenceContext, TradeRegistration,
};

/// The trade registration example requests the tests were written against: production cases
/// (`examples/production/`).
pub fn example(name: &str) -> TradeRegistration {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/production")
        .join(format!("{name}.json"));
    let json = std::fs::read_to_string(&path).expect("example file exists");
    serde_json::from_str(&json).expect("example deserialises into TradeRegistration")
}

pub fn timestamp() -> time::OffsetDateTime {
    time::macros::datetime!(2025-03-20 09:30:00 UTC)
}

pub fn gewa1_ctx() -> Gewa1Context {
    Gewa1Context {
        trade_office_name: Some("Bezirksamt Mitte von Berlin, Gewerbeamt".into()),
        municipality_key: Some("11000000".into()),
        main_office: None,
        created_on: timestamp().date(),
        timestamp: timestamp(),
    }
}

pub fn poa_ctx() -> PowerOfAttorneyContext {
    PowerOfAttorneyContext {
        operator: Operator {
            name: "Muster Filing Services GmbH".into(),
            address: "Beispielweg 5, 10117 Berlin".into(),
        },
        place: None,
        created_on: timestamp().date(),
        timestamp: timestamp(),
    }
}

pub fn trade_licence_ctx() -> TradeLicenceContext {
    TradeLicenceContext {
        trade_office_name: "Gewerbeamt Musterstadt (Sandbox)".into(),
        trade_office_address: Some("Musterplatz 1, 12345 Musterstadt".into()),
        municipality_key: Some("11000000".into()),
        reference: "SANDBOX-0196A1B2".into(),
        received_on: Some(time::macros::date!(2025 - 03 - 18)),
        issued_on: timestamp().date(),
        fee_cents: Some(2600),
        fee_paid: true,
        timestamp: timestamp(),
    }
}

fn temp_pdf(pdf: &[u8]) -> tempfile::NamedTempFile {
    let mut file = tempfile::Builder::new()
        .suffix(".pdf")
        .tempfile()
        .expect("temp file");
    file.write_all(pdf).expect("write pdf");
    file
}

/// Runs a poppler tool on the PDF and returns its standard output.
pub fn poppler(tool: &str, args: &[&str], pdf: &[u8]) -> String {
    let file = temp_pdf(pdf);
    let mut cmd = Command::new(tool);
    cmd.args(args).arg(file.path());
    if tool == "pdftotext" {
        cmd.arg("-");
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{tool} must be installed (poppler-utils): {e}"));
    assert!(
        out.status.success(),
        "{tool} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

pub fn text_layout(pdf: &[u8]) -> String {
    poppler("pdftotext", &["-layout", "-enc", "UTF-8"], pdf)
}

/// Text of one page (1-based).
pub fn page_text(pdf: &[u8], page: usize) -> String {
    let p = page.to_string();
    poppler(
        "pdftotext",
        &["-layout", "-enc", "UTF-8", "-f", &p, "-l", &p],
        pdf,
    )
}

/// A word with its box (points, origin top-left) and 0-based page, from `pdftotext -bbox`.
#[derive(Debug, Clone)]
pub struct Word {
    pub page: usize,
    pub text: String,
    pub x_min: f32,
    pub y_min: f32,
    pub x_max: f32,
    pub y_max: f32,
}

pub fn words(pdf: &[u8]) -> Vec<Word> {
    let html = poppler("pdftotext", &["-bbox", "-enc", "UTF-8"], pdf);
    let mut page = 0usize;
    let mut seen_page = false;
    let mut out = Vec::new();
    for line in html.lines() {
        let line = line.trim();
        if line.starts_with("<page ") {
            if seen_page {
                page += 1;
            }
            seen_page = true;
        }
        if let Some(rest) = line.strip_prefix("<word ") {
            let attr = |name: &str| -> f32 {
                let key = format!("{name}=\"");
                let start = rest.find(&key).expect("attribute") + key.len();
                let end = rest[start..].find('"').expect("closing quote") + start;
                rest[start..end].parse().expect("number")
            };
            let text_start = rest.find('>').expect("tag end") + 1;
            let text_end = rest.rfind("</word>").expect("closing tag");
            let text = rest[text_start..text_end]
                .replace("&amp;", "&")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&apos;", "'");
            out.push(Word {
                page,
                text,
                x_min: attr("xMin"),
                y_min: attr("yMin"),
                x_max: attr("xMax"),
                y_max: attr("yMax"),
            });
        }
    }
    out
}

pub fn pdfinfo(pdf: &[u8]) -> String {
    poppler("pdfinfo", &[], pdf)
}

/// Collapses runs of whitespace, so values can be searched in layout text.
pub fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Removes all whitespace. pdftotext inserts a space after a base letter with a combining mark
/// (zero-width mark glyph), so sequences such as "L̥ŉ" are compared without whitespace.
pub fn no_space(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The words of the GewA 1 whose centre lies in its box `name` (see `gewa1_field_boxes`),
/// joined by single spaces in reading order: what a clerk reads in that field.
pub fn gewa1_box_text(pdf: &[u8], name: &str) -> String {
    let boxes = forms::gewa1_field_boxes();
    let (_, page, x, y, w, h) = *boxes
        .iter()
        .find(|b| b.0 == name)
        .unwrap_or_else(|| panic!("no box {name}"));
    words(pdf)
        .into_iter()
        .filter(|word| {
            let cx = (word.x_min + word.x_max) / 2.0;
            let cy = (word.y_min + word.y_max) / 2.0;
            word.page == page && cx >= x && cx <= x + w && cy >= y && cy <= y + h
        })
        .map(|word| word.text)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The smallest font size any text of the PDF is drawn at (the text matrix's vertical scale,
/// times the current transformation's, of every `Tm` in every content stream).
pub fn smallest_text_size(pdf: &[u8]) -> f32 {
    use lopdf::content::Content;
    let doc = lopdf::Document::load_mem(pdf).expect("lopdf parses the file");
    let mut smallest = f32::MAX;
    for (_, page_id) in doc.get_pages() {
        let content = doc.get_page_content(page_id).expect("page content");
        let ops = Content::decode(&content)
            .expect("content decodes")
            .operations;
        let mut ctm_scale = vec![1.0f32];
        for op in ops {
            let num = |i: usize| {
                op.operands
                    .get(i)
                    .and_then(|o| o.as_float().ok())
                    .unwrap_or(0.0)
            };
            match op.operator.as_str() {
                "q" => ctm_scale.push(*ctm_scale.last().unwrap()),
                "Q" => {
                    ctm_scale.pop();
                    if ctm_scale.is_empty() {
                        ctm_scale.push(1.0);
                    }
                }
                "cm" => {
                    let s = ctm_scale.last_mut().unwrap();
                    *s *= num(3).abs();
                }
                "Tm" => {
                    let size = num(3).abs() * ctm_scale.last().unwrap();
                    smallest = smallest.min(size);
                }
                _ => {}
            }
        }
    }
    smallest
}

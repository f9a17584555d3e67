//! Helpers shared by the integration tests: example requests, contexts, and the PDFs read back
//! ([`read_back`]).
#![allow(dead_code)]

use std::path::PathBuf;

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
        operator: Some(Operator {
            name: "Muster Filing Services GmbH".into(),
            address: "Beispielweg 5, 10117 Berlin".into(),
        }),
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

#[path = "read_back.rs"]
pub mod read_back;

pub use read_back::Word;

/// The text of every page in layout order (see [`read_back`]), pages separated by a form feed.
pub fn text_layout(pdf: &[u8]) -> String {
    read_back::read(pdf).all_layout_text()
}

/// Text of one page (1-based) in layout order.
pub fn page_text(pdf: &[u8], page: usize) -> String {
    read_back::read(pdf).layout_text(page - 1)
}

/// The text in drawing order (labels before their values, not interleaved by position).
pub fn raw_text(pdf: &[u8]) -> String {
    read_back::read(pdf).raw_text()
}

/// The words with their boxes (points, origin top-left) and 0-based pages, in layout order.
pub fn words(pdf: &[u8]) -> Vec<Word> {
    read_back::read(pdf).words()
}

/// The number of pages.
pub fn page_count(pdf: &[u8]) -> usize {
    read_back::read(pdf).pages.len()
}

/// The size of every page in points, rounded to hundredths.
pub fn page_sizes(pdf: &[u8]) -> Vec<(f64, f64)> {
    let round = |v: f64| (v * 100.0).round() / 100.0;
    read_back::read(pdf)
        .pages
        .iter()
        .map(|p| (round(p.width), round(p.height)))
        .collect()
}

/// A4 in points, as [`page_sizes`] gives it.
pub const A4: (f64, f64) = (595.28, 841.89);

/// The document information's title.
pub fn title(pdf: &[u8]) -> Option<String> {
    read_back::read(pdf).title
}

/// The PostScript names of the fonts the text is drawn with.
pub fn fonts(pdf: &[u8]) -> Vec<String> {
    read_back::read(pdf).fonts
}

/// Collapses runs of whitespace, so values can be searched in layout text.
pub fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Removes all whitespace, so that a value is found whatever breaks its lines and however its
/// letters with marks (a zero-width mark glyph) are spaced, such as "L̥ŉ".
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

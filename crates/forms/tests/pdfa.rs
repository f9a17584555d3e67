//! The GewA 1 and the power of attorney are written directly with pdf-writer
//! (`src/direct/`), without the PDF/A validation krilla does for the other documents. These checks read a file back with lopdf and
//! hold it to the PDF/A-2b rules that hand-written objects can break: header, identifiers,
//! metadata that matches the document information, the output intent, embedded fonts whose
//! widths match their programs and that draw no `.notdef`, device-independent colour,
//! graphics states and balanced content streams. krilla's sample trade licence passes the same
//! checks (the checks are calibrated on a validated file), and damaged copies fail them.

mod common;

use std::collections::BTreeMap;

use common::*;
use domain::trade::Environment;
use domain::trade::Language;
use forms::{render_gewa1, render_power_of_attorney, render_trade_licence};
use lopdf::content::Content;
use lopdf::{Dictionary, Document, Object, ObjectId};

fn deref<'a>(doc: &'a Document, obj: &'a Object) -> &'a Object {
    doc.dereference(obj)
        .map(|(_, o)| o)
        .expect("reference resolves")
}

fn get<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a Object> {
    dict.get(key).ok().map(|o| deref(doc, o))
}

fn dict<'a>(doc: &'a Document, dict_: &'a Dictionary, key: &[u8]) -> Option<&'a Dictionary> {
    get(doc, dict_, key).and_then(|o| match o {
        Object::Dictionary(d) => Some(d),
        Object::Stream(s) => Some(&s.dict),
        _ => None,
    })
}

fn name(obj: Option<&Object>) -> String {
    obj.and_then(|o| o.as_name().ok())
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .unwrap_or_default()
}

/// A PDF text string: UTF-16BE with a byte order mark, or PDFDocEncoding (ASCII here).
fn text(obj: Option<&Object>) -> String {
    let Some(Object::String(bytes, _)) = obj else {
        return String::new();
    };
    match bytes.strip_prefix(&[0xFE, 0xFF]) {
        Some(utf16) => String::from_utf16_lossy(
            &utf16
                .chunks(2)
                .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))
                .collect::<Vec<_>>(),
        ),
        None => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

fn num(o: &Object) -> f64 {
    match o {
        Object::Integer(i) => *i as f64,
        Object::Real(r) => f64::from(*r),
        other => panic!("not a number: {other:?}"),
    }
}

/// The text of the first element named `tag` in the XMP packet, without inner tags.
fn xmp_value(xmp: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}");
    let start = xmp.find(&open)?;
    let body_start = start + xmp[start..].find('>')? + 1;
    let end = body_start + xmp[body_start..].find(&format!("</{tag}>"))?;
    let mut out = String::new();
    let mut in_tag = false;
    for c in xmp[body_start..end].chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    let out = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&");
    Some(out)
}

/// How many `rdf:li` items the first element named `tag` holds.
fn xmp_items(xmp: &str, tag: &str) -> usize {
    let Some(start) = xmp.find(&format!("<{tag}")) else {
        return 0;
    };
    let end = xmp[start..]
        .find(&format!("</{tag}>"))
        .map_or(xmp.len(), |e| start + e);
    xmp[start..end].matches("<rdf:li").count()
}

/// A date of the document information (`D:YYYYMMDDHHmmSS` with `Z` or `+HH'mm'`) or of XMP
/// (`YYYY-MM-DDTHH:MM:SS` with `Z` or `+HH:MM`), as an instant.
fn instant(date: &str) -> Option<time::OffsetDateTime> {
    let date = date.trim_start_matches("D:");
    // The zone starts after the date (whose `-` separators come first).
    let zone_at = date.get(10..)?.find(['Z', '+', '-'])? + 10;
    let digits: String = date[..zone_at]
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    let zone = &date[zone_at..];
    let n = |r: std::ops::Range<usize>| digits.get(r)?.parse::<i32>().ok();
    let offset_minutes = match zone.chars().next()? {
        'Z' => 0,
        sign => {
            let z: String = zone.chars().filter(char::is_ascii_digit).collect();
            let minutes =
                z.get(0..2)?.parse::<i32>().ok()? * 60 + z.get(2..4)?.parse::<i32>().ok()?;
            if sign == '-' { -minutes } else { minutes }
        }
    };
    let month = time::Month::try_from(u8::try_from(n(4..6)?).ok()?).ok()?;
    let local = time::PrimitiveDateTime::new(
        time::Date::from_calendar_date(n(0..4)?, month, u8::try_from(n(6..8)?).ok()?).ok()?,
        time::Time::from_hms(
            u8::try_from(n(8..10)?).ok()?,
            u8::try_from(n(10..12)?).ok()?,
            u8::try_from(n(12..14)?).ok()?,
        )
        .ok()?,
    );
    Some(local.assume_offset(time::UtcOffset::from_whole_seconds(offset_minutes * 60).ok()?))
}

/// Everything the file breaks of the rules named in the module documentation.
fn pdfa_problems(pdf: &[u8]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut fail = |p: String| problems.push(p);
    let header_end = pdf.iter().position(|&b| b == b'\n').unwrap_or(0);
    if !pdf.starts_with(b"%PDF-1.") {
        fail("no PDF header".into());
    }
    let second = &pdf[header_end + 1..];
    if !(second.first() == Some(&b'%') && second[1..5].iter().all(|&b| b >= 0x80)) {
        fail("no binary comment after the header".into());
    }
    let doc = Document::load_mem(pdf).expect("lopdf parses the file");

    // Identifiers and metadata.
    match doc.trailer.get(b"ID").and_then(Object::as_array) {
        Ok(ids)
            if ids.len() == 2 && ids.iter().all(|i| i.as_str().is_ok_and(|s| !s.is_empty())) => {}
        _ => fail("no file identifier in the trailer".into()),
    }
    let catalog = doc.catalog().expect("catalog");
    let info = doc
        .trailer
        .get(b"Info")
        .ok()
        .map(|o| deref(&doc, o))
        .and_then(|o| o.as_dict().ok());
    let metadata = get(&doc, catalog, b"Metadata").and_then(|o| o.as_stream().ok());
    match metadata {
        None => fail("no XMP metadata in the catalog".into()),
        Some(stream) => {
            if stream.dict.get(b"Filter").is_ok() {
                fail("the metadata stream is filtered".into());
            }
            let xmp = String::from_utf8_lossy(&stream.content).into_owned();
            if !xmp.contains("<?xpacket begin=") {
                fail("no xpacket header".into());
            }
            if xmp_value(&xmp, "pdfaid:part").as_deref() != Some("2")
                || xmp_value(&xmp, "pdfaid:conformance").as_deref() != Some("B")
            {
                fail("not identified as PDF/A-2b".into());
            }
            let info = info.expect("document information");
            for (key, tag) in [
                (&b"Title"[..], "dc:title"),
                (b"Author", "dc:creator"),
                (b"Subject", "dc:description"),
                (b"Creator", "xmp:CreatorTool"),
                (b"Producer", "pdf:Producer"),
            ] {
                let in_info = text(get(&doc, info, key));
                if xmp_value(&xmp, tag).unwrap_or_default() != in_info {
                    fail(format!(
                        "{tag} differs from /{}",
                        String::from_utf8_lossy(key)
                    ));
                }
            }
            if xmp_items(&xmp, "dc:creator") > 1 {
                fail("more than one dc:creator".into());
            }
            for (key, tag) in [
                (&b"CreationDate"[..], "xmp:CreateDate"),
                (b"ModDate", "xmp:ModifyDate"),
            ] {
                let in_info = text(get(&doc, info, key));
                let in_xmp = xmp_value(&xmp, tag).unwrap_or_default();
                match (instant(&in_info), instant(&in_xmp)) {
                    (Some(a), Some(b)) if a == b => {}
                    _ => fail(format!(
                        "{tag} {in_xmp:?} is not /{} {in_info:?}",
                        String::from_utf8_lossy(key)
                    )),
                }
            }
        }
    }
    if get(&doc, catalog, b"Lang").is_none() {
        fail("no document language".into());
    }
    let intents = get(&doc, catalog, b"OutputIntents").and_then(|o| o.as_array().ok());
    let pdfa_intent = intents.into_iter().flatten().any(|i| {
        let Ok(i) = deref(&doc, i).as_dict() else {
            return false;
        };
        name(get(&doc, i, b"S")) == "GTS_PDFA1"
            && dict(&doc, i, b"DestOutputProfile")
                .and_then(|p| get(&doc, p, b"N"))
                .is_some_and(|n| num(n) == 3.0)
    });
    if !pdfa_intent {
        fail("no PDF/A output intent with an RGB profile".into());
    }

    // Pages: fonts, colours, graphics states, content streams.
    // The CIDs each font draws.
    let mut shown_by_font: BTreeMap<ObjectId, Vec<u16>> = BTreeMap::new();
    for (number, page) in doc.get_pages() {
        let page_dict = doc.get_dictionary(page).expect("page");
        let resources = dict(&doc, page_dict, b"Resources").expect("page resources");
        let fonts = dict(&doc, resources, b"Font");
        for state in dict(&doc, resources, b"ExtGState")
            .into_iter()
            .flat_map(|d| d.iter())
        {
            let state = deref(&doc, state.1).as_dict().expect("graphics state");
            if state
                .get(b"SMask")
                .is_ok_and(|s| s.as_name().ok() != Some(b"None"))
            {
                fail(format!("page {number}: a soft mask"));
            }
            if state.get(b"TR").is_ok() {
                fail(format!("page {number}: a transfer function"));
            }
            let bm = name(state.get(b"BM").ok());
            if !bm.is_empty() && bm != "Normal" && bm != "Compatible" {
                fail(format!("page {number}: blend mode {bm}"));
            }
        }
        for content_id in doc.get_page_contents(page) {
            let stream = doc
                .get_object(content_id)
                .and_then(Object::as_stream)
                .expect("content stream");
            let bytes = stream
                .decompressed_content()
                .unwrap_or_else(|_| stream.content.clone());
            let ops = Content::decode(&bytes).expect("content decodes").operations;
            let mut depth = 0i32;
            let mut in_text = false;
            let mut marked = 0i32;
            let mut font: Option<ObjectId> = None;
            // A name an operator takes from the page's resources must be there.
            let missing = |kind: &[u8], op: &lopdf::content::Operation| {
                let key = op.operands.first().and_then(|o| o.as_name().ok());
                let found = key
                    .is_some_and(|k| dict(&doc, resources, kind).is_some_and(|d| d.get(k).is_ok()));
                (!found).then(|| {
                    format!(
                        "page {number}: {} {:?} not in the resources",
                        op.operator,
                        key.map(String::from_utf8_lossy)
                    )
                })
            };
            for op in &ops {
                match op.operator.as_str() {
                    // Device colour spaces by name are not in the resources: they fail too.
                    "gs" | "cs" | "CS" | "Do" => {
                        let kind: &[u8] = match op.operator.as_str() {
                            "gs" => b"ExtGState",
                            "Do" => b"XObject",
                            _ => b"ColorSpace",
                        };
                        if let Some(problem) = missing(kind, op) {
                            fail(problem);
                        }
                    }
                    "BT" if in_text => fail(format!("page {number}: BT inside a text object")),
                    "BT" => in_text = true,
                    "ET" if !in_text => fail(format!("page {number}: ET without BT")),
                    "ET" => in_text = false,
                    "BDC" | "BMC" => marked += 1,
                    "EMC" if marked == 0 => fail(format!("page {number}: EMC without BDC")),
                    "EMC" => marked -= 1,
                    "q" => {
                        depth += 1;
                        if depth > 28 {
                            fail(format!("page {number}: q nested deeper than 28"));
                        }
                    }
                    "Q" => depth -= 1,
                    "rg" | "RG" | "g" | "G" | "k" | "K" => {
                        fail(format!("page {number}: device colour ({})", op.operator))
                    }
                    "Tf" => {
                        let key = op.operands[0].as_name().expect("font name");
                        font = fonts
                            .and_then(|f| f.get(key).ok())
                            .and_then(|o| o.as_reference().ok());
                        if font.is_none() {
                            fail(format!("page {number}: font {key:?} not in the resources"));
                        }
                    }
                    "Tj" | "TJ" => {
                        let Some(id) = font else {
                            fail(format!("page {number}: text without a font"));
                            continue;
                        };
                        let entry = shown_by_font.entry(id).or_default();
                        let strings: Vec<&Object> = match &op.operands[0] {
                            Object::Array(items) => items.iter().collect(),
                            other => vec![other],
                        };
                        for s in strings {
                            if let Ok(bytes) = s.as_str() {
                                entry.extend(
                                    bytes.chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]])),
                                );
                            }
                        }
                    }
                    _ => {}
                }
                if depth < 0 {
                    fail(format!("page {number}: Q without q"));
                }
            }
            if depth != 0 || in_text || marked != 0 {
                fail(format!(
                    "page {number}: a content stream leaves q, BT or BDC open"
                ));
            }
        }
    }

    // Fonts: Type 0 over an embedded CIDFontType2 program whose advances the widths repeat.
    for (id, shown) in &mut shown_by_font {
        let type0 = doc.get_dictionary(*id).expect("font");
        let label = format!("font {id:?}");
        if name(get(&doc, type0, b"Subtype")) != "Type0"
            || name(get(&doc, type0, b"Encoding")) != "Identity-H"
        {
            fail(format!("{label}: not a Type 0 font with Identity-H"));
            continue;
        }
        if get(&doc, type0, b"ToUnicode").is_none() {
            fail(format!("{label}: no ToUnicode map"));
        }
        let descendant = get(&doc, type0, b"DescendantFonts")
            .and_then(|o| o.as_array().ok())
            .and_then(|a| a.first())
            .map(|o| deref(&doc, o))
            .and_then(|o| o.as_dict().ok())
            .expect("descendant font");
        if name(get(&doc, descendant, b"Subtype")) != "CIDFontType2"
            || name(get(&doc, descendant, b"CIDToGIDMap")) != "Identity"
        {
            fail(format!(
                "{label}: not CIDFontType2 with an identity CIDToGIDMap"
            ));
        }
        let program = dict(&doc, descendant, b"FontDescriptor")
            .and_then(|d| get(&doc, d, b"FontFile2"))
            .and_then(|o| o.as_stream().ok())
            .and_then(|s| s.decompressed_content().ok());
        let Some(program) = program else {
            fail(format!("{label}: font program not embedded"));
            continue;
        };
        let face = rustybuzz::ttf_parser::Face::parse(&program, 0).expect("font program parses");
        let upem = f64::from(face.units_per_em());
        let mut widths = BTreeMap::new();
        let w = get(&doc, descendant, b"W").and_then(|o| o.as_array().ok());
        let mut items = w.into_iter().flatten().map(|o| deref(&doc, o));
        while let Some(first) = items.next() {
            let first = num(first) as u32;
            match items.next() {
                Some(Object::Array(list)) => {
                    for (k, w) in list.iter().enumerate() {
                        widths.insert(first + k as u32, num(w));
                    }
                }
                Some(last) => {
                    let w = num(items.next().expect("width"));
                    for cid in first..=num(last) as u32 {
                        widths.insert(cid, w);
                    }
                }
                None => break,
            }
        }
        for (&cid, &w) in &widths {
            let advance = face
                .glyph_hor_advance(rustybuzz::ttf_parser::GlyphId(cid as u16))
                .map(|a| f64::from(a) * 1000.0 / upem);
            if advance.is_none_or(|a| (a - w).abs() > 1.0) {
                fail(format!(
                    "{label}: width of CID {cid} is {w}, the program says {advance:?}"
                ));
            }
        }
        shown.sort_unstable();
        shown.dedup();
        for &cid in shown.iter() {
            if cid == 0 {
                fail(format!("{label}: .notdef drawn"));
            } else if u32::from(cid) >= u32::from(face.number_of_glyphs()) {
                fail(format!("{label}: CID {cid} is not in the program"));
            } else if !widths.contains_key(&u32::from(cid))
                && face
                    .glyph_hor_advance(rustybuzz::ttf_parser::GlyphId(cid))
                    .is_some_and(|a| a != 0)
            {
                fail(format!("{label}: CID {cid} drawn without a width"));
            }
        }
    }
    if shown_by_font.is_empty() {
        fail("no text drawn".into());
    }
    problems
}

#[test]
fn gewa1_keeps_the_pdfa_2b_rules() {
    let mut reg = example("trade-registration-self");
    let plain = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(pdfa_problems(&plain), Vec::<String>::new());
    // With the sandbox mark (an opacity), and with names that need the document's own font
    // and ActualText spans.
    reg.environment = Environment::Sandbox;
    reg.owners[0].first_name = "Nguyễn Thị L\u{325}ukasz".into();
    reg.owners[0].last_name = "Ðorđević-A\u{308}ßmann Ωmega Жук".into();
    let marked = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(pdfa_problems(&marked), Vec::<String>::new());
    let raw = String::from_utf8_lossy(&marked);
    for part in ["/D0 ", "/ActualText", "/ExtGState"] {
        assert!(raw.contains(part), "{part} is not exercised");
    }
}

#[test]
fn power_of_attorney_keeps_the_pdfa_2b_rules() {
    let mut reg = example("trade-registration-assisted");
    let plain = render_power_of_attorney(&reg, 1, &poa_ctx()).unwrap();
    assert_eq!(pdfa_problems(&plain), Vec::<String>::new());
    // Sandbox mark, every translation, and names beyond the prepared fonts.
    reg.environment = Environment::Sandbox;
    reg.owners[0].first_name = "Nguyễn Thị L\u{325}ukasz".into();
    reg.owners[0].last_name = "Ðorđević-A\u{308}ßmann Ωmega Жук".into();
    for lang in [Language::En, Language::Fr, Language::It, Language::Es] {
        reg.client_preferred_language = lang;
        let marked = render_power_of_attorney(&reg, 0, &poa_ctx()).unwrap();
        assert_eq!(pdfa_problems(&marked), Vec::<String>::new(), "{lang:?}");
        let raw = String::from_utf8_lossy(&marked);
        for part in ["/D0 ", "/ActualText", "/ExtGState"] {
            assert!(raw.contains(part), "{part} is not exercised");
        }
    }
}

#[test]
fn krillas_trade_licence_passes_the_same_checks() {
    let reg = example("trade-registration-assisted");
    let pdf = render_trade_licence(&reg, &trade_licence_ctx()).unwrap();
    assert_eq!(pdfa_problems(&pdf), Vec::<String>::new());
}

/// Where to damage a file: after this, replace this with that; and the problem to expect.
type Damage<'a> = (&'a [u8], &'a [u8], &'a [u8], &'a str);

/// Replaces the first `from` after `after` with `to` (same length: offsets stay valid).
fn damaged(pdf: &[u8], after: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let start = pdf
        .windows(after.len())
        .position(|w| w == after)
        .expect("marker present");
    let at = start
        + pdf[start..]
            .windows(from.len())
            .position(|w| w == from)
            .unwrap_or_else(|| {
                panic!(
                    "{} after {}",
                    String::from_utf8_lossy(from),
                    String::from_utf8_lossy(after)
                )
            });
    let mut out = pdf.to_vec();
    out[at..at + from.len()].copy_from_slice(to);
    out
}

#[test]
fn damaged_copies_fail_the_checks() {
    let mut reg = example("trade-registration-self");
    reg.environment = Environment::Sandbox;
    reg.owners[0].first_name = "L\u{325}ukasz".into();
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(pdfa_problems(&pdf), Vec::<String>::new());
    // The first width range of the first font, one digit changed.
    let doc = Document::load_mem(&pdf).unwrap();
    let w = doc
        .objects
        .values()
        .filter_map(|o| o.as_dict().ok())
        .find_map(|d| d.get(b"W").ok().and_then(|w| w.as_array().ok()).cloned())
        .expect("a W array");
    let width = num(&w[2]);
    let written = format!("{} {} {}", num(&w[0]), num(&w[1]), width);
    let changed = format!("{} {} {}", num(&w[0]), num(&w[1]), width + 5.0);
    assert_eq!(written.len(), changed.len(), "pick a width without a carry");
    // (after this, replace this with that: a problem naming this). The documents' own content
    // streams are not compressed, so their operators can be found in the file.
    let cases: [Damage; 8] = [
        (b"trailer", b"/ID", b"/XD", "identifier"),
        (b"/Producer (", b"forms", b"forma", "pdf:Producer differs"),
        (b"/ModDate (D:", b"2025", b"2024", "xmp:ModifyDate"),
        (
            b"/OutputIntents",
            b"GTS_PDFA1",
            b"GTS_PDFX1",
            "output intent",
        ),
        (b"%PDF", b"/G0 gs", b"/G7 gs", "gs"),
        (b"/C0 cs", b" scn\n", b" rg \n", "device colour"),
        (b"/ActualText", b"EMC", b"   ", "BDC open"),
        (
            b"/W [",
            written.as_bytes(),
            changed.as_bytes(),
            "width of CID",
        ),
    ];
    for (after, from, to, problem) in cases {
        let problems = pdfa_problems(&damaged(&pdf, after, from, to));
        assert!(
            problems.iter().any(|p| p.contains(problem)),
            "{}: {problems:?}",
            String::from_utf8_lossy(to)
        );
    }
}

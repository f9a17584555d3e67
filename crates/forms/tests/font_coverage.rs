//! The embedded font draws every DIN 91379 character (data types A, B and C).

use std::path::PathBuf;

#[test]
fn font_has_a_glyph_for_every_din_91379_code_point() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../domain/data/din91379/latin_list_1.3.txt");
    let list = std::fs::read_to_string(path).expect("DIN 91379 list in crates/domain/data");
    // Groups of data types A, B and C (see latin_groups.txt).
    let groups = ["bll", "bnlreq", "dc", "bnl", "bnlopt"];
    let mut checked = 0;
    let mut missing = Vec::new();
    for line in list.lines() {
        let fields: Vec<&str> = line.split(';').map(str::trim).collect();
        if fields.len() < 3 || !groups.contains(&fields[0]) {
            continue;
        }
        for hex in fields[2].split_whitespace() {
            let cp = u32::from_str_radix(hex, 16).expect("hex code point");
            let c = char::from_u32(cp).expect("valid char");
            checked += 1;
            if !forms::has_glyph(c) {
                missing.push(format!("U+{cp:04X} {c}"));
            }
        }
    }
    assert!(checked > 900, "only {checked} code points read");
    assert!(missing.is_empty(), "no glyph for {missing:?}");
}

//! The signature is drawn as vector strokes inside box 33 (parsed from the content stream).

mod common;

use common::*;
use forms::{gewa1_signature_box, render_gewa1};
use lopdf::content::Content;
use lopdf::{Document, Object};

fn num(o: &Object) -> f64 {
    match o {
        Object::Integer(i) => *i as f64,
        Object::Real(r) => f64::from(*r),
        other => panic!("not a number: {other:?}"),
    }
}

type Matrix = [f64; 6];

fn mul(m: &Matrix, n: &Matrix) -> Matrix {
    // m then n (PDF: new CTM = m x CTM).
    [
        m[0] * n[0] + m[1] * n[2],
        m[0] * n[1] + m[1] * n[3],
        m[2] * n[0] + m[3] * n[2],
        m[2] * n[1] + m[3] * n[3],
        m[4] * n[0] + m[5] * n[2] + n[4],
        m[4] * n[1] + m[5] * n[3] + n[5],
    ]
}

fn apply(m: &Matrix, x: f64, y: f64) -> (f64, f64) {
    (m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5])
}

/// Points (in PDF user space) of every stroked path on the page.
fn stroked_points(pdf: &[u8], page: u32) -> Vec<(f64, f64)> {
    let doc = Document::load_mem(pdf).expect("lopdf parses the PDF");
    let pages = doc.get_pages();
    let id = pages[&page];
    let content = Content::decode(&doc.get_page_content(id).expect("content")).expect("decode");
    let mut ctm: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];
    let mut stack = Vec::new();
    let mut path = Vec::new();
    let mut stroked = Vec::new();
    for op in &content.operations {
        let o = &op.operands;
        match op.operator.as_str() {
            "q" => stack.push(ctm),
            "Q" => ctm = stack.pop().expect("balanced q/Q"),
            "cm" => {
                let m = [
                    num(&o[0]),
                    num(&o[1]),
                    num(&o[2]),
                    num(&o[3]),
                    num(&o[4]),
                    num(&o[5]),
                ];
                ctm = mul(&m, &ctm);
            }
            "m" | "l" => path.push(apply(&ctm, num(&o[0]), num(&o[1]))),
            "c" => {
                for i in 0..3 {
                    path.push(apply(&ctm, num(&o[2 * i]), num(&o[2 * i + 1])));
                }
            }
            "re" => path.clear(),
            "S" | "s" => stroked.append(&mut path),
            "f" | "f*" | "n" | "B" | "b" => path.clear(),
            _ => {}
        }
    }
    stroked
}

#[test]
fn signature_strokes_lie_in_box_33() {
    let reg = example("trade-registration-self");
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    let points = stroked_points(&pdf, 2);
    let segments = reg.owners[0]
        .signatures
        .gewa_1
        .as_ref()
        .unwrap()
        .segments()
        .len();
    assert!(
        points.len() >= segments,
        "expected the signature's {segments} segments, got {} points",
        points.len()
    );
    let (x, y, w, h) = gewa1_signature_box();
    // Box 33 in PDF space (origin bottom-left).
    let (left, right) = (f64::from(x), f64::from(x + w));
    let (bottom, top) = (841.89 - f64::from(y + h), 841.89 - f64::from(y));
    let (mut min_x, mut max_x, mut min_y, mut max_y) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(px, py) in &points {
        assert!(
            px >= left && px <= right && py >= bottom && py <= top,
            "point ({px}, {py}) outside box 33 [{left}, {right}] x [{bottom}, {top}]"
        );
        min_x = min_x.min(px);
        max_x = max_x.max(px);
        min_y = min_y.min(py);
        max_y = max_y.max(py);
    }
    // Scaled to fill the box in one direction (aspect ratio kept, 2.5 pt margin).
    let filled_w = (max_x - min_x) / (right - left - 5.0);
    let filled_h = (max_y - min_y) / (top - bottom - 5.0);
    assert!(
        filled_w > 0.97 || filled_h > 0.97,
        "signature does not use the box: {filled_w} x {filled_h}"
    );
    // Page 1 has no strokes at all.
    assert!(stroked_points(&pdf, 1).is_empty());
}

#[test]
fn a_straight_stroke_signature_is_centred_in_the_box() {
    let mut reg = example("trade-registration-self");
    reg.owners[0].signatures.gewa_1 = Some("M 0 0 H 1000".parse().unwrap());
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    let points = stroked_points(&pdf, 2);
    let (x, y, w, h) = gewa1_signature_box();
    let mid = 841.89 - f64::from(y + h / 2.0);
    assert!(!points.is_empty());
    for (px, py) in points {
        assert!((py - mid).abs() < 0.01, "{py} != {mid}");
        assert!(px >= f64::from(x) && px <= f64::from(x + w));
    }
}

#[test]
fn extreme_coordinates_stay_in_the_box() {
    let mut reg = example("trade-registration-self");
    for path in [
        "M 999999 -999999 L 999999.0000001 -999998.9999999",
        "M -1000000 -1000000 L 1000000 1000000",
        "M 5 5 L 5.000000000001 5",
    ] {
        reg.owners[0].signatures.gewa_1 = Some(path.parse().unwrap());
        let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
        let points = stroked_points(&pdf, 2);
        let (x, y, w, h) = gewa1_signature_box();
        assert!(!points.is_empty(), "{path}");
        for (px, py) in points {
            assert!(
                px >= f64::from(x) - 0.01
                    && px <= f64::from(x + w) + 0.01
                    && py >= 841.89 - f64::from(y + h) - 0.01
                    && py <= 841.89 - f64::from(y) + 0.01,
                "{path}: ({px}, {py})"
            );
        }
    }
}

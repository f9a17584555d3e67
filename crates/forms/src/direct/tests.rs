//! The direct writer draws what krilla draws: the same runs (kerning, marks placed by the
//! shaper, clusters of several glyphs, squashed labels, in prepared and in the document's
//! own fonts), a transformed half-transparent run and a stroke, rendered (hayro) to the same
//! pixels and read back as the same text.

use super::*;
use crate::canvas::{Canvas, Pen, Seg};
use crate::read_back;
use crate::text;
use krilla::geom::Transform;

const SAMPLES: [(bool, &str, f32, f32, f32, f32); 7] = [
    // Marks the shaper raises (a text rise), then a run that must start without it.
    (
        false,
        "Q\u{30C} J\u{30C} X\u{30B} q\u{323}",
        300.0,
        140.0,
        12.0,
        1.0,
    ),
    (
        false,
        "AVATAR Tower Wa To 12.03.2025",
        40.0,
        60.0,
        11.0,
        1.0,
    ),
    (
        false,
        "Nguyễn Thị L\u{325}ukasz Ðorđević A\u{308}ß",
        40.0,
        100.0,
        9.0,
        1.0,
    ),
    (
        true,
        "Gewerbe-Anmeldung Betriebsstätte",
        40.0,
        140.0,
        14.0,
        0.8,
    ),
    (
        false,
        "Жук Ωmega fi ffl — n\u{304} K\u{331}",
        40.0,
        180.0,
        10.0,
        1.0,
    ),
    (true, "X", 300.0, 60.0, 8.0, 1.0),
    (false, "Erika Mustermann", 300.0, 100.0, 7.5, 0.9),
];

fn draw<C: Canvas>(c: &mut C) {
    let fonts = font::fonts().unwrap();
    c.set_fill_rgb((20, 40, 60));
    for (bold, s, x, y, size, squash) in SAMPLES {
        let face = if bold { &fonts.bold } else { &fonts.regular };
        text::draw_run(c, face, &font::shape(face, s), x, y, size, squash);
    }
    c.push_transform(&Transform::from_translate(300.0, 400.0));
    c.push_transform(&Transform::from_rotate(-30.0));
    c.push_opacity(0.35);
    c.set_fill_rgb((200, 30, 30));
    let run = font::shape(&fonts.bold, "MUSTER");
    text::draw_run(c, &fonts.bold, &run, -100.0, 20.0, 48.0, 1.0);
    c.pop();
    c.pop();
    c.pop();
    c.stroke(
        &[
            Seg::MoveTo(60.0, 500.0),
            Seg::CubicTo(90.0, 440.0, 140.0, 560.0, 200.0, 480.0),
            Seg::LineTo(220.0, 520.0),
        ],
        Pen {
            rgb: (16, 32, 110),
            width: 0.9,
        },
    );
}

/// A krilla document of `pages` A4 pages, each drawn by `draw(index, surface)`.
fn krilla_pdf(pages: usize, draw: impl Fn(usize, &mut krilla::surface::Surface)) -> Vec<u8> {
    let mut document = crate::pdf::new_document().unwrap();
    document.set_metadata(crate::pdf::metadata(
        "t".into(),
        "s".into(),
        None,
        time::OffsetDateTime::UNIX_EPOCH,
    ));
    for i in 0..pages {
        let settings = krilla::page::PageSettings::from_wh(A4_WIDTH, A4_HEIGHT).unwrap();
        let mut page = document.start_page_with(settings);
        draw(i, &mut page.surface());
    }
    crate::pdf::finish(document).unwrap()
}

fn test_info() -> Info {
    Info {
        title: "t".into(),
        subject: "s".into(),
        author: None,
        timestamp: time::OffsetDateTime::UNIX_EPOCH,
    }
}

fn direct_pdf() -> Vec<u8> {
    let fonts = font::fonts().unwrap();
    let mut preparer = Preparer::new().unwrap();
    preparer.page(|_| Ok(())).unwrap();
    // Some runs find all their glyphs prepared, the others go into the document's fonts.
    preparer
        .include(&fonts.regular, "AVATAR Tower Wa To 12.03.2025")
        .unwrap();
    preparer.include(&fonts.bold, "X").unwrap();
    let template = preparer.finish().unwrap();
    let mut document = Document::new(&template);
    document
        .page(|page| {
            draw(page);
            Ok(())
        })
        .unwrap();
    document.finish(&test_info()).unwrap()
}

/// The GewA 1's template, drawn by krilla from the same code, gives the same pages.
#[test]
fn the_gewa1_template_is_what_krilla_draws() {
    use crate::gewa1::{geometry, layout};
    let pixels = |pdf: &[u8], page: usize| read_back::gray_pixels(pdf, page, 100.0);
    let krilla = krilla_pdf(2, |i, surface| {
        layout::draw_static(surface, [&geometry::PAGE1, &geometry::PAGE2][i]).unwrap();
    });
    // The form's two pages; the supplementary sheet's are optional.
    let mut document = Document::with_optional_pages(layout::template().unwrap(), 2);
    document.page(|_| Ok(())).unwrap();
    let one_page = Document::with_optional_pages(layout::template().unwrap(), 2);
    assert!(
        one_page.finish(&test_info()).is_err(),
        "a required page is missing"
    );
    document.page(|_| Ok(())).unwrap();
    let direct = document.finish(&test_info()).unwrap();
    for page in [0, 1] {
        let (k, d) = (pixels(&krilla, page), pixels(&direct, page));
        assert_eq!(k.len(), d.len());
        let differing = k.iter().zip(&d).filter(|(a, b)| a.abs_diff(**b) > 24);
        assert_eq!(differing.count(), 0, "page {page}: pixels differ");
        assert!(
            d.iter().filter(|&&p| p < 160).count() > 5000,
            "page {page}: no form"
        );
    }
    let text = |pdf: &[u8]| read_back::read(pdf).raw_text();
    let (tk, td) = (text(&krilla), text(&direct));
    assert_eq!(tk, td);
    assert!(td.contains("Gewerbe-Anmeldung"), "{td}");
}

#[test]
fn draws_what_krilla_draws() {
    let (k, d) = (krilla_pdf(1, |_, surface| draw(surface)), direct_pdf());
    let fonts = font::fonts().unwrap();
    let raised = font::shape(&fonts.regular, SAMPLES[0].1);
    assert!(
        raised.glyphs.iter().any(|g| g.y_offset != 0.0),
        "no rise exercised"
    );
    let raw = String::from_utf8_lossy(&d);
    // The document's content stream is not compressed: every kind of font is drawn with.
    for part in [
        "/L0 1 Tf",
        "/L1 1 Tf",
        "/D0 1 Tf",
        "/D1 1 Tf",
        "/ActualText",
        "/G0 gs",
        " Ts",
    ] {
        assert!(raw.contains(part), "{part} is not exercised");
    }
    let pixels = |pdf: &[u8]| read_back::gray_pixels(pdf, 0, 150.0);
    let (pk, pd) = (pixels(&k), pixels(&d));
    assert_eq!(pk.len(), pd.len());
    let differing = pk
        .iter()
        .zip(&pd)
        .filter(|(a, b)| a.abs_diff(**b) > 24)
        .count();
    assert_eq!(differing, 0, "pixels differ");
    let dark = pk.iter().filter(|&&p| p < 160).count();
    assert!(dark > 300, "nothing drawn: {dark} of {}", pk.len());
    let text = |pdf: &[u8]| read_back::read(pdf).raw_text();
    let (tk, td) = (text(&k), text(&d));
    assert_eq!(tk, td);
    assert!(td.contains("Ðorđević"), "{td}");
}

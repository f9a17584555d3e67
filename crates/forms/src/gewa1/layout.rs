//! Drawing the static GewA 1 form: shading, rules and labels, and the boxes values go into.
//!
//! The model form is a 468 x 681 pt gazette page. It is placed on A4 with a uniform scale of
//! [`SCALE`] (so every proportion of the original is kept) and centred; [`to_page`] maps a
//! gazette point (origin bottom-left) to an A4 point (krilla: origin top-left).

use std::sync::OnceLock;

use krilla::geom::Transform;

use crate::RenderError;
use crate::canvas::Canvas;
use crate::direct::{Preparer, Template};
use crate::font::{self, Face};
use crate::pdf;
use crate::text::{self, Rect};

use super::model::{PageGeometry, Style};

/// Gazette points to A4 points.
pub(crate) const SCALE: f32 = 1.2;
/// Left edge of the gazette page on A4 (centres the form's 2.4..465.2 pt extent).
const OFFSET_X: f32 = 17.05;
/// A4 y of the gazette's top content edge ([`GAZETTE_TOP`]).
const OFFSET_Y: f32 = 18.3;
/// Top edge of the form's content on the gazette page.
const GAZETTE_TOP: f32 = 677.23;

pub(crate) fn to_page(x: f32, y: f32) -> (f32, f32) {
    (OFFSET_X + SCALE * x, OFFSET_Y + SCALE * (GAZETTE_TOP - y))
}

/// A gazette rectangle given by its left, bottom, right and top edges, in A4 coordinates.
pub(crate) fn rect(left: f32, bottom: f32, right: f32, top: f32) -> Rect {
    let (x, y) = to_page(left, top);
    Rect {
        x,
        y,
        w: SCALE * (right - left),
        h: SCALE * (top - bottom),
    }
}

/// Label font sizes in gazette points, from the model's glyph heights (ascender of the
/// label lines about 4.7 pt, headings 6.0 pt, the "GewA 1" title 9.4 pt cap height).
fn gazette_size(style: Style) -> f32 {
    match style {
        Style::Regular | Style::Bold | Style::Number => 6.2,
        Style::Heading => 7.9,
        Style::Title => 13.2,
    }
}

/// Colours of the model (CMYK there, converted to sRGB grey): 9.4 % shading, 50 % rules, 75 %
/// label text.
const SHADING: (u8, u8, u8) = (231, 231, 231);
const RULE: (u8, u8, u8) = (128, 128, 128);
const LABEL: (u8, u8, u8) = (64, 64, 64);
const WHITE: (u8, u8, u8) = (255, 255, 255);

/// Rectangles in gazette coordinates with y pointing down from [`GAZETTE_TOP`] (short numbers
/// in the content stream), drawn under [`gazette_transform`].
fn gazette_rects(rects: &[[f32; 4]]) -> Vec<[f32; 4]> {
    rects
        .iter()
        .map(|r| {
            let top = ((GAZETTE_TOP - r[1] - r[3]) * 100.0).round() / 100.0;
            [r[0], top, r[2], r[3]]
        })
        .collect()
}

/// Maps the coordinates of [`gazette_rects`] onto the A4 page.
fn gazette_transform() -> Transform {
    Transform::from_row(SCALE, 0.0, 0.0, SCALE, OFFSET_X, OFFSET_Y)
}

/// The labels the model of 11.12.2024 (BGBl. 2024 I Nr. 411) words differently from the 2019
/// model the geometry was read from, as `(2019 wording, 2024 wording)`: field 25's relocation
/// box ("Feld-Nr. 25 des neu gefassten Formulars GewA 1", xgewerbeordnung.de; municipal pages
/// quote the new wording). The new text ends where the old one ended, beside its check box.
/// Every other label follows 2019 (docs/forms.md, "The model of 11.12.2024").
pub(crate) const AMENDED_2024: &[(&str, &str)] = &[(
    "Wiedereröffnung nach Verlegung aus einem anderen Meldebezirk",
    "Verlegung des Betriebs aus einem anderen Meldebezirk",
)];

/// Draws the static form of one page: shading, white value areas, rules, labels.
pub(crate) fn draw_static<C: Canvas>(
    page: &mut C,
    geometry: &PageGeometry,
) -> Result<(), RenderError> {
    let fonts = font::fonts()?;
    page.push_transform(&gazette_transform());
    for (rects, color) in [
        (geometry.grey, SHADING),
        (geometry.white, WHITE),
        (geometry.rules, RULE),
    ] {
        page.set_fill_rgb(color);
        page.fill_rects(&gazette_rects(rects));
    }
    page.pop();
    page.set_fill_rgb(LABEL);
    for l in geometry.labels {
        let bold = matches!(l.style, Style::Bold | Style::Heading | Style::Title);
        let face: &Face = if bold { &fonts.bold } else { &fonts.regular };
        let run = font::shape(face, l.text);
        let size = gazette_size(l.style) * SCALE;
        // Ink width of Noto Sans is about the advance width less ~0.1 em of side bearings.
        let natural = (run.width_em() - 0.1) * size;
        let target = l.width * SCALE;
        let squash = if l.text.chars().count() > 3 && natural > target && natural > 0.0 {
            target / natural
        } else {
            1.0
        };
        let (mut x, y) = to_page(l.x, l.base);
        // A label of 2024 keeps the 2019 label's compression (the model's narrower typeface)
        // and ends where it ended.
        let amended = AMENDED_2024
            .iter()
            .find(|(old, _)| *old == l.text)
            .map(|(_, new)| font::shape(face, new));
        let run = match amended {
            Some(new) => {
                x += target - (new.width_em() - 0.1) * size * squash;
                new
            }
            None => run,
        };
        // Shift left by the first glyph's typical left side bearing (~0.05 em).
        text::draw_run(page, face, &run, x - 0.05 * size * squash, y, size, squash);
    }
    Ok(())
}

/// The two pages of the static form and the supplementary sheet's pages, with the fonts of
/// their labels, the check mark and the sandbox mark; prepared on first use.
pub(crate) fn template() -> Result<&'static Template, RenderError> {
    static TEMPLATE: OnceLock<Result<Template, RenderError>> = OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            let fonts = font::fonts()?;
            let mut preparer = Preparer::new()?;
            for geometry in [&super::geometry::PAGE1, &super::geometry::PAGE2] {
                preparer.page(|page| draw_static(page, geometry))?;
            }
            // The supplementary sheet's pages, drawn only when a value needs them.
            for _ in 0..super::sheet::PAGES {
                preparer.page(|page| super::sheet::draw_static(page))?;
            }
            for text in [super::CHECK_MARK, pdf::SANDBOX_MARK, pdf::SANDBOX_BANNER] {
                preparer.include(&fonts.bold, text)?;
            }
            preparer.include(&fonts.regular, super::sheet::SEE_SHEET)?;
            for text in super::sheet::prepared_texts() {
                preparer.include(&fonts.bold, text)?;
            }
            preparer.finish()
        })
        .as_ref()
        .map_err(Clone::clone)
}

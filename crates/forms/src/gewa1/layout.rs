//! Drawing the static GewA 1 form: shading, rules and labels, and the boxes values go into.
//!
//! The model form is a 468 x 681 pt gazette page. It is placed on A4 with a uniform scale of
//! [`SCALE`] (so every proportion of the original is kept) and centred; [`to_page`] maps a
//! gazette point (origin bottom-left) to an A4 point (krilla: origin top-left).

use std::sync::OnceLock;

use krilla::color::rgb;
use krilla::geom::{Path, PathBuilder, Transform};
use krilla::surface::Surface;

use crate::RenderError;
use crate::pdf::fill;
use crate::text::{self, Face, Rect, Run};

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Regular,
    Bold,
    Heading,
    Title,
    Number,
}

pub(crate) struct Label {
    pub x: f32,
    pub base: f32,
    pub width: f32,
    pub style: Style,
    pub text: &'static str,
}

pub(crate) struct PageGeometry {
    pub grey: &'static [[f32; 4]],
    pub white: &'static [[f32; 4]],
    pub rules: &'static [[f32; 4]],
    pub labels: &'static [Label],
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

fn color((r, g, b): (u8, u8, u8)) -> rgb::Color {
    rgb::Color::new(r, g, b)
}

struct PreparedLabel {
    bold: bool,
    run: Run,
    x: f32,
    y: f32,
    size: f32,
    squash: f32,
}

struct PreparedPage {
    grey: Option<Path>,
    white: Option<Path>,
    rules: Option<Path>,
    labels: Vec<PreparedLabel>,
}

/// One path of many rectangles, in gazette coordinates with y pointing down from
/// [`GAZETTE_TOP`] (short numbers in the content stream); drawn under [`gazette_transform`].
fn rect_path(rects: &[[f32; 4]]) -> Option<Path> {
    let mut builder = PathBuilder::new();
    for r in rects {
        let top = ((GAZETTE_TOP - r[1] - r[3]) * 100.0).round() / 100.0;
        if let Some(kr) = krilla::geom::Rect::from_xywh(r[0], top, r[2], r[3]) {
            builder.push_rect(kr);
        }
    }
    builder.finish()
}

/// Maps the coordinates of [`rect_path`] onto the A4 page.
fn gazette_transform() -> Transform {
    Transform::from_row(SCALE, 0.0, 0.0, SCALE, OFFSET_X, OFFSET_Y)
}

fn prepare(geometry: &PageGeometry) -> Result<PreparedPage, RenderError> {
    let fonts = text::fonts()?;
    let labels = geometry
        .labels
        .iter()
        .map(|l| {
            let bold = matches!(l.style, Style::Bold | Style::Heading | Style::Title);
            let face: &Face = if bold { &fonts.bold } else { &fonts.regular };
            let run = text::shape(face, l.text);
            let size = gazette_size(l.style) * SCALE;
            // Ink width of Noto Sans is about the advance width less ~0.1 em of side bearings.
            let natural = (run.width_em() - 0.1) * size;
            let target = l.width * SCALE;
            let squash = if l.text.chars().count() > 3 && natural > target && natural > 0.0 {
                target / natural
            } else {
                1.0
            };
            let (x, y) = to_page(l.x, l.base);
            PreparedLabel {
                bold,
                run,
                // Shift left by the first glyph's typical left side bearing (~0.05 em).
                x: x - 0.05 * size * squash,
                y,
                size,
                squash,
            }
        })
        .collect();
    Ok(PreparedPage {
        grey: rect_path(geometry.grey),
        white: rect_path(geometry.white),
        rules: rect_path(geometry.rules),
        labels,
    })
}

fn prepared(page: usize) -> Result<&'static PreparedPage, RenderError> {
    static PAGES: OnceLock<Result<[PreparedPage; 2], RenderError>> = OnceLock::new();
    let pages = PAGES
        .get_or_init(|| {
            Ok([
                prepare(&super::geometry::PAGE1)?,
                prepare(&super::geometry::PAGE2)?,
            ])
        })
        .as_ref()
        .map_err(Clone::clone)?;
    pages.get(page).ok_or(RenderError::Font)
}

/// Draws the static form of page `page` (0 or 1).
pub(crate) fn draw_static(surface: &mut Surface, page: usize) -> Result<(), RenderError> {
    let prepared = prepared(page)?;
    let fonts = text::fonts()?;
    surface.set_stroke(None);
    surface.push_transform(&gazette_transform());
    for (path, color) in [
        (&prepared.grey, SHADING),
        (&prepared.white, WHITE),
        (&prepared.rules, RULE),
    ] {
        if let Some(path) = path {
            surface.set_fill(Some(fill(super::layout::color(color))));
            surface.draw_path(path);
        }
    }
    surface.pop();
    surface.set_fill(Some(fill(color(LABEL))));
    for l in &prepared.labels {
        let face = if l.bold { &fonts.bold } else { &fonts.regular };
        text::draw_run(surface, face, &l.run, l.x, l.y, l.size, l.squash);
    }
    Ok(())
}

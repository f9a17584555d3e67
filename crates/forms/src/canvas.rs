//! What the drawing code of the forms needs from a page: colours, shaped text, transforms,
//! opacity and stroked paths, in page coordinates with the origin top-left (y down, as krilla).
//!
//! Two pages implement it: krilla's [`Surface`] (tax summary, trade licence) and
//! [`crate::direct`]'s page (the GewA 1 and the power of attorney, whose fonts and static parts
//! are prepared once per process). Text fitting, the flow of the one-page documents, the
//! signature and the sandbox mark are written once, against this trait, so both kinds of
//! document draw them the same way.

use krilla::color::rgb;
use krilla::geom::{PathBuilder, Point, Transform};
use krilla::num::NormalizedF32;
use krilla::paint::{Fill, LineCap, LineJoin, Stroke};
use krilla::surface::Surface;

use crate::font::{Face, Run};

/// One segment of a path, in page coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Seg {
    MoveTo(f32, f32),
    LineTo(f32, f32),
    CubicTo(f32, f32, f32, f32, f32, f32),
    Close,
}

/// How a path is stroked: round caps and joins, one colour.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pen {
    pub rgb: (u8, u8, u8),
    pub width: f32,
}

pub(crate) trait Canvas {
    /// The colour later text is filled with.
    fn set_fill_rgb(&mut self, rgb: (u8, u8, u8));
    /// Draws `run` (never empty: callers go through [`crate::text::draw_run`]) with its left
    /// baseline point at `(x, y)`, compressed horizontally by `squash`, at `size` points.
    fn glyphs(&mut self, face: &Face, run: &Run, x: f32, y: f32, size: f32, squash: f32);
    /// Applies `transform` to what is drawn until the matching [`Canvas::pop`].
    fn push_transform(&mut self, transform: &Transform);
    /// Draws what follows, until the matching [`Canvas::pop`], with `opacity` (0..1).
    fn push_opacity(&mut self, opacity: f32);
    fn pop(&mut self);
    /// Strokes a path with round caps and joins.
    fn stroke(&mut self, path: &[Seg], pen: Pen);
    /// Fills rectangles `[x, y, width, height]` with the fill colour.
    fn fill_rects(&mut self, rects: &[[f32; 4]]);
}

impl Canvas for Surface<'_> {
    fn set_fill_rgb(&mut self, (r, g, b): (u8, u8, u8)) {
        self.set_fill(Some(fill(rgb::Color::new(r, g, b))));
    }

    fn glyphs(&mut self, face: &Face, run: &Run, x: f32, y: f32, size: f32, squash: f32) {
        if (squash - 1.0).abs() < 1e-4 {
            self.draw_glyphs(
                Point::from_xy(x, y),
                &run.glyphs,
                face.font.clone(),
                &run.text,
                size,
                false,
            );
        } else {
            self.push_transform(&Transform::from_row(squash, 0.0, 0.0, 1.0, x, y));
            self.draw_glyphs(
                Point::from_xy(0.0, 0.0),
                &run.glyphs,
                face.font.clone(),
                &run.text,
                size,
                false,
            );
            Surface::pop(self);
        }
    }

    fn push_transform(&mut self, transform: &Transform) {
        Surface::push_transform(self, transform);
    }

    fn push_opacity(&mut self, opacity: f32) {
        Surface::push_opacity(
            self,
            NormalizedF32::new(opacity.clamp(0.0, 1.0)).unwrap_or(NormalizedF32::ONE),
        );
    }

    fn pop(&mut self) {
        Surface::pop(self);
    }

    fn fill_rects(&mut self, rects: &[[f32; 4]]) {
        let mut builder = PathBuilder::new();
        for &[x, y, w, h] in rects {
            if let Some(r) = krilla::geom::Rect::from_xywh(x, y, w, h) {
                builder.push_rect(r);
            }
        }
        if let Some(path) = builder.finish() {
            self.draw_path(&path);
        }
    }

    fn stroke(&mut self, path: &[Seg], pen: Pen) {
        let mut builder = PathBuilder::new();
        for seg in path {
            match *seg {
                Seg::MoveTo(x, y) => builder.move_to(x, y),
                Seg::LineTo(x, y) => builder.line_to(x, y),
                Seg::CubicTo(x1, y1, x2, y2, x, y) => builder.cubic_to(x1, y1, x2, y2, x, y),
                Seg::Close => builder.close(),
            }
        }
        let Some(path) = builder.finish() else {
            return;
        };
        let (r, g, b) = pen.rgb;
        self.set_fill(None);
        self.set_stroke(Some(Stroke {
            paint: rgb::Color::new(r, g, b).into(),
            width: pen.width,
            line_cap: LineCap::Round,
            line_join: LineJoin::Round,
            ..Default::default()
        }));
        self.draw_path(&path);
        self.set_stroke(None);
    }
}

/// An opaque fill of one colour on a krilla surface.
pub(crate) fn fill(color: rgb::Color) -> Fill {
    Fill {
        paint: color.into(),
        opacity: NormalizedF32::ONE,
        rule: Default::default(),
    }
}

//! The one-page flow of the power of attorney and the sample trade licence: paragraphs,
//! labelled rows, spaces, rules and a signature box, top to bottom, shrunk uniformly until the
//! page holds them.

use crate::canvas::Canvas;
use crate::font::{self, Run};
use crate::pdf::{self, A4_HEIGHT, A4_WIDTH};
use crate::text::{self, Rect};

pub(crate) const MARGIN_X: f32 = 62.0;
pub(crate) const TOP: f32 = 56.0;
pub(crate) const BOTTOM: f32 = A4_HEIGHT - 48.0;
pub(crate) const WIDTH: f32 = A4_WIDTH - 2.0 * MARGIN_X;
const SIGNATURE_HEIGHT: f32 = 52.0;
const SIGNATURE_WIDTH: f32 = 210.0;

/// One element of the flow.
pub(crate) enum Item<'a> {
    /// A paragraph in the full text width.
    Para {
        bold: bool,
        size: f32,
        color: (u8, u8, u8),
        run: Run,
    },
    /// A labelled row of a facts table: bold label on the left, value lines on the right.
    Row { label: Run, lines: Vec<Run> },
    /// Vertical space in points (scaled).
    Space(f32),
    /// A thin horizontal rule.
    Rule,
    /// The signature box with its line and caption.
    Signature {
        path: &'a domain::signature::SignaturePath,
        caption: Run,
    },
}

/// Items and the width of the rows' label column.
pub(crate) struct Flow<'a> {
    pub items: Vec<Item<'a>>,
    pub label_width: f32,
}

impl Flow<'_> {
    /// The largest scale (1.0 down to 0.4 in steps of 0.05) at which the items fit the page.
    pub fn fitting_scale(&self, fonts: &font::Fonts) -> f32 {
        let available = BOTTOM - TOP;
        let mut scale = 1.0;
        while scale > 0.4 && self.run(scale, fonts, None) > available {
            scale -= 0.05;
        }
        scale
    }

    /// Runs the items at `scale`; draws when a canvas is given. Returns the height used.
    pub fn run(
        &self,
        scale: f32,
        fonts: &font::Fonts,
        mut surface: Option<&mut dyn Canvas>,
    ) -> f32 {
        let mut y = TOP;
        for item in &self.items {
            match item {
                Item::Para {
                    bold,
                    size,
                    color,
                    run,
                } => {
                    let face = if *bold { &fonts.bold } else { &fonts.regular };
                    y = text::paragraph(
                        surface.as_deref_mut(),
                        face,
                        *size * scale,
                        *color,
                        MARGIN_X,
                        WIDTH,
                        run,
                        y,
                    );
                }
                Item::Row { label, lines } => {
                    let size = 9.5 * scale;
                    let label_bottom = text::paragraph(
                        surface.as_deref_mut(),
                        &fonts.bold,
                        size,
                        (60, 60, 60),
                        MARGIN_X,
                        self.label_width - 6.0,
                        label,
                        y,
                    );
                    let mut vy = y;
                    for line in lines {
                        vy = text::paragraph(
                            surface.as_deref_mut(),
                            &fonts.regular,
                            size,
                            (0, 0, 0),
                            MARGIN_X + self.label_width,
                            WIDTH - self.label_width,
                            line,
                            vy,
                        );
                    }
                    y = vy.max(label_bottom) + 5.0 * scale;
                }
                Item::Space(h) => y += h * scale,
                Item::Rule => {
                    if let Some(s) = surface.as_deref_mut() {
                        pdf::hline(s, MARGIN_X, MARGIN_X + WIDTH, y, (170, 170, 170));
                    }
                    y += 1.0;
                }
                Item::Signature { path, caption } => {
                    let rect = Rect {
                        x: MARGIN_X,
                        y,
                        w: SIGNATURE_WIDTH,
                        h: SIGNATURE_HEIGHT * scale,
                    };
                    if let Some(s) = surface.as_deref_mut() {
                        pdf::draw_signature(s, path, rect);
                        pdf::hline(
                            s,
                            MARGIN_X,
                            MARGIN_X + SIGNATURE_WIDTH,
                            y + rect.h + 1.0,
                            (90, 90, 90),
                        );
                    }
                    y += rect.h + 3.0;
                    y = text::paragraph(
                        surface.as_deref_mut(),
                        &fonts.regular,
                        8.0 * scale,
                        (0, 0, 0),
                        MARGIN_X,
                        WIDTH,
                        caption,
                        y,
                    );
                }
            }
        }
        y - TOP
    }
}

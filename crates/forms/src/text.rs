//! Fitting shaped text into boxes and drawing it.
//!
//! The shrink-then-wrap rule lays out runs shaped by [`crate::font`] at the exact advance widths
//! of the embedded font.

use std::ops::Range;

use crate::canvas::Canvas;
use crate::font::{ASCENT, Face, LINE_HEIGHT, Run, shape};

/// Draws a run with its left baseline point at `(x, y)`, compressed horizontally by `squash`.
pub(crate) fn draw_run<C: Canvas + ?Sized>(
    canvas: &mut C,
    face: &Face,
    run: &Run,
    x: f32,
    y: f32,
    size: f32,
    squash: f32,
) {
    if !run.glyphs.is_empty() {
        canvas.glyphs(face, run, x, y, size, squash);
    }
}

/// A rectangle in page coordinates (krilla: origin top-left, y down).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rect {
    pub x: f32,
    pub y: f32,
    pub w: f32,
    pub h: f32,
}

impl Rect {
    pub fn inset(self, dx: f32, dy: f32) -> Rect {
        Rect {
            x: self.x + dx,
            y: self.y + dy,
            w: (self.w - 2.0 * dx).max(0.0),
            h: (self.h - 2.0 * dy).max(0.0),
        }
    }
}

/// How a value is fitted into its box.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fit {
    /// Preferred font size.
    pub max: f32,
    /// Smallest size used before wrapping onto more lines.
    pub min: f32,
    /// Vertical placement of the text block inside the box.
    pub valign: VAlign,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VAlign {
    Top,
    Center,
}

/// Lines laid out at one font size.
pub(crate) struct Laid {
    pub size: f32,
    pub lines: Vec<Run>,
}

/// Whitespace that allows a line break (not the no-break spaces U+00A0 and U+202F).
fn is_break_space(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_whitespace() && c != '\u{a0}' && c != '\u{202f}')
}

/// Breaks a paragraph into lines no wider than `width` at `size`: at spaces where possible,
/// inside a word only when the word alone is too wide. Returns `None` when a single cluster is
/// wider than the line.
fn wrap(run: &Run, width: f32, size: f32) -> Option<Vec<Run>> {
    let max_em = width / size;
    let mut lines = Vec::new();
    // Cluster boundaries with their advance.
    let mut clusters: Vec<(Range<usize>, f32)> = Vec::new();
    for g in &run.glyphs {
        match clusters.last_mut() {
            Some((r, w)) if r.start == g.text_range.start => {
                *w += g.x_advance;
                r.end = r.end.max(g.text_range.end);
            }
            _ => clusters.push((g.text_range.clone(), g.x_advance)),
        }
    }
    let mut line_start = 0usize; // cluster index
    while line_start < clusters.len() {
        // Skip leading spaces.
        while line_start < clusters.len()
            && run
                .text
                .get(clusters[line_start].0.clone())
                .is_some_and(is_break_space)
        {
            line_start += 1;
        }
        if line_start >= clusters.len() {
            break;
        }
        let mut width_em = 0.0;
        let mut last_space: Option<usize> = None;
        let mut end = line_start;
        while end < clusters.len() {
            let w = clusters[end].1;
            let is_space = run
                .text
                .get(clusters[end].0.clone())
                .is_some_and(is_break_space);
            if width_em + w > max_em + 1e-4 && !is_space {
                break;
            }
            if is_space {
                last_space = Some(end);
            }
            width_em += w;
            end += 1;
        }
        if end == line_start {
            return None; // one cluster wider than the box
        }
        let cut = if end < clusters.len() {
            match last_space {
                Some(s) if s > line_start => s,
                _ => end,
            }
        } else {
            end
        };
        let from = clusters[line_start].0.start;
        let to = if cut < clusters.len() {
            clusters[cut].0.start
        } else {
            run.text.len()
        };
        lines.push(run.slice(from..to).trimmed());
        line_start = cut;
    }
    Some(lines)
}

/// Lays out `paragraphs` (each a shaped run; hard line breaks separate them) in `rect`.
///
/// The rule: use the preferred size; if a paragraph is too wide, shrink it down to `fit.min`
/// on one line per paragraph; if it still does not fit, wrap at the largest size from `max` to
/// `min` at which all lines fit the box height; if nothing fits at `min`, keep shrinking (in
/// 0.25 pt steps) until it does. Text is never clipped or drawn outside the box.
pub(crate) fn layout(paragraphs: &[Run], rect: Rect, fit: Fit) -> Laid {
    let widest = paragraphs.iter().map(Run::width_em).fold(0.0f32, f32::max);
    let n = paragraphs.len().max(1) as f32;
    // 1. One line per paragraph, shrunk to the width.
    let mut size = fit.max;
    if widest > 0.0 {
        size = size.min(rect.w / widest);
    }
    size = size.min(rect.h / (n * LINE_HEIGHT));
    if size >= fit.min {
        return Laid {
            size,
            lines: paragraphs.iter().map(Run::trimmed).collect(),
        };
    }
    // 2. Wrap, from the preferred size downwards, then below the minimum if unavoidable.
    let mut size = fit.max;
    while size > 0.5 {
        if let Some(lines) = wrap_all(paragraphs, rect.w, size)
            && lines.len() as f32 * LINE_HEIGHT * size <= rect.h + 1e-3
        {
            return Laid { size, lines };
        }
        size -= 0.25;
    }
    Laid {
        size: 0.5,
        lines: Vec::new(),
    }
}

fn wrap_all(paragraphs: &[Run], width: f32, size: f32) -> Option<Vec<Run>> {
    let mut out = Vec::new();
    for p in paragraphs {
        out.extend(wrap(p, width, size)?);
    }
    Some(out)
}

/// Draws laid-out lines left-aligned in `rect`.
pub(crate) fn draw_laid<C: Canvas + ?Sized>(
    canvas: &mut C,
    face: &Face,
    laid: &Laid,
    rect: Rect,
    valign: VAlign,
) {
    let block = laid.lines.len() as f32 * LINE_HEIGHT * laid.size;
    let top = match valign {
        VAlign::Top => rect.y,
        VAlign::Center => rect.y + (rect.h - block).max(0.0) / 2.0,
    };
    for (i, line) in laid.lines.iter().enumerate() {
        let baseline = top + (i as f32 * LINE_HEIGHT + ASCENT) * laid.size;
        draw_run(canvas, face, line, rect.x, baseline, laid.size, 1.0);
    }
}

/// The non-empty lines of `text` (hard line breaks with `\n`), shaped.
fn paragraphs(face: &Face, text: &str) -> Vec<Run> {
    text.split('\n')
        .filter(|p| !p.trim().is_empty())
        .map(|p| shape(face, p))
        .collect()
}

/// Shapes and lays out `text` (hard line breaks with `\n`) in `rect`; `None` when it fits only
/// below `fit.min` (the caller then moves it elsewhere) or is empty.
pub(crate) fn fit_box(face: &Face, text: &str, rect: Rect, fit: Fit) -> Option<Laid> {
    let paragraphs = paragraphs(face, text);
    if paragraphs.is_empty() {
        return None;
    }
    let laid = layout(&paragraphs, rect, fit);
    (laid.size + 1e-3 >= fit.min && !laid.lines.is_empty()).then_some(laid)
}

/// Shapes, fits and draws `text` (hard line breaks with `\n`) in `rect`.
pub(crate) fn fill_box<C: Canvas + ?Sized>(
    canvas: &mut C,
    face: &Face,
    text: &str,
    rect: Rect,
    fit: Fit,
) {
    let paragraphs = paragraphs(face, text);
    if paragraphs.is_empty() {
        return;
    }
    let laid = layout(&paragraphs, rect, fit);
    draw_laid(canvas, face, &laid, rect, fit.valign);
}

/// Wraps `text` into `width` at `size` and draws it (when a surface is given) from `y` down.
/// Returns the y below the paragraph.
#[allow(clippy::too_many_arguments)]
pub(crate) fn paragraph<C: Canvas + ?Sized>(
    canvas: Option<&mut C>,
    face: &Face,
    size: f32,
    rgb: (u8, u8, u8),
    x: f32,
    width: f32,
    run: &Run,
    y: f32,
) -> f32 {
    let laid = layout(
        std::slice::from_ref(run),
        Rect {
            x,
            y,
            w: width,
            h: f32::MAX,
        },
        Fit {
            max: size,
            min: size,
            valign: VAlign::Top,
        },
    );
    let height = laid.lines.len() as f32 * LINE_HEIGHT * laid.size;
    if let Some(canvas) = canvas {
        canvas.set_fill_rgb(rgb);
        let mut by = y;
        for line in &laid.lines {
            draw_run(
                canvas,
                face,
                line,
                x,
                by + ASCENT * laid.size,
                laid.size,
                1.0,
            );
            by += LINE_HEIGHT * laid.size;
        }
    }
    y + height
}

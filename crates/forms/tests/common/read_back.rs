//! A PDF read back as a reader sees it, in pure Rust (hayro): its pages, title and fonts, its
//! text with positions, and its pixels. The tests of the forms crate use it, and the server's
//! tests include this file too (`#[path]`), so a PDF is read the same way everywhere and no
//! system tool (poppler's `pdftotext`, `pdfinfo`, `pdftoppm`) is needed.
//!
//! The text is what was drawn, character by character: each glyph's Unicode (from the font's
//! `ToUnicode` map, or the `ActualText` of the marked span it is drawn in, as a cluster of a
//! letter with its marks is), at its place on the page. From that:
//!
//! - [`Document::layout_text`]: each page's lines from top to bottom, each line's text from left
//!   to right (as `pdftotext -layout`); a space between words, three at a wide gap (another
//!   column);
//! - [`Document::raw_text`]: the text in the order it was drawn (as `pdftotext -raw`);
//! - [`Document::words`]: the words in layout order with their boxes (points, origin top-left;
//!   as `pdftotext -bbox`), a word's height being the font's ascent and descent.
//!
//! Text not drawn horizontally (the diagonal sandbox mark) forms lines of its own, after the
//! page's horizontal lines.
#![allow(dead_code)]

use std::collections::HashMap;

use hayro::hayro_interpret::font::{Glyph, GlyphRun};
use hayro::hayro_interpret::hayro_cmap::BfString;
use hayro::hayro_interpret::hayro_syntax::Pdf;
use hayro::hayro_interpret::hayro_syntax::object::{Dict, String as PdfString};
use hayro::hayro_interpret::{
    BlendMode, ClipPath, Context, Device, DrawMode, DrawProps, Image, ImageDrawProps,
    InterpreterCache, InterpreterSettings, SoftMask, TransformExt, interpret_page,
};
use hayro::kurbo::{Affine, BezPath, Point, Rect, Vec2};

/// A word break: a gap wider than this share of the font size (poppler's `minWordBreakSpace`).
const WORD_GAP: f64 = 0.1;
/// A gap wider than this share of the font size separates columns: three spaces in the layout.
const COLUMN_GAP: f64 = 1.5;
/// Baselines closer than this share of the font size are one line.
const SAME_LINE: f64 = 0.4;

/// A PDF as read back.
pub struct Document {
    pub pages: Vec<Page>,
    /// The document information's `Title`.
    pub title: Option<String>,
    /// The PostScript names of the fonts text is drawn with, sorted, each once.
    pub fonts: Vec<String>,
}

/// One page: its size in points and what was drawn on it as text, in drawing order.
pub struct Page {
    pub width: f64,
    pub height: f64,
    pub chars: Vec<Char>,
}

/// A character as drawn (or the text of a marked span): its text, where its baseline starts
/// and ends, and its font size, ascent and descent (in points; y grows downwards).
#[derive(Debug, Clone)]
pub struct Char {
    pub text: String,
    pub start: Point,
    pub end: Point,
    pub size: f64,
    pub ascent: f64,
    pub descent: f64,
}

/// A word with its box (points, origin top-left) and 0-based page.
#[derive(Debug, Clone)]
pub struct Word {
    pub page: usize,
    pub text: String,
    pub x_min: f32,
    pub y_min: f32,
    pub x_max: f32,
    pub y_max: f32,
}

/// Reads `pdf`; panics when it is not a PDF hayro can read.
pub fn read(pdf: &[u8]) -> Document {
    let file = Pdf::new(pdf.to_vec()).unwrap_or_else(|e| panic!("not a readable PDF: {e:?}"));
    let cache = InterpreterCache::new();
    let mut fonts = Vec::new();
    let mut metrics = HashMap::new();
    let mut pages = Vec::new();
    for page in file.pages().iter() {
        let (width, height) = page.render_dimensions();
        let mut context = Context::new(
            page.initial_transform(true).to_kurbo(),
            Rect::new(0.0, 0.0, f64::from(width), f64::from(height)),
            &cache,
            page.xref(),
            InterpreterSettings::default(),
        );
        let mut device = TextDevice {
            chars: Vec::new(),
            spans: Vec::new(),
            last_fill: None,
            fonts: &mut fonts,
            metrics: &mut metrics,
        };
        interpret_page(page, &mut context, &mut device);
        pages.push(Page {
            width: f64::from(width),
            height: f64::from(height),
            chars: device.chars,
        });
    }
    fonts.sort();
    fonts.dedup();
    let title = file.metadata().title.as_deref().map(decode_text_string);
    Document {
        pages,
        title,
        fonts,
    }
}

impl Document {
    /// The text of page `page` (0-based) in layout order: lines top to bottom, then the lines
    /// not drawn horizontally.
    pub fn layout_text(&self, page: usize) -> String {
        lines(&self.pages[page].chars)
            .iter()
            .map(|line| line_text(line))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The text of every page in layout order, pages separated by a form feed.
    pub fn all_layout_text(&self) -> String {
        (0..self.pages.len())
            .map(|p| self.layout_text(p))
            .collect::<Vec<_>>()
            .join("\n\u{c}")
    }

    /// The text of every page in drawing order: a space at a word gap, a line break where the
    /// next character is not on the same line further right.
    pub fn raw_text(&self) -> String {
        let mut out = String::new();
        for page in &self.pages {
            let mut previous: Option<&Char> = None;
            for c in &page.chars {
                if let Some(p) = previous {
                    match gap(p, c) {
                        Some(g) if g > WORD_GAP * p.size.max(c.size) => out.push(' '),
                        Some(_) => {}
                        None => out.push('\n'),
                    }
                }
                out.push_str(&c.text);
                previous = Some(c);
            }
            out.push_str("\n\u{c}");
        }
        out
    }

    /// The words of every page in layout order, with their boxes.
    pub fn words(&self) -> Vec<Word> {
        let mut out = Vec::new();
        for (index, page) in self.pages.iter().enumerate() {
            for line in lines(&page.chars) {
                let mut word: Vec<&Char> = Vec::new();
                let mut previous: Option<&Char> = None;
                for c in line {
                    let apart =
                        previous.is_some_and(|p| gap(p, c).is_none_or(|g| g > WORD_GAP * p.size));
                    if apart || c.text.trim().is_empty() {
                        push_word(&mut out, index, &word);
                        word.clear();
                    }
                    if !c.text.trim().is_empty() {
                        word.push(c);
                    }
                    previous = Some(c);
                }
                push_word(&mut out, index, &word);
            }
        }
        out
    }
}

/// The distance along the baseline from the end of `a` to the start of `b` when `b` continues
/// the line of `a` (same direction, same baseline, not further back than half a font size).
fn gap(a: &Char, b: &Char) -> Option<f64> {
    let (da, db) = (direction(a), direction(b));
    if (da - db).hypot() > 0.05 {
        return None;
    }
    let offset = b.start - a.end;
    let along = offset.dot(da);
    let across = offset.cross(da).abs();
    let size = a.size.max(b.size);
    (across <= SAME_LINE * size && along >= -0.5 * size).then_some(along)
}

/// The unit vector along the baseline.
fn direction(c: &Char) -> Vec2 {
    let d = c.end - c.start;
    if d.hypot() < 1e-6 {
        Vec2::new(1.0, 0.0)
    } else {
        d.normalize()
    }
}

fn horizontal(c: &Char) -> bool {
    let d = direction(c);
    d.x > 0.999
}

/// Splits drawing order into runs (characters continuing each other's line), puts the
/// horizontal runs into lines by baseline, top to bottom, each sorted left to right, and adds
/// the other runs as lines of their own.
fn lines(chars: &[Char]) -> Vec<Vec<&Char>> {
    let mut runs: Vec<Vec<&Char>> = Vec::new();
    for c in chars {
        match runs.last_mut() {
            Some(run) if gap(run[run.len() - 1], c).is_some_and(|g| g < COLUMN_GAP * c.size) => {
                run.push(c);
            }
            _ => runs.push(vec![c]),
        }
    }
    let (mut flat, other): (Vec<_>, Vec<_>) = runs.into_iter().partition(|r| horizontal(r[0]));
    flat.sort_by(|a, b| a[0].start.y.total_cmp(&b[0].start.y));
    let mut lines: Vec<(f64, Vec<Vec<&Char>>)> = Vec::new();
    for run in flat {
        let (y, size) = (run[0].start.y, run[0].size);
        match lines.last_mut() {
            Some((first, members)) if y - *first <= SAME_LINE * size => members.push(run),
            _ => lines.push((y, vec![run])),
        }
    }
    let mut out: Vec<Vec<&Char>> = lines
        .into_iter()
        .map(|(_, mut runs)| {
            runs.sort_by(|a, b| a[0].start.x.total_cmp(&b[0].start.x));
            runs.concat()
        })
        .collect();
    out.extend(other);
    out
}

/// The text of a line: a space at a word gap, three at a column gap.
fn line_text(line: &[&Char]) -> String {
    let mut out = String::new();
    let mut previous: Option<&Char> = None;
    for c in line {
        if let Some(p) = previous {
            let along = (c.start - p.end).dot(direction(p));
            let size = p.size.max(c.size);
            if along > COLUMN_GAP * size {
                out.push_str("   ");
            } else if along > WORD_GAP * size {
                out.push(' ');
            }
        }
        out.push_str(&c.text);
        previous = Some(c);
    }
    out
}

fn push_word(out: &mut Vec<Word>, page: usize, chars: &[&Char]) {
    let (Some(first), Some(last)) = (chars.first(), chars.last()) else {
        return;
    };
    let top = |c: &&Char| c.start.y - c.ascent;
    let bottom = |c: &&Char| c.start.y + c.descent;
    out.push(Word {
        page,
        text: chars.iter().map(|c| c.text.as_str()).collect(),
        x_min: first.start.x.min(last.end.x) as f32,
        x_max: last.end.x.max(first.start.x) as f32,
        y_min: chars.iter().map(top).fold(f64::MAX, f64::min) as f32,
        y_max: chars.iter().map(bottom).fold(f64::MIN, f64::max) as f32,
    });
}

/// Collects the characters a page draws.
struct TextDevice<'f> {
    chars: Vec<Char>,
    /// The open marked-content spans: the `ActualText` of each, if it has one, and the index
    /// of its first character.
    spans: Vec<(Option<String>, usize)>,
    /// Where the last filled run started and how many glyphs it had: text both filled and
    /// stroked comes twice and is read once.
    last_fill: Option<(Point, usize)>,
    fonts: &'f mut Vec<String>,
    /// Ascent and descent (in em) of each font program, by its hash.
    metrics: &'f mut HashMap<u128, (f64, f64)>,
}

impl TextDevice<'_> {
    fn font_metrics(&mut self, glyph: &Glyph<'_>) -> (f64, f64) {
        let Glyph::Outline(outline) = glyph else {
            return (0.8, 0.2);
        };
        let Some(data) = outline.font_data() else {
            return (0.8, 0.2);
        };
        if let Some(name) = &data.postscript_name
            && !self.fonts.contains(name)
        {
            self.fonts.push(name.clone());
        }
        *self.metrics.entry(data.cache_key).or_insert_with(|| {
            let bytes = (*data.data).as_ref();
            ttf_parser::Face::parse(bytes, 0).map_or((0.8, 0.2), |face| {
                let em = f64::from(face.units_per_em());
                (
                    f64::from(face.ascender()) / em,
                    -f64::from(face.descender()) / em,
                )
            })
        })
    }
}

impl<'a> Device<'a> for TextDevice<'_> {
    fn draw_path(&mut self, _: &BezPath, _: DrawProps<'a>, _: &DrawMode) {}
    fn push_clip_path(&mut self, _: &ClipPath) {}
    fn push_transparency_group(&mut self, _: f32, _: Option<SoftMask<'a>>, _: BlendMode) {}
    fn draw_image(&mut self, _: Image<'a, '_>, _: ImageDrawProps<'a>) {}
    fn pop_clip(&mut self) {}
    fn pop_transparency_group(&mut self) {}

    fn draw_glyph_run(&mut self, run: &GlyphRun<'_, 'a>, props: DrawProps<'a>, mode: &DrawMode) {
        let first = run
            .glyphs()
            .first()
            .map(|g| props.transform * g.transform() * Point::ORIGIN);
        let this = first.map(|p| (p, run.glyphs().len()));
        if matches!(mode, DrawMode::Stroke(_)) && this.is_some() && this == self.last_fill {
            return;
        }
        self.last_fill = this.filter(|_| matches!(mode, DrawMode::Fill(_)));
        for glyph in run.glyphs() {
            let (ascent, descent) = self.font_metrics(glyph);
            // Glyph space (1000 units to the em) to the page, origin top-left.
            let to_page: Affine = props.transform * glyph.transform();
            let start = to_page * Point::ORIGIN;
            let advance = match &**glyph {
                Glyph::Outline(o) => o.advance_width(),
                Glyph::Type3(t) => t.advance_width(),
            }
            .unwrap_or(500.0);
            let end = to_page * Point::new(f64::from(advance), 0.0);
            let size = (to_page * Point::new(0.0, 1000.0) - start).hypot();
            let text = match glyph.as_unicode() {
                Some(BfString::Char(c)) => c.to_string(),
                Some(BfString::String(s)) => s,
                None => '\u{fffd}'.to_string(),
            };
            self.chars.push(Char {
                text,
                start,
                end,
                size,
                ascent: ascent * size,
                descent: descent * size,
            });
        }
    }

    fn begin_marked_content(&mut self, _tag: &[u8], properties: Option<&Dict<'_>>) {
        let actual = properties
            .and_then(|p| p.get::<PdfString<'_>>(b"ActualText"))
            .map(|s| decode_text_string(s.as_bytes()));
        self.spans.push((actual, self.chars.len()));
    }

    fn end_marked_content(&mut self) {
        let Some((actual, from)) = self.spans.pop() else {
            return;
        };
        // The characters of a span with an `ActualText` are that text, as one character from
        // the start of the first to the end of the last.
        if let Some(text) = actual
            && from < self.chars.len()
        {
            let drawn = self.chars.split_off(from);
            let (first, last) = (&drawn[0], &drawn[drawn.len() - 1]);
            self.chars.push(Char {
                text,
                start: first.start,
                end: last.end,
                size: first.size,
                ascent: drawn.iter().map(|c| c.ascent).fold(0.0, f64::max),
                descent: drawn.iter().map(|c| c.descent).fold(0.0, f64::max),
            });
        }
    }
}

/// A PDF text string: UTF-16BE with its byte order mark, UTF-8 with its mark, or else
/// PDFDocEncoding (read as Latin-1, which it matches for letters).
fn decode_text_string(bytes: &[u8]) -> String {
    if let Some(utf16) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        let units: Vec<u16> = utf16
            .chunks_exact(2)
            .map(|p| u16::from_be_bytes([p[0], p[1]]))
            .collect();
        String::from_utf16_lossy(&units)
    } else if let Some(utf8) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        String::from_utf8_lossy(utf8).into_owned()
    } else {
        bytes.iter().map(|&b| char::from(b)).collect()
    }
}

/// Page `page` (0-based) rendered at `dpi` in grey, one byte a pixel (0 black, 255 white) on a
/// white background, row by row.
pub fn gray_pixels(pdf: &[u8], page: usize, dpi: f32) -> Vec<u8> {
    use hayro::vello_cpu::color::palette::css::WHITE;
    let file = Pdf::new(pdf.to_vec()).unwrap_or_else(|e| panic!("not a readable PDF: {e:?}"));
    let pages = file.pages();
    let scale = dpi / 72.0;
    let pixmap = hayro::render(
        &pages[page],
        &hayro::RenderCache::new(),
        &InterpreterSettings::default(),
        &hayro::RenderSettings::default(),
        &hayro::PixmapSettings {
            x_scale: scale,
            y_scale: scale,
            bg_color: WHITE,
        },
    );
    pixmap
        .data_as_u8_slice()
        .chunks_exact(4)
        .map(|p| {
            let [r, g, b] = [p[0], p[1], p[2]].map(f32::from);
            (0.299 * r + 0.587 * g + 0.114 * b).round() as u8
        })
        .collect()
}

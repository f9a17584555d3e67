//! A page of a directly written document: its content stream, drawn through [`Canvas`].

use krilla::geom::Transform;
use pdf_writer::types::{LineCapStyle, LineJoinStyle};
use pdf_writer::{Content, Name, Str, TextStr};

use super::fonts::{GlyphSet, OWN_FONTS, PREPARED_FONTS, SRGB, face_index, within_limits};
use crate::RenderError;
use crate::canvas::{Canvas, Pen, Seg};
use crate::font::{Face, Run};
use crate::pdf::A4_HEIGHT;

/// Where the glyphs of a page go.
pub(super) enum Fonts<'a> {
    /// Preparing the template: every glyph goes into the prepared subsets.
    Prepare(&'a mut [GlyphSet; 2]),
    /// Writing a document: a run whose glyphs the prepared subset has uses it; any other
    /// run goes into the document's own subset of that face.
    Document {
        prepared: &'a [GlyphSet; 2],
        own: &'a mut [Option<GlyphSet>; 2],
    },
}

/// A page being drawn: its content stream and where its glyphs go.
pub(crate) struct Page<'a> {
    content: Content,
    fonts: Fonts<'a>,
    fill: (u8, u8, u8),
    /// The fill colour set in the content stream, saved with `q` and restored with `Q`.
    current_fill: Option<(u8, u8, u8)>,
    saved_fills: Vec<Option<(u8, u8, u8)>>,
    opacities: &'a mut Vec<f32>,
}

impl<'a> Page<'a> {
    pub(super) fn new(fonts: Fonts<'a>, opacities: &'a mut Vec<f32>) -> Page<'a> {
        let mut content = Content::new();
        // krilla's coordinates: origin top-left, y down.
        content
            .save_state()
            .transform([1.0, 0.0, 0.0, -1.0, 0.0, A4_HEIGHT]);
        Page {
            content,
            fonts,
            fill: (0, 0, 0),
            current_fill: None,
            saved_fills: Vec::new(),
            opacities,
        }
    }

    pub(super) fn finish(mut self) -> Result<Vec<u8>, RenderError> {
        for _ in 0..self.saved_fills.len() {
            self.content.restore_state();
        }
        self.content.restore_state();
        let buf = self.content.finish();
        within_limits(buf.limits())?;
        let mut bytes = buf.into_vec();
        // Page contents are arrays of streams, which readers join as they are: a token at the
        // end of one stream must not run into the first of the next.
        bytes.push(b'\n');
        Ok(bytes)
    }

    pub(super) fn apply_fill(&mut self) {
        if self.current_fill != Some(self.fill) {
            let (r, g, b) = self.fill;
            self.content
                .set_fill_color_space(pdf_writer::types::ColorSpaceOperand::Named(Name(SRGB)))
                .set_fill_color([r, g, b].map(|c| f32::from(c) / 255.0));
            self.current_fill = Some(self.fill);
        }
    }
}

/// The font resource for `run` in `face`, with the glyph set that maps its glyphs.
pub(super) fn font_for<'s>(
    fonts: &'s mut Fonts<'_>,
    face: &Face,
    run: &Run,
) -> Result<(&'static [u8], Target<'s>), RenderError> {
    let i = face_index(face)?;
    Ok(match fonts {
        Fonts::Prepare(sets) => (PREPARED_FONTS[i], Target::Open(&mut sets[i])),
        Fonts::Document { prepared, own } => {
            if prepared[i].has_all(run) {
                (PREPARED_FONTS[i], Target::Fixed(&prepared[i]))
            } else {
                let set = own[i].get_or_insert_with(|| GlyphSet::new(face));
                (OWN_FONTS[i], Target::Open(set))
            }
        }
    })
}

/// The glyph set a run is written with: one still taking glyphs, or a prepared one.
pub(super) enum Target<'s> {
    Open(&'s mut GlyphSet),
    Fixed(&'s GlyphSet),
}

impl Target<'_> {
    /// The CID of `gid` and whether the `ToUnicode` map gives `text` for it (assigning `text`
    /// when the glyph has no text yet and `assign` is set).
    pub(super) fn cid(&mut self, face: &Face, gid: u16, text: &str, assign: bool) -> (u16, bool) {
        match self {
            Target::Open(set) => {
                let cid = set.add(face, gid);
                let entry = &mut set.texts[usize::from(cid)];
                match entry {
                    Some(t) => (cid, t == text),
                    None if assign => {
                        *entry = Some(text.to_owned());
                        (cid, true)
                    }
                    None => (cid, false),
                }
            }
            Target::Fixed(set) => {
                let cid = set.remapper.get(gid).unwrap_or(0);
                let ok = set.texts[usize::from(cid)].as_deref() == Some(text);
                (cid, ok)
            }
        }
    }

    pub(super) fn width(&self, cid: u16) -> f32 {
        let set: &GlyphSet = match self {
            Target::Open(set) => set,
            Target::Fixed(set) => set,
        };
        set.widths.get(usize::from(cid)).copied().unwrap_or(0.0)
    }
}

/// A `TJ` array being collected: glyph codes and position adjustments.
#[derive(Default)]
pub(super) struct Shown {
    items: Vec<(Vec<u8>, f32)>,
    pending: f32,
}

impl Shown {
    pub(super) fn glyph(&mut self, cid: u16) {
        let adjust = std::mem::take(&mut self.pending);
        match self.items.last_mut() {
            Some((codes, _)) if adjust.abs() < 0.01 => codes.extend(cid.to_be_bytes()),
            _ => self.items.push((cid.to_be_bytes().to_vec(), adjust)),
        }
    }

    pub(super) fn flush(&mut self, content: &mut Content) {
        if self.items.is_empty() {
            return;
        }
        // A string without adjustments is shown with `Tj`, as krilla does (some readers copy
        // `ActualText` badly from `TJ`).
        if let [(codes, adjust)] = self.items.as_slice()
            && adjust.abs() < 0.01
        {
            content.show(Str(codes));
            self.items.clear();
            return;
        }
        let mut show = content.show_positioned();
        let mut items = show.items();
        for (codes, adjust) in self.items.drain(..) {
            if adjust.abs() >= 0.01 {
                items.adjust(adjust);
            }
            items.show(Str(&codes));
        }
    }
}

impl Canvas for Page<'_> {
    fn set_fill_rgb(&mut self, rgb: (u8, u8, u8)) {
        self.fill = rgb;
    }

    fn glyphs(&mut self, face: &Face, run: &Run, x: f32, y: f32, size: f32, squash: f32) {
        self.apply_fill();
        let Ok((name, mut target)) = font_for(&mut self.fonts, face, run) else {
            return;
        };
        let content = &mut self.content;
        // A squashed run is drawn under a transform of its own, as krilla does (poppler then
        // places its glyphs on the same sub-pixel positions as in krilla's documents).
        let squashed = (squash - 1.0).abs() >= 1e-4;
        let (x, y) = if squashed {
            content
                .save_state()
                .transform([squash, 0.0, 0.0, 1.0, x, y]);
            (0.0, 0.0)
        } else {
            (x, y)
        };
        content.begin_text();
        content.set_font(Name(name), 1.0);
        // Text space: 1 unit = 1 em at `size`; y flipped back so glyphs stand upright.
        content.set_text_matrix([size, 0.0, 0.0, -size, x, y]);
        let mut shown = Shown::default();
        let mut rise = 0.0f32;
        let mut i = 0;
        while i < run.glyphs.len() {
            let start = run.glyphs[i].text_range.start;
            let mut end = i + 1;
            while end < run.glyphs.len() && run.glyphs[end].text_range.start == start {
                end += 1;
            }
            let cluster = &run.glyphs[i..end];
            let range = cluster[0].text_range.clone();
            let text = run.text.get(range).unwrap_or("");
            // One glyph standing for its text is mapped by `ToUnicode`; a cluster of several
            // glyphs, or a glyph mapped to other text already, gets an `ActualText` span.
            let mut codes = Vec::with_capacity(cluster.len());
            let mut span = cluster.len() > 1;
            for (k, g) in cluster.iter().enumerate() {
                let gid = u16::try_from(g.glyph_id.to_u32()).unwrap_or(0);
                // The first glyph of a cluster stands for its text where nothing else does yet
                // (as krilla maps it), for readers that ignore `ActualText`.
                let (cid, maps) = target.cid(face, gid, text, k == 0);
                span |= !maps;
                codes.push(cid);
            }
            if span {
                shown.flush(content);
                content
                    .begin_marked_content_with_properties(Name(b"Span"))
                    .properties()
                    .actual_text(TextStr(text));
            }
            for (g, &cid) in cluster.iter().zip(&codes) {
                if (g.y_offset - rise).abs() > 1e-4 {
                    shown.flush(content);
                    content.set_rise(g.y_offset);
                    rise = g.y_offset;
                }
                // Thousandths of an em; a positive adjustment moves left.
                shown.pending -= g.x_offset * 1000.0;
                shown.glyph(cid);
                shown.pending += target.width(cid) - (g.x_advance - g.x_offset) * 1000.0;
            }
            if span {
                shown.flush(content);
                content.end_marked_content();
            }
            i = end;
        }
        shown.flush(content);
        // The rise is text state, which outlives the text object: leave it as found.
        if rise != 0.0 {
            content.set_rise(0.0);
        }
        content.end_text();
        if squashed {
            content.restore_state();
        }
    }

    fn push_transform(&mut self, t: &Transform) {
        self.saved_fills.push(self.current_fill);
        self.content
            .save_state()
            .transform([t.sx(), t.ky(), t.kx(), t.sy(), t.tx(), t.ty()]);
    }

    fn push_opacity(&mut self, opacity: f32) {
        let opacity = opacity.clamp(0.0, 1.0);
        let index = match self.opacities.iter().position(|&o| o == opacity) {
            Some(i) => i,
            None => {
                self.opacities.push(opacity);
                self.opacities.len() - 1
            }
        };
        self.saved_fills.push(self.current_fill);
        let name = format!("G{index}");
        self.content
            .save_state()
            .set_parameters(Name(name.as_bytes()));
    }

    fn pop(&mut self) {
        if let Some(fill) = self.saved_fills.pop() {
            self.content.restore_state();
            self.current_fill = fill;
        }
    }

    fn fill_rects(&mut self, rects: &[[f32; 4]]) {
        if rects.is_empty() {
            return;
        }
        self.apply_fill();
        for &[x, y, w, h] in rects {
            self.content.rect(x, y, w, h);
        }
        self.content.fill_nonzero();
    }

    fn stroke(&mut self, path: &[Seg], pen: Pen) {
        if !path
            .iter()
            .any(|s| matches!(s, Seg::LineTo(..) | Seg::CubicTo(..)))
        {
            return;
        }
        let (r, g, b) = pen.rgb;
        let c = &mut self.content;
        c.save_state();
        c.set_stroke_color_space(pdf_writer::types::ColorSpaceOperand::Named(Name(SRGB)))
            .set_stroke_color([r, g, b].map(|v| f32::from(v) / 255.0))
            .set_line_width(pen.width)
            .set_line_cap(LineCapStyle::RoundCap)
            .set_line_join(LineJoinStyle::RoundJoin);
        for seg in path {
            match *seg {
                Seg::MoveTo(x, y) => c.move_to(x, y),
                Seg::LineTo(x, y) => c.line_to(x, y),
                Seg::CubicTo(x1, y1, x2, y2, x, y) => c.cubic_to(x1, y1, x2, y2, x, y),
                Seg::Close => c.close_path(),
            };
        }
        c.stroke();
        c.restore_state();
    }
}

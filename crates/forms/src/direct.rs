//! PDF/A-2b documents written directly with pdf-writer, from a part prepared once per process
//! and a part written per document. The GewA 1 uses it: its form (shading, rules, about 400
//! labels) is the same on every document, and krilla, which writes the other documents, can
//! only draw it again each time (the largest part of a trade create's CPU: ADR 0017). The power
//! of attorney uses it too, with an empty static page: what it reuses is the fonts prepared
//! for its fixed texts in every language, which krilla would subset and compress again for
//! each of an assisted create's three documents.
//!
//! What is prepared once ([`Template`]): the content stream of each page's static part
//! (compressed once), the label fonts' subsets (compressed once) with their widths and
//! `ToUnicode` maps, and the sRGB ICC profile of the output intent. What each document adds:
//! one more content stream per page (values, check marks, signature, sandbox mark), subsets of
//! the glyphs that the prepared fonts lack, the metadata (XMP and document information) and
//! the catalog.
//!
//! The document follows what krilla writes for PDF/A-2b (same font objects: Type 0 fonts over
//! CIDFontType2 subsets with `Identity-H` encoding and `ToUnicode` maps, `ActualText` spans
//! where one glyph does not stand for its own text; colours in an ICC-based sRGB space with
//! an sRGB output intent; XMP with `pdfaid` part 2, conformance B, matching the document
//! information; a file identifier). Tests read it back with poppler and lopdf
//! (`tests/gewa1.rs`, `tests/direct.rs`).

use std::hash::{Hash, Hasher};
use std::io::Write;

use krilla::geom::Transform;
use pdf_writer::types::{
    CidFontType, FontFlags, LineCapStyle, LineJoinStyle, OutputIntentSubtype, SystemInfo,
    UnicodeCmap,
};
use pdf_writer::writers::ExtGraphicsState;
use pdf_writer::{Chunk, Content, Filter, Finish, Name, Pdf, Ref, Str, TextStr};
use subsetter::GlyphRemapper;

use crate::RenderError;
use crate::canvas::{Canvas, Pen, Seg};
use crate::pdf::{A4_HEIGHT, A4_WIDTH};
use crate::text::{self, Face, Run};

const SYSTEM_INFO: SystemInfo = SystemInfo {
    registry: Str(b"Adobe"),
    ordering: Str(b"Identity"),
    supplement: 0,
};
/// krilla's sRGB profile (v4), the one its PDF/A-2 documents carry (`icc/LICENSE`).
static SRGB_ICC: &[u8] = include_bytes!("../icc/sRGB-v4.icc");
/// Resource names: the prepared fonts, the document's own fonts, the colour space.
const PREPARED_FONTS: [&[u8]; 2] = [b"L0", b"L1"];
const OWN_FONTS: [&[u8]; 2] = [b"D0", b"D1"];
const SRGB: &[u8] = b"C0";

/// The two faces, as indexes into the font arrays: 0 regular, 1 bold.
fn face_index(face: &Face) -> Result<usize, RenderError> {
    let fonts = text::fonts()?;
    if std::ptr::eq(face, &fonts.regular) {
        Ok(0)
    } else if std::ptr::eq(face, &fonts.bold) {
        Ok(1)
    } else {
        Err(RenderError::Font)
    }
}

fn faces() -> Result<[&'static Face; 2], RenderError> {
    let fonts = text::fonts()?;
    Ok([&fonts.regular, &fonts.bold])
}

/// The glyphs of one font subset: their new ids (CIDs), widths and text.
#[derive(Clone)]
pub(crate) struct GlyphSet {
    remapper: GlyphRemapper,
    /// Width of each CID in PDF units (1/1000 em).
    widths: Vec<f32>,
    /// The text each CID stands for in the `ToUnicode` map; `None` for glyphs that only occur
    /// inside `ActualText` spans (and `.notdef`).
    texts: Vec<Option<String>>,
}

impl GlyphSet {
    fn new(face: &Face) -> GlyphSet {
        GlyphSet {
            remapper: GlyphRemapper::new(),
            widths: vec![width(face, 0)],
            texts: vec![None],
        }
    }

    fn has_all(&self, run: &Run) -> bool {
        run.glyphs.iter().all(|g| {
            u16::try_from(g.glyph_id.to_u32())
                .ok()
                .and_then(|id| self.remapper.get(id))
                .is_some()
        })
    }

    fn add(&mut self, face: &Face, gid: u16) -> u16 {
        let cid = self.remapper.remap(gid);
        if usize::from(cid) >= self.widths.len() {
            self.widths.push(width(face, gid));
            self.texts.push(None);
        }
        cid
    }

    fn is_empty(&self) -> bool {
        self.widths.len() <= 1
    }
}

fn width(face: &Face, gid: u16) -> f32 {
    let advance = face
        .shaper
        .glyph_hor_advance(rustybuzz::ttf_parser::GlyphId(gid))
        .unwrap_or(0);
    f32::from(advance) * 1000.0 / face.units_per_em
}

fn deflate(data: &[u8], level: u32) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(
        Vec::with_capacity(data.len() / 2 + 64),
        flate2::Compression::new(level),
    );
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(data);
    encoder.finish().unwrap_or_default()
}

/// A font subset as it goes into a document: compressed font program and `ToUnicode` map,
/// widths by CID, and the name with its subset tag.
struct EmbeddedFont {
    base_font: String,
    program: Vec<u8>,
    to_unicode: Vec<u8>,
    widths: Vec<f32>,
}

impl EmbeddedFont {
    fn new(face: &Face, set: &GlyphSet, level: u32) -> Result<EmbeddedFont, RenderError> {
        let program = subsetter::subset(face.data, 0, &set.remapper)
            .map_err(|e| RenderError::Pdf(format!("font subset: {e}")))?;
        let mut cmap = UnicodeCmap::new(Name(b"Custom"), SYSTEM_INFO);
        for (cid, text) in set.texts.iter().enumerate().skip(1) {
            if let (Some(text), Ok(cid)) = (text, u16::try_from(cid))
                && !text.is_empty()
            {
                cmap.pair_with_multiple(cid, text.chars());
            }
        }
        let to_unicode = cmap.finish();
        Ok(EmbeddedFont {
            base_font: format!("{}+{}", subset_tag(&set.remapper), face.postscript_name),
            program: deflate(&program, level),
            to_unicode: deflate(to_unicode.as_slice(), level),
            widths: set.widths.clone(),
        })
    }

    /// Writes the Type 0 font at `refs.next()` and its four objects after it.
    fn write(&self, chunk: &mut Chunk, face: &Face, refs: &mut Refs) -> Ref {
        let [type0, cid, descriptor, cmap, data] = refs.take();
        chunk
            .type0_font(type0)
            .base_font(Name(self.base_font.as_bytes()))
            .encoding_predefined(Name(b"Identity-H"))
            .descendant_font(cid)
            .to_unicode(cmap);
        let mut font = chunk.cid_font(cid);
        font.subtype(CidFontType::Type2)
            .base_font(Name(self.base_font.as_bytes()))
            .system_info(SYSTEM_INFO)
            .font_descriptor(descriptor)
            .default_width(0.0)
            .cid_to_gid_map_predefined(Name(b"Identity"));
        let mut widths = font.widths();
        let mut first = 0usize;
        while first < self.widths.len() {
            let w = self.widths[first];
            let mut last = first;
            while last + 1 < self.widths.len() && self.widths[last + 1] == w {
                last += 1;
            }
            if w != 0.0 {
                widths.same(
                    u16::try_from(first).unwrap_or(u16::MAX),
                    u16::try_from(last).unwrap_or(u16::MAX),
                    w,
                );
            }
            first = last + 1;
        }
        widths.finish();
        font.finish();

        let to_pdf = |v: f32| v * 1000.0 / face.units_per_em;
        let shaper = &face.shaper;
        let bbox = shaper.global_bounding_box();
        let ascent = to_pdf(f32::from(shaper.ascender()));
        let weight = f32::from(shaper.weight().to_number());
        chunk
            .font_descriptor(descriptor)
            .name(Name(self.base_font.as_bytes()))
            .flags(FontFlags::SYMBOLIC)
            .bbox(pdf_writer::Rect::new(
                to_pdf(f32::from(bbox.x_min)),
                to_pdf(f32::from(bbox.y_min)),
                to_pdf(f32::from(bbox.x_max)),
                to_pdf(f32::from(bbox.y_max)),
            ))
            .italic_angle(shaper.italic_angle())
            .ascent(ascent)
            .descent(to_pdf(f32::from(shaper.descender())))
            .cap_height(
                shaper
                    .capital_height()
                    .map(|h| to_pdf(f32::from(h)))
                    .unwrap_or(ascent),
            )
            .stem_v(10.0 + 0.244 * (weight - 50.0))
            .font_file2(data);
        chunk
            .cmap(cmap, &self.to_unicode)
            .writing_mode(pdf_writer::writers::WMode::Horizontal)
            .filter(Filter::FlateDecode);
        chunk
            .stream(data, &self.program)
            .filter(Filter::FlateDecode);
        type0
    }
}

/// Six letters from the subset's glyphs, as PDF names subsets (`ABCDEF+NotoSans-Regular`).
fn subset_tag(remapper: &GlyphRemapper) -> String {
    let mut hash = u128::from(stable_hash(remapper));
    (0..6)
        .map(|_| {
            let letter = char::from(b'A' + (hash % 26) as u8);
            hash /= 26;
            letter
        })
        .collect()
}

fn stable_hash<T: Hash + ?Sized>(value: &T) -> u64 {
    // SipHash with fixed keys: the same value gives the same hash in every process of a build.
    #[allow(deprecated)]
    let mut hasher = std::hash::SipHasher::new();
    value.hash(&mut hasher);
    Hasher::finish(&hasher)
}

/// 128 bits of [`stable_hash`] as 32 hex digits, for the file identifiers.
fn id128<T: Hash + ?Sized>(value: &T) -> String {
    format!(
        "{:016x}{:016x}",
        stable_hash(&(0u8, value)),
        stable_hash(&(1u8, value))
    )
}

/// PDF/A-2's implementation limits (ISO 19005-2, 6.1.13) that pdf-writer tracks: names of
/// at most 127 bytes, strings of at most 32,767 (integers and reals are `i32` and `f32`, in
/// range by type). krilla checks them for its documents; q nesting is at most 5 here.
fn within_limits(limits: &pdf_writer::Limits) -> Result<(), RenderError> {
    if limits.name_len() > 127 || limits.str_len() > 32_767 {
        return Err(RenderError::Pdf(format!(
            "a PDF/A limit is exceeded (name {} bytes, string {} bytes)",
            limits.name_len(),
            limits.str_len()
        )));
    }
    Ok(())
}

/// Consecutive object numbers.
struct Refs(i32);

impl Refs {
    fn next(&mut self) -> Ref {
        self.0 += 1;
        Ref::new(self.0)
    }

    fn take<const N: usize>(&mut self) -> [Ref; N] {
        std::array::from_fn(|_| self.next())
    }
}

/// Where the glyphs of a page go.
enum Fonts<'a> {
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
    fn new(fonts: Fonts<'a>, opacities: &'a mut Vec<f32>) -> Page<'a> {
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

    fn finish(mut self) -> Result<Vec<u8>, RenderError> {
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

    fn apply_fill(&mut self) {
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
fn font_for<'s>(
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
enum Target<'s> {
    Open(&'s mut GlyphSet),
    Fixed(&'s GlyphSet),
}

impl Target<'_> {
    /// The CID of `gid` and whether the `ToUnicode` map gives `text` for it (assigning `text`
    /// when the glyph has no text yet and `assign` is set).
    fn cid(&mut self, face: &Face, gid: u16, text: &str, assign: bool) -> (u16, bool) {
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

    fn width(&self, cid: u16) -> f32 {
        let set: &GlyphSet = match self {
            Target::Open(set) => set,
            Target::Fixed(set) => set,
        };
        set.widths.get(usize::from(cid)).copied().unwrap_or(0.0)
    }
}

/// A `TJ` array being collected: glyph codes and position adjustments.
#[derive(Default)]
struct Shown {
    items: Vec<(Vec<u8>, f32)>,
    pending: f32,
}

impl Shown {
    fn glyph(&mut self, cid: u16) {
        let adjust = std::mem::take(&mut self.pending);
        match self.items.last_mut() {
            Some((codes, _)) if adjust.abs() < 0.01 => codes.extend(cid.to_be_bytes()),
            _ => self.items.push((cid.to_be_bytes().to_vec(), adjust)),
        }
    }

    fn flush(&mut self, content: &mut Content) {
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

/// What is the same in every document made from it; see the module documentation.
pub(crate) struct Template {
    /// Objects 1..=`last_ref`: ICC profile, colour space, prepared fonts, static contents.
    chunk: Chunk,
    last_ref: i32,
    icc: Ref,
    color_space: Ref,
    fonts: [Ref; 2],
    sets: [GlyphSet; 2],
    pages: Vec<Ref>,
}

/// Builds a [`Template`]: draw each page's static part on the page [`Preparer::page`] gives,
/// name the other texts documents will draw in the prepared fonts ([`Preparer::include`]),
/// then [`Preparer::finish`].
pub(crate) struct Preparer {
    sets: [GlyphSet; 2],
    pages: Vec<Vec<u8>>,
}

impl Preparer {
    pub(crate) fn new() -> Result<Preparer, RenderError> {
        let [regular, bold] = faces()?;
        Ok(Preparer {
            sets: [GlyphSet::new(regular), GlyphSet::new(bold)],
            pages: Vec::new(),
        })
    }

    /// Draws the static part of the next page with `draw`.
    pub(crate) fn page(
        &mut self,
        draw: impl FnOnce(&mut Page) -> Result<(), RenderError>,
    ) -> Result<(), RenderError> {
        let mut no_opacity = Vec::new();
        let mut page = Page::new(Fonts::Prepare(&mut self.sets), &mut no_opacity);
        draw(&mut page)?;
        let content = page.finish()?;
        if !no_opacity.is_empty() {
            // The static part has no resources of its own for graphics states.
            return Err(RenderError::Pdf("opacity in a template".into()));
        }
        self.pages.push(content);
        Ok(())
    }

    /// Adds the glyphs of `text` in `face` to the prepared font, mapped to their text.
    pub(crate) fn include(&mut self, face: &Face, text: &str) -> Result<(), RenderError> {
        let run = text::shape(face, text);
        let i = face_index(face)?;
        let mut target = Target::Open(&mut self.sets[i]);
        let mut previous = None;
        for g in &run.glyphs {
            let t = run.text.get(g.text_range.clone()).unwrap_or("");
            // Only the first glyph of a cluster stands for its text, as in `glyphs`.
            let first = previous != Some(g.text_range.start);
            previous = Some(g.text_range.start);
            target.cid(
                face,
                u16::try_from(g.glyph_id.to_u32()).unwrap_or(0),
                t,
                first,
            );
        }
        Ok(())
    }

    pub(crate) fn finish(self) -> Result<Template, RenderError> {
        let faces = faces()?;
        let mut refs = Refs(0);
        let mut chunk = Chunk::new();
        let icc = refs.next();
        chunk
            .icc_profile(icc, &deflate(SRGB_ICC, 9))
            .n(3)
            .range([0.0, 1.0, 0.0, 1.0, 0.0, 1.0])
            .filter(Filter::FlateDecode);
        let color_space = refs.next();
        chunk
            .indirect(color_space)
            .array()
            .item(Name(b"ICCBased"))
            .item(icc);
        let mut fonts = [Ref::new(1); 2];
        for (i, face) in faces.iter().enumerate() {
            fonts[i] =
                EmbeddedFont::new(face, &self.sets[i], 9)?.write(&mut chunk, face, &mut refs);
        }
        let mut pages = Vec::new();
        for content in &self.pages {
            let r = refs.next();
            chunk
                .stream(r, &deflate(content, 9))
                .filter(Filter::FlateDecode);
            pages.push(r);
        }
        Ok(Template {
            chunk,
            last_ref: refs.0,
            icc,
            color_space,
            fonts,
            sets: self.sets,
            pages,
        })
    }
}

/// The metadata of a document.
pub(crate) struct Info {
    pub title: String,
    pub subject: String,
    pub author: Option<String>,
    pub timestamp: time::OffsetDateTime,
}

/// A document being written from a [`Template`]: one page per template page, in order; or,
/// made by [`Document::with_optional_pages`], the required pages and then any number of pages
/// over the template's pages after them, the last one repeated.
pub(crate) struct Document<'t> {
    template: &'t Template,
    own: [Option<GlyphSet>; 2],
    pages: Vec<(Vec<u8>, Vec<f32>)>,
    required: usize,
    /// Whether pages beyond the template's repeat its last page.
    repeat_last: bool,
}

impl<'t> Document<'t> {
    /// A document with every page of the template.
    pub(crate) fn new(template: &'t Template) -> Document<'t> {
        Document {
            template,
            own: [None, None],
            pages: Vec::new(),
            required: template.pages.len(),
            repeat_last: false,
        }
    }

    /// A document with the template's first `required` pages and, when drawn, as many pages
    /// after them as the caller draws, over the template's following pages with the last one
    /// repeated (the GewA 1's supplementary sheet). An unused page's static stream stays in the
    /// file unreferenced.
    pub(crate) fn with_optional_pages(template: &'t Template, required: usize) -> Document<'t> {
        Document {
            template,
            own: [None, None],
            pages: Vec::new(),
            required: required.min(template.pages.len()),
            repeat_last: true,
        }
    }

    /// Draws the next page's own content with `draw`, over the template's page.
    pub(crate) fn page(
        &mut self,
        draw: impl FnOnce(&mut Page) -> Result<(), RenderError>,
    ) -> Result<(), RenderError> {
        if self.pages.len() >= self.template.pages.len() && !self.repeat_last {
            return Err(RenderError::Pdf("more pages than the template".into()));
        }
        let mut opacities = Vec::new();
        let mut page = Page::new(
            Fonts::Document {
                prepared: &self.template.sets,
                own: &mut self.own,
            },
            &mut opacities,
        );
        draw(&mut page)?;
        let content = page.finish()?;
        self.pages.push((content, opacities));
        Ok(())
    }

    pub(crate) fn finish(self, info: &Info) -> Result<Vec<u8>, RenderError> {
        let template = self.template;
        if self.pages.len() < self.required {
            return Err(RenderError::Pdf("a template page was not drawn".into()));
        }
        let faces = faces()?;
        let mut refs = Refs(template.last_ref);
        let mut pdf = Pdf::with_capacity(template.chunk.len() + 32 * 1024);
        pdf.extend(&template.chunk);

        // The document's own font subsets, at deflate level 1: a few kilobytes of glyphs the
        // labels lack; level 6 (krilla's) made the whole GewA 1 slower (ADR 0017).
        let mut own_fonts: [Option<Ref>; 2] = [None, None];
        for (i, set) in self.own.iter().enumerate() {
            if let Some(set) = set.as_ref().filter(|s| !s.is_empty()) {
                let font = EmbeddedFont::new(faces[i], set, 1)?;
                own_fonts[i] = Some(font.write(&mut pdf, faces[i], &mut refs));
            }
        }

        let tree = refs.next();
        let page_refs: Vec<(Ref, Ref)> = self
            .pages
            .iter()
            .map(|_| (refs.next(), refs.next()))
            .collect();
        pdf.pages(tree)
            .kids(page_refs.iter().map(|(p, _)| *p))
            .count(i32::try_from(page_refs.len()).unwrap_or(i32::MAX));
        let last = template.pages.len().saturating_sub(1);
        let prepared_pages = (0..self.pages.len()).map(|i| template.pages[i.min(last)]);
        for (((page, contents), (content, opacities)), prepared) in
            page_refs.iter().zip(&self.pages).zip(prepared_pages)
        {
            let mut p = pdf.page(*page);
            p.parent(tree)
                .media_box(pdf_writer::Rect::new(0.0, 0.0, A4_WIDTH, A4_HEIGHT));
            p.insert(Name(b"Contents"))
                .array()
                .items([prepared, *contents]);
            let mut resources = p.resources();
            resources
                .color_spaces()
                .pair(Name(SRGB), template.color_space);
            let mut fonts = resources.fonts();
            for (name, font) in PREPARED_FONTS.iter().zip(template.fonts) {
                fonts.pair(Name(name), font);
            }
            for (name, font) in OWN_FONTS.iter().zip(own_fonts) {
                if let Some(font) = font {
                    fonts.pair(Name(name), font);
                }
            }
            fonts.finish();
            if !opacities.is_empty() {
                let mut states = resources.ext_g_states();
                for (k, &a) in opacities.iter().enumerate() {
                    let name = format!("G{k}");
                    states
                        .insert(Name(name.as_bytes()))
                        .start::<ExtGraphicsState>()
                        .non_stroking_alpha(a)
                        .stroking_alpha(a);
                }
            }
            resources.finish();
            p.finish();
            pdf.stream(*contents, content);
        }

        // Identifiers: the document's from its title and author, the instance's from
        // everything drawn and the time.
        let document_id = id128(&(&info.title, &info.author));
        let contents: Vec<&Vec<u8>> = self.pages.iter().map(|(content, _)| content).collect();
        let instance_id = id128(&(
            &document_id,
            &info.subject,
            info.timestamp.unix_timestamp(),
            contents,
        ));
        pdf.set_file_id((
            document_id.as_bytes().to_vec(),
            instance_id.as_bytes().to_vec(),
        ));

        let utc = info.timestamp.to_offset(time::UtcOffset::UTC);
        let year = u16::try_from(utc.year().clamp(0, 9999)).unwrap_or(1970);
        let (month, day) = (u8::from(utc.month()), utc.day());
        let (hour, minute, second) = (utc.hour(), utc.minute(), utc.second());
        let xmp_date = xmp_writer::DateTime {
            year,
            month: Some(month),
            day: Some(day),
            hour: Some(hour),
            minute: Some(minute),
            second: Some(second),
            timezone: Some(xmp_writer::Timezone::Local { hour: 0, minute: 0 }),
        };
        let pdf_date = pdf_writer::Date::new(year)
            .month(month)
            .day(day)
            .hour(hour)
            .minute(minute)
            .second(second)
            .utc_offset_hour(0)
            .utc_offset_minute(0);

        let producer = format!("{} (pdf-writer)", crate::pdf::PRODUCER);
        let mut xmp = xmp_writer::XmpWriter::new();
        xmp.title([(None, info.title.as_str())]);
        xmp.description([(None, info.subject.as_str())]);
        if let Some(author) = &info.author {
            xmp.creator([author.as_str()]);
        }
        xmp.creator_tool(crate::pdf::CREATOR);
        xmp.producer(&producer);
        xmp.language([xmp_writer::LangId(crate::pdf::LANGUAGE)]);
        xmp.modify_date(xmp_date);
        xmp.create_date(xmp_date);
        xmp.pdfa_part(2);
        xmp.pdfa_conformance("B");
        xmp.num_pages(u32::try_from(page_refs.len()).unwrap_or(u32::MAX));
        xmp.format("application/pdf");
        xmp.instance_id(&instance_id);
        xmp.document_id(&document_id);
        xmp.rendition_class(xmp_writer::RenditionClass::Proof);
        xmp.pdf_version("1.7");
        let xmp = xmp.finish(None);
        let meta = refs.next();
        pdf.stream(meta, xmp.as_bytes())
            .pair(Name(b"Type"), Name(b"Metadata"))
            .pair(Name(b"Subtype"), Name(b"XML"));

        let info_ref = refs.next();
        let mut document_info = pdf.document_info(info_ref);
        document_info
            .title(TextStr(&info.title))
            .subject(TextStr(&info.subject));
        if let Some(author) = &info.author {
            document_info.author(TextStr(author));
        }
        document_info
            .creator(TextStr(crate::pdf::CREATOR))
            .producer(TextStr(&producer))
            .modified_date(pdf_date)
            .creation_date(pdf_date);
        document_info.finish();

        let catalog = refs.next();
        let mut c = pdf.catalog(catalog);
        c.pages(tree)
            .metadata(meta)
            .lang(TextStr(crate::pdf::LANGUAGE));
        let mut intents = c.output_intents();
        intents
            .push()
            .subtype(OutputIntentSubtype::PDFA)
            .output_condition_identifier(TextStr("Custom"))
            .output_condition(TextStr("sRGB"))
            .registry_name(TextStr(""))
            .info(TextStr("sRGB v4.0"))
            .dest_output_profile(template.icc);
        intents.finish();
        c.finish();
        within_limits(pdf.limits())?;
        Ok(pdf.finish())
    }
}

#[cfg(test)]
mod tests {
    //! The direct writer draws what krilla draws: the same runs (kerning, marks placed by the
    //! shaper, clusters of several glyphs, squashed labels, in prepared and in the document's
    //! own fonts), a transformed half-transparent run and a stroke, rendered by poppler to the
    //! same pixels and read back as the same text.

    use super::*;
    use crate::canvas::Canvas;
    use std::process::Command;

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
        let fonts = text::fonts().unwrap();
        c.set_fill_rgb((20, 40, 60));
        for (bold, s, x, y, size, squash) in SAMPLES {
            let face = if bold { &fonts.bold } else { &fonts.regular };
            text::draw_run(c, face, &text::shape(face, s), x, y, size, squash);
        }
        c.push_transform(&Transform::from_translate(300.0, 400.0));
        c.push_transform(&Transform::from_rotate(-30.0));
        c.push_opacity(0.35);
        c.set_fill_rgb((200, 30, 30));
        let run = text::shape(&fonts.bold, "MUSTER");
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
        let fonts = text::fonts().unwrap();
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

    fn poppler(tool: &str, args: &[&str], pdf: &[u8]) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.pdf");
        std::fs::File::create(&path)
            .unwrap()
            .write_all(pdf)
            .unwrap();
        // pdftoppm writes into files only: `<root>.pgm` with `-singlefile`.
        let root = dir.path().join("out");
        let to = if tool == "pdftoppm" {
            root.as_os_str()
        } else {
            "-".as_ref()
        };
        let out = Command::new(tool)
            .args(args)
            .arg(&path)
            .arg(to)
            .output()
            .unwrap_or_else(|e| panic!("{tool} (poppler-utils) must be installed: {e}"));
        assert!(
            out.status.success(),
            "{tool}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if tool == "pdftoppm" {
            std::fs::read(root.with_extension("pgm")).unwrap()
        } else {
            out.stdout
        }
    }

    /// The GewA 1's template, drawn by krilla from the same code, gives the same pages.
    #[test]
    fn the_gewa1_template_is_what_krilla_draws() {
        use crate::gewa1::{geometry, layout};
        let pixels = |pdf: &[u8], page: &str| {
            poppler(
                "pdftoppm",
                &["-r", "100", "-gray", "-singlefile", "-f", page, "-l", page],
                pdf,
            )
        };
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
        for page in ["1", "2"] {
            let (k, d) = (pixels(&krilla, page), pixels(&direct, page));
            assert_eq!(k.len(), d.len());
            let differing = k.iter().zip(&d).filter(|(a, b)| a.abs_diff(**b) > 24);
            assert_eq!(differing.count(), 0, "page {page}: pixels differ");
            assert!(
                d.iter().filter(|&&p| p < 160).count() > 5000,
                "page {page}: no form"
            );
        }
        let text = |pdf: &[u8]| poppler("pdftotext", &["-raw", "-enc", "UTF-8"], pdf);
        assert_eq!(text(&krilla), text(&direct));
    }

    #[test]
    fn draws_what_krilla_draws() {
        let (k, d) = (krilla_pdf(1, |_, surface| draw(surface)), direct_pdf());
        let fonts = text::fonts().unwrap();
        let raised = text::shape(&fonts.regular, SAMPLES[0].1);
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
        let pixels = |pdf: &[u8]| poppler("pdftoppm", &["-r", "150", "-gray", "-singlefile"], pdf);
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
        let text = |pdf: &[u8]| {
            String::from_utf8(poppler("pdftotext", &["-raw", "-enc", "UTF-8"], pdf)).unwrap()
        };
        let (tk, td) = (text(&k), text(&d));
        assert_eq!(tk, td);
        assert!(td.contains("Ðorđević"), "{td}");
    }
}

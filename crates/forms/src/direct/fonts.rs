//! The fonts of a directly written document: glyph sets, the subsets embedded from them, and
//! the stable hashes that name subsets and documents.

use std::hash::{Hash, Hasher};
use std::io::Write;

use pdf_writer::types::{CidFontType, FontFlags, SystemInfo, UnicodeCmap};
use pdf_writer::{Chunk, Filter, Finish, Name, Ref, Str};
use subsetter::GlyphRemapper;

use crate::RenderError;
use crate::font::{self, Face, Run};

pub(super) const SYSTEM_INFO: SystemInfo = SystemInfo {
    registry: Str(b"Adobe"),
    ordering: Str(b"Identity"),
    supplement: 0,
};
/// krilla's sRGB profile (v4), the one its PDF/A-2 documents carry (`icc/LICENSE`).
pub(super) static SRGB_ICC: &[u8] = include_bytes!("../../icc/sRGB-v4.icc");
/// Resource names: the prepared fonts, the document's own fonts, the colour space.
pub(super) const PREPARED_FONTS: [&[u8]; 2] = [b"L0", b"L1"];
pub(super) const OWN_FONTS: [&[u8]; 2] = [b"D0", b"D1"];
pub(super) const SRGB: &[u8] = b"C0";

/// The two faces, as indexes into the font arrays: 0 regular, 1 bold.
pub(super) fn face_index(face: &Face) -> Result<usize, RenderError> {
    let fonts = font::fonts()?;
    if std::ptr::eq(face, &fonts.regular) {
        Ok(0)
    } else if std::ptr::eq(face, &fonts.bold) {
        Ok(1)
    } else {
        Err(RenderError::Font)
    }
}

pub(super) fn faces() -> Result<[&'static Face; 2], RenderError> {
    let fonts = font::fonts()?;
    Ok([&fonts.regular, &fonts.bold])
}

/// The glyphs of one font subset: their new ids (CIDs), widths and text.
#[derive(Clone)]
pub(crate) struct GlyphSet {
    pub(super) remapper: GlyphRemapper,
    /// Width of each CID in PDF units (1/1000 em).
    pub(super) widths: Vec<f32>,
    /// The text each CID stands for in the `ToUnicode` map; `None` for glyphs that only occur
    /// inside `ActualText` spans (and `.notdef`).
    pub(super) texts: Vec<Option<String>>,
}

impl GlyphSet {
    pub(super) fn new(face: &Face) -> GlyphSet {
        GlyphSet {
            remapper: GlyphRemapper::new(),
            widths: vec![width(face, 0)],
            texts: vec![None],
        }
    }

    pub(super) fn has_all(&self, run: &Run) -> bool {
        run.glyphs.iter().all(|g| {
            u16::try_from(g.glyph_id.to_u32())
                .ok()
                .and_then(|id| self.remapper.get(id))
                .is_some()
        })
    }

    pub(super) fn add(&mut self, face: &Face, gid: u16) -> u16 {
        let cid = self.remapper.remap(gid);
        if usize::from(cid) >= self.widths.len() {
            self.widths.push(width(face, gid));
            self.texts.push(None);
        }
        cid
    }

    pub(super) fn is_empty(&self) -> bool {
        self.widths.len() <= 1
    }
}

pub(super) fn width(face: &Face, gid: u16) -> f32 {
    let advance = face
        .shaper
        .glyph_hor_advance(rustybuzz::ttf_parser::GlyphId(gid))
        .unwrap_or(0);
    f32::from(advance) * 1000.0 / face.units_per_em
}

pub(super) fn deflate(data: &[u8], level: u32) -> Vec<u8> {
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
pub(super) struct EmbeddedFont {
    base_font: String,
    program: Vec<u8>,
    to_unicode: Vec<u8>,
    widths: Vec<f32>,
}

impl EmbeddedFont {
    pub(super) fn new(
        face: &Face,
        set: &GlyphSet,
        level: u32,
    ) -> Result<EmbeddedFont, RenderError> {
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
    pub(super) fn write(&self, chunk: &mut Chunk, face: &Face, refs: &mut Refs) -> Ref {
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
pub(super) fn subset_tag(remapper: &GlyphRemapper) -> String {
    let mut hash = u128::from(stable_hash(remapper));
    (0..6)
        .map(|_| {
            let letter = char::from(b'A' + (hash % 26) as u8);
            hash /= 26;
            letter
        })
        .collect()
}

pub(super) fn stable_hash<T: Hash + ?Sized>(value: &T) -> u64 {
    // SipHash with fixed keys: the same value gives the same hash in every process of a build.
    #[allow(deprecated)]
    let mut hasher = std::hash::SipHasher::new();
    value.hash(&mut hasher);
    Hasher::finish(&hasher)
}

/// 128 bits of [`stable_hash`] as 32 hex digits, for the file identifiers.
pub(super) fn id128<T: Hash + ?Sized>(value: &T) -> String {
    format!(
        "{:016x}{:016x}",
        stable_hash(&(0u8, value)),
        stable_hash(&(1u8, value))
    )
}

/// PDF/A-2's implementation limits (ISO 19005-2, 6.1.13) that pdf-writer tracks: names of
/// at most 127 bytes, strings of at most 32,767 (integers and reals are `i32` and `f32`, in
/// range by type). krilla checks them for its documents; q nesting is at most 5 here.
pub(super) fn within_limits(limits: &pdf_writer::Limits) -> Result<(), RenderError> {
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
pub(super) struct Refs(pub(super) i32);

impl Refs {
    pub(super) fn next(&mut self) -> Ref {
        self.0 += 1;
        Ref::new(self.0)
    }

    pub(super) fn take<const N: usize>(&mut self) -> [Ref; N] {
        std::array::from_fn(|_| self.next())
    }
}

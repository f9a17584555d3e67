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
//! information; a file identifier). Tests read it back with hayro and lopdf
//! (`tests/gewa1.rs`, `tests/pdfa.rs`).

mod fonts;
mod page;
#[cfg(test)]
mod tests;

use pdf_writer::types::OutputIntentSubtype;
use pdf_writer::writers::ExtGraphicsState;
use pdf_writer::{Chunk, Filter, Finish, Name, Pdf, Ref, TextStr};

use crate::RenderError;
use crate::font::{self, Face};
use crate::pdf::{A4_HEIGHT, A4_WIDTH};
use fonts::{
    EmbeddedFont, GlyphSet, OWN_FONTS, PREPARED_FONTS, Refs, SRGB, SRGB_ICC, deflate, face_index,
    faces, id128, within_limits,
};
pub(crate) use page::Page;
use page::{Fonts, Target};

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
        let run = font::shape(face, text);
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

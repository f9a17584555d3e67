//! Fonts and shaping.
//!
//! Text is shaped once with rustybuzz (the shaper krilla itself uses) against Noto Sans, which is
//! embedded in the binary. Shaping ourselves gives exact advance widths for the shrink-then-wrap
//! rule, and lets static labels be shaped once per process.

use std::ops::Range;
use std::sync::{Arc, OnceLock, RwLock};

use krilla::text::{Font, GlyphId, KrillaGlyph};

use crate::RenderError;

static REGULAR_TTF: &[u8] = include_bytes!("../fonts/NotoSans-Regular.ttf");
static BOLD_TTF: &[u8] = include_bytes!("../fonts/NotoSans-Bold.ttf");

/// Ascent and descent used for vertical layout, in em. These are Noto Sans' hhea metrics
/// (1069/1000 and 293/1000), which cover every DIN 91379 letter with its marks, so a line box of
/// `(ASCENT + DESCENT) * size` holds all ink.
pub(crate) const ASCENT: f32 = 1.069;
pub(crate) const DESCENT: f32 = 0.293;
pub(crate) const LINE_HEIGHT: f32 = ASCENT + DESCENT;

pub(crate) struct Face {
    pub font: Font,
    /// The font file, for subsetting outside krilla ([`crate::direct`]).
    pub data: &'static [u8],
    /// The PostScript name, e.g. `NotoSans-Regular`.
    pub postscript_name: String,
    pub shaper: rustybuzz::Face<'static>,
    pub units_per_em: f32,
    /// Shape plans by segment properties. Building a plan (collecting and compiling the font's
    /// features) took much of the shaping time when `rustybuzz::shape` did it on every call (BENCHMARKS.md, "PDF rendering");
    /// text here is left-to-right in a handful of scripts (Latin, Greek, Cyrillic; DIN 91379),
    /// so the list stays short.
    plans: RwLock<Vec<PlanEntry>>,
    /// Runs shaped before, by their text ([`shape`]).
    runs: RunCache,
}

/// Shaped runs by their text, bounded by an estimate of their memory (S3-FIFO eviction, from
/// `quick_cache`). Shaping was a sixth of the server's CPU under trade create load: rustybuzz
/// walks the font's lookups for every glyph, and much of what a form holds repeats from one
/// form to the next (the power of attorney's paragraphs, places, nationalities, dates, an
/// operator's name). Shaping is a pure function of the face and the text, so a cached run is
/// the run shaping would give (docs/adr/0018-shaped-runs-cache.md).
pub(crate) struct RunCache(quick_cache::sync::Cache<String, Run, RunWeight>);

/// Bytes of runs kept per face.
const RUN_CACHE_BYTES: u64 = 4 << 20;

#[derive(Clone)]
struct RunWeight;

impl quick_cache::Weighter<String, Run> for RunWeight {
    fn weight(&self, key: &String, run: &Run) -> u64 {
        // The key, the run's own copy of the text, its glyphs, and the entry itself.
        (key.len() + run.text.len() + std::mem::size_of_val(run.glyphs.as_slice()) + 96) as u64
    }
}

impl RunCache {
    fn new(bytes: u64) -> Self {
        Self(quick_cache::sync::Cache::with_weighter(
            usize::try_from(bytes / 512).unwrap_or(1024),
            bytes,
            RunWeight,
        ))
    }

    /// The run of `text`, shaped by `shape` when it is not kept.
    fn get_or_shape(&self, text: &str, shape: impl FnOnce() -> Run) -> Run {
        if let Some(run) = self.0.get(text) {
            return run;
        }
        let run = shape();
        self.0.insert(text.to_owned(), run.clone());
        run
    }
}

type PlanEntry = (
    rustybuzz::Direction,
    rustybuzz::Script,
    Option<rustybuzz::Language>,
    Arc<rustybuzz::ShapePlan>,
);

impl Face {
    /// The plan for a buffer's (guessed) segment properties, compiled on first use.
    fn plan(&self, buffer: &rustybuzz::UnicodeBuffer) -> Arc<rustybuzz::ShapePlan> {
        let (direction, script, language) =
            (buffer.direction(), buffer.script(), buffer.language());
        let find = |plans: &[PlanEntry]| {
            plans
                .iter()
                .find(|(d, s, l, _)| *d == direction && *s == script && *l == language)
                .map(|(_, _, _, p)| p.clone())
        };
        if let Some(plan) = find(&self.plans.read().unwrap_or_else(|e| e.into_inner())) {
            return plan;
        }
        let mut plans = self.plans.write().unwrap_or_else(|e| e.into_inner());
        if let Some(plan) = find(&plans) {
            return plan;
        }
        // `script()` reads a buffer without a script (digits and punctuation only) as UNKNOWN,
        // which `guess_segment_properties` never sets; such a buffer is planned without one,
        // as `rustybuzz::shape` would.
        let plan_script = (script != rustybuzz::script::UNKNOWN).then_some(script);
        let plan = Arc::new(rustybuzz::ShapePlan::new(
            &self.shaper,
            direction,
            plan_script,
            language.as_ref(),
            &[],
        ));
        plans.push((direction, script, language, plan.clone()));
        plan
    }
}

pub(crate) struct Fonts {
    pub regular: Face,
    pub bold: Face,
}

fn load(data: &'static [u8]) -> Option<Face> {
    let font = Font::new(data.into(), 0)?;
    let shaper = rustybuzz::Face::from_slice(data, 0)?;
    let units_per_em = shaper.units_per_em() as f32;
    let postscript_name = shaper
        .names()
        .into_iter()
        .filter(|n| n.name_id == rustybuzz::ttf_parser::name_id::POST_SCRIPT_NAME)
        .find_map(|n| n.to_string())?;
    Some(Face {
        font,
        data,
        postscript_name,
        shaper,
        units_per_em,
        plans: RwLock::new(Vec::new()),
        runs: RunCache::new(RUN_CACHE_BYTES),
    })
}

/// The embedded fonts, parsed once per process.
pub(crate) fn fonts() -> Result<&'static Fonts, RenderError> {
    static FONTS: OnceLock<Option<Fonts>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            Some(Fonts {
                regular: load(REGULAR_TTF)?,
                bold: load(BOLD_TTF)?,
            })
        })
        .as_ref()
        .ok_or(RenderError::Font)
}

/// Whether the embedded regular font maps `c` to a glyph (used by the coverage test).
pub fn has_glyph(c: char) -> bool {
    fonts().is_ok_and(|f| f.regular.shaper.glyph_index(c).is_some())
}

/// A shaped run of text; advances are in em.
#[derive(Clone)]
pub(crate) struct Run {
    pub text: String,
    pub glyphs: Vec<KrillaGlyph>,
}

impl Run {
    pub fn width_em(&self) -> f32 {
        self.glyphs.iter().map(|g| g.x_advance).sum()
    }
}

/// Replaces control characters (tabs, newlines inside single-line values) with spaces.
fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Shapes `text` in `face` word by word: each word with the spaces after it is shaped once and
/// kept ([`RunCache`]), and the runs are joined (short texts are kept whole as well). Most
/// words of a form repeat from one form to the next even where its paragraphs don't (a power
/// of attorney's paragraphs hold the owner's name and address); shaping whole paragraphs again for every new name was a large share of the server's
/// CPU under assisted creates (ADR 0018). Noto Sans has no kerning or ligature across a space, and a word
/// is shaped in the script of its own letters (a whole paragraph took the first letter's), so
/// the run is the one whole-text shaping gives (`word_runs_are_the_runs_of_whole_texts`).
pub(crate) fn shape(face: &Face, text: &str) -> Run {
    if let Some(run) = face.runs.0.get(text) {
        return run;
    }
    let clean = sanitize(text);
    let mut words = Words(&clean);
    let (run, keep) = match (words.next(), words.clone().next()) {
        (Some(first), Some(_)) => {
            let mut run = face
                .runs
                .get_or_shape(first, || shape_uncached(face, first));
            run.glyphs.reserve(clean.len() - first.len());
            for word in words {
                let part = face.runs.get_or_shape(word, || shape_uncached(face, word));
                let offset = run.text.len();
                run.text.push_str(&part.text);
                run.glyphs.extend(part.glyphs.into_iter().map(|mut g| {
                    g.text_range = g.text_range.start + offset..g.text_range.end + offset;
                    g
                }));
            }
            (run, text.len() <= KEEP_WHOLE)
        }
        _ => (shape_uncached(face, &clean), true),
    };
    if keep {
        face.runs.0.insert(text.to_owned(), run.clone());
    }
    run
}

/// Texts of several words up to this length (labels, names, dates) are also kept whole, so
/// that a text seen before is one lookup; longer ones, mostly paragraphs that hold a name, only
/// by their words.
const KEEP_WHOLE: usize = 64;

/// The words of a text, each with the spaces after it. A word ends only before a letter,
/// digit, punctuation or symbol: a combining mark or a format character (joiners) after a
/// space is shaped with the space, as whole-text shaping does.
#[derive(Clone)]
struct Words<'a>(&'a str);

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        use unicode_properties::{GeneralCategoryGroup as G, UnicodeGeneralCategory};
        if self.0.is_empty() {
            return None;
        }
        let mut after_space = false;
        for (i, c) in self.0.char_indices() {
            if c == ' ' {
                after_space = true;
            } else if after_space
                && matches!(
                    c.general_category_group(),
                    G::Letter | G::Number | G::Punctuation | G::Symbol
                )
            {
                let (word, rest) = self.0.split_at(i);
                self.0 = rest;
                return Some(word);
            } else {
                after_space = false;
            }
        }
        Some(std::mem::take(&mut self.0))
    }
}

fn shape_uncached(face: &Face, text: &str) -> Run {
    let text = sanitize(text);
    let mut buffer = rustybuzz::UnicodeBuffer::new();
    buffer.push_str(&text);
    buffer.set_direction(rustybuzz::Direction::LeftToRight);
    buffer.guess_segment_properties();
    let plan = face.plan(&buffer);
    let output = rustybuzz::shape_with_plan(&face.shaper, &plan, buffer);
    let upem = face.units_per_em;
    let infos = output.glyph_infos();
    let positions = output.glyph_positions();
    let mut glyphs = Vec::with_capacity(infos.len());
    // Characters the font cannot draw (outside DIN 91379, which the request validator rejects
    // first) are drawn as "?": PDF/A forbids the .notdef glyph.
    let fallback = face.shaper.glyph_index('?');
    for (i, (info, pos)) in infos.iter().zip(positions).enumerate() {
        let start = info.cluster as usize;
        // A cluster ends where the next different cluster starts (left-to-right text).
        let end = infos[i + 1..]
            .iter()
            .map(|n| n.cluster as usize)
            .find(|&c| c != start)
            .unwrap_or(text.len());
        let (id, advance, dx, dy) = match fallback {
            Some(q) if info.glyph_id == 0 => (
                q.0.into(),
                f32::from(face.shaper.glyph_hor_advance(q).unwrap_or(0)),
                0.0,
                0.0,
            ),
            _ => (
                info.glyph_id,
                pos.x_advance as f32,
                pos.x_offset as f32,
                pos.y_offset as f32,
            ),
        };
        glyphs.push(KrillaGlyph::new(
            GlyphId::new(id),
            advance / upem,
            dx / upem,
            dy / upem,
            pos.y_advance as f32 / upem,
            start..end.max(start),
            None,
        ));
    }
    Run { text, glyphs }
}

impl Run {
    /// The part of the run covering `range` of the text (range ends on cluster boundaries).
    pub(crate) fn slice(&self, range: Range<usize>) -> Run {
        let Some(text) = self.text.get(range.clone()) else {
            return Run {
                text: String::new(),
                glyphs: Vec::new(),
            };
        };
        let glyphs = self
            .glyphs
            .iter()
            .filter(|g| {
                g.text_range.start >= range.start
                    && g.text_range.start < range.end
                    && g.text_range.end >= g.text_range.start
            })
            .map(|g| {
                let mut g = g.clone();
                g.text_range = (g.text_range.start - range.start)
                    ..(g.text_range.end.min(range.end) - range.start);
                g
            })
            .collect();
        Run {
            text: text.to_owned(),
            glyphs,
        }
    }

    /// Trims spaces at both ends.
    pub(crate) fn trimmed(&self) -> Run {
        let start = self.text.len() - self.text.trim_start().len();
        let end = self.text.trim_end().len().max(start);
        self.slice(start..end)
    }
}

/// Shapes once; the fit loop lays the same runs out at several sizes.
pub(crate) fn shape_in(fonts: &Fonts, bold: bool, content: &str) -> Run {
    shape(if bold { &fonts.bold } else { &fonts.regular }, content)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A glyph's id, its advances and offsets (as bits) and its text.
    type GlyphParts = (u32, [u32; 4], Range<usize>);

    /// What a run is made of, to compare runs.
    fn parts(run: &Run) -> (String, Vec<GlyphParts>) {
        let glyphs = run
            .glyphs
            .iter()
            .map(|g| {
                let m = [g.x_advance, g.x_offset, g.y_offset, g.y_advance].map(f32::to_bits);
                (g.glyph_id.to_u32(), m, g.text_range.clone())
            })
            .collect();
        (run.text.clone(), glyphs)
    }

    /// A run from the cache is the run shaping gives, for every text, the second time as the
    /// first; texts that share a start, or differ in a control character or in how a letter
    /// is composed, are kept apart.
    #[test]
    fn cached_runs_are_the_runs_shaping_gives() {
        let fonts = fonts().unwrap();
        let samples = [
            "Schulze Backwaren GmbH",
            "Schulze Backwaren GmbH & Co. KG",
            "Schulze\tBackwaren GmbH",
            "A\u{0308}rger",
            "Ärger",
            "Кириллица Ёлкин",
            "",
        ];
        for face in [&fonts.regular, &fonts.bold] {
            for round in 0..2 {
                for text in samples {
                    assert_eq!(
                        parts(&shape(face, text)),
                        parts(&shape_uncached(face, text)),
                        "{text:?}, round {round}"
                    );
                }
            }
            // Texts of one word are kept whole; longer ones by their words.
            for text in samples {
                for word in Words(&sanitize(text)) {
                    assert!(
                        face.runs.0.get(word).is_some(),
                        "{word:?} of {text:?} is kept"
                    );
                }
            }
            assert!(face.runs.0.get("Backwaren ").is_some());
            assert!(face.runs.0.get("Schulze Backwaren GmbH").is_some());
            let long = "Schulze Backwaren GmbH, Filiale am Marktplatz, Inhaber Jürgen Schulze";
            assert!(long.len() > KEEP_WHOLE);
            assert_eq!(
                parts(&shape(face, long)),
                parts(&shape_uncached(face, long))
            );
            assert!(
                face.runs.0.get(long).is_none(),
                "a long text is kept by its words"
            );
            assert!(face.runs.0.get("Marktplatz, ").is_some());
        }
    }

    /// Shaping word by word gives the run whole-text shaping gives: for every letter the font
    /// has (Latin, Greek, Cyrillic) on either side of a space, for texts of the forms in every
    /// language, and for leading, trailing and repeated spaces.
    #[test]
    fn word_runs_are_the_runs_of_whole_texts() {
        let fonts = fonts().unwrap();
        let mut texts: Vec<String> = [
            "Hiermit bevollmächtige ich, Max Mustermann, die oben genannte Bevollmächtigte, in meinem Namen",
            "I, Zofia Łukasiewicz, born on 28.02.1990, residing at ul. Floriańska 12, m. 4, 31-019 Kraków, Polen, hereby authorise",
            "Je soussigné(e), Ægidius Þórsson, né(e) le 01.01.1980, demeurant « Rue de la Paix 8 », donne par la présente pouvoir à",
            "para que, en mi nombre y en nombre de la empresa Müller & Söhne (forma jurídica: GmbH), establecimiento en",
            "Traduzione di cortesia (italiano). Fa fede esclusivamente il testo tedesco sopra riportato.",
            "Ελληνικά Ονόματα και Γιώργος Παπαδόπουλος",
            "Кириллица Ёлкин Жуков Щукин",
            "Nguyễn Thị Minh Khai A\u{0308}rger L\u{325}ukasz",
            "  leading, trailing  and   repeated spaces  ",
            "Schulze\tBackwaren\nGmbH",
            "To Ty Te Yo Va Wa \"Te\" 'Ty' (Te) [Ty] 10 % 1.000,00 €",
        ]
        .map(str::to_owned)
        .to_vec();
        let ranges = [
            '\u{20}'..='\u{7e}',
            '\u{a0}'..='\u{24f}',
            '\u{370}'..='\u{3ff}',
            '\u{400}'..='\u{4ff}',
            '\u{1e00}'..='\u{1eff}',
        ];
        let letters: Vec<char> = ranges
            .into_iter()
            .flatten()
            .filter(|&c| has_glyph(c) && !c.is_whitespace())
            .collect();
        assert!(letters.len() > 700, "{}", letters.len());
        for chunk in letters.chunks(40) {
            let mut t = String::new();
            for c in chunk {
                t.push_str(&format!("{c} {c}{c} {c}A {c}T {c}V Y{c} "));
            }
            texts.push(t);
        }
        for face in [&fonts.regular, &fonts.bold] {
            for text in &texts {
                let (words, whole) = (
                    parts(&shape(face, text)),
                    parts(&shape_uncached(face, text)),
                );
                assert_eq!(words.0, whole.0);
                if let Some(k) = (0..words.1.len().max(whole.1.len()))
                    .find(|&k| words.1.get(k) != whole.1.get(k))
                {
                    let near = whole.1.get(k).map_or(0, |g| g.2.start);
                    let from = (0..=near.saturating_sub(8))
                        .rev()
                        .find(|&i| whole.0.is_char_boundary(i))
                        .unwrap_or(0);
                    let context: String = whole.0[from..].chars().take(12).collect();
                    panic!(
                        "glyph {k} near {context:?}: by words {:?}, whole {:?}",
                        words.1.get(k),
                        whole.1.get(k)
                    );
                }
            }
        }
    }

    /// The cache keeps no more than its bytes, however many texts pass through it, and still
    /// answers the texts it keeps with their own runs.
    #[test]
    fn the_run_cache_is_bounded() {
        let face = &fonts().unwrap().regular;
        let cache = RunCache::new(64 << 10);
        for i in 0..5_000 {
            let text = format!("Musterstraße {i}, 10115 Berlin");
            let run = cache.get_or_shape(&text, || shape_uncached(face, &text));
            assert_eq!(parts(&run), parts(&shape_uncached(face, &text)));
        }
        assert!(cache.0.weight() <= 64 << 10, "{} bytes", cache.0.weight());
        assert!(
            cache.0.weight() > 32 << 10,
            "it fills up: {} bytes in {} runs",
            cache.0.weight(),
            cache.0.len()
        );
        let text = "Musterstraße 4999, 10115 Berlin";
        let kept = cache.get_or_shape(text, || panic!("the last text is kept"));
        assert_eq!(parts(&kept), parts(&shape_uncached(face, text)));
    }

    /// The cached plans shape exactly as `rustybuzz::shape` (which plans on every call) does, for
    /// each script DIN 91379 brings and for text without a script of its own.
    #[test]
    fn cached_plans_shape_like_rustybuzz() {
        let fonts = fonts().unwrap();
        let samples = [
            "Gewerbeanmeldung für Jürgen Łukasz Ðorđević",
            "Ελληνικά Ονόματα",
            "Кириллица Ёлкин",
            "12345 / 2026-11-23",
            "",
            "Mixed Ωmega and Жук, fi ffl",
            "Nguyễn Thị Minh Khai: A\u{0308}",
        ];
        for face in [&fonts.regular, &fonts.bold] {
            // Twice: the second round reads the plans the first one compiled.
            for _ in 0..2 {
                for text in samples {
                    let mut buffer = rustybuzz::UnicodeBuffer::new();
                    buffer.push_str(text);
                    buffer.set_direction(rustybuzz::Direction::LeftToRight);
                    let expected = rustybuzz::shape(&face.shaper, &[], buffer);
                    // Not through the run cache, which would answer the second round.
                    let run = shape_uncached(face, text);
                    let upem = face.units_per_em;
                    let ids: Vec<u32> = run.glyphs.iter().map(|g| g.glyph_id.to_u32()).collect();
                    let expected_ids: Vec<u32> =
                        expected.glyph_infos().iter().map(|i| i.glyph_id).collect();
                    assert_eq!(ids, expected_ids, "{text:?}");
                    let advances: Vec<f32> = run.glyphs.iter().map(|g| g.x_advance).collect();
                    let expected_advances: Vec<f32> = expected
                        .glyph_positions()
                        .iter()
                        .map(|p| p.x_advance as f32 / upem)
                        .collect();
                    assert_eq!(advances, expected_advances, "{text:?}");
                }
            }
            assert!(face.plans.read().unwrap().len() >= 3, "one plan per script");
        }
    }
}

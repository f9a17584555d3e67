//! The supplementary sheet (Beiblatt) of the GewA 1.
//!
//! A value is drawn in its box at 9 pt, shrunk to no less than 6 pt and wrapped there; a value
//! that still does not fit at 6 pt is not drawn smaller: its box says "siehe Beiblatt" and the
//! value is written in full on a sheet after the form, under its field's number and label.
//! The model form provides for such sheets ("ggf. ein Beiblatt verwenden" in field 18, "Bei
//! weiteren gesetzlichen Vertretern sind die Angaben auf Beiblättern zu machen" in its head).
//!
//! A legal person's further legal representatives get a sheet each: fields 4 to 11, 30 and 31
//! as the form asks them, the date (32) and the representative's own signature (33).

use domain::signature::SignaturePath;

use crate::RenderError;
use crate::canvas::Canvas;
use crate::font::{self, Face, Fonts};
use crate::pdf::{self, A4_HEIGHT, A4_WIDTH};
use crate::text::{self, Rect};

/// Pages the template holds for the sheet: one, repeated for as many pages as the values need
/// (a form with every field at its maximum length needs one; `tests/limits.rs`).
pub(crate) const PAGES: usize = 1;
/// What a box says when its value is on the sheet.
pub(crate) const SEE_SHEET: &str = "siehe Beiblatt";
const TITLE: &str = "Beiblatt zur Gewerbe-Anmeldung (GewA 1)";
const PAGE_LABEL: &str = "Beiblatt, Seite";

const MARGIN: f32 = 56.7; // 2 cm
const WIDTH: f32 = A4_WIDTH - 2.0 * MARGIN;
const BOTTOM: f32 = A4_HEIGHT - MARGIN;
const TITLE_BASELINE: f32 = MARGIN + 14.0;
/// Top of the heading naming the form the sheet belongs to.
const HEADING_TOP: f32 = TITLE_BASELINE + 8.0;
const LABEL_SIZE: f32 = 9.0;
const VALUE_SIZE: f32 = 10.0;
const GAP: f32 = 9.0;
const BLACK: (u8, u8, u8) = (0, 0, 0);

/// A value moved to the sheet.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    /// The field's number on the form, with the row where a field has several ("11").
    pub field: &'static str,
    /// The field's label ("Geburtsname").
    pub label: &'static str,
    pub text: String,
}

/// The signature's box on a representative's sheet: 6 cm by 2 cm, below the label of field 33.
const SIGNATURE_W: f32 = 170.0;
const SIGNATURE_H: f32 = 57.0;
/// The label of the signature on a representative's sheet.
pub(crate) const SIGNATURE_LABEL: &str = "Feld 33 – Unterschrift";
const RULE: (u8, u8, u8) = (128, 128, 128);

/// Texts every sheet draws in bold, for the template's prepared fonts: the page label, the
/// field numbers, and the labels of a representative's sheet.
pub(crate) fn prepared_texts() -> Vec<&'static str> {
    let mut texts = vec![
        PAGE_LABEL,
        "Feld 0123456789 – von",
        "zum Vordruck für",
        SIGNATURE_LABEL,
    ];
    texts.extend(super::REPRESENTATIVE_LABELS);
    texts
}

/// The static part of every sheet page: the title.
pub(crate) fn draw_static<C: Canvas>(page: &mut C) -> Result<(), RenderError> {
    let fonts = font::fonts()?;
    page.set_fill_rgb(BLACK);
    let title = font::shape(&fonts.bold, TITLE);
    text::draw_run(page, &fonts.bold, &title, MARGIN, TITLE_BASELINE, 14.0, 1.0);
    Ok(())
}

/// "Feld 7 – Geburtsname"; a value of the form's head has no number ("Kopf – ...").
fn label_text(e: &Entry) -> String {
    if e.field.starts_with(|c: char| c.is_ascii_digit()) {
        format!("Feld {} – {}", e.field, e.label)
    } else {
        format!("{} – {}", e.field, e.label)
    }
}

/// The heading under the title: the form the sheet belongs to. Returns the y below it.
fn draw_heading<C: Canvas>(page: Option<&mut C>, fonts: &Fonts, heading: &str) -> f32 {
    let run = font::shape(&fonts.regular, heading);
    text::paragraph(
        page,
        &fonts.regular,
        LABEL_SIZE,
        BLACK,
        MARGIN,
        WIDTH,
        &run,
        HEADING_TOP,
    ) + GAP
}

/// Height of an entry (label, value lines, gap) at the sheet's sizes.
fn entry_height(fonts: &Fonts, e: &Entry) -> f32 {
    draw_entry::<crate::direct::Page<'static>>(None, fonts, e, 0.0)
}

/// Draws `e` from `y` down (when a page is given); returns the y below it.
fn draw_entry<C: Canvas>(mut page: Option<&mut C>, fonts: &Fonts, e: &Entry, y: f32) -> f32 {
    let label = font::shape(&fonts.bold, &label_text(e));
    let mut y = text::paragraph(
        page.as_deref_mut(),
        &fonts.bold,
        LABEL_SIZE,
        BLACK,
        MARGIN,
        WIDTH,
        &label,
        y,
    );
    y += 1.5;
    for line in e.text.split('\n').filter(|l| !l.trim().is_empty()) {
        let run = font::shape(&fonts.regular, line);
        y = text::paragraph(
            page.as_deref_mut(),
            &fonts.regular,
            VALUE_SIZE,
            BLACK,
            MARGIN + 10.0,
            WIDTH - 10.0,
            &run,
            y,
        );
    }
    y + GAP
}

/// Splits `entries` into sheet pages under `heading`: the index ranges each page holds.
pub(crate) fn paginate(
    fonts: &Fonts,
    heading: &str,
    entries: &[Entry],
) -> Vec<std::ops::Range<usize>> {
    let top = draw_heading::<crate::direct::Page<'static>>(None, fonts, heading);
    let mut pages = Vec::new();
    let mut start = 0;
    let mut y = top;
    for (i, e) in entries.iter().enumerate() {
        let h = entry_height(fonts, e);
        if y + h > BOTTOM && i > start {
            pages.push(start..i);
            start = i;
            y = top;
        }
        y += h;
    }
    if start < entries.len() {
        pages.push(start..entries.len());
    }
    pages
}

/// Draws sheet page `number` of `total`: the heading naming the form it belongs to, then
/// `entries`, a representative's `signature` below them (on his sheet), and the page label.
pub(crate) fn draw_page<C: Canvas>(
    page: &mut C,
    fonts: &Fonts,
    heading: &str,
    entries: &[Entry],
    signature: Option<&SignaturePath>,
    (number, total): (usize, usize),
) {
    page.set_fill_rgb(BLACK);
    let mut y = draw_heading(Some(&mut *page), fonts, heading);
    for e in entries {
        y = draw_entry(Some(&mut *page), fonts, e, y);
    }
    if let Some(signature) = signature {
        let label = font::shape(&fonts.bold, SIGNATURE_LABEL);
        y = text::paragraph(
            Some(&mut *page),
            &fonts.bold,
            LABEL_SIZE,
            BLACK,
            MARGIN,
            WIDTH,
            &label,
            y,
        );
        let rect = Rect {
            x: MARGIN + 10.0,
            y: y + 2.0,
            w: SIGNATURE_W,
            h: SIGNATURE_H,
        };
        pdf::draw_signature(page, signature, rect);
        pdf::hline(page, rect.x, rect.x + rect.w, rect.y + rect.h, RULE);
    }
    let face: &Face = &fonts.bold;
    let label = font::shape(face, &format!("{PAGE_LABEL} {number} von {total}"));
    let size = 8.0;
    let x = A4_WIDTH - MARGIN - label.width_em() * size;
    text::draw_run(page, face, &label, x, A4_HEIGHT - 28.0, size, 1.0);
}

//! The supplementary sheet (Beiblatt) of the GewA 1.
//!
//! A value is drawn in its box at 9 pt, shrunk to no less than 6 pt and wrapped there; a value
//! that still does not fit at 6 pt is not drawn smaller: its box says "siehe Beiblatt" and the
//! value is written in full on a sheet after the form, under its field's number and label.
//! The model form provides for such sheets ("ggf. ein Beiblatt verwenden" in field 18, "Bei
//! weiteren gesetzlichen Vertretern sind die Angaben auf Beiblättern zu machen" in its head).

use crate::RenderError;
use crate::canvas::Canvas;
use crate::pdf::{A4_HEIGHT, A4_WIDTH};
use crate::text::{self, Face, Fonts};

/// Pages the template holds for the sheet (a form with every field at its maximum length
/// needs one; `tests/limits.rs`).
pub(crate) const PAGES: usize = 2;
/// What a box says when its value is on the sheet.
pub(crate) const SEE_SHEET: &str = "siehe Beiblatt";
const TITLE: &str = "Beiblatt zur Gewerbe-Anmeldung (GewA 1)";
const PAGE_LABEL: &str = "Beiblatt, Seite";

const MARGIN: f32 = 56.7; // 2 cm
const WIDTH: f32 = A4_WIDTH - 2.0 * MARGIN;
const BOTTOM: f32 = A4_HEIGHT - MARGIN;
const TITLE_BASELINE: f32 = MARGIN + 14.0;
/// Top of the first entry: below the title and the line naming the form's owner.
const ENTRIES_TOP: f32 = MARGIN + 58.0;
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

/// Texts every sheet draws in bold, for the template's prepared fonts.
pub(crate) fn prepared_texts() -> [&'static str; 4] {
    [TITLE, PAGE_LABEL, "Feld 0123456789 –", "zum Vordruck für"]
}

/// The static part of sheet page `number` (1-based): title and page label.
pub(crate) fn draw_static<C: Canvas>(page: &mut C, number: usize) -> Result<(), RenderError> {
    let fonts = text::fonts()?;
    page.set_fill_rgb(BLACK);
    let title = text::shape(&fonts.bold, TITLE);
    text::draw_run(page, &fonts.bold, &title, MARGIN, TITLE_BASELINE, 14.0, 1.0);
    let label = text::shape(&fonts.bold, &format!("{PAGE_LABEL} {number}"));
    let size = 8.0;
    let x = A4_WIDTH - MARGIN - label.width_em() * size;
    text::draw_run(page, &fonts.bold, &label, x, A4_HEIGHT - 28.0, size, 1.0);
    Ok(())
}

fn label_text(e: &Entry) -> String {
    format!("Feld {} – {}", e.field, e.label)
}

/// Height of an entry (label, value lines, gap) at the sheet's sizes.
fn entry_height(fonts: &Fonts, e: &Entry) -> f32 {
    draw_entry::<crate::direct::Page<'static>>(None, fonts, e, 0.0)
}

/// Draws `e` from `y` down (when a page is given); returns the y below it.
fn draw_entry<C: Canvas>(mut page: Option<&mut C>, fonts: &Fonts, e: &Entry, y: f32) -> f32 {
    let label = text::shape(&fonts.bold, &label_text(e));
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
        let run = text::shape(&fonts.regular, line);
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

/// Splits `entries` into sheet pages: the index ranges each page holds.
pub(crate) fn paginate(fonts: &Fonts, entries: &[Entry]) -> Vec<std::ops::Range<usize>> {
    let mut pages = Vec::new();
    let mut start = 0;
    let mut y = ENTRIES_TOP;
    for (i, e) in entries.iter().enumerate() {
        let h = entry_height(fonts, e);
        if y + h > BOTTOM && i > start {
            pages.push(start..i);
            start = i;
            y = ENTRIES_TOP;
        }
        y += h;
    }
    if start < entries.len() {
        pages.push(start..entries.len());
    }
    pages
}

/// Draws one sheet page: the line naming the form it belongs to, then `entries`.
pub(crate) fn draw_page<C: Canvas>(
    page: &mut C,
    fonts: &Fonts,
    owner_line: &str,
    entries: &[Entry],
) {
    page.set_fill_rgb(BLACK);
    let face: &Face = &fonts.regular;
    let run = text::shape(face, owner_line);
    text::paragraph(
        Some(&mut *page),
        face,
        LABEL_SIZE,
        BLACK,
        MARGIN,
        WIDTH,
        &run,
        TITLE_BASELINE + 8.0,
    );
    let mut y = ENTRIES_TOP;
    for e in entries {
        y = draw_entry(Some(&mut *page), fonts, e, y);
    }
}

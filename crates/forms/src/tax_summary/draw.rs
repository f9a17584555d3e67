//! Pages: where each block goes, and drawing blocks and footers.

use domain::signature::SignaturePath;
use krilla::color::rgb;
use krilla::surface::Surface;

use crate::canvas;
use crate::font::{self, Fonts, LINE_HEIGHT, Run};
use crate::pdf::{self, A4_HEIGHT};
use crate::text::{self, Rect};

use super::*;

/// Assigns each block to a page and a y; returns per page the `(block index, y)` list.
pub(super) fn paginate(blocks: &[Block]) -> Vec<Vec<(usize, f32)>> {
    let mut pages: Vec<Vec<(usize, f32)>> = vec![Vec::new()];
    let mut y = TOP;
    let mut i = 0;
    while i < blocks.len() {
        // A heading travels with the block after it (and that one's heading, and so on).
        let mut group_end = i;
        while group_end + 1 < blocks.len() && blocks[group_end].keep_with_next() {
            group_end += 1;
        }
        let group: f32 = blocks[i..=group_end].iter().map(Block::height).sum();
        let page_empty = pages.last().is_none_or(|p| p.is_empty());
        if y + group > BOTTOM + 1e-3 && !page_empty {
            pages.push(Vec::new());
            y = TOP;
            // No leading space on a new page.
            while i < blocks.len() && matches!(blocks[i], Block::Space(_)) {
                i += 1;
            }
            continue;
        }
        for (k, block) in blocks.iter().enumerate().take(group_end + 1).skip(i) {
            if let Some(page) = pages.last_mut() {
                page.push((k, y));
            }
            y += block.height();
        }
        i = group_end + 1;
    }
    pages
}

pub(super) fn draw_block(
    surface: &mut Surface,
    fonts: &Fonts,
    block: &Block,
    y: f32,
    signature: &SignaturePath,
) {
    match block {
        Block::Para {
            bold,
            size,
            color,
            lines,
        } => {
            let face = if *bold { &fonts.bold } else { &fonts.regular };
            draw_lines(surface, face, lines, MARGIN_X, y, *size, *color);
        }
        Block::Heading(run) => {
            let size = HEADING_SIZE;
            draw_lines(
                surface,
                &fonts.bold,
                std::slice::from_ref(run),
                MARGIN_X,
                y,
                size,
                ACCENT,
            );
            pdf::hline(
                surface,
                MARGIN_X,
                MARGIN_X + WIDTH,
                y + size * LINE_HEIGHT + 2.0,
                (150, 160, 185),
            );
        }
        Block::SubHeading(run) => {
            draw_lines(
                surface,
                &fonts.bold,
                std::slice::from_ref(run),
                MARGIN_X,
                y,
                ROW_SIZE,
                BLACK,
            );
        }
        Block::Row {
            label,
            value,
            muted,
        } => {
            let color = if *muted { GREY } else { BLACK };
            draw_lines(
                surface,
                &fonts.bold,
                label,
                MARGIN_X,
                y,
                ROW_SIZE,
                LABEL_GREY,
            );
            draw_lines(
                surface,
                &fonts.regular,
                value,
                MARGIN_X + LABEL_WIDTH,
                y,
                ROW_SIZE,
                color,
            );
        }
        Block::Space(_) => {}
        Block::Signature {
            place_date,
            caption,
        } => {
            draw_lines(
                surface,
                &fonts.regular,
                place_date,
                MARGIN_X,
                y,
                PLACE_SIZE,
                BLACK,
            );
            let y = y + place_date.len() as f32 * LINE_HEIGHT * PLACE_SIZE + 4.0;
            let rect = Rect {
                x: MARGIN_X,
                y,
                w: SIGNATURE_WIDTH,
                h: SIGNATURE_HEIGHT,
            };
            pdf::draw_signature(surface, signature, rect);
            pdf::hline(
                surface,
                MARGIN_X,
                MARGIN_X + SIGNATURE_WIDTH,
                y + SIGNATURE_HEIGHT + 1.0,
                GREY,
            );
            draw_lines(
                surface,
                &fonts.regular,
                caption,
                MARGIN_X,
                y + SIGNATURE_HEIGHT + 4.0,
                8.0,
                BLACK,
            );
        }
    }
}

pub(super) fn draw_lines(
    surface: &mut Surface,
    face: &font::Face,
    lines: &[Run],
    x: f32,
    y: f32,
    size: f32,
    (r, g, b): (u8, u8, u8),
) {
    surface.set_fill(Some(canvas::fill(rgb::Color::new(r, g, b))));
    for (i, line) in lines.iter().enumerate() {
        let baseline = y + (i as f32 * LINE_HEIGHT + font::ASCENT) * size;
        text::draw_run(surface, face, line, x, baseline, size, 1.0);
    }
}

/// Footer: document name on the left, "Seite x von y" on the right.
pub(super) fn footer(surface: &mut Surface, fonts: &Fonts, left: &Run, page: usize, pages: usize) {
    let size = 7.5;
    let y = A4_HEIGHT - 30.0;
    pdf::hline(
        surface,
        MARGIN_X,
        MARGIN_X + WIDTH,
        y - 10.0,
        (170, 170, 170),
    );
    let right = font::shape(&fonts.regular, &format!("Seite {page} von {pages}"));
    let right_w = right.width_em() * size;
    surface.set_fill(Some(canvas::fill(rgb::Color::new(90, 90, 90))));
    // The left text is squeezed so that it never runs into the page number.
    let room = WIDTH - right_w - 12.0;
    let squash = (room / (left.width_em() * size).max(1.0)).min(1.0);
    text::draw_run(surface, &fonts.regular, left, MARGIN_X, y, size, squash);
    text::draw_run(
        surface,
        &fonts.regular,
        &right,
        MARGIN_X + WIDTH - right_w,
        y,
        size,
        1.0,
    );
}

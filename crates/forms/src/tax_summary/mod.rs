//! The German summary of a tax registration ("Fragebogen zur steuerlichen Erfassung -
//! Zusammenfassung") for a UG or GmbH, and for a GbR or eGbR. The sections both have (head,
//! register, holders, bank, estimates, VAT, payroll, signature) are written by the same
//! functions.
//!
//! A4 pages in the questionnaire's order of sections, every submitted value as a labelled row
//! (bold label left, wrapped value right), then place, date and the drawn signature. The content
//! is laid out once into blocks of known height; blocks never break across pages (very long
//! values are pre-split into continuation rows), and a section heading is kept with its first
//! row. Every page carries a footer "Seite x von y" and, in the sandbox, the sandbox mark.

mod draw;
mod sections;
mod values;

use domain::company::Environment;
use domain::gbr::GbrTaxRegistration;
use domain::signature::SignaturePath;
use domain::tax::TaxRegistration;
use krilla::page::PageSettings;

use crate::font::{self, Fonts, LINE_HEIGHT, Run};
use crate::pdf::{self, A4_HEIGHT, A4_WIDTH};
use crate::text::{self, Rect};
use crate::{RenderError, TaxSummaryContext};
use draw::{draw_block, footer, paginate};
use sections::{build, build_partnership, build_sole_proprietor};
use values::legal_form;

const MARGIN_X: f32 = 56.0;

const TOP: f32 = 50.0;

/// Lowest y of content; the footer sits below.
const BOTTOM: f32 = A4_HEIGHT - 52.0;

const WIDTH: f32 = A4_WIDTH - 2.0 * MARGIN_X;

const LABEL_WIDTH: f32 = 200.0;

const ROW_SIZE: f32 = 9.0;

const ROW_GAP: f32 = 3.5;

/// Rows taller than this are split into continuation rows, so every block fits a page.
const MAX_ROW_HEIGHT: f32 = 240.0;

const SIGNATURE_WIDTH: f32 = 210.0;

const SIGNATURE_HEIGHT: f32 = 52.0;

const PLACE_SIZE: f32 = 9.5;

const HEADING_SIZE: f32 = 10.5;

const TITLE: &str = "Fragebogen zur steuerlichen Erfassung - Zusammenfassung";

const BLACK: (u8, u8, u8) = (0, 0, 0);

const GREY: (u8, u8, u8) = (90, 90, 90);

const LABEL_GREY: (u8, u8, u8) = (60, 60, 60);

const ACCENT: (u8, u8, u8) = (20, 45, 100);

/// A piece of the flow with a fixed height.
enum Block {
    /// A paragraph in the full width, pre-wrapped.
    Para {
        bold: bool,
        size: f32,
        color: (u8, u8, u8),
        lines: Vec<Run>,
    },
    /// A section heading with a rule below; kept on the page of the block after it.
    Heading(Run),
    /// A sub-heading inside a section (e.g. "Natürliche Personen"); also kept with the next block.
    SubHeading(Run),
    /// A labelled row: label lines left, value lines right (pre-wrapped), `muted` in grey.
    Row {
        label: Vec<Run>,
        value: Vec<Run>,
        muted: bool,
    },
    Space(f32),
    /// Place and date, the signature box with line and caption: one block, so the signature is
    /// never separated from its place and date.
    Signature {
        place_date: Vec<Run>,
        caption: Vec<Run>,
    },
}

impl Block {
    fn height(&self) -> f32 {
        match self {
            Block::Para { size, lines, .. } => lines.len() as f32 * LINE_HEIGHT * size,
            Block::Heading(_) => HEADING_SIZE * LINE_HEIGHT + 2.0 + 5.0,
            Block::SubHeading(_) => ROW_SIZE * LINE_HEIGHT + 3.0,
            Block::Row { label, value, .. } => {
                label.len().max(value.len()) as f32 * LINE_HEIGHT * ROW_SIZE + ROW_GAP
            }
            Block::Space(h) => *h,
            Block::Signature {
                place_date,
                caption,
            } => {
                place_date.len() as f32 * LINE_HEIGHT * PLACE_SIZE
                    + 4.0
                    + SIGNATURE_HEIGHT
                    + 4.0
                    + caption.len() as f32 * LINE_HEIGHT * 8.0
            }
        }
    }

    /// Headings stay with the block after them; so does space (a heading's space before it
    /// moves to the next page with it, where it is dropped).
    fn keep_with_next(&self) -> bool {
        matches!(
            self,
            Block::Heading(_) | Block::SubHeading(_) | Block::Space(_)
        )
    }
}

/// Wraps `content` (hard breaks with `\n`) into `width` at `size`.
fn wrap(fonts: &Fonts, bold: bool, content: &str, width: f32, size: f32) -> Vec<Run> {
    let mut out = Vec::new();
    for part in content.split('\n').filter(|p| !p.trim().is_empty()) {
        let run = font::shape_in(fonts, bold, part);
        let laid = text::layout(
            std::slice::from_ref(&run),
            Rect {
                x: 0.0,
                y: 0.0,
                w: width,
                h: f32::MAX,
            },
            text::Fit {
                max: size,
                min: size,
                valign: text::VAlign::Top,
            },
        );
        out.extend(laid.lines);
    }
    out
}

/// Builds the blocks of the flow.
struct Flow<'a> {
    fonts: &'a Fonts,
    blocks: Vec<Block>,
}

impl Flow<'_> {
    fn para(&mut self, bold: bool, size: f32, color: (u8, u8, u8), content: &str) {
        let lines = wrap(self.fonts, bold, content, WIDTH, size);
        self.blocks.push(Block::Para {
            bold,
            size,
            color,
            lines,
        });
    }

    fn heading(&mut self, content: &str) {
        self.blocks.push(Block::Space(6.0));
        self.blocks
            .push(Block::Heading(font::shape_in(self.fonts, true, content)));
    }

    fn sub_heading(&mut self, content: &str) {
        self.blocks.push(Block::Space(2.0));
        self.blocks
            .push(Block::SubHeading(font::shape_in(self.fonts, true, content)));
    }

    fn row(&mut self, label: &str, value: &str) {
        self.row_with(label, value, false);
    }

    fn row_with(&mut self, label: &str, value: &str, muted: bool) {
        let label = wrap(self.fonts, true, label, LABEL_WIDTH - 8.0, ROW_SIZE);
        let value = wrap(self.fonts, false, value, WIDTH - LABEL_WIDTH, ROW_SIZE);
        let line = LINE_HEIGHT * ROW_SIZE;
        let max_lines = ((MAX_ROW_HEIGHT / line) as usize).max(1);
        if value.len() <= max_lines {
            self.blocks.push(Block::Row {
                label,
                value,
                muted,
            });
            return;
        }
        // A value too long for one block: continuation rows without a label.
        for (i, chunk) in value.chunks(max_lines).enumerate() {
            self.blocks.push(Block::Row {
                label: if i == 0 { label.clone() } else { Vec::new() },
                value: chunk.to_vec(),
                muted,
            });
        }
    }
}

fn render(reg: &TaxRegistration, ctx: &TaxSummaryContext) -> Result<Vec<u8>, RenderError> {
    let kind = legal_form(reg.legal_form);
    let doc = Document {
        name: &reg.name,
        kind,
        environment: reg.environment,
        signature: &reg.signature_path,
    };
    render_document(&doc, ctx, |flow| build(reg, ctx, flow))
}

fn render_partnership(
    reg: &GbrTaxRegistration,
    ctx: &TaxSummaryContext,
) -> Result<Vec<u8>, RenderError> {
    let doc = Document {
        name: &reg.name,
        kind: reg.legal_form.german(),
        environment: reg.environment,
        signature: &reg.signature_path,
    };
    render_document(&doc, ctx, |flow| build_partnership(reg, ctx, flow))
}

fn render_sole_proprietor(
    reg: &domain::sole_proprietor::SoleProprietorTaxRegistration,
    ctx: &TaxSummaryContext,
) -> Result<Vec<u8>, RenderError> {
    let doc = Document {
        name: &reg.name,
        kind: "Einzelunternehmen",
        environment: reg.environment,
        signature: &reg.signature_path,
    };
    render_document(&doc, ctx, |flow| build_sole_proprietor(reg, ctx, flow))
}

/// What the pages of a summary need besides its blocks.
struct Document<'a> {
    name: &'a str,
    /// The legal form for the metadata (`GmbH`, `GbR` ...).
    kind: &'a str,
    environment: Environment,
    signature: &'a SignaturePath,
}

fn render_document(
    doc: &Document,
    ctx: &TaxSummaryContext,
    build: impl FnOnce(&mut Flow),
) -> Result<Vec<u8>, RenderError> {
    let fonts = font::fonts()?;
    let mut flow = Flow {
        fonts,
        blocks: Vec::new(),
    };
    build(&mut flow);
    let blocks = flow.blocks;
    let pages = paginate(&blocks);
    let footer_left = font::shape(&fonts.regular, &format!("{} \u{2013} {TITLE}", doc.name));

    let mut document = pdf::new_document()?;
    document.set_metadata(pdf::metadata(
        format!("{TITLE} - {}", doc.name),
        format!(
            "Zusammenfassung des Fragebogens zur steuerlichen Erfassung für {} ({})",
            doc.name, doc.kind
        ),
        None,
        ctx.timestamp,
    ));
    let settings = PageSettings::from_wh(A4_WIDTH, A4_HEIGHT).ok_or(RenderError::Font)?;
    let total = pages.len();
    for (p, placed) in pages.iter().enumerate() {
        let mut page = document.start_page_with(settings.clone());
        let mut surface = page.surface();
        for &(i, y) in placed {
            draw_block(&mut surface, fonts, &blocks[i], y, doc.signature);
        }
        footer(&mut surface, fonts, &footer_left, p + 1, total);
        if doc.environment == Environment::Sandbox {
            pdf::sandbox_mark(&mut surface)?;
        }
    }
    pdf::finish(document)
}

/// Renders the German summary of a tax registration ("Fragebogen zur steuerlichen Erfassung -
/// Zusammenfassung"): every submitted value in the questionnaire's order, on as many A4 pages
/// as needed, ending with place, date and the drawn `signature_path`.
pub fn render_tax_summary(
    reg: &domain::tax::TaxRegistration,
    ctx: &crate::TaxSummaryContext,
) -> Result<Vec<u8>, crate::RenderError> {
    render(reg, ctx)
}

/// Renders the German summary of a partnership's tax registration (GbR, eGbR): the same
/// document as [`render_tax_summary`] with the partnership's sections (partnership agreement,
/// Gesellschaftsregister, partners with their shares and who manages) and the signature of the
/// managing partners.
pub fn render_partnership_tax_summary(
    reg: &domain::gbr::GbrTaxRegistration,
    ctx: &crate::TaxSummaryContext,
) -> Result<Vec<u8>, crate::RenderError> {
    render_partnership(reg, ctx)
}

/// Renders the German summary of a sole proprietor's tax registration: the owner, the
/// activity, spouse and earlier circumstances, the sections every registration has, the
/// profit determination and prepayment details, and the owner's signature.
pub fn render_sole_proprietor_tax_summary(
    reg: &domain::sole_proprietor::SoleProprietorTaxRegistration,
    ctx: &crate::TaxSummaryContext,
) -> Result<Vec<u8>, crate::RenderError> {
    render_sole_proprietor(reg, ctx)
}

//! Document-level pieces shared by all forms: PDF/A settings, metadata, sandbox mark, signatures.

use domain::signature::{Segment, SignaturePath};
use krilla::configure::{Archival, ConfigurationBuilder};
use krilla::geom::Transform;
use krilla::metadata::{DateTime, Metadata};
use krilla::{Document, SerializeSettings};

use crate::RenderError;
use crate::canvas::{Canvas, Pen, Seg};
use crate::font;
use crate::text::{self, Rect};

/// A4 in PDF points.
pub(crate) const A4_WIDTH: f32 = 595.28;
pub(crate) const A4_HEIGHT: f32 = 841.89;

/// A new PDF/A-2b document. Content streams are compressed (krilla's default level).
pub(crate) fn new_document() -> Result<Document, RenderError> {
    let configuration = ConfigurationBuilder::new()
        .with_archival_validator(Archival::A2_B)
        .finish()
        .map_err(|e| RenderError::Pdf(format!("{e:?}")))?;
    let settings = SerializeSettings {
        configuration,
        // Tagging is not required for PDF/A-2b; leaving it off keeps files small and fast.
        enable_tagging: false,
        compress_content_streams: false,
        ..SerializeSettings::default()
    };
    Ok(Document::new_with(settings))
}

/// Document language, creator and producer in the metadata of every document.
pub(crate) const LANGUAGE: &str = "de-DE";
pub(crate) const CREATOR: &str = "Registration Filing Service";
pub(crate) const PRODUCER: &str = "Registration Filing Service forms";

/// Metadata with a fixed creation date (deterministic output for the same input and timestamp).
pub(crate) fn metadata(
    title: String,
    subject: String,
    author: Option<String>,
    timestamp: time::OffsetDateTime,
) -> Metadata {
    let utc = timestamp.to_offset(time::UtcOffset::UTC);
    let year = u16::try_from(utc.year().clamp(0, 9999)).unwrap_or(1970);
    let date = DateTime::new(year)
        .month(u8::from(utc.month()))
        .day(utc.day())
        .hour(utc.hour())
        .minute(utc.minute())
        .second(utc.second())
        .utc_offset_hour(0)
        .utc_offset_minute(0);
    let mut m = Metadata::new()
        .title(title)
        .description(subject)
        .language(LANGUAGE.to_owned())
        .creator(CREATOR.to_owned())
        .producer(format!("{PRODUCER} (krilla)"))
        .creation_date(date);
    if let Some(author) = author {
        m = m.authors(vec![author]);
    }
    m
}

pub(crate) fn finish(document: Document) -> Result<Vec<u8>, RenderError> {
    document
        .finish()
        .map_err(|e| RenderError::Pdf(format!("{e:?}")))
}

/// The visible "MUSTER - SANDBOX" mark, diagonally across the page, drawn last.
pub(crate) fn sandbox_mark<C: Canvas + ?Sized>(canvas: &mut C) -> Result<(), RenderError> {
    let fonts = font::fonts()?;
    let run = font::shape(&fonts.bold, SANDBOX_MARK);
    let size = 64.0;
    let width = run.width_em() * size;
    let angle = -(A4_HEIGHT.atan2(A4_WIDTH)).to_degrees();
    canvas.push_transform(&Transform::from_translate(A4_WIDTH / 2.0, A4_HEIGHT / 2.0));
    canvas.push_transform(&Transform::from_rotate(angle));
    canvas.push_opacity(0.35);
    canvas.set_fill_rgb(SANDBOX_RED);
    text::draw_run(
        canvas,
        &fonts.bold,
        &run,
        -width / 2.0,
        size * 0.35,
        size,
        1.0,
    );
    canvas.pop();
    canvas.pop();
    canvas.pop();
    // A horizontal banner in the top margin as well: readable by text extraction, which cannot
    // follow the diagonal mark.
    let banner = font::shape(&fonts.bold, SANDBOX_BANNER);
    let size = 7.5;
    canvas.set_fill_rgb(SANDBOX_RED);
    text::draw_run(
        canvas,
        &fonts.bold,
        &banner,
        (A4_WIDTH - banner.width_em() * size) / 2.0,
        13.0,
        size,
        1.0,
    );
    Ok(())
}

/// The texts of the sandbox mark (bold), for fonts prepared ahead of a document.
pub(crate) const SANDBOX_MARK: &str = "MUSTER - SANDBOX";
pub(crate) const SANDBOX_BANNER: &str =
    "MUSTER - SANDBOX \u{2013} Testdokument, nicht zur Einreichung";
const SANDBOX_RED: (u8, u8, u8) = (200, 30, 30);

/// Margin between a signature's bounding box and the box it is drawn into, in points.
pub(crate) const SIGNATURE_MARGIN: f32 = 2.5;
/// Stroke width of drawn signatures, in points.
pub(crate) const SIGNATURE_STROKE: f32 = 0.9;

/// The transform mapping signature coordinates into `rect`: uniform scale (aspect ratio kept),
/// centred, with [`SIGNATURE_MARGIN`] on every side. A straight stroke (zero width or height)
/// is scaled by its one extent. Returns the scale and the page position of the bounding box's
/// top-left corner.
pub(crate) fn signature_transform(sig: &SignaturePath, rect: Rect) -> (f64, f64, f64) {
    let b = sig.bounding_box();
    let avail_w = f64::from((rect.w - 2.0 * SIGNATURE_MARGIN).max(1.0));
    let avail_h = f64::from((rect.h - 2.0 * SIGNATURE_MARGIN).max(1.0));
    let sx = if b.width() > 0.0 {
        avail_w / b.width()
    } else {
        f64::INFINITY
    };
    let sy = if b.height() > 0.0 {
        avail_h / b.height()
    } else {
        f64::INFINITY
    };
    let scale = sx.min(sy);
    let scale = if scale.is_finite() { scale } else { 1.0 };
    // Offsets of the bounding box's top-left corner; points are mapped as
    // `(p - min) * scale + offset`, which stays inside the box even for extreme coordinates
    // (no cancellation between huge terms).
    let dx = f64::from(rect.x) + (f64::from(rect.w) - b.width() * scale) / 2.0;
    let dy = f64::from(rect.y) + (f64::from(rect.h) - b.height() * scale) / 2.0;
    (scale, dx, dy)
}

/// Draws a signature as vector strokes scaled into `rect` (see [`signature_transform`]).
pub(crate) fn draw_signature<C: Canvas + ?Sized>(canvas: &mut C, sig: &SignaturePath, rect: Rect) {
    let (s, dx, dy) = signature_transform(sig, rect);
    let b = sig.bounding_box();
    let p = |pt: domain::signature::Point| {
        (
            ((pt.x - b.min_x) * s + dx) as f32,
            ((pt.y - b.min_y) * s + dy) as f32,
        )
    };
    let mut path = Vec::with_capacity(sig.segments().len() + 1);
    let mut open = false;
    for seg in sig.segments() {
        match *seg {
            Segment::MoveTo(a) => {
                let (x, y) = p(a);
                path.push(Seg::MoveTo(x, y));
                open = true;
            }
            Segment::LineTo(a) => {
                let (x, y) = p(a);
                if !open {
                    path.push(Seg::MoveTo(x, y));
                    open = true;
                }
                path.push(Seg::LineTo(x, y));
            }
            Segment::CubicTo(a, b, c) => {
                let ((x1, y1), (x2, y2), (x, y)) = (p(a), p(b), p(c));
                if !open {
                    path.push(Seg::MoveTo(x1, y1));
                    open = true;
                }
                path.push(Seg::CubicTo(x1, y1, x2, y2, x, y));
            }
            Segment::Close => path.push(Seg::Close),
        }
    }
    canvas.stroke(
        &path,
        Pen {
            rgb: (16, 32, 110),
            width: SIGNATURE_STROKE,
        },
    );
}

/// A thin (0.6 pt) horizontal rule from `x0` to `x1` at `y`.
pub(crate) fn hline<C: Canvas + ?Sized>(
    canvas: &mut C,
    x0: f32,
    x1: f32,
    y: f32,
    rgb: (u8, u8, u8),
) {
    canvas.stroke(
        &[Seg::MoveTo(x0, y), Seg::LineTo(x1, y)],
        Pen { rgb, width: 0.6 },
    );
}

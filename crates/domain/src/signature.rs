//! Handwritten signatures sent as SVG path data (`owners[].signatures.*`).
//!
//! [`SignaturePath::parse`] is the single place that decides whether a signature is acceptable:
//! the request validator calls it to reject bad input on the field, and the PDF renderer draws
//! the [`Segment`]s it produced. Parsing uses the `svgtypes` path parser; its simplifying layer
//! turns relative commands, `H`/`V`, smooth curves and arcs into absolute move/line/cubic/quadratic
//! segments, and quadratics are raised to cubics here, so the renderer only ever sees
//! [`Segment::MoveTo`], [`Segment::LineTo`], [`Segment::CubicTo`] and [`Segment::Close`].
//!
//! Rules (each with a stable machine code, see [`SignatureError::code`]):
//!
//! - more than [`MAX_SIGNATURE_BYTES`] bytes of text or more than [`MAX_SIGNATURE_SEGMENTS`]
//!   segments: `signature_too_large`;
//! - text that is not SVG path data: `invalid_svg_path`;
//! - a coordinate that is not finite or whose magnitude exceeds [`MAX_COORDINATE`]:
//!   `invalid_svg_path` (guards the renderer against NaN, infinities and overflowing transforms);
//! - empty text, or a path that only moves and never draws: `empty_signature`;
//! - a bounding box of zero width **and** zero height (a dot): `degenerate_signature`.
//!   A straight horizontal or vertical stroke is accepted: it has an extent in one direction and
//!   is drawn scaled to the box width (or height) like any other signature.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use svgtypes::{SimplePathSegment, SimplifyingPathParser};

/// Maximum length of the path text in bytes (100 KB).
pub const MAX_SIGNATURE_BYTES: usize = 100 * 1024;
/// Maximum number of segments after simplification (arcs count as the cubics they become).
pub const MAX_SIGNATURE_SEGMENTS: usize = 10_000;
/// Maximum absolute value of any coordinate.
pub const MAX_COORDINATE: f64 = 1.0e6;

/// A point in the signature's own coordinate system (SVG: y grows downwards).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// An absolute path segment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Segment {
    MoveTo(Point),
    LineTo(Point),
    /// Cubic Bézier: two control points, then the end point.
    CubicTo(Point, Point, Point),
    Close,
}

/// Axis-aligned bounding box of all segment end and control points.
///
/// Control points bound a Bézier curve, so the box always contains the drawn curve (it may be
/// slightly larger than the tight box, which only adds margin when the signature is scaled).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundingBox {
    pub min_x: f64,
    pub min_y: f64,
    pub max_x: f64,
    pub max_y: f64,
}

impl BoundingBox {
    pub fn width(&self) -> f64 {
        self.max_x - self.min_x
    }
    pub fn height(&self) -> f64 {
        self.max_y - self.min_y
    }
}

/// Why a signature path was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the signature is not valid SVG path data: {0}")]
    InvalidPath(String),
    #[error("the signature is empty: it draws nothing")]
    Empty,
    #[error("the signature is too large: {0}")]
    TooLarge(String),
    #[error("the signature has no extent: its bounding box has zero width and zero height")]
    Degenerate,
}

impl SignatureError {
    /// Stable machine-readable code for API error responses.
    pub fn code(&self) -> &'static str {
        match self {
            SignatureError::InvalidPath(_) => "invalid_svg_path",
            SignatureError::Empty => "empty_signature",
            SignatureError::TooLarge(_) => "signature_too_large",
            SignatureError::Degenerate => "degenerate_signature",
        }
    }
}

/// A validated signature: the original SVG path text plus its absolute segments and bounds.
///
/// Serialises as the original string; deserialising runs [`SignaturePath::parse`].
#[derive(Debug, Clone, PartialEq)]
pub struct SignaturePath {
    source: String,
    segments: Vec<Segment>,
    bbox: BoundingBox,
}

impl SignaturePath {
    /// Parses and checks SVG path data. Pure and cheap enough to call from a request validator.
    pub fn parse(text: &str) -> Result<SignaturePath, SignatureError> {
        if text.len() > MAX_SIGNATURE_BYTES {
            return Err(SignatureError::TooLarge(format!(
                "{} bytes, at most {MAX_SIGNATURE_BYTES} are allowed",
                text.len()
            )));
        }
        if text.trim().is_empty() {
            return Err(SignatureError::Empty);
        }
        let mut segments = Vec::new();
        let mut current = Point { x: 0.0, y: 0.0 };
        let mut bbox: Option<BoundingBox> = None;
        let mut draws = false;
        for item in SimplifyingPathParser::from(text) {
            let seg = item.map_err(|e| SignatureError::InvalidPath(e.to_string()))?;
            if segments.len() >= MAX_SIGNATURE_SEGMENTS {
                return Err(SignatureError::TooLarge(format!(
                    "more than {MAX_SIGNATURE_SEGMENTS} path segments"
                )));
            }
            let seg = match seg {
                SimplePathSegment::MoveTo { x, y } => Segment::MoveTo(checked(x, y)?),
                SimplePathSegment::LineTo { x, y } => Segment::LineTo(checked(x, y)?),
                SimplePathSegment::CurveTo {
                    x1,
                    y1,
                    x2,
                    y2,
                    x,
                    y,
                } => Segment::CubicTo(checked(x1, y1)?, checked(x2, y2)?, checked(x, y)?),
                SimplePathSegment::Quadratic { x1, y1, x, y } => {
                    let q = checked(x1, y1)?;
                    let end = checked(x, y)?;
                    // Exact degree elevation of a quadratic Bézier.
                    let c1 = Point {
                        x: current.x + 2.0 / 3.0 * (q.x - current.x),
                        y: current.y + 2.0 / 3.0 * (q.y - current.y),
                    };
                    let c2 = Point {
                        x: end.x + 2.0 / 3.0 * (q.x - end.x),
                        y: end.y + 2.0 / 3.0 * (q.y - end.y),
                    };
                    Segment::CubicTo(c1, c2, end)
                }
                SimplePathSegment::ClosePath => Segment::Close,
            };
            match seg {
                Segment::MoveTo(p) => {
                    include(&mut bbox, p);
                    current = p;
                }
                Segment::LineTo(p) => {
                    include(&mut bbox, p);
                    current = p;
                    draws = true;
                }
                Segment::CubicTo(a, b, p) => {
                    include(&mut bbox, a);
                    include(&mut bbox, b);
                    include(&mut bbox, p);
                    current = p;
                    draws = true;
                }
                Segment::Close => {
                    // svgtypes reports the sub-path start as the next current point itself.
                }
            }
            segments.push(seg);
        }
        let bbox = match bbox {
            Some(b) if draws => b,
            _ => return Err(SignatureError::Empty),
        };
        if bbox.width() <= 0.0 && bbox.height() <= 0.0 {
            return Err(SignatureError::Degenerate);
        }
        Ok(SignaturePath {
            source: text.to_owned(),
            segments,
            bbox,
        })
    }

    /// The original path text as received.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Absolute segments (move, line, cubic, close).
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Bounds of all points (never zero in both directions).
    pub fn bounding_box(&self) -> BoundingBox {
        self.bbox
    }
}

fn checked(x: f64, y: f64) -> Result<Point, SignatureError> {
    for v in [x, y] {
        if !v.is_finite() || v.abs() > MAX_COORDINATE {
            return Err(SignatureError::InvalidPath(format!(
                "coordinate {v} is not a finite number within ±{MAX_COORDINATE}"
            )));
        }
    }
    Ok(Point { x, y })
}

fn include(bbox: &mut Option<BoundingBox>, p: Point) {
    match bbox {
        None => {
            *bbox = Some(BoundingBox {
                min_x: p.x,
                min_y: p.y,
                max_x: p.x,
                max_y: p.y,
            })
        }
        Some(b) => {
            b.min_x = b.min_x.min(p.x);
            b.min_y = b.min_y.min(p.y);
            b.max_x = b.max_x.max(p.x);
            b.max_y = b.max_y.max(p.y);
        }
    }
}

impl fmt::Display for SignaturePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl std::str::FromStr for SignaturePath {
    type Err = SignatureError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SignaturePath::parse(s)
    }
}

impl Serialize for SignaturePath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.source)
    }
}

impl<'de> Deserialize<'de> for SignaturePath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        SignaturePath::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bbox(s: &str) -> BoundingBox {
        SignaturePath::parse(s).expect("valid path").bounding_box()
    }

    #[test]
    fn absolute_lines_and_bbox() {
        let p = SignaturePath::parse("M 10 20 L 30 5 L 50 40").unwrap();
        assert_eq!(p.segments().len(), 3);
        let b = p.bounding_box();
        assert_eq!(
            (b.min_x, b.min_y, b.max_x, b.max_y),
            (10.0, 5.0, 50.0, 40.0)
        );
        assert_eq!(p.as_str(), "M 10 20 L 30 5 L 50 40");
    }

    #[test]
    fn relative_commands_and_h_v_become_absolute() {
        let p = SignaturePath::parse("m10,10 l5,5 h10 v-20 z").unwrap();
        assert_eq!(
            p.segments(),
            &[
                Segment::MoveTo(Point { x: 10.0, y: 10.0 }),
                Segment::LineTo(Point { x: 15.0, y: 15.0 }),
                Segment::LineTo(Point { x: 25.0, y: 15.0 }),
                Segment::LineTo(Point { x: 25.0, y: -5.0 }),
                Segment::Close,
            ]
        );
    }

    #[test]
    fn arcs_become_cubics() {
        // A half circle of radius 10 from (0,0) to (20,0).
        let p = SignaturePath::parse("M0 0 A10 10 0 0 1 20 0").unwrap();
        assert!(p.segments().len() >= 2);
        assert!(
            p.segments()[1..]
                .iter()
                .all(|s| matches!(s, Segment::CubicTo(..)))
        );
        let Some(Segment::CubicTo(_, _, end)) = p.segments().last() else {
            panic!("last segment is not a cubic");
        };
        assert!((end.x - 20.0).abs() < 1e-9 && end.y.abs() < 1e-9);
        // The arc bulges 10 units away from the chord (sweep flag 1: towards negative y).
        let b = p.bounding_box();
        assert!(b.height() >= 9.9, "arc height {}", b.height());
        // Relative arc too.
        let r = SignaturePath::parse("M5 5 a10 10 0 0 0 20 0").unwrap();
        let Some(Segment::CubicTo(_, _, end)) = r.segments().last() else {
            panic!("last segment is not a cubic");
        };
        assert!((end.x - 25.0).abs() < 1e-9 && (end.y - 5.0).abs() < 1e-9);
    }

    #[test]
    fn quadratic_and_smooth_curves_become_cubics() {
        let p = SignaturePath::parse("M0 0 Q 10 10 20 0 T 40 0 S 50 10 60 0").unwrap();
        assert_eq!(p.segments().len(), 4);
        assert!(
            p.segments()[1..]
                .iter()
                .all(|s| matches!(s, Segment::CubicTo(..)))
        );
        // Degree elevation: control points at 2/3 of the way to the quadratic control point.
        let Segment::CubicTo(c1, c2, end) = p.segments()[1] else {
            panic!("not a cubic")
        };
        assert!((c1.x - 20.0 / 3.0).abs() < 1e-9 && (c1.y - 20.0 / 3.0).abs() < 1e-9);
        assert!((c2.x - 40.0 / 3.0).abs() < 1e-9 && (c2.y - 20.0 / 3.0).abs() < 1e-9);
        assert_eq!(end, Point { x: 20.0, y: 0.0 });
        assert_eq!(bbox("M0 0 C 0 -5 10 -5 10 0").min_y, -5.0);
    }

    #[test]
    fn errors_have_stable_codes() {
        let code = |s: &str| SignaturePath::parse(s).unwrap_err().code();
        assert_eq!(code("hello"), "invalid_svg_path");
        assert_eq!(code("M 10 10 L"), "invalid_svg_path");
        assert_eq!(code("M 1e400 0 L 1 1"), "invalid_svg_path");
        assert_eq!(code("M 0 0 L 1e7 1"), "invalid_svg_path");
        assert_eq!(code("M NaN 0 L 1 1"), "invalid_svg_path");
        assert_eq!(code(""), "empty_signature");
        assert_eq!(code("   "), "empty_signature");
        assert_eq!(code("M 10 10"), "empty_signature");
        assert_eq!(code("M 10 10 M 20 20"), "empty_signature");
        assert_eq!(code("M 10 10 L 10 10"), "degenerate_signature");
        assert_eq!(code("M 10 10 L 10 10 Z"), "degenerate_signature");
        let e = SignaturePath::parse("x").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the signature is not valid SVG path data")
        );
    }

    #[test]
    fn straight_strokes_are_accepted() {
        assert_eq!(bbox("M 0 5 H 100").height(), 0.0);
        assert_eq!(bbox("M 5 0 V 100").width(), 0.0);
    }

    #[test]
    fn limits() {
        // Exactly at the segment limit is fine, one more is not.
        let ok = format!("M0 0{}", " L1 1".repeat(MAX_SIGNATURE_SEGMENTS - 1));
        assert!(ok.len() <= MAX_SIGNATURE_BYTES);
        assert!(SignaturePath::parse(&ok).is_ok());
        let too_many = format!("M0 0{}", " L1 1".repeat(MAX_SIGNATURE_SEGMENTS));
        assert_eq!(
            SignaturePath::parse(&too_many).unwrap_err().code(),
            "signature_too_large"
        );
        let too_long = format!("M0 0 L1 1{}", " ".repeat(MAX_SIGNATURE_BYTES));
        assert_eq!(
            SignaturePath::parse(&too_long).unwrap_err().code(),
            "signature_too_large"
        );
        // Coordinates at the boundary are accepted.
        assert!(SignaturePath::parse("M -1000000 0 L 1000000 1").is_ok());
    }

    #[test]
    fn serde_round_trip_keeps_the_original_text() {
        let p: SignaturePath = serde_json::from_str("\"m 1 1 l 10 4\"").unwrap();
        assert_eq!(serde_json::to_string(&p).unwrap(), "\"m 1 1 l 10 4\"");
        let err = serde_json::from_str::<SignaturePath>("\"nope\"").unwrap_err();
        assert!(err.to_string().contains("not valid SVG path data"));
    }
}

//! The shapes of the generated form geometry (`geometry.rs`): shaded, white and ruled
//! rectangles and the labels of a page. The drawing code (`layout.rs`) reads them; the
//! generated data only fills them in.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Regular,
    Bold,
    Heading,
    Title,
    Number,
}

pub(crate) struct Label {
    pub x: f32,
    pub base: f32,
    pub width: f32,
    pub style: Style,
    pub text: &'static str,
}

pub(crate) struct PageGeometry {
    pub grey: &'static [[f32; 4]],
    pub white: &'static [[f32; 4]],
    pub rules: &'static [[f32; 4]],
    pub labels: &'static [Label],
}

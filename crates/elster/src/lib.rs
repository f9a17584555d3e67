//! ElsterXML documents for the tax registration questionnaire (Fragebogen zur steuerlichen
//! Erfassung), the XSDs they are validated against, and the validation itself.
//!
//! [`write`] renders a validated [`domain::tax::TaxRegistration`] (UG, GmbH) as an ElsterXML v11
//! envelope around `FsE_KapG/KapG`, [`write_persg`] a [`domain::gbr::GbrTaxRegistration`] (GbR,
//! eGbR) around `FsE_PersG/PersG`; [`validate`] checks either document against the bundled schemas
//! with libxml2; [`write_validated`] and [`write_persg_validated`] do both. [`write_eun`] and
//! [`write_eun_validated`] do the same for a sole proprietor's `FsE_EUn` (a module of its own). The mapping of
//! every field is documented in `docs/elster.md`.

mod eun;
mod manual;
mod notes;
mod validate;
mod write;

pub use domain::street::{HouseNumber, split_street};
pub use eun::*;
pub use manual::*;
pub use notes::{Transliteration, transliterations};
pub use validate::*;
// Each family's writer, schema and manual answers are public where they live, so a new family
// touches its own files only.
pub use write::*;

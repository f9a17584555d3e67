//! Domain types and rules of the Registration Filing Service.
//!
//! This crate is pure: no I/O, no async, no HTTP types. The server parses requests into these
//! types, the forms and elster crates render them, and the store persists them, so every field
//! rule lives here exactly once.

pub mod address;
pub mod auth;
pub mod calendar;
pub mod case;
pub mod case_state;
pub mod company;
pub mod country;
pub mod din91379;
pub mod error;
pub mod gbr;
pub mod gbr_request;
pub mod latin9;
pub mod legal_name;
pub mod lifecycle;
pub mod money;
pub mod nationality;
pub mod offices;
pub mod phone;
#[cfg(test)]
mod properties;
pub mod register_court;
#[cfg(any(test, feature = "test-support"))]
pub mod rule_cases;
pub mod rules;
pub mod sandbox;
pub mod signature;
pub mod sole_proprietor;
pub mod sole_proprietor_request;
pub mod steuernummer;
pub mod street;
pub mod tax;
pub mod tax_core;
pub mod tax_request;
pub mod taxid;
pub mod trade;
pub mod trade_request;
pub mod webhook;

pub use error::{FieldError, Violations};

//! Domain types and rules.

pub mod country;
pub mod signature;
pub mod trade;

//! Domain types and rules.

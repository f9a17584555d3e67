//! The application layer: use cases that routes, the command line and background tasks share,
//! each written once (docs/architecture.md). Handlers extract, call one of these and shape the
//! answer.

pub mod tax_xml;

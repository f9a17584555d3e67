//! The `filing` service: HTTP API, operator API, background workers and command line.
//!
//! Requests flow one way: `routes` (axum handlers) parse into `domain` types, call the `store`
//! repository and the `forms`/`elster` renderers, and answer through [`error::ApiError`] and the
//! envelope in [`envelope`].

pub mod app;
pub mod auth;
pub mod backup;
pub mod case_locks;
pub mod cases;
pub mod cli;
pub mod clock;
pub mod config;
pub mod console;
pub mod directory;
pub mod dns;
pub mod envelope;
pub mod error;
pub mod extract;
pub mod idempotency;
pub mod instances;
pub mod jobs;
pub mod limits;
pub mod links;
pub mod lists;
pub mod metrics;
pub mod openapi;
pub mod readiness;
pub mod recent;
pub mod render;
pub mod routes;
pub mod sealing;
pub mod state;
pub mod telemetry;
pub mod uploads;
pub mod webhooks;

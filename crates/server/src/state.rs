//! What every handler and layer can reach: the application's state, built once at the start
//! (`app::build_state`). It names the parts it holds and nothing that uses it, so every
//! module may import it without a cycle.

use std::sync::Arc;

use axum::http::HeaderName;
use store::Repository;
use store::documents::DocumentStore;

use crate::config::Config;
use crate::links::LinkSigner;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// What every handler can reach.
pub struct AppState {
    pub repo: Arc<dyn Repository>,
    pub documents: DocumentStore,
    pub links: LinkSigner,
    pub config: Config,
    /// Wakes this instance's webhook worker when a request has written events.
    pub webhook_wake: tokio::sync::Notify,
    /// The HTTP client of webhook deliveries and test pings ([`crate::webhooks::client`]),
    /// built once: its resolver and TLS roots are not set up again per request.
    pub webhook_client: reqwest::Client,
    /// One permit per upload (multipart request) this instance serves at a time.
    /// The upload slots and who holds them (the `limits::upload_slots` layer).
    pub uploads: crate::limits::buckets::UploadSlots,
    /// This instance and how many are alive (the per-tenant limits are divided by them).
    pub instances: crate::instances::Instances,
    /// The reads each provider has in flight (the `limits::read_caps` layer).
    pub read_caps: crate::limits::buckets::ReadCaps,
    /// The providers' storage quota and the free-disk watermark.
    pub storage: crate::limits::storage::Storage,
    /// Where file parts are spooled while a request is served ([`crate::uploads`]).
    pub spool_dir: std::path::PathBuf,
    /// The memory budget of PDF checks ([`crate::uploads::PdfChecks`]).
    pub pdf_checks: crate::uploads::PdfChecks,
    /// The per-key token buckets; `None` when rate limiting is off.
    pub rate_limiter: Option<crate::limits::buckets::KeyRateLimiter>,
    /// Requests without a valid key and console sign-ins, per client address.
    pub address_limiter: Option<crate::limits::buckets::KeyRateLimiter<std::net::IpAddr>>,
    /// API key records read recently (see [`crate::auth::cache::KeyCache`]).
    pub keys: crate::auth::cache::KeyCache,
    /// Trade office directory entries (or their absence) read recently for new cases' GewA 1
    /// heads, by office key, for `config.directory_cache`.
    pub trade_offices: crate::recent::Recent<Option<store::TradeOfficeEntry>>,
    /// The keys that seal the answers kept for idempotent replay
    /// (`idempotency::answer_keys`).
    pub answer_keys: crate::sealing::SealingKeys,
    /// Cases this instance is rendering documents for from a read of them.
    pub case_locks: crate::case_locks::CaseLocks,
    /// The largest body of a route, by its template (`routes::body_limit`): handed to
    /// the layers that read a body before its route does, so they need not know the routes.
    pub body_limit: fn(&Config, &str) -> usize,
    /// This instance's Prometheus metrics ([`crate::metrics`]).
    pub metrics: crate::metrics::Metrics,
    /// The operator console's sessions on this instance ([`crate::console::session`]).
    pub console: crate::console::session::Sessions,
}

impl AppState {
    /// Tells the webhook worker that new events may be waiting (they are in the database
    /// already; this only saves the worker's poll delay).
    pub fn wake_webhooks(&self) {
        self.webhook_wake.notify_one();
    }
}

//! Prometheus metrics (`prometheus-client`): one registry per instance (`AppState::metrics`), served by
//! `GET /metrics` to operator keys on the main listener and without a key on
//! `FILING_METRICS_LISTEN` (docs/operations.md, "Metrics"; docs/adr/0023-metrics-and-health.md).
//!
//! Every label takes values from a short fixed set (route templates, statuses, kinds,
//! environments, outcomes, pool names): no label names a provider, a company, a case or a raw
//! path, so one provider's figures cannot be told from another's and the number of series
//! stays bounded whatever the traffic.
//!
//! Counters are counted where things happen (requests, creates, delivery attempts); gauges are
//! sampled when scraped (pools, upload slots, memory), and those a statement reads at most
//! every [`CASE_COUNTS_EVERY`] (cases by status) or [`OUTBOX_EVERY`] (the outbox), whatever the
//! number of scrapers.

use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use domain::case::CaseKind;
use domain::case_state::CaseStatus;
use domain::company::Environment;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

/// How long the cases by status are served before a scrape counts them again: one `GROUP BY`
/// per case table over its `(status, environment)` index, 0.15 to 0.3 s for a million cases
/// (ADR 0023), so at most 0.5 % of a core per instance.
pub const CASE_COUNTS_EVERY: Duration = Duration::from_secs(60);

/// How long the outbox's backlog is served before a scrape reads it again (its cost follows
/// the messages waiting, not the history).
pub const OUTBOX_EVERY: Duration = Duration::from_secs(15);

/// The upper bounds of the request latency buckets, in seconds.
const LATENCY_BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// The label of requests no route matched.
pub const UNMATCHED: &str = "unmatched";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpLabels {
    method: &'static str,
    /// The route template (`/v1/trade-registration/{trade_registration_id}`), or
    /// [`UNMATCHED`].
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CaseLabels {
    kind: &'static str,
    environment: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CaseStatusLabels {
    kind: &'static str,
    environment: &'static str,
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ByLabels {
    by: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CircuitLabels {
    /// `open`, `half_open`.
    state: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TransitionLabels {
    /// `open`, `closed`.
    to: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PoolLabels {
    pool: &'static str,
    state: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PoolNameLabels {
    pool: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VersionLabels {
    version: &'static str,
}

type FloatGauge = Gauge<f64, AtomicU64>;

/// When each group of database gauges was last read.
#[derive(Default)]
struct Sampled {
    cases: Option<Instant>,
    outbox: Option<Instant>,
}

/// Whether a reading taken `at` is older than `every` (or there is none).
fn stale(at: Option<Instant>, every: Duration) -> bool {
    at.is_none_or(|at| at.elapsed() >= every)
}

/// The metrics of one instance.
pub struct Metrics {
    registry: Registry,
    http: Family<HttpLabels, Histogram>,
    cases_created: Family<CaseLabels, Counter>,
    cases: Family<CaseStatusLabels, Gauge>,
    webhook_deliveries: Family<OutcomeLabels, Counter>,
    outbox_pending: Gauge,
    outbox_oldest_age: FloatGauge,
    webhook_circuits: Family<CircuitLabels, Gauge>,
    webhook_held: Gauge,
    webhook_circuit_transitions: Family<TransitionLabels, Counter>,
    webhook_in_flight: Gauge,
    db_connections: Family<PoolLabels, Gauge>,
    db_connections_max: Family<PoolNameLabels, Gauge>,
    upload_slots_in_use: Gauge,
    upload_slots_max: Gauge,
    upload_providers: Gauge,
    rate_limited: Family<ByLabels, Counter>,
    storage_refused: Family<ByLabels, Counter>,
    pruned: Family<KindLabels, Counter>,
    instances_live: Gauge,
    resident_memory: Gauge,
    virtual_memory: Gauge,
    /// When the database gauges were last read; held while they are read, so scrapes that
    /// come together read them once.
    sampled: tokio::sync::Mutex<Sampled>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let http = Family::<HttpLabels, Histogram>::new_with_constructor(
            (|| Histogram::new(LATENCY_BUCKETS)) as fn() -> Histogram,
        );
        let mut m = Self {
            http,
            cases_created: Family::default(),
            cases: Family::default(),
            webhook_deliveries: Family::default(),
            outbox_pending: Gauge::default(),
            outbox_oldest_age: FloatGauge::default(),
            webhook_circuits: Family::default(),
            webhook_held: Gauge::default(),
            webhook_circuit_transitions: Family::default(),
            webhook_in_flight: Gauge::default(),
            db_connections: Family::default(),
            db_connections_max: Family::default(),
            upload_slots_in_use: Gauge::default(),
            upload_slots_max: Gauge::default(),
            upload_providers: Gauge::default(),
            rate_limited: Family::default(),
            storage_refused: Family::default(),
            pruned: Family::default(),
            instances_live: Gauge::default(),
            resident_memory: Gauge::default(),
            virtual_memory: Gauge::default(),
            sampled: tokio::sync::Mutex::default(),
            registry: Registry::default(),
        };
        let build = Family::<VersionLabels, Gauge>::default();
        build
            .get_or_create(&VersionLabels {
                version: env!("CARGO_PKG_VERSION"),
            })
            .set(1);
        m.registry.register(
            "filing_build_info",
            "The version of the running binary (always 1)",
            build,
        );
        m.registry.register_with_unit(
            "filing_http_request_duration",
            "Time from a request's arrival to its response's head, by method, route template \
             and status; its _count is the number of requests",
            Unit::Seconds,
            m.http.clone(),
        );
        m.registry.register(
            "filing_cases_created",
            "Cases created on this instance, by kind and environment",
            m.cases_created.clone(),
        );
        m.registry.register(
            "filing_cases",
            "Cases in the database by kind, environment and status (counted at most every 60 s)",
            m.cases.clone(),
        );
        m.registry.register(
            "filing_webhook_deliveries",
            "Webhook delivery attempts made by this instance, by outcome (delivered, retrying: \
             failed and tried again later, failed: failed and given up)",
            m.webhook_deliveries.clone(),
        );
        m.registry.register(
            "filing_webhook_outbox_pending",
            "Webhook messages waiting for delivery, all endpoints (read at most every 15 s)",
            m.outbox_pending.clone(),
        );
        m.registry.register_with_unit(
            "filing_webhook_outbox_oldest_age",
            "Age of the oldest webhook message waiting for delivery; 0 when none waits",
            Unit::Seconds,
            m.outbox_oldest_age.clone(),
        );
        m.registry.register(
            "filing_webhook_circuits",
            "Webhook endpoints whose circuit breaker is open (no attempts) or half open (one \
             attempt at a time), all instances (read with the outbox)",
            m.webhook_circuits.clone(),
        );
        m.registry.register(
            "filing_webhook_messages_held",
            "Pending webhook messages of endpoints whose circuit is open: held back until its \
             cool-down ends (read with the outbox)",
            m.webhook_held.clone(),
        );
        m.registry.register(
            "filing_webhook_circuit_transitions",
            "Webhook endpoint circuits this instance's attempts opened (failures in a row, or \
             a failed half-open attempt) and closed (a delivery while half open), by `to`",
            m.webhook_circuit_transitions.clone(),
        );
        m.registry.register(
            "filing_webhook_attempts_in_flight",
            "Webhook delivery attempts this instance is making now (FILING_WEBHOOK_MAX_IN_FLIGHT)",
            m.webhook_in_flight.clone(),
        );
        m.registry.register(
            "filing_db_connections",
            "Database connections by pool and state (in_use, idle)",
            m.db_connections.clone(),
        );
        m.registry.register(
            "filing_db_connections_max",
            "The most connections each pool opens",
            m.db_connections_max.clone(),
        );
        m.registry.register(
            "filing_upload_slots_in_use",
            "Uploads (multipart requests) being served (FILING_MAX_CONCURRENT_UPLOADS)",
            m.upload_slots_in_use.clone(),
        );
        m.registry.register(
            "filing_upload_slots_max",
            "Uploads served at once at most (FILING_MAX_CONCURRENT_UPLOADS)",
            m.upload_slots_max.clone(),
        );
        m.registry.register(
            "filing_upload_providers",
            "Providers holding upload slots now (the slots are shared among them)",
            m.upload_providers.clone(),
        );
        m.registry.register(
            "filing_rate_limited",
            "Requests refused 429 by a rate limit, by bucket (company: a company's or \
             operator's tokens; address: requests without a valid key and console sign-ins of \
             one client address; reads: a provider's reads beyond its cap waited too long)",
            m.rate_limited.clone(),
        );
        m.registry.register(
            "filing_storage_refused",
            "Uploads refused before anything was written, by cause (quota: the provider's \
             storage quota; disk: the free-disk watermark)",
            m.storage_refused.clone(),
        );
        m.registry.register(
            "filing_pruned_rows",
            "Rows the pruning job removed on this instance, by kind (events, webhook_messages, \
             idempotency_keys, console_sessions)",
            m.pruned.clone(),
        );
        m.registry.register(
            "filing_instances_live",
            "Instances alive on this database as this one last counted them (the per-tenant \
             limits are divided by it)",
            m.instances_live.clone(),
        );
        m.registry.register_with_unit(
            "process_resident_memory",
            "Resident memory of the process",
            Unit::Bytes,
            m.resident_memory.clone(),
        );
        m.registry.register_with_unit(
            "process_virtual_memory",
            "Virtual memory of the process",
            Unit::Bytes,
            m.virtual_memory.clone(),
        );
        m
    }

    /// One request answered.
    pub fn request(&self, method: &axum::http::Method, route: String, status: u16, took: Duration) {
        self.http
            .get_or_create(&HttpLabels {
                method: method_label(method),
                route,
                status,
            })
            .observe(took.as_secs_f64());
    }

    /// A case created and committed.
    /// One request refused by the rate limit of `by` (`company` or `address`).
    pub fn rate_limited(&self, by: &'static str) {
        self.rate_limited.get_or_create(&ByLabels { by }).inc();
    }

    /// What one pruning run removed.
    pub fn pruned(&self, p: &store::Pruned) {
        for (kind, n) in [
            ("events", p.events),
            ("webhook_messages", p.webhook_messages),
            ("idempotency_keys", p.idempotency_keys),
            ("console_sessions", p.console_sessions),
        ] {
            self.pruned.get_or_create(&KindLabels { kind }).inc_by(n);
        }
    }

    /// One upload refused for its storage (`quota` or `disk`).
    pub fn storage_refused(&self, by: &'static str) {
        self.storage_refused.get_or_create(&ByLabels { by }).inc();
    }

    pub fn case_created(&self, kind: CaseKind, environment: Environment) {
        self.cases_created
            .get_or_create(&CaseLabels {
                kind: kind.as_str(),
                environment: environment.as_str(),
            })
            .inc();
    }

    /// A webhook delivery attempt made, with its outcome (`delivered`, `retrying`, `failed`).
    pub fn webhook_attempt(&self, outcome: store::AttemptOutcome) {
        self.webhook_deliveries
            .get_or_create(&OutcomeLabels {
                outcome: outcome.as_str(),
            })
            .inc();
    }

    /// An endpoint's circuit opened (`Open`) or closed (`Closed`) by an attempt of this
    /// instance.
    pub fn webhook_circuit(&self, to: store::CircuitState) {
        self.webhook_circuit_transitions
            .get_or_create(&TransitionLabels { to: to.as_str() })
            .inc();
    }

    /// The attempts this instance's worker is making now.
    pub fn webhook_in_flight(&self, n: usize) {
        self.webhook_in_flight.set(count(n));
    }

    /// The metrics in the OpenMetrics text format, the gauges sampled first.
    pub async fn render(&self, from: Sources<'_>) -> String {
        self.sample_database(&from).await;
        self.sample_process(&from);
        let mut text = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::error!(error = %e, "cannot encode the metrics");
        }
        text
    }

    /// Pools, upload slots and memory: no I/O beyond reading the process's own figures.
    fn sample_process(&self, state: &Sources<'_>) {
        for pool in state.repo.pool_use() {
            let set = |state: &'static str, n: u32| {
                self.db_connections
                    .get_or_create(&PoolLabels {
                        pool: pool.pool,
                        state,
                    })
                    .set(i64::from(n));
            };
            set("in_use", pool.in_use);
            set("idle", pool.idle);
            self.db_connections_max
                .get_or_create(&PoolNameLabels { pool: pool.pool })
                .set(i64::from(pool.max));
        }
        let (in_use, providers) = state.uploads.in_use();
        self.upload_slots_max.set(count(state.uploads.total()));
        self.upload_slots_in_use.set(count(in_use));
        self.upload_providers.set(count(providers));
        self.instances_live.set(count(state.instances.live()));
        if let Some(memory) = memory_stats::memory_stats() {
            self.resident_memory.set(count(memory.physical_mem));
            self.virtual_memory.set(count(memory.virtual_mem));
        }
    }

    /// Cases by status and the outbox, each read again when older than its interval. A
    /// failed read keeps the last figures (the scrape still answers while the database is
    /// away) and is logged; each read is bounded by `FILING_DB_TIMEOUT_SECS`.
    async fn sample_database(&self, state: &Sources<'_>) {
        let mut sampled = self.sampled.lock().await;
        if stale(sampled.cases, CASE_COUNTS_EVERY)
            && let Some(counts) =
                bounded(state, "counting the cases", state.repo.case_counts()).await
        {
            sampled.cases = Some(Instant::now());
            self.set_case_counts(&counts);
        }
        if stale(sampled.outbox, OUTBOX_EVERY)
            && let Some(outbox) = bounded(
                state,
                "reading the webhook outbox",
                state.repo.outbox_backlog(),
            )
            .await
        {
            sampled.outbox = Some(Instant::now());
            self.outbox_pending.set(outbox.pending);
            let age = outbox.oldest_created_at.map_or(0.0, |at| {
                (time::OffsetDateTime::now_utc() - at)
                    .as_seconds_f64()
                    .max(0.0)
            });
            self.outbox_oldest_age.set(age);
            for (state, n) in [
                (store::CircuitState::Open, outbox.circuits_open),
                (store::CircuitState::HalfOpen, outbox.circuits_half_open),
            ] {
                self.webhook_circuits
                    .get_or_create(&CircuitLabels {
                        state: state.as_str(),
                    })
                    .set(n);
            }
            self.webhook_held.set(outbox.held);
        }
    }

    /// Every status of every kind's lifecycle ([`CaseStatus::all`]) in both environments, so
    /// that a status that empties shows 0 rather than vanishing.
    fn set_case_counts(&self, counts: &[store::observe::CaseCount]) {
        for status in CaseStatus::all() {
            for environment in [Environment::Sandbox, Environment::Production] {
                let n = counts
                    .iter()
                    .find(|c| c.environment == environment && c.status == status)
                    .map_or(0, |c| c.count);
                self.cases
                    .get_or_create(&CaseStatusLabels {
                        kind: status.kind().as_str(),
                        environment: environment.as_str(),
                        status: status.as_str(),
                    })
                    .set(n);
            }
        }
    }
}

/// What the gauges are sampled from at a scrape: the parts of the application's state they
/// read, named here so that the metrics need not know the state that holds them.
pub struct Sources<'a> {
    pub repo: &'a dyn store::Repository,
    pub uploads: &'a crate::limits::buckets::UploadSlots,
    pub instances: &'a crate::instances::Instances,
    /// `FILING_DB_TIMEOUT_SECS`: the bound of each database read.
    pub db_timeout: Duration,
}

/// `read` within `FILING_DB_TIMEOUT_SECS`; a failure is logged as `what` and gives `None`.
async fn bounded<T>(
    state: &Sources<'_>,
    what: &str,
    read: impl std::future::Future<Output = store::Result<T>>,
) -> Option<T> {
    let bound = state.db_timeout;
    match tokio::time::timeout(bound, read).await {
        Ok(Ok(done)) => Some(done),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "metrics: {what} failed");
            None
        }
        Err(_) => {
            tracing::warn!(?bound, "metrics: {what} took too long");
            None
        }
    }
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The method as a label: the standard ones, every other as `other`.
fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// The content type of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

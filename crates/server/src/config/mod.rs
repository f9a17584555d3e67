//! Configuration: `FILING_*` environment variables and `DATABASE_URL`, each also a command-line
//! flag (`args`), read into typed values by their value parsers (`parse`) with a message
//! naming the variable that is wrong; what depends on two settings is checked once after that
//! ([`validate`]), which reports every problem.

mod args;
mod parse;
#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args as _, FromArgMatches};

pub use args::{CommonArgs, LogArgs, OperatorArgs, ServeArgs, StorageArgs};
pub use parse::S3Location;

/// A configuration value that is wrong: the variable (and flag) it came from, the value
/// (hidden for a secret), and what is expected.
#[derive(Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub var: String,
    pub flag: Option<String>,
    pub value: String,
    pub problem: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={:?}", self.var, self.value)?;
        if let Some(flag) = &self.flag {
            write!(f, " ({flag})")?;
        }
        write!(f, ": {}", self.problem)
    }
}

impl ConfigError {
    /// A problem with the value of `arg`.
    fn of(arg: &clap::Arg, value: &str, problem: String) -> Self {
        let flag = arg.get_long().map(|l| format!("--{l}"));
        Self {
            var: arg
                .get_env()
                .map(|e| e.to_string_lossy().into_owned())
                .or_else(|| flag.clone())
                .unwrap_or_else(|| arg.get_id().to_string()),
            flag,
            value: if arg.is_hide_env_values_set() {
                "(hidden)".into()
            } else {
                redact_url(value)
            },
            problem,
        }
    }
}

/// Every problem of a configuration, one a line.
#[derive(Debug, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl std::fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "configuration error: {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

impl ConfigErrors {
    fn check(problems: Vec<ConfigError>) -> Result<(), Self> {
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Self(problems))
        }
    }
}

/// The clap definition of every setting (those of [`CommonArgs`], [`ServeArgs`] and
/// [`LogArgs`]).
fn settings_command() -> clap::Command {
    let command = CommonArgs::augment_args(clap::Command::new("filing"));
    LogArgs::augment_args(ServeArgs::augment_args(command))
}

/// The clap definition of the setting of field `id`.
fn setting(id: &str) -> clap::Arg {
    settings_command()
        .get_arguments()
        .find(|a| a.get_id() == id)
        .cloned()
        .unwrap_or_else(|| panic!("no setting {id}"))
}

/// The variable of the setting of field `id`.
fn var(id: &str) -> String {
    setting(id)
        .get_env()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Arguments as their defaults make them, whatever the environment holds.
fn defaults<A: clap::Args + FromArgMatches>() -> A {
    let command = A::augment_args(clap::Command::new("defaults")).mut_args(|a| a.env(None));
    let parsed = command
        .try_get_matches_from(["defaults"])
        .and_then(|m| A::from_arg_matches(&m));
    parsed.unwrap_or_else(|e| panic!("a default does not parse: {e}"))
}

impl Default for StorageArgs {
    fn default() -> Self {
        defaults()
    }
}

impl Default for OperatorArgs {
    fn default() -> Self {
        defaults()
    }
}

impl Default for LogArgs {
    fn default() -> Self {
        defaults()
    }
}

impl Default for ServeArgs {
    fn default() -> Self {
        defaults()
    }
}

/// The settings of `A` that the environment and the defaults give (no flags): those of a
/// server that a command must agree with, e.g. the keys of `filing webhooks reseal`.
pub fn from_env<A: clap::Args + FromArgMatches>() -> Result<A, clap::Error> {
    A::augment_args(clap::Command::new("filing"))
        .try_get_matches_from(["filing"])
        .and_then(|m| A::from_arg_matches(&m))
}

/// The checks that take more than one setting, each problem once.
pub fn validate(common: &CommonArgs, serve: &ServeArgs) -> Vec<ConfigError> {
    let mut problems = common.problems();
    if let Some(per_provider) = serve.max_uploads_per_provider
        && per_provider > serve.max_concurrent_uploads
    {
        problems.push(ConfigError::of(
            &setting("max_uploads_per_provider"),
            &per_provider.to_string(),
            format!(
                "expected at most {} ({})",
                var("max_concurrent_uploads"),
                serve.max_concurrent_uploads
            ),
        ));
    }
    if let Some(header) = &serve.client_address_header
        && axum::http::HeaderName::from_bytes(header.trim().as_bytes()).is_err()
    {
        problems.push(ConfigError::of(
            &setting("client_address_header"),
            header,
            "expected an HTTP header name, e.g. X-Real-IP".to_string(),
        ));
    }
    if let Some(reserve) = serve.upload_reserve
        && reserve >= serve.max_concurrent_uploads
    {
        problems.push(ConfigError::of(
            &setting("upload_reserve"),
            &reserve.to_string(),
            format!(
                "expected less than {} ({})",
                var("max_concurrent_uploads"),
                serve.max_concurrent_uploads
            ),
        ));
    }
    if let Some(metrics) = serve.metrics_listen
        && metrics == serve.listen
        && metrics.port() != 0
    {
        problems.push(ConfigError::of(
            &setting("metrics_listen"),
            &metrics.to_string(),
            format!(
                "expected another address than {} (the API listens there)",
                var("listen")
            ),
        ));
    }
    problems
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// Where the database and documents are, validated.
#[derive(Debug, Clone)]
pub struct StorageConfig {
    pub data_dir: PathBuf,
    pub database_url: String,
    pub documents_dir: PathBuf,
    /// Set when documents live in an S3 bucket; `documents_dir` is then unused.
    pub documents_s3: Option<store::documents::S3Settings>,
}

/// Validated settings of the whole service.
#[derive(Debug, Clone)]
pub struct Config {
    pub storage: StorageConfig,
    /// The attorney of the powers of attorney; `None` until `FILING_OPERATOR_NAME` and
    /// `FILING_OPERATOR_ADDRESS` are set.
    pub operator: Option<forms::Operator>,
    pub listen: SocketAddr,
    /// Where `GET /metrics` is served without a key, beside the main listener.
    pub metrics_listen: Option<SocketAddr>,
    pub public_url: String,
    pub max_body_bytes: usize,
    pub max_upload_bytes: usize,
    pub request_timeout: Duration,
    pub shutdown_timeout: Duration,
    pub signing_secret: Option<String>,
    pub elster: ElsterConfig,
    /// Trade registration prices in euro cents: (self, assisted).
    pub price_self_cents: i64,
    pub price_assisted_cents: i64,
    pub webhooks: WebhookConfig,
    /// How long a request waits for the database before 503.
    pub db_timeout: Duration,
    /// PostgreSQL: connections of the writing pool.
    pub db_pool_size: u32,
    /// How long the start waits for an unreachable database or bucket.
    pub db_startup_wait: Duration,
    /// How long a key record is trusted without reading it again (zero: never).
    pub key_cache: Duration,
    /// How long a trade office directory entry is used without reading it again (zero: never).
    pub directory_cache: Duration,
    pub header_read_timeout: Duration,
    pub body_read_timeout: Duration,
    /// Bytes per second that earn a body one more second (0: none).
    pub body_min_rate: u64,
    pub max_concurrent_uploads: usize,
    /// Upload slots one provider may hold at once (at most `max_concurrent_uploads`).
    pub max_uploads_per_provider: usize,
    /// Upload slots that only a provider holding none may take (`limits::UploadSlots`).
    pub upload_reserve: usize,
    /// Database-reading requests (`GET`) one provider may have in flight at once.
    pub max_reads_per_company: usize,
    /// How long the event log and finished webhook messages are kept, and how often they are
    /// pruned.
    pub retention: Retention,
    /// Bytes of documents one provider may store (`None`: no quota).
    pub storage_quota: Option<u64>,
    /// Free bytes of the data folder's disk below which uploads are refused.
    pub min_free_disk: u64,
    /// `None`: no rate limiting.
    pub rate_limit: Option<RateLimit>,
    /// Requests without a valid key and console sign-ins per client address, per minute
    /// (`per_second` read as per minute); `None`: not limited.
    pub address_rate_limit: Option<RateLimit>,
    /// Where the client's address is read from behind a trusted proxy (`None`: the connection).
    pub client_address_header: Option<axum::http::HeaderName>,
    /// Unrevoked keys one company may hold (keys issued over HTTP beyond it are 409).
    pub max_keys_per_company: usize,
}

/// A token bucket per company (all its keys) or operator: `burst` requests at once, refilled
/// at `per_second`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub per_second: NonZeroU32,
    pub burst: NonZeroU32,
}

/// What the pruning job keeps (issue 53.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub events: time::Duration,
    pub webhook_messages: time::Duration,
    pub prune_every: Duration,
}

/// How webhooks are delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookConfig {
    /// Pauses between attempts; its length + 1 is the number of attempts.
    pub retry_schedule: Vec<Duration>,
    pub allow_private_targets: bool,
    pub timeout: Duration,
    /// Whether this instance runs the delivery worker.
    pub worker: bool,
    /// How often an idle worker looks for due messages (events of this instance wake it at
    /// once; this bounds the delay for retries and for events written by other instances).
    pub poll_interval: Duration,
    /// Seal endpoint secrets (and stored idempotent answers) at rest; without a current key
    /// they are stored as they are.
    pub sealing: crate::sealing::SealingKeys,
    /// How target host names are resolved (the system resolver; a fixed table in tests).
    pub lookup: crate::dns::Lookup,
    /// How many attempts are in flight at once (docs/adr/0029-fair-webhook-delivery.md).
    pub limits: DeliveryLimits,
    /// When an endpoint's circuit opens, and for how long.
    pub breaker: Breaker,
}

/// Attempts in flight at most: this instance's worker, and per provider and per endpoint for
/// all instances together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryLimits {
    pub in_flight: usize,
    pub per_provider: usize,
    pub per_endpoint: usize,
}

/// An endpoint's circuit opens after `failures` failed attempts in a row, for `cooldown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Breaker {
    pub failures: u32,
    pub cooldown: Duration,
}

/// The sender fields of ELSTER documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElsterConfig {
    /// The operator's own manufacturer id; `None` until ELSTER assigned one.
    pub hersteller_id: Option<HerstellerId>,
    pub daten_lieferant: String,
}

impl ElsterConfig {
    /// The `HerstellerID` of a document: the operator's own; for a sandbox document without
    /// one, ELSTER's test id (beside the `Testmerker`); for production without one, `None`: no
    /// production document is written (docs/elster.md, "Manufacturer id").
    pub fn hersteller_id_for(&self, sandbox: bool) -> Option<&str> {
        match &self.hersteller_id {
            Some(id) => Some(id.as_str()),
            None if sandbox => Some(elster::TEST_HERSTELLER_ID),
            None => None,
        }
    }
}

/// A manufacturer id (`HerstellerID`) ELSTER assigned: 5 digits, and never ELSTER's test id
/// 74931, which belongs to documents with a `Testmerker` only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HerstellerId(String);

impl HerstellerId {
    /// The value parser of the setting (its error names the setting).
    pub fn parse(value: &str) -> Result<Self, String> {
        let v = value.trim();
        if v.len() != 5 || !v.bytes().all(|b| b.is_ascii_digit()) {
            return Err("must be the 5-digit manufacturer id ELSTER assigned".into());
        }
        if v == elster::TEST_HERSTELLER_ID {
            return Err(
                "74931 is ELSTER's test manufacturer id, which a production document must never \
                 carry (sandbox documents use it without this setting); set the id ELSTER \
                 assigned you, or leave it unset"
                    .into(),
            );
        }
        Ok(Self(v.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Where the documents of an S3 bucket are, how long one request to it may take.
fn s3_settings(at: &parse::S3Location, timeout: Duration) -> store::documents::S3Settings {
    store::documents::S3Settings {
        bucket: at.bucket.clone(),
        prefix: at.prefix.clone(),
        endpoint: None,
        region: None,
        credentials: None,
        allow_http: false,
        timeout,
    }
}

impl CommonArgs {
    /// The attorney named in powers of attorney, once configured.
    pub fn operator(&self) -> Option<forms::Operator> {
        self.operator.operator()
    }

    fn problems(&self) -> Vec<ConfigError> {
        let mut problems = self.storage.problems();
        problems.extend(self.operator.problems());
        problems
    }

    pub fn storage(&self) -> Result<StorageConfig, ConfigErrors> {
        self.storage.storage()
    }
}

impl OperatorArgs {
    /// The attorney named in powers of attorney: `None` unless both name and address are set
    /// (one without the other is a configuration error, [`OperatorArgs::problems`]).
    pub fn operator(&self) -> Option<forms::Operator> {
        Some(forms::Operator {
            name: self.operator_name.clone()?,
            address: self.operator_address.clone()?,
        })
    }

    /// One of name and address set without the other.
    fn problems(&self) -> Vec<ConfigError> {
        match (&self.operator_name, &self.operator_address) {
            (Some(name), None) => vec![ConfigError::of(
                &setting("operator_name"),
                name,
                "set FILING_OPERATOR_ADDRESS too: a power of attorney names the operator with \
                 its address"
                    .into(),
            )],
            (None, Some(address)) => vec![ConfigError::of(
                &setting("operator_address"),
                address,
                "set FILING_OPERATOR_NAME too: a power of attorney names the operator with its \
                 address"
                    .into(),
            )],
            _ => Vec::new(),
        }
    }
}

impl StorageArgs {
    fn problems(&self) -> Vec<ConfigError> {
        match &self.documents_url {
            Some(url) if self.documents_dir.is_some() => {
                vec![ConfigError::of(
                    &setting("documents_url"),
                    &url.to_string(),
                    format!(
                        "set either {} or {}, not both",
                        var("documents_dir"),
                        var("documents_url")
                    ),
                )]
            }
            _ => Vec::new(),
        }
    }

    pub fn storage(&self) -> Result<StorageConfig, ConfigErrors> {
        ConfigErrors::check(self.problems())?;
        Ok(StorageConfig {
            data_dir: self.data_dir.clone(),
            database_url: self.database_url.clone().unwrap_or_else(|| {
                format!(
                    "sqlite://{}",
                    self.data_dir.join("filing.db").to_string_lossy()
                )
            }),
            documents_dir: self
                .documents_dir
                .clone()
                .unwrap_or_else(|| self.data_dir.join("documents")),
            documents_s3: self
                .documents_url
                .as_ref()
                .map(|at| s3_settings(at, self.documents_timeout_secs)),
        })
    }
}

impl ServeArgs {
    /// `FILING_WEBHOOK_SECRETS_KEY` and `FILING_WEBHOOK_SECRETS_OLD_KEYS`.
    pub fn sealing_keys(&self) -> crate::sealing::SealingKeys {
        crate::sealing::SealingKeys {
            current: self.webhook_secrets_key.clone(),
            old: self
                .webhook_secrets_old_keys
                .iter()
                .flatten()
                .cloned()
                .collect(),
        }
    }
}

/// The file of an SQLite database URL (`sqlite://data/filing.db`, `sqlite:x.db?mode=rwc`); none
/// for PostgreSQL or an in-memory database.
pub fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next()?;
    (!path.is_empty() && path != ":memory:").then(|| path.into())
}

/// The database a command's settings name, as it prints it: an SQLite file by its absolute
/// path, a PostgreSQL database without password or parameters.
pub fn database_label(url: &str) -> String {
    match sqlite_file(url) {
        Some(file) => format!(
            "sqlite://{}",
            std::path::absolute(&file).unwrap_or(file).display()
        ),
        None => redact_url(url.split('?').next().unwrap_or(url)),
    }
}

/// Hides a password in a database URL before it is printed.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = &url[scheme_end + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{}:***{}", &url[..scheme_end + 3], user, &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

impl Config {
    /// An operator's upload of an issued trade licence: one PDF and the multipart framing.
    pub fn max_licence_bytes(&self) -> usize {
        self.max_upload_bytes.saturating_add(64 * 1024)
    }

    /// The largest body any route takes (a trade registration with a signed PDF per owner).
    /// The largest body of a corporation's tax create: the payload and its attachments (each
    /// at most the smaller of 10 MB and `FILING_MAX_UPLOAD_BYTES`), with room for the
    /// multipart framing.
    pub fn max_tax_request_bytes(&self) -> usize {
        let attachment = self.max_upload_bytes.min(domain::tax::MAX_ATTACHMENT_BYTES);
        self.max_body_bytes
            .saturating_add(attachment.saturating_mul(domain::tax::Attachments::FIELDS.len()))
            .saturating_add(64 * 1024)
    }

    pub fn max_request_bytes(&self) -> usize {
        self.max_body_bytes
            .saturating_add(
                self.max_upload_bytes
                    .saturating_mul(domain::trade_request::MAX_OWNERS),
            )
            .saturating_add(64 * 1024)
    }

    pub fn from_args(common: &CommonArgs, serve: &ServeArgs) -> Result<Self, ConfigErrors> {
        ConfigErrors::check(validate(common, serve))?;
        let max_concurrent_uploads = serve.max_concurrent_uploads;
        let upload_reserve = serve
            .upload_reserve
            .unwrap_or(0)
            .min(max_concurrent_uploads - 1);
        Ok(Config {
            storage: common.storage()?,
            operator: common.operator(),
            listen: serve.listen,
            metrics_listen: serve.metrics_listen,
            public_url: match &serve.public_url {
                None => format!("http://{}", serve.listen),
                Some(url) => url.clone(),
            },
            max_body_bytes: serve.max_body_bytes,
            max_upload_bytes: serve.max_upload_bytes,
            request_timeout: serve.request_timeout_secs,
            shutdown_timeout: serve.shutdown_timeout_secs,
            signing_secret: serve.signing_secret.clone(),
            elster: ElsterConfig {
                hersteller_id: serve.elster_hersteller_id.clone(),
                daten_lieferant: serve.elster_daten_lieferant.clone(),
            },
            price_self_cents: serve.price_self,
            price_assisted_cents: serve.price_assisted,
            webhooks: WebhookConfig {
                retry_schedule: serve.webhook_retry_schedule.to_vec(),
                allow_private_targets: serve.webhook_allow_private_targets,
                timeout: serve.webhook_timeout_secs,
                worker: serve.webhook_worker,
                poll_interval: Duration::from_secs(1),
                sealing: serve.sealing_keys(),
                lookup: Default::default(),
                limits: DeliveryLimits {
                    in_flight: serve.webhook_max_in_flight as usize,
                    per_provider: serve.webhook_max_in_flight_per_provider as usize,
                    per_endpoint: serve.webhook_max_in_flight_per_endpoint as usize,
                },
                breaker: Breaker {
                    failures: serve.webhook_breaker_failures,
                    cooldown: serve.webhook_breaker_cooldown_secs,
                },
            },
            db_timeout: serve.db_timeout_secs,
            db_pool_size: serve.db_pool_size,
            db_startup_wait: serve.db_startup_wait_secs,
            key_cache: serve.key_cache_secs,
            directory_cache: serve.directory_cache_secs,
            header_read_timeout: serve.header_read_timeout_secs,
            body_read_timeout: serve.body_read_timeout_secs,
            body_min_rate: serve.body_min_bytes_per_sec,
            max_concurrent_uploads,
            max_uploads_per_provider: serve
                .max_uploads_per_provider
                .unwrap_or(max_concurrent_uploads - upload_reserve)
                .max(1),
            upload_reserve,
            max_reads_per_company: serve.max_concurrent_reads_per_company,
            retention: Retention {
                events: time::Duration::days(i64::from(serve.retention_days)),
                webhook_messages: time::Duration::days(i64::from(serve.retention_days)),
                prune_every: serve.prune_interval_secs,
            },
            storage_quota: (serve.storage_quota_bytes > 0).then_some(serve.storage_quota_bytes),
            min_free_disk: serve.min_free_disk_bytes,
            rate_limit: NonZeroU32::new(serve.rate_limit_per_second).map(|per_second| RateLimit {
                per_second,
                burst: serve.rate_limit_burst.flatten().unwrap_or(
                    per_second.saturating_mul(NonZeroU32::new(4).unwrap_or(NonZeroU32::MIN)),
                ),
            }),
            address_rate_limit: NonZeroU32::new(serve.address_rate_limit_per_minute).map(
                |per_minute| RateLimit {
                    per_second: per_minute,
                    burst: per_minute,
                },
            ),
            client_address_header: serve
                .client_address_header
                .as_deref()
                .map(str::trim)
                .filter(|h| !h.is_empty())
                .and_then(|h| axum::http::HeaderName::from_bytes(h.as_bytes()).ok()),
            max_keys_per_company: serve.max_keys_per_company,
        })
    }
}

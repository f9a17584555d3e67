//! Configuration: `FILING_*` environment variables and `DATABASE_URL` (each also a command-line
//! flag), validated once at start with a message naming the variable that is wrong.

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

/// Settings shared by every subcommand (the database and the data folder).
#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// Folder for the SQLite database, documents and the link-signing secret (created when missing).
    #[arg(long, env = "FILING_DATA_DIR", default_value = "./data", global = true)]
    pub data_dir: PathBuf,

    /// Database: `sqlite://PATH` or `postgres://USER@HOST/DB`. Default: sqlite in the data folder.
    #[arg(long, env = "DATABASE_URL", global = true)]
    pub database_url: Option<String>,

    /// Where documents are stored: a local directory. Default: `<data dir>/documents`.
    #[arg(long, env = "FILING_DOCUMENTS_DIR", global = true)]
    pub documents_dir: Option<PathBuf>,

    /// Store documents in an S3 bucket instead of a directory: `s3://BUCKET[/PREFIX]`.
    /// Credentials, region and endpoint come from the AWS variables (`AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT`, `AWS_ALLOW_HTTP`).
    #[arg(long, env = "FILING_DOCUMENTS_URL", global = true)]
    pub documents_url: Option<String>,

    /// Bound on one request to the document bucket, retries included (seconds).
    #[arg(
        long,
        env = "FILING_DOCUMENTS_TIMEOUT_SECS",
        default_value = "30",
        global = true
    )]
    pub documents_timeout_secs: String,

    /// Log format: `text` or `json`.
    #[arg(long, env = "FILING_LOG_FORMAT", default_value = "text", global = true)]
    pub log_format: String,

    /// Log filter (tracing EnvFilter syntax), e.g. `info` or `filing=debug,sqlx=warn`.
    #[arg(long, env = "FILING_LOG", default_value = "info", global = true)]
    pub log: String,

    /// Legal name of the company running this service: the attorney named in every power of
    /// attorney.
    #[arg(
        long,
        env = "FILING_OPERATOR_NAME",
        default_value = DEFAULT_OPERATOR_NAME,
        global = true
    )]
    pub operator_name: String,

    /// Postal address of the operator on one line, printed in every power of attorney.
    #[arg(
        long,
        env = "FILING_OPERATOR_ADDRESS",
        default_value = DEFAULT_OPERATOR_ADDRESS,
        global = true
    )]
    pub operator_address: String,
}

/// Placeholder operator identity for development; production sets its own (a warning is logged
/// at start while the placeholder is in use).
pub const DEFAULT_OPERATOR_NAME: &str =
    "Registration Filing Service (Betreiber nicht konfiguriert)";
pub const DEFAULT_OPERATOR_ADDRESS: &str = "Anschrift nicht konfiguriert";

/// Settings of the HTTP server.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address and port to listen on.
    #[arg(long, env = "FILING_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,

    /// Base of the absolute links the service hands out (document downloads).
    /// Default: `http://<FILING_LISTEN>`.
    #[arg(long, env = "FILING_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Largest JSON request body in bytes.
    #[arg(long, env = "FILING_MAX_BODY_BYTES", default_value = "1048576")]
    pub max_body_bytes: String,

    /// Largest uploaded file (one multipart file part) in bytes.
    #[arg(long, env = "FILING_MAX_UPLOAD_BYTES", default_value = "52428800")]
    pub max_upload_bytes: String,

    /// Longest time one request may take, in seconds.
    #[arg(long, env = "FILING_REQUEST_TIMEOUT_SECS", default_value = "60")]
    pub request_timeout_secs: String,

    /// How long shutdown waits for in-flight requests, in seconds.
    #[arg(long, env = "FILING_SHUTDOWN_TIMEOUT_SECS", default_value = "30")]
    pub shutdown_timeout_secs: String,

    /// Price of a trade registration with the `self` package, in euros.
    #[arg(long, env = "FILING_PRICE_SELF", default_value = "49.00")]
    pub price_self: String,

    /// Price of a trade registration with the `assisted` package, in euros.
    #[arg(long, env = "FILING_PRICE_ASSISTED", default_value = "149.00")]
    pub price_assisted: String,

    /// ELSTER manufacturer id (HerstellerID, 5 digits) that ELSTER assigned the operator,
    /// written into every tax XML. Unset, production tax registrations are validated and
    /// stored without their XML, which is written once an id is set (sandbox XML carries
    /// ELSTER's test id 74931, which this setting refuses).
    #[arg(long, env = "FILING_ELSTER_HERSTELLER_ID", value_parser = HerstellerId::parse)]
    pub elster_hersteller_id: Option<HerstellerId>,

    /// ELSTER DatenLieferant: who delivers the data, written into every tax XML.
    #[arg(
        long,
        env = "FILING_ELSTER_DATENLIEFERANT",
        default_value = "Registration Filing Service"
    )]
    pub elster_daten_lieferant: String,

    /// Secret for signing document links (at least 32 characters). Default: generated once and
    /// kept in `<data dir>/signing-secret`. Set it to the same value on every instance when
    /// several share one database.
    #[arg(long, env = "FILING_SIGNING_SECRET", hide_env_values = true)]
    pub signing_secret: Option<String>,

    /// Pauses between webhook delivery attempts, comma-separated seconds. The default tries a
    /// message 8 times over about 27.6 hours: at once, then after 5 s, 5 min, 30 min, 2 h, 5 h,
    /// 10 h and 10 h.
    #[arg(
        long,
        env = "FILING_WEBHOOK_RETRY_SCHEDULE",
        default_value = "5,300,1800,7200,18000,36000,36000"
    )]
    pub webhook_retry_schedule: String,

    /// `true` lets webhook endpoints target private, loopback and link-local addresses
    /// (development and tests); production leaves it `false`.
    #[arg(
        long,
        env = "FILING_WEBHOOK_ALLOW_PRIVATE_TARGETS",
        default_value = "false"
    )]
    pub webhook_allow_private_targets: String,

    /// How long one webhook delivery may take, in seconds.
    #[arg(long, env = "FILING_WEBHOOK_TIMEOUT_SECS", default_value = "15")]
    pub webhook_timeout_secs: String,

    /// Seals webhook secrets in the database: base64 of 32 random bytes (`openssl rand -base64
    /// 32`). Without it secrets are stored as they are. Every instance needs the same value.
    #[arg(long, env = "FILING_WEBHOOK_SECRETS_KEY", hide_env_values = true)]
    pub webhook_secrets_key: Option<String>,

    /// Keys that sealed webhook secrets before `FILING_WEBHOOK_SECRETS_KEY` changed, comma
    /// separated: they only open. Keep them until `filing webhooks reseal` has run and stored
    /// idempotent answers (24 hours) have expired.
    #[arg(long, env = "FILING_WEBHOOK_SECRETS_OLD_KEYS", hide_env_values = true)]
    pub webhook_secrets_old_keys: Option<String>,

    /// `false` runs this instance without the webhook delivery worker (others deliver).
    #[arg(long, env = "FILING_WEBHOOK_WORKER", default_value = "true")]
    pub webhook_worker: String,

    /// Longest time a request waits for the database (a pooled connection, reconnecting, or
    /// with SQLite another writer's lock) before it is answered 503, in seconds.
    #[arg(long, env = "FILING_DB_TIMEOUT_SECS", default_value = "5")]
    pub db_timeout_secs: String,

    /// PostgreSQL: connections in the pool for writes (1 to 1000). About the database server's
    /// cores times two to four; more only queue inside the database.
    #[arg(long, env = "FILING_DB_POOL_SIZE", default_value = "8")]
    pub db_pool_size: String,

    /// How long `serve` keeps trying to reach the database, and an S3 bucket for documents, at
    /// start (they may come up after the service), in seconds; 0 gives up at the first failure.
    /// Only unreachability is waited out: a wrong password, a failing migration or a missing
    /// bucket ends the start at once.
    #[arg(long, env = "FILING_DB_STARTUP_WAIT_SECS", default_value = "60")]
    pub db_startup_wait_secs: String,

    /// How long an API key read from the database is trusted before it is read again, in
    /// seconds: a key revoked with `filing keys revoke` stops working on running instances
    /// within this time. 0 reads the key on every request.
    #[arg(long, env = "FILING_KEY_CACHE_SECS", default_value = "5")]
    pub key_cache_secs: String,

    /// How long a trade office directory entry read for a new case's GewA 1 is used without
    /// reading it again, in seconds: an operator's change reaches the forms of other running
    /// instances within this time (the instance that made it at once). 0 reads it every time.
    #[arg(long, env = "FILING_DIRECTORY_CACHE_SECS", default_value = "5")]
    pub directory_cache_secs: String,

    /// Longest time a client may take to send a request's headers, in seconds; also how long
    /// an idle keep-alive connection stays open. The connection is closed after it.
    #[arg(long, env = "FILING_HEADER_READ_TIMEOUT_SECS", default_value = "10")]
    pub header_read_timeout_secs: String,

    /// Time a client has to send a request body, in seconds, before the received bytes
    /// extend it (`FILING_BODY_MIN_BYTES_PER_SEC`); 408 after it.
    #[arg(long, env = "FILING_BODY_READ_TIMEOUT_SECS", default_value = "30")]
    pub body_read_timeout_secs: String,

    /// The slowest upload served: every this many bytes received give the body one more
    /// second; 0 makes `FILING_BODY_READ_TIMEOUT_SECS` a hard deadline.
    #[arg(long, env = "FILING_BODY_MIN_BYTES_PER_SEC", default_value = "65536")]
    pub body_min_bytes_per_sec: String,

    /// Multipart requests (uploads) served at the same time; one more is answered 503.
    #[arg(long, env = "FILING_MAX_CONCURRENT_UPLOADS", default_value = "16")]
    pub max_concurrent_uploads: String,

    /// Upload slots one provider (with its client companies) may hold at once; one more of
    /// its uploads is answered 429. Default: a quarter of `FILING_MAX_CONCURRENT_UPLOADS`.
    #[arg(long, env = "FILING_MAX_UPLOADS_PER_PROVIDER")]
    pub max_uploads_per_provider: Option<String>,

    /// Requests per second each company (all its API keys together; an operator with its
    /// keys) may make on average (a token bucket per company); 0 turns rate limiting off (the
    /// default, for development).
    #[arg(long, env = "FILING_RATE_LIMIT_PER_SECOND", default_value = "0")]
    pub rate_limit_per_second: String,

    /// Requests a company may make at once before the rate applies. Default: the rate.
    #[arg(long, env = "FILING_RATE_LIMIT_BURST")]
    pub rate_limit_burst: Option<String>,

    /// Unrevoked API keys one company (a provider, or each client company) may hold; one more
    /// issued over HTTP is answered 409 `API_KEY_LIMIT`.
    #[arg(long, env = "FILING_MAX_KEYS_PER_COMPANY", default_value = "100")]
    pub max_keys_per_company: String,
}

impl Default for ServeArgs {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            public_url: None,
            max_body_bytes: "1048576".into(),
            max_upload_bytes: "52428800".into(),
            request_timeout_secs: "60".into(),
            shutdown_timeout_secs: "30".into(),
            price_self: "49.00".into(),
            price_assisted: "149.00".into(),
            elster_hersteller_id: None,
            elster_daten_lieferant: "Registration Filing Service".into(),
            signing_secret: None,
            webhook_retry_schedule: "5,300,1800,7200,18000,36000,36000".into(),
            webhook_allow_private_targets: "false".into(),
            webhook_timeout_secs: "15".into(),
            webhook_secrets_key: None,
            webhook_secrets_old_keys: None,
            webhook_worker: "true".into(),
            db_timeout_secs: "5".into(),
            db_pool_size: "8".into(),
            db_startup_wait_secs: "60".into(),
            key_cache_secs: "5".into(),
            directory_cache_secs: "5".into(),
            header_read_timeout_secs: "10".into(),
            body_read_timeout_secs: "30".into(),
            body_min_bytes_per_sec: "65536".into(),
            max_concurrent_uploads: "16".into(),
            max_uploads_per_provider: None,
            rate_limit_per_second: "0".into(),
            rate_limit_burst: None,
            max_keys_per_company: "100".into(),
        }
    }
}

/// A configuration value that is wrong, named by its environment variable.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("configuration error: {var}={value:?}: {problem}")]
pub struct ConfigError {
    pub var: &'static str,
    pub value: String,
    pub problem: String,
}

fn bad(var: &'static str, value: &str, problem: impl Into<String>) -> ConfigError {
    ConfigError {
        var,
        value: value.to_string(),
        problem: problem.into(),
    }
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
    pub operator: forms::Operator,
    pub listen: SocketAddr,
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
    /// `None`: no rate limiting.
    pub rate_limit: Option<RateLimit>,
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
}

/// `FILING_WEBHOOK_SECRETS_KEY` and `FILING_WEBHOOK_SECRETS_OLD_KEYS`.
pub fn sealing_keys(serve: &ServeArgs) -> Result<crate::sealing::SealingKeys, ConfigError> {
    use crate::sealing::SealingKey;
    const HOW: &str = "expected base64 of exactly 32 bytes, e.g. from `openssl rand -base64 32`";
    let current = match &serve.webhook_secrets_key {
        None => None,
        Some(v) => Some(
            SealingKey::parse(v).ok_or_else(|| bad("FILING_WEBHOOK_SECRETS_KEY", "***", HOW))?,
        ),
    };
    let mut old = Vec::new();
    for (i, v) in serve
        .webhook_secrets_old_keys
        .iter()
        .flat_map(|v| v.split(','))
        .filter(|v| !v.trim().is_empty())
        .enumerate()
    {
        old.push(SealingKey::parse(v).ok_or_else(|| {
            bad(
                "FILING_WEBHOOK_SECRETS_OLD_KEYS",
                "***",
                format!("key {} of the list: {HOW}", i + 1),
            )
        })?);
    }
    Ok(crate::sealing::SealingKeys { current, old })
}

fn parse_bool(var: &'static str, value: &str) -> Result<bool, ConfigError> {
    match value.trim() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(bad(var, value, "expected true or false")),
    }
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
    /// The clap value parser of `FILING_ELSTER_HERSTELLER_ID`.
    pub fn parse(value: &str) -> Result<Self, String> {
        let v = value.trim();
        if v.len() != 5 || !v.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "FILING_ELSTER_HERSTELLER_ID must be the 5-digit manufacturer id ELSTER assigned, not {v:?}"
            ));
        }
        if v == elster::TEST_HERSTELLER_ID {
            return Err(
                "FILING_ELSTER_HERSTELLER_ID: 74931 is ELSTER's test manufacturer id, which a production \
                 document must never carry (sandbox documents use it without this setting); set \
                 the id ELSTER assigned you, or leave it unset"
                    .into(),
            );
        }
        Ok(Self(v.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Euros with at most two decimals (`49`, `49.5`, `49.00`) as cents.
fn parse_euros(var: &'static str, value: &str) -> Result<i64, ConfigError> {
    let v = value.trim();
    let (whole, frac) = v.split_once('.').unwrap_or((v, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole)
        || whole.len() > 7
        || (!frac.is_empty() && (!digits(frac) || frac.len() > 2))
        || v.ends_with('.')
    {
        return Err(bad(var, value, "expected an amount in euros such as 49.00"));
    }
    let whole: i64 = whole
        .parse()
        .map_err(|_| bad(var, value, "amount too large"))?;
    let cents: i64 = format!("{frac:0<2}").parse().unwrap_or(0);
    Ok(whole * 100 + cents)
}

impl CommonArgs {
    pub fn log_format(&self) -> Result<LogFormat, ConfigError> {
        match self.log_format.as_str() {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(bad("FILING_LOG_FORMAT", other, "expected `text` or `json`")),
        }
    }

    /// The attorney named in powers of attorney.
    pub fn operator(&self) -> Result<forms::Operator, ConfigError> {
        let check = |var: &'static str, value: &str| {
            let v = value.trim();
            if v.is_empty() || v.chars().count() > 200 || v.chars().any(char::is_control) {
                Err(bad(var, value, "must be 1 to 200 printable characters"))
            } else {
                Ok(v.to_string())
            }
        };
        Ok(forms::Operator {
            name: check("FILING_OPERATOR_NAME", &self.operator_name)?,
            address: check("FILING_OPERATOR_ADDRESS", &self.operator_address)?,
        })
    }

    pub fn storage(&self) -> Result<StorageConfig, ConfigError> {
        if self.data_dir.as_os_str().is_empty() {
            return Err(bad("FILING_DATA_DIR", "", "must not be empty"));
        }
        let database_url = match &self.database_url {
            None => format!(
                "sqlite://{}",
                self.data_dir.join("filing.db").to_string_lossy()
            ),
            Some(url) => {
                let ok = url.starts_with("sqlite:")
                    || url.starts_with("postgres://")
                    || url.starts_with("postgresql://");
                if !ok {
                    return Err(bad(
                        "DATABASE_URL",
                        &redact_url(url),
                        "expected sqlite://PATH or postgres://USER@HOST/DATABASE",
                    ));
                }
                url.clone()
            }
        };
        let documents_dir = self
            .documents_dir
            .clone()
            .unwrap_or_else(|| self.data_dir.join("documents"));
        // Checked even without a bucket, so a typo doesn't wait for the day one is configured.
        let documents_timeout = Duration::from_secs(parse_positive(
            "FILING_DOCUMENTS_TIMEOUT_SECS",
            &self.documents_timeout_secs,
        )?);
        let documents_s3 = match &self.documents_url {
            None => None,
            Some(_) if self.documents_dir.is_some() => {
                return Err(bad(
                    "FILING_DOCUMENTS_URL",
                    self.documents_url.as_deref().unwrap_or_default(),
                    "set either FILING_DOCUMENTS_DIR or FILING_DOCUMENTS_URL, not both",
                ));
            }
            Some(url) => Some(s3_settings(url, documents_timeout)?),
        };
        Ok(StorageConfig {
            data_dir: self.data_dir.clone(),
            database_url,
            documents_dir,
            documents_s3,
        })
    }
}

/// `s3://BUCKET[/PREFIX]`: a bucket name as S3 allows them (3 to 63 lower-case letters, digits,
/// dots and hyphens), and an optional key prefix.
fn s3_settings(url: &str, timeout: Duration) -> Result<store::documents::S3Settings, ConfigError> {
    let expected = "expected s3://BUCKET or s3://BUCKET/PREFIX";
    let rest = url
        .strip_prefix("s3://")
        .ok_or_else(|| bad("FILING_DOCUMENTS_URL", url, expected))?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    let bucket_ok = (3..=63).contains(&bucket.len())
        && bucket
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
    if !bucket_ok {
        return Err(bad("FILING_DOCUMENTS_URL", url, expected));
    }
    Ok(store::documents::S3Settings {
        bucket: bucket.to_owned(),
        prefix: prefix.trim_matches('/').to_owned(),
        endpoint: None,
        region: None,
        credentials: None,
        allow_http: false,
        timeout,
    })
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

/// Whole seconds a cache keeps what it read; 0 turns it off.
fn cache_secs(var: &'static str, value: &str) -> Result<Duration, ConfigError> {
    value
        .trim()
        .parse::<u64>()
        .map(Duration::from_secs)
        .map_err(|_| {
            bad(
                var,
                value,
                "must be a whole number of seconds (0 turns the cache off)",
            )
        })
}

fn parse_positive<T: std::str::FromStr + PartialOrd + Default>(
    var: &'static str,
    value: &str,
) -> Result<T, ConfigError> {
    match value.trim().parse::<T>() {
        Ok(v) if v > T::default() => Ok(v),
        _ => Err(bad(var, value, "expected a whole number above 0")),
    }
}

/// A whole number within `range`.
fn parse_range<T: std::str::FromStr + PartialOrd + std::fmt::Display>(
    var: &'static str,
    value: &str,
    range: std::ops::RangeInclusive<T>,
) -> Result<T, ConfigError> {
    match value.trim().parse::<T>() {
        Ok(v) if range.contains(&v) => Ok(v),
        _ => Err(bad(
            var,
            value,
            format!(
                "expected a whole number from {} to {}",
                range.start(),
                range.end()
            ),
        )),
    }
}

/// The rate limit of `FILING_RATE_LIMIT_PER_SECOND` and `FILING_RATE_LIMIT_BURST`; `None`
/// when the rate is 0.
fn parse_rate_limit(
    per_second: &str,
    burst: Option<&str>,
) -> Result<Option<RateLimit>, ConfigError> {
    const VAR: &str = "FILING_RATE_LIMIT_PER_SECOND";
    let rate: u32 = per_second.trim().parse().map_err(|_| {
        bad(
            VAR,
            per_second,
            "expected a whole number (0 turns limiting off)",
        )
    })?;
    let Some(per_second) = NonZeroU32::new(rate) else {
        return Ok(None);
    };
    let burst = match burst.map(str::trim).filter(|b| !b.is_empty()) {
        None => per_second,
        Some(b) => b
            .parse::<u32>()
            .ok()
            .and_then(NonZeroU32::new)
            .ok_or_else(|| {
                bad(
                    "FILING_RATE_LIMIT_BURST",
                    b,
                    "expected a whole number above 0",
                )
            })?,
    };
    Ok(Some(RateLimit { per_second, burst }))
}

impl Config {
    /// An operator's upload of an issued trade licence: one PDF and the multipart framing.
    pub fn max_licence_bytes(&self) -> usize {
        self.max_upload_bytes.saturating_add(64 * 1024)
    }

    /// The largest body any route takes (a trade registration with a signed PDF per owner).
    pub fn max_request_bytes(&self) -> usize {
        self.max_body_bytes
            .saturating_add(
                self.max_upload_bytes
                    .saturating_mul(domain::trade_request::MAX_OWNERS),
            )
            .saturating_add(64 * 1024)
    }

    pub fn from_args(common: &CommonArgs, serve: &ServeArgs) -> Result<Self, ConfigError> {
        let storage = common.storage()?;
        let listen: SocketAddr = serve.listen.parse().map_err(|_| {
            bad(
                "FILING_LISTEN",
                &serve.listen,
                "expected IP:PORT, e.g. 127.0.0.1:8080 or 0.0.0.0:8080",
            )
        })?;
        let public_url = match &serve.public_url {
            None => format!("http://{listen}"),
            Some(u) => {
                let trimmed = u.trim_end_matches('/');
                let valid = (trimmed.starts_with("http://") || trimmed.starts_with("https://"))
                    && trimmed.len() > "https://".len()
                    && !trimmed.contains(['?', '#', ' ']);
                if !valid {
                    return Err(bad(
                        "FILING_PUBLIC_URL",
                        u,
                        "expected an absolute http(s) URL without query, e.g. https://filing.example.com",
                    ));
                }
                trimmed.to_string()
            }
        };
        let max_body_bytes = parse_positive("FILING_MAX_BODY_BYTES", &serve.max_body_bytes)?;
        let max_upload_bytes = parse_positive("FILING_MAX_UPLOAD_BYTES", &serve.max_upload_bytes)?;
        let max_concurrent_uploads = parse_range(
            "FILING_MAX_CONCURRENT_UPLOADS",
            &serve.max_concurrent_uploads,
            1..=100_000,
        )?;
        // At most a day, like the body's allowance: deadlines are instants, which overflow.
        let request_timeout = Duration::from_secs(parse_range(
            "FILING_REQUEST_TIMEOUT_SECS",
            &serve.request_timeout_secs,
            1..=86_400,
        )?);
        let shutdown_timeout = Duration::from_secs(parse_positive(
            "FILING_SHUTDOWN_TIMEOUT_SECS",
            &serve.shutdown_timeout_secs,
        )?);
        if let Some(secret) = &serve.signing_secret
            && secret.len() < 32
        {
            return Err(bad(
                "FILING_SIGNING_SECRET",
                "(hidden)",
                "must be at least 32 characters",
            ));
        }
        Ok(Config {
            storage,
            operator: common.operator()?,
            listen,
            public_url,
            max_body_bytes,
            max_upload_bytes,
            request_timeout,
            shutdown_timeout,
            signing_secret: serve.signing_secret.clone(),
            elster: ElsterConfig {
                hersteller_id: serve.elster_hersteller_id.clone(),
                daten_lieferant: {
                    let d = serve.elster_daten_lieferant.trim();
                    if d.is_empty() || d.chars().count() > 256 || !domain::latin9::is_elster_text(d)
                    {
                        return Err(bad(
                            "FILING_ELSTER_DATENLIEFERANT",
                            d,
                            "must be 1 to 256 characters of ELSTER's character set (printable ISO 8859-15)",
                        ));
                    }
                    d.to_string()
                },
            },
            price_self_cents: parse_euros("FILING_PRICE_SELF", &serve.price_self)?,
            price_assisted_cents: parse_euros("FILING_PRICE_ASSISTED", &serve.price_assisted)?,
            webhooks: WebhookConfig {
                retry_schedule: domain::webhook::parse_retry_schedule(
                    &serve.webhook_retry_schedule,
                )
                .map_err(|e| {
                    bad(
                        "FILING_WEBHOOK_RETRY_SCHEDULE",
                        &serve.webhook_retry_schedule,
                        format!("{e}; expected comma-separated seconds such as 5,300,1800"),
                    )
                })?,
                allow_private_targets: parse_bool(
                    "FILING_WEBHOOK_ALLOW_PRIVATE_TARGETS",
                    &serve.webhook_allow_private_targets,
                )?,
                timeout: Duration::from_secs(parse_positive(
                    "FILING_WEBHOOK_TIMEOUT_SECS",
                    &serve.webhook_timeout_secs,
                )?),
                worker: parse_bool("FILING_WEBHOOK_WORKER", &serve.webhook_worker)?,
                poll_interval: Duration::from_secs(1),
                sealing: sealing_keys(serve)?,
                lookup: Default::default(),
            },
            db_timeout: Duration::from_secs(parse_positive(
                "FILING_DB_TIMEOUT_SECS",
                &serve.db_timeout_secs,
            )?),
            db_pool_size: parse_range("FILING_DB_POOL_SIZE", &serve.db_pool_size, 1..=1000)?,
            db_startup_wait: Duration::from_secs(
                serve
                    .db_startup_wait_secs
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|s| *s <= 86_400)
                    .ok_or_else(|| {
                        bad(
                            "FILING_DB_STARTUP_WAIT_SECS",
                            &serve.db_startup_wait_secs,
                            "must be a whole number of seconds up to 86400 (0: do not wait)",
                        )
                    })?,
            ),
            key_cache: cache_secs("FILING_KEY_CACHE_SECS", &serve.key_cache_secs)?,
            directory_cache: cache_secs(
                "FILING_DIRECTORY_CACHE_SECS",
                &serve.directory_cache_secs,
            )?,
            header_read_timeout: Duration::from_secs(parse_positive(
                "FILING_HEADER_READ_TIMEOUT_SECS",
                &serve.header_read_timeout_secs,
            )?),
            body_read_timeout: Duration::from_secs(parse_range(
                "FILING_BODY_READ_TIMEOUT_SECS",
                &serve.body_read_timeout_secs,
                1..=86_400,
            )?),
            body_min_rate: match serve.body_min_bytes_per_sec.trim() {
                "0" => 0,
                // Below a KiB/s the rule stops bounding anything: 1 B/s would let a 1 MiB
                // JSON body take twelve days.
                v => parse_range("FILING_BODY_MIN_BYTES_PER_SEC", v, 1024..=1 << 30)?,
            },
            max_concurrent_uploads,
            max_uploads_per_provider: match &serve.max_uploads_per_provider {
                None => (max_concurrent_uploads / 4).max(1),
                Some(v) => parse_range(
                    "FILING_MAX_UPLOADS_PER_PROVIDER",
                    v,
                    1..=max_concurrent_uploads,
                )?,
            },
            rate_limit: parse_rate_limit(
                &serve.rate_limit_per_second,
                serve.rate_limit_burst.as_deref(),
            )?,
            max_keys_per_company: parse_range(
                "FILING_MAX_KEYS_PER_COMPANY",
                &serve.max_keys_per_company,
                1..=1_000_000,
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn common() -> CommonArgs {
        CommonArgs {
            data_dir: "./data".into(),
            database_url: None,
            documents_dir: None,
            documents_url: None,
            documents_timeout_secs: "30".into(),
            log_format: "text".into(),
            log: "info".into(),
            operator_name: DEFAULT_OPERATOR_NAME.into(),
            operator_address: DEFAULT_OPERATOR_ADDRESS.into(),
        }
    }

    #[test]
    fn a_documents_url_names_a_bucket_and_a_prefix() {
        let with = |url: &str| CommonArgs {
            documents_url: Some(url.into()),
            ..common()
        };
        let s3 = with("s3://filing-docs/prod/eu/").storage().unwrap();
        let s3 = s3.documents_s3.expect("S3 settings");
        assert_eq!(
            (s3.bucket.as_str(), s3.prefix.as_str()),
            ("filing-docs", "prod/eu")
        );
        assert_eq!(s3.timeout, Duration::from_secs(30));
        assert!(s3.credentials.is_none() && s3.endpoint.is_none() && !s3.allow_http);
        let s3 = with("s3://my.bucket-1")
            .storage()
            .unwrap()
            .documents_s3
            .unwrap();
        assert_eq!(
            (s3.bucket.as_str(), s3.prefix.as_str()),
            ("my.bucket-1", "")
        );
        assert!(common().storage().unwrap().documents_s3.is_none());

        for bad in [
            "s3://",
            "s3://ab",
            "s3://Upper",
            "s3://under_score/x",
            "https://b.example/x",
            "bucket",
        ] {
            let e = with(bad).storage().unwrap_err().to_string();
            assert!(
                e.contains("FILING_DOCUMENTS_URL") && e.contains("s3://BUCKET"),
                "{bad}: {e}"
            );
        }
        let both = CommonArgs {
            documents_dir: Some("/srv/docs".into()),
            ..with("s3://filing-docs")
        };
        let e = both.storage().unwrap_err().to_string();
        assert!(e.contains("not both"), "{e}");
        for timeout in ["0", "soon"] {
            // Checked with or without a bucket.
            for url in [Some("s3://filing-docs".to_owned()), None] {
                let args = CommonArgs {
                    documents_timeout_secs: timeout.into(),
                    documents_url: url,
                    ..common()
                };
                let e = args.storage().unwrap_err().to_string();
                assert!(e.contains("FILING_DOCUMENTS_TIMEOUT_SECS"), "{e}");
            }
        }
    }

    #[test]
    fn defaults_are_valid() {
        let c = Config::from_args(&common(), &ServeArgs::default()).unwrap();
        assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(c.public_url, "http://127.0.0.1:8080");
        assert_eq!(c.storage.database_url, "sqlite://./data/filing.db");
        assert_eq!(c.storage.documents_dir, PathBuf::from("./data/documents"));
        let schedule: Vec<u64> = c
            .webhooks
            .retry_schedule
            .iter()
            .map(|d| d.as_secs())
            .collect();
        assert_eq!(schedule, domain::webhook::DEFAULT_RETRY_SCHEDULE);
        assert!(!c.webhooks.allow_private_targets);
        assert_eq!(c.webhooks.timeout, Duration::from_secs(15));
        assert_eq!(c.db_timeout, Duration::from_secs(5));
        assert_eq!(c.db_pool_size, 8);
        assert_eq!(c.db_startup_wait, Duration::from_secs(60));
        assert_eq!(c.header_read_timeout, Duration::from_secs(10));
        assert_eq!(c.body_read_timeout, Duration::from_secs(30));
        assert_eq!(c.body_min_rate, 65536);
        assert_eq!(c.max_concurrent_uploads, 16);
        assert_eq!(c.rate_limit, None, "rate limiting is off by default");
        assert_eq!(c.max_keys_per_company, 100);
    }

    #[test]
    fn rate_limit_settings() {
        let limit = |rate: &str, burst: Option<&str>| {
            Config::from_args(
                &common(),
                &ServeArgs {
                    rate_limit_per_second: rate.into(),
                    rate_limit_burst: burst.map(Into::into),
                    ..Default::default()
                },
            )
            .map(|c| c.rate_limit.map(|r| (r.per_second.get(), r.burst.get())))
        };
        assert_eq!(limit("0", Some("5")), Ok(None));
        assert_eq!(limit("10", None), Ok(Some((10, 10))));
        assert_eq!(limit("1", Some("2")), Ok(Some((1, 2))));
        assert_eq!(
            limit("-1", None).unwrap_err().var,
            "FILING_RATE_LIMIT_PER_SECOND"
        );
        assert_eq!(
            limit("1", Some("0")).unwrap_err().var,
            "FILING_RATE_LIMIT_BURST"
        );
    }

    #[test]
    fn bad_values_name_their_variable() {
        let cases: Vec<(ServeArgs, &str)> = vec![
            (
                ServeArgs {
                    listen: "localhost".into(),
                    ..Default::default()
                },
                "FILING_LISTEN",
            ),
            (
                ServeArgs {
                    public_url: Some("ftp://x".into()),
                    ..Default::default()
                },
                "FILING_PUBLIC_URL",
            ),
            (
                ServeArgs {
                    max_body_bytes: "0".into(),
                    ..Default::default()
                },
                "FILING_MAX_BODY_BYTES",
            ),
            (
                ServeArgs {
                    max_upload_bytes: "lots".into(),
                    ..Default::default()
                },
                "FILING_MAX_UPLOAD_BYTES",
            ),
            (
                ServeArgs {
                    directory_cache_secs: "-1".into(),
                    ..Default::default()
                },
                "FILING_DIRECTORY_CACHE_SECS",
            ),
            (
                ServeArgs {
                    max_keys_per_company: "0".into(),
                    ..Default::default()
                },
                "FILING_MAX_KEYS_PER_COMPANY",
            ),
            (
                ServeArgs {
                    signing_secret: Some("short".into()),
                    ..Default::default()
                },
                "FILING_SIGNING_SECRET",
            ),
            (
                ServeArgs {
                    webhook_retry_schedule: "5,soon".into(),
                    ..Default::default()
                },
                "FILING_WEBHOOK_RETRY_SCHEDULE",
            ),
            (
                ServeArgs {
                    webhook_allow_private_targets: "maybe".into(),
                    ..Default::default()
                },
                "FILING_WEBHOOK_ALLOW_PRIVATE_TARGETS",
            ),
            (
                ServeArgs {
                    webhook_timeout_secs: "0".into(),
                    ..Default::default()
                },
                "FILING_WEBHOOK_TIMEOUT_SECS",
            ),
            (
                ServeArgs {
                    // 31 bytes.
                    webhook_secrets_key: Some(
                        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==".into(),
                    ),
                    ..Default::default()
                },
                "FILING_WEBHOOK_SECRETS_KEY",
            ),
            (
                ServeArgs {
                    webhook_secrets_key: Some("not base64!".into()),
                    ..Default::default()
                },
                "FILING_WEBHOOK_SECRETS_KEY",
            ),
            (
                ServeArgs {
                    webhook_secrets_old_keys: Some(
                        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=,short".into(),
                    ),
                    ..Default::default()
                },
                "FILING_WEBHOOK_SECRETS_OLD_KEYS",
            ),
            (
                ServeArgs {
                    webhook_worker: "off-ish".into(),
                    ..Default::default()
                },
                "FILING_WEBHOOK_WORKER",
            ),
            (
                ServeArgs {
                    db_timeout_secs: "0".into(),
                    ..Default::default()
                },
                "FILING_DB_TIMEOUT_SECS",
            ),
            (
                ServeArgs {
                    db_pool_size: "0".into(),
                    ..Default::default()
                },
                "FILING_DB_POOL_SIZE",
            ),
            (
                ServeArgs {
                    db_pool_size: "1001".into(),
                    ..Default::default()
                },
                "FILING_DB_POOL_SIZE",
            ),
            (
                ServeArgs {
                    db_startup_wait_secs: "86401".into(),
                    ..Default::default()
                },
                "FILING_DB_STARTUP_WAIT_SECS",
            ),
            (
                ServeArgs {
                    db_startup_wait_secs: "-1".into(),
                    ..Default::default()
                },
                "FILING_DB_STARTUP_WAIT_SECS",
            ),
            (
                ServeArgs {
                    header_read_timeout_secs: "soon".into(),
                    ..Default::default()
                },
                "FILING_HEADER_READ_TIMEOUT_SECS",
            ),
            (
                ServeArgs {
                    body_read_timeout_secs: "0".into(),
                    ..Default::default()
                },
                "FILING_BODY_READ_TIMEOUT_SECS",
            ),
            (
                ServeArgs {
                    body_min_bytes_per_sec: "-1".into(),
                    ..Default::default()
                },
                "FILING_BODY_MIN_BYTES_PER_SEC",
            ),
            (
                ServeArgs {
                    body_min_bytes_per_sec: "1".into(),
                    ..Default::default()
                },
                "FILING_BODY_MIN_BYTES_PER_SEC",
            ),
            (
                ServeArgs {
                    request_timeout_secs: "18446744073709551615".into(),
                    ..Default::default()
                },
                "FILING_REQUEST_TIMEOUT_SECS",
            ),
            (
                ServeArgs {
                    body_read_timeout_secs: "86401".into(),
                    ..Default::default()
                },
                "FILING_BODY_READ_TIMEOUT_SECS",
            ),
            (
                ServeArgs {
                    max_concurrent_uploads: "0".into(),
                    ..Default::default()
                },
                "FILING_MAX_CONCURRENT_UPLOADS",
            ),
            (
                ServeArgs {
                    max_concurrent_uploads: "3000000000000000000".into(),
                    ..Default::default()
                },
                "FILING_MAX_CONCURRENT_UPLOADS",
            ),
        ];
        for (args, var) in cases {
            let err = Config::from_args(&common(), &args).unwrap_err();
            assert_eq!(err.var, var);
            assert!(err.to_string().contains(var));
        }
        let mut c = common();
        c.database_url = Some("mysql://x:secret@y/z".into());
        let err = Config::from_args(&c, &ServeArgs::default()).unwrap_err();
        assert_eq!(err.var, "DATABASE_URL");
        assert!(!err.to_string().contains("secret"), "{err}");
        c.database_url = None;
        c.log_format = "xml".into();
        assert_eq!(c.log_format().unwrap_err().var, "FILING_LOG_FORMAT");
    }

    #[test]
    fn prices_in_euros() {
        assert_eq!(parse_euros("X", "49.00"), Ok(4900));
        assert_eq!(parse_euros("X", "49.5"), Ok(4950));
        assert_eq!(parse_euros("X", "0"), Ok(0));
        for bad in ["", "49,00", "49.", "-1", "1.234", "abc", "99999999"] {
            assert!(parse_euros("X", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn redacts_passwords() {
        assert_eq!(redact_url("postgres://u:pw@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact_url("postgres://u@h/db"), "postgres://u@h/db");
    }
}

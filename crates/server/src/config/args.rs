//! The flags and variables of the configuration, each read into its typed value by the value
//! parser beside it (`parse`); what depends on two of them is checked in `super::validate`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args};

use super::parse::{self, S3Location};
use super::{HerstellerId, LogFormat};
use crate::sealing::SealingKey;

/// The settings of `filing serve` beside [`ServeArgs`]: where the data is and whom powers of
/// attorney name.
#[derive(Debug, Clone, Args, Default)]
pub struct CommonArgs {
    #[command(flatten)]
    pub storage: StorageArgs,
    #[command(flatten)]
    pub operator: OperatorArgs,
}

/// Where the database and the documents are: the settings of every command that touches them.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Storage")]
pub struct StorageArgs {
    /// Folder for the SQLite database, documents and the link-signing secret (`serve` creates
    /// it when missing; other commands need `--init` for that).
    #[arg(long, env = "FILING_DATA_DIR", default_value = "./data", global = true)]
    #[arg(value_parser = parse::folder())]
    pub data_dir: PathBuf,

    /// Database: `sqlite://PATH` or `postgres://USER@HOST/DB`. Default: sqlite in the data folder.
    #[arg(long, env = "DATABASE_URL", global = true, value_parser = parse::database_url())]
    pub database_url: Option<String>,

    /// Where documents are stored: a local directory. Default: `<data dir>/documents`.
    #[arg(long, env = "FILING_DOCUMENTS_DIR", global = true)]
    pub documents_dir: Option<PathBuf>,

    /// Store documents in an S3 bucket instead of a directory: `s3://BUCKET[/PREFIX]`.
    /// Credentials, region and endpoint come from the AWS variables (`AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT`, `AWS_ALLOW_HTTP`).
    #[arg(long, env = "FILING_DOCUMENTS_URL", global = true, value_parser = parse::s3_location())]
    pub documents_url: Option<S3Location>,

    /// Bound on one request to the document bucket, retries included (seconds).
    #[arg(
        long,
        env = "FILING_DOCUMENTS_TIMEOUT_SECS",
        default_value = "30",
        global = true
    )]
    #[arg(value_parser = parse::seconds(1..))]
    pub documents_timeout_secs: Duration,
}

/// How the process logs (to stderr): flags of every command.
#[derive(Debug, Clone, Args)]
pub struct LogArgs {
    /// Log format: `text` or `json`.
    #[arg(long, env = "FILING_LOG_FORMAT", default_value = "text", global = true)]
    #[arg(value_parser = parse::log_format())]
    pub log_format: LogFormat,

    /// Log filter (tracing EnvFilter syntax): a level (`error`, `warn`, `info`, `debug`,
    /// `trace`, `off`) and `TARGET=LEVEL` directives, comma-separated, e.g. `info` or
    /// `info,server=debug,sqlx=warn`.
    #[arg(long, env = "FILING_LOG", default_value = "info", global = true)]
    #[arg(value_parser = parse::log_filter())]
    pub log: String,
}

/// The company running this service, as powers of attorney name it (`serve`, `render`).
/// Unset, production `assisted` trade registrations are refused (503
/// `SERVICE_NOT_CONFIGURED`): no production document names a placeholder; sandbox powers of
/// attorney name a sandbox placeholder under their sandbox mark.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Operator")]
pub struct OperatorArgs {
    /// Legal name of the company running this service: the attorney named in every power of
    /// attorney. Set it together with FILING_OPERATOR_ADDRESS.
    #[arg(long, env = "FILING_OPERATOR_NAME", global = true)]
    #[arg(value_parser = parse::line())]
    pub operator_name: Option<String>,

    /// Postal address of the operator on one line, printed in every power of attorney.
    #[arg(long, env = "FILING_OPERATOR_ADDRESS")]
    #[arg(global = true, value_parser = parse::line())]
    pub operator_address: Option<String>,
}

/// Settings of the HTTP server.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Server")]
pub struct ServeArgs {
    /// Address and port to listen on.
    #[arg(long, env = "FILING_LISTEN", default_value = "127.0.0.1:8080")]
    #[arg(value_parser = parse::listen())]
    pub listen: SocketAddr,

    /// A second address serving only `GET /metrics` (Prometheus), without a key: bind it where
    /// only the scraper reaches it. Unset: metrics only on the main listener, for operator keys.
    #[arg(long, env = "FILING_METRICS_LISTEN", value_parser = parse::listen())]
    pub metrics_listen: Option<SocketAddr>,

    /// Base of the absolute links the service hands out (document downloads).
    /// Default: `http://<FILING_LISTEN>`.
    #[arg(long, env = "FILING_PUBLIC_URL", value_parser = parse::public_url())]
    pub public_url: Option<String>,

    /// Largest JSON request body in bytes.
    #[arg(long, env = "FILING_MAX_BODY_BYTES", default_value = "1048576")]
    #[arg(value_parser = parse::whole(1_usize..))]
    pub max_body_bytes: usize,

    /// Largest uploaded file (one multipart file part) in bytes.
    #[arg(long, env = "FILING_MAX_UPLOAD_BYTES", default_value = "52428800")]
    #[arg(value_parser = parse::whole(1_usize..))]
    pub max_upload_bytes: usize,

    /// Longest time one request may take, in seconds.
    #[arg(long, env = "FILING_REQUEST_TIMEOUT_SECS", default_value = "60")]
    #[arg(value_parser = parse::seconds(1..=86_400))]
    pub request_timeout_secs: Duration,

    /// How long shutdown waits for in-flight requests, in seconds.
    #[arg(long, env = "FILING_SHUTDOWN_TIMEOUT_SECS", default_value = "30")]
    #[arg(value_parser = parse::seconds(1..))]
    pub shutdown_timeout_secs: Duration,

    /// Price of a trade registration with the `self` package, in euros.
    #[arg(long, env = "FILING_PRICE_SELF", default_value = "49.00")]
    #[arg(value_parser = parse::setting(parse::euros))]
    pub price_self: i64,

    /// Price of a trade registration with the `assisted` package, in euros.
    #[arg(long, env = "FILING_PRICE_ASSISTED", default_value = "149.00")]
    #[arg(value_parser = parse::setting(parse::euros))]
    pub price_assisted: i64,

    /// ELSTER manufacturer id (HerstellerID, 5 digits) that ELSTER assigned the operator,
    /// written into every tax XML. Unset, production tax registrations are validated and
    /// stored without their XML, which is written once an id is set (sandbox XML carries
    /// ELSTER's test id 74931, which this setting refuses).
    #[arg(long, env = "FILING_ELSTER_HERSTELLER_ID")]
    #[arg(value_parser = parse::setting(HerstellerId::parse))]
    pub elster_hersteller_id: Option<HerstellerId>,

    /// ELSTER DatenLieferant: who delivers the data, written into every tax XML.
    #[arg(long, env = "FILING_ELSTER_DATENLIEFERANT")]
    #[arg(default_value = "Registration Filing Service", value_parser = parse::elster_text())]
    pub elster_daten_lieferant: String,

    /// Secret for signing document links (at least 32 characters). Default: generated once and
    /// kept in `<data dir>/signing-secret`. Set it to the same value on every instance when
    /// several share one database.
    #[arg(long, env = "FILING_SIGNING_SECRET", hide_env_values = true)]
    #[arg(value_parser = parse::signing_secret())]
    pub signing_secret: Option<String>,

    /// Pauses between webhook delivery attempts, comma-separated seconds. The default tries a
    /// message 8 times over about 27.6 hours: at once, then after 5 s, 5 min, 30 min, 2 h, 5 h,
    /// 10 h and 10 h.
    #[arg(long, env = "FILING_WEBHOOK_RETRY_SCHEDULE")]
    #[arg(default_value = "5,300,1800,7200,18000,36000,36000")]
    #[arg(value_parser = parse::retry_schedule())]
    pub webhook_retry_schedule: Box<[Duration]>,

    /// `true` lets webhook endpoints target private, loopback and link-local addresses
    /// (development and tests); production leaves it `false`.
    #[arg(
        long,
        env = "FILING_WEBHOOK_ALLOW_PRIVATE_TARGETS",
        default_value = "false"
    )]
    #[arg(value_parser = parse::boolean(), action = ArgAction::Set)]
    pub webhook_allow_private_targets: bool,

    /// How long one webhook delivery may take, in seconds.
    #[arg(long, env = "FILING_WEBHOOK_TIMEOUT_SECS", default_value = "15")]
    #[arg(value_parser = parse::seconds(1..))]
    pub webhook_timeout_secs: Duration,

    /// Seals webhook secrets in the database: base64 of 32 random bytes (`openssl rand -base64
    /// 32`). Without it secrets are stored as they are. Every instance needs the same value.
    #[arg(long, env = "FILING_WEBHOOK_SECRETS_KEY", hide_env_values = true)]
    #[arg(value_parser = parse::sealing_key())]
    pub webhook_secrets_key: Option<SealingKey>,

    /// Keys that sealed webhook secrets before `FILING_WEBHOOK_SECRETS_KEY` changed, comma
    /// separated: they only open. Keep them until `filing webhooks reseal` has run and stored
    /// idempotent answers (24 hours) have expired.
    #[arg(long, env = "FILING_WEBHOOK_SECRETS_OLD_KEYS", hide_env_values = true)]
    #[arg(value_parser = parse::sealing_keys())]
    pub webhook_secrets_old_keys: Option<Box<[SealingKey]>>,

    /// Webhook delivery attempts this instance makes at once (its worker's places); one ending
    /// lets the worker claim the next at once.
    #[arg(long, env = "FILING_WEBHOOK_MAX_IN_FLIGHT", default_value = "32")]
    #[arg(value_parser = parse::whole(1_u32..=10_000))]
    pub webhook_max_in_flight: u32,

    /// Delivery attempts to one provider's endpoints in flight at once, all instances
    /// together: receivers of one provider that hang hold no more places than this.
    #[arg(
        long,
        env = "FILING_WEBHOOK_MAX_IN_FLIGHT_PER_PROVIDER",
        default_value = "8"
    )]
    #[arg(value_parser = parse::whole(1_u32..=10_000))]
    pub webhook_max_in_flight_per_provider: u32,

    /// Delivery attempts to one endpoint in flight at once, all instances together.
    #[arg(
        long,
        env = "FILING_WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT",
        default_value = "2"
    )]
    #[arg(value_parser = parse::whole(1_u32..=10_000))]
    pub webhook_max_in_flight_per_endpoint: u32,

    /// Failed webhook attempts in a row (non-2xx, timeout, connection error) that open an
    /// endpoint's circuit: it gets no attempts until the cool-down has passed.
    #[arg(long, env = "FILING_WEBHOOK_BREAKER_FAILURES", default_value = "5")]
    #[arg(value_parser = parse::whole(1_u32..=1_000_000))]
    pub webhook_breaker_failures: u32,

    /// How long an open circuit stays open, in seconds; then one attempt closes it (2xx) or
    /// opens it again.
    #[arg(
        long,
        env = "FILING_WEBHOOK_BREAKER_COOLDOWN_SECS",
        default_value = "60"
    )]
    #[arg(value_parser = parse::seconds(1..=86_400))]
    pub webhook_breaker_cooldown_secs: Duration,

    /// `false` runs this instance without the webhook delivery worker (others deliver).
    #[arg(long, env = "FILING_WEBHOOK_WORKER", default_value = "true")]
    #[arg(value_parser = parse::boolean(), action = ArgAction::Set)]
    pub webhook_worker: bool,

    /// Longest time a request waits for the database (a pooled connection, reconnecting, or
    /// with SQLite another writer's lock) before it is answered 503, in seconds.
    #[arg(long, env = "FILING_DB_TIMEOUT_SECS", default_value = "5")]
    #[arg(value_parser = parse::seconds(1..))]
    pub db_timeout_secs: Duration,

    /// PostgreSQL: connections in the pool for writes (1 to 1000). About the database server's
    /// cores times two to four; more only queue inside the database.
    #[arg(long, env = "FILING_DB_POOL_SIZE", default_value = "8")]
    #[arg(value_parser = parse::whole(1_u32..=1000))]
    pub db_pool_size: u32,

    /// How long `serve` keeps trying to reach the database, and an S3 bucket for documents, at
    /// start (they may come up after the service), in seconds; 0 gives up at the first failure.
    /// Only unreachability is waited out: a wrong password, a failing migration or a missing
    /// bucket ends the start at once.
    #[arg(long, env = "FILING_DB_STARTUP_WAIT_SECS", default_value = "60")]
    #[arg(value_parser = parse::seconds(0..=86_400).note("0: do not wait"))]
    pub db_startup_wait_secs: Duration,

    /// How long an API key read from the database is trusted before it is read again, in
    /// seconds: a key revoked with `filing keys revoke` stops working on running instances
    /// within this time. 0 reads the key on every request.
    #[arg(long, env = "FILING_KEY_CACHE_SECS", default_value = "5")]
    #[arg(value_parser = parse::seconds(0..).note("0 turns the cache off"))]
    pub key_cache_secs: Duration,

    /// How long a trade office directory entry read for a new case's GewA 1 is used without
    /// reading it again, in seconds: an operator's change reaches the forms of other running
    /// instances within this time (the instance that made it at once). 0 reads it every time.
    #[arg(long, env = "FILING_DIRECTORY_CACHE_SECS", default_value = "5")]
    #[arg(value_parser = parse::seconds(0..).note("0 turns the cache off"))]
    pub directory_cache_secs: Duration,

    /// Longest time a client may take to send a request's headers, in seconds; also how long
    /// an idle keep-alive connection stays open. The connection is closed after it.
    #[arg(long, env = "FILING_HEADER_READ_TIMEOUT_SECS", default_value = "10")]
    #[arg(value_parser = parse::seconds(1..))]
    pub header_read_timeout_secs: Duration,

    /// Time a client has to send a request body, in seconds, before the received bytes
    /// extend it (`FILING_BODY_MIN_BYTES_PER_SEC`); 408 after it.
    #[arg(long, env = "FILING_BODY_READ_TIMEOUT_SECS", default_value = "30")]
    #[arg(value_parser = parse::seconds(1..=86_400))]
    pub body_read_timeout_secs: Duration,

    /// The slowest upload served: every this many bytes received give the body one more
    /// second; 0 makes `FILING_BODY_READ_TIMEOUT_SECS` a hard deadline.
    #[arg(long, env = "FILING_BODY_MIN_BYTES_PER_SEC", default_value = "65536")]
    #[arg(value_parser = parse::min_rate())]
    pub body_min_bytes_per_sec: u64,

    /// Multipart requests (uploads) served at the same time; one more is answered 503.
    #[arg(long, env = "FILING_MAX_CONCURRENT_UPLOADS", default_value = "16")]
    #[arg(value_parser = parse::whole(1_usize..=100_000))]
    pub max_concurrent_uploads: usize,

    /// Upload slots one provider (with its client companies) may hold at most; one more of
    /// its uploads is answered 429. Default: all but `FILING_UPLOAD_RESERVE` (the slots are
    /// shared work-conserving: docs/operations.md, "Upload slots").
    #[arg(long, env = "FILING_MAX_UPLOADS_PER_PROVIDER", value_parser = parse::whole(1_usize..))]
    pub max_uploads_per_provider: Option<usize>,

    /// Days the event log (`GET /v1/events`) and delivered or given-up webhook messages (with
    /// their attempts) are kept before the pruning job removes them; at least 30, the time the
    /// API promises. Default 90.
    #[arg(long, env = "FILING_RETENTION_DAYS", default_value = "90")]
    #[arg(value_parser = parse::whole(30_u32..=36_500))]
    pub retention_days: u32,

    /// How often the pruning job runs (on one instance at a time), in seconds. Default 3600.
    #[arg(long, env = "FILING_PRUNE_INTERVAL_SECS", default_value = "3600")]
    #[arg(value_parser = parse::seconds(1..=86_400))]
    pub prune_interval_secs: Duration,

    /// `GET` requests one provider (with its client companies; an operator as one) may have in
    /// flight at once; more wait their turn (at most `FILING_DB_TIMEOUT_SECS`, then 429), so one
    /// tenant's costly lists never take every read connection. Default 4 (half the 8 read
    /// connections).
    #[arg(
        long,
        env = "FILING_MAX_CONCURRENT_READS_PER_COMPANY",
        default_value = "4"
    )]
    #[arg(value_parser = parse::whole(1_usize..=10_000))]
    pub max_concurrent_reads_per_company: usize,

    /// Bytes of documents one provider (with its client companies) may store, cancelled cases
    /// included; an upload that would exceed it is answered 413 `STORAGE_QUOTA_EXCEEDED` before
    /// its body is read. 0: no quota. Default 50 GiB (docs/operations.md, "Storage quota and
    /// free disk").
    #[arg(
        long,
        env = "FILING_STORAGE_QUOTA_BYTES",
        default_value = "53687091200"
    )]
    #[arg(value_parser = parse::whole(0_u64..).note("0 turns the quota off"))]
    pub storage_quota_bytes: u64,

    /// Free bytes the data folder's disk keeps: an upload that would leave less is answered
    /// 503 before its body is read, so uploads never take the last of the disk from the
    /// database. Default 2 GiB.
    #[arg(long, env = "FILING_MIN_FREE_DISK_BYTES", default_value = "2147483648")]
    #[arg(value_parser = parse::whole(0_u64..))]
    pub min_free_disk_bytes: u64,

    /// Upload slots kept free for providers that hold none, so a newcomer is served without
    /// ending another provider's upload. Default 0: every slot may be used, and a newcomer
    /// finding none free takes one from the provider holding the most.
    #[arg(long, env = "FILING_UPLOAD_RESERVE", value_parser = parse::whole(0_usize..))]
    pub upload_reserve: Option<usize>,

    /// Tokens per second each company (all its API keys together; an operator with its keys)
    /// earns (a token bucket per company); a request takes one, an upload one more per MiB, a
    /// list one more per 100 rows asked for. 0 turns rate limiting off. Default 50: a platform
    /// under normal load never meets it (docs/operations.md, "Rate limits").
    #[arg(long, env = "FILING_RATE_LIMIT_PER_SECOND", default_value = "50")]
    #[arg(value_parser = parse::whole(0_u32..).note("0 turns limiting off"))]
    pub rate_limit_per_second: u32,

    /// Tokens a company's bucket holds (requests it may make at once before the rate applies).
    /// Default: four seconds of the rate (200).
    #[arg(long, env = "FILING_RATE_LIMIT_BURST", value_parser = parse::burst())]
    pub rate_limit_burst: Option<parse::Burst>,

    /// Requests per minute one client address may make without a valid key (each answered
    /// 401) and console sign-ins it may try; beyond them 429 `RATE_LIMITED`. 0 turns it off.
    #[arg(
        long,
        env = "FILING_ADDRESS_RATE_LIMIT_PER_MINUTE",
        default_value = "30"
    )]
    #[arg(value_parser = parse::whole(0_u32..).note("0 turns limiting off"))]
    pub address_rate_limit_per_minute: u32,

    /// The header a trusted reverse proxy puts the client's address in (e.g. `X-Real-IP`; of
    /// `X-Forwarded-For` the last address is taken, the one the proxy added). Unset: the
    /// address of the connection. Set it only behind a proxy that overwrites the header.
    #[arg(long, env = "FILING_CLIENT_ADDRESS_HEADER")]
    pub client_address_header: Option<String>,

    /// Unrevoked API keys one company (a provider, or each client company) may hold; one more
    /// issued over HTTP is answered 409 `API_KEY_LIMIT`.
    #[arg(long, env = "FILING_MAX_KEYS_PER_COMPANY", default_value = "100")]
    #[arg(value_parser = parse::whole(1_usize..=1_000_000))]
    pub max_keys_per_company: usize,
}

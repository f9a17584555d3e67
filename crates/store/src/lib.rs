//! Storage: one [`Repository`] trait with an SQLite and a PostgreSQL implementation side by side,
//! and the [`documents::DocumentStore`] for files, backed by `object_store`.
//!
//! Most statements are the same in both dialects (both accept `$1` placeholders), so they are
//! written once in [`shared`] and expanded into each implementation; what differs per dialect
//! (connection set-up, migrations, locking) lives in `sqlite.rs` and `postgres.rs`.

#[macro_use]
mod shared;
pub mod documents;
mod folder_flush;
mod new_case;
mod postgres;
mod postgres_create;
mod sqlite;
mod sqlite_write;

use std::sync::Arc;

use async_trait::async_trait;
use domain::auth::KeyKind;
use domain::company::Company;
use time::OffsetDateTime;
use uuid::Uuid;

pub use postgres::PostgresRepository;
pub use sqlite::SqliteRepository;

/// What went wrong in the store, in terms the API can answer with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A uniqueness or foreign-key constraint refused the write; the name of the constraint or
    /// column is given where the database told it.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The database or document store cannot be reached or refuses writes right now.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    #[error("invalid database URL: {0}")]
    Config(String),
    #[error("database error: {0}")]
    Database(#[source] sqlx::Error),
    /// An error of the SQLite writes made without sqlx (`sqlite_write.rs`) that is neither a
    /// conflict nor unavailability.
    #[error("database error: {0}")]
    Embedded(#[source] rusqlite::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// A create carried an [`IdempotentAnswer`] for a key that is no longer claimed by its
    /// request (the claim expired and another request took it over); nothing was written.
    #[error("the idempotency key is no longer claimed by this request")]
    IdempotencyClaimLost,
    /// The document store refused an operation for a reason that is not a passing fault
    /// (an invalid key, an unsupported operation): a bug rather than an outage.
    #[error("document store error: {0}")]
    Documents(#[source] object_store::Error),
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match &e {
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                StoreError::Conflict(db.constraint().unwrap_or(db.message()).to_string())
            }
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => {
                StoreError::Conflict(db.constraint().unwrap_or(db.message()).to_string())
            }
            sqlx::Error::Database(db) if is_unavailable(db.as_ref()) => {
                StoreError::Unavailable(e.to_string())
            }
            sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::WorkerCrashed => StoreError::Unavailable(e.to_string()),
            _ => StoreError::Database(e),
        }
    }
}

/// Whether a database's error says that it cannot serve the request right now (a retry later
/// may succeed), as opposed to a statement that is wrong.
///
/// SQLite (primary result codes): `BUSY` and `LOCKED` (another connection held the lock past
/// the busy timeout), `READONLY`, `IOERR`, `FULL` and `CANTOPEN`. PostgreSQL (SQLSTATE):
/// class 08 (connection exception), class 53 (insufficient resources: disk full, out of
/// memory, too many connections), class 58 (system error, e.g. I/O), `57P01`..`57P03`
/// (admin or crash shutdown, cannot connect now), `57P05` (idle session timeout), `57014`
/// (statement cancelled, e.g. by a statement timeout), `55P03` (lock not available within
/// `lock_timeout`) and `25006` (read-only transaction: a standby or a database set read-only).
pub fn is_unavailable(db: &dyn sqlx::error::DatabaseError) -> bool {
    let Some(code) = db.code() else {
        return false;
    };
    if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
        code.parse::<i32>().is_ok_and(sqlite_unavailable)
    } else if db
        .try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
        .is_some()
    {
        code.starts_with("08")
            || code.starts_with("53")
            || code.starts_with("58")
            || matches!(
                &*code,
                "57P01" | "57P02" | "57P03" | "57P05" | "57014" | "55P03" | "25006"
            )
    } else {
        false
    }
}

/// The SQLite half of [`is_unavailable`], for a result code (primary or extended) from sqlx
/// or from the rusqlite writes (`sqlite_write.rs`).
pub(crate) fn sqlite_unavailable(code: i32) -> bool {
    const BUSY: i32 = 5;
    const LOCKED: i32 = 6;
    const READONLY: i32 = 8;
    const IOERR: i32 = 10;
    const FULL: i32 = 13;
    const CANTOPEN: i32 = 14;
    // Extended result codes carry the primary code in their low byte.
    matches!(
        code & 0xff,
        BUSY | LOCKED | READONLY | IOERR | FULL | CANTOPEN
    )
}

/// How long a request waits for the database before it is answered with
/// [`StoreError::Unavailable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSettings {
    /// Longest wait for a connection from the pool, including (re)connecting to a database
    /// that refuses connections: sqlx retries until this runs out.
    pub acquire_timeout: std::time::Duration,
    /// SQLite only: longest wait for a lock another connection holds (`busy_timeout`).
    pub busy_timeout: std::time::Duration,
    /// PostgreSQL only: connections of the pool that writes (and reads what the read
    /// connections do not). More than the database server's cores can run at once only adds
    /// waiting inside it (measured on 2 cores: ADR 0011).
    pub max_connections: u32,
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            acquire_timeout: std::time::Duration::from_secs(5),
            busy_timeout: std::time::Duration::from_secs(5),
            max_connections: 8,
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// An operator account.
#[derive(Debug, Clone, PartialEq)]
pub struct Operator {
    pub id: Uuid,
    pub name: String,
    pub created_at: OffsetDateTime,
}

/// A stored API key: its public prefix, the hash of the whole key, and whom it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiKeyRecord {
    pub prefix: String,
    pub hash: Vec<u8>,
    pub kind: KeyKind,
    pub company_id: Option<Uuid>,
    pub operator_id: Option<Uuid>,
    pub created_at: OffsetDateTime,
    pub revoked_at: Option<OffsetDateTime>,
    /// For a client company's key: the provider that created the company. Filled when read;
    /// ignored on insert.
    pub company_provider_id: Option<Uuid>,
}

/// A company's live key as listed over HTTP: never its hash.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiKeySummary {
    pub prefix: String,
    pub kind: KeyKind,
    pub created_at: OffsetDateTime,
    /// Recorded at most once a minute per key and instance (`touch_api_key`).
    pub last_used_at: Option<OffsetDateTime>,
}

/// A client company to create under a provider.
#[derive(Debug, Clone, PartialEq)]
pub struct NewClientCompany {
    pub provider_id: Uuid,
    pub name: String,
    pub environment: domain::company::Environment,
    pub legal_form: Option<String>,
    pub registration_number: Option<String>,
    pub business_address: Option<serde_json::Value>,
}

/// A stored document (a PDF or XML file of a case).
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentRecord {
    pub id: Uuid,
    pub case_id: Uuid,
    /// `trade` or `tax`.
    pub case_kind: String,
    pub owner_index: Option<i32>,
    /// `trade-licence-application`, `power-of-attorney`, `trade-licence`, ...
    pub doc_type: String,
    /// Display name, e.g. `GewA 1 - Erika Mustermann.pdf`.
    pub name: String,
    /// Key in the document store.
    pub storage_key: String,
    pub content_type: String,
    /// The file's size and SHA-256 digest; both `None` while the file is not rendered yet (the
    /// tax summary is rendered on its first download, see [`Repository::record_rendered`]).
    pub size: Option<i64>,
    pub sha256: Option<Vec<u8>>,
    pub created_at: OffsetDateTime,
}

/// One entry of a case's status history.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusChange {
    pub status: String,
    pub previous_status: Option<String>,
    /// `provider:<id>`, `operator:<id>` or `system`.
    pub actor: String,
    pub reason: Option<String>,
    pub at: OffsetDateTime,
}

/// Everything a trade registration create writes, in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTradeRegistration {
    pub id: Uuid,
    /// The client company to create with it (with its id), when the request named none.
    pub new_company: Option<(Uuid, NewClientCompany)>,
    pub company_id: Uuid,
    pub provider_id: Uuid,
    pub environment: domain::company::Environment,
    pub package: String,
    pub status: String,
    /// The validated request as JSON (the domain model's serde form).
    pub record: serde_json::Value,
    pub price_cents: i64,
    /// The receiving trade office as determined from the establishment's address.
    pub trade_office: Option<serde_json::Value>,
    /// When the address did not decide the municipality: the candidate offices.
    pub trade_office_candidates: Option<serde_json::Value>,
    pub created_at: OffsetDateTime,
    pub documents: Vec<DocumentRecord>,
    pub history: Vec<StatusChange>,
    /// The answer to keep for the request's `Idempotency-Key`, when it has one: written in the
    /// create's own transaction.
    pub idempotency: Option<IdempotentAnswer>,
}

/// Everything a tax registration create writes, in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTaxRegistration {
    /// The case's key (documents, history and webhook messages refer to it): `public_id`, unless
    /// that is another case's key already (docs/adr/0006-case-ids-per-provider.md).
    pub id: Uuid,
    /// The id the provider knows the case by (its `tax_registration_id`): unique per provider.
    pub public_id: Uuid,
    pub new_company: Option<(Uuid, NewClientCompany)>,
    pub company_id: Uuid,
    pub provider_id: Uuid,
    pub environment: domain::company::Environment,
    pub package: String,
    pub legal_form: String,
    pub status: String,
    /// The validated request as JSON (the domain model's serde form).
    pub record: serde_json::Value,
    /// The receiving tax office, when sent or determined.
    pub tax_office_number: Option<String>,
    /// The determination from the address (for operators when it needs confirmation).
    pub tax_office_lookup: Option<serde_json::Value>,
    pub created_at: OffsetDateTime,
    pub documents: Vec<DocumentRecord>,
    pub history: Vec<StatusChange>,
    /// The answer to keep for the request's `Idempotency-Key`, when it has one: written in the
    /// create's own transaction.
    pub idempotency: Option<IdempotentAnswer>,
}

/// A tax registration as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct TaxRegistrationRecord {
    /// The case's key, which operator routes take.
    pub id: Uuid,
    /// The id its provider knows it by (`tax_registration_id`); equals `id` unless the provider
    /// chose an id that another case had as its key.
    pub public_id: Uuid,
    pub company_id: Uuid,
    pub provider_id: Uuid,
    pub environment: domain::company::Environment,
    pub package: String,
    pub legal_form: String,
    pub status: String,
    pub record: serde_json::Value,
    pub tax_office_number: Option<String>,
    pub tax_office_lookup: Option<serde_json::Value>,
    /// The Steuernummer the tax office issued (once completed).
    pub tax_number: Option<String>,
    pub created_at: OffsetDateTime,
    pub documents: Vec<DocumentRecord>,
    pub history: Vec<StatusChange>,
}

/// Operator-set fields of a trade registration; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TradePatch {
    /// The receiving office (clears the candidates of an ambiguous address).
    pub trade_office: Option<serde_json::Value>,
    pub city_fee_cents: Option<i64>,
    pub is_paid: Option<bool>,
    /// `Some(None)` clears it.
    pub source_product: Option<Option<String>>,
    pub updated_at: Option<OffsetDateTime>,
}

/// A trade registration as a caller read it before preparing documents for it: a
/// [`Repository::patch_trade_registration`] that carries one applies only while the case is
/// still in this status with this receiving office.
#[derive(Debug, Clone, PartialEq)]
pub struct TradeCaseGuard {
    pub status: String,
    pub trade_office: Option<serde_json::Value>,
}

/// What [`Repository::patch_trade_registration`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum TradePatchOutcome {
    /// Applied; the storage keys of the documents the new ones replaced (to delete after the
    /// commit).
    Applied {
        replaced: Vec<String>,
    },
    /// The case moved or got another office since the guard's read; nothing was written.
    Stale,
    NotFound,
}

/// Fields a transition sets on its case, in the same write.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CaseFields {
    /// A tax registration's issued tax number (on completion).
    pub tax_number: Option<String>,
    /// Trade registration fields (the sandbox's demo office, fee and payment on completion).
    pub trade: Option<TradePatch>,
}

/// Which table a case is in (the domain's vocabulary).
pub use domain::case::CaseKind;

/// Whose tax registrations a lookup by the provider's id searches: those ids are unique per
/// provider only (docs/adr/0006-case-ids-per-provider.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseScope {
    /// The cases a provider created.
    Provider(Uuid),
    /// The case of a client company (a company has at most one tax registration).
    Company(Uuid),
}

/// How an id a provider chose for a new tax registration is in use already.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CaseIdUse {
    /// One of the provider's own tax registrations has it (409 `DUPLICATE_ID`).
    pub by_provider: bool,
    /// Some case (trade or tax, of any provider) has it as its key: the new case needs a key of
    /// its own.
    pub as_key: bool,
}

/// Filters of [`Repository::list_cases`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaseFilter {
    pub status: Option<String>,
    pub environment: Option<domain::company::Environment>,
}

/// A case in a listing.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseSummary {
    pub id: Uuid,
    /// The id its provider knows it by (always `id` for a trade registration).
    pub public_id: Uuid,
    pub company_id: Uuid,
    pub provider_id: Uuid,
    pub environment: domain::company::Environment,
    pub package: String,
    pub status: String,
    pub created_at: OffsetDateTime,
}

/// An entry of the operator-maintained trade office directory.
#[derive(Debug, Clone, PartialEq)]
pub struct TradeOfficeEntry {
    /// 8-digit AGS of a municipality or 9-digit Gemeindeverband key.
    pub key: String,
    pub name: String,
    pub address: Option<String>,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub website: Option<String>,
    pub updated_at: OffsetDateTime,
}

/// A trade registration as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct TradeRegistrationRecord {
    pub id: Uuid,
    pub company_id: Uuid,
    pub provider_id: Uuid,
    pub environment: domain::company::Environment,
    pub package: String,
    pub status: String,
    pub record: serde_json::Value,
    pub price_cents: i64,
    pub city_fee_cents: Option<i64>,
    pub is_paid: bool,
    pub trade_office: Option<serde_json::Value>,
    pub trade_office_candidates: Option<serde_json::Value>,
    /// The directory's entry (name and contact data) for `trade_office`'s key, read with the
    /// case; `None` when the directory has none.
    pub trade_office_entry: Option<TradeOfficeEntry>,
    pub source_product: Option<String>,
    pub created_at: OffsetDateTime,
    /// The client company's current name and legal form (read with the case).
    pub company_name: Option<String>,
    pub company_legal_form: Option<String>,
    pub documents: Vec<DocumentRecord>,
    pub history: Vec<StatusChange>,
    /// Owners whose identity an operator verified: (owner index, when), by owner index.
    pub identity_verifications: Vec<(i32, OffsetDateTime)>,
}

/// One record or removal of an owner's identity verification.
#[derive(Debug, Clone, PartialEq)]
pub struct VerificationLogEntry {
    /// `recorded` or `removed`.
    pub action: String,
    /// When the identity was verified (for `recorded`).
    pub verified_at: Option<OffsetDateTime>,
    pub actor: String,
    /// When the record or removal was made.
    pub at: OffsetDateTime,
}

/// A provider's webhook endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookEndpoint {
    pub id: Uuid,
    pub provider_id: Uuid,
    pub url: String,
    /// Event types subscribed to; `None`: all of them.
    pub events: Option<Vec<String>>,
    /// `whsec_...`
    pub secret: String,
    /// The secret before the last rotation, still signing until `previous_secret_expires_at`.
    pub previous_secret: Option<String>,
    pub previous_secret_expires_at: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
}

/// An endpoint's secrets as stored (sealed or not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSecrets {
    pub endpoint_id: Uuid,
    pub secret: String,
    pub previous_secret: Option<String>,
}

/// A message the worker has leased for one delivery attempt, with its endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedMessage {
    pub id: Uuid,
    pub case_id: Uuid,
    pub event_type: String,
    /// The body to send, exactly as signed.
    pub payload: String,
    /// Attempts made before this one.
    pub attempts: i32,
    pub endpoint: WebhookEndpoint,
}

/// What became of a message after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    Delivered,
    /// Failed; the next attempt is due at this time (microseconds since the epoch).
    RetryAt(i64),
    /// Failed, and the schedule is used up.
    Failed,
}

impl AttemptOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Delivered => "delivered",
            AttemptOutcome::RetryAt(_) => "retrying",
            AttemptOutcome::Failed => "failed",
        }
    }
}

/// One delivery attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookAttempt {
    pub message_id: Uuid,
    pub endpoint_id: Uuid,
    /// 1 for the first attempt.
    pub attempt: i32,
    pub at: OffsetDateTime,
    pub status_code: Option<i32>,
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// A delivery attempt as listed, with its message.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookAttemptRecord {
    pub seq: i64,
    pub attempt: WebhookAttempt,
    /// `delivered`, `retrying` or `failed`.
    pub outcome: String,
    pub event_type: String,
    pub case_id: Uuid,
    /// The message's state now: `pending`, `delivered` or `failed`.
    pub message_state: String,
    pub next_attempt_at: Option<OffsetDateTime>,
}

/// A webhook message as its endpoint's message list shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookMessageRecord {
    pub seq: i64,
    pub id: Uuid,
    pub event_type: String,
    pub case_id: Uuid,
    /// `pending`, `delivered` or `failed`.
    pub state: String,
    /// Attempts made so far.
    pub attempts: i32,
    pub created_at: OffsetDateTime,
    /// When a pending message is tried next.
    pub next_attempt_at: Option<OffsetDateTime>,
    /// When it was delivered or given up.
    pub finished_at: Option<OffsetDateTime>,
}

/// Microseconds since the epoch, the unit of the times the webhook worker compares.
pub fn micros(t: OffsetDateTime) -> i64 {
    i64::try_from(t.unix_timestamp_nanos() / 1000).unwrap_or(i64::MAX)
}

/// When a message is tried next: only a pending one is (the column keeps its last value).
pub fn next_attempt(state: &str, next_attempt_us: i64) -> Option<OffsetDateTime> {
    (state == "pending").then(|| from_micros(next_attempt_us))
}

/// The other way round.
pub fn from_micros(us: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(us) * 1000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// The outcome of claiming an idempotency key.
#[derive(Debug, Clone, PartialEq)]
pub enum IdempotencyClaim {
    /// The key is new (or its old record expired): the caller owns it and must complete or
    /// release it.
    Claimed,
    /// A request with this key is still being processed.
    InFlight,
    /// The key was used with a different request.
    Mismatch,
    /// The key was used with this request before: replay its response.
    Replay { status: u16, body: Vec<u8> },
}

/// The answer of a create made under an `Idempotency-Key`, completed in the create's own
/// transaction: the case and the answer a retry replays commit together. (Completing the key
/// afterwards leaves a window in which a crash keeps the case but leaves the key in flight; once
/// that claim is presumed abandoned, a retry would create the case a second time.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotentAnswer {
    pub scope: Uuid,
    pub key: String,
    pub status: u16,
    pub body: Vec<u8>,
}

/// How long idempotency records live, and after how long an unfinished one is presumed
/// abandoned (its instance died mid-request).
#[derive(Debug, Clone, Copy)]
pub struct IdempotencyTimes {
    pub now: OffsetDateTime,
    pub ttl: time::Duration,
    pub abandon_after: time::Duration,
}

/// Everything the service stores in its database.
#[async_trait]
pub trait Repository: Send + Sync + 'static {
    /// `"sqlite"` or `"postgres"`.
    fn backend(&self) -> &'static str;

    /// Cheap round trip, for health checks.
    async fn ping(&self) -> Result<()>;

    async fn create_provider(&self, name: &str) -> Result<Company>;
    async fn create_client_company(&self, new: NewClientCompany) -> Result<Company>;
    async fn get_company(&self, id: Uuid) -> Result<Option<Company>>;

    async fn create_operator(&self, name: &str) -> Result<Operator>;
    async fn get_operator(&self, id: Uuid) -> Result<Option<Operator>>;

    async fn insert_api_key(&self, key: &ApiKeyRecord) -> Result<()>;
    async fn find_api_key(&self, prefix: &str) -> Result<Option<ApiKeyRecord>>;
    /// Marks the key revoked; `false` when no unrevoked key has that prefix.
    async fn revoke_api_key(&self, prefix: &str, at: OffsetDateTime) -> Result<bool>;
    /// Stores a company's key unless the company holds `max` unrevoked keys already
    /// (`false`). Concurrent inserts for one company cannot pass the limit together.
    async fn insert_company_api_key(&self, key: &ApiKeyRecord, max: usize) -> Result<bool>;
    /// A company's unrevoked keys, oldest first (by creation, then prefix), after the key with
    /// prefix `after` (exclusive; a prefix that names no key gives nothing), at most `limit`.
    async fn list_api_keys(
        &self,
        company_id: Uuid,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<ApiKeySummary>>;
    /// Records that the key was used at `at` (callers write this now and then, not per request).
    async fn touch_api_key(&self, prefix: &str, at: OffsetDateTime) -> Result<()>;

    async fn claim_idempotency_key(
        &self,
        scope: Uuid,
        key: &str,
        request_hash: &[u8],
        times: IdempotencyTimes,
    ) -> Result<IdempotencyClaim>;
    async fn complete_idempotency_key(
        &self,
        scope: Uuid,
        key: &str,
        status: u16,
        body: &[u8],
    ) -> Result<()>;
    /// Forgets an in-flight claim (the request failed in a way a retry may fix).
    async fn release_idempotency_key(&self, scope: Uuid, key: &str) -> Result<()>;
    /// Answers kept for replay, (scope, key, stored body), ordered by scope and key, after
    /// `after` (exclusive), at most `limit`.
    async fn kept_answers(
        &self,
        after: Option<(Uuid, &str)>,
        limit: i64,
    ) -> Result<Vec<(Uuid, String, Vec<u8>)>>;
    /// Replaces a kept answer's stored body while it is still `was`; `false` when it is not
    /// (gone, or the key was claimed again after it expired).
    async fn replace_kept_answer(
        &self,
        scope: Uuid,
        key: &str,
        was: &[u8],
        new: &[u8],
    ) -> Result<bool>;

    /// Writes the case, its new company (if any), documents and history atomically. A company
    /// that already has a trade registration fails with [`StoreError::Conflict`] naming
    /// `company_id`.
    async fn create_trade_registration(&self, new: &NewTradeRegistration) -> Result<()>;
    async fn get_trade_registration(&self, id: Uuid) -> Result<Option<TradeRegistrationRecord>>;
    async fn get_document(&self, id: Uuid) -> Result<Option<DocumentRecord>>;
    /// Records the size and digest of a document rendered after its case was written (the file
    /// is already in the document store). `false` when the document is gone or was recorded
    /// already (a concurrent first download won; its file has the same bytes).
    async fn record_rendered(&self, id: Uuid, size: i64, sha256: &[u8]) -> Result<bool>;

    /// Whether a document record names this storage key (its file may still be unwritten: a
    /// document rendered on first download).
    async fn storage_key_known(&self, key: &str) -> Result<bool>;

    /// Writes the case, its new company (if any), documents and history atomically. A company
    /// that already has a tax registration fails with a [`StoreError::Conflict`] naming
    /// `company_id`; an id in use with one naming the primary key.
    async fn create_tax_registration(&self, new: &NewTaxRegistration) -> Result<()>;
    /// A tax registration by its key (operators, documents, the service's own jobs).
    async fn get_tax_registration(&self, id: Uuid) -> Result<Option<TaxRegistrationRecord>>;
    /// A tax registration by the id its provider knows it by, among the cases of `scope` only.
    async fn find_tax_registration(
        &self,
        scope: CaseScope,
        public_id: Uuid,
    ) -> Result<Option<TaxRegistrationRecord>>;
    /// Whether `public_id`, chosen by `provider` for a new tax registration, is one of its own
    /// cases' ids or some case's key (one statement).
    async fn tax_registration_id_use(&self, provider: Uuid, public_id: Uuid) -> Result<CaseIdUse>;

    /// Moves a case from `from` to `change.status`, records `change`, adds `documents`, sets
    /// `fields` and writes the webhook messages of the change, atomically; `false` (nothing
    /// written) when the case is not in `from` any more (another request won).
    async fn transition_case(
        &self,
        kind: CaseKind,
        id: Uuid,
        from: &str,
        change: &StatusChange,
        documents: &[DocumentRecord],
        fields: &CaseFields,
    ) -> Result<bool>;

    /// Records that `actor` verified owner `owner_index`'s identity at `verified_at` (the
    /// latest record wins), and logs it as made at `now`.
    async fn verify_identity(
        &self,
        case_id: Uuid,
        owner_index: i32,
        verified_at: OffsetDateTime,
        actor: &str,
        now: OffsetDateTime,
    ) -> Result<()>;

    /// Removes the record of owner `owner_index`'s verification (one made in error) and logs
    /// the removal by `actor` at `now`; `false` (and nothing logged) when there was none.
    async fn clear_identity_verification(
        &self,
        case_id: Uuid,
        owner_index: i32,
        actor: &str,
        now: OffsetDateTime,
    ) -> Result<bool>;

    /// Every record and removal of owner `owner_index`'s verification, oldest first.
    async fn identity_verification_log(
        &self,
        case_id: Uuid,
        owner_index: i32,
    ) -> Result<Vec<VerificationLogEntry>>;

    /// Assigns the tax office of a tax registration in `allowed_statuses` and replaces its
    /// documents of the types in `documents` with these, atomically. Returns the storage keys
    /// of the replaced documents (to delete after the commit), or `None` when the case is not
    /// in one of the statuses.
    async fn assign_tax_office(
        &self,
        id: Uuid,
        office_number: &str,
        allowed_statuses: &[&str],
        documents: &[DocumentRecord],
    ) -> Result<Option<Vec<String>>>;

    /// Applies an operator's changes to a trade registration and, in the same write, replaces
    /// its documents of the same owner and type as `documents` with these. With a `guard`,
    /// nothing is written unless the case is still as the guard read it.
    async fn patch_trade_registration(
        &self,
        id: Uuid,
        patch: &TradePatch,
        guard: Option<&TradeCaseGuard>,
        documents: &[DocumentRecord],
    ) -> Result<TradePatchOutcome>;

    /// Cases of one kind, oldest first (ids are time-ordered UUIDv7), after `after`
    /// (exclusive), optionally filtered by status and environment; at most `limit`.
    async fn list_cases(
        &self,
        kind: CaseKind,
        filter: &CaseFilter,
        after: Option<Uuid>,
        limit: i64,
    ) -> Result<Vec<CaseSummary>>;

    /// Tax registrations of `environment` in `validated` or `rejected` that have a tax office
    /// but no document of type `doc_type` (their XML waits), by id after `after` (exclusive);
    /// at most `limit`. One statement, filtered in the database.
    async fn tax_registrations_missing_document(
        &self,
        environment: domain::company::Environment,
        doc_type: &str,
        after: Option<Uuid>,
        limit: i64,
    ) -> Result<Vec<Uuid>>;

    /// Benchmark data: inserts `count` copies of the trade registration `template`, each with
    /// its own client company (a copy of the template's) and a copy of the template's status
    /// history, in transactions of a few thousand. Documents are not copied: a copy lists none.
    /// Returns `None` when there is no such template.
    async fn seed_trade_copies(&self, template: Uuid, count: u64) -> Result<Option<u64>>;

    /// Inserts or replaces a directory entry.
    async fn upsert_trade_office(&self, entry: &TradeOfficeEntry) -> Result<()>;
    async fn get_trade_office(&self, key: &str) -> Result<Option<TradeOfficeEntry>>;
    /// Entries by key, after `after` (exclusive), at most `limit`.
    async fn list_trade_offices(
        &self,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<TradeOfficeEntry>>;

    /// Adds a provider's webhook endpoint unless the provider has `limit` endpoints (not
    /// deleted) already (`false`). Concurrent creates cannot pass the limit together.
    async fn create_webhook_endpoint(
        &self,
        endpoint: &WebhookEndpoint,
        limit: usize,
    ) -> Result<bool>;
    /// A provider's endpoints (not deleted), oldest first.
    async fn list_webhook_endpoints(&self, provider_id: Uuid) -> Result<Vec<WebhookEndpoint>>;
    /// An endpoint that is not deleted.
    async fn get_webhook_endpoint(&self, id: Uuid) -> Result<Option<WebhookEndpoint>>;
    /// Deletes an endpoint and gives up its undelivered messages; `false` when there is no
    /// such endpoint (or it was deleted before).
    async fn delete_webhook_endpoint(&self, id: Uuid, at: OffsetDateTime) -> Result<bool>;
    /// Replaces the secret; the old one keeps signing until `previous_expires_at`.
    async fn rotate_webhook_secret(
        &self,
        id: Uuid,
        secret: &str,
        previous_expires_at: OffsetDateTime,
    ) -> Result<bool>;
    /// Every endpoint's stored secrets, deleted endpoints included (for re-sealing them with
    /// another key).
    async fn webhook_endpoint_secrets(&self) -> Result<Vec<StoredSecrets>>;
    /// Stores `new` as the endpoint's secrets if they are still `old`; `false` when they
    /// changed in between (a rotation), so the caller can read them again.
    async fn replace_webhook_endpoint_secrets(
        &self,
        old: &StoredSecrets,
        new: &StoredSecrets,
    ) -> Result<bool>;
    /// Leases up to `limit` due messages until `lease_until_us`: pending, due at `now_us`, not
    /// leased by another worker, and the oldest pending one of their case at their endpoint
    /// (so one case's events arrive in order). Safe to call from several instances at once.
    async fn claim_webhook_messages(
        &self,
        now_us: i64,
        lease_until_us: i64,
        limit: i64,
    ) -> Result<Vec<ClaimedMessage>>;
    /// Records an attempt and moves its message on (delivered, retry later, failed), releasing
    /// the lease.
    async fn record_webhook_attempt(
        &self,
        attempt: &WebhookAttempt,
        outcome: AttemptOutcome,
    ) -> Result<()>;
    /// Puts a `failed` message of `endpoint_id` back in the queue, due at `now_us`, for one
    /// more attempt (its attempt count is kept, so a failure ends it again). Answers
    /// `requeued` when it did, otherwise the message's state (`pending`, `delivered`, or
    /// `failed` when its endpoint has been deleted), `None` when the endpoint has no such
    /// message.
    async fn retry_webhook_message(
        &self,
        endpoint_id: Uuid,
        message_id: Uuid,
        now_us: i64,
    ) -> Result<Option<String>>;
    /// An endpoint's attempts, newest first, before `before_seq` (exclusive), at most `limit`.
    async fn list_webhook_attempts(
        &self,
        endpoint_id: Uuid,
        before_seq: Option<i64>,
        limit: i64,
    ) -> Result<Vec<WebhookAttemptRecord>>;
    /// An endpoint's messages, newest first, before `before_seq`, in `state` when given.
    async fn list_webhook_messages(
        &self,
        endpoint_id: Uuid,
        state: Option<&str>,
        before_seq: Option<i64>,
        limit: i64,
    ) -> Result<Vec<WebhookMessageRecord>>;
}

impl StoreError {
    /// Whether this is the one-registration-per-company constraint.
    pub fn is_company_conflict(&self) -> bool {
        matches!(self, StoreError::Conflict(c) if c.contains("company_id"))
    }

    /// Whether this is the one-id-per-provider constraint of tax registrations
    /// (`tax_registrations_public_id`; SQLite names its columns).
    pub fn is_public_id_conflict(&self) -> bool {
        matches!(self, StoreError::Conflict(c) if c.contains("public_id"))
    }

    /// Whether a case create was refused because its key is taken: the primary key of the tax
    /// registrations (SQLite names the column, PostgreSQL the constraint) or, on PostgreSQL, of
    /// `case_children`, which trade and tax cases share.
    pub fn is_case_key_conflict(&self) -> bool {
        matches!(self, StoreError::Conflict(c)
            if c.contains("tax_registrations.id") && !c.contains(',')
                || c.contains("tax_registrations_pkey")
                || c.contains("case_children"))
    }
}

/// Opens the database named by `url` (`sqlite://...` or `postgres://...`) and applies pending
/// migrations, with the default [`PoolSettings`].
pub async fn connect(url: &str) -> Result<Arc<dyn Repository>> {
    connect_with(url, PoolSettings::default()).await
}

/// [`connect`] with explicit timeouts.
pub async fn connect_with(url: &str, settings: PoolSettings) -> Result<Arc<dyn Repository>> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteRepository::connect(url, settings).await?))
    } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        Ok(Arc::new(PostgresRepository::connect(url, settings).await?))
    } else {
        Err(StoreError::Config(format!(
            "expected a sqlite:// or postgres:// URL, got {:?}",
            url.split(':').next().unwrap_or("")
        )))
    }
}

pub(crate) fn decode_kind(s: &str) -> Result<KeyKind> {
    KeyKind::parse(s).ok_or_else(|| StoreError::Corrupt(format!("unknown key kind {s:?}")))
}

/// The migrations of `migrator` before `version`, to build a database as an older release left
/// it (the migration tests of both dialects).
#[cfg(test)]
pub(crate) fn migrations_before(
    migrator: &sqlx::migrate::Migrator,
    version: i64,
) -> sqlx::migrate::Migrator {
    sqlx::migrate::Migrator {
        migrations: std::borrow::Cow::Owned(
            migrator
                .migrations
                .iter()
                .filter(|m| m.version < version)
                .cloned()
                .collect(),
        ),
        ..sqlx::migrate::Migrator::DEFAULT
    }
}

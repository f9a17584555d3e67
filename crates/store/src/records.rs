//! The values the store reads and writes.

use domain::auth::KeyKind;
use domain::case::DocumentType;
use domain::case_state::{CasePackage, CaseStatus};
use domain::lifecycle::{Actor, TaxStatus, TradeStatus};
use domain::tax::TaxLegalForm;
use domain::tax_core::TaxPackage;
use domain::trade::Package;
use domain::webhook::EventType;
use time::OffsetDateTime;
use uuid::Uuid;

#[cfg(doc)]
use crate::Repository;

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
    /// The environment a restricted key is limited to; `None`: unrestricted (operator keys
    /// always).
    pub environment: Option<domain::company::Environment>,
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
    /// As [`ApiKeyRecord::environment`].
    pub environment: Option<domain::company::Environment>,
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
    pub case_kind: CaseKind,
    pub owner_index: Option<i32>,
    pub doc_type: DocumentType,
    /// Display name, e.g. `GewA 1 - Erika Mustermann.pdf`.
    pub name: String,
    /// Key in the document store.
    pub storage_key: String,
    pub content_type: String,
    /// The file's size and SHA-256 digest; both `None` while the file is not rendered yet (the
    /// tax summary is rendered on its first download, see [`CaseStore::record_rendered`]).
    pub size: Option<i64>,
    pub sha256: Option<Vec<u8>>,
    pub created_at: OffsetDateTime,
}

impl DocumentRecord {
    /// [`DocumentRecord::sha256`] as 64 lowercase hex digits.
    pub fn sha256_hex(&self) -> Option<String> {
        self.sha256.as_deref().map(crate::rows::to_hex)
    }
}

/// One entry of a case's status history: a status step, or an operator's change of fields that
/// keeps the status (`changes` not empty, `previous_status` = `status`; no webhook event).
#[derive(Debug, Clone, PartialEq)]
pub struct StatusChange {
    pub status: CaseStatus,
    /// Of the same kind as `status`.
    pub previous_status: Option<CaseStatus>,
    /// Who took the step or made the change (recorded as `provider:<id>`, `operator:<id>` or
    /// `system`).
    pub actor: Actor,
    pub reason: Option<String>,
    pub at: OffsetDateTime,
    /// The fields the entry changed (empty for a status step). Written by the store itself, in
    /// the transaction of the change it records ([`CaseStore::patch_trade_registration`],
    /// [`CaseStore::assign_tax_office`], [`CaseStore::verify_identity`],
    /// [`CaseStore::clear_identity_verification`]); ignored elsewhere on writes.
    pub changes: Vec<FieldChange>,
    /// Filled when read: the operator's name for `operator:<id>`, the provider company's for
    /// `provider:<id>`; `None` for `system` (and an actor whose account is unknown). Ignored on
    /// writes.
    pub actor_name: Option<String>,
}

impl StatusChange {
    /// The first entry of a case's history: `provider` created it in `status`.
    pub fn created(status: impl Into<CaseStatus>, provider: Uuid, at: OffsetDateTime) -> Self {
        Self::step(status, None, Actor::Provider(provider), None, at)
    }

    /// A status step from `previous_status` to `status`, taken by `actor`.
    pub fn step(
        status: impl Into<CaseStatus>,
        previous_status: Option<CaseStatus>,
        actor: Actor,
        reason: Option<String>,
        at: OffsetDateTime,
    ) -> Self {
        Self {
            status: status.into(),
            previous_status,
            actor,
            reason,
            at,
            changes: Vec::new(),
            actor_name: None,
        }
    }

    /// Whether the entry records changed fields rather than a status step.
    pub fn is_field_change(&self) -> bool {
        !self.changes.is_empty()
    }
}

/// One field of a case an operator changed, its values as a clerk reads them: a fee as
/// `26.00`, a payment as `true`/`false`, a trade office as its key and name
/// (`072355007 Verbandsgemeinde Trier-Land`), a tax office as its number and the directory's
/// name (`2115 Finanzamt Flensburg`), a time in RFC 3339 (UTC). `None`: the field had (or has)
/// no value.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FieldChange {
    /// The field as the API names it: `city_fee`, `is_paid`, `trade_office`,
    /// `trade_office.municipality_key`, `source_product`, `tax_office`,
    /// `owners[<i>].identity_verified_at`.
    pub field: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// What every case has, whatever its kind, declared once (issue 54.1): each kind's new- and
/// read-record carries it as `head` beside its own content (meilisearch's `Task` with its
/// per-kind content), and reads its fields through it (`Deref`, so `record.status` is the
/// head's).
#[derive(Debug, Clone, PartialEq)]
pub struct CaseHead<S, P> {
    /// The case's key: documents, history and webhook messages refer to it.
    pub id: Uuid,
    pub company_id: Uuid,
    pub provider_id: Uuid,
    pub environment: domain::company::Environment,
    pub package: P,
    pub status: S,
    /// The validated request as JSON (the domain model's serde form).
    pub record: serde_json::Value,
    pub created_at: OffsetDateTime,
    pub documents: Vec<DocumentRecord>,
    pub history: Vec<StatusChange>,
}

/// The head of a trade registration.
pub type TradeHead = CaseHead<TradeStatus, Package>;

/// The head of a tax registration.
pub type TaxHead = CaseHead<TaxStatus, TaxPackage>;

/// Everything a trade registration create writes, in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTradeRegistration {
    pub head: TradeHead,
    /// The client company to create with it (with its id), when the request named none.
    pub new_company: Option<(Uuid, NewClientCompany)>,
    /// The answer to keep for the request's `Idempotency-Key`, when it has one: written in the
    /// create's own transaction.
    pub idempotency: Option<IdempotentAnswer>,
    pub price_cents: i64,
    /// The receiving trade office as determined from the establishment's address.
    pub trade_office: Option<serde_json::Value>,
    /// When the address did not decide the municipality: the candidate offices.
    pub trade_office_candidates: Option<serde_json::Value>,
}

/// Everything a tax registration create writes, in one transaction. Its head's `id` is the
/// case's key: `public_id`, unless that is another case's key already
/// (docs/adr/0006-case-ids-per-provider.md).
#[derive(Debug, Clone, PartialEq)]
pub struct NewTaxRegistration {
    pub head: TaxHead,
    /// As a trade registration's ([`NewTradeRegistration::new_company`]).
    pub new_company: Option<(Uuid, NewClientCompany)>,
    /// As a trade registration's ([`NewTradeRegistration::idempotency`]).
    pub idempotency: Option<IdempotentAnswer>,
    /// The id the provider knows the case by (its `tax_registration_id`): unique per provider.
    pub public_id: Uuid,
    pub legal_form: TaxLegalForm,
    /// The receiving tax office, when sent or determined.
    pub tax_office_number: Option<String>,
    /// The determination from the address (for operators when it needs confirmation).
    pub tax_office_lookup: Option<serde_json::Value>,
}

/// A tax registration as stored; its head's `id` is the case's key, which operator routes take.
#[derive(Debug, Clone, PartialEq)]
pub struct TaxRegistrationRecord {
    pub head: TaxHead,
    /// The id its provider knows it by (`tax_registration_id`); equals `id` unless the provider
    /// chose an id that another case had as its key.
    pub public_id: Uuid,
    pub legal_form: TaxLegalForm,
    pub tax_office_number: Option<String>,
    pub tax_office_lookup: Option<serde_json::Value>,
    /// The Steuernummer the tax office issued (once completed).
    pub tax_number: Option<String>,
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
/// [`CaseStore::patch_trade_registration`] that carries one applies only while the case is
/// still in this status with this receiving office.
#[derive(Debug, Clone, PartialEq)]
pub struct TradeCaseGuard {
    pub status: TradeStatus,
    pub trade_office: Option<serde_json::Value>,
}

/// What [`CaseStore::patch_trade_registration`] did.
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

/// Filters of [`CaseStore::list_cases`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaseFilter {
    /// Of the listed kind.
    pub status: Option<CaseStatus>,
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
    pub package: CasePackage,
    pub status: CaseStatus,
    pub created_at: OffsetDateTime,
}

/// Whose cases a [`CaseListStore::list_case_page`] lists: the caller's restriction, as opposed
/// to the filters it asked for ([`CaseListFilter`]). A struct, so that further restrictions of
/// a key (an environment) can join the owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaseListScope {
    pub owner: CaseOwner,
}

/// The cases a caller sees (docs/api/authentication.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseOwner {
    /// Every case (operators).
    All,
    /// The cases a provider created.
    Provider(Uuid),
    /// The cases of one client company.
    Company(Uuid),
}

/// The filters a caller chose for [`CaseListStore::list_case_page`]; each one left out matches
/// every case.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaseListFilter {
    pub company_id: Option<Uuid>,
    /// Equal to the stored request's `client_reference`.
    pub client_reference: Option<String>,
    /// Of the listed kind.
    pub status: Option<CaseStatus>,
    pub environment: Option<domain::company::Environment>,
    /// Created at or after.
    pub created_after: Option<OffsetDateTime>,
    /// Created before.
    pub created_before: Option<OffsetDateTime>,
    /// Created by this provider (operators' lists; a provider's own list has it as its scope).
    pub provider_id: Option<Uuid>,
    /// A trade registration's receiving office (the key of its `trade_office`), a tax
    /// registration's tax office (its `tax_office_number`).
    pub office: Option<String>,
    pub search: Option<CaseSearch>,
    /// Oldest first instead of newest first; the cursor is then the position the page starts
    /// after instead of before.
    pub oldest_first: bool,
}

/// What an operator searches the cases by ([`CaseListFilter::search`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseSearch {
    /// The case's key or the id its provider knows it by (a tax registration's `public_id`).
    Id(Uuid),
    /// Five digits: the postal code of a trade registration's establishment
    /// (`registered_office.zip`) or of a tax registration's company address (`address.zip`),
    /// as the request gave it.
    PostalCode(String),
    /// Words, each of which the case's text contains, ignoring case (Unicode's lower case):
    /// the company name as filed, the client reference, and the names of the case's people
    /// (a trade registration's owners' first, last and birth names; a tax registration's
    /// directors' first, middle and last names, or its partners' names). Words of fewer than
    /// three characters are left out ([`CaseSearch::words`]); at least one is longer.
    Text(String),
}

impl CaseSearch {
    /// The fewest characters a word of a [`CaseSearch::Text`] must have to count.
    pub const MIN_WORD: usize = 3;
    /// The most characters a search may have.
    pub const MAX_LEN: usize = 200;

    /// What a search box's text asks for, trimmed: a UUID is an id, five digits a postal
    /// code, anything else words. `None` when it is none of these: empty, longer than
    /// [`CaseSearch::MAX_LEN`], with a control character, or without a word of
    /// [`CaseSearch::MIN_WORD`] characters.
    pub fn parse(text: &str) -> Option<CaseSearch> {
        let text = text.trim();
        if text.chars().count() > Self::MAX_LEN || text.chars().any(char::is_control) {
            return None;
        }
        if let Ok(id) = Uuid::try_parse(text) {
            return Some(CaseSearch::Id(id));
        }
        if text.len() == 5 && text.bytes().all(|b| b.is_ascii_digit()) {
            return Some(CaseSearch::PostalCode(text.to_owned()));
        }
        let search = CaseSearch::Text(text.to_owned());
        (!search.words().is_empty()).then_some(search)
    }

    /// The words a [`CaseSearch::Text`] is matched by: separated by white space, each of at
    /// least [`CaseSearch::MIN_WORD`] characters, without repetitions; none for the other kinds.
    pub fn words(&self) -> Vec<&str> {
        let CaseSearch::Text(text) = self else {
            return Vec::new();
        };
        let mut words: Vec<&str> = Vec::new();
        for word in text.split_whitespace() {
            if word.chars().count() >= Self::MIN_WORD && !words.contains(&word) {
                words.push(word);
            }
        }
        words
    }
}

/// Where a page of [`CaseListStore::list_case_page`] starts (exclusively).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseCursor {
    /// A [`CaseListItem::position`] (the last of the previous page).
    Position(Uuid),
    /// The position of the case with this key (the last of the previous page's `id`s): a tax
    /// registration's position is not its key. A key no case of the kind has ends the list (an
    /// empty page) for a tax registration; for a trade registration, whose position is its
    /// key, it is the same as [`CaseCursor::Position`].
    Case(Uuid),
}

/// The deliveries of one webhook message of a case ([`CaseListStore::list_case_deliveries`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CaseDelivery {
    pub message_id: Uuid,
    pub endpoint_id: Uuid,
    /// The endpoint's URL (also of an endpoint deleted since).
    pub endpoint_url: String,
    /// Whether the endpoint has been deleted (its undelivered messages were given up).
    pub endpoint_deleted: bool,
    pub event_type: EventType,
    /// As the outbox has it.
    pub state: MessageState,
    /// Attempts made so far.
    pub attempts: i32,
    /// The HTTP status the endpoint answered the last attempt with (`None`: none made, or
    /// no answer: refused, timed out).
    pub last_status_code: Option<i32>,
    /// Why the last attempt failed, when it did without an answer or with an error status.
    pub last_error: Option<String>,
    pub last_attempt_at: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
    /// When a pending message is tried next.
    pub next_attempt_at: Option<OffsetDateTime>,
    /// When it was delivered or given up.
    pub finished_at: Option<OffsetDateTime>,
}

/// A case in a provider's or client company's list.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseListItem {
    /// Where the case is in the list's order (a trade registration's id, a tax registration's
    /// list key): a page's last `position` is where the next page starts.
    pub position: Uuid,
    /// The case's key.
    pub id: Uuid,
    /// The id its provider knows it by (always `id` for a trade registration).
    pub public_id: Uuid,
    pub company_id: Uuid,
    pub company_name: String,
    pub provider_id: Uuid,
    pub environment: domain::company::Environment,
    pub package: CasePackage,
    pub status: CaseStatus,
    pub client_reference: Option<String>,
    pub created_at: OffsetDateTime,
    /// A trade registration's receiving office (its key and name as determined), a tax
    /// registration's tax office (its number; `office_name` is `None`).
    pub office_key: Option<String>,
    pub office_name: Option<String>,
    /// A tax registration's legal form; `None` for trade.
    pub legal_form: Option<TaxLegalForm>,
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
    pub head: TradeHead,
    pub price_cents: i64,
    pub city_fee_cents: Option<i64>,
    pub is_paid: bool,
    pub trade_office: Option<serde_json::Value>,
    pub trade_office_candidates: Option<serde_json::Value>,
    /// The directory's entry (name and contact data) for `trade_office`'s key, read with the
    /// case; `None` when the directory has none.
    pub trade_office_entry: Option<TradeOfficeEntry>,
    pub source_product: Option<String>,
    /// The client company's current name and legal form (read with the case).
    pub company_name: Option<String>,
    pub company_legal_form: Option<String>,
    /// Owners whose identity an operator verified: (owner index, when), by owner index.
    pub identity_verifications: Vec<(i32, OffsetDateTime)>,
}

/// Each kind's records read the fields of their [`CaseHead`] as their own.
macro_rules! head_of {
    ($($record:ty => $head:ty),* $(,)?) => {$(
        impl std::ops::Deref for $record {
            type Target = $head;
            fn deref(&self) -> &$head {
                &self.head
            }
        }
        impl std::ops::DerefMut for $record {
            fn deref_mut(&mut self) -> &mut $head {
                &mut self.head
            }
        }
    )*};
}

head_of!(
    NewTradeRegistration => TradeHead,
    TradeRegistrationRecord => TradeHead,
    NewTaxRegistration => TaxHead,
    TaxRegistrationRecord => TaxHead,
);

/// One record or removal of an owner's identity verification.
#[derive(Debug, Clone, PartialEq)]
pub struct VerificationLogEntry {
    /// `recorded` or `removed`.
    pub action: String,
    /// When the identity was verified (for `recorded`).
    pub verified_at: Option<OffsetDateTime>,
    pub actor: Actor,
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
    /// Its circuit breaker (docs/adr/0029-fair-webhook-delivery.md).
    pub circuit: EndpointCircuit,
}

/// An endpoint's circuit breaker as stored: failed attempts in a row, and until when no
/// attempt is made (`None`: closed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndpointCircuit {
    pub consecutive_failures: i32,
    /// Microseconds since the epoch.
    pub open_until_us: Option<i64>,
}

/// What a circuit lets through at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CircuitState {
    /// Attempts as the limits allow.
    Closed,
    /// None until `open_until_us`.
    Open,
    /// The cool-down is over: one attempt at a time, whose outcome closes or opens it.
    HalfOpen,
}

impl CircuitState {
    pub fn as_str(self) -> &'static str {
        match self {
            CircuitState::Closed => "closed",
            CircuitState::Open => "open",
            CircuitState::HalfOpen => "half_open",
        }
    }
}

impl EndpointCircuit {
    /// The state at `now_us`.
    pub fn state(&self, now_us: i64) -> CircuitState {
        match self.open_until_us {
            None => CircuitState::Closed,
            Some(until) if until > now_us => CircuitState::Open,
            Some(_) => CircuitState::HalfOpen,
        }
    }
}

/// How a failed attempt moves its endpoint's circuit: open (until `open_until_us`) once it is
/// the `open_after`th failure in a row or later (a failed half-open attempt opens it again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CircuitRule {
    pub open_after: i32,
    pub open_until_us: i64,
}

/// How many attempts a claim may lease: `total` now (this worker's free places), and so that
/// no endpoint has more than `per_endpoint` and no provider more than `per_provider` in
/// flight, leases of every instance counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimLimits {
    pub total: i64,
    pub per_endpoint: i64,
    pub per_provider: i64,
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
    pub event_type: EventType,
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
    pub event_type: EventType,
    pub case_id: Uuid,
    /// The message's state now.
    pub message_state: MessageState,
    pub next_attempt_at: Option<OffsetDateTime>,
}

/// A webhook message as its endpoint's message list shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookMessageRecord {
    pub seq: i64,
    pub id: Uuid,
    pub event_type: EventType,
    pub case_id: Uuid,
    pub state: MessageState,
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
pub fn next_attempt(state: MessageState, next_attempt_us: i64) -> Option<OffsetDateTime> {
    (state == MessageState::Pending).then(|| from_micros(next_attempt_us))
}

/// Where a webhook message stands in the outbox (`webhook_messages.state`, whose `CHECK`
/// allows these three since the outbox's first migration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageState {
    /// Waiting for its next attempt.
    Pending,
    Delivered,
    /// Given up: the schedule is used up, or its endpoint was deleted.
    Failed,
}

impl MessageState {
    pub const ALL: [MessageState; 3] = [
        MessageState::Pending,
        MessageState::Delivered,
        MessageState::Failed,
    ];

    /// The stored and API name.
    pub fn as_str(self) -> &'static str {
        match self {
            MessageState::Pending => "pending",
            MessageState::Delivered => "delivered",
            MessageState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == s)
    }
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

/// Whose events a listing shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventScope {
    /// A provider's: the events of every case it created.
    Provider(Uuid),
    /// A client company's: the events of its cases.
    Company(Uuid),
    /// Every provider's (operators).
    All,
}

/// What a listing of events narrows to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventFilter {
    /// One event type (`registration.completed`).
    pub event_type: Option<EventType>,
    /// One case, by the id its provider knows it by.
    pub case_id: Option<Uuid>,
    pub environment: Option<domain::company::Environment>,
}

/// An entry of the event log.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    /// The log's order (the cursor of a listing).
    pub seq: i64,
    pub id: Uuid,
    /// The id the provider knows the case by.
    pub case_id: Uuid,
    pub company_id: Uuid,
    pub environment: domain::company::Environment,
    pub event_type: EventType,
    /// The body the event's webhook messages carry, exactly.
    pub payload: String,
    pub created_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_is_read_by_its_form() {
        let id = Uuid::now_v7();
        assert_eq!(
            CaseSearch::parse(&format!(" {id} ")),
            Some(CaseSearch::Id(id))
        );
        let upper = id.to_string().to_uppercase();
        assert_eq!(CaseSearch::parse(&upper), Some(CaseSearch::Id(id)));
        assert_eq!(
            CaseSearch::parse("10115"),
            Some(CaseSearch::PostalCode("10115".into()))
        );
        // Not five digits: words (of which one must have three characters).
        assert_eq!(
            CaseSearch::parse("1011"),
            Some(CaseSearch::Text("1011".into()))
        );
        assert_eq!(
            CaseSearch::parse("101150"),
            Some(CaseSearch::Text("101150".into()))
        );
        assert_eq!(
            CaseSearch::parse("１０１１５"),
            Some(CaseSearch::Text("１０１１５".into())),
            "digits of other scripts are not a postal code"
        );
        for none in [
            "",
            "  ",
            "ab",
            "a b cd",
            "ab\0c",
            "abc\u{7}",
            &"x".repeat(201),
        ] {
            assert_eq!(CaseSearch::parse(none), None, "{none:?}");
        }
        let s = CaseSearch::parse("  Café am  See am café  ").unwrap();
        assert_eq!(s, CaseSearch::Text("Café am  See am café".into()));
        assert_eq!(s.words(), ["Café", "See", "café"]);
        assert_eq!(CaseSearch::parse("Łuk").unwrap().words(), ["Łuk"]);
        assert!(CaseSearch::PostalCode("10115".into()).words().is_empty());
        assert!(CaseSearch::parse(&"x".repeat(200)).is_some());
    }
}

/// A console session as stored (issue 53.1): the token's SHA-256, never the token.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsoleSessionRecord {
    pub token_hash: Vec<u8>,
    pub operator_id: Uuid,
    pub operator_name: String,
    pub key_prefix: String,
    pub csrf: String,
    /// Microseconds since the epoch: sign-in, and the last request (written at most once a
    /// minute).
    pub started_us: i64,
    pub seen_us: i64,
    /// The messages the next page shows once (JSON).
    pub flash: Option<String>,
}

/// What the pruning job removes: rows older than these.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PruneBefore {
    /// Events of the log created before.
    pub events: OffsetDateTime,
    /// Webhook messages delivered or given up before (with their attempts).
    pub webhook_messages: OffsetDateTime,
    /// Idempotency answers created before.
    pub idempotency_keys: OffsetDateTime,
    /// Console sessions last seen before, or started before (microseconds).
    pub sessions_seen_us: i64,
    pub sessions_started_us: i64,
}

/// What one pruning run removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    pub events: u64,
    pub webhook_messages: u64,
    pub idempotency_keys: u64,
    pub console_sessions: u64,
}

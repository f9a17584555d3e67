//! The [`Repository`] trait: everything the service stores in its database.

use async_trait::async_trait;
use domain::case::DocumentType;
use domain::case_state::CaseStatus;
use domain::company::Company;
use domain::lifecycle::{Actor, TaxStatus};
use time::OffsetDateTime;
use uuid::Uuid;

#[cfg(doc)]
use crate::StoreError;
use crate::{
    ApiKeyRecord, ApiKeySummary, AttemptOutcome, CaseCursor, CaseDelivery, CaseFields, CaseFilter,
    CaseIdUse, CaseKind, CaseListFilter, CaseListItem, CaseListScope, CaseScope, CaseSummary,
    ClaimedMessage, DocumentRecord, EventFilter, EventRecord, EventScope, IdempotencyClaim,
    IdempotencyTimes, NewClientCompany, NewTaxRegistration, NewTradeRegistration, Operator, Result,
    StatusChange, StoredSecrets, TaxRegistrationRecord, TradeCaseGuard, TradeOfficeEntry,
    TradePatch, TradePatchOutcome, TradeRegistrationRecord, VerificationLogEntry, WebhookAttempt,
    WebhookAttemptRecord, WebhookEndpoint, WebhookMessageRecord,
};

/// Everything the service stores in its database: the sum of the role traits below, each
/// implemented once for both backends where its SQL lives (`sql/<role>.rs`), so a method is
/// written twice: declared here, implemented there (docs/adr/0034-store-role-traits.md).
/// Callers hold an `Arc<dyn Repository>`; a role's methods need no import on it.
pub trait Repository:
    AccountStore + InstanceStore + CaseStore + CaseListStore + EventStore + WebhookStore + ObserveStore
{
}

impl<T> Repository for T where
    T: AccountStore
        + InstanceStore
        + CaseStore
        + CaseListStore
        + EventStore
        + WebhookStore
        + ObserveStore
{
}

/// Companies, operators, API keys, idempotency keys and the trade office directory (`sql/accounts.rs`).
#[async_trait]
pub trait AccountStore: Send + Sync + 'static {
    /// `"sqlite"` or `"postgres"`.
    fn backend(&self) -> &'static str;

    /// Cheap round trip, for health checks.
    async fn ping(&self) -> Result<()>;

    async fn create_provider(&self, name: &str) -> Result<Company>;

    async fn create_client_company(&self, new: NewClientCompany) -> Result<Company>;

    async fn get_company(&self, id: Uuid) -> Result<Option<Company>>;

    /// Provider companies, oldest first, after the one with id `after` (exclusive), at most
    /// `limit`.
    async fn list_providers(&self, after: Option<Uuid>, limit: i64) -> Result<Vec<Company>>;

    async fn create_operator(&self, name: &str) -> Result<Operator>;

    async fn get_operator(&self, id: Uuid) -> Result<Option<Operator>>;

    /// The bytes of every document of `provider`'s cases, cancelled ones too (its storage
    /// quota's count).
    async fn provider_document_bytes(&self, provider: Uuid) -> Result<i64>;

    /// Operators, oldest first, after the one with id `after` (exclusive), at most `limit`.
    async fn list_operators(&self, after: Option<Uuid>, limit: i64) -> Result<Vec<Operator>>;

    async fn insert_api_key(&self, key: &ApiKeyRecord) -> Result<()>;

    async fn find_api_key(&self, prefix: &str) -> Result<Option<ApiKeyRecord>>;

    /// Marks the key revoked; `false` when no unrevoked key has that prefix.
    async fn revoke_api_key(&self, prefix: &str, at: OffsetDateTime) -> Result<bool>;

    /// Stores a company's key unless the company holds `max` unrevoked keys already
    /// (`false`). Concurrent inserts for one company cannot pass the limit together.
    async fn insert_company_api_key(&self, key: &ApiKeyRecord, max: usize) -> Result<bool>;

    /// A company's unrevoked keys, oldest first (by creation, then prefix), after the key with
    /// prefix `after` (exclusive; a prefix that names no key gives nothing), at most `limit`;
    /// with `environment`, only the keys restricted to it.
    async fn list_api_keys(
        &self,
        company_id: Uuid,
        environment: Option<domain::company::Environment>,
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

    /// Inserts or replaces a directory entry.
    async fn upsert_trade_office(&self, entry: &TradeOfficeEntry) -> Result<()>;

    async fn get_trade_office(&self, key: &str) -> Result<Option<TradeOfficeEntry>>;

    /// Entries by key, after `after` (exclusive), at most `limit`.
    async fn list_trade_offices(
        &self,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<TradeOfficeEntry>>;
}

/// Console sessions, leases, the instances alive and the retention (`sql/instances.rs`).
#[async_trait]
pub trait InstanceStore: Send + Sync + 'static {
    /// A console session opened (issue 53.1).
    async fn insert_console_session(&self, session: &crate::ConsoleSessionRecord) -> Result<()>;

    /// The session of a token's SHA-256.
    async fn get_console_session(
        &self,
        token_hash: &[u8],
    ) -> Result<Option<crate::ConsoleSessionRecord>>;

    /// Records the session's last request (microseconds since the epoch).
    async fn touch_console_session(&self, token_hash: &[u8], seen_us: i64) -> Result<()>;

    /// Replaces the messages the session's next page shows (JSON), or clears them.
    async fn set_console_flash(&self, token_hash: &[u8], flash: Option<String>) -> Result<()>;

    async fn delete_console_session(&self, token_hash: &[u8]) -> Result<()>;

    /// Takes the lease `name` for `holder` until `until_us` unless another holds it past
    /// `now_us`: whether it did (issue 53.4).
    async fn take_lease(
        &self,
        name: &str,
        holder: Uuid,
        now_us: i64,
        until_us: i64,
    ) -> Result<bool>;

    /// Records `instance` alive at `now_us`; the instances seen since `live_since_us`.
    async fn heartbeat(&self, instance: Uuid, now_us: i64, live_since_us: i64) -> Result<i64>;

    /// An instance that stops.
    async fn forget_instance(&self, instance: Uuid) -> Result<()>;

    /// Removes what is past its retention (issue 53.4).
    async fn prune(&self, before: &crate::PruneBefore) -> Result<crate::Pruned>;
}

/// The cases: their create, reads, documents, steps and changes (`sql/cases.rs`).
#[async_trait]
pub trait CaseStore: Send + Sync + 'static {
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

    /// The id the provider knows the company's case of `kind` by (the trade registration's id,
    /// the tax registration's public id), unless it is cancelled: the case that makes a new
    /// create for the company 409 `COMPANY_ALREADY_REGISTERED`.
    async fn open_case_of_company(&self, kind: CaseKind, company_id: Uuid) -> Result<Option<Uuid>>;

    /// Moves a case from `from` to `change.status` (of the same kind), records `change`, adds `documents`, sets
    /// `fields` and writes the webhook messages of the change, atomically; `false` (nothing
    /// written) when the case is not in `from` any more (another request won).
    async fn transition_case(
        &self,
        id: Uuid,
        from: CaseStatus,
        change: &StatusChange,
        documents: &[DocumentRecord],
        fields: &CaseFields,
    ) -> Result<bool>;

    /// Records that `actor` verified owner `owner_index`'s identity at `verified_at` (the
    /// latest record wins), and logs it as made at `now`; when the owner's time changes, a
    /// history entry by `actor` at `now` names it (`owners[<i>].identity_verified_at`, the old
    /// and new time), in the same transaction.
    async fn verify_identity(
        &self,
        case_id: Uuid,
        owner_index: i32,
        verified_at: OffsetDateTime,
        actor: Actor,
        now: OffsetDateTime,
    ) -> Result<()>;

    /// Removes the record of owner `owner_index`'s verification (one made in error) and logs
    /// the removal by `actor` at `now`, with a history entry naming the removed time, in one
    /// transaction; `false` (and nothing logged) when there was none.
    async fn clear_identity_verification(
        &self,
        case_id: Uuid,
        owner_index: i32,
        actor: Actor,
        now: OffsetDateTime,
    ) -> Result<bool>;

    /// Every record and removal of owner `owner_index`'s verification, oldest first.
    async fn identity_verification_log(
        &self,
        case_id: Uuid,
        owner_index: i32,
    ) -> Result<Vec<VerificationLogEntry>>;

    /// Assigns the tax office of a tax registration in `allowed_statuses` and replaces its
    /// documents of the types in `documents` with these, atomically; when the office changes,
    /// with a history entry by `actor` naming the old and the new one (`tax_office`). Returns
    /// the storage keys of the replaced documents (to delete after the commit), or `None` when
    /// the case is not in one of the statuses.
    async fn assign_tax_office(
        &self,
        id: Uuid,
        office_number: &str,
        allowed_statuses: &[TaxStatus],
        documents: &[DocumentRecord],
        actor: Actor,
    ) -> Result<Option<Vec<String>>>;

    /// Applies `actor`'s changes to a trade registration and, in the same write, replaces its
    /// documents of the same owner and type as `documents` with these, and records the fields
    /// whose value changed in a history entry by `actor` (none when nothing changed). With a
    /// `guard`, nothing is written unless the case is still as the guard read it.
    async fn patch_trade_registration(
        &self,
        id: Uuid,
        patch: &TradePatch,
        guard: Option<&TradeCaseGuard>,
        documents: &[DocumentRecord],
        actor: Actor,
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
        doc_type: DocumentType,
        after: Option<Uuid>,
        limit: i64,
    ) -> Result<Vec<Uuid>>;

    /// Benchmark data: inserts `count` copies of the trade registration `template`, each with
    /// its own client company (a copy of the template's) and a copy of the template's status
    /// history, in transactions of a few thousand. Documents are not copied: a copy lists none.
    /// Returns `None` when there is no such template.
    async fn seed_trade_copies(&self, template: Uuid, count: u64) -> Result<Option<u64>>;
}

/// The pages and counts of the case lists, and a case's deliveries (`sql/lists.rs`).
#[async_trait]
pub trait CaseListStore: Send + Sync + 'static {
    /// One page of the cases of one kind that `scope` sees and `filter` selects, newest first
    /// (by [`CaseListItem::position`]; oldest first with [`CaseListFilter::oldest_first`]),
    /// starting at `cursor` (exclusive: the previous page's last item, by its position or its
    /// case key, see [`CaseCursor`]): newest first the cases before it, oldest first those
    /// after it; at most `limit`. One statement, served by an index whatever the filters (see
    /// docs/adr/0024-operator-case-search.md).
    async fn list_case_page(
        &self,
        kind: CaseKind,
        scope: CaseListScope,
        filter: &CaseListFilter,
        cursor: Option<CaseCursor>,
        limit: i64,
    ) -> Result<Vec<CaseListItem>>;

    /// The cases of one kind that `filter` selects, counted by status: every status of the
    /// kind, in its lifecycle's order (`TradeStatus::ALL`, `TaxStatus::ALL`), those without a
    /// case with 0. Only `filter`'s `environment`, `provider_id` and `office` are honoured
    /// (the rest of it is ignored), so that an index alone serves the count.
    async fn count_cases_by_status(
        &self,
        kind: CaseKind,
        filter: &CaseListFilter,
    ) -> Result<Vec<(CaseStatus, i64)>>;

    /// The webhook messages of a case (by its key), newest first, at most `limit`, each with
    /// its endpoint and its last attempt.
    async fn list_case_deliveries(&self, case_id: Uuid, limit: i64) -> Result<Vec<CaseDelivery>>;
}

/// The event log (`sql/event_log.rs`).
#[async_trait]
pub trait EventStore: Send + Sync + 'static {
    /// The event log of `scope` narrowed by `filter`, newest first, after the caller's own
    /// event `before` (exclusive; an event outside `scope` or gone gives an empty page), at
    /// most `limit`.
    async fn list_events(
        &self,
        scope: EventScope,
        filter: &EventFilter,
        before: Option<Uuid>,
        limit: i64,
    ) -> Result<Vec<EventRecord>>;
}

/// Webhook endpoints, their outbox and attempts (`sql/webhooks.rs`).
#[async_trait]
pub trait WebhookStore: Send + Sync + 'static {
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

    /// Leases up to `limits.total` due messages until `lease_until_us`: pending, due at
    /// `now_us`, not leased by another worker, and the oldest pending one of their case at
    /// their endpoint (so one case's events arrive in order); none of an endpoint whose
    /// circuit is open at `now_us`, one at a time of one that is half open, and no more than
    /// the limits in flight per endpoint and provider allow (leases of every instance
    /// counted). Round robin: the provider (and within it the endpoint) with fewest in flight
    /// first, then the oldest. Safe to call from several instances at once
    /// (docs/adr/0029-fair-webhook-delivery.md).
    async fn claim_webhook_messages(
        &self,
        now_us: i64,
        lease_until_us: i64,
        limits: crate::ClaimLimits,
    ) -> Result<Vec<ClaimedMessage>>;

    /// Records an attempt and moves its message on (delivered, retry later, failed), releasing
    /// the lease, and its endpoint's circuit as `rule` says (a delivery closes it); the
    /// circuit after it.
    async fn record_webhook_attempt(
        &self,
        attempt: &WebhookAttempt,
        outcome: AttemptOutcome,
        rule: crate::CircuitRule,
    ) -> Result<crate::EndpointCircuit>;

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

    /// An endpoint's attempts, newest first, older than its attempt `before` (message id and
    /// attempt number; exclusive; one of another endpoint gives an empty page), at most `limit`.
    async fn list_webhook_attempts(
        &self,
        endpoint_id: Uuid,
        before: Option<(Uuid, i32)>,
        limit: i64,
    ) -> Result<Vec<WebhookAttemptRecord>>;

    /// An endpoint's messages, newest first, older than its message `before` (exclusive; one
    /// of another endpoint gives an empty page), in `state` when given.
    async fn list_webhook_messages(
        &self,
        endpoint_id: Uuid,
        state: Option<crate::MessageState>,
        before: Option<Uuid>,
        limit: i64,
    ) -> Result<Vec<WebhookMessageRecord>>;
}

/// What readiness and metrics read (`sql/observe.rs`).
#[async_trait]
pub trait ObserveStore: Send + Sync + 'static {
    /// The migrations this binary bundles against those the database records (readiness).
    async fn migration_state(&self) -> Result<crate::observe::MigrationState>;

    /// The cases by kind, environment and status (one `GROUP BY` per case table; metrics
    /// refresh it now and then, not per scrape).
    async fn case_counts(&self) -> Result<Vec<crate::observe::CaseCount>>;

    /// The webhook messages waiting for delivery, and when the oldest was written.
    async fn outbox_backlog(&self) -> Result<crate::observe::OutboxBacklog>;

    /// The connections of each pool now (no I/O).
    fn pool_use(&self) -> Vec<crate::observe::PoolUse>;
}

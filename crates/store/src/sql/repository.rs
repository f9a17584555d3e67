//! The one [`Repository`](crate::Repository) of both backends: each method runs the statement both dialects share
//! ([`Shared`], `crate::sql`), except where a [`Backend`] has its own (the create, the trade
//! read, its pools), which `sqlite/` and `postgres/` implement.

use std::future::Future;

use domain::case::DocumentType;
use domain::case_state::CaseStatus;
use domain::company::Company;
use domain::lifecycle::{Actor, TaxStatus};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{Dialect, Shared};
use crate::new_case::NewCase;
use crate::{
    ApiKeyRecord, ApiKeySummary, AttemptOutcome, CaseCursor, CaseDelivery, CaseFields, CaseFilter,
    CaseIdUse, CaseKind, CaseListFilter, CaseListItem, CaseListScope, CaseScope, CaseSummary,
    ClaimedMessage, DocumentRecord, EventFilter, EventRecord, EventScope, IdempotencyClaim,
    IdempotencyTimes, NewClientCompany, NewTaxRegistration, NewTradeRegistration, Operator, Result,
    StatusChange, StoredSecrets, TaxRegistrationRecord, TradeCaseGuard, TradeOfficeEntry,
    TradePatch, TradePatchOutcome, TradeRegistrationRecord, VerificationLogEntry, WebhookAttempt,
    WebhookAttemptRecord, WebhookEndpoint, WebhookMessageRecord,
};

/// What a backend has of its own; every other [`Repository`](crate::Repository) method is a statement of
/// [`Shared`] on the backend's pools.
pub(crate) trait Backend: Send + Sync + 'static {
    /// The backend's dialect.
    type DB: Dialect;

    /// The backend's pools, with the statements both dialects share.
    fn sql(&self) -> &Shared<Self::DB>;

    /// Writes a new case (SQLite: the group-commit writer; PostgreSQL: one statement).
    fn create(&self, case: NewCase) -> impl Future<Output = Result<()>> + Send;

    /// A trade registration by id ([`Repository::get_trade_registration`](crate::Repository::get_trade_registration)).
    fn trade(
        &self,
        id: Uuid,
    ) -> impl Future<Output = Result<Option<TradeRegistrationRecord>>> + Send;

    /// The use of the backend's pools ([`Repository::pool_use`](crate::Repository::pool_use)).
    fn pool_use(&self) -> Vec<crate::observe::PoolUse>;
}

// The bounds are those of every statement of `Shared` (`shared_impl!`), which both dialects
// meet.
backend_impl!(
    fn backend(&self) -> &'static str {
        DB::BACKEND
    }

    async fn ping(&self) -> Result<()> {
        self.sql().ping().await
    }

    async fn create_provider(&self, name: &str) -> Result<Company> {
        self.sql().create_provider(name).await
    }

    async fn create_client_company(&self, new: NewClientCompany) -> Result<Company> {
        self.sql().create_client_company(new).await
    }

    async fn get_company(&self, id: Uuid) -> Result<Option<Company>> {
        self.sql().get_company(id).await
    }

    async fn create_operator(&self, name: &str) -> Result<Operator> {
        self.sql().create_operator(name).await
    }

    async fn insert_console_session(&self, session: &crate::ConsoleSessionRecord) -> Result<()> {
        self.sql().insert_console_session(session).await
    }

    async fn get_console_session(
        &self,
        token_hash: &[u8],
    ) -> Result<Option<crate::ConsoleSessionRecord>> {
        self.sql().get_console_session(token_hash).await
    }

    async fn touch_console_session(&self, token_hash: &[u8], seen_us: i64) -> Result<()> {
        self.sql().touch_console_session(token_hash, seen_us).await
    }

    async fn set_console_flash(&self, token_hash: &[u8], flash: Option<String>) -> Result<()> {
        self.sql().set_console_flash(token_hash, flash).await
    }

    async fn delete_console_session(&self, token_hash: &[u8]) -> Result<()> {
        self.sql().delete_console_session(token_hash).await
    }

    async fn take_lease(
        &self,
        name: &str,
        holder: Uuid,
        now_us: i64,
        until_us: i64,
    ) -> Result<bool> {
        self.sql().take_lease(name, holder, now_us, until_us).await
    }

    async fn heartbeat(&self, instance: Uuid, now_us: i64, live_since_us: i64) -> Result<i64> {
        self.sql().heartbeat(instance, now_us, live_since_us).await
    }

    async fn forget_instance(&self, instance: Uuid) -> Result<()> {
        self.sql().forget_instance(instance).await
    }

    async fn prune(&self, before: &crate::PruneBefore) -> Result<crate::Pruned> {
        self.sql().prune(before).await
    }

    async fn get_operator(&self, id: Uuid) -> Result<Option<Operator>> {
        self.sql().get_operator(id).await
    }

    async fn provider_document_bytes(&self, provider: Uuid) -> Result<i64> {
        self.sql().provider_document_bytes(provider).await
    }

    async fn list_operators(&self, after: Option<Uuid>, limit: i64) -> Result<Vec<Operator>> {
        self.sql().list_operators(after, limit).await
    }

    async fn list_providers(&self, after: Option<Uuid>, limit: i64) -> Result<Vec<Company>> {
        self.sql().list_providers(after, limit).await
    }

    async fn insert_api_key(&self, key: &ApiKeyRecord) -> Result<()> {
        self.sql().insert_api_key(key).await
    }

    async fn find_api_key(&self, prefix: &str) -> Result<Option<ApiKeyRecord>> {
        self.sql().find_api_key(prefix).await
    }

    async fn revoke_api_key(&self, prefix: &str, at: OffsetDateTime) -> Result<bool> {
        self.sql().revoke_api_key(prefix, at).await
    }

    async fn insert_company_api_key(&self, key: &ApiKeyRecord, max: usize) -> Result<bool> {
        self.sql().insert_company_api_key(key, max).await
    }

    async fn list_api_keys(
        &self,
        company_id: Uuid,
        environment: Option<domain::company::Environment>,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<ApiKeySummary>> {
        self.sql()
            .list_api_keys(company_id, environment, after, limit)
            .await
    }

    async fn touch_api_key(&self, prefix: &str, at: OffsetDateTime) -> Result<()> {
        self.sql().touch_api_key(prefix, at).await
    }

    async fn claim_idempotency_key(
        &self,
        scope: Uuid,
        key: &str,
        request_hash: &[u8],
        times: IdempotencyTimes,
    ) -> Result<IdempotencyClaim> {
        self.sql()
            .claim_idempotency_key(scope, key, request_hash, times)
            .await
    }

    async fn complete_idempotency_key(
        &self,
        scope: Uuid,
        key: &str,
        status: u16,
        body: &[u8],
    ) -> Result<()> {
        self.sql()
            .complete_idempotency_key(scope, key, status, body)
            .await
    }

    async fn release_idempotency_key(&self, scope: Uuid, key: &str) -> Result<()> {
        self.sql().release_idempotency_key(scope, key).await
    }

    async fn kept_answers(
        &self,
        after: Option<(Uuid, &str)>,
        limit: i64,
    ) -> Result<Vec<(Uuid, String, Vec<u8>)>> {
        self.sql().kept_answers(after, limit).await
    }

    async fn replace_kept_answer(
        &self,
        scope: Uuid,
        key: &str,
        was: &[u8],
        new: &[u8],
    ) -> Result<bool> {
        self.sql().replace_kept_answer(scope, key, was, new).await
    }

    async fn create_trade_registration(&self, new: &NewTradeRegistration) -> Result<()> {
        Backend::create(self, NewCase::Trade(Box::new(new.clone()))).await
    }

    async fn get_trade_registration(&self, id: Uuid) -> Result<Option<TradeRegistrationRecord>> {
        Backend::trade(self, id).await
    }

    async fn get_document(&self, id: Uuid) -> Result<Option<DocumentRecord>> {
        self.sql().get_document(id).await
    }

    async fn record_rendered(&self, id: Uuid, size: i64, sha256: &[u8]) -> Result<bool> {
        self.sql().record_rendered(id, size, sha256).await
    }

    async fn storage_key_known(&self, key: &str) -> Result<bool> {
        self.sql().storage_key_known(key).await
    }

    async fn create_tax_registration(&self, new: &NewTaxRegistration) -> Result<()> {
        Backend::create(self, NewCase::Tax(Box::new(new.clone()))).await
    }

    async fn get_tax_registration(&self, id: Uuid) -> Result<Option<TaxRegistrationRecord>> {
        self.sql().get_tax_registration(id).await
    }

    async fn find_tax_registration(
        &self,
        scope: CaseScope,
        public_id: Uuid,
    ) -> Result<Option<TaxRegistrationRecord>> {
        self.sql().find_tax_registration(scope, public_id).await
    }

    async fn tax_registration_id_use(&self, provider: Uuid, public_id: Uuid) -> Result<CaseIdUse> {
        self.sql()
            .tax_registration_id_use(provider, public_id)
            .await
    }

    async fn open_case_of_company(&self, kind: CaseKind, company_id: Uuid) -> Result<Option<Uuid>> {
        self.sql().open_case_of_company(kind, company_id).await
    }

    async fn transition_case(
        &self,
        id: Uuid,
        from: CaseStatus,
        change: &StatusChange,
        documents: &[DocumentRecord],
        fields: &CaseFields,
    ) -> Result<bool> {
        self.sql()
            .transition_case(id, from, change, documents, fields)
            .await
    }

    async fn verify_identity(
        &self,
        case_id: Uuid,
        owner_index: i32,
        verified_at: OffsetDateTime,
        actor: Actor,
        now: OffsetDateTime,
    ) -> Result<()> {
        self.sql()
            .verify_identity(case_id, owner_index, verified_at, actor, now)
            .await
    }

    async fn clear_identity_verification(
        &self,
        case_id: Uuid,
        owner_index: i32,
        actor: Actor,
        now: OffsetDateTime,
    ) -> Result<bool> {
        self.sql()
            .clear_identity_verification(case_id, owner_index, actor, now)
            .await
    }

    async fn identity_verification_log(
        &self,
        case_id: Uuid,
        owner_index: i32,
    ) -> Result<Vec<VerificationLogEntry>> {
        self.sql()
            .identity_verification_log(case_id, owner_index)
            .await
    }

    async fn assign_tax_office(
        &self,
        id: Uuid,
        office_number: &str,
        allowed_statuses: &[TaxStatus],
        documents: &[DocumentRecord],
        actor: Actor,
    ) -> Result<Option<Vec<String>>> {
        self.sql()
            .assign_tax_office(id, office_number, allowed_statuses, documents, actor)
            .await
    }

    async fn patch_trade_registration(
        &self,
        id: Uuid,
        patch: &TradePatch,
        guard: Option<&TradeCaseGuard>,
        documents: &[DocumentRecord],
        actor: Actor,
    ) -> Result<TradePatchOutcome> {
        self.sql()
            .patch_trade_registration(id, patch, guard, documents, actor)
            .await
    }

    async fn list_cases(
        &self,
        kind: CaseKind,
        filter: &CaseFilter,
        after: Option<Uuid>,
        limit: i64,
    ) -> Result<Vec<CaseSummary>> {
        self.sql().list_cases(kind, filter, after, limit).await
    }

    async fn list_case_page(
        &self,
        kind: CaseKind,
        scope: CaseListScope,
        filter: &CaseListFilter,
        cursor: Option<CaseCursor>,
        limit: i64,
    ) -> Result<Vec<CaseListItem>> {
        self.sql()
            .list_case_page(kind, scope, filter, cursor, limit)
            .await
    }

    async fn count_cases_by_status(
        &self,
        kind: CaseKind,
        filter: &CaseListFilter,
    ) -> Result<Vec<(CaseStatus, i64)>> {
        self.sql().count_cases_by_status(kind, filter).await
    }

    async fn list_case_deliveries(&self, case_id: Uuid, limit: i64) -> Result<Vec<CaseDelivery>> {
        self.sql().list_case_deliveries(case_id, limit).await
    }

    async fn tax_registrations_missing_document(
        &self,
        environment: domain::company::Environment,
        doc_type: DocumentType,
        after: Option<Uuid>,
        limit: i64,
    ) -> Result<Vec<Uuid>> {
        self.sql()
            .tax_registrations_missing_document(environment, doc_type, after, limit)
            .await
    }

    async fn seed_trade_copies(&self, template: Uuid, count: u64) -> Result<Option<u64>> {
        self.sql().seed_trade_copies(template, count).await
    }

    async fn list_events(
        &self,
        scope: EventScope,
        filter: &EventFilter,
        before: Option<Uuid>,
        limit: i64,
    ) -> Result<Vec<EventRecord>> {
        self.sql().list_events(scope, filter, before, limit).await
    }

    async fn upsert_trade_office(&self, entry: &TradeOfficeEntry) -> Result<()> {
        self.sql().upsert_trade_office(entry).await
    }

    async fn get_trade_office(&self, key: &str) -> Result<Option<TradeOfficeEntry>> {
        self.sql().get_trade_office(key).await
    }

    async fn list_trade_offices(
        &self,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<TradeOfficeEntry>> {
        self.sql().list_trade_offices(after, limit).await
    }

    async fn create_webhook_endpoint(
        &self,
        endpoint: &WebhookEndpoint,
        limit: usize,
    ) -> Result<bool> {
        self.sql().create_webhook_endpoint(endpoint, limit).await
    }

    async fn list_webhook_endpoints(&self, provider_id: Uuid) -> Result<Vec<WebhookEndpoint>> {
        self.sql().list_webhook_endpoints(provider_id).await
    }

    async fn get_webhook_endpoint(&self, id: Uuid) -> Result<Option<WebhookEndpoint>> {
        self.sql().get_webhook_endpoint(id).await
    }

    async fn delete_webhook_endpoint(&self, id: Uuid, at: OffsetDateTime) -> Result<bool> {
        self.sql().delete_webhook_endpoint(id, at).await
    }

    async fn rotate_webhook_secret(
        &self,
        id: Uuid,
        secret: &str,
        previous_expires_at: OffsetDateTime,
    ) -> Result<bool> {
        self.sql()
            .rotate_webhook_secret(id, secret, previous_expires_at)
            .await
    }

    async fn webhook_endpoint_secrets(&self) -> Result<Vec<StoredSecrets>> {
        self.sql().webhook_endpoint_secrets().await
    }

    async fn replace_webhook_endpoint_secrets(
        &self,
        old: &StoredSecrets,
        new: &StoredSecrets,
    ) -> Result<bool> {
        self.sql().replace_webhook_endpoint_secrets(old, new).await
    }

    async fn claim_webhook_messages(
        &self,
        now_us: i64,
        lease_until_us: i64,
        limits: crate::ClaimLimits,
    ) -> Result<Vec<ClaimedMessage>> {
        self.sql()
            .claim_webhook_messages(now_us, lease_until_us, limits)
            .await
    }

    async fn record_webhook_attempt(
        &self,
        attempt: &WebhookAttempt,
        outcome: AttemptOutcome,
        rule: crate::CircuitRule,
    ) -> Result<crate::EndpointCircuit> {
        self.sql()
            .record_webhook_attempt(attempt, outcome, rule)
            .await
    }

    async fn retry_webhook_message(
        &self,
        endpoint_id: Uuid,
        message_id: Uuid,
        now_us: i64,
    ) -> Result<Option<String>> {
        self.sql()
            .retry_webhook_message(endpoint_id, message_id, now_us)
            .await
    }

    async fn list_webhook_attempts(
        &self,
        endpoint_id: Uuid,
        before: Option<(Uuid, i32)>,
        limit: i64,
    ) -> Result<Vec<WebhookAttemptRecord>> {
        self.sql()
            .list_webhook_attempts(endpoint_id, before, limit)
            .await
    }

    async fn list_webhook_messages(
        &self,
        endpoint_id: Uuid,
        state: Option<crate::MessageState>,
        before: Option<Uuid>,
        limit: i64,
    ) -> Result<Vec<WebhookMessageRecord>> {
        self.sql()
            .list_webhook_messages(endpoint_id, state, before, limit)
            .await
    }

    async fn migration_state(&self) -> Result<crate::observe::MigrationState> {
        let rows = self.sql().migration_rows().await?;
        Ok(crate::observe::MigrationState::of(DB::MIGRATOR, rows))
    }

    async fn case_counts(&self) -> Result<Vec<crate::observe::CaseCount>> {
        self.sql().case_counts().await
    }

    async fn outbox_backlog(&self) -> Result<crate::observe::OutboxBacklog> {
        self.sql().outbox_backlog().await
    }

    fn pool_use(&self) -> Vec<crate::observe::PoolUse> {
        Backend::pool_use(self)
    }
);

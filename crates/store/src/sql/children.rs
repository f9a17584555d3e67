//! A case's documents, status history and webhook messages, written inside a transaction.

use domain::lifecycle::{Actor, Lifecycle as _};
use sqlx::Row;
use sqlx::types::Json;
use time::OffsetDateTime;
use uuid::Uuid;

use super::events::{EventTarget, Events, documents_messages, event_messages, has_events};
#[cfg(test)]
use super::text::{COMPLETE_CLAIM, INSERT_TAX, INSERT_TRADE};
use super::text::{
    INSERT_DOCUMENT, INSERT_EVENT, INSERT_HISTORY, INSERT_WEBHOOK_MESSAGE, event_targets_query,
};
#[cfg(test)]
use crate::StoreError;
use crate::new_case::NewCase;
use crate::{CaseKind, DocumentRecord, Result, StatusChange, TradePatch};
use domain::case_state::CaseStatus;

shared_impl!(
    /// Inserts a case's documents and status history, and the webhook messages of the changes
    /// (the outbox). The caller then has the dialect bring its copy of the children up to date
    /// ([`Dialect::refresh_children`](crate::sql::Dialect::refresh_children)).
    pub(super) async fn insert_children(
        tx: &mut DB::Connection,
        case_id: Uuid,
        kind: CaseKind,
        documents: &[DocumentRecord],
        history: &[StatusChange],
    ) -> Result<()> {
        for d in documents {
            sqlx::query(INSERT_DOCUMENT)
                .bind(d.id)
                .bind(d.case_id)
                .bind(d.case_kind.as_str())
                .bind(d.owner_index)
                .bind(d.doc_type.as_str())
                .bind(&d.name)
                .bind(&d.storage_key)
                .bind(&d.content_type)
                .bind(d.size)
                .bind(&d.sha256)
                .bind(d.created_at)
                .execute(&mut *tx)
                .await?;
        }
        for h in history {
            sqlx::query(INSERT_HISTORY)
                .bind(case_id)
                .bind(kind.as_str())
                .bind(h.status.as_str())
                .bind(h.previous_status.map(CaseStatus::as_str))
                .bind(h.actor.to_string())
                .bind(&h.reason)
                .bind(h.at)
                .execute(&mut *tx)
                .await?;
        }
        // The event log, and the outbox: one message per change that has an event and per
        // endpoint of the case's provider that subscribed to it. The worker delivers them after
        // the commit.
        if has_events(history) {
            let targets = Self::event_targets(tx, case_id, kind).await?;
            Self::insert_events(tx, case_id, event_messages(history, &targets)).await?;
        }
        Ok(())
    }

    /// The rows of [`event_targets_query`] for a case.
    async fn event_targets(
        tx: &mut DB::Connection,
        case_id: Uuid,
        kind: CaseKind,
    ) -> Result<Vec<EventTarget>> {
        let rows = sqlx::query(event_targets_query(kind))
            .bind(case_id)
            .fetch_all(&mut *tx)
            .await?;
        let mut targets = Vec::with_capacity(rows.len());
        for row in &rows {
            let events: Option<Json<Vec<String>>> = row.try_get("events")?;
            let status: String = row.try_get("status")?;
            targets.push(EventTarget {
                case_public_id: row.try_get("public_id")?,
                provider_id: row.try_get("provider_id")?,
                endpoint_id: row.try_get("endpoint_id")?,
                events: events.map(|e| e.0),
                company_id: row.try_get("company_id")?,
                status: crate::rows::case_status(kind, &status)?,
                environment: row.try_get("environment")?,
                client_reference: row.try_get("client_reference")?,
            });
        }
        Ok(targets)
    }

    /// Writes a case's events to the log and their messages to the outbox.
    async fn insert_events(tx: &mut DB::Connection, case_id: Uuid, events: Events) -> Result<()> {
        for e in events.logged {
            sqlx::query(INSERT_EVENT)
                .bind(e.id)
                .bind(e.provider_id)
                .bind(e.company_id)
                .bind(e.case_public_id)
                .bind(e.environment)
                .bind(e.event_type)
                .bind(e.body)
                .bind(e.at)
                .execute(&mut *tx)
                .await?;
        }
        for m in events.messages {
            sqlx::query(INSERT_WEBHOOK_MESSAGE)
                .bind(m.id)
                .bind(m.endpoint_id)
                .bind(case_id)
                .bind(m.event_type)
                .bind(m.body)
                .bind(m.next_attempt_us)
                .bind(m.at)
                .execute(&mut *tx)
                .await?;
        }
        Ok(())
    }

    /// Replaces a case's documents of the same type and owner as `documents` with these, and
    /// writes a `documents.updated` event (`reason`) for the endpoints that take it; answers the
    /// storage keys of the replaced ones (to delete after the commit).
    pub(super) async fn replace_documents(
        tx: &mut DB::Connection,
        id: Uuid,
        kind: CaseKind,
        documents: &[DocumentRecord],
        reason: &str,
    ) -> Result<Vec<String>> {
        let mut replaced: Vec<String> = Vec::new();
        let mut replaces: Vec<Option<Uuid>> = Vec::with_capacity(documents.len());
        for d in documents {
            let old = sqlx::query(
                "DELETE FROM documents WHERE case_id = $1 AND doc_type = $2 \
                 AND owner_index IS NOT DISTINCT FROM $3 RETURNING id, storage_key",
            )
            .bind(id)
            .bind(d.doc_type.as_str())
            .bind(d.owner_index)
            .fetch_all(&mut *tx)
            .await?;
            let mut first = None;
            for row in old {
                first = first.or(Some(row.try_get::<Uuid, _>("id")?));
                replaced.push(row.try_get::<String, _>("storage_key")?);
            }
            replaces.push(first);
        }
        Self::insert_children(tx, id, kind, documents, &[]).await?;
        if !documents.is_empty() {
            let targets = Self::event_targets(tx, id, kind).await?;
            let events = documents_messages(reason, documents, &replaces, &targets);
            Self::insert_events(tx, id, events).await?;
        }
        Ok(replaced)
    }

    /// Applies the set fields of a [`TradePatch`] to a trade registration.
    pub(super) async fn apply_trade_patch(
        tx: &mut DB::Connection,
        id: Uuid,
        patch: &TradePatch,
    ) -> Result<()> {
        if let Some(office) = &patch.trade_office {
            sqlx::query(
                "UPDATE trade_registrations SET trade_office = $1, trade_office_candidates = NULL \
                 WHERE id = $2",
            )
            .bind(Json(office))
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
        if let Some(fee) = patch.city_fee_cents {
            sqlx::query("UPDATE trade_registrations SET city_fee_cents = $1 WHERE id = $2")
                .bind(fee)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        if let Some(paid) = patch.is_paid {
            sqlx::query("UPDATE trade_registrations SET is_paid = $1 WHERE id = $2")
                .bind(paid)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        if let Some(product) = &patch.source_product {
            sqlx::query("UPDATE trade_registrations SET source_product = $1 WHERE id = $2")
                .bind(product.as_deref())
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        Ok(())
    }

    /// Records `changes` made by `actor` at `at` as a history entry that keeps the case's
    /// `status`, in the transaction of the change itself; nothing when no field changed. No
    /// event: the status did not move. The caller refreshes the dialect's copy of the children.
    pub(super) async fn insert_field_changes(
        tx: &mut DB::Connection,
        case_id: Uuid,
        status: CaseStatus,
        actor: Actor,
        at: OffsetDateTime,
        changes: &[crate::FieldChange],
    ) -> Result<bool> {
        if changes.is_empty() {
            return Ok(false);
        }
        let json = serde_json::to_value(changes)
            .map_err(|e| crate::StoreError::Corrupt(format!("changes: {e}")))?;
        sqlx::query(super::text::INSERT_FIELD_CHANGES)
            .bind(case_id)
            .bind(status.kind().as_str())
            .bind(status.as_str())
            .bind(actor.to_string())
            .bind(at)
            .bind(Json(&json))
            .execute(&mut *tx)
            .await?;
        Ok(true)
    }

    /// Logs a record (`Some(verified_at)`) or removal (`None`) of an owner's identity
    /// verification.
    pub(super) async fn log_verification(
        tx: &mut DB::Connection,
        case_id: Uuid,
        owner_index: i32,
        verified_at: Option<OffsetDateTime>,
        actor: Actor,
        now: OffsetDateTime,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO identity_verification_log \
             (case_id, owner_index, action, verified_at, actor, at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(case_id)
        .bind(owner_index)
        .bind(if verified_at.is_some() {
            "recorded"
        } else {
            "removed"
        })
        .bind(verified_at)
        .bind(actor.to_string())
        .bind(now)
        .execute(&mut *tx)
        .await?;
        Ok(())
    }

    /// `query` with the values of `case`'s row bound next, in the order of
    /// [`INSERT_TRADE`](super::text::INSERT_TRADE) or [`INSERT_TAX`](super::text::INSERT_TAX):
    /// that statement in the transaction's create, the last part of PostgreSQL's one-statement
    /// create (`postgres/create.rs`).
    pub(crate) fn bind_case_row<'q>(
        query: sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments>,
        case: &NewCase,
    ) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments> {
        match case {
            NewCase::Trade(t) => query
                .bind(t.id)
                .bind(t.company_id)
                .bind(t.provider_id)
                .bind(t.environment.as_str())
                .bind(t.package.as_str())
                .bind(t.status.as_str())
                .bind(Json(&t.record))
                .bind(t.price_cents)
                .bind(false)
                .bind(t.trade_office.as_ref().map(Json))
                .bind(t.trade_office_candidates.as_ref().map(Json))
                .bind(t.created_at),
            NewCase::Tax(t) => query
                .bind(t.id)
                .bind(t.company_id)
                .bind(t.provider_id)
                .bind(t.environment.as_str())
                .bind(t.package.as_str())
                .bind(t.legal_form.as_str())
                .bind(t.status.as_str())
                .bind(Json(&t.record))
                .bind(&t.tax_office_number)
                .bind(t.tax_office_lookup.as_ref().map(Json))
                .bind(t.created_at)
                .bind(Uuid::now_v7())
                .bind(t.public_id),
        }
    }

    /// A case create as a plain sqlx transaction, one statement after another: what both
    /// backends' create paths (`sqlite/write.rs`, `postgres/create.rs`) replace, kept for the
    /// tests that compare the rows the two ways write.
    ///
    /// Writes the case, its new company (if any), documents, history and webhook messages and
    /// completes its idempotency claim, in one transaction.
    #[cfg(test)]
    pub(crate) async fn create_in_transaction(&self, case: &NewCase) -> Result<()> {
        let c = case.common();
        let mut tx = self.writer.begin().await?;
        if let Some((id, n)) = c.new_company {
            Self::insert_client_company_statement(*id, n, c.created_at)
                .execute(&mut *tx)
                .await?;
        }
        let insert = match case {
            NewCase::Trade(_) => INSERT_TRADE,
            NewCase::Tax(_) => INSERT_TAX,
        };
        Self::bind_case_row(sqlx::query(insert), case)
            .execute(&mut *tx)
            .await?;
        Self::insert_children(&mut *tx, c.id, c.kind, c.documents, c.history).await?;
        DB::children_created(&mut *tx, c.id, c.documents, c.history).await?;
        // The answer a retry replays commits with the case; a claim that is no longer in flight
        // fails the create, which rolls it back.
        if let Some(a) = c.idempotency {
            let done = sqlx::query(COMPLETE_CLAIM)
                .bind(i32::from(a.status))
                .bind(&a.body)
                .bind(a.scope)
                .bind(&a.key)
                .execute(&mut *tx)
                .await?;
            if DB::rows_affected(&done) != 1 {
                return Err(StoreError::IdempotencyClaimLost);
            }
        }
        tx.commit().await?;
        Ok(())
    }
);

//! Statements that read the same in SQLite and PostgreSQL, expanded into both implementations.

/// Inserts a case's documents and status history inside transaction `$tx`. The caller then has
/// the dialect bring its copy of the children up to date (`children_created` for a new case,
/// `refresh_children` otherwise: PostgreSQL keeps the arrays in `case_children`, SQLite builds
/// them in the read).
macro_rules! insert_children {
    ($tx:ident, $case_id:expr, $kind:expr, $documents:expr, $history:expr) => {
        for d in $documents {
            sqlx::query($crate::shared::INSERT_DOCUMENT)
                .bind(d.id)
                .bind(d.case_id)
                .bind(&d.case_kind)
                .bind(d.owner_index)
                .bind(&d.doc_type)
                .bind(&d.name)
                .bind(&d.storage_key)
                .bind(&d.content_type)
                .bind(d.size)
                .bind(&d.sha256)
                .bind(d.created_at)
                .execute(&mut *$tx)
                .await?;
        }
        for h in $history {
            sqlx::query($crate::shared::INSERT_HISTORY)
                .bind($case_id)
                .bind($kind)
                .bind(&h.status)
                .bind(&h.previous_status)
                .bind(&h.actor)
                .bind(&h.reason)
                .bind(h.at)
                .execute(&mut *$tx)
                .await?;
        }
        emit_events!($tx, $case_id, $kind, $history);
    };
}

/// Writes the webhook messages of a case's status changes inside transaction `$tx` (the
/// outbox): one per change that has an event and per endpoint of the case's provider that
/// subscribed to it. The worker delivers them after the commit.
macro_rules! emit_events {
    ($tx:ident, $case_id:expr, $kind:expr, $history:expr) => {{
        let history: &[$crate::StatusChange] = $history;
        let kind: &str = $kind;
        if $crate::shared::has_events(kind, history) {
            let targets = event_targets!($tx, $case_id, kind);
            for m in $crate::shared::event_messages(kind, history, &targets) {
                insert_message!($tx, $case_id, m);
            }
        }
    }};
}

/// The rows of [`crate::shared::event_targets_query`] for case `$case_id` inside `$tx`.
macro_rules! event_targets {
    ($tx:ident, $case_id:expr, $kind:expr) => {{
        use sqlx::Row;
        let rows = sqlx::query($crate::shared::event_targets_query($kind))
            .bind($case_id)
            .fetch_all(&mut *$tx)
            .await?;
        let mut targets = Vec::with_capacity(rows.len());
        for row in &rows {
            let events: Option<sqlx::types::Json<Vec<String>>> = row.try_get("events")?;
            targets.push($crate::shared::EventTarget {
                case_public_id: row.try_get("public_id")?,
                endpoint_id: row.try_get("endpoint_id")?,
                events: events.map(|e| e.0),
                company_id: row.try_get("company_id")?,
                status: row.try_get("status")?,
                environment: row.try_get("environment")?,
                client_reference: row.try_get("client_reference")?,
            });
        }
        targets
    }};
}

/// Writes one [`crate::shared::EventMessage`] of case `$case_id` to the outbox inside `$tx`.
macro_rules! insert_message {
    ($tx:ident, $case_id:expr, $m:expr) => {{
        let m: $crate::shared::EventMessage = $m;
        sqlx::query($crate::shared::INSERT_WEBHOOK_MESSAGE)
            .bind(m.id)
            .bind(m.endpoint_id)
            .bind($case_id)
            .bind(m.event_type)
            .bind(m.body)
            .bind(m.next_attempt_us)
            .bind(m.at)
            .execute(&mut *$tx)
            .await?;
    }};
}

/// Replaces case `$id`'s documents of the same type and owner as `$documents` with these inside
/// `$tx`, and writes a `documents.updated` event (`$reason`) for the endpoints that take it;
/// evaluates to the storage keys of the replaced ones (to delete after the commit).
macro_rules! replace_documents {
    ($tx:ident, $id:expr, $kind:expr, $documents:expr, $reason:expr) => {{
        use sqlx::Row;
        let id: uuid::Uuid = $id;
        let kind: &str = $kind;
        let documents: &[$crate::DocumentRecord] = $documents;
        let mut replaced: Vec<String> = Vec::new();
        let mut replaces: Vec<Option<uuid::Uuid>> = Vec::with_capacity(documents.len());
        for d in documents {
            let old = sqlx::query(
                "DELETE FROM documents WHERE case_id = $1 AND doc_type = $2 \
                 AND owner_index IS NOT DISTINCT FROM $3 RETURNING id, storage_key",
            )
            .bind(id)
            .bind(&d.doc_type)
            .bind(d.owner_index)
            .fetch_all(&mut *$tx)
            .await?;
            let mut first = None;
            for row in old {
                first = first.or(Some(row.try_get::<uuid::Uuid, _>("id")?));
                replaced.push(row.try_get::<String, _>("storage_key")?);
            }
            replaces.push(first);
        }
        let no_history: &[$crate::StatusChange] = &[];
        insert_children!($tx, id, kind, documents, no_history);
        if !documents.is_empty() {
            let targets = event_targets!($tx, id, kind);
            for m in
                $crate::shared::documents_messages(kind, $reason, documents, &replaces, &targets)
            {
                insert_message!($tx, id, m);
            }
        }
        replaced
    }};
}

/// Applies the set fields of a [`crate::TradePatch`] to trade registration `$id` inside `$tx`.
macro_rules! apply_trade_patch {
    ($tx:ident, $id:expr, $patch:expr) => {{
        let id: uuid::Uuid = $id;
        let patch: &$crate::TradePatch = $patch;
        if let Some(office) = &patch.trade_office {
            sqlx::query(
                "UPDATE trade_registrations SET trade_office = $1, trade_office_candidates = NULL WHERE id = $2",
            )
            .bind(sqlx::types::Json(office))
            .bind(id)
            .execute(&mut *$tx)
            .await?;
        }
        if let Some(fee) = patch.city_fee_cents {
            sqlx::query("UPDATE trade_registrations SET city_fee_cents = $1 WHERE id = $2")
                .bind(fee)
                .bind(id)
                .execute(&mut *$tx)
                .await?;
        }
        if let Some(paid) = patch.is_paid {
            sqlx::query("UPDATE trade_registrations SET is_paid = $1 WHERE id = $2")
                .bind(paid)
                .bind(id)
                .execute(&mut *$tx)
                .await?;
        }
        if let Some(product) = &patch.source_product {
            sqlx::query("UPDATE trade_registrations SET source_product = $1 WHERE id = $2")
                .bind(product.as_deref())
                .bind(id)
                .execute(&mut *$tx)
                .await?;
        }
    }};
}

/// Completes the create's idempotency claim inside transaction `$tx` with the answer a retry
/// replays (see [`crate::IdempotentAnswer`]); a claim that is no longer in flight fails the
/// create, which rolls it back.
macro_rules! complete_claim {
    ($tx:ident, $answer:expr) => {
        if let Some(a) = $answer {
            let a: &$crate::IdempotentAnswer = a;
            let done = sqlx::query($crate::shared::COMPLETE_CLAIM)
                .bind(i32::from(a.status))
                .bind(&a.body)
                .bind(a.scope)
                .bind(&a.key)
                .execute(&mut *$tx)
                .await?;
            if done.rows_affected() != 1 {
                return Err($crate::StoreError::IdempotencyClaimLost);
            }
        }
    };
}

/// Logs a record (`Some(verified_at)`) or removal (`None`) of an owner's identity verification
/// inside transaction `$tx`.
macro_rules! log_verification {
    ($tx:ident, $case_id:expr, $owner_index:expr, $verified_at:expr, $actor:expr, $now:expr) => {{
        let verified_at: Option<time::OffsetDateTime> = $verified_at;
        sqlx::query(
            "INSERT INTO identity_verification_log \
             (case_id, owner_index, action, verified_at, actor, at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind($case_id)
        .bind($owner_index)
        .bind(if verified_at.is_some() {
            "recorded"
        } else {
            "removed"
        })
        .bind(verified_at)
        .bind($actor)
        .bind($now)
        .execute(&mut *$tx)
        .await?;
    }};
}

/// Inserts the client company a case creates, inside transaction `$tx`.
macro_rules! insert_new_company {
    ($tx:ident, $new_company:expr, $created_at:expr) => {
        if let Some((id, c)) = $new_company {
            sqlx::query($crate::shared::INSERT_CLIENT_COMPANY)
                .bind(*id)
                .bind(&c.name)
                .bind(c.provider_id)
                .bind(c.environment.as_str())
                .bind(&c.legal_form)
                .bind(&c.registration_number)
                .bind(c.business_address.clone().map(sqlx::types::Json))
                .bind($created_at)
                .execute(&mut *$tx)
                .await?;
        }
    };
}

/// A case's documents and status history, oldest first.
macro_rules! read_children {
    ($row:expr, $case_id:expr) => {{
        use sqlx::Row;
        let history: String = $row.try_get("history_json")?;
        let documents: String = $row.try_get("documents_json")?;
        (
            $crate::shared::documents_from_json(&documents, $case_id)?,
            $crate::shared::history_from_json(&history)?,
        )
    }};
}

/// The columns of a `trade_offices` row (alias `o`) as [`trade_office_from_row`] reads them.
macro_rules! office_columns {
    () => {
        "o.key AS office_key, o.name AS office_name, o.address AS office_address, \
         o.email AS office_email, o.phone AS office_phone, o.website AS office_website, \
         o.updated_at AS office_updated_at"
    };
}

/// The one statement that reads a trade registration with its company, history, documents,
/// identity verifications (`$children`, `$verified`: the dialect's JSON subqueries) and the
/// directory entry of its trade office (`office_*`, NULL when the directory has none).
macro_rules! trade_select {
    ($children:literal, $verified:literal, $join:literal) => {
        concat!(
            "SELECT t.id, t.company_id, t.provider_id, t.environment, t.package, t.status, \
             t.record, t.price_cents, t.city_fee_cents, t.is_paid, t.trade_office, \
             t.trade_office_candidates, t.source_product, t.created_at, \
             c.name AS company_name, c.legal_form AS company_legal_form, ",
            office_columns!(),
            ", ",
            $children,
            ", ",
            $verified,
            " FROM trade_registrations t LEFT JOIN companies c ON c.id = t.company_id \
             LEFT JOIN trade_offices o ON o.key = (t.trade_office ->> 'key')",
            $join,
            " WHERE t.id = $1"
        )
    };
}

/// The one statement that reads a tax registration with its history and documents (`$children`,
/// `$join`: the dialect's), found by `$where`.
macro_rules! tax_select {
    ($children:literal, $join:literal, $where:literal) => {
        concat!(
            "SELECT t.id, t.public_id, t.company_id, t.provider_id, t.environment, t.package, \
             t.legal_form, t.status, t.record, t.tax_office_number, t.tax_office_lookup, \
             t.tax_number, t.created_at, ",
            $children,
            " FROM tax_registrations t",
            $join,
            $where
        )
    };
}

/// A row of [`tax_select!`] as a [`crate::TaxRegistrationRecord`].
macro_rules! tax_from_row {
    ($row:expr) => {{
        use sqlx::Row;
        let row = $row;
        let id: uuid::Uuid = row.try_get("id")?;
        let environment: String = row.try_get("environment")?;
        let record: sqlx::types::Json<serde_json::Value> = row.try_get("record")?;
        let lookup: Option<sqlx::types::Json<serde_json::Value>> =
            row.try_get("tax_office_lookup")?;
        let (documents, history) = read_children!(row, id);
        Ok::<_, $crate::StoreError>($crate::TaxRegistrationRecord {
            id,
            public_id: row.try_get("public_id")?,
            company_id: row.try_get("company_id")?,
            provider_id: row.try_get("provider_id")?,
            environment: domain::company::Environment::parse(&environment).ok_or_else(|| {
                $crate::StoreError::Corrupt(format!("unknown environment {environment:?}"))
            })?,
            package: row.try_get("package")?,
            legal_form: row.try_get("legal_form")?,
            status: row.try_get("status")?,
            record: record.0,
            tax_office_number: row.try_get("tax_office_number")?,
            tax_office_lookup: lookup.map(|j| j.0),
            tax_number: row.try_get("tax_number")?,
            created_at: row.try_get("created_at")?,
            documents,
            history,
        })
    }};
}

/// Implements [`crate::Repository`] for a repository struct with a `pool` field: the
/// dialect-independent methods written here, followed by the dialect's own (`$($own)*`).
/// (The whole impl is generated here because `#[async_trait]` must see every method.)
/// `$skip_locked` is the dialect's row-locking clause for the webhook claim (empty for SQLite,
/// whose writers are serialised anyway).
macro_rules! repository_impl {
    ($repo:ty, $backend:literal, $skip_locked:literal, $children:literal, $verified:literal, $join:literal, { $($own:tt)* }) => {
    #[async_trait::async_trait]
    impl $crate::Repository for $repo {
        fn backend(&self) -> &'static str {
            $backend
        }

        $($own)*

        async fn create_trade_registration(
            &self,
            new: &$crate::NewTradeRegistration,
        ) -> $crate::Result<()> {
            // The dialect may write the whole case in one go (SQLite: `create_direct`).
            if let Some(done) = self.create_direct(|| $crate::new_case::NewCase::Trade(Box::new(new.clone()))).await {
                return done;
            }
            let mut tx = self.writer.begin().await?;
            insert_new_company!(tx, &new.new_company, new.created_at);
            sqlx::query($crate::shared::INSERT_TRADE)
            .bind(new.id)
            .bind(new.company_id)
            .bind(new.provider_id)
            .bind(new.environment.as_str())
            .bind(&new.package)
            .bind(&new.status)
            .bind(sqlx::types::Json(&new.record))
            .bind(new.price_cents)
            .bind(false)
            .bind(new.trade_office.as_ref().map(sqlx::types::Json))
            .bind(new.trade_office_candidates.as_ref().map(sqlx::types::Json))
            .bind(new.created_at)
            .execute(&mut *tx)
            .await?;
            insert_children!(tx, new.id, "trade", &new.documents, &new.history);
            Self::children_created(&mut tx, new.id, &new.documents, &new.history).await?;
            complete_claim!(tx, &new.idempotency);
            tx.commit().await?;
            Ok(())
        }

        async fn get_trade_registration(
            &self,
            id: uuid::Uuid,
        ) -> $crate::Result<Option<$crate::TradeRegistrationRecord>> {
            // The dialect may answer on the calling thread (SQLite: `trade_on_thread`);
            // otherwise, or when it cannot right now, through sqlx and the dialect's `read`.
            if let Some(done) = self.trade_on_thread(id) {
                return done;
            }
            self.trade_via_sqlx(id).await
        }

        async fn create_tax_registration(
            &self,
            new: &$crate::NewTaxRegistration,
        ) -> $crate::Result<()> {
            if let Some(done) = self.create_direct(|| $crate::new_case::NewCase::Tax(Box::new(new.clone()))).await {
                return done;
            }
            let mut tx = self.writer.begin().await?;
            insert_new_company!(tx, &new.new_company, new.created_at);
            sqlx::query($crate::shared::INSERT_TAX)
            .bind(new.id)
            .bind(new.company_id)
            .bind(new.provider_id)
            .bind(new.environment.as_str())
            .bind(&new.package)
            .bind(&new.legal_form)
            .bind(&new.status)
            .bind(sqlx::types::Json(&new.record))
            .bind(&new.tax_office_number)
            .bind(new.tax_office_lookup.as_ref().map(sqlx::types::Json))
            .bind(new.created_at)
            .bind(uuid::Uuid::now_v7())
            .bind(new.public_id)
            .execute(&mut *tx)
            .await?;
            insert_children!(tx, new.id, "tax", &new.documents, &new.history);
            Self::children_created(&mut tx, new.id, &new.documents, &new.history).await?;
            complete_claim!(tx, &new.idempotency);
            tx.commit().await?;
            Ok(())
        }

        async fn get_tax_registration(
            &self,
            id: uuid::Uuid,
        ) -> $crate::Result<Option<$crate::TaxRegistrationRecord>> {
            const SELECT: &str = tax_select!($children, $join, " WHERE t.id = $1");
            let row = self
                .read(|c| Box::pin(sqlx::query(SELECT).bind(id).fetch_optional(c)))
                .await?;
            row.as_ref().map(|row| tax_from_row!(row)).transpose()
        }

        async fn find_tax_registration(
            &self,
            scope: $crate::CaseScope,
            public_id: uuid::Uuid,
        ) -> $crate::Result<Option<$crate::TaxRegistrationRecord>> {
            const BY_PROVIDER: &str =
                tax_select!($children, $join, " WHERE t.provider_id = $1 AND t.public_id = $2");
            const BY_COMPANY: &str =
                tax_select!($children, $join, " WHERE t.company_id = $1 AND t.public_id = $2");
            let (sql, owner) = match scope {
                $crate::CaseScope::Provider(p) => (BY_PROVIDER, p),
                $crate::CaseScope::Company(c) => (BY_COMPANY, c),
            };
            let row = self
                .read(|c| {
                    Box::pin(sqlx::query(sql).bind(owner).bind(public_id).fetch_optional(c))
                })
                .await?;
            row.as_ref().map(|row| tax_from_row!(row)).transpose()
        }

        async fn tax_registration_id_use(
            &self,
            provider: uuid::Uuid,
            public_id: uuid::Uuid,
        ) -> $crate::Result<$crate::CaseIdUse> {
            use sqlx::Row;
            let row = sqlx::query(
                "SELECT EXISTS (SELECT 1 FROM tax_registrations \
                                WHERE provider_id = $1 AND public_id = $2) AS by_provider, \
                 (EXISTS (SELECT 1 FROM tax_registrations WHERE id = $2) \
                  OR EXISTS (SELECT 1 FROM trade_registrations WHERE id = $2)) AS as_key",
            )
            .bind(provider)
            .bind(public_id)
            .fetch_one(&self.pool)
            .await?;
            Ok($crate::CaseIdUse {
                by_provider: row.try_get("by_provider")?,
                as_key: row.try_get("as_key")?,
            })
        }

        async fn transition_case(
            &self,
            kind: $crate::CaseKind,
            id: uuid::Uuid,
            from: &str,
            change: &$crate::StatusChange,
            documents: &[$crate::DocumentRecord],
            fields: &$crate::CaseFields,
        ) -> $crate::Result<bool> {
            let update = match kind {
                $crate::CaseKind::Trade => {
                    "UPDATE trade_registrations SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4"
                }
                $crate::CaseKind::Tax => {
                    "UPDATE tax_registrations SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4"
                }
            };
            let mut tx = self.writer.begin().await?;
            let done = sqlx::query(update)
                .bind(&change.status)
                .bind(change.at)
                .bind(id)
                .bind(from)
                .execute(&mut *tx)
                .await?;
            if done.rows_affected() != 1 {
                tx.rollback().await?;
                return Ok(false);
            }
            if let Some(n) = &fields.tax_number {
                sqlx::query("UPDATE tax_registrations SET tax_number = $1 WHERE id = $2")
                    .bind(n)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            if let Some(patch) = &fields.trade {
                apply_trade_patch!(tx, id, patch);
            }
            insert_children!(tx, id, kind.as_str(), documents, std::slice::from_ref(change));
            Self::refresh_children(&mut tx, &[id]).await?;
            tx.commit().await?;
            Ok(true)
        }

        async fn verify_identity(
            &self,
            case_id: uuid::Uuid,
            owner_index: i32,
            verified_at: time::OffsetDateTime,
            actor: &str,
            now: time::OffsetDateTime,
        ) -> $crate::Result<()> {
            let mut tx = self.writer.begin().await?;
            sqlx::query(
                "INSERT INTO identity_verifications (case_id, owner_index, verified_at, actor) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (case_id, owner_index) DO UPDATE SET \
                 verified_at = excluded.verified_at, actor = excluded.actor",
            )
            .bind(case_id)
            .bind(owner_index)
            .bind(verified_at)
            .bind(actor)
            .execute(&mut *tx)
            .await?;
            log_verification!(tx, case_id, owner_index, Some(verified_at), actor, now);
            Self::refresh_children(&mut tx, &[case_id]).await?;
            tx.commit().await?;
            Ok(())
        }

        async fn clear_identity_verification(
            &self,
            case_id: uuid::Uuid,
            owner_index: i32,
            actor: &str,
            now: time::OffsetDateTime,
        ) -> $crate::Result<bool> {
            let mut tx = self.writer.begin().await?;
            let removed = sqlx::query(
                "DELETE FROM identity_verifications WHERE case_id = $1 AND owner_index = $2",
            )
            .bind(case_id)
            .bind(owner_index)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if removed == 0 {
                tx.rollback().await?;
                return Ok(false);
            }
            log_verification!(tx, case_id, owner_index, None, actor, now);
            Self::refresh_children(&mut tx, &[case_id]).await?;
            tx.commit().await?;
            Ok(true)
        }

        async fn identity_verification_log(
            &self,
            case_id: uuid::Uuid,
            owner_index: i32,
        ) -> $crate::Result<Vec<$crate::VerificationLogEntry>> {
            let rows: Vec<(String, Option<time::OffsetDateTime>, String, time::OffsetDateTime)> =
                sqlx::query_as(
                    "SELECT action, verified_at, actor, at FROM identity_verification_log \
                     WHERE case_id = $1 AND owner_index = $2 ORDER BY id",
                )
                .bind(case_id)
                .bind(owner_index)
                .fetch_all(&self.writer)
                .await?;
            Ok(rows
                .into_iter()
                .map(|(action, verified_at, actor, at)| $crate::VerificationLogEntry {
                    action,
                    verified_at,
                    actor,
                    at,
                })
                .collect())
        }

        async fn assign_tax_office(
            &self,
            id: uuid::Uuid,
            office_number: &str,
            allowed_statuses: &[&str],
            documents: &[$crate::DocumentRecord],
        ) -> $crate::Result<Option<Vec<String>>> {
            use sqlx::Row;
            let mut tx = self.writer.begin().await?;
            let status: Option<String> =
                sqlx::query("SELECT status FROM tax_registrations WHERE id = $1")
                    .bind(id)
                    .fetch_optional(&mut *tx)
                    .await?
                    .map(|r| r.try_get("status"))
                    .transpose()?;
            let Some(status) = status.filter(|s| allowed_statuses.contains(&s.as_str())) else {
                tx.rollback().await?;
                return Ok(None);
            };
            let updated = sqlx::query(
                "UPDATE tax_registrations SET tax_office_number = $1, updated_at = $2 \
                 WHERE id = $3 AND status = $4",
            )
            .bind(office_number)
            .bind($crate::shared::now())
            .bind(id)
            .bind(&status)
            .execute(&mut *tx)
            .await?;
            if updated.rows_affected() != 1 {
                tx.rollback().await?;
                return Ok(None);
            }
            let replaced = replace_documents!(tx, id, "tax", documents, "tax office assigned");
            Self::refresh_children(&mut tx, &[id]).await?;
            tx.commit().await?;
            Ok(Some(replaced))
        }

        async fn patch_trade_registration(
            &self,
            id: uuid::Uuid,
            patch: &$crate::TradePatch,
            guard: Option<&$crate::TradeCaseGuard>,
            documents: &[$crate::DocumentRecord],
        ) -> $crate::Result<$crate::TradePatchOutcome> {
            use sqlx::Row;
            let mut tx = self.writer.begin().await?;
            let now = patch.updated_at.unwrap_or_else($crate::shared::now);
            // The update locks the row (PostgreSQL) before the guard compares what it returns.
            let row = sqlx::query(
                "UPDATE trade_registrations SET updated_at = $1 WHERE id = $2 \
                 RETURNING status, trade_office",
            )
            .bind(now)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(row) = row else {
                tx.rollback().await?;
                return Ok($crate::TradePatchOutcome::NotFound);
            };
            if let Some(guard) = guard {
                let status: String = row.try_get("status")?;
                let office: Option<sqlx::types::Json<serde_json::Value>> =
                    row.try_get("trade_office")?;
                if status != guard.status || office.map(|j| j.0) != guard.trade_office {
                    tx.rollback().await?;
                    return Ok($crate::TradePatchOutcome::Stale);
                }
            }
            apply_trade_patch!(tx, id, patch);
            let replaced = replace_documents!(tx, id, "trade", documents, "trade office assigned");
            if !documents.is_empty() {
                Self::refresh_children(&mut tx, &[id]).await?;
            }
            tx.commit().await?;
            Ok($crate::TradePatchOutcome::Applied { replaced })
        }

        async fn list_cases(
            &self,
            kind: $crate::CaseKind,
            filter: &$crate::CaseFilter,
            after: Option<uuid::Uuid>,
            limit: i64,
        ) -> $crate::Result<Vec<$crate::CaseSummary>> {
            use sqlx::Row;
            // `$n IS NULL OR ...` keeps one statement per table for every combination of filters.
            let sql = match kind {
                $crate::CaseKind::Trade => {
                    "SELECT id, id AS public_id, company_id, provider_id, environment, package, \
                     status, created_at FROM trade_registrations WHERE ($1 IS NULL OR status = $1) \
                     AND ($2 IS NULL OR environment = $2) AND ($3 IS NULL OR id > $3) \
                     ORDER BY id LIMIT $4"
                }
                $crate::CaseKind::Tax => {
                    // Callers may choose tax registration ids: the order is the insert order
                    // (`list_key`), and the cursor (an id) stands for its row's key.
                    "SELECT id, public_id, company_id, provider_id, environment, package, status, \
                     created_at FROM tax_registrations WHERE ($1 IS NULL OR status = $1) \
                     AND ($2 IS NULL OR environment = $2) AND ($3 IS NULL OR list_key > \
                     (SELECT c.list_key FROM tax_registrations c WHERE c.id = $3)) \
                     ORDER BY list_key LIMIT $4"
                }
            };
            let rows = sqlx::query(sql)
                .bind(filter.status.as_deref())
                .bind(filter.environment.map(|e| e.as_str()))
                .bind(after)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?;
            rows.iter()
                .map(|row| {
                    let environment: String = row.try_get("environment")?;
                    Ok($crate::CaseSummary {
                        id: row.try_get("id")?,
                        public_id: row.try_get("public_id")?,
                        company_id: row.try_get("company_id")?,
                        provider_id: row.try_get("provider_id")?,
                        environment: domain::company::Environment::parse(&environment)
                            .ok_or_else(|| {
                                $crate::StoreError::Corrupt(format!(
                                    "unknown environment {environment:?}"
                                ))
                            })?,
                        package: row.try_get("package")?,
                        status: row.try_get("status")?,
                        created_at: row.try_get("created_at")?,
                    })
                })
                .collect()
        }

        async fn tax_registrations_missing_document(
            &self,
            environment: domain::company::Environment,
            doc_type: &str,
            after: Option<uuid::Uuid>,
            limit: i64,
        ) -> $crate::Result<Vec<uuid::Uuid>> {
            use sqlx::Row;
            let rows = sqlx::query(
                "SELECT t.id FROM tax_registrations t \
                 WHERE t.environment = $1 AND t.status IN ('validated', 'rejected') \
                 AND t.tax_office_number IS NOT NULL \
                 AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.case_id = t.id \
                                 AND d.doc_type = $2) \
                 AND ($3 IS NULL OR t.id > $3) ORDER BY t.id LIMIT $4",
            )
            .bind(environment.as_str())
            .bind(doc_type)
            .bind(after)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
            rows.iter()
                .map(|row| Ok(row.try_get("id")?))
                .collect()
        }

        async fn seed_trade_copies(
            &self,
            template: uuid::Uuid,
            count: u64,
        ) -> $crate::Result<Option<u64>> {
            // One statement per table and batch: the new ids come in as a VALUES list (its
            // columns are `column1`, `column2` in both dialects), the rest is copied from the
            // template's rows by the database itself.
            const BATCH: u64 = 4000;
            let company: Option<uuid::Uuid> =
                sqlx::query_scalar("SELECT company_id FROM trade_registrations WHERE id = $1")
                    .bind(template)
                    .fetch_optional(&self.pool)
                    .await?;
            let Some(company) = company else {
                return Ok(None);
            };
            let mut done = 0u64;
            while done < count {
                let n = (count - done).min(BATCH);
                let ids: Vec<(uuid::Uuid, uuid::Uuid)> = (0..n)
                    .map(|_| (uuid::Uuid::now_v7(), uuid::Uuid::now_v7()))
                    .collect();
                let values = (0..n)
                    .map(|i| format!("(${}, ${})", 2 * i + 2, 2 * i + 3))
                    .collect::<Vec<_>>()
                    .join(", ");
                let statements = [
                    (
                        company,
                        format!(
                            "INSERT INTO companies (id, kind, name, provider_id, environment, \
                             legal_form, registration_number, business_address, created_at) \
                             SELECT v.column1, c.kind, c.name, c.provider_id, c.environment, \
                             c.legal_form, c.registration_number, c.business_address, c.created_at \
                             FROM (VALUES {values}) AS v CROSS JOIN companies c WHERE c.id = $1"
                        ),
                    ),
                    (
                        template,
                        format!(
                            "INSERT INTO trade_registrations (id, company_id, provider_id, \
                             environment, package, status, record, price_cents, city_fee_cents, \
                             is_paid, trade_office, trade_office_candidates, source_product, \
                             created_at, updated_at) \
                             SELECT v.column2, v.column1, t.provider_id, t.environment, t.package, \
                             t.status, t.record, t.price_cents, t.city_fee_cents, t.is_paid, \
                             t.trade_office, t.trade_office_candidates, t.source_product, \
                             t.created_at, t.updated_at \
                             FROM (VALUES {values}) AS v CROSS JOIN trade_registrations t \
                             WHERE t.id = $1"
                        ),
                    ),
                    (
                        template,
                        format!(
                            "INSERT INTO status_history (case_id, case_kind, status, \
                             previous_status, actor, reason, at) \
                             SELECT v.column2, h.case_kind, h.status, h.previous_status, h.actor, \
                             h.reason, h.at \
                             FROM (VALUES {values}) AS v CROSS JOIN status_history h \
                             WHERE h.case_id = $1 ORDER BY v.column2, h.seq"
                        ),
                    ),
                ];
                let mut tx = self.writer.begin().await?;
                for (first, sql) in &statements {
                    // The SQL is built here from constants and placeholder numbers only.
                    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql.as_str())).bind(*first);
                    for (company_id, case_id) in &ids {
                        q = q.bind(*company_id).bind(*case_id);
                    }
                    q.execute(&mut *tx).await?;
                }
                let cases: Vec<uuid::Uuid> = ids.iter().map(|(_, case)| *case).collect();
                Self::refresh_children(&mut tx, &cases).await?;
                tx.commit().await?;
                done += n;
            }
            Ok(Some(done))
        }

        async fn upsert_trade_office(&self, e: &$crate::TradeOfficeEntry) -> $crate::Result<()> {
            sqlx::query(
                "INSERT INTO trade_offices (key, name, address, email, phone, website, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (key) DO UPDATE SET \
                 name = excluded.name, address = excluded.address, email = excluded.email, \
                 phone = excluded.phone, website = excluded.website, updated_at = excluded.updated_at",
            )
            .bind(&e.key)
            .bind(&e.name)
            .bind(&e.address)
            .bind(&e.email)
            .bind(&e.phone)
            .bind(&e.website)
            .bind(e.updated_at)
            .execute(&self.writer)
            .await?;
            Ok(())
        }

        async fn get_trade_office(
            &self,
            key: &str,
        ) -> $crate::Result<Option<$crate::TradeOfficeEntry>> {
            let row = sqlx::query(concat!(
                "SELECT ",
                office_columns!(),
                " FROM trade_offices o WHERE o.key = $1"
            ))
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
            row.as_ref().map($crate::shared::trade_office_from_row).transpose()
        }

        async fn list_trade_offices(
            &self,
            after: Option<&str>,
            limit: i64,
        ) -> $crate::Result<Vec<$crate::TradeOfficeEntry>> {
            sqlx::query(concat!(
                "SELECT ",
                office_columns!(),
                " FROM trade_offices o WHERE o.key > $1 ORDER BY o.key LIMIT $2"
            ))
            .bind(after.unwrap_or(""))
            .bind(limit)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map($crate::shared::trade_office_from_row)
            .collect()
        }

        async fn get_document(
            &self,
            id: uuid::Uuid,
        ) -> $crate::Result<Option<$crate::DocumentRecord>> {
            const SELECT: &str = "SELECT id, case_id, case_kind, owner_index, doc_type, name, \
                 storage_key, content_type, size, sha256, created_at FROM documents WHERE id = $1";
            let row = self
                .read(|c| Box::pin(sqlx::query(SELECT).bind(id).fetch_optional(c)))
                .await?;
            row.as_ref().map($crate::shared::document_from_row).transpose()
        }

        async fn record_rendered(
            &self,
            id: uuid::Uuid,
            size: i64,
            sha256: &[u8],
        ) -> $crate::Result<bool> {
            use sqlx::Row;
            let mut tx = self.writer.begin().await?;
            let done = sqlx::query(
                "UPDATE documents SET size = $1, sha256 = $2 WHERE id = $3 AND size IS NULL \
                 RETURNING case_id",
            )
            .bind(size)
            .bind(sha256)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(row) = done else {
                tx.rollback().await?;
                return Ok(false);
            };
            let case_id: uuid::Uuid = row.try_get("case_id")?;
            Self::refresh_children(&mut tx, &[case_id]).await?;
            tx.commit().await?;
            Ok(true)
        }

        async fn storage_key_known(&self, key: &str) -> $crate::Result<bool> {
            let found: Option<i32> =
                sqlx::query_scalar("SELECT 1 FROM documents WHERE storage_key = $1")
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await?;
            Ok(found.is_some())
        }

        async fn create_webhook_endpoint(
            &self,
            e: &$crate::WebhookEndpoint,
            limit: usize,
        ) -> $crate::Result<bool> {
            let mut tx = self.writer.begin().await?;
            // Creates of one provider's endpoints take turns: the update locks the provider's
            // row until the commit (PostgreSQL; SQLite's one writer takes turns anyway), so the
            // count below sees every endpoint committed before, and two creates cannot both
            // see one place left.
            sqlx::query("UPDATE companies SET kind = kind WHERE id = $1")
                .bind(e.provider_id)
                .execute(&mut *tx)
                .await?;
            let live: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM webhook_endpoints WHERE provider_id = $1 AND deleted_at IS NULL",
            )
            .bind(e.provider_id)
            .fetch_one(&mut *tx)
            .await?;
            if usize::try_from(live).unwrap_or(usize::MAX) >= limit {
                tx.rollback().await?;
                return Ok(false);
            }
            sqlx::query(
                "INSERT INTO webhook_endpoints (id, provider_id, url, events, secret, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(e.id)
            .bind(e.provider_id)
            .bind(&e.url)
            .bind(e.events.clone().map(sqlx::types::Json))
            .bind(&e.secret)
            .bind(e.created_at)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(true)
        }

        async fn list_webhook_endpoints(
            &self,
            provider_id: uuid::Uuid,
        ) -> $crate::Result<Vec<$crate::WebhookEndpoint>> {
            sqlx::query(
                "SELECT id, provider_id, url, events, secret, previous_secret, \
                 previous_secret_expires_at, created_at FROM webhook_endpoints \
                 WHERE provider_id = $1 AND deleted_at IS NULL ORDER BY created_at, id",
            )
            .bind(provider_id)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map($crate::shared::endpoint_from_row)
            .collect()
        }

        async fn get_webhook_endpoint(
            &self,
            id: uuid::Uuid,
        ) -> $crate::Result<Option<$crate::WebhookEndpoint>> {
            sqlx::query(
                "SELECT id, provider_id, url, events, secret, previous_secret, \
                 previous_secret_expires_at, created_at FROM webhook_endpoints \
                 WHERE id = $1 AND deleted_at IS NULL",
            )
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map($crate::shared::endpoint_from_row)
            .transpose()
        }

        async fn delete_webhook_endpoint(
            &self,
            id: uuid::Uuid,
            at: time::OffsetDateTime,
        ) -> $crate::Result<bool> {
            let mut tx = self.writer.begin().await?;
            let done = sqlx::query(
                "UPDATE webhook_endpoints SET deleted_at = $1 WHERE id = $2 AND deleted_at IS NULL",
            )
            .bind(at)
            .bind(id)
            .execute(&mut *tx)
            .await?;
            if done.rows_affected() != 1 {
                tx.rollback().await?;
                return Ok(false);
            }
            sqlx::query($crate::shared::GIVE_UP_PENDING)
                .bind(at)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(true)
        }

        async fn rotate_webhook_secret(
            &self,
            id: uuid::Uuid,
            secret: &str,
            previous_expires_at: time::OffsetDateTime,
        ) -> $crate::Result<bool> {
            let done = sqlx::query(
                "UPDATE webhook_endpoints SET previous_secret = secret, \
                 previous_secret_expires_at = $1, secret = $2 WHERE id = $3 AND deleted_at IS NULL",
            )
            .bind(previous_expires_at)
            .bind(secret)
            .bind(id)
            .execute(&self.writer)
            .await?;
            Ok(done.rows_affected() == 1)
        }

        async fn webhook_endpoint_secrets(&self) -> $crate::Result<Vec<$crate::StoredSecrets>> {
            use sqlx::Row;
            let rows = sqlx::query(
                "SELECT id, secret, previous_secret FROM webhook_endpoints ORDER BY id",
            )
            .fetch_all(&self.pool)
            .await?;
            rows.iter()
                .map(|r| {
                    Ok($crate::StoredSecrets {
                        endpoint_id: r.try_get("id")?,
                        secret: r.try_get("secret")?,
                        previous_secret: r.try_get("previous_secret")?,
                    })
                })
                .collect()
        }

        async fn replace_webhook_endpoint_secrets(
            &self,
            old: &$crate::StoredSecrets,
            new: &$crate::StoredSecrets,
        ) -> $crate::Result<bool> {
            // An empty previous secret never exists, so it stands for none in the comparison.
            let done = sqlx::query(
                "UPDATE webhook_endpoints SET secret = $1, previous_secret = $2 \
                 WHERE id = $3 AND secret = $4 AND COALESCE(previous_secret, '') = $5",
            )
            .bind(&new.secret)
            .bind(&new.previous_secret)
            .bind(old.endpoint_id)
            .bind(&old.secret)
            .bind(old.previous_secret.as_deref().unwrap_or(""))
            .execute(&self.writer)
            .await?;
            Ok(done.rows_affected() == 1)
        }

        async fn claim_webhook_messages(
            &self,
            now_us: i64,
            lease_until_us: i64,
            limit: i64,
        ) -> $crate::Result<Vec<$crate::ClaimedMessage>> {
            use sqlx::Row;
            // A read first: an idle worker never takes the write lock (SQLite has one).
            let due = sqlx::query(
                "SELECT 1 FROM webhook_messages WHERE state = 'pending' AND next_attempt_us <= $1 \
                 AND (locked_until_us IS NULL OR locked_until_us < $1) LIMIT 1",
            )
            .bind(now_us)
            .fetch_optional(&self.pool)
            .await?;
            if due.is_none() {
                return Ok(Vec::new());
            }
            let claimed = sqlx::query(concat!(
                "UPDATE webhook_messages SET locked_until_us = $1 WHERE seq IN (\
                 SELECT m.seq FROM webhook_messages m \
                 WHERE m.state = 'pending' AND m.next_attempt_us <= $2 \
                 AND (m.locked_until_us IS NULL OR m.locked_until_us < $2) \
                 AND NOT EXISTS (SELECT 1 FROM webhook_messages p WHERE p.endpoint_id = m.endpoint_id \
                 AND p.case_id = m.case_id AND p.state = 'pending' AND p.seq < m.seq) \
                 ORDER BY m.next_attempt_us, m.seq LIMIT $3 ",
                $skip_locked,
                ") RETURNING id, endpoint_id, case_id, event_type, payload, attempts"
            ))
            .bind(lease_until_us)
            .bind(now_us)
            .bind(limit)
            .fetch_all(&self.writer)
            .await?;
            // Each endpoint of the batch is read once, however many messages it has. A deleted
            // one (`None`) takes none: a create that read the endpoint before the delete
            // committed may have queued messages the delete did not see to give up.
            let mut endpoints: std::collections::HashMap<uuid::Uuid, Option<$crate::WebhookEndpoint>> =
                std::collections::HashMap::new();
            let mut out = Vec::with_capacity(claimed.len());
            let mut deleted_endpoints: Vec<uuid::Uuid> = Vec::new();
            for row in &claimed {
                let endpoint_id: uuid::Uuid = row.try_get("endpoint_id")?;
                if !endpoints.contains_key(&endpoint_id) {
                    let found = sqlx::query(
                        "SELECT id, provider_id, url, events, secret, previous_secret, \
                         previous_secret_expires_at, created_at, deleted_at FROM webhook_endpoints \
                         WHERE id = $1",
                    )
                    .bind(endpoint_id)
                    .fetch_one(&self.pool)
                    .await?;
                    let deleted: Option<time::OffsetDateTime> = found.try_get("deleted_at")?;
                    let endpoint = match deleted {
                        Some(_) => {
                            deleted_endpoints.push(endpoint_id);
                            None
                        }
                        None => Some($crate::shared::endpoint_from_row(&found)?),
                    };
                    endpoints.insert(endpoint_id, endpoint);
                }
                let Some(endpoint) = &endpoints[&endpoint_id] else {
                    continue;
                };
                out.push($crate::ClaimedMessage {
                    id: row.try_get("id")?,
                    case_id: row.try_get("case_id")?,
                    event_type: row.try_get("event_type")?,
                    payload: row.try_get("payload")?,
                    attempts: row.try_get("attempts")?,
                    endpoint: endpoint.clone(),
                });
            }
            // What the delete gives up, given up now.
            for id in deleted_endpoints {
                let at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(now_us) * 1000)
                    .unwrap_or_else(|_| time::OffsetDateTime::now_utc());
                sqlx::query($crate::shared::GIVE_UP_PENDING)
                    .bind(at)
                    .bind(id)
                    .execute(&self.writer)
                    .await?;
            }
            Ok(out)
        }

        async fn record_webhook_attempt(
            &self,
            a: &$crate::WebhookAttempt,
            outcome: $crate::AttemptOutcome,
        ) -> $crate::Result<()> {
            let mut tx = self.writer.begin().await?;
            let (state, next_us, finished) = match outcome {
                $crate::AttemptOutcome::Delivered => ("delivered", None, Some(a.at)),
                $crate::AttemptOutcome::RetryAt(us) => ("pending", Some(us), None),
                $crate::AttemptOutcome::Failed => ("failed", None, Some(a.at)),
            };
            sqlx::query(
                "UPDATE webhook_messages SET state = $1, attempts = $2, \
                 next_attempt_us = COALESCE($3, next_attempt_us), finished_at = $4, \
                 locked_until_us = NULL WHERE id = $5 AND state = 'pending'",
            )
            .bind(state)
            .bind(a.attempt)
            .bind(next_us)
            .bind(finished)
            .bind(a.message_id)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "INSERT INTO webhook_attempts (message_id, endpoint_id, attempt, at, status_code, \
                 error, duration_ms, outcome) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(a.message_id)
            .bind(a.endpoint_id)
            .bind(a.attempt)
            .bind(a.at)
            .bind(a.status_code)
            .bind(&a.error)
            .bind(a.duration_ms)
            .bind(outcome.as_str())
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(())
        }

        async fn retry_webhook_message(
            &self,
            endpoint_id: uuid::Uuid,
            message_id: uuid::Uuid,
            now_us: i64,
        ) -> $crate::Result<Option<String>> {
            let mut tx = self.writer.begin().await?;
            let state: Option<String> = sqlx::query_scalar(
                "SELECT state FROM webhook_messages WHERE id = $1 AND endpoint_id = $2",
            )
            .bind(message_id)
            .bind(endpoint_id)
            .fetch_optional(&mut *tx)
            .await?;
            let mut answer = state;
            if answer.as_deref() == Some("failed") {
                // Not when the endpoint was deleted meanwhile (which gave up its messages), nor
                // when another retry got there first.
                let moved = sqlx::query(
                    "UPDATE webhook_messages SET state = 'pending', next_attempt_us = $1, \
                     finished_at = NULL, locked_until_us = NULL \
                     WHERE id = $2 AND state = 'failed' AND endpoint_id IN \
                     (SELECT id FROM webhook_endpoints WHERE deleted_at IS NULL)",
                )
                .bind(now_us)
                .bind(message_id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if moved == 1 {
                    answer = Some("requeued".into());
                }
            }
            tx.commit().await?;
            Ok(answer)
        }

        async fn kept_answers(
            &self,
            after: Option<(uuid::Uuid, &str)>,
            limit: i64,
        ) -> $crate::Result<Vec<(uuid::Uuid, String, Vec<u8>)>> {
            use sqlx::Row;
            let (scope, key) = after.unzip();
            sqlx::query(
                "SELECT scope, key, response_body FROM idempotency_keys \
                 WHERE state = 'done' AND response_body IS NOT NULL \
                 AND ($1 IS NULL OR scope > $1 OR (scope = $1 AND key > $2)) \
                 ORDER BY scope, key LIMIT $3",
            )
            .bind(scope)
            .bind(key)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| Ok((r.try_get("scope")?, r.try_get("key")?, r.try_get("response_body")?)))
            .collect()
        }

        async fn replace_kept_answer(
            &self,
            scope: uuid::Uuid,
            key: &str,
            was: &[u8],
            new: &[u8],
        ) -> $crate::Result<bool> {
            let done = sqlx::query(
                "UPDATE idempotency_keys SET response_body = $4 \
                 WHERE scope = $1 AND key = $2 AND state = 'done' AND response_body = $3",
            )
            .bind(scope)
            .bind(key)
            .bind(was)
            .bind(new)
            .execute(&self.writer)
            .await?;
            Ok(done.rows_affected() == 1)
        }

        async fn list_webhook_messages(
            &self,
            endpoint_id: uuid::Uuid,
            state: Option<&str>,
            before_seq: Option<i64>,
            limit: i64,
        ) -> $crate::Result<Vec<$crate::WebhookMessageRecord>> {
            use sqlx::Row;
            sqlx::query(
                "SELECT m.seq, m.id, m.event_type, m.state, m.attempts, m.created_at, \
                 m.next_attempt_us, m.finished_at, \
                 COALESCE((SELECT t.public_id FROM tax_registrations t WHERE t.id = m.case_id), \
                          m.case_id) AS case_id \
                 FROM webhook_messages m \
                 WHERE m.endpoint_id = $1 AND m.seq < $2 AND ($3 IS NULL OR m.state = $3) \
                 ORDER BY m.seq DESC LIMIT $4",
            )
            .bind(endpoint_id)
            .bind(before_seq.unwrap_or(i64::MAX))
            .bind(state)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| {
                let state: String = r.try_get("state")?;
                let next_us: i64 = r.try_get("next_attempt_us")?;
                Ok($crate::WebhookMessageRecord {
                    seq: r.try_get("seq")?,
                    id: r.try_get("id")?,
                    event_type: r.try_get("event_type")?,
                    case_id: r.try_get("case_id")?,
                    attempts: r.try_get("attempts")?,
                    created_at: r.try_get("created_at")?,
                    next_attempt_at: $crate::next_attempt(&state, next_us),
                    finished_at: r.try_get("finished_at")?,
                    state,
                })
            })
            .collect()
        }

        async fn list_webhook_attempts(
            &self,
            endpoint_id: uuid::Uuid,
            before_seq: Option<i64>,
            limit: i64,
        ) -> $crate::Result<Vec<$crate::WebhookAttemptRecord>> {
            use sqlx::Row;
            sqlx::query(
                "SELECT a.seq, a.message_id, a.endpoint_id, a.attempt, a.at, a.status_code, a.error, \
                 a.duration_ms, a.outcome, m.event_type, m.state, m.next_attempt_us, \
                 COALESCE((SELECT t.public_id FROM tax_registrations t WHERE t.id = m.case_id), \
                          m.case_id) AS case_id \
                 FROM webhook_attempts a JOIN webhook_messages m ON m.id = a.message_id \
                 WHERE a.endpoint_id = $1 AND a.seq < $2 \
                 ORDER BY a.seq DESC LIMIT $3",
            )
            .bind(endpoint_id)
            .bind(before_seq.unwrap_or(i64::MAX))
            .bind(limit)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|r| {
                let state: String = r.try_get("state")?;
                let next_us: i64 = r.try_get("next_attempt_us")?;
                Ok($crate::WebhookAttemptRecord {
                    seq: r.try_get("seq")?,
                    attempt: $crate::WebhookAttempt {
                        message_id: r.try_get("message_id")?,
                        endpoint_id: r.try_get("endpoint_id")?,
                        attempt: r.try_get("attempt")?,
                        at: r.try_get("at")?,
                        status_code: r.try_get("status_code")?,
                        error: r.try_get("error")?,
                        duration_ms: r.try_get("duration_ms")?,
                    },
                    outcome: r.try_get("outcome")?,
                    event_type: r.try_get("event_type")?,
                    case_id: r.try_get("case_id")?,
                    next_attempt_at: $crate::next_attempt(&state, next_us),
                    message_state: state,
                })
            })
            .collect()
        }

        async fn ping(&self) -> $crate::Result<()> {
            sqlx::query("SELECT 1").execute(&self.pool).await?;
            Ok(())
        }

        async fn create_provider(&self, name: &str) -> $crate::Result<domain::company::Company> {
            let company = domain::company::Company {
                id: uuid::Uuid::now_v7(),
                kind: domain::company::CompanyKind::Provider,
                name: name.to_string(),
                provider_id: None,
                environment: None,
                legal_form: None,
                registration_number: None,
                business_address: None,
                created_at: $crate::shared::now(),
            };
            sqlx::query(
                "INSERT INTO companies (id, kind, name, created_at) VALUES ($1, 'provider', $2, $3)",
            )
            .bind(company.id)
            .bind(&company.name)
            .bind(company.created_at)
            .execute(&self.writer)
            .await?;
            Ok(company)
        }

        async fn create_client_company(
            &self,
            new: $crate::NewClientCompany,
        ) -> $crate::Result<domain::company::Company> {
            let company = domain::company::Company {
                id: uuid::Uuid::now_v7(),
                kind: domain::company::CompanyKind::Client,
                name: new.name,
                provider_id: Some(new.provider_id),
                environment: Some(new.environment),
                legal_form: new.legal_form,
                registration_number: new.registration_number,
                business_address: new.business_address,
                created_at: $crate::shared::now(),
            };
            sqlx::query($crate::shared::INSERT_CLIENT_COMPANY)
            .bind(company.id)
            .bind(&company.name)
            .bind(company.provider_id)
            .bind(company.environment.map(|e| e.as_str()))
            .bind(&company.legal_form)
            .bind(&company.registration_number)
            .bind(company.business_address.clone().map(sqlx::types::Json))
            .bind(company.created_at)
            .execute(&self.writer)
            .await?;
            Ok(company)
        }

        async fn get_company(
            &self,
            id: uuid::Uuid,
        ) -> $crate::Result<Option<domain::company::Company>> {
            use sqlx::Row;
            const SELECT: &str = "SELECT id, kind, name, provider_id, environment, legal_form, \
                 registration_number, business_address, created_at FROM companies WHERE id = $1";
            let row = self
                .read(|c| Box::pin(sqlx::query(SELECT).bind(id).fetch_optional(c)))
                .await?;
            let Some(row) = row else { return Ok(None) };
            let kind: String = row.try_get("kind")?;
            let environment: Option<String> = row.try_get("environment")?;
            let address: Option<sqlx::types::Json<serde_json::Value>> =
                row.try_get("business_address")?;
            Ok(Some(domain::company::Company {
                id: row.try_get("id")?,
                kind: domain::company::CompanyKind::parse(&kind).ok_or_else(|| {
                    $crate::StoreError::Corrupt(format!("unknown company kind {kind:?}"))
                })?,
                name: row.try_get("name")?,
                provider_id: row.try_get("provider_id")?,
                environment: match environment {
                    None => None,
                    Some(e) => Some(domain::company::Environment::parse(&e).ok_or_else(|| {
                        $crate::StoreError::Corrupt(format!("unknown environment {e:?}"))
                    })?),
                },
                legal_form: row.try_get("legal_form")?,
                registration_number: row.try_get("registration_number")?,
                business_address: address.map(|j| j.0),
                created_at: row.try_get("created_at")?,
            }))
        }

        async fn create_operator(&self, name: &str) -> $crate::Result<$crate::Operator> {
            let op = $crate::Operator {
                id: uuid::Uuid::now_v7(),
                name: name.to_string(),
                created_at: $crate::shared::now(),
            };
            sqlx::query("INSERT INTO operators (id, name, created_at) VALUES ($1, $2, $3)")
                .bind(op.id)
                .bind(&op.name)
                .bind(op.created_at)
                .execute(&self.writer)
                .await?;
            Ok(op)
        }

        async fn get_operator(&self, id: uuid::Uuid) -> $crate::Result<Option<$crate::Operator>> {
            use sqlx::Row;
            let row = sqlx::query("SELECT id, name, created_at FROM operators WHERE id = $1")
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
            row.map(|row| {
                Ok($crate::Operator {
                    id: row.try_get("id")?,
                    name: row.try_get("name")?,
                    created_at: row.try_get("created_at")?,
                })
            })
            .transpose()
        }

        async fn insert_api_key(&self, key: &$crate::ApiKeyRecord) -> $crate::Result<()> {
            sqlx::query($crate::shared::INSERT_API_KEY)
            .bind(&key.prefix)
            .bind(&key.hash)
            .bind(key.kind.as_str())
            .bind(key.company_id)
            .bind(key.operator_id)
            .bind(key.created_at)
            .bind(key.revoked_at)
            .execute(&self.writer)
            .await?;
            Ok(())
        }

        async fn find_api_key(&self, prefix: &str) -> $crate::Result<Option<$crate::ApiKeyRecord>> {
            use sqlx::Row;
            const SELECT: &str = "SELECT k.prefix, k.hash, k.kind, k.company_id, k.operator_id, \
                 k.created_at, k.revoked_at, c.provider_id AS company_provider_id \
                 FROM api_keys k LEFT JOIN companies c ON c.id = k.company_id WHERE k.prefix = $1";
            let row = self
                .read(|c| Box::pin(sqlx::query(SELECT).bind(prefix.to_string()).fetch_optional(c)))
                .await?;
            let Some(row) = row else { return Ok(None) };
            let kind: String = row.try_get("kind")?;
            Ok(Some($crate::ApiKeyRecord {
                prefix: row.try_get("prefix")?,
                hash: row.try_get("hash")?,
                kind: $crate::decode_kind(&kind)?,
                company_id: row.try_get("company_id")?,
                operator_id: row.try_get("operator_id")?,
                created_at: row.try_get("created_at")?,
                revoked_at: row.try_get("revoked_at")?,
                company_provider_id: row.try_get("company_provider_id")?,
            }))
        }

        async fn revoke_api_key(
            &self,
            prefix: &str,
            at: time::OffsetDateTime,
        ) -> $crate::Result<bool> {
            let done = sqlx::query(
                "UPDATE api_keys SET revoked_at = $1 WHERE prefix = $2 AND revoked_at IS NULL",
            )
            .bind(at)
            .bind(prefix)
            .execute(&self.writer)
            .await?;
            Ok(done.rows_affected() == 1)
        }

        async fn insert_company_api_key(
            &self,
            key: &$crate::ApiKeyRecord,
            max: usize,
        ) -> $crate::Result<bool> {
            let Some(company_id) = key.company_id else {
                return Err($crate::StoreError::Corrupt(format!(
                    "key {} belongs to no company",
                    key.prefix
                )));
            };
            let mut tx = self.writer.begin().await?;
            // Keys of one company are issued in turns: the update locks the company's row until
            // the commit (PostgreSQL; SQLite's one writer takes turns anyway), so the count
            // below sees every key committed before, and two inserts cannot both see one place
            // left (as `create_webhook_endpoint`).
            sqlx::query("UPDATE companies SET kind = kind WHERE id = $1")
                .bind(company_id)
                .execute(&mut *tx)
                .await?;
            let live: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM api_keys WHERE company_id = $1 AND revoked_at IS NULL",
            )
            .bind(company_id)
            .fetch_one(&mut *tx)
            .await?;
            if usize::try_from(live).unwrap_or(usize::MAX) >= max {
                tx.rollback().await?;
                return Ok(false);
            }
            sqlx::query($crate::shared::INSERT_API_KEY)
            .bind(&key.prefix)
            .bind(&key.hash)
            .bind(key.kind.as_str())
            .bind(key.company_id)
            .bind(key.operator_id)
            .bind(key.created_at)
            .bind(key.revoked_at)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(true)
        }

        async fn list_api_keys(
            &self,
            company_id: uuid::Uuid,
            after: Option<&str>,
            limit: i64,
        ) -> $crate::Result<Vec<$crate::ApiKeySummary>> {
            use sqlx::Row;
            // Row values compare in both dialects; a cursor that names no key of this company
            // (another company's included: its existence must not show) compares NULL and
            // ends the list.
            let rows = sqlx::query(
                "SELECT prefix, kind, created_at, last_used_at FROM api_keys \
                 WHERE company_id = $1 AND revoked_at IS NULL \
                 AND ($2 IS NULL OR (created_at, prefix) > \
                      (SELECT a.created_at, a.prefix FROM api_keys a \
                       WHERE a.prefix = $2 AND a.company_id = $1)) \
                 ORDER BY created_at, prefix LIMIT $3",
            )
            .bind(company_id)
            .bind(after.map(str::to_string))
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
            rows.iter()
                .map(|row| {
                    let kind: String = row.try_get("kind")?;
                    Ok($crate::ApiKeySummary {
                        prefix: row.try_get("prefix")?,
                        kind: $crate::decode_kind(&kind)?,
                        created_at: row.try_get("created_at")?,
                        last_used_at: row.try_get("last_used_at")?,
                    })
                })
                .collect()
        }

        async fn touch_api_key(
            &self,
            prefix: &str,
            at: time::OffsetDateTime,
        ) -> $crate::Result<()> {
            sqlx::query("UPDATE api_keys SET last_used_at = $1 WHERE prefix = $2")
                .bind(at)
                .bind(prefix)
                .execute(&self.writer)
                .await?;
            Ok(())
        }

        async fn claim_idempotency_key(
            &self,
            scope: uuid::Uuid,
            key: &str,
            request_hash: &[u8],
            times: $crate::IdempotencyTimes,
        ) -> $crate::Result<$crate::IdempotencyClaim> {
            use sqlx::Row;
            // A few rounds: a concurrent request may complete, expire or release the record
            // between our insert and our read.
            for _ in 0..4 {
                let inserted = sqlx::query(
                    "INSERT INTO idempotency_keys (scope, key, request_hash, state, created_at) \
                     VALUES ($1, $2, $3, 'in-flight', $4) ON CONFLICT (scope, key) DO NOTHING",
                )
                .bind(scope)
                .bind(key)
                .bind(request_hash)
                .bind(times.now)
                .execute(&self.writer)
                .await?;
                if inserted.rows_affected() == 1 {
                    return Ok($crate::IdempotencyClaim::Claimed);
                }
                let row = sqlx::query(
                    "SELECT request_hash, state, response_status, response_body, created_at \
                     FROM idempotency_keys WHERE scope = $1 AND key = $2",
                )
                .bind(scope)
                .bind(key)
                .fetch_optional(&self.pool)
                .await?;
                let Some(row) = row else { continue };
                let stored_hash: Vec<u8> = row.try_get("request_hash")?;
                let state: String = row.try_get("state")?;
                let created_at: time::OffsetDateTime = row.try_get("created_at")?;
                let age = times.now - created_at;
                let expired = age > times.ttl || (state == "in-flight" && age > times.abandon_after);
                if expired {
                    sqlx::query(
                        "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND created_at = $3",
                    )
                    .bind(scope)
                    .bind(key)
                    .bind(created_at)
                    .execute(&self.writer)
                    .await?;
                    continue;
                }
                if stored_hash != request_hash {
                    return Ok($crate::IdempotencyClaim::Mismatch);
                }
                if state != "done" {
                    return Ok($crate::IdempotencyClaim::InFlight);
                }
                let status: Option<i32> = row.try_get("response_status")?;
                let body: Option<Vec<u8>> = row.try_get("response_body")?;
                let status = status
                    .and_then(|s| u16::try_from(s).ok())
                    .ok_or_else(|| $crate::StoreError::Corrupt("idempotency record without status".into()))?;
                return Ok($crate::IdempotencyClaim::Replay {
                    status,
                    body: body.unwrap_or_default(),
                });
            }
            Ok($crate::IdempotencyClaim::InFlight)
        }

        async fn complete_idempotency_key(
            &self,
            scope: uuid::Uuid,
            key: &str,
            status: u16,
            body: &[u8],
        ) -> $crate::Result<()> {
            sqlx::query(
                "UPDATE idempotency_keys SET state = 'done', response_status = $1, response_body = $2 \
                 WHERE scope = $3 AND key = $4",
            )
            .bind(i32::from(status))
            .bind(body)
            .bind(scope)
            .bind(key)
            .execute(&self.writer)
            .await?;
            Ok(())
        }

        async fn release_idempotency_key(&self, scope: uuid::Uuid, key: &str) -> $crate::Result<()> {
            sqlx::query(
                "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND state = 'in-flight'",
            )
            .bind(scope)
            .bind(key)
            .execute(&self.writer)
            .await?;
            Ok(())
        }
    }

    impl $repo {
        /// The statement of a trade registration read, in this dialect.
        pub(crate) const TRADE_SELECT: &'static str = trade_select!($children, $verified, $join);

        /// A trade registration read through sqlx on the dialect's `read` connections (SQLite:
        /// its pool; PostgreSQL: `ReadConnections`): one statement, the children as JSON.
        pub(crate) async fn trade_via_sqlx(
            &self,
            id: uuid::Uuid,
        ) -> $crate::Result<Option<$crate::TradeRegistrationRecord>> {
            use sqlx::Row;
            // One statement: the history, documents and identity verifications come along as
            // JSON arrays (`$children`), and the company's name and legal form by a join.
            let row = self
                .read(|c| Box::pin(sqlx::query(Self::TRADE_SELECT).bind(id).fetch_optional(c)))
                .await?;
            let Some(row) = row else { return Ok(None) };
            let environment: String = row.try_get("environment")?;
            let record: sqlx::types::Json<serde_json::Value> = row.try_get("record")?;
            let office: Option<sqlx::types::Json<serde_json::Value>> = row.try_get("trade_office")?;
            let candidates: Option<sqlx::types::Json<serde_json::Value>> =
                row.try_get("trade_office_candidates")?;
            let (documents, history) = read_children!(row, id);
            let verified: String = row.try_get("verified_json")?;
            // The directory entry, when the join found one.
            let office_key: Option<String> = row.try_get("office_key")?;
            let office_entry = match office_key {
                Some(_) => Some($crate::shared::trade_office_from_row(&row)?),
                None => None,
            };
            Ok(Some($crate::TradeRegistrationRecord {
                id: row.try_get("id")?,
                company_id: row.try_get("company_id")?,
                provider_id: row.try_get("provider_id")?,
                environment: domain::company::Environment::parse(&environment).ok_or_else(|| {
                    $crate::StoreError::Corrupt(format!("unknown environment {environment:?}"))
                })?,
                package: row.try_get("package")?,
                status: row.try_get("status")?,
                record: record.0,
                price_cents: row.try_get("price_cents")?,
                city_fee_cents: row.try_get("city_fee_cents")?,
                is_paid: row.try_get("is_paid")?,
                trade_office: office.map(|j| j.0),
                trade_office_candidates: candidates.map(|j| j.0),
                trade_office_entry: office_entry,
                source_product: row.try_get("source_product")?,
                created_at: row.try_get("created_at")?,
                company_name: row.try_get("company_name")?,
                company_legal_form: row.try_get("company_legal_form")?,
                documents,
                history,
                identity_verifications: $crate::shared::verifications_from_json(&verified)?,
            }))
        }
    }
    };
}

/// Binds: id, name, provider id, environment, legal form, registration number, business
/// address (JSON), created at.
/// An API key record; the statement of `insert_api_key` and of the capped
/// `insert_company_api_key`.
pub(crate) const INSERT_API_KEY: &str = "INSERT INTO api_keys (prefix, hash, kind, company_id, \
     operator_id, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7)";

pub(crate) const INSERT_CLIENT_COMPANY: &str = "INSERT INTO companies (id, kind, name, provider_id, \
     environment, legal_form, registration_number, business_address, created_at) \
     VALUES ($1, 'client', $2, $3, $4, $5, $6, $7, $8)";

// The statements of a case create, written once for both dialects and both SQLite paths (sqlx
// here, rusqlite in `sqlite_write.rs`); each comment names the values in bind order.

/// id, company id, provider id, environment, package, status, record (JSON), price (cents),
/// is paid, trade office (JSON), candidates (JSON), created at (also `updated_at`).
pub(crate) const INSERT_TRADE: &str = "INSERT INTO trade_registrations (id, company_id, \
     provider_id, environment, package, status, record, price_cents, is_paid, trade_office, \
     trade_office_candidates, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)";

/// id, company id, provider id, environment, package, legal form, status, record (JSON), tax
/// office number, tax office lookup (JSON), created at (also `updated_at`), list key, public id.
pub(crate) const INSERT_TAX: &str = "INSERT INTO tax_registrations (id, company_id, provider_id, \
     environment, package, legal_form, status, record, tax_office_number, tax_office_lookup, \
     created_at, updated_at, list_key, public_id) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12, $13)";

/// The fields of a [`crate::DocumentRecord`] in declaration order.
pub(crate) const INSERT_DOCUMENT: &str = "INSERT INTO documents (id, case_id, case_kind, \
     owner_index, doc_type, name, storage_key, content_type, size, sha256, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

/// case id, case kind, then the fields of a [`crate::StatusChange`] in declaration order.
pub(crate) const INSERT_HISTORY: &str = "INSERT INTO status_history (case_id, case_kind, status, \
     previous_status, actor, reason, at) VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// The fields of an [`EventMessage`]: id, endpoint id, case id, event type, body, next attempt
/// (µs), created at.
/// Gives up an endpoint's pending messages (`$1` the time, `$2` the endpoint): when it is
/// deleted, and when the worker finds messages a create queued for it as the delete committed.
pub(crate) const GIVE_UP_PENDING: &str = "UPDATE webhook_messages SET state = 'failed', \
     finished_at = $1, locked_until_us = NULL WHERE endpoint_id = $2 AND state = 'pending'";
pub(crate) const INSERT_WEBHOOK_MESSAGE: &str = "INSERT INTO webhook_messages (id, endpoint_id, \
     case_id, event_type, payload, state, attempts, next_attempt_us, created_at) \
     VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $7)";

/// The fields of an [`crate::IdempotentAnswer`]: status, body, scope, key. Completes the claim
/// only while it is still this request's (`state = 'in-flight'`).
pub(crate) const COMPLETE_CLAIM: &str = "UPDATE idempotency_keys SET state = 'done', \
     response_status = $1, response_body = $2 \
     WHERE scope = $3 AND key = $4 AND state = 'in-flight'";

/// The case's company and the endpoints of its provider that may receive its events (binds:
/// case id), in the order their messages are written; columns as in [`EventTarget`].
pub(crate) fn event_targets_query(kind: &str) -> &'static str {
    if kind == "tax" {
        "SELECT c.public_id, c.company_id, c.status, c.environment, \
         c.record ->> 'client_reference' AS client_reference, e.id AS endpoint_id, e.events \
         FROM tax_registrations c JOIN webhook_endpoints e \
         ON e.provider_id = c.provider_id AND e.deleted_at IS NULL WHERE c.id = $1 \
         ORDER BY e.created_at, e.id"
    } else {
        "SELECT c.id AS public_id, c.company_id, c.status, c.environment, \
         c.record ->> 'client_reference' AS client_reference, e.id AS endpoint_id, e.events \
         FROM trade_registrations c JOIN webhook_endpoints e \
         ON e.provider_id = c.provider_id AND e.deleted_at IS NULL WHERE c.id = $1 \
         ORDER BY e.created_at, e.id"
    }
}

/// Whether any of these status changes has a webhook event (otherwise the outbox is skipped).
pub(crate) fn has_events(kind: &str, history: &[crate::StatusChange]) -> bool {
    history
        .iter()
        .any(|h| domain::webhook::event_type(kind, &h.status).is_some())
}

/// A row of [`event_targets_query`].
pub(crate) struct EventTarget {
    /// The id the case's provider knows it by, which the payload names (not the case's key:
    /// docs/adr/0006-case-ids-per-provider.md).
    pub case_public_id: uuid::Uuid,
    pub endpoint_id: uuid::Uuid,
    /// The event types the endpoint subscribed to; `None` for all.
    pub events: Option<Vec<String>>,
    pub company_id: uuid::Uuid,
    /// The case's status as the transaction sees it.
    pub status: String,
    pub environment: String,
    pub client_reference: Option<String>,
}

/// A webhook message to write in the transaction of its status change (the outbox).
pub(crate) struct EventMessage {
    pub id: uuid::Uuid,
    pub endpoint_id: uuid::Uuid,
    pub event_type: &'static str,
    /// The exact text that is signed and sent.
    pub body: String,
    pub next_attempt_us: i64,
    pub at: time::OffsetDateTime,
}

/// The messages of a case's status changes: one per change that has an event and per target
/// that subscribed to it, changes first, then targets in the given order.
pub(crate) fn event_messages(
    kind: &str,
    history: &[crate::StatusChange],
    targets: &[EventTarget],
) -> Vec<EventMessage> {
    let mut messages = Vec::new();
    for h in history {
        for t in targets {
            let event = domain::webhook::CaseEvent {
                case_kind: kind,
                case_id: t.case_public_id,
                company_id: t.company_id,
                status: &h.status,
                previous_status: h.previous_status.as_deref(),
                environment: &t.environment,
                client_reference: t.client_reference.as_deref(),
                reason: h.reason.as_deref(),
                at: h.at,
            };
            let (Some(event_type), Some(body)) = (event.event_type(), event.body()) else {
                continue;
            };
            if !domain::webhook::subscribed(t.events.as_deref(), event_type) {
                continue;
            }
            messages.push(EventMessage {
                id: uuid::Uuid::now_v7(),
                endpoint_id: t.endpoint_id,
                event_type,
                body,
                next_attempt_us: crate::micros(h.at),
                at: h.at,
            });
        }
    }
    messages
}

/// The `documents.updated` messages of a case whose `documents` were written (each replacing
/// the document in `replaces` at the same index, if any): one per target that subscribed to it.
pub(crate) fn documents_messages(
    kind: &str,
    reason: &str,
    documents: &[crate::DocumentRecord],
    replaces: &[Option<uuid::Uuid>],
    targets: &[EventTarget],
) -> Vec<EventMessage> {
    let event_type = domain::webhook::DOCUMENTS_UPDATED;
    let Some(at) = documents.iter().map(|d| d.created_at).max() else {
        return Vec::new();
    };
    let updated: Vec<domain::webhook::UpdatedDocument> = documents
        .iter()
        .zip(replaces)
        .map(|(d, r)| domain::webhook::UpdatedDocument {
            id: d.id,
            doc_type: &d.doc_type,
            owner_index: d.owner_index,
            name: &d.name,
            replaces: *r,
        })
        .collect();
    targets
        .iter()
        .filter(|t| domain::webhook::subscribed(t.events.as_deref(), event_type))
        .filter_map(|t| {
            let body = domain::webhook::DocumentsEvent {
                case: domain::webhook::CaseEvent {
                    case_kind: kind,
                    case_id: t.case_public_id,
                    company_id: t.company_id,
                    status: &t.status,
                    previous_status: None,
                    environment: &t.environment,
                    client_reference: t.client_reference.as_deref(),
                    reason: Some(reason),
                    at,
                },
                documents: &updated,
            }
            .body()?;
            Some(EventMessage {
                id: uuid::Uuid::now_v7(),
                endpoint_id: t.endpoint_id,
                event_type,
                body,
                next_attempt_us: crate::micros(at),
                at,
            })
        })
        .collect()
}

/// A `documents` row, read the same way in both dialects.
pub(crate) fn document_from_row<R>(row: &R) -> crate::Result<crate::DocumentRecord>
where
    R: sqlx::Row,
    for<'r> &'r str: sqlx::ColumnIndex<R>,
    for<'r> uuid::Uuid: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i32>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<Vec<u8>>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> time::OffsetDateTime: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(crate::DocumentRecord {
        id: row.try_get("id")?,
        case_id: row.try_get("case_id")?,
        case_kind: row.try_get("case_kind")?,
        owner_index: row.try_get("owner_index")?,
        doc_type: row.try_get("doc_type")?,
        name: row.try_get("name")?,
        storage_key: row.try_get("storage_key")?,
        content_type: row.try_get("content_type")?,
        size: row.try_get("size")?,
        sha256: row.try_get("sha256")?,
        created_at: row.try_get("created_at")?,
    })
}

/// A `trade_offices` row selected with [`office_columns!`], read the same way in both dialects.
pub(crate) fn trade_office_from_row<R>(row: &R) -> crate::Result<crate::TradeOfficeEntry>
where
    R: sqlx::Row,
    for<'r> &'r str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> time::OffsetDateTime: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(crate::TradeOfficeEntry {
        key: row.try_get("office_key")?,
        name: row.try_get("office_name")?,
        address: row.try_get("office_address")?,
        email: row.try_get("office_email")?,
        phone: row.try_get("office_phone")?,
        website: row.try_get("office_website")?,
        updated_at: row.try_get("office_updated_at")?,
    })
}

/// The current time at microsecond precision: what both databases store without rounding, so a
/// value read back compares equal to the one written.
pub(crate) fn now() -> time::OffsetDateTime {
    let t = time::OffsetDateTime::now_utc();
    let micros = t.nanosecond() / 1_000 * 1_000;
    t.replace_nanosecond(micros).unwrap_or(t)
}

/// A `webhook_endpoints` row, read the same way in both dialects.
pub(crate) fn endpoint_from_row<R>(row: &R) -> crate::Result<crate::WebhookEndpoint>
where
    R: sqlx::Row,
    for<'r> &'r str: sqlx::ColumnIndex<R>,
    for<'r> uuid::Uuid: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<sqlx::types::Json<Vec<String>>>:
        sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> time::OffsetDateTime: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<time::OffsetDateTime>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let events: Option<sqlx::types::Json<Vec<String>>> = row.try_get("events")?;
    Ok(crate::WebhookEndpoint {
        id: row.try_get("id")?,
        provider_id: row.try_get("provider_id")?,
        url: row.try_get("url")?,
        events: events.map(|e| e.0),
        secret: row.try_get("secret")?,
        previous_secret: row.try_get("previous_secret")?,
        previous_secret_expires_at: row.try_get("previous_secret_expires_at")?,
        created_at: row.try_get("created_at")?,
    })
}

/// The status history as the `history_json` column gives it: `[[status, previous_status, actor,
/// reason, at], ...]` in order.
pub(crate) fn history_from_json(json: &str) -> crate::Result<Vec<crate::StatusChange>> {
    type Row = (String, Option<String>, String, Option<String>, String);
    let rows: Vec<Row> = serde_json::from_str(json).map_err(corrupt_json)?;
    rows.into_iter()
        .map(|(status, previous_status, actor, reason, at)| {
            Ok(crate::StatusChange {
                status,
                previous_status,
                actor,
                reason,
                at: timestamp(&at)?,
            })
        })
        .collect()
}

/// The JSON of [`history_from_json`], for a new case's history (PostgreSQL's `case_children`).
pub(crate) fn history_to_json(history: &[crate::StatusChange]) -> crate::Result<String> {
    let rows = history
        .iter()
        .map(|h| {
            Ok((
                &h.status,
                &h.previous_status,
                &h.actor,
                &h.reason,
                rfc3339(h.at)?,
            ))
        })
        .collect::<crate::Result<Vec<_>>>()?;
    serde_json::to_string(&rows).map_err(|e| crate::StoreError::Corrupt(e.to_string()))
}

/// The JSON of [`documents_from_json`], for a new case's documents (PostgreSQL's
/// `case_children`), in the order PostgreSQL's `refresh_case_children` gives them: by creation
/// time, owner (none last) and type (bytewise).
pub(crate) fn documents_to_json(documents: &[crate::DocumentRecord]) -> crate::Result<String> {
    let mut sorted: Vec<&crate::DocumentRecord> = documents.iter().collect();
    sorted.sort_by(|a, b| {
        (
            a.created_at,
            a.owner_index.is_none(),
            a.owner_index,
            a.doc_type.as_bytes(),
        )
            .cmp(&(
                b.created_at,
                b.owner_index.is_none(),
                b.owner_index,
                b.doc_type.as_bytes(),
            ))
    });
    let rows = sorted
        .into_iter()
        .map(|d| {
            Ok((
                d.id.simple().to_string(),
                &d.case_kind,
                d.owner_index,
                &d.doc_type,
                &d.name,
                &d.storage_key,
                &d.content_type,
                d.size,
                d.sha256.as_deref().map(to_hex),
                rfc3339(d.created_at)?,
            ))
        })
        .collect::<crate::Result<Vec<_>>>()?;
    serde_json::to_string(&rows).map_err(|e| crate::StoreError::Corrupt(e.to_string()))
}

/// A timestamp as RFC 3339 text: how sqlx stores it in SQLite (the rusqlite writes use it too)
/// and how [`timestamp`] reads it back from the child arrays.
pub(crate) fn rfc3339(at: time::OffsetDateTime) -> crate::Result<String> {
    at.format(&time::format_description::well_known::Rfc3339)
        .map_err(|e| crate::StoreError::Corrupt(format!("timestamp {at}: {e}")))
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The documents as the `documents_json` column gives them: `[[id (hex), case_kind,
/// owner_index, doc_type, name, storage_key, content_type, size, sha256 (hex), created_at],
/// ...]`; size and sha256 are null for a document not rendered yet.
pub(crate) fn documents_from_json(
    json: &str,
    case_id: uuid::Uuid,
) -> crate::Result<Vec<crate::DocumentRecord>> {
    type Row = (
        String,
        String,
        Option<i32>,
        String,
        String,
        String,
        String,
        Option<i64>,
        Option<String>,
        String,
    );
    let rows: Vec<Row> = serde_json::from_str(json).map_err(corrupt_json)?;
    rows.into_iter()
        .map(
            |(
                id,
                case_kind,
                owner_index,
                doc_type,
                name,
                storage_key,
                content_type,
                size,
                sha,
                at,
            )| {
                Ok(crate::DocumentRecord {
                    id: uuid::Uuid::try_parse(&id).map_err(|e| {
                        crate::StoreError::Corrupt(format!("document id {id:?}: {e}"))
                    })?,
                    case_id,
                    case_kind,
                    owner_index,
                    doc_type,
                    name,
                    storage_key,
                    content_type,
                    size,
                    sha256: sha.as_deref().map(from_hex).transpose()?,
                    created_at: timestamp(&at)?,
                })
            },
        )
        .collect()
}

/// Identity verifications as the `verified_json` column gives them: `[[owner_index,
/// verified_at], ...]`.
pub(crate) fn verifications_from_json(
    json: &str,
) -> crate::Result<Vec<(i32, time::OffsetDateTime)>> {
    let rows: Vec<(i32, String)> = serde_json::from_str(json).map_err(corrupt_json)?;
    rows.into_iter()
        .map(|(i, at)| Ok((i, timestamp(&at)?)))
        .collect()
}

fn corrupt_json(e: serde_json::Error) -> crate::StoreError {
    crate::StoreError::Corrupt(format!("child rows unreadable: {e}"))
}

/// RFC 3339, as SQLite stores timestamps (sqlx) and PostgreSQL writes them in JSON.
pub(crate) fn timestamp(text: &str) -> crate::Result<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .map_err(|e| crate::StoreError::Corrupt(format!("timestamp {text:?}: {e}")))
}

fn from_hex(text: &str) -> crate::Result<Vec<u8>> {
    let bad = || crate::StoreError::Corrupt(format!("hex {text:?}"));
    if !text.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2).ok_or_else(bad)?, 16).map_err(|_| bad()))
        .collect()
}

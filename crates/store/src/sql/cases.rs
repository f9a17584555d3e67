//! Cases and their documents: reads, transitions, identity verifications, tax office
//! assignments, operator patches, and the benchmark's copies.

use domain::lifecycle::{Actor, Lifecycle as _};
use sqlx::Row;
use sqlx::types::Json;
use uuid::Uuid;

use super::environment;
use crate::rows::{Columns, documents_from_json, history_from_json, verifications_from_json};
use crate::{Result, TradeRegistrationRecord};

shared_impl!(
    /// A trade registration read through sqlx on the dialect's read connections: one
    /// statement, the history, documents and identity verifications as JSON arrays and the
    /// company's name and legal form by a join. (SQLite reads it on the calling thread first,
    /// see `sqlite/readers.rs`.)
    pub(crate) async fn trade_via_sqlx(&self, id: Uuid) -> Result<Option<TradeRegistrationRecord>> {
        let row = self
            .read(|c| Box::pin(sqlx::query(DB::SQL.trade).bind(id).fetch_optional(c)))
            .await?;
        let Some(row) = row else { return Ok(None) };
        let record: Json<serde_json::Value> = row.try_get("record")?;
        let office: Option<Json<serde_json::Value>> = row.try_get("trade_office")?;
        let candidates: Option<Json<serde_json::Value>> = row.try_get("trade_office_candidates")?;
        let environment_text: String = row.try_get("environment")?;
        let history: String = row.try_get("history_json")?;
        let provider_id: Uuid = row.try_get("provider_id")?;
        let operators: Option<String> = row.try_get("operators_json")?;
        let names = crate::rows::actor_names(
            provider_id,
            row.try_get("provider_name")?,
            operators.as_deref(),
        )?;
        let documents: String = row.try_get("documents_json")?;
        let verified: String = row.try_get("verified_json")?;
        // The directory entry, when the join found one.
        let office_key: Option<String> = row.try_get("office_key")?;
        let office_entry = match office_key {
            Some(_) => Some(Columns(&row).trade_office()?),
            None => None,
        };
        Ok(Some(TradeRegistrationRecord {
            head: crate::CaseHead {
                id: row.try_get("id")?,
                company_id: row.try_get("company_id")?,
                provider_id,
                environment: environment(&environment_text)?,
                package: crate::rows::named(
                    "package",
                    &row.try_get::<String, _>("package")?,
                    domain::trade::Package::parse,
                )?,
                status: crate::rows::status(&row.try_get::<String, _>("status")?)?,
                record: record.0,
                created_at: row.try_get("created_at")?,
                documents: documents_from_json(&documents, id)?,
                history: history_from_json(crate::CaseKind::Trade, &history, &names)?,
            },
            price_cents: row.try_get("price_cents")?,
            city_fee_cents: row.try_get("city_fee_cents")?,
            is_paid: row.try_get("is_paid")?,
            trade_office: office.map(|j| j.0),
            trade_office_candidates: candidates.map(|j| j.0),
            trade_office_entry: office_entry,
            source_product: row.try_get("source_product")?,
            company_name: row.try_get("company_name")?,
            company_legal_form: row.try_get("company_legal_form")?,
            identity_verifications: verifications_from_json(&verified)?,
        }))
    }

    /// The tax registration `sql` (a [`DialectSql`](super::text::DialectSql) read of one)
    /// selects by `ids`, bound in order.
    async fn tax_where(
        &self,
        sql: &'static str,
        ids: &[uuid::Uuid],
    ) -> Result<Option<crate::TaxRegistrationRecord>> {
        let row = self
            .read(|c| {
                let query = ids.iter().fold(sqlx::query(sql), |q, id| q.bind(*id));
                Box::pin(query.fetch_optional(c))
            })
            .await?;
        row.as_ref().map(|r| Columns(r).tax()).transpose()
    }

    /// The environment, package and status of a listed case of `kind` (its columns of these
    /// names).
    pub(super) fn case_state(
        kind: crate::CaseKind,
        row: &DB::Row,
    ) -> Result<(
        domain::company::Environment,
        domain::case_state::CasePackage,
        domain::case_state::CaseStatus,
    )> {
        let environment_text: String = row.try_get("environment")?;
        let package: String = row.try_get("package")?;
        let status: String = row.try_get("status")?;
        Ok((
            environment(&environment_text)?,
            crate::rows::named("package", &package, |p| {
                domain::case_state::CasePackage::parse(kind, p)
            })?,
            crate::rows::case_status(kind, &status)?,
        ))
    }

    /// Locks a case's row for the rest of the transaction (PostgreSQL; SQLite's writer is
    /// alone anyway) and answers its status, `None` when there is no such case: the values a
    /// change reads after this are the ones it replaces.
    async fn lock_case(
        tx: &mut DB::Connection,
        kind: crate::CaseKind,
        id: uuid::Uuid,
    ) -> Result<Option<domain::case_state::CaseStatus>> {
        let sql = match kind {
            crate::CaseKind::Trade => {
                "UPDATE trade_registrations SET status = status WHERE id = $1 RETURNING status"
            }
            crate::CaseKind::Tax => {
                "UPDATE tax_registrations SET status = status WHERE id = $1 RETURNING status"
            }
        };
        let status: Option<String> = sqlx::query_scalar(sql)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
        status
            .map(|s| crate::rows::case_status(kind, &s))
            .transpose()
    }
);

role_impl!(
    type Role = CaseStore;

    async fn create_trade_registration(&self, new: &crate::NewTradeRegistration) -> Result<()> {
        crate::sql::Backend::create(self, crate::new_case::NewCase::Trade(Box::new(new.clone())))
            .await
    }

    async fn get_trade_registration(
        &self,
        id: uuid::Uuid,
    ) -> Result<Option<crate::TradeRegistrationRecord>> {
        crate::sql::Backend::trade(self, id).await
    }

    async fn create_tax_registration(&self, new: &crate::NewTaxRegistration) -> Result<()> {
        crate::sql::Backend::create(self, crate::new_case::NewCase::Tax(Box::new(new.clone())))
            .await
    }

    async fn get_tax_registration(
        &self,
        id: uuid::Uuid,
    ) -> Result<Option<crate::TaxRegistrationRecord>> {
        self.sql().tax_where(DB::SQL.tax_by_id, &[id]).await
    }

    async fn find_tax_registration(
        &self,
        scope: crate::CaseScope,
        public_id: uuid::Uuid,
    ) -> Result<Option<crate::TaxRegistrationRecord>> {
        let (sql, owner) = match scope {
            crate::CaseScope::Provider(p) => (DB::SQL.tax_by_provider, p),
            crate::CaseScope::Company(c) => (DB::SQL.tax_by_company, c),
        };
        self.sql().tax_where(sql, &[owner, public_id]).await
    }

    async fn tax_registration_id_use(
        &self,
        provider: uuid::Uuid,
        public_id: uuid::Uuid,
    ) -> Result<crate::CaseIdUse> {
        let row = sqlx::query(
            "SELECT EXISTS (SELECT 1 FROM tax_registrations \
                            WHERE provider_id = $1 AND public_id = $2) AS by_provider, \
             (EXISTS (SELECT 1 FROM tax_registrations WHERE id = $2) \
              OR EXISTS (SELECT 1 FROM trade_registrations WHERE id = $2)) AS as_key",
        )
        .bind(provider)
        .bind(public_id)
        .fetch_one(&self.sql().pool)
        .await?;
        Ok(crate::CaseIdUse {
            by_provider: row.try_get("by_provider")?,
            as_key: row.try_get("as_key")?,
        })
    }

    async fn open_case_of_company(
        &self,
        kind: crate::CaseKind,
        company_id: uuid::Uuid,
    ) -> Result<Option<uuid::Uuid>> {
        // The partial unique index `*_company_id_open` (migrations sqlite 0014, pg 0017) serves
        // this and allows one such case at most.
        let sql = match kind {
            crate::CaseKind::Trade => {
                "SELECT id FROM trade_registrations \
                 WHERE company_id = $1 AND status <> 'cancelled'"
            }
            crate::CaseKind::Tax => {
                "SELECT public_id FROM tax_registrations \
                 WHERE company_id = $1 AND status <> 'cancelled'"
            }
        };
        Ok(sqlx::query_scalar(sql)
            .bind(company_id)
            .fetch_optional(&self.sql().pool)
            .await?)
    }

    async fn list_cases(
        &self,
        kind: crate::CaseKind,
        filter: &crate::CaseFilter,
        after: Option<uuid::Uuid>,
        limit: i64,
    ) -> Result<Vec<crate::CaseSummary>> {
        // `$n IS NULL OR ...` keeps one statement per table for every combination of filters.
        let sql = match kind {
            crate::CaseKind::Trade => {
                "SELECT id, id AS public_id, company_id, provider_id, environment, package, \
                 status, created_at FROM trade_registrations WHERE ($1 IS NULL OR status = $1) \
                 AND ($2 IS NULL OR environment = $2) AND ($3 IS NULL OR id > $3) \
                 ORDER BY id LIMIT $4"
            }
            crate::CaseKind::Tax => {
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
            .bind(filter.status.map(|s| s.as_str()))
            .bind(filter.environment.map(|e| e.as_str()))
            .bind(after)
            .bind(limit)
            .fetch_all(&self.sql().pool)
            .await?;
        rows.iter()
            .map(|row| {
                let (environment, package, status) =
                    crate::sql::Shared::<DB>::case_state(kind, row)?;
                Ok(crate::CaseSummary {
                    id: row.try_get("id")?,
                    public_id: row.try_get("public_id")?,
                    company_id: row.try_get("company_id")?,
                    provider_id: row.try_get("provider_id")?,
                    environment,
                    package,
                    status,
                    created_at: row.try_get("created_at")?,
                })
            })
            .collect()
    }

    async fn tax_registrations_missing_document(
        &self,
        environment: domain::company::Environment,
        doc_type: domain::case::DocumentType,
        after: Option<uuid::Uuid>,
        limit: i64,
    ) -> Result<Vec<uuid::Uuid>> {
        let rows = sqlx::query(
            "SELECT t.id FROM tax_registrations t \
             WHERE t.environment = $1 AND t.status IN ('validated', 'rejected') \
             AND t.tax_office_number IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.case_id = t.id \
                             AND d.doc_type = $2) \
             AND ($3 IS NULL OR t.id > $3) ORDER BY t.id LIMIT $4",
        )
        .bind(environment.as_str())
        .bind(doc_type.as_str())
        .bind(after)
        .bind(limit)
        .fetch_all(&self.sql().pool)
        .await?;
        rows.iter().map(|row| Ok(row.try_get("id")?)).collect()
    }

    async fn get_document(&self, id: uuid::Uuid) -> Result<Option<crate::DocumentRecord>> {
        const SELECT: &str = "SELECT id, case_id, case_kind, owner_index, doc_type, name, \
             storage_key, content_type, size, sha256, created_at FROM documents WHERE id = $1";
        let row = self
            .sql()
            .read(|c| Box::pin(sqlx::query(SELECT).bind(id).fetch_optional(c)))
            .await?;
        row.as_ref().map(|r| Columns(r).document()).transpose()
    }

    async fn record_rendered(&self, id: uuid::Uuid, size: i64, sha256: &[u8]) -> Result<bool> {
        let mut tx = self.sql().writer.begin().await?;
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
        DB::refresh_children(&mut tx, &[case_id]).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn storage_key_known(&self, key: &str) -> Result<bool> {
        let found: Option<i32> =
            sqlx::query_scalar("SELECT 1 FROM documents WHERE storage_key = $1")
                .bind(key)
                .fetch_optional(&self.sql().pool)
                .await?;
        Ok(found.is_some())
    }

    async fn transition_case(
        &self,
        id: uuid::Uuid,
        from: domain::case_state::CaseStatus,
        change: &crate::StatusChange,
        documents: &[crate::DocumentRecord],
        fields: &crate::CaseFields,
    ) -> Result<bool> {
        let kind = from.kind();
        if change.status.kind() != kind {
            return Err(crate::StoreError::Corrupt(format!(
                "a {} case cannot become {}",
                kind.as_str(),
                change.status.as_str()
            )));
        }
        let update = match kind {
            crate::CaseKind::Trade => {
                "UPDATE trade_registrations SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4"
            }
            crate::CaseKind::Tax => {
                "UPDATE tax_registrations SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4"
            }
        };
        let mut tx = self.sql().writer.begin().await?;
        let done = sqlx::query(update)
            .bind(change.status.as_str())
            .bind(change.at)
            .bind(id)
            .bind(from.as_str())
            .execute(&mut *tx)
            .await?;
        if DB::rows_affected(&done) != 1 {
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
            crate::sql::Shared::<DB>::apply_trade_patch(&mut *tx, id, patch).await?;
        }
        crate::sql::Shared::<DB>::insert_children(
            &mut *tx,
            id,
            kind,
            documents,
            std::slice::from_ref(change),
        )
        .await?;
        DB::refresh_children(&mut *tx, &[id]).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn verify_identity(
        &self,
        case_id: uuid::Uuid,
        owner_index: i32,
        verified_at: time::OffsetDateTime,
        actor: Actor,
        now: time::OffsetDateTime,
    ) -> Result<()> {
        let mut tx = self.sql().writer.begin().await?;
        let status =
            crate::sql::Shared::<DB>::lock_case(&mut *tx, crate::CaseKind::Trade, case_id).await?;
        let before: Option<time::OffsetDateTime> = sqlx::query_scalar(
            "SELECT verified_at FROM identity_verifications WHERE case_id = $1 AND owner_index = $2",
        )
        .bind(case_id)
        .bind(owner_index)
        .fetch_optional(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO identity_verifications (case_id, owner_index, verified_at, actor) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (case_id, owner_index) DO UPDATE SET \
             verified_at = excluded.verified_at, actor = excluded.actor",
        )
        .bind(case_id)
        .bind(owner_index)
        .bind(verified_at)
        .bind(actor.to_string())
        .execute(&mut *tx)
        .await?;
        crate::sql::Shared::<DB>::log_verification(
            &mut *tx,
            case_id,
            owner_index,
            Some(verified_at),
            actor,
            now,
        )
        .await?;
        // (Without its case the insert above failed on the foreign key.)
        if let Some(status) = status {
            let changes = crate::audit::identity_change(owner_index, before, Some(verified_at))?;
            crate::sql::Shared::<DB>::insert_field_changes(
                &mut *tx, case_id, status, actor, now, &changes,
            )
            .await?;
        }
        DB::refresh_children(&mut *tx, &[case_id]).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn clear_identity_verification(
        &self,
        case_id: uuid::Uuid,
        owner_index: i32,
        actor: Actor,
        now: time::OffsetDateTime,
    ) -> Result<bool> {
        let mut tx = self.sql().writer.begin().await?;
        let status =
            crate::sql::Shared::<DB>::lock_case(&mut *tx, crate::CaseKind::Trade, case_id).await?;
        let removed: Option<time::OffsetDateTime> = sqlx::query_scalar(
            "DELETE FROM identity_verifications WHERE case_id = $1 AND owner_index = $2 \
             RETURNING verified_at",
        )
        .bind(case_id)
        .bind(owner_index)
        .fetch_optional(&mut *tx)
        .await?;
        let (Some(status), Some(removed)) = (status, removed) else {
            tx.rollback().await?;
            return Ok(false);
        };
        crate::sql::Shared::<DB>::log_verification(
            &mut *tx,
            case_id,
            owner_index,
            None,
            actor,
            now,
        )
        .await?;
        let changes = crate::audit::identity_change(owner_index, Some(removed), None)?;
        crate::sql::Shared::<DB>::insert_field_changes(
            &mut *tx, case_id, status, actor, now, &changes,
        )
        .await?;
        DB::refresh_children(&mut *tx, &[case_id]).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn identity_verification_log(
        &self,
        case_id: uuid::Uuid,
        owner_index: i32,
    ) -> Result<Vec<crate::VerificationLogEntry>> {
        let rows: Vec<(
            String,
            Option<time::OffsetDateTime>,
            String,
            time::OffsetDateTime,
        )> = sqlx::query_as(
            "SELECT action, verified_at, actor, at FROM identity_verification_log \
                 WHERE case_id = $1 AND owner_index = $2 ORDER BY id",
        )
        .bind(case_id)
        .bind(owner_index)
        .fetch_all(&self.sql().writer)
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(action, verified_at, actor, at)| crate::VerificationLogEntry {
                    action,
                    verified_at,
                    actor: crate::rows::actor(&actor),
                    at,
                },
            )
            .collect())
    }

    async fn assign_tax_office(
        &self,
        id: uuid::Uuid,
        office_number: &str,
        allowed_statuses: &[domain::lifecycle::TaxStatus],
        documents: &[crate::DocumentRecord],
        actor: Actor,
    ) -> Result<Option<Vec<String>>> {
        let mut tx = self.sql().writer.begin().await?;
        let now = crate::rows::now();
        // The update locks the row (PostgreSQL) before the status and the office it returns
        // are compared: the office the history names as the old one is the one replaced.
        let row = sqlx::query(
            "UPDATE tax_registrations SET updated_at = $1 WHERE id = $2 \
             RETURNING status, tax_office_number",
        )
        .bind(now)
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            tx.rollback().await?;
            return Ok(None);
        };
        let status: String = row.try_get("status")?;
        let before: Option<String> = row.try_get("tax_office_number")?;
        let Some(status) = crate::rows::status::<domain::lifecycle::TaxStatus>(&status)
            .ok()
            .filter(|s| allowed_statuses.contains(s))
        else {
            tx.rollback().await?;
            return Ok(None);
        };
        sqlx::query("UPDATE tax_registrations SET tax_office_number = $1 WHERE id = $2")
            .bind(office_number)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let replaced = crate::sql::Shared::<DB>::replace_documents(
            &mut *tx,
            id,
            crate::CaseKind::Tax,
            documents,
            "tax office assigned",
        )
        .await?;
        let changes = crate::audit::tax_office_change(before.as_deref(), office_number);
        crate::sql::Shared::<DB>::insert_field_changes(
            &mut *tx,
            id,
            status.into(),
            actor,
            now,
            &changes,
        )
        .await?;
        DB::refresh_children(&mut *tx, &[id]).await?;
        tx.commit().await?;
        Ok(Some(replaced))
    }

    async fn patch_trade_registration(
        &self,
        id: uuid::Uuid,
        patch: &crate::TradePatch,
        guard: Option<&crate::TradeCaseGuard>,
        documents: &[crate::DocumentRecord],
        actor: Actor,
    ) -> Result<crate::TradePatchOutcome> {
        let mut tx = self.sql().writer.begin().await?;
        let now = patch.updated_at.unwrap_or_else(crate::rows::now);
        // The update locks the row (PostgreSQL) before the guard compares what it returns, and
        // what it returns is what the patch replaces (the history's old values).
        let row = sqlx::query(
            "UPDATE trade_registrations SET updated_at = $1 WHERE id = $2 \
             RETURNING status, trade_office, city_fee_cents, is_paid, source_product",
        )
        .bind(now)
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            tx.rollback().await?;
            return Ok(crate::TradePatchOutcome::NotFound);
        };
        let status: String = row.try_get("status")?;
        let office: Option<sqlx::types::Json<serde_json::Value>> = row.try_get("trade_office")?;
        let before = crate::audit::TradeFields {
            trade_office: office.map(|j| j.0),
            city_fee_cents: row.try_get("city_fee_cents")?,
            is_paid: row.try_get("is_paid")?,
            source_product: row.try_get("source_product")?,
        };
        if let Some(guard) = guard
            && (status != guard.status.as_str() || before.trade_office != guard.trade_office)
        {
            tx.rollback().await?;
            return Ok(crate::TradePatchOutcome::Stale);
        }
        let status = crate::rows::case_status(crate::CaseKind::Trade, &status)?;
        crate::sql::Shared::<DB>::apply_trade_patch(&mut *tx, id, patch).await?;
        let replaced = crate::sql::Shared::<DB>::replace_documents(
            &mut *tx,
            id,
            crate::CaseKind::Trade,
            documents,
            "trade office assigned",
        )
        .await?;
        let changes = crate::audit::trade_patch_changes(&before, patch);
        let logged = crate::sql::Shared::<DB>::insert_field_changes(
            &mut *tx, id, status, actor, now, &changes,
        )
        .await?;
        if logged || !documents.is_empty() {
            DB::refresh_children(&mut *tx, &[id]).await?;
        }
        tx.commit().await?;
        Ok(crate::TradePatchOutcome::Applied { replaced })
    }

    async fn seed_trade_copies(&self, template: uuid::Uuid, count: u64) -> Result<Option<u64>> {
        // One statement per table and batch: the new ids come in as a VALUES list (its
        // columns are `column1`, `column2` in both dialects), the rest is copied from the
        // template's rows by the database itself.
        const BATCH: u64 = 4000;
        let company: Option<uuid::Uuid> =
            sqlx::query_scalar("SELECT company_id FROM trade_registrations WHERE id = $1")
                .bind(template)
                .fetch_optional(&self.sql().pool)
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
                         previous_status, actor, reason, at, changes) \
                         SELECT v.column2, h.case_kind, h.status, h.previous_status, h.actor, \
                         h.reason, h.at, h.changes \
                         FROM (VALUES {values}) AS v CROSS JOIN status_history h \
                         WHERE h.case_id = $1 ORDER BY v.column2, h.seq"
                    ),
                ),
            ];
            let mut tx = self.sql().writer.begin().await?;
            for (first, sql) in &statements {
                // The SQL is built here from constants and placeholder numbers only.
                let mut q = sqlx::query(sqlx::AssertSqlSafe(sql.as_str())).bind(*first);
                for (company_id, case_id) in &ids {
                    q = q.bind(*company_id).bind(*case_id);
                }
                q.execute(&mut *tx).await?;
            }
            let cases: Vec<uuid::Uuid> = ids.iter().map(|(_, case)| *case).collect();
            DB::refresh_children(&mut *tx, &cases).await?;
            tx.commit().await?;
            done += n;
        }
        Ok(Some(done))
    }
);

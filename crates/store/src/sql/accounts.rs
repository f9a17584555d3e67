//! Companies, operators, API keys, idempotency keys and the trade office directory.

use sqlx::Row;
use sqlx::types::Json;

use super::text::{INSERT_API_KEY, INSERT_CLIENT_COMPANY};
use crate::Result;
use crate::rows::{Columns, now};

shared_impl!(
    /// [`INSERT_CLIENT_COMPANY`] with the values of company `id`, created at `created_at`.
    pub(super) fn insert_client_company_statement(
        id: uuid::Uuid,
        new: &crate::NewClientCompany,
        created_at: time::OffsetDateTime,
    ) -> sqlx::query::Query<'static, DB, <DB as sqlx::Database>::Arguments> {
        sqlx::query(INSERT_CLIENT_COMPANY)
            .bind(id)
            .bind(&new.name)
            .bind(new.provider_id)
            .bind(new.environment.as_str())
            .bind(&new.legal_form)
            .bind(&new.registration_number)
            .bind(new.business_address.clone().map(Json))
            .bind(created_at)
    }

    /// A `companies` row.
    fn company(row: &DB::Row) -> Result<domain::company::Company> {
        let kind: String = row.try_get("kind")?;
        let environment: Option<String> = row.try_get("environment")?;
        let address: Option<sqlx::types::Json<serde_json::Value>> =
            row.try_get("business_address")?;
        Ok(domain::company::Company {
            id: row.try_get("id")?,
            kind: domain::company::CompanyKind::parse(&kind).ok_or_else(|| {
                crate::StoreError::Corrupt(format!("unknown company kind {kind:?}"))
            })?,
            name: row.try_get("name")?,
            provider_id: row.try_get("provider_id")?,
            environment: match environment {
                None => None,
                Some(e) => Some(domain::company::Environment::parse(&e).ok_or_else(|| {
                    crate::StoreError::Corrupt(format!("unknown environment {e:?}"))
                })?),
            },
            legal_form: row.try_get("legal_form")?,
            registration_number: row.try_get("registration_number")?,
            business_address: address.map(|j| j.0),
            created_at: row.try_get("created_at")?,
        })
    }

    /// [`INSERT_API_KEY`] with the values of `key`.
    fn insert_api_key_statement(
        key: &crate::ApiKeyRecord,
    ) -> sqlx::query::Query<'static, DB, <DB as sqlx::Database>::Arguments> {
        sqlx::query(INSERT_API_KEY)
            .bind(&key.prefix)
            .bind(&key.hash)
            .bind(key.kind.as_str())
            .bind(key.company_id)
            .bind(key.operator_id)
            .bind(key.created_at)
            .bind(key.revoked_at)
            .bind(key.environment.map(domain::company::Environment::as_str))
    }
);

role_impl!(
    type Role = AccountStore;

    fn backend(&self) -> &'static str {
        DB::BACKEND
    }

    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.sql().pool).await?;
        Ok(())
    }

    async fn create_provider(&self, name: &str) -> Result<domain::company::Company> {
        let company = domain::company::Company {
            id: uuid::Uuid::now_v7(),
            kind: domain::company::CompanyKind::Provider,
            name: name.to_string(),
            provider_id: None,
            environment: None,
            legal_form: None,
            registration_number: None,
            business_address: None,
            created_at: now(),
        };
        sqlx::query(
            "INSERT INTO companies (id, kind, name, created_at) VALUES ($1, 'provider', $2, $3)",
        )
        .bind(company.id)
        .bind(&company.name)
        .bind(company.created_at)
        .execute(&self.sql().writer)
        .await?;
        Ok(company)
    }

    async fn create_client_company(
        &self,
        new: crate::NewClientCompany,
    ) -> Result<domain::company::Company> {
        let (id, created_at) = (uuid::Uuid::now_v7(), now());
        crate::sql::Shared::<DB>::insert_client_company_statement(id, &new, created_at)
            .execute(&self.sql().writer)
            .await?;
        Ok(domain::company::Company {
            id,
            kind: domain::company::CompanyKind::Client,
            name: new.name,
            provider_id: Some(new.provider_id),
            environment: Some(new.environment),
            legal_form: new.legal_form,
            registration_number: new.registration_number,
            business_address: new.business_address,
            created_at,
        })
    }

    async fn get_company(&self, id: uuid::Uuid) -> Result<Option<domain::company::Company>> {
        const SELECT: &str = "SELECT id, kind, name, provider_id, environment, legal_form, \
             registration_number, business_address, created_at FROM companies WHERE id = $1";
        let row = self
            .sql()
            .read(|c| Box::pin(sqlx::query(SELECT).bind(id).fetch_optional(c)))
            .await?;
        row.as_ref()
            .map(crate::sql::Shared::<DB>::company)
            .transpose()
    }

    async fn list_providers(
        &self,
        after: Option<uuid::Uuid>,
        limit: i64,
    ) -> Result<Vec<domain::company::Company>> {
        // Ids are UUIDv7: by id is by creation.
        const SELECT: &str = "SELECT id, kind, name, provider_id, environment, legal_form, \
             registration_number, business_address, created_at FROM companies \
             WHERE kind = 'provider' AND ($1 IS NULL OR id > $1) ORDER BY id LIMIT $2";
        let rows = sqlx::query(SELECT)
            .bind(after)
            .bind(limit)
            .fetch_all(&self.sql().pool)
            .await?;
        rows.iter().map(crate::sql::Shared::<DB>::company).collect()
    }

    async fn create_operator(&self, name: &str) -> Result<crate::Operator> {
        let op = crate::Operator {
            id: uuid::Uuid::now_v7(),
            name: name.to_string(),
            created_at: now(),
        };
        sqlx::query("INSERT INTO operators (id, name, created_at) VALUES ($1, $2, $3)")
            .bind(op.id)
            .bind(&op.name)
            .bind(op.created_at)
            .execute(&self.sql().writer)
            .await?;
        Ok(op)
    }

    /// The bytes of every document of `provider`'s cases (all kinds and states, cancelled
    /// ones too): what its storage quota counts (issue 52.1). Reads the provider's cases by
    /// their provider index and each case's documents by theirs.
    async fn provider_document_bytes(&self, provider: uuid::Uuid) -> Result<i64> {
        let row = sqlx::query(
            "SELECT CAST(COALESCE((SELECT SUM(d.size) FROM trade_registrations t \
             JOIN documents d ON d.case_id = t.id WHERE t.provider_id = $1), 0) \
             + COALESCE((SELECT SUM(d.size) FROM tax_registrations t \
             JOIN documents d ON d.case_id = t.id WHERE t.provider_id = $1), 0) AS BIGINT) AS bytes",
        )
        .bind(provider)
        .fetch_one(&self.sql().pool)
        .await?;
        Ok(row.try_get("bytes")?)
    }

    async fn get_operator(&self, id: uuid::Uuid) -> Result<Option<crate::Operator>> {
        let row = sqlx::query("SELECT id, name, created_at FROM operators WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.sql().pool)
            .await?;
        row.map(|row| {
            Ok(crate::Operator {
                id: row.try_get("id")?,
                name: row.try_get("name")?,
                created_at: row.try_get("created_at")?,
            })
        })
        .transpose()
    }

    async fn list_operators(
        &self,
        after: Option<uuid::Uuid>,
        limit: i64,
    ) -> Result<Vec<crate::Operator>> {
        let rows = sqlx::query(
            "SELECT id, name, created_at FROM operators \
             WHERE ($1 IS NULL OR id > $1) ORDER BY id LIMIT $2",
        )
        .bind(after)
        .bind(limit)
        .fetch_all(&self.sql().pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(crate::Operator {
                    id: row.try_get("id")?,
                    name: row.try_get("name")?,
                    created_at: row.try_get("created_at")?,
                })
            })
            .collect()
    }

    async fn insert_api_key(&self, key: &crate::ApiKeyRecord) -> Result<()> {
        crate::sql::Shared::<DB>::insert_api_key_statement(key)
            .execute(&self.sql().writer)
            .await?;
        Ok(())
    }

    async fn find_api_key(&self, prefix: &str) -> Result<Option<crate::ApiKeyRecord>> {
        const SELECT: &str = "SELECT k.prefix, k.hash, k.kind, k.company_id, k.operator_id, \
             k.created_at, k.revoked_at, k.environment, c.provider_id AS company_provider_id \
             FROM api_keys k LEFT JOIN companies c ON c.id = k.company_id WHERE k.prefix = $1";
        let row = self
            .sql()
            .read(|c| {
                Box::pin(
                    sqlx::query(SELECT)
                        .bind(prefix.to_string())
                        .fetch_optional(c),
                )
            })
            .await?;
        let Some(row) = row else { return Ok(None) };
        let kind: String = row.try_get("kind")?;
        Ok(Some(crate::ApiKeyRecord {
            prefix: row.try_get("prefix")?,
            hash: row.try_get("hash")?,
            kind: crate::decode_kind(&kind)?,
            company_id: row.try_get("company_id")?,
            operator_id: row.try_get("operator_id")?,
            environment: key_environment(row.try_get("environment")?)?,
            created_at: row.try_get("created_at")?,
            revoked_at: row.try_get("revoked_at")?,
            company_provider_id: row.try_get("company_provider_id")?,
        }))
    }

    async fn revoke_api_key(&self, prefix: &str, at: time::OffsetDateTime) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE api_keys SET revoked_at = $1 WHERE prefix = $2 AND revoked_at IS NULL",
        )
        .bind(at)
        .bind(prefix)
        .execute(&self.sql().writer)
        .await?;
        Ok(DB::rows_affected(&done) == 1)
    }

    async fn insert_company_api_key(&self, key: &crate::ApiKeyRecord, max: usize) -> Result<bool> {
        let Some(company_id) = key.company_id else {
            return Err(crate::StoreError::Corrupt(format!(
                "key {} belongs to no company",
                key.prefix
            )));
        };
        let mut tx = self.sql().writer.begin().await?;
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
        crate::sql::Shared::<DB>::insert_api_key_statement(key)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn list_api_keys(
        &self,
        company_id: uuid::Uuid,
        environment: Option<domain::company::Environment>,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<crate::ApiKeySummary>> {
        // Row values compare in both dialects; a cursor that names no key of this company
        // (another company's included: its existence must not show) compares NULL and
        // ends the list. `$4`: only the keys restricted to that environment.
        let rows = sqlx::query(
            "SELECT prefix, kind, environment, created_at, last_used_at FROM api_keys \
             WHERE company_id = $1 AND revoked_at IS NULL \
             AND ($4 IS NULL OR environment = $4) \
             AND ($2 IS NULL OR (created_at, prefix) > \
                  (SELECT a.created_at, a.prefix FROM api_keys a \
                   WHERE a.prefix = $2 AND a.company_id = $1)) \
             ORDER BY created_at, prefix LIMIT $3",
        )
        .bind(company_id)
        .bind(after.map(str::to_string))
        .bind(limit)
        .bind(environment.map(domain::company::Environment::as_str))
        .fetch_all(&self.sql().pool)
        .await?;
        rows.iter()
            .map(|row| {
                let kind: String = row.try_get("kind")?;
                Ok(crate::ApiKeySummary {
                    prefix: row.try_get("prefix")?,
                    kind: crate::decode_kind(&kind)?,
                    environment: key_environment(row.try_get("environment")?)?,
                    created_at: row.try_get("created_at")?,
                    last_used_at: row.try_get("last_used_at")?,
                })
            })
            .collect()
    }

    async fn touch_api_key(&self, prefix: &str, at: time::OffsetDateTime) -> Result<()> {
        sqlx::query("UPDATE api_keys SET last_used_at = $1 WHERE prefix = $2")
            .bind(at)
            .bind(prefix)
            .execute(&self.sql().writer)
            .await?;
        Ok(())
    }

    async fn claim_idempotency_key(
        &self,
        scope: uuid::Uuid,
        key: &str,
        request_hash: &[u8],
        times: crate::IdempotencyTimes,
    ) -> Result<crate::IdempotencyClaim> {
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
            .execute(&self.sql().writer)
            .await?;
            if DB::rows_affected(&inserted) == 1 {
                return Ok(crate::IdempotencyClaim::Claimed);
            }
            let row = sqlx::query(
                "SELECT request_hash, state, response_status, response_body, created_at \
                 FROM idempotency_keys WHERE scope = $1 AND key = $2",
            )
            .bind(scope)
            .bind(key)
            .fetch_optional(&self.sql().pool)
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
                .execute(&self.sql().writer)
                .await?;
                continue;
            }
            if stored_hash != request_hash {
                return Ok(crate::IdempotencyClaim::Mismatch);
            }
            if state != "done" {
                return Ok(crate::IdempotencyClaim::InFlight);
            }
            let status: Option<i32> = row.try_get("response_status")?;
            let body: Option<Vec<u8>> = row.try_get("response_body")?;
            let status = status.and_then(|s| u16::try_from(s).ok()).ok_or_else(|| {
                crate::StoreError::Corrupt("idempotency record without status".into())
            })?;
            return Ok(crate::IdempotencyClaim::Replay {
                status,
                body: body.unwrap_or_default(),
            });
        }
        Ok(crate::IdempotencyClaim::InFlight)
    }

    async fn complete_idempotency_key(
        &self,
        scope: uuid::Uuid,
        key: &str,
        status: u16,
        body: &[u8],
    ) -> Result<()> {
        sqlx::query(
            "UPDATE idempotency_keys SET state = 'done', response_status = $1, response_body = $2 \
             WHERE scope = $3 AND key = $4",
        )
        .bind(i32::from(status))
        .bind(body)
        .bind(scope)
        .bind(key)
        .execute(&self.sql().writer)
        .await?;
        Ok(())
    }

    async fn release_idempotency_key(&self, scope: uuid::Uuid, key: &str) -> Result<()> {
        sqlx::query(
            "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND state = 'in-flight'",
        )
        .bind(scope)
        .bind(key)
        .execute(&self.sql().writer)
        .await?;
        Ok(())
    }

    async fn kept_answers(
        &self,
        after: Option<(uuid::Uuid, &str)>,
        limit: i64,
    ) -> Result<Vec<(uuid::Uuid, String, Vec<u8>)>> {
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
        .fetch_all(&self.sql().pool)
        .await?
        .iter()
        .map(|r| {
            Ok((
                r.try_get("scope")?,
                r.try_get("key")?,
                r.try_get("response_body")?,
            ))
        })
        .collect()
    }

    async fn replace_kept_answer(
        &self,
        scope: uuid::Uuid,
        key: &str,
        was: &[u8],
        new: &[u8],
    ) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE idempotency_keys SET response_body = $4 \
             WHERE scope = $1 AND key = $2 AND state = 'done' AND response_body = $3",
        )
        .bind(scope)
        .bind(key)
        .bind(was)
        .bind(new)
        .execute(&self.sql().writer)
        .await?;
        Ok(DB::rows_affected(&done) == 1)
    }

    async fn upsert_trade_office(&self, e: &crate::TradeOfficeEntry) -> Result<()> {
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
        .execute(&self.sql().writer)
        .await?;
        Ok(())
    }

    async fn get_trade_office(&self, key: &str) -> Result<Option<crate::TradeOfficeEntry>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            office_columns!(),
            " FROM trade_offices o WHERE o.key = $1"
        ))
        .bind(key)
        .fetch_optional(&self.sql().pool)
        .await?;
        row.as_ref().map(|r| Columns(r).trade_office()).transpose()
    }

    async fn list_trade_offices(
        &self,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<crate::TradeOfficeEntry>> {
        sqlx::query(concat!(
            "SELECT ",
            office_columns!(),
            " FROM trade_offices o WHERE o.key > $1 ORDER BY o.key LIMIT $2"
        ))
        .bind(after.unwrap_or(""))
        .bind(limit)
        .fetch_all(&self.sql().pool)
        .await?
        .iter()
        .map(|r| Columns(r).trade_office())
        .collect()
    }
);

/// A key row's `environment`: `None` for an unrestricted key.
fn key_environment(text: Option<String>) -> Result<Option<domain::company::Environment>> {
    text.as_deref().map(super::environment).transpose()
}

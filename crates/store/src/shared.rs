//! Statements that read the same in SQLite and PostgreSQL, expanded into both implementations.

/// Implements [`crate::Repository`] for a repository struct with a `pool` field: the
/// dialect-independent methods written here, followed by the dialect's own (`$($own)*`).
/// (The whole impl is generated here because `#[async_trait]` must see every method.)
macro_rules! repository_impl {
    ($repo:ty, $backend:literal, { $($own:tt)* }) => {
    #[async_trait::async_trait]
    impl $crate::Repository for $repo {
        fn backend(&self) -> &'static str {
            $backend
        }

        $($own)*
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
            .execute(&self.pool)
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
            sqlx::query(
                "INSERT INTO companies (id, kind, name, provider_id, environment, legal_form, \
                 registration_number, business_address, created_at) \
                 VALUES ($1, 'client', $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(company.id)
            .bind(&company.name)
            .bind(company.provider_id)
            .bind(company.environment.map(|e| e.as_str()))
            .bind(&company.legal_form)
            .bind(&company.registration_number)
            .bind(company.business_address.clone().map(sqlx::types::Json))
            .bind(company.created_at)
            .execute(&self.pool)
            .await?;
            Ok(company)
        }

        async fn get_company(
            &self,
            id: uuid::Uuid,
        ) -> $crate::Result<Option<domain::company::Company>> {
            use sqlx::Row;
            let row = sqlx::query(
                "SELECT id, kind, name, provider_id, environment, legal_form, registration_number, \
                 business_address, created_at FROM companies WHERE id = $1",
            )
            .bind(id)
            .fetch_optional(&self.pool)
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
                .execute(&self.pool)
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
            sqlx::query(
                "INSERT INTO api_keys (prefix, hash, kind, company_id, operator_id, created_at, revoked_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(&key.prefix)
            .bind(&key.hash)
            .bind(key.kind.as_str())
            .bind(key.company_id)
            .bind(key.operator_id)
            .bind(key.created_at)
            .bind(key.revoked_at)
            .execute(&self.pool)
            .await?;
            Ok(())
        }

        async fn find_api_key(&self, prefix: &str) -> $crate::Result<Option<$crate::ApiKeyRecord>> {
            use sqlx::Row;
            let row = sqlx::query(
                "SELECT k.prefix, k.hash, k.kind, k.company_id, k.operator_id, k.created_at, \
                 k.revoked_at, c.provider_id AS company_provider_id \
                 FROM api_keys k LEFT JOIN companies c ON c.id = k.company_id WHERE k.prefix = $1",
            )
            .bind(prefix)
            .fetch_optional(&self.pool)
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
            .execute(&self.pool)
            .await?;
            Ok(done.rows_affected() == 1)
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
                .execute(&self.pool)
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
                    .execute(&self.pool)
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
            .execute(&self.pool)
            .await?;
            Ok(())
        }

        async fn release_idempotency_key(&self, scope: uuid::Uuid, key: &str) -> $crate::Result<()> {
            sqlx::query(
                "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND state = 'in-flight'",
            )
            .bind(scope)
            .bind(key)
            .execute(&self.pool)
            .await?;
            Ok(())
        }
    }
    };
}

/// The current time at microsecond precision: what both databases store without rounding, so a
/// value read back compares equal to the one written.
pub(crate) fn now() -> time::OffsetDateTime {
    let t = time::OffsetDateTime::now_utc();
    let micros = t.nanosecond() / 1_000 * 1_000;
    t.replace_nanosecond(micros).unwrap_or(t)
}

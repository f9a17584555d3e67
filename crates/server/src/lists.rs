//! What `filing providers list`, `filing operators list` and `filing keys list` print: every
//! row, read page by page, as JSON without secrets (keys by their prefix only).

use serde_json::{Value, json};
use store::Repository;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

/// Rows read per statement.
const PAGE: i64 = 500;

fn timestamp(at: OffsetDateTime) -> Value {
    at.format(&Rfc3339).map(Value::from).unwrap_or(Value::Null)
}

/// Every provider company, oldest first: `{"company_id", "name", "created_at"}`.
pub async fn providers(repo: &dyn Repository) -> store::Result<Vec<Value>> {
    let mut all = Vec::new();
    let mut after = None;
    loop {
        let page = repo.list_providers(after, PAGE).await?;
        after = page.last().map(|c| c.id);
        all.extend(page.iter().map(
            |c| json!({"company_id": c.id, "name": c.name, "created_at": timestamp(c.created_at)}),
        ));
        if page.len() < PAGE as usize {
            return Ok(all);
        }
    }
}

/// Every operator, oldest first: `{"operator_id", "name", "created_at"}`.
pub async fn operators(repo: &dyn Repository) -> store::Result<Vec<Value>> {
    let mut all = Vec::new();
    let mut after = None;
    loop {
        let page = repo.list_operators(after, PAGE).await?;
        after = page.last().map(|o| o.id);
        all.extend(page.iter().map(
            |o| json!({"operator_id": o.id, "name": o.name, "created_at": timestamp(o.created_at)}),
        ));
        if page.len() < PAGE as usize {
            return Ok(all);
        }
    }
}

/// A company's unrevoked keys, oldest first: `{"key_prefix", "key_type", "environment",
/// "created_at", "last_used_at"}`, the fields `GET /v1/companies/{id}/api-keys` names them by.
pub async fn keys(repo: &dyn Repository, company: Uuid) -> store::Result<Vec<Value>> {
    let mut all = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = repo
            .list_api_keys(company, None, after.as_deref(), PAGE)
            .await?;
        after = page.last().map(|k| k.prefix.clone());
        all.extend(page.iter().map(|k| {
            json!({
                "key_prefix": k.prefix,
                "key_type": k.kind.as_str(),
                "environment": k.environment,
                "created_at": timestamp(k.created_at),
                "last_used_at": k.last_used_at.map(timestamp),
            })
        }));
        if page.len() < PAGE as usize {
            return Ok(all);
        }
    }
}

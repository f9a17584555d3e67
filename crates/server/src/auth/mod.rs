//! Bearer keys: generation (random, prefixed, shown once), storage as a SHA-256 hash, constant-time
//! comparison, and the middleware that turns a key into a [`Caller`].
//!
//! Keys carry 32 random alphanumerics (~190 bits), so a fast hash is enough: nothing can be
//! guessed from it, unlike a password.

pub mod cache;

pub use cache::KeyCache;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::Response;
use domain::auth::{
    Caller, KEY_ID_LEN, KEY_SECRET_LEN, KeyKind, format_key, key_prefix, parse_key,
};
use domain::company::Environment;
use rand::Rng;
use sha2::{Digest, Sha256};
use store::{ApiKeyRecord, Repository};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use crate::error::ApiError;
use crate::state::AppState;

/// A freshly made key: the secret to show once, and the record to store.
pub struct NewKey {
    pub api_key: String,
    pub record: ApiKeyRecord,
}

fn random_string(len: usize, alphabet: &[u8]) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| alphabet[rng.random_range(0..alphabet.len())] as char)
        .collect()
}

pub fn hash_key(key: &str) -> Vec<u8> {
    Sha256::digest(key.as_bytes()).to_vec()
}

/// Makes a key for a company (provider or client) or an operator, restricted to `environment`
/// or not (docs/adr/0021-environment-restricted-keys.md; operator keys never are: `environment`
/// is ignored for them).
pub fn generate_key(kind: KeyKind, owner: Uuid, environment: Option<Environment>) -> NewKey {
    const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let environment = environment.filter(|_| kind != KeyKind::Operator);
    let key_id = random_string(KEY_ID_LEN, LOWER);
    let secret = random_string(KEY_SECRET_LEN, ALNUM);
    let api_key = format_key(kind, environment, &key_id, &secret);
    let prefix = key_prefix(kind, environment, &key_id);
    let (company_id, operator_id) = match kind {
        KeyKind::Operator => (None, Some(owner)),
        KeyKind::Provider | KeyKind::Client => (Some(owner), None),
    };
    NewKey {
        record: ApiKeyRecord {
            prefix,
            hash: hash_key(&api_key),
            kind,
            company_id,
            operator_id,
            environment,
            // Microseconds, what PostgreSQL keeps: the listing shows what the create answered.
            created_at: crate::clock::now_micros(),
            revoked_at: None,
            company_provider_id: None,
        },
        api_key,
    }
}

/// Creates and stores an unrestricted key without a limit (the CLI, an operator's tool);
/// returns the key to show once. Keys issued over HTTP go through [`issue_company_key`].
pub async fn issue_key(
    repo: &dyn Repository,
    kind: KeyKind,
    owner: Uuid,
) -> Result<NewKey, store::StoreError> {
    issue_restricted_key(repo, kind, owner, None).await
}

/// [`issue_key`] restricted to `environment` (`None`: unrestricted).
pub async fn issue_restricted_key(
    repo: &dyn Repository,
    kind: KeyKind,
    owner: Uuid,
    environment: Option<Environment>,
) -> Result<NewKey, store::StoreError> {
    let key = generate_key(kind, owner, environment);
    repo.insert_api_key(&key.record).await?;
    Ok(key)
}

/// Creates and stores a key of a company, restricted to `environment` or not, unless the
/// company holds `max` unrevoked keys already (`None`); returns the key to show once.
pub async fn issue_company_key(
    repo: &dyn Repository,
    kind: KeyKind,
    company: Uuid,
    environment: Option<Environment>,
    max: usize,
) -> Result<Option<NewKey>, store::StoreError> {
    let key = generate_key(kind, company, environment);
    Ok(repo
        .insert_company_api_key(&key.record, max)
        .await?
        .then_some(key))
}

/// The prefix (`rfs_<role>[_test|_live]_<key id>`) of the key a request was authenticated with, put into
/// the request extensions next to the [`Caller`] (for the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPrefix(pub String);

/// Resolves a bearer token to its caller and the key's prefix (through `cache`; with `fresh`,
/// from the database whatever the cache holds), or the 401 reason.
pub async fn resolve_key(
    repo: &dyn Repository,
    cache: &KeyCache,
    header: Option<&str>,
    fresh: bool,
) -> Result<(Caller, KeyPrefix), ApiError> {
    let header = header.ok_or(ApiError::Unauthorized(
        "send the API key as Authorization: Bearer <key>",
    ))?;
    let token = match header.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
        _ => {
            return Err(ApiError::Unauthorized(
                "the Authorization header must use the Bearer scheme",
            ));
        }
    };
    let parsed = parse_key(token).ok_or(ApiError::Unauthorized("the API key is malformed"))?;
    const UNKNOWN: ApiError = ApiError::Unauthorized("the API key is unknown or revoked");
    let record = if fresh {
        cache.find_fresh(repo, parsed.prefix).await?
    } else {
        cache.find(repo, parsed.prefix).await?
    }
    .ok_or(UNKNOWN)?;
    let matches: bool = hash_key(token).ct_eq(&record.hash).into();
    if !matches || record.revoked_at.is_some() || record.kind != parsed.kind {
        return Err(UNKNOWN);
    }
    // The prefix is stored with its marker, so a stored restriction the marker does not show
    // (or the reverse) is a corrupt record, not a key to trust either way.
    if record.environment != parsed.environment {
        return Err(ApiError::Internal(anyhow::anyhow!(
            "key {} is stored with another environment than its prefix shows",
            record.prefix
        )));
    }
    let corrupt = || ApiError::Internal(anyhow::anyhow!("key {} has no owner", record.prefix));
    let environment = record.environment;
    let caller = match record.kind {
        KeyKind::Provider => Caller::Provider {
            company_id: record.company_id.ok_or_else(corrupt)?,
            environment,
        },
        KeyKind::Client => Caller::Client {
            company_id: record.company_id.ok_or_else(corrupt)?,
            provider_id: record.company_provider_id.ok_or_else(corrupt)?,
            environment,
        },
        KeyKind::Operator => Caller::Operator {
            operator_id: record.operator_id.ok_or_else(corrupt)?,
        },
    };
    Ok((caller, KeyPrefix(record.prefix)))
}

/// Middleware: every route behind it needs a valid key; the [`Caller`] (and the
/// [`KeyPrefix`]) is put into the request extensions for handlers, the rate limit and the
/// idempotency layer. The key's use is recorded now and then ([`KeyCache`]).
pub async fn require_key(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let (parts, body) = req.into_parts();
    let header = parts
        .headers
        .get(AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or(""));
    // A request that changes something (a key issued, a case created, a step) reads its key
    // from the database: a key revoked on another instance writes nothing more there at once,
    // and reads within the key cache's time (issue 53.2, docs/operations.md "Running N
    // instances").
    let fresh = !matches!(
        parts.method,
        axum::http::Method::GET | axum::http::Method::HEAD
    );
    let resolved = resolve_key(state.repo.as_ref(), &state.keys, header, fresh).await;
    // A request without a valid key takes a token of its client address's bucket: guessing
    // keys, or a platform misconfigured in a loop, is slowed per address (issue 52.5).
    if let Err(ApiError::Unauthorized(_)) = &resolved
        && let Some(retry_after_secs) = crate::limits::address_refused(
            &state,
            &parts.headers,
            parts.extensions.get::<crate::limits::ClientAddr>().copied(),
        )
    {
        return Err(ApiError::RateLimited { retry_after_secs });
    }
    let (caller, prefix) = resolved?;
    let mut req = Request::from_parts(parts, body);
    state.keys.note_use(&state.repo, &prefix.0);
    crate::telemetry::record_caller(&caller);
    req.extensions_mut().insert(caller);
    req.extensions_mut().insert(prefix);
    Ok(next.run(req).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_parse_and_hash() {
        let owner = Uuid::now_v7();
        let a = generate_key(KeyKind::Client, owner, None);
        let b = generate_key(KeyKind::Client, owner, None);
        assert_ne!(a.api_key, b.api_key);
        let parsed = parse_key(&a.api_key).expect("well-formed");
        assert_eq!(parsed.kind, KeyKind::Client);
        assert_eq!(parsed.prefix, a.record.prefix);
        assert_eq!(a.record.hash, hash_key(&a.api_key));
        assert_eq!(a.record.company_id, Some(owner));
        assert!(!a.record.hash.is_empty());
        assert!(!a.api_key.contains(&hex(&a.record.hash)));
    }

    #[test]
    fn restricted_keys_show_their_environment() {
        let owner = Uuid::now_v7();
        let key = generate_key(KeyKind::Provider, owner, Some(Environment::Sandbox));
        assert!(key.api_key.starts_with("rfs_prv_test_"), "{}", key.api_key);
        assert!(key.record.prefix.starts_with("rfs_prv_test_"));
        assert_eq!(key.record.environment, Some(Environment::Sandbox));
        let parsed = parse_key(&key.api_key).expect("well-formed");
        assert_eq!(parsed.prefix, key.record.prefix);
        assert_eq!(parsed.environment, Some(Environment::Sandbox));
        let live = generate_key(KeyKind::Client, owner, Some(Environment::Production));
        assert!(live.record.prefix.starts_with("rfs_cli_live_"));
        // Operators are never restricted.
        let op = generate_key(KeyKind::Operator, owner, Some(Environment::Sandbox));
        assert_eq!(op.record.environment, None);
        assert!(parse_key(&op.api_key).is_some());
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
}

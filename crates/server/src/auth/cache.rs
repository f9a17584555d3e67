//! The API key records an instance read recently, which the application state holds; the
//! middleware that reads them is in the parent module.

use std::sync::Arc;

use store::{ApiKeyRecord, Repository};

/// Key records by prefix, each trusted for `ttl` (`FILING_KEY_CACHE_SECS`): a key revoked with
/// `filing keys revoke` stops working on running instances within that time. Every request
/// still hashes its token and compares it with the record, so only the lookup is saved (one of
/// the two statements of a case read). Unknown prefixes are not remembered.
///
/// It also remembers which keys this instance recorded as used lately, so a key's
/// `last_used_at` is written at most once per [`KeyCache::USE_EVERY`] and instance, not on every
/// request.
pub struct KeyCache {
    records: crate::recent::Recent<ApiKeyRecord>,
    used: crate::recent::Recent<()>,
}

impl KeyCache {
    /// How often a key's last use is written at most (per instance).
    pub const USE_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

    pub fn new(ttl: std::time::Duration) -> Self {
        Self {
            records: crate::recent::Recent::new(ttl),
            used: crate::recent::Recent::new(Self::USE_EVERY),
        }
    }

    /// Forgets the record of `prefix` (this instance revoked the key): it stops working here
    /// at once, on other instances within the cache time.
    pub fn forget(&self, prefix: &str) {
        self.records.forget(prefix);
    }

    /// Records the use of the key `prefix` now, unless this instance did within
    /// [`Self::USE_EVERY`]. The write runs in the background: a request never waits for it, and
    /// a failure is only logged.
    pub(super) fn note_use(&self, repo: &Arc<dyn Repository>, prefix: &str) {
        if self.used.get(prefix).is_some() {
            return;
        }
        self.used.put(prefix, ());
        let (repo, prefix) = (repo.clone(), prefix.to_string());
        tokio::spawn(async move {
            if let Err(e) = repo
                .touch_api_key(&prefix, time::OffsetDateTime::now_utc())
                .await
            {
                tracing::warn!(%prefix, error = %e, "could not record the key's last use");
            }
        });
    }

    /// The record of `prefix` read from the database now (and kept for the reads after).
    pub(crate) async fn find_fresh(
        &self,
        repo: &dyn Repository,
        prefix: &str,
    ) -> Result<Option<ApiKeyRecord>, store::StoreError> {
        let found = repo.find_api_key(prefix).await?;
        match &found {
            Some(record) => self.records.put(prefix, record.clone()),
            None => self.records.forget(prefix),
        }
        Ok(found)
    }

    pub(crate) async fn find(
        &self,
        repo: &dyn Repository,
        prefix: &str,
    ) -> Result<Option<ApiKeyRecord>, store::StoreError> {
        if let Some(record) = self.records.get(prefix) {
            return Ok(Some(record));
        }
        let found = repo.find_api_key(prefix).await?;
        if let Some(record) = &found {
            self.records.put(prefix, record.clone());
        }
        Ok(found)
    }
}

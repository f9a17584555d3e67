//! What one provider may store, and the disk every provider shares (issue 52.1,
//! docs/operations.md "Storage quota and free disk"). Both are checked when an upload begins,
//! before its body is read, on the length it declares (a body without one counts as the
//! largest upload allowed): a provider beyond `FILING_STORAGE_QUOTA_BYTES` gets 413
//! `STORAGE_QUOTA_EXCEEDED` with the figures, and below `FILING_MIN_FREE_DISK_BYTES` of free disk
//! in the data folder every upload gets 503 with `Retry-After`, so the spool and the documents
//! never take the last of the disk from the database.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use uuid::Uuid;

/// How long a provider's stored bytes, once read from the database, are used (with this
/// instance's uploads since added).
const USAGE_FRESH_FOR: Duration = Duration::from_secs(30);

pub struct Storage {
    quota: Option<u64>,
    min_free: u64,
    data_dir: PathBuf,
    /// Bytes stored per provider as last read, when, and this instance's uploads since.
    stored: Mutex<HashMap<Uuid, (Instant, u64)>>,
    /// Bytes of uploads in progress per provider (their spool files), as declared.
    in_flight: Mutex<HashMap<Uuid, u64>>,
}

/// Why an upload may not begin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageRefusal {
    Quota { used: u64, quota: u64, upload: u64 },
    Disk { free: u64, watermark: u64 },
}

/// An upload's claim on its provider's quota, released when dropped; [`Reservation::stored`]
/// keeps it counted until the provider's usage is read again.
pub struct Reservation<'a> {
    storage: &'a Storage,
    provider: Option<Uuid>,
    bytes: u64,
}

impl Storage {
    pub fn new(quota: Option<u64>, min_free: u64, data_dir: PathBuf) -> Self {
        Self {
            quota,
            min_free,
            data_dir,
            stored: Mutex::default(),
            in_flight: Mutex::default(),
        }
    }

    /// Free bytes on the data folder's file system (`None` when it cannot be read).
    pub fn free_disk(&self) -> Option<u64> {
        fs4::available_space(&self.data_dir).ok()
    }

    /// Admits an upload of `bytes` for `provider` (`None`: an operator, outside any quota), or
    /// says why not.
    pub async fn admit(
        &self,
        repo: &dyn store::Repository,
        provider: Option<Uuid>,
        bytes: u64,
    ) -> Result<Result<Reservation<'_>, StorageRefusal>, store::StoreError> {
        if let Some(free) = self.free_disk()
            && free < self.min_free.saturating_add(bytes)
        {
            return Ok(Err(StorageRefusal::Disk {
                free,
                watermark: self.min_free,
            }));
        }
        let (Some(quota), Some(p)) = (self.quota, provider) else {
            return Ok(Ok(Reservation {
                storage: self,
                provider: None,
                bytes,
            }));
        };
        let stored = self.stored_by(repo, p).await?;
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        let flying = in_flight.get(&p).copied().unwrap_or(0);
        let used = stored.saturating_add(flying);
        if used.saturating_add(bytes) > quota {
            return Ok(Err(StorageRefusal::Quota {
                used,
                quota,
                upload: bytes,
            }));
        }
        *in_flight.entry(p).or_insert(0) += bytes;
        Ok(Ok(Reservation {
            storage: self,
            provider: Some(p),
            bytes,
        }))
    }

    async fn stored_by(&self, repo: &dyn store::Repository, p: Uuid) -> store::Result<u64> {
        {
            let stored = self.stored.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((at, bytes)) = stored.get(&p)
                && at.elapsed() < USAGE_FRESH_FOR
            {
                return Ok(*bytes);
            }
        }
        let bytes = u64::try_from(repo.provider_document_bytes(p).await?).unwrap_or(0);
        let mut stored = self.stored.lock().unwrap_or_else(|e| e.into_inner());
        if stored.len() > 10_000 {
            stored.retain(|_, (at, _)| at.elapsed() < USAGE_FRESH_FOR);
        }
        stored.insert(p, (Instant::now(), bytes));
        Ok(bytes)
    }
}

impl Reservation<'_> {
    /// The upload was stored: its bytes count as stored until the usage is read again.
    pub fn stored(&self) {
        if let Some(p) = self.provider {
            let mut stored = self
                .storage
                .stored
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if let Some((_, bytes)) = stored.get_mut(&p) {
                *bytes = bytes.saturating_add(self.bytes);
            }
        }
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.provider {
            let mut in_flight = self
                .storage
                .in_flight
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if let Some(n) = in_flight.get_mut(&p) {
                *n = n.saturating_sub(self.bytes);
                if *n == 0 {
                    in_flight.remove(&p);
                }
            }
        }
    }
}

//! Document files (PDFs, XML) behind `object_store`, so that the local directory used by default
//! and an S3-compatible bucket at scale are the same code.

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::{Result, StoreError};

/// Where documents live.
#[derive(Clone)]
pub struct DocumentStore {
    inner: Arc<dyn ObjectStore>,
    /// For the local backend: its root, so writes can be flushed to disk before they are
    /// acknowledged.
    local_root: Option<std::path::PathBuf>,
    /// Local backend: the folders whose entry in the folder above this process has flushed,
    /// so that only the first write into each pays for flushing the folder above (see
    /// `dirs_to_flush`).
    settled: Arc<std::sync::Mutex<std::collections::HashSet<std::path::PathBuf>>>,
    /// Local backend: folder flushes, shared by writes into the same folder at the same time.
    folder_flushes: Arc<crate::folder_flush::FolderFlushes>,
    /// For a bucket: the most one operation may take, retries included (a download's body
    /// instead stops after this long without data).
    bound: Option<std::time::Duration>,
}

impl std::fmt::Debug for DocumentStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DocumentStore({})", self.inner)
    }
}

/// An S3 bucket for documents (see [`DocumentStore::s3`]).
#[derive(Clone)]
pub struct S3Settings {
    pub bucket: String,
    /// Key prefix inside the bucket ("" for none).
    pub prefix: String,
    /// Another endpoint than AWS's (MinIO, Ceph, a test server), e.g. `http://127.0.0.1:9000`.
    pub endpoint: Option<String>,
    pub region: Option<String>,
    /// Access key id and secret; otherwise from the environment.
    pub credentials: Option<(String, String)>,
    /// Allow a plain `http://` endpoint (local S3-compatible servers).
    pub allow_http: bool,
    /// Bound on each request, retries included.
    pub timeout: std::time::Duration,
}

impl std::fmt::Debug for S3Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Settings")
            .field("bucket", &self.bucket)
            .field("prefix", &self.prefix)
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field(
                "credentials",
                &self.credentials.as_ref().map(|(id, _)| (id, "***")),
            )
            .field("allow_http", &self.allow_http)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The outcome of a bounded store operation that did not succeed.
enum Bounded {
    Store(object_store::Error),
    TimedOut(std::time::Duration),
}

impl From<Bounded> for StoreError {
    fn from(e: Bounded) -> Self {
        match e {
            Bounded::Store(e) => unavailable(e),
            Bounded::TimedOut(bound) => StoreError::Unavailable(format!(
                "the document store did not answer within {bound:?}"
            )),
        }
    }
}

/// A failed [`DocumentStore::check`].
#[derive(Debug)]
pub struct CheckFailure {
    pub error: StoreError,
    /// Whether trying again later may succeed (see `may_pass`).
    pub may_pass: bool,
}

impl std::fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for CheckFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

/// Whether the store could not be reached, or not serve yet: our bound ran out, the error
/// comes from the transport (connecting, sending, waiting), or the service answered with a
/// status that says "later" (5xx, 429, 408: a MinIO still initialising answers 503). Other
/// answers (403, `NoSuchBucket`) are final.
fn may_pass(e: &Bounded) -> bool {
    /// How `object_store` (0.14) words an answer's status; its error type is not public, so
    /// the status is read from the text of that one error in the chain.
    const STATUS: &str = "Server returned non-2xx status code: ";
    match e {
        Bounded::TimedOut(_) => true,
        Bounded::Store(e) => {
            let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
            while let Some(cur) = source {
                if let Some(http) = cur.downcast_ref::<object_store::client::HttpError>() {
                    use object_store::client::HttpErrorKind as K;
                    return matches!(
                        http.kind(),
                        K::Connect | K::Request | K::Timeout | K::Interrupted
                    );
                }
                if let Some(rest) = cur.to_string().strip_prefix(STATUS) {
                    let status: u16 = rest.get(..3).and_then(|s| s.parse().ok()).unwrap_or(0);
                    return status >= 500 || status == 429 || status == 408;
                }
                source = cur.source();
            }
            false
        }
    }
}

/// Sorts an `object_store` error: I/O trouble (a read-only or full disk, a directory that is
/// gone, a permission the process lost, an unreachable bucket) is an outage that may pass;
/// anything else (an invalid key, an unsupported operation, a failed precondition) is a bug.
fn unavailable(e: object_store::Error) -> StoreError {
    use object_store::Error as E;
    match e {
        E::Generic { .. }
        | E::JoinError { .. }
        | E::PermissionDenied { .. }
        | E::Unauthenticated { .. } => StoreError::Unavailable(e.to_string()),
        other => StoreError::Documents(other),
    }
}

impl DocumentStore {
    /// Documents as files below `dir` (created when missing).
    pub fn local(dir: &std::path::Path) -> Result<Self> {
        // The folder's entry, and those of the folders created with it. For a folder that
        // exists, only in case an earlier start stopped before flushing it, and best effort:
        // the folder above may not even be readable.
        let existed = dir.exists();
        let to_flush = dirs_created_by(dir);
        std::fs::create_dir_all(dir)
            .and_then(|()| match flush_dirs(&to_flush) {
                Err(_) if existed => Ok(()),
                flushed => flushed,
            })
            .map_err(|e| {
                StoreError::Unavailable(format!("cannot create {}: {e}", dir.display()))
            })?;
        let fs = object_store::local::LocalFileSystem::new_with_prefix(dir)
            .map_err(unavailable)?
            // Not object_store's cleanup, which removes every emptied folder up to the root:
            // `delete` removes an emptied case folder only, so `trade/` and `tax/` stay once
            // created, and their entries in the root stay flushed (see `dirs_to_flush`).
            .with_automatic_cleanup(false);
        Ok(Self {
            inner: Arc::new(fs),
            local_root: Some(dir.to_path_buf()),
            settled: Arc::default(),
            folder_flushes: Arc::default(),
            bound: None,
        })
    }

    /// Documents as objects in an S3 bucket (AWS or any S3-compatible service), below
    /// `settings.prefix`. What `settings` leaves unset comes from the usual `AWS_*` environment
    /// variables (credentials, region, endpoint), as the AWS tools read them.
    ///
    /// Each operation (write, read up to the first byte, listing page, delete) is bounded by
    /// `settings.timeout`, `object_store`'s retries included, so a bucket that does not answer
    /// makes a request fail as unavailable (503) rather than hang. A download's body is not
    /// bounded in total (50 MB on a slow link may take long) but stops after `settings.timeout`
    /// without data. An S3 `PUT` is atomic and, on AWS, durable when acknowledged, so `put`
    /// needs nothing more.
    pub fn s3(settings: &S3Settings) -> Result<Self> {
        use object_store::ClientConfigKey;
        use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
        // Set key by key: `with_client_options` would replace the client options read from the
        // environment (`AWS_ALLOW_HTTP`, proxies) with defaults. reqwest's `timeout` covers the
        // whole body, so it is only a backstop here; `read_timeout` catches a stalled body.
        let timeout = format!("{}ms", settings.timeout.as_millis());
        let mut builder = AmazonS3Builder::from_env()
            .with_bucket_name(&settings.bucket)
            .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::Timeout), "1h")
            .with_config(
                AmazonS3ConfigKey::Client(ClientConfigKey::ConnectTimeout),
                &timeout,
            )
            .with_config(
                AmazonS3ConfigKey::Client(ClientConfigKey::ReadTimeout),
                &timeout,
            )
            .with_retry(object_store::RetryConfig {
                backoff: object_store::BackoffConfig::default(),
                max_retries: 3,
                retry_timeout: settings.timeout,
            });
        if let Some(endpoint) = &settings.endpoint {
            builder = builder.with_endpoint(endpoint);
        }
        if let Some(region) = &settings.region {
            builder = builder.with_region(region);
        }
        if let Some((id, secret)) = &settings.credentials {
            builder = builder
                .with_access_key_id(id)
                .with_secret_access_key(secret);
        }
        if settings.allow_http {
            builder = builder.with_allow_http(true);
        }
        let s3 = builder.build().map_err(StoreError::Documents)?;
        let inner: Arc<dyn ObjectStore> = match settings.prefix.trim_matches('/') {
            "" => Arc::new(s3),
            prefix => Arc::new(object_store::prefix::PrefixStore::new(s3, prefix)),
        };
        Ok(Self {
            bound: Some(settings.timeout),
            ..Self::from_object_store(inner)
        })
    }

    /// Runs one store operation within the bucket's bound (no bound for the local folder).
    async fn bounded<T>(
        &self,
        op: impl std::future::Future<Output = object_store::Result<T>>,
    ) -> std::result::Result<T, Bounded> {
        match self.bound {
            None => op.await.map_err(Bounded::Store),
            Some(bound) => match tokio::time::timeout(bound, op).await {
                Ok(r) => r.map_err(Bounded::Store),
                Err(_) => Err(Bounded::TimedOut(bound)),
            },
        }
    }

    /// Whether the store answers: lists a folder that is never written. For a bucket this
    /// checks the endpoint, the credentials and the bucket's existence at start-up, where a
    /// mistake is cheap; the error carries the service's reason (`NoSuchBucket`,
    /// `AccessDenied`, a refused connection) and whether trying again later may succeed (the
    /// store could not be reached, or answered "later"), for the start to wait on.
    ///
    /// For the local folder: that it is still there and a folder (a volume that was
    /// unmounted or removed lists as empty otherwise).
    pub async fn check(&self) -> std::result::Result<(), CheckFailure> {
        if let Some(root) = &self.local_root {
            return match tokio::fs::metadata(root).await {
                Ok(m) if m.is_dir() => Ok(()),
                Ok(_) => Err(CheckFailure {
                    error: StoreError::Unavailable(format!(
                        "the documents folder {} is not a folder",
                        root.display()
                    )),
                    may_pass: false,
                }),
                Err(e) => Err(CheckFailure {
                    error: StoreError::Unavailable(format!(
                        "the documents folder {}: {e}",
                        root.display()
                    )),
                    may_pass: true,
                }),
            };
        }
        let check = Path::from(".filing-check");
        match self
            .bounded(self.inner.list_with_delimiter(Some(&check)))
            .await
        {
            Ok(_) => Ok(()),
            Err(e) => Err(CheckFailure {
                may_pass: may_pass(&e),
                error: match e {
                    Bounded::Store(e) => StoreError::Unavailable(e.to_string()),
                    e => e.into(),
                },
            }),
        }
    }

    /// Any other `object_store` backend (S3, in-memory for tests).
    pub fn from_object_store(inner: Arc<dyn ObjectStore>) -> Self {
        Self {
            inner,
            local_root: None,
            settled: Arc::default(),
            folder_flushes: Arc::default(),
            bound: None,
        }
    }

    /// Writes the whole object atomically (readers see all of it or nothing) and, on the local
    /// backend, durably: the file, its folder and the folders whose entries the write created
    /// are flushed to disk before this returns (see `dirs_to_flush`), so an acknowledged
    /// document survives a power loss.
    pub async fn put(&self, key: &str, bytes: Bytes) -> Result<()> {
        if let Some(root) = &self.local_root {
            return self.put_local(root, key, bytes).await;
        }
        let path = Path::from(key);
        let put = self
            .bounded(self.inner.put(&path, PutPayload::from(bytes)))
            .await;
        written(put.map(drop))
    }

    /// The local backend's write, in one blocking call (`write_durably`): a staging file
    /// named as `object_store` names its own (`name#N`, which listings skip and the sweep
    /// removes), written and flushed, renamed into place, then the folders flushed. One hand-off
    /// to the blocking pool instead of two (`object_store`'s write, then our flushes), and the
    /// content is on disk before its name is.
    async fn put_local(&self, root: &std::path::Path, key: &str, bytes: Bytes) -> Result<()> {
        // The folders on the way to the file hold the entries this write may create (a new
        // month's folder): they must reach the disk too, or a power loss can take the new
        // folder, and the acknowledged file in it, away.
        self.write_local(root, key, move |file| write_durably(file, &bytes))
            .await
    }

    /// Runs `write` (of the file under `root` named by `key`) on a blocking thread, then
    /// flushes the folders whose entries it may have created and records them as settled.
    async fn write_local(
        &self,
        root: &std::path::Path,
        key: &str,
        write: impl FnOnce(&std::path::Path) -> std::io::Result<()> + Send + 'static,
    ) -> Result<()> {
        let file = root.join(key);
        let root = root.to_path_buf();
        let (flushes, settled) = (self.folder_flushes.clone(), self.settled.clone());
        tokio::task::spawn_blocking(move || {
            write(&file)?;
            let (to_flush, settle) = dirs_to_flush(&file, &root, &settled);
            flushes.flush(&to_flush)?;
            record_settled(&settled, settle, SETTLED_MOST);
            Ok(())
        })
        .await
        .map_err(|e| StoreError::Unavailable(e.to_string()))?
        .map_err(|e: std::io::Error| StoreError::Unavailable(format!("cannot write {key}: {e}")))
    }

    /// Like [`DocumentStore::put`], with the content read from the file at `from` (an upload
    /// spooled to disk), in bounded memory: copied into place on the local backend, sent in
    /// parts of 8 MiB to a bucket.
    pub async fn put_file(&self, key: &str, from: &std::path::Path) -> Result<()> {
        if let Some(root) = &self.local_root {
            let from = from.to_path_buf();
            return self
                .write_local(root, key, move |file| copy_durably(file, &from))
                .await;
        }
        let path = Path::from(key);
        let send = async {
            use tokio::io::AsyncWriteExt;
            let mut source =
                tokio::fs::File::open(from)
                    .await
                    .map_err(|e| object_store::Error::Generic {
                        store: "upload",
                        source: Box::new(e),
                    })?;
            let mut sink = object_store::buffered::BufWriter::with_capacity(
                self.inner.clone(),
                path.clone(),
                8 * 1024 * 1024,
            );
            let copied = async {
                tokio::io::copy(&mut source, &mut sink).await?;
                sink.shutdown().await
            }
            .await;
            if let Err(e) = copied {
                let _ = sink.abort().await;
                return Err(object_store::Error::Generic {
                    store: "upload",
                    source: Box::new(e),
                });
            }
            Ok(())
        };
        written(self.bounded(send).await)
    }

    /// The whole object; `None` when there is none under that key.
    pub async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        let path = Path::from(key);
        let read = async { self.inner.get(&path).await?.bytes().await };
        match self.bounded(read).await {
            Ok(bytes) => Ok(Some(bytes)),
            Err(Bounded::Store(object_store::Error::NotFound { .. })) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The object as a stream of chunks, with its size, for serving downloads.
    pub async fn stream(
        &self,
        key: &str,
    ) -> Result<Option<(u64, BoxStream<'static, std::io::Result<Bytes>>)>> {
        let path = Path::from(key);
        match self.bounded(self.inner.get(&path)).await {
            Ok(r) => {
                let size = r.meta.size;
                let stream = r
                    .into_stream()
                    .map(|chunk| chunk.map_err(std::io::Error::other))
                    .boxed();
                Ok(Some((size, stream)))
            }
            Err(Bounded::Store(object_store::Error::NotFound { .. })) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The keys of the objects last written before `cutoff`, in no particular order, as the
    /// listing pages arrive: a sweep of a large bucket holds one page at a time, not every key.
    pub fn keys_written_before(
        &self,
        cutoff: time::OffsetDateTime,
    ) -> BoxStream<'static, Result<String>> {
        let cutoff = crate::micros(cutoff);
        self.inner
            .list(None)
            .filter_map(move |meta| {
                std::future::ready(match meta {
                    Ok(m) if m.last_modified.timestamp_micros() < cutoff => {
                        Some(Ok(m.location.to_string()))
                    }
                    Ok(_) => None,
                    Err(e) => Some(Err(unavailable(e))),
                })
            })
            .boxed()
    }

    /// Local backend: removes the staging files of writes that never finished (`name#N`, left
    /// by a process killed mid-write; listings skip them) last changed before `cutoff`, and
    /// answers how many. Other backends have none (an unfinished S3 upload is not an object).
    pub async fn remove_staging_before(&self, cutoff: time::OffsetDateTime) -> Result<usize> {
        let Some(root) = self.local_root.clone() else {
            return Ok(0);
        };
        let cutoff = std::time::SystemTime::from(cutoff);
        tokio::task::spawn_blocking(move || {
            fn walk(
                dir: &std::path::Path,
                cutoff: std::time::SystemTime,
            ) -> std::io::Result<usize> {
                let mut removed = 0;
                for entry in std::fs::read_dir(dir)? {
                    let entry = entry?;
                    let kind = entry.file_type()?;
                    if kind.is_dir() {
                        removed += walk(&entry.path(), cutoff)?;
                    } else if kind.is_file()
                        && is_staging(&entry.file_name().to_string_lossy())
                        && entry.metadata()?.modified()? < cutoff
                    {
                        std::fs::remove_file(entry.path())?;
                        removed += 1;
                    }
                }
                Ok(removed)
            }
            walk(&root, cutoff)
        })
        .await
        .map_err(|e| StoreError::Unavailable(e.to_string()))?
        .map_err(|e| StoreError::Unavailable(format!("cannot clean staging files: {e}")))
    }

    /// Removes the object; removing a missing one is not an error.
    /// On the local backend, an emptied month or case folder (two levels or more below the root) goes
    /// too; the folders directly below the root never do.
    pub async fn delete(&self, key: &str) -> Result<()> {
        let path = Path::from(key);
        match self.bounded(self.inner.delete(&path)).await {
            Ok(()) | Err(Bounded::Store(object_store::Error::NotFound { .. })) => {}
            Err(e) => return Err(e.into()),
        }
        if let Some(root) = &self.local_root {
            let file = root.join(key);
            let root = root.clone();
            let settled = self.settled.clone();
            // Best effort: a folder that is not empty (or gone) stays as it is.
            let _ = tokio::task::spawn_blocking(move || {
                if let Some(folder) = file.parent()
                    && folder.starts_with(&root)
                    && folder != root
                    && folder.parent() != Some(root.as_path())
                {
                    // Unsettled first: a write that recreates it must flush its entry again.
                    settled
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .remove(folder);
                    let _ = std::fs::remove_dir(folder);
                }
            })
            .await;
        }
        Ok(())
    }
}

/// The outcome of a write to a bucket. One that finds no bucket (deleted, or a 409 while it is
/// being recreated) is the store being unavailable, not a request to answer with a 500.
fn written(outcome: std::result::Result<(), Bounded>) -> Result<()> {
    match outcome {
        Ok(()) => Ok(()),
        Err(Bounded::Store(
            e @ (object_store::Error::NotFound { .. } | object_store::Error::AlreadyExists { .. }),
        )) => Err(StoreError::Unavailable(e.to_string())),
        Err(e) => Err(e.into()),
    }
}

/// The folders to flush after creating the folder `path`, found before creating it, innermost
/// first: `path`'s parent, which gains its entry, and for each ancestor that does not exist yet
/// (and will be created with it), the folder above, which gains that one's entry.
fn dirs_created_by(path: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut dirs = Vec::new();
    let mut cur = path;
    while let Some(parent) = cur.parent() {
        let parent = if parent.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            parent
        };
        dirs.push(parent.to_path_buf());
        if parent.exists() {
            break;
        }
        cur = parent;
    }
    dirs
}

/// The folders to flush after writing `file` below `root`, innermost first, and the folders
/// to record in `settled` once they are flushed.
///
/// - The file's folder, every time: it gained the file's entry.
/// - Each folder above it, up to the root, until one holding a settled folder: a folder is
///   settled once this process has flushed its entry in the folder above, which it may have
///   created (a new month's folder, or one recreated after `delete` removed it empty). Until
///   then it cannot be told safely whether its entry is on disk (another write may have
///   created it a moment ago and not flushed yet, or an earlier run of the service may have
///   stopped before flushing), so the folder above is flushed and the folder recorded.
///
/// `delete` takes a folder out of `settled` before removing it, so a recreated folder is
/// flushed again. Called after the write's rename: from then on its folder holds a file and
/// cannot be removed, so what `settled` says about it stays true until the flush.
fn dirs_to_flush(
    file: &std::path::Path,
    root: &std::path::Path,
    settled: &std::sync::Mutex<std::collections::HashSet<std::path::PathBuf>>,
) -> (Vec<std::path::PathBuf>, Vec<std::path::PathBuf>) {
    let settled = settled
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (mut dirs, mut settle) = (Vec::new(), Vec::new());
    let mut cur = file;
    while let Some(parent) = cur.parent() {
        if !parent.starts_with(root) {
            break;
        }
        dirs.push(parent.to_path_buf());
        if parent == root || settled.contains(parent) {
            break;
        }
        settle.push(parent.to_path_buf());
        cur = parent;
    }
    (dirs, settle)
}

/// The most folders `settled` holds (one per kind and month, and one per case folder of the
/// layout before months that gets a summary on its first download); beyond it the record
/// starts afresh, which costs a flush of the folder above on the next write into each.
const SETTLED_MOST: usize = 10_000;

/// Records `folders` as settled (their entries flushed), starting afresh at `most`.
fn record_settled(
    settled: &std::sync::Mutex<std::collections::HashSet<std::path::PathBuf>>,
    folders: Vec<std::path::PathBuf>,
    most: usize,
) {
    if folders.is_empty() {
        return;
    }
    let mut settled = settled
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if settled.len() + folders.len() > most {
        settled.clear();
    }
    settled.extend(folders);
}

/// Writes `bytes` to `file` through a staging file beside it (created with its folder when
/// that is missing), flushes it and renames it into place; the folders are the caller's to
/// flush. A failed write removes its staging file.
fn write_durably(file: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static STAGED: AtomicU64 = AtomicU64::new(0);
    let (Some(folder), Some(name)) = (file.parent(), file.file_name()) else {
        return Err(std::io::Error::other("a document key names no file"));
    };
    let mut tries = 0;
    let (staging, mut out) = loop {
        tries += 1;
        let n = STAGED.fetch_add(1, Ordering::Relaxed);
        let mut staged = name.to_os_string();
        staged.push(format!("#{}{n}", std::process::id()));
        let staging = folder.join(staged);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&staging)
        {
            Ok(out) => break (staging, out),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && tries < 3 => {
                std::fs::create_dir_all(folder)?;
            }
            // Left by another process with the same id (a restart in a container, say).
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 10 => {}
            Err(e) => return Err(e),
        }
    };
    let written = out
        .write_all(bytes)
        .and_then(|()| out.sync_all())
        .and_then(|()| std::fs::rename(&staging, file));
    if written.is_err() {
        let _ = std::fs::remove_file(&staging);
    }
    written
}

/// [`write_durably`] with the content copied from the file at `from` (in the kernel where it
/// can: `std::fs::copy` into the staging file is not used, it would not flush).
fn copy_durably(file: &std::path::Path, from: &std::path::Path) -> std::io::Result<()> {
    let staging = staging_name(file)?;
    let copied = (|| {
        let mut source = std::fs::File::open(from)?;
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&staging)
            .or_else(|e| {
                if e.kind() != std::io::ErrorKind::NotFound {
                    return Err(e);
                }
                std::fs::create_dir_all(staging.parent().unwrap_or(std::path::Path::new(".")))?;
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&staging)
            })?;
        std::io::copy(&mut source, &mut out)?;
        out.sync_all()?;
        std::fs::rename(&staging, file)
    })();
    if copied.is_err() {
        let _ = std::fs::remove_file(&staging);
    }
    copied
}

/// A staging name beside `file`, as `object_store` names its own (`name#N`, which listings
/// skip and the sweep removes), unique in this process.
fn staging_name(file: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COPIES: AtomicU64 = AtomicU64::new(0);
    let (Some(folder), Some(name)) = (file.parent(), file.file_name()) else {
        return Err(std::io::Error::other("a document key names no file"));
    };
    let mut staged = name.to_os_string();
    // Digits only, as the sweep expects; the `0` after the process id keeps these apart from
    // `write_durably`'s names (its counter is written without leading zeros).
    staged.push(format!(
        "#{}0{}",
        std::process::id(),
        COPIES.fetch_add(1, Ordering::Relaxed)
    ));
    Ok(folder.join(staged))
}

/// `fsync` of each folder, in order.
fn flush_dirs(dirs: &[std::path::PathBuf]) -> std::io::Result<()> {
    for dir in dirs {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// `object_store`'s local staging file name: the target's name, `#`, digits.
fn is_staging(name: &str) -> bool {
    name.rsplit_once('#')
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests;

//! `filing backup` and `filing restore`: a consistent copy of an SQLite deployment taken while
//! servers run and write, and putting one back into an empty data folder.
//!
//! A backup folder holds `manifest.json`, `filing.db` (the database as of one moment, through
//! SQLite's online backup API), `documents/<storage key>` (every file the copy's document
//! records name) and `secrets/` (the data folder's `signing-secret` and `webhook-sealing-key`).
//! The documents are copied after the database: a create writes its files before its rows, so
//! every file a copied record names was written before the copy was made. The manifest lists
//! every file with its size and SHA-256; a restore checks them all before it writes anything.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::config::StorageConfig;

/// The manifest's name in a backup folder.
pub const MANIFEST: &str = "manifest.json";
/// The database's name in a backup folder.
const DATABASE: &str = "filing.db";
/// The manifest's layout version.
const FORMAT: u32 = 1;
/// The secrets of a data folder a backup carries.
const SECRETS: [&str; 2] = [crate::links::SECRET_FILE, crate::sealing::SEALING_KEY_FILE];
/// How long the database copy waits for a lock (a writer recovering the WAL).
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// `manifest.json`.
#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: u32,
    /// When the database was copied (RFC 3339, UTC).
    created_at: String,
    /// The release that wrote it.
    version: String,
    /// Where it was taken from: `database`, `data_dir`, `documents_dir`.
    source: Value,
    /// Rows per table in the copied database.
    counts: std::collections::BTreeMap<String, i64>,
    /// Document records whose file was not there (rendered on first download, not yet
    /// downloaded): they are rendered again when downloaded.
    documents_not_rendered: usize,
    /// Every file of the backup, relative to its folder.
    files: Vec<FileEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
struct FileEntry {
    path: String,
    size: u64,
    sha256: String,
}

/// The SQLite file and the local documents folder of `storage`, or why this is no deployment
/// these commands copy.
fn sqlite_deployment(storage: &StorageConfig, command: &str) -> anyhow::Result<PathBuf> {
    let Some(file) = crate::config::sqlite_file(&storage.database_url) else {
        bail!(
            "`filing {command}` copies SQLite deployments; {} is PostgreSQL: use pg_dump or base \
             backups with WAL archiving (docs/operations.md, \"Backups\")",
            crate::config::database_label(&storage.database_url)
        );
    };
    if let Some(s3) = &storage.documents_s3 {
        bail!(
            "`filing {command}` copies documents kept in a folder; these are in the bucket {:?}: \
             use bucket versioning or replication (docs/operations.md, \"Backups\")",
            s3.bucket
        );
    }
    Ok(file)
}

/// Whether `dir` is missing or empty.
fn empty_or_missing(dir: &Path) -> anyhow::Result<bool> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => Ok(entries.next().is_none()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(anyhow!("cannot read {}: {e}", dir.display())),
    }
}

/// `rel` (a storage key or a manifest path) below `root`, refusing anything but plain names
/// (no `..`, no absolute path).
fn below(root: &Path, rel: &str) -> anyhow::Result<PathBuf> {
    let path = Path::new(rel);
    if rel.is_empty() || !path.components().all(|c| matches!(c, Component::Normal(_))) {
        bail!("{rel:?} is not a relative path of plain names");
    }
    Ok(root.join(path))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Size and SHA-256 of the file at `path`.
fn hash_file(path: &Path) -> std::io::Result<(u64, String)> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0; 256 * 1024];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok((size, hex(&hasher.finalize())));
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
}

/// Copies `from` to the new file `to` (its folders created and recorded in `dirs`), synced to
/// disk; returns its size and SHA-256.
fn copy_file(
    from: &Path,
    to: &Path,
    dirs: &mut BTreeSet<PathBuf>,
) -> anyhow::Result<(u64, String)> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
        dirs.insert(parent.to_path_buf());
    }
    let mut source =
        std::fs::File::open(from).with_context(|| format!("cannot read {}", from.display()))?;
    let mut sink = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)
        .with_context(|| format!("cannot create {}", to.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0; 256 * 1024];
    let mut size = 0u64;
    loop {
        let n = source
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", from.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        sink.write_all(&buf[..n])
            .with_context(|| format!("cannot write {}", to.display()))?;
        size += n as u64;
    }
    sink.sync_all()
        .with_context(|| format!("cannot write {}", to.display()))?;
    Ok((size, hex(&hasher.finalize())))
}

/// Flushes the entries of `dirs` (the files created in them) to disk.
fn sync_dirs(dirs: &BTreeSet<PathBuf>) -> anyhow::Result<()> {
    for dir in dirs {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .with_context(|| format!("cannot flush {}", dir.display()))?;
    }
    Ok(())
}

/// What `filing backup` did: the printed report, and the problems that make it exit 1 (the
/// backup is complete but for them).
pub struct BackupReport {
    pub report: Value,
    pub problems: Vec<String>,
}

/// `filing backup --out OUT`.
pub async fn backup(storage: &StorageConfig, out: &Path) -> anyhow::Result<BackupReport> {
    let database = sqlite_deployment(storage, "backup")?;
    if !database.exists() {
        bail!(
            "there is no database at {}: nothing to back up",
            crate::config::database_label(&storage.database_url)
        );
    }
    if !empty_or_missing(out)? {
        bail!("{} is not empty: back up into a new folder", out.display());
    }
    eprintln!(
        "database: {}",
        crate::config::database_label(&storage.database_url)
    );
    let (storage, out) = (storage.clone(), out.to_path_buf());
    tokio::task::spawn_blocking(move || backup_blocking(&storage, &database, &out)).await?
}

fn backup_blocking(
    storage: &StorageConfig,
    database: &Path,
    out: &Path,
) -> anyhow::Result<BackupReport> {
    let started = std::time::Instant::now();
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    // Owner-only like the data folder (umask 077 makes what is created in it so).
    crate::app::restrict_mode(out, 0o700);
    let mut dirs = BTreeSet::from([out.to_path_buf()]);
    let taken_at = time::OffsetDateTime::now_utc();
    let db_copy = out.join(DATABASE);
    let snapshot = store::backup_sqlite(database, &db_copy, BUSY_TIMEOUT)
        .with_context(|| format!("cannot copy the database {}", database.display()))?;
    let (size, sha256) = hash_file(&db_copy)?;
    let mut files = vec![FileEntry {
        path: DATABASE.into(),
        size,
        sha256,
    }];

    // The files of the copy's records, copied after it.
    let (mut problems, mut not_rendered, mut bytes) = (Vec::new(), 0usize, 0u64);
    for doc in &snapshot.documents {
        let from = below(&storage.documents_dir, &doc.storage_key)?;
        let rel = format!("documents/{}", doc.storage_key);
        let to = below(out, &rel)?;
        if !from.exists() {
            match doc.sha256 {
                None => not_rendered += 1,
                Some(_) => problems.push(format!(
                    "{}: its record is in the copy, its file is gone (a document replaced while \
                     the backup ran? run it again)",
                    doc.storage_key
                )),
            }
            continue;
        }
        let (size, sha256) = copy_file(&from, &to, &mut dirs)?;
        if doc.sha256.as_ref().is_some_and(|want| *want != sha256) {
            problems.push(format!(
                "{}: the file's SHA-256 {sha256} is not the {} its record names",
                doc.storage_key,
                doc.sha256.as_deref().unwrap_or_default()
            ));
        }
        bytes += size;
        files.push(FileEntry {
            path: rel,
            size,
            sha256,
        });
    }

    let mut secrets = Vec::new();
    for name in SECRETS {
        let from = storage.data_dir.join(name);
        if !from.exists() {
            continue;
        }
        let rel = format!("secrets/{name}");
        let (size, sha256) = copy_file(&from, &out.join(&rel), &mut dirs)?;
        files.push(FileEntry {
            path: rel,
            size,
            sha256,
        });
        secrets.push(name);
    }

    let counts: std::collections::BTreeMap<String, i64> = snapshot
        .counts
        .iter()
        .map(|(table, n)| ((*table).to_string(), *n))
        .collect();
    let documents = files.len() - 1 - secrets.len();
    let manifest = Manifest {
        format: FORMAT,
        created_at: taken_at
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default(),
        version: env!("CARGO_PKG_VERSION").into(),
        source: json!({
            "database": crate::config::database_label(&storage.database_url),
            "data_dir": std::path::absolute(&storage.data_dir).unwrap_or(storage.data_dir.clone()),
            "documents_dir": std::path::absolute(&storage.documents_dir)
                .unwrap_or(storage.documents_dir.clone()),
        }),
        counts: counts.clone(),
        documents_not_rendered: not_rendered,
        files,
    };
    let staging = out.join(format!("{MANIFEST}.partial"));
    {
        let mut file = std::fs::File::create(&staging)
            .with_context(|| format!("cannot create {}", staging.display()))?;
        serde_json::to_writer_pretty(&mut file, &manifest)?;
        file.write_all(b"\n")?;
        file.sync_all()?;
    }
    std::fs::rename(&staging, out.join(MANIFEST))?;
    sync_dirs(&dirs)?;
    Ok(BackupReport {
        report: json!({
            "out": std::path::absolute(out).unwrap_or(out.to_path_buf()),
            "created_at": manifest.created_at,
            "counts": counts,
            "documents": documents,
            "bytes": bytes,
            "secrets": secrets,
            "problems": problems,
            "seconds": started.elapsed().as_secs_f64(),
        }),
        problems,
    })
}

/// `filing restore FROM`.
pub async fn restore(storage: &StorageConfig, from: &Path) -> anyhow::Result<Value> {
    let database = sqlite_deployment(storage, "restore")?;
    let text = std::fs::read_to_string(from.join(MANIFEST))
        .with_context(|| format!("{} is no backup of `filing backup`", from.display()))?;
    let manifest: Manifest = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a manifest", from.join(MANIFEST).display()))?;
    if manifest.format != FORMAT {
        bail!(
            "the backup's format {} is not {FORMAT}: restore it with the release that made it ({})",
            manifest.format,
            manifest.version
        );
    }
    for (what, dir) in [
        ("FILING_DATA_DIR", &storage.data_dir),
        ("the documents folder", &storage.documents_dir),
    ] {
        if !empty_or_missing(dir)? {
            bail!(
                "{what} {} is not empty: restore into a new folder (nothing was changed)",
                dir.display()
            );
        }
    }
    if database.exists() {
        bail!(
            "there is a database at {} already: restore into a new deployment (nothing was changed)",
            database.display()
        );
    }
    let label = crate::config::database_label(&storage.database_url);
    eprintln!("database: {label}");
    let in_folder = |prefix: &str| -> Vec<&str> {
        manifest
            .files
            .iter()
            .filter_map(|f| f.path.strip_prefix(prefix))
            .collect()
    };
    let report = json!({
        "restored": std::path::absolute(&storage.data_dir).unwrap_or(storage.data_dir.clone()),
        "database": label,
        "created_at": manifest.created_at,
        "counts": manifest.counts,
        "documents": in_folder("documents/").len(),
        "secrets": in_folder("secrets/"),
    });
    let (storage, from) = (storage.clone(), from.to_path_buf());
    tokio::task::spawn_blocking(move || restore_blocking(&storage, &database, &from, &manifest))
        .await??;
    Ok(report)
}

fn restore_blocking(
    storage: &StorageConfig,
    database: &Path,
    from: &Path,
    manifest: &Manifest,
) -> anyhow::Result<()> {
    // Where each file goes, and that it is whole: all checked before anything is written.
    let mut plan = Vec::with_capacity(manifest.files.len());
    for entry in &manifest.files {
        let source = below(from, &entry.path)?;
        let target = if entry.path == DATABASE {
            database.to_path_buf()
        } else if let Some(key) = entry.path.strip_prefix("documents/") {
            below(&storage.documents_dir, key)?
        } else if let Some(name) = entry.path.strip_prefix("secrets/")
            && SECRETS.contains(&name)
        {
            storage.data_dir.join(name)
        } else {
            bail!(
                "the manifest names {:?}, which no restore writes",
                entry.path
            );
        };
        let (size, sha256) = hash_file(&source).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound if entry.path.starts_with("secrets/") => anyhow!(
                "{} is missing: put the secrets kept apart back into {} first",
                entry.path,
                from.join("secrets").display()
            ),
            _ => anyhow!("cannot read {}: {e}", source.display()),
        })?;
        if (size, sha256.as_str()) != (entry.size, entry.sha256.as_str()) {
            bail!(
                "{} is damaged: {size} bytes with SHA-256 {sha256}, the manifest says {} bytes \
                 with {} (nothing was restored)",
                source.display(),
                entry.size,
                entry.sha256
            );
        }
        plan.push((source, target, entry));
    }
    std::fs::create_dir_all(&storage.data_dir)
        .with_context(|| format!("cannot create {}", storage.data_dir.display()))?;
    crate::app::restrict_mode(&storage.data_dir, 0o700);
    let mut dirs = BTreeSet::from([storage.data_dir.clone()]);
    for (source, target, entry) in plan {
        let (size, sha256) = copy_file(&source, &target, &mut dirs)?;
        if (size, sha256.as_str()) != (entry.size, entry.sha256.as_str()) {
            bail!(
                "{} changed while it was restored: remove {} and run the restore again",
                source.display(),
                storage.data_dir.display()
            );
        }
    }
    sync_dirs(&dirs)
}

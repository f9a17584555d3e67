//! Signed document links (docs/api/documents.md, "Download links"): `{public url}/v1/documents/{id}/content?expires=..&signature=..`,
//! an HMAC-SHA256 over the document id and the expiry, valid 24 hours, usable without a key.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;
use uuid::Uuid;

type HmacSha256 = Hmac<Sha256>;

/// How long a link is valid.
pub const LINK_VALIDITY_SECS: i64 = 24 * 60 * 60;
/// How far another instance's clock may be ahead of ours: a link it issued a moment ago
/// expires up to this much more than 24 hours from our now, and must still open.
pub const CLOCK_SKEW_SECS: i64 = 60;
pub const SECRET_FILE: &str = "signing-secret";

#[derive(Clone)]
pub struct LinkSigner {
    key: Vec<u8>,
    public_url: String,
}

impl std::fmt::Debug for LinkSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkSigner")
            .field("public_url", &self.public_url)
            .finish_non_exhaustive()
    }
}

/// An empty secret file older than this is the debris of a crash (see
/// [`load_or_create_secret`]), not a file another instance is writing.
const EMPTY_SECRET_STALE: std::time::Duration = std::time::Duration::from_secs(10);

/// The signing secret a server would use: `configured` (FILING_SIGNING_SECRET), else the one
/// in `data_dir`; `None` when neither is there. Reads only: nothing is created or removed.
pub fn existing_secret(
    configured: Option<&str>,
    data_dir: &Path,
) -> std::io::Result<Option<Vec<u8>>> {
    if let Some(s) = configured {
        return Ok(Some(s.as_bytes().to_vec()));
    }
    existing_key_file(data_dir, SECRET_FILE)
}

/// The key kept in `data_dir/name`, if there is one. Reads only.
pub fn existing_key_file(data_dir: &Path, name: &str) -> std::io::Result<Option<Vec<u8>>> {
    let path = data_dir.join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => decode_secret(&text, &path).map(Some),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The secret as the file at `path` holds it (base64url).
fn decode_secret(text: &str, path: &Path) -> std::io::Result<Vec<u8>> {
    URL_SAFE_NO_PAD
        .decode(text.trim())
        .map_err(|e| std::io::Error::other(format!("{} is corrupt: {e}", path.display())))
}

/// Reads the signing secret kept in the data folder, generating it on first start.
///
/// The secret is written and synced under a temporary name and then hard-linked to its final
/// name, which fails if the name exists: instances starting together on one folder agree on one
/// secret, and the final file is never seen empty or half-written. (Earlier versions created the
/// final file first and wrote it after; a crash in between left an empty file that every later
/// start waited on forever. An empty file older than a few seconds is removed and replaced.)
pub fn load_or_create_secret(data_dir: &Path) -> std::io::Result<Vec<u8>> {
    load_or_create_key_file(data_dir, SECRET_FILE)
}

/// A 32-byte key kept in `data_dir/name` (URL-safe base64, mode 0600), generated on first use
/// as [`load_or_create_secret`] describes.
pub fn load_or_create_key_file(data_dir: &Path, name: &str) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let path = data_dir.join(name);
    loop {
        match std::fs::read_to_string(&path) {
            Ok(text) if !text.trim().is_empty() => return decode_secret(&text, &path),
            Ok(_) => {
                let age = std::fs::metadata(&path)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .unwrap_or_default();
                if age > EMPTY_SECRET_STALE {
                    tracing::warn!(path = %path.display(), "removing an empty signing secret left by a crash");
                    match std::fs::remove_file(&path) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(e),
                    }
                } else {
                    // An instance of an earlier version is writing it right now.
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let mut secret = vec![0u8; 32];
        rand::rng().fill_bytes(&mut secret);
        let staging = data_dir.join(format!(".{name}.{}.tmp", Uuid::new_v4().simple()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let written = options.open(&staging).and_then(|mut f| {
            f.write_all(URL_SAFE_NO_PAD.encode(&secret).as_bytes())?;
            f.sync_all()
        });
        let linked = written.and_then(|()| std::fs::hard_link(&staging, &path));
        let _ = std::fs::remove_file(&staging);
        match linked {
            Ok(()) => {
                // The new name must survive a power loss too.
                std::fs::File::open(data_dir)?.sync_all()?;
                return Ok(secret);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

impl LinkSigner {
    pub fn new(key: Vec<u8>, public_url: String) -> Self {
        Self { key, public_url }
    }

    fn mac(&self, id: Uuid, expires: i64) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes keys of any size");
        mac.update(id.as_bytes());
        mac.update(&expires.to_be_bytes());
        mac
    }

    /// A download address for the document, valid for 24 hours from `now` (unix seconds).
    pub fn url(&self, id: Uuid, now: i64) -> String {
        let expires = now + LINK_VALIDITY_SECS;
        let signature = URL_SAFE_NO_PAD.encode(self.mac(id, expires).finalize().into_bytes());
        format!(
            "{}/v1/documents/{id}/content?expires={expires}&signature={signature}",
            self.public_url
        )
    }

    /// Whether `signature` is ours for this id and expiry, and the expiry has not passed (nor
    /// lies further ahead than a link issued now could, give or take [`CLOCK_SKEW_SECS`]).
    pub fn verify(&self, id: Uuid, expires: i64, signature: &str, now: i64) -> bool {
        if expires < now || expires > now + LINK_VALIDITY_SECS + CLOCK_SKEW_SECS {
            return false;
        }
        let Ok(sig) = URL_SAFE_NO_PAD.decode(signature) else {
            return false;
        };
        // verify_slice compares in constant time.
        self.mac(id, expires).verify_slice(&sig).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str) -> (i64, String) {
        let query = url.split_once('?').unwrap().1;
        let mut expires = 0;
        let mut sig = String::new();
        for pair in query.split('&') {
            let (k, v) = pair.split_once('=').unwrap();
            match k {
                "expires" => expires = v.parse().unwrap(),
                "signature" => sig = v.to_string(),
                _ => panic!("unexpected {k}"),
            }
        }
        (expires, sig)
    }

    #[test]
    fn sign_and_verify() {
        let signer = LinkSigner::new(b"k".repeat(32), "https://x.example".into());
        let id = Uuid::now_v7();
        let now = 1_700_000_000;
        let url = signer.url(id, now);
        assert!(url.starts_with(&format!("https://x.example/v1/documents/{id}/content?")));
        let (expires, sig) = parse(&url);
        assert_eq!(expires, now + LINK_VALIDITY_SECS);
        assert!(signer.verify(id, expires, &sig, now));
        assert!(signer.verify(id, expires, &sig, now + LINK_VALIDITY_SECS));
        assert!(!signer.verify(id, expires, &sig, now + LINK_VALIDITY_SECS + 1));
        // Issued by an instance whose clock is ahead: opens here within the allowed skew.
        let (ahead, ahead_sig) = parse(&signer.url(id, now + CLOCK_SKEW_SECS));
        assert!(signer.verify(id, ahead, &ahead_sig, now));
        let (too_far, too_far_sig) = parse(&signer.url(id, now + CLOCK_SKEW_SECS + 1));
        assert!(!signer.verify(id, too_far, &too_far_sig, now));
        assert!(!signer.verify(Uuid::now_v7(), expires, &sig, now));
        assert!(!signer.verify(id, expires + 1, &sig, now));
        let mut tampered = sig.clone();
        tampered.replace_range(0..1, if sig.starts_with('A') { "B" } else { "A" });
        assert!(!signer.verify(id, expires, &tampered, now));
        let other = LinkSigner::new(b"j".repeat(32), "https://x.example".into());
        assert!(!other.verify(id, expires, &sig, now));
    }

    #[test]
    fn secret_is_generated_once() {
        let dir = tempfile::tempdir().unwrap();
        let a = load_or_create_secret(dir.path()).unwrap();
        let b = load_or_create_secret(dir.path()).unwrap();
        assert_eq!(a.len(), 32);
        assert_eq!(a, b);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(SECRET_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // No staging file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from(SECRET_FILE)]);
    }

    #[test]
    fn an_empty_secret_left_by_a_crash_is_replaced_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SECRET_FILE);
        let f = std::fs::File::create(&path).unwrap();
        f.set_modified(std::time::SystemTime::now() - 2 * EMPTY_SECRET_STALE)
            .unwrap();
        drop(f);
        let started = std::time::Instant::now();
        let secret = load_or_create_secret(dir.path()).unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(secret.len(), 32);
        assert_eq!(load_or_create_secret(dir.path()).unwrap(), secret);
    }

    #[test]
    fn instances_starting_together_agree_on_one_secret() {
        let dir = tempfile::tempdir().unwrap();
        let secrets: Vec<Vec<u8>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| load_or_create_secret(dir.path()).unwrap()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(secrets.iter().all(|s| s == &secrets[0]), "{secrets:?}");
    }
}

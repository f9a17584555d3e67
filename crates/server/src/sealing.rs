//! Sealing values at rest (ChaCha20-Poly1305): webhook endpoint secrets and the answers kept
//! for idempotent replay. Which keys an instance seals with, how a value is stored sealed, and
//! how it moves to a new key (docs/adr/0003-data-at-rest-sealed-and-owner-only.md).

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;

/// The key that seals endpoint secrets at rest (`FILING_WEBHOOK_SECRETS_KEY`): ChaCha20-Poly1305
/// with the endpoint's id as associated data, so a sealed secret opens only on its own row.
#[derive(Clone, PartialEq, Eq)]
pub struct SealingKey([u8; 32]);

impl std::fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealingKey(***)")
    }
}

/// The sealing key generated into the data folder when `FILING_WEBHOOK_SECRETS_KEY` is not set.
pub const SEALING_KEY_FILE: &str = "webhook-sealing-key";

/// The keys an instance seals with, so that sealing is on without configuration:
/// `FILING_WEBHOOK_SECRETS_KEY` when it is set; else, when `FILING_SIGNING_SECRET` is set, a key
/// derived from it (instances on several machines must share that secret already, so they
/// agree on this key too); else a key kept in the data folder beside the signing secret
/// (generated on first start, mode 0600, when `create`). A key the folder holds that is not the
/// current one opens what it sealed (an old key, until a reseal moves those values).
/// `Ok(keys)` with no current key only when `create` is false and none of the three exists.
pub fn keys_with_default(
    mut keys: SealingKeys,
    signing_secret: Option<&str>,
    data_dir: &std::path::Path,
    create: bool,
) -> std::io::Result<SealingKeys> {
    let path = data_dir.join(SEALING_KEY_FILE);
    let in_folder = match crate::links::existing_key_file(data_dir, SEALING_KEY_FILE)? {
        Some(raw) => Some(SealingKey::from_file(raw, &path)?),
        None => None,
    };
    if keys.current.is_none() {
        keys.current = match (signing_secret, &in_folder) {
            (Some(secret), _) => Some(SealingKey::derived(
                secret.as_bytes(),
                "filing webhook secrets v1",
            )),
            (None, Some(key)) => Some(key.clone()),
            (None, None) if create => {
                let raw = crate::links::load_or_create_key_file(data_dir, SEALING_KEY_FILE)?;
                Some(SealingKey::from_file(raw, &path)?)
            }
            (None, None) => None,
        };
    }
    if let Some(key) = in_folder
        && keys.current.as_ref() != Some(&key)
    {
        keys.old.push(key);
    }
    Ok(keys)
}

/// How a sealed secret is stored: this prefix, then base64 of nonce and ciphertext.
const SEALED: &str = "sealed:v1:";

impl SealingKey {
    /// Base64 of exactly 32 bytes.
    pub fn parse(text: &str) -> Option<Self> {
        B64.decode(text.trim())
            .ok()?
            .try_into()
            .ok()
            .map(SealingKey)
    }

    /// A key of its own for one `purpose`, derived from another secret (HMAC-SHA256 of the
    /// purpose under it), so that one secret never serves two jobs directly.
    pub fn derived(secret: &[u8], purpose: &str) -> Self {
        use hmac::{Hmac, Mac};
        let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(secret)
            .expect("HMAC takes a key of any length");
        mac.update(purpose.as_bytes());
        SealingKey(mac.finalize().into_bytes().into())
    }

    fn from_file(raw: Vec<u8>, path: &std::path::Path) -> std::io::Result<Self> {
        raw.try_into().map(SealingKey).map_err(|_| {
            std::io::Error::other(format!("{} does not hold 32 bytes", path.display()))
        })
    }

    fn cipher(&self) -> chacha20poly1305::ChaCha20Poly1305 {
        use chacha20poly1305::KeyInit;
        chacha20poly1305::ChaCha20Poly1305::new((&self.0).into())
    }
}

/// The keys that seal stored secrets: `current` (`FILING_WEBHOOK_SECRETS_KEY`) seals and opens;
/// `old` (`FILING_WEBHOOK_SECRETS_OLD_KEYS`) only opens, while a change of key is under way
/// (`filing webhooks reseal` moves every stored secret to the current key).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SealingKeys {
    pub current: Option<SealingKey>,
    pub old: Vec<SealingKey>,
}

impl SealingKeys {
    /// Only `key`, no old ones.
    pub fn new(key: SealingKey) -> Self {
        Self {
            current: Some(key),
            old: Vec::new(),
        }
    }
}

/// How [`reseal_bytes`] found a stored value.
#[derive(Debug, PartialEq, Eq)]
pub enum Resealed {
    /// Already as the current key would store it (sealed with it, or plain without one).
    Current,
    /// Stored anew: sealed with the current key, or plain when there is none.
    Changed(Vec<u8>),
    /// Sealed with a key that is not among the keys.
    Unreadable,
}

/// `bytes` as they are stored: sealed with the current key (`sealed:v1:` and base64 of nonce
/// and ciphertext, `aad` bound to it), or as they are without one.
pub fn seal_bytes(keys: &SealingKeys, aad: &[u8], bytes: &[u8]) -> Vec<u8> {
    use chacha20poly1305::aead::{Aead, Payload};
    let Some(key) = &keys.current else {
        return bytes.to_vec();
    };
    let nonce: [u8; 12] = rand::random();
    let sealed = key
        .cipher()
        .encrypt((&nonce).into(), Payload { msg: bytes, aad })
        .expect("ChaCha20-Poly1305 seals anything of ours");
    let mut raw = nonce.to_vec();
    raw.extend_from_slice(&sealed);
    format!("{SEALED}{}", B64.encode(raw)).into_bytes()
}

/// The bytes of a stored value and whether the current key opened them: opened with the current
/// key or else an old one when sealed (`None` without a key that opens it, or with other
/// associated data), taken as they are otherwise (stored before a key was set).
fn open_with(keys: &SealingKeys, aad: &[u8], stored: &[u8]) -> Option<(Vec<u8>, bool)> {
    use chacha20poly1305::aead::{Aead, Payload};
    let Some(sealed) = stored.strip_prefix(SEALED.as_bytes()) else {
        return Some((stored.to_vec(), keys.current.is_none()));
    };
    let raw = B64.decode(sealed).ok()?;
    if raw.len() < 12 {
        return None;
    }
    let (nonce, ciphertext) = raw.split_at(12);
    keys.current
        .iter()
        .chain(&keys.old)
        .enumerate()
        .find_map(|(i, key)| {
            let payload = Payload {
                msg: ciphertext,
                aad,
            };
            let opened = key.cipher().decrypt(nonce.into(), payload).ok()?;
            Some((opened, i == 0 && keys.current.is_some()))
        })
}

/// Whether a stored value is sealed (rather than kept as it is).
pub fn is_sealed(stored: &[u8]) -> bool {
    stored.starts_with(SEALED.as_bytes())
}

/// The bytes of a stored value (see `open_with`).
pub fn open_bytes(keys: &SealingKeys, aad: &[u8], stored: &[u8]) -> Option<Vec<u8>> {
    open_with(keys, aad, stored).map(|(bytes, _)| bytes)
}

/// A stored value as the current key stores it (see [`Resealed`]).
pub fn reseal_bytes(keys: &SealingKeys, aad: &[u8], stored: &[u8]) -> Resealed {
    match open_with(keys, aad, stored) {
        None => Resealed::Unreadable,
        Some((_, true)) => Resealed::Current,
        Some((bytes, false)) => Resealed::Changed(seal_bytes(keys, aad, &bytes)),
    }
}

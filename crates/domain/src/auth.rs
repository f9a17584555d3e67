//! API keys: who is calling, and the key format.
//!
//! A key looks like `rfs_prv_8hq2m4kd9x0c_<32 characters>`: a readable role prefix, a public key id
//! and a secret. The part before the last underscore (`rfs_prv_8hq2m4kd9x0c`) is the key's
//! *prefix*: stored in clear, shown in listings and used to revoke it. Only a hash of the whole
//! key is stored.
//!
//! A key restricted to one environment (docs/adr/0021-environment-restricted-keys.md) says so
//! after the role: `rfs_prv_test_8hq2m4kd9x0c_…` (sandbox) or `rfs_prv_live_8hq2m4kd9x0c_…`
//! (production); its prefix keeps the marker (`rfs_prv_test_8hq2m4kd9x0c`). Unrestricted keys
//! have none.

use uuid::Uuid;

use crate::company::Environment;

/// Length of the public key id in a key.
pub const KEY_ID_LEN: usize = 12;
/// Length of the secret part of a key.
pub const KEY_SECRET_LEN: usize = 32;

/// Which kind of principal a key belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// A provider company, the API customer.
    Provider,
    /// A client company, which may read its own cases.
    Client,
    /// An operator: staff of the company that runs this service.
    Operator,
}

impl KeyKind {
    pub fn tag(self) -> &'static str {
        match self {
            KeyKind::Provider => "prv",
            KeyKind::Client => "cli",
            KeyKind::Operator => "opr",
        }
    }

    pub fn from_tag(tag: &str) -> Option<Self> {
        match tag {
            "prv" => Some(KeyKind::Provider),
            "cli" => Some(KeyKind::Client),
            "opr" => Some(KeyKind::Operator),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            KeyKind::Provider => "provider",
            KeyKind::Client => "client",
            KeyKind::Operator => "operator",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "provider" => Some(KeyKind::Provider),
            "client" => Some(KeyKind::Client),
            "operator" => Some(KeyKind::Operator),
            _ => None,
        }
    }
}

/// The marker of a key restricted to `environment`: `test` (sandbox) or `live` (production).
pub fn environment_tag(environment: Environment) -> &'static str {
    match environment {
        Environment::Sandbox => "test",
        Environment::Production => "live",
    }
}

fn environment_from_tag(tag: &str) -> Option<Environment> {
    match tag {
        "test" => Some(Environment::Sandbox),
        "live" => Some(Environment::Production),
        _ => None,
    }
}

/// A bearer token split into its parts; only well-formed tokens get this far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedKey<'a> {
    pub kind: KeyKind,
    /// The environment the key is restricted to, by its marker; `None`: unrestricted.
    pub environment: Option<Environment>,
    /// `rfs_<tag>[_test|_live]_<key id>`: the public, stored part.
    pub prefix: &'a str,
    pub secret: &'a str,
}

fn is_key_char(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// Splits a bearer token; `None` for anything that is not shaped like one of our keys.
pub fn parse_key(token: &str) -> Option<ParsedKey<'_>> {
    let rest = token.strip_prefix("rfs_")?;
    let (tag, rest) = rest.split_once('_')?;
    let kind = KeyKind::from_tag(tag)?;
    let (environment, rest) = match rest.split_once('_') {
        Some((marker, after)) => match environment_from_tag(marker) {
            // Operators are never restricted.
            Some(_) if kind == KeyKind::Operator => return None,
            Some(env) => (Some(env), after),
            None => (None, rest),
        },
        None => (None, rest),
    };
    let (key_id, secret) = rest.split_once('_')?;
    let id_ok = key_id.len() == KEY_ID_LEN && key_id.bytes().all(is_key_char);
    let secret_ok =
        secret.len() == KEY_SECRET_LEN && secret.bytes().all(|c| c.is_ascii_alphanumeric());
    if !(id_ok && secret_ok) {
        return None;
    }
    let prefix_len = token.len() - secret.len() - 1;
    Some(ParsedKey {
        kind,
        environment,
        prefix: &token[..prefix_len],
        secret,
    })
}

/// The prefix of a key (`rfs_<tag>[_test|_live]_<key id>`), restricted to `environment` or not.
pub fn key_prefix(kind: KeyKind, environment: Option<Environment>, key_id: &str) -> String {
    match environment {
        Some(env) => format!("rfs_{}_{}_{}", kind.tag(), environment_tag(env), key_id),
        None => format!("rfs_{}_{}", kind.tag(), key_id),
    }
}

/// Assembles a key from random parts the caller generated (`key_id`: lowercase alphanumerics,
/// `secret`: alphanumerics, of the lengths above).
pub fn format_key(
    kind: KeyKind,
    environment: Option<Environment>,
    key_id: &str,
    secret: &str,
) -> String {
    format!("{}_{}", key_prefix(kind, environment, key_id), secret)
}

/// Who is calling, as established from a valid key. `environment`: the environment a
/// restricted key is limited to (`None`: unrestricted, it sees both); operators see both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    Provider {
        company_id: Uuid,
        environment: Option<Environment>,
    },
    Client {
        company_id: Uuid,
        provider_id: Uuid,
        environment: Option<Environment>,
    },
    Operator {
        operator_id: Uuid,
    },
}

impl Caller {
    /// Client-company keys only read (their company and its cases): every POST, PUT, PATCH or
    /// DELETE is a provider's or an operator's and refuses a client key (403, or 404 for a
    /// case that is not its own). Layers in front of the handlers use this to leave such a
    /// request's body to the handler: the upload routes refuse it unread.
    pub fn may_write(&self) -> bool {
        !matches!(self, Caller::Client { .. })
    }

    /// The id idempotency keys and visibility are scoped to.
    pub fn scope_id(&self) -> Uuid {
        match self {
            Caller::Provider { company_id, .. } | Caller::Client { company_id, .. } => *company_id,
            Caller::Operator { operator_id } => *operator_id,
        }
    }

    /// The environment the caller's key is restricted to; `None` for an unrestricted key and
    /// for operators, which see both.
    pub fn environment(&self) -> Option<Environment> {
        match self {
            Caller::Provider { environment, .. } | Caller::Client { environment, .. } => {
                *environment
            }
            Caller::Operator { .. } => None,
        }
    }

    /// Whether the caller may see something of `environment` (a case, a client company): always
    /// for an unrestricted key, else only of its own environment.
    pub fn sees(&self, environment: Environment) -> bool {
        self.environment().is_none_or(|own| own == environment)
    }

    pub fn company_id(&self) -> Option<Uuid> {
        match self {
            Caller::Provider { company_id, .. } | Caller::Client { company_id, .. } => {
                Some(*company_id)
            }
            Caller::Operator { .. } => None,
        }
    }

    pub fn kind(&self) -> KeyKind {
        match self {
            Caller::Provider { .. } => KeyKind::Provider,
            Caller::Client { .. } => KeyKind::Client,
            Caller::Operator { .. } => KeyKind::Operator,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "AbCdEfGhIjKlMnOpQrStUvWxYz012345";

    #[test]
    fn round_trip() {
        let key = format_key(KeyKind::Provider, None, "abc123def456", SECRET);
        let parsed = parse_key(&key).expect("parses");
        assert_eq!(parsed.kind, KeyKind::Provider);
        assert_eq!(parsed.environment, None);
        assert_eq!(parsed.prefix, "rfs_prv_abc123def456");
        assert_eq!(parsed.secret, SECRET);
    }

    #[test]
    fn restricted_keys_round_trip() {
        for (env, marker) in [
            (Environment::Sandbox, "test"),
            (Environment::Production, "live"),
        ] {
            for kind in [KeyKind::Provider, KeyKind::Client] {
                let key = format_key(kind, Some(env), "abc123def456", SECRET);
                let prefix = format!("rfs_{}_{marker}_abc123def456", kind.tag());
                assert_eq!(key, format!("{prefix}_{SECRET}"));
                let parsed = parse_key(&key).expect("parses");
                assert_eq!(parsed.kind, kind);
                assert_eq!(parsed.environment, Some(env));
                assert_eq!(parsed.prefix, prefix);
                assert_eq!(parsed.secret, SECRET);
            }
        }
    }

    #[test]
    fn callers_see_their_environment() {
        let id = Uuid::nil();
        let open = Caller::Provider {
            company_id: id,
            environment: None,
        };
        let test = Caller::Client {
            company_id: id,
            provider_id: id,
            environment: Some(Environment::Sandbox),
        };
        let operator = Caller::Operator { operator_id: id };
        for env in [Environment::Sandbox, Environment::Production] {
            assert!(open.sees(env));
            assert!(operator.sees(env));
        }
        assert!(test.sees(Environment::Sandbox));
        assert!(!test.sees(Environment::Production));
        assert_eq!(test.environment(), Some(Environment::Sandbox));
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "",
            "rfs_",
            "rfs_xxx_abc123def456_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
            "rfs_prv_abc123def45_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
            "rfs_prv_ABC123DEF456_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
            "rfs_prv_abc123def456_AbCdEfGhIjKlMnOpQrStUvWxYz01234",
            "rfs_prv_abc123def456_AbCdEfGhIjKlMnOpQrStUvWxYz01234!",
            "xfs_prv_abc123def456_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
            "rfs_prv_abc123def456_AbCdEfGhIjKlMnOpQrStUvWxYz0123456",
            // Markers: only `test` and `live`, once, never for an operator.
            "rfs_prv_beta_abc123def456_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
            "rfs_prv_test_live_abc123def456_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
            "rfs_prv_test__AbCdEfGhIjKlMnOpQrStUvWxYz012345",
            "rfs_opr_test_abc123def456_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
            "rfs_prv_TEST_abc123def456_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        ] {
            assert_eq!(parse_key(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn kinds_round_trip() {
        for k in [KeyKind::Provider, KeyKind::Client, KeyKind::Operator] {
            assert_eq!(KeyKind::from_tag(k.tag()), Some(k));
            assert_eq!(KeyKind::parse(k.as_str()), Some(k));
        }
    }
}

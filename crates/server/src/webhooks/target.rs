//! Which webhook targets are allowed: http(s) URLs whose addresses are public, unless the
//! configuration allows private ones. Checked when an endpoint is registered and again on every
//! delivery, through a DNS resolver that drops private addresses (a name that resolved to a
//! public address yesterday may resolve to 127.0.0.1 today).

use std::net::{IpAddr, SocketAddr};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

pub use super::address::is_public;

pub use crate::dns::Lookup;

/// The longest target URL accepted.
pub const MAX_URL_LEN: usize = 2048;

/// Why a target URL is refused.
pub fn check_url(raw: &str, allow_private: bool) -> Result<Url, String> {
    if raw.len() > MAX_URL_LEN {
        return Err(format!("must be at most {MAX_URL_LEN} characters"));
    }
    if raw.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("must not contain spaces or control characters".into());
    }
    let url = Url::parse(raw).map_err(|e| format!("is not an absolute URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("must be an http or https URL".into());
    }
    if url.fragment().is_some() {
        return Err("must not have a #fragment".into());
    }
    let Some(host) = url.host() else {
        return Err("must name a host".into());
    };
    if allow_private {
        return Ok(url);
    }
    let ip = match host {
        url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
        url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            if d == "localhost" || d.ends_with(".localhost") || !d.contains('.') {
                return Err(format!(
                    "must name a public host; {d:?} is local (private targets are not allowed here)"
                ));
            }
            None
        }
    };
    if let Some(ip) = ip
        && let Err(why) = super::address::check(ip)
    {
        return Err(format!(
            "must name a public address; {why} (private targets are not allowed here)"
        ));
    }
    Ok(url)
}

/// Refuses private literal addresses at delivery time (names go through [`PublicResolver`]).
pub fn check_literal(url: &Url, allow_private: bool) -> Result<(), String> {
    if allow_private {
        return Ok(());
    }
    let ip = match url.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
        _ => return Ok(()),
    };
    super::address::check(ip).map_err(|why| format!("refused: {why}"))
}

/// Resolves with [`Lookup`] and keeps only public addresses (or all when private targets are
/// allowed); a name with none left fails to resolve. The failure does not name the addresses
/// found: a provider reads it in its delivery log, and must not map internal DNS with it.
#[derive(Debug, Clone)]
pub struct PublicResolver {
    pub allow_private: bool,
    pub lookup: Lookup,
}

impl Resolve for PublicResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let lookup = self.lookup.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found = lookup.resolve(&host).await?;
            let kept: Vec<SocketAddr> = found
                .iter()
                .filter(|ip| allow_private || is_public(**ip))
                .map(|ip| SocketAddr::new(*ip, 0))
                .collect();
            if kept.is_empty() {
                return Err(format!("refused: {host} does not resolve to a public address").into());
            }
            let addrs: Addrs = Box::new(kept.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_urls() {
        assert!(check_url("https://hooks.example.com/filing", false).is_ok());
        assert!(check_url("http://8.8.8.8:8080/x?y=1", false).is_ok());
        for bad in [
            "ftp://example.com/x",
            "https://127.0.0.1/x",
            "http://[::1]:80/",
            "http://169.254.169.254/latest/meta-data",
            "http://localhost:3000/",
            "http://api.localhost/",
            "http://intranet/hook",
            "https://example.com/x#frag",
            "not a url",
            "/relative",
            "https://exa mple.com/",
        ] {
            assert!(check_url(bad, false).is_err(), "{bad}");
        }
        assert!(check_url("http://127.0.0.1:9/x", true).is_ok());
        assert!(check_url("ftp://127.0.0.1/x", true).is_err());
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_LEN));
        assert!(check_url(&long, false).is_err());
    }
}

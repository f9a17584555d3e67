//! Which webhook targets are allowed: http(s) URLs whose addresses are public, unless the
//! configuration allows private ones. Checked when an endpoint is registered and again on every
//! delivery, through a DNS resolver that drops private addresses (a name that resolved to a
//! public address yesterday may resolve to 127.0.0.1 today).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// The longest target URL accepted.
pub const MAX_URL_LEN: usize = 2048;

/// Whether `ip` is reachable on the public internet: not loopback, private, link-local,
/// shared (CGNAT), unspecified, broadcast, multicast, documentation or reserved.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            let seg0 = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (seg0 & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (seg0 & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (seg0 & 0xffc0) == 0xfec0 // site-local (deprecated)
                || seg0 == 0x2001 && v6.segments()[1] == 0x0db8 // documentation
                || seg0 == 0x0064 && v6.segments()[1] == 0xff9b // NAT64 (embeds IPv4)
                || v6.segments()[..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible
        }
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || o[0] == 0
        || (o[0] == 100 && (o[1] & 0xc0) == 64) // 100.64.0.0/10 shared address space
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // 192.0.0.0/24 protocol assignments
        || (o[0] == 198 && (o[1] & 0xfe) == 18) // 198.18.0.0/15 benchmarking
        || o[0] >= 240) // reserved
}

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
        && !is_public(ip)
    {
        return Err(format!(
            "must name a public address; {ip} is private, loopback or link-local (private targets are not allowed here)"
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
    if is_public(ip) {
        Ok(())
    } else {
        Err(format!("refused: {ip} is not a public address"))
    }
}

/// Resolves with the system resolver and keeps only public addresses (or all when private
/// targets are allowed); a name with none left fails to resolve.
#[derive(Debug, Clone, Copy)]
pub struct PublicResolver {
    pub allow_private: bool,
}

impl Resolve for PublicResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|a| allow_private || is_public(a.ip()))
                .collect();
            if kept.is_empty() {
                let shown: Vec<String> = found.iter().map(|a| a.ip().to_string()).collect();
                return Err(format!(
                    "refused: {host} resolves only to non-public addresses ({})",
                    shown.join(", ")
                )
                .into());
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
    fn classifies_addresses() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in [
            "8.8.8.8",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

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

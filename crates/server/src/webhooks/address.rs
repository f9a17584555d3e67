//! Whether an address is one a webhook may be sent to: decided by what the address is, per the
//! IANA special-purpose address registries, not by a list of bad prefixes.
//!
//! Sources (both registries as last updated 2025-10-09):
//! - IANA IPv4 Special-Purpose Address Registry,
//!   <https://www.iana.org/assignments/iana-ipv4-special-registry/>
//! - IANA IPv6 Special-Purpose Address Registry,
//!   <https://www.iana.org/assignments/iana-ipv6-special-registry/>
//! - IPv4 multicast 224.0.0.0/4 (RFC 5771) and the IPv6 global unicast range 2000::/3
//!   (IANA IPv6 Address Space registry, RFC 4291) for what lies outside those two.
//!
//! The rule (docs/adr/0002-webhook-targets-by-address-registry.md):
//! - an IPv4 address is allowed when its longest matching registry entry says "Globally
//!   Reachable: True", or when no entry matches and it is not multicast;
//! - an IPv6 address is allowed when its longest matching entry says True, or when no entry
//!   matches and it lies in 2000::/3 (everything else: multicast, IPv4-compatible, SIIT,
//!   unassigned space, is refused);
//! - entries whose reachability the registry gives as "N/A" because they carry an IPv4 address
//!   (6to4, Teredo) are judged by that address: allowed only when it is allowed itself. The
//!   well-known NAT64 prefix 64:ff9b::/96 (True) must also carry an allowed IPv4 address.
//! - "N/A" without an embedded address (192.88.99.0/24, 192.88.99.2/32) and False are refused.
//!   IPv4-mapped addresses (::ffff:0:0/96) are False in the registry and refused: a target
//!   that means an IPv4 address writes it as one.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

/// What the registry says about an entry's "Globally Reachable".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// True: allowed.
    Global,
    /// False, or N/A without an address to judge by: refused.
    Local,
    /// N/A (6to4, Teredo) or True with an embedded address (NAT64): judged by the IPv4
    /// address the IPv6 address carries.
    Embedded,
}

/// One registry entry.
#[derive(Debug, Clone)]
pub struct Entry<A> {
    pub base: A,
    pub len: u8,
    pub name: String,
    pub rfc: String,
    pub reach: Reach,
}

/// Both registries, every entry, as `data/iana-special-purpose-addresses.csv` holds them (its
/// header names the sources).
const REGISTRY: &str = include_str!("../../data/iana-special-purpose-addresses.csv");

/// The IANA IPv4 Special-Purpose Address Registry, every entry.
pub static IPV4_SPECIAL: LazyLock<Vec<Entry<u32>>> = LazyLock::new(|| {
    registry()
        .filter_map(|(ip, e)| match ip {
            IpAddr::V4(a) => Some(Entry {
                base: u32::from(a),
                len: e.len,
                name: e.name,
                rfc: e.rfc,
                reach: e.reach,
            }),
            IpAddr::V6(_) => None,
        })
        .collect()
});

/// The IANA IPv6 Special-Purpose Address Registry, every entry.
pub static IPV6_SPECIAL: LazyLock<Vec<Entry<u128>>> = LazyLock::new(|| {
    registry()
        .filter_map(|(ip, e)| match ip {
            IpAddr::V6(a) => Some(Entry {
                base: u128::from(a),
                len: e.len,
                name: e.name,
                rfc: e.rfc,
                reach: e.reach,
            }),
            IpAddr::V4(_) => None,
        })
        .collect()
});

/// The rows of [`REGISTRY`]: a block's address and its entry. The file is part of the build and
/// checked by the tests, so a row that does not read is a bug: it panics.
fn registry() -> impl Iterator<Item = (IpAddr, Entry<()>)> {
    let data: String = REGISTRY
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    let rows: Vec<csv::StringRecord> = csv::Reader::from_reader(data.as_bytes())
        .records()
        .collect::<Result<_, _>>()
        .expect("the address registry reads as CSV");
    rows.into_iter().map(|row| {
        let (block, len) = row[0].split_once('/').expect("a block with its length");
        let reach = match &row[3] {
            "Global" => Global,
            "Local" => Local,
            "Embedded" => Embedded,
            other => panic!("unknown reach {other:?}"),
        };
        let entry = Entry {
            base: (),
            len: len.parse().expect("a prefix length"),
            name: row[1].to_string(),
            rfc: row[2].to_string(),
            reach,
        };
        (block.parse().expect("an address"), entry)
    })
}

use Reach::{Embedded, Global, Local};

fn mask32(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len))
    }
}

fn mask128(len: u8) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(len))
    }
}

fn longest_v4(a: u32) -> Option<&'static Entry<u32>> {
    IPV4_SPECIAL
        .iter()
        .filter(|e| a & mask32(e.len) == e.base)
        .max_by_key(|e| e.len)
}

fn longest_v6(a: u128) -> Option<&'static Entry<u128>> {
    IPV6_SPECIAL
        .iter()
        .filter(|e| a & mask128(e.len) == e.base)
        .max_by_key(|e| e.len)
}

/// Why an address is refused, in words a caller may see when the address is the one they
/// wrote (never for an address a name resolved to: see [`super::target`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotPublic(pub String);

impl std::fmt::Display for NotPublic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `Ok` when a webhook may be sent to `ip`.
pub fn check(ip: IpAddr) -> Result<(), NotPublic> {
    match ip {
        IpAddr::V4(a) => check_v4(a),
        IpAddr::V6(a) => check_v6(a),
    }
}

/// Whether a webhook may be sent to `ip`.
pub fn is_public(ip: IpAddr) -> bool {
    check(ip).is_ok()
}

fn check_v4(ip: Ipv4Addr) -> Result<(), NotPublic> {
    if ip.is_multicast() {
        return Err(NotPublic(format!("{ip} is a multicast address (RFC 5771)")));
    }
    match longest_v4(u32::from(ip)) {
        Some(e) if e.reach != Global => Err(NotPublic(format!(
            "{ip} is in {}/{} ({}, {}), which is not globally reachable",
            Ipv4Addr::from(e.base),
            e.len,
            e.name,
            e.rfc
        ))),
        _ => Ok(()),
    }
}

/// The IPv4 addresses an address of an `Embedded` entry carries.
fn embedded(a: u128, e: &Entry<u128>) -> Vec<Ipv4Addr> {
    match e.name.as_str() {
        // RFC 3056: 2002:V4ADDR::/48.
        "6to4" => vec![Ipv4Addr::from((a >> 80) as u32)],
        // RFC 4380 section 4: server IPv4 in bits 32-63, the client's external IPv4
        // obfuscated (every bit inverted) in the last 32.
        "TEREDO" => vec![
            Ipv4Addr::from((a >> 64) as u32),
            Ipv4Addr::from(!(a as u32)),
        ],
        // RFC 6052: the /96 well-known prefix carries the IPv4 address in the last 32 bits.
        _ => vec![Ipv4Addr::from(a as u32)],
    }
}

fn check_v6(ip: Ipv6Addr) -> Result<(), NotPublic> {
    let a = u128::from(ip);
    match longest_v6(a) {
        Some(e) => match e.reach {
            Global => Ok(()),
            Local => Err(NotPublic(format!(
                "{ip} is in {}/{} ({}, {}), which is not globally reachable",
                Ipv6Addr::from(e.base),
                e.len,
                e.name,
                e.rfc
            ))),
            Embedded => {
                for inner in embedded(a, e) {
                    if let Err(NotPublic(why)) = check_v4(inner) {
                        return Err(NotPublic(format!(
                            "{ip} is {} ({}) carrying {inner}, and {why}",
                            e.name, e.rfc
                        )));
                    }
                }
                Ok(())
            }
        },
        None if a >> 125 == 0b001 => Ok(()),
        None => Err(NotPublic(format!(
            "{ip} is outside the global unicast range 2000::/3 (RFC 4291)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last4(e: &Entry<u32>) -> Ipv4Addr {
        Ipv4Addr::from(e.base | !mask32(e.len))
    }

    fn last6(e: &Entry<u128>) -> Ipv6Addr {
        Ipv6Addr::from(e.base | !mask128(e.len))
    }

    /// Each entry of the IPv4 registry at its first and last address, judged as the registry
    /// says, unless a longer entry inside it says otherwise for that address.
    #[test]
    fn every_ipv4_registry_entry() {
        assert_eq!(IPV4_SPECIAL.len(), 26);
        for e in IPV4_SPECIAL.iter() {
            for a in [Ipv4Addr::from(e.base), last4(e)] {
                let governing = longest_v4(u32::from(a)).unwrap();
                let want = governing.reach == Global;
                assert_eq!(is_public(a.into()), want, "{a} ({})", governing.name);
                if governing.base == e.base && governing.len == e.len {
                    assert_eq!(want, e.reach == Global, "{a} ({})", e.name);
                }
            }
        }
        // Spot checks of addresses whose answer follows from a longer entry.
        for (a, public) in [
            ("192.0.0.9", true),
            ("192.0.0.10", true),
            ("192.0.0.11", false),
            ("192.0.0.255", false),
            ("192.88.99.2", false),
            ("0.1.2.3", false),
            ("255.255.255.254", false),
        ] {
            assert_eq!(is_public(a.parse().unwrap()), public, "{a}");
        }
    }

    #[test]
    fn every_ipv6_registry_entry() {
        assert_eq!(IPV6_SPECIAL.len(), 25);
        for e in IPV6_SPECIAL.iter() {
            for a in [Ipv6Addr::from(e.base), last6(e)] {
                let governing = longest_v6(u128::from(a)).unwrap();
                let got = is_public(a.into());
                match governing.reach {
                    Global => assert!(got, "{a} ({})", governing.name),
                    Local => assert!(!got, "{a} ({})", governing.name),
                    // First address of each embeds 0.0.0.0; the last embeds 255.255.255.255
                    // (or, for Teredo, an inverted 0.0.0.0): none public.
                    Embedded => assert!(!got, "{a} ({})", governing.name),
                }
            }
        }
    }

    /// The addresses of the issue, and each embedding of a refused IPv4 entry.
    #[test]
    fn embedded_ipv4_is_judged() {
        for refused in [
            "2002:7f00:1::",      // 6to4 of 127.0.0.1
            "2002:a9fe:a9fe::",   // 6to4 of 169.254.169.254
            "::ffff:0:7f00:1",    // IPv4-translated (SIIT) 127.0.0.1
            "2001::",             // Teredo, server 0.0.0.0
            "100::1",             // discard-only
            "64:ff9b::7f00:1",    // NAT64 of 127.0.0.1
            "64:ff9b::a9fe:a9fe", // NAT64 of 169.254.169.254
            "64:ff9b:1::808:808", // local-use NAT64
            "::ffff:127.0.0.1",   // IPv4-mapped
            "::ffff:8.8.8.8",     // IPv4-mapped: False in the registry
            "::7f00:1",           // IPv4-compatible (deprecated)
            "::808:808",
            "ff02::1",
            "ff0e::1",
            "fec0::1",
            "4000::1",
            // Teredo with a public server and a client of 10.0.0.1 (inverted f5ff:fffe).
            "2001:0:808:808:0:0:f5ff:fffe",
            // Teredo with a loopback server.
            "2001:0:7f00:1:0:0:f7f7:f7f7",
        ] {
            let ip: IpAddr = refused.parse().unwrap();
            assert!(!is_public(ip), "{refused}");
        }
        for allowed in [
            "2606:4700:4700::1111",
            "2001:4860:4860::8888",
            "64:ff9b::808:808",
            "2002:808:808::1",
            // Teredo: server 8.8.8.8, client 1.1.1.1 (inverted fefe:fefe).
            "2001:0:808:808:0:0:fefe:fefe",
            "2001:1::1",
            "2620:4f:8000::1",
        ] {
            let ip: IpAddr = allowed.parse().unwrap();
            assert!(is_public(ip), "{allowed}");
        }
        // Each refused IPv4 entry inside each IPv6 form that carries it.
        for e in IPV4_SPECIAL.iter().filter(|e| e.reach != Global) {
            let n = u128::from(e.base);
            for a in [
                (0xffffu128 << 32) | n,
                (0x64_ff9bu128 << 96) | n,
                (0x2002u128 << 112) | (n << 80) | 1,
                (0x2001u128 << 112) | (n << 64) | u128::from(!0x0808_0808u32),
                n,
            ] {
                assert!(
                    !is_public(Ipv6Addr::from(a).into()),
                    "{} in {}",
                    Ipv4Addr::from(e.base),
                    Ipv6Addr::from(a)
                );
            }
        }
        for public in ["8.8.8.8", "1.1.1.1", "192.0.0.9"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
        for private in ["224.0.0.1", "233.252.0.1", "239.255.255.250"] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
    }

    #[test]
    fn reasons_name_the_entry() {
        let why = check("2002:7f00:1::".parse().unwrap()).unwrap_err().0;
        assert!(
            why.contains("6to4") && why.contains("127.0.0.1") && why.contains("Loopback"),
            "{why}"
        );
        let why = check("100::1".parse().unwrap()).unwrap_err().0;
        assert!(why.contains("Discard-Only"), "{why}");
    }
}

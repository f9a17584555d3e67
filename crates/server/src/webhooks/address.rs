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
#[derive(Debug, Clone, Copy)]
pub struct Entry<A> {
    pub base: A,
    pub len: u8,
    pub name: &'static str,
    pub rfc: &'static str,
    pub reach: Reach,
}

const fn v4(
    octets: [u8; 4],
    len: u8,
    name: &'static str,
    rfc: &'static str,
    reach: Reach,
) -> Entry<u32> {
    Entry {
        base: u32::from_be_bytes(octets),
        len,
        name,
        rfc,
        reach,
    }
}

const fn v6(
    segs: [u16; 8],
    len: u8,
    name: &'static str,
    rfc: &'static str,
    reach: Reach,
) -> Entry<u128> {
    let mut base: u128 = 0;
    let mut i = 0;
    while i < 8 {
        base = (base << 16) | segs[i] as u128;
        i += 1;
    }
    Entry {
        base,
        len,
        name,
        rfc,
        reach,
    }
}

use Reach::{Embedded, Global, Local};

/// The IANA IPv4 Special-Purpose Address Registry, every entry.
pub const IPV4_SPECIAL: &[Entry<u32>] = &[
    v4([0, 0, 0, 0], 8, "\"This network\"", "RFC 791", Local),
    v4(
        [0, 0, 0, 0],
        32,
        "\"This host on this network\"",
        "RFC 1122",
        Local,
    ),
    v4([10, 0, 0, 0], 8, "Private-Use", "RFC 1918", Local),
    v4(
        [100, 64, 0, 0],
        10,
        "Shared Address Space",
        "RFC 6598",
        Local,
    ),
    v4([127, 0, 0, 0], 8, "Loopback", "RFC 1122", Local),
    v4([169, 254, 0, 0], 16, "Link Local", "RFC 3927", Local),
    v4([172, 16, 0, 0], 12, "Private-Use", "RFC 1918", Local),
    v4(
        [192, 0, 0, 0],
        24,
        "IETF Protocol Assignments",
        "RFC 6890",
        Local,
    ),
    v4(
        [192, 0, 0, 0],
        29,
        "IPv4 Service Continuity Prefix",
        "RFC 7335",
        Local,
    ),
    v4([192, 0, 0, 8], 32, "IPv4 dummy address", "RFC 7600", Local),
    v4(
        [192, 0, 0, 9],
        32,
        "Port Control Protocol Anycast",
        "RFC 7723",
        Global,
    ),
    v4(
        [192, 0, 0, 10],
        32,
        "Traversal Using Relays around NAT Anycast",
        "RFC 8155",
        Global,
    ),
    v4(
        [192, 0, 0, 170],
        32,
        "NAT64/DNS64 Discovery",
        "RFC 7050",
        Local,
    ),
    v4(
        [192, 0, 0, 171],
        32,
        "NAT64/DNS64 Discovery",
        "RFC 7050",
        Local,
    ),
    v4(
        [192, 0, 2, 0],
        24,
        "Documentation (TEST-NET-1)",
        "RFC 5737",
        Local,
    ),
    v4([192, 31, 196, 0], 24, "AS112-v4", "RFC 7535", Global),
    v4([192, 52, 193, 0], 24, "AMT", "RFC 7450", Global),
    v4(
        [192, 88, 99, 0],
        24,
        "Deprecated (6to4 Relay Anycast)",
        "RFC 7526",
        Local,
    ),
    v4(
        [192, 88, 99, 2],
        32,
        "6a44-relay anycast address",
        "RFC 6751",
        Local,
    ),
    v4([192, 168, 0, 0], 16, "Private-Use", "RFC 1918", Local),
    v4(
        [192, 175, 48, 0],
        24,
        "Direct Delegation AS112 Service",
        "RFC 7534",
        Global,
    ),
    v4([198, 18, 0, 0], 15, "Benchmarking", "RFC 2544", Local),
    v4(
        [198, 51, 100, 0],
        24,
        "Documentation (TEST-NET-2)",
        "RFC 5737",
        Local,
    ),
    v4(
        [203, 0, 113, 0],
        24,
        "Documentation (TEST-NET-3)",
        "RFC 5737",
        Local,
    ),
    v4([240, 0, 0, 0], 4, "Reserved", "RFC 1112", Local),
    v4(
        [255, 255, 255, 255],
        32,
        "Limited Broadcast",
        "RFC 8190",
        Local,
    ),
];

/// The IANA IPv6 Special-Purpose Address Registry, every entry.
pub const IPV6_SPECIAL: &[Entry<u128>] = &[
    v6(
        [0, 0, 0, 0, 0, 0, 0, 1],
        128,
        "Loopback Address",
        "RFC 4291",
        Local,
    ),
    v6(
        [0, 0, 0, 0, 0, 0, 0, 0],
        128,
        "Unspecified Address",
        "RFC 4291",
        Local,
    ),
    v6(
        [0, 0, 0, 0, 0, 0xffff, 0, 0],
        96,
        "IPv4-mapped Address",
        "RFC 4291",
        Local,
    ),
    v6(
        [0x64, 0xff9b, 0, 0, 0, 0, 0, 0],
        96,
        "IPv4-IPv6 Translat.",
        "RFC 6052",
        Embedded,
    ),
    v6(
        [0x64, 0xff9b, 1, 0, 0, 0, 0, 0],
        48,
        "IPv4-IPv6 Translat. (local use)",
        "RFC 8215",
        Local,
    ),
    v6(
        [0x100, 0, 0, 0, 0, 0, 0, 0],
        64,
        "Discard-Only Address Block",
        "RFC 6666",
        Local,
    ),
    v6(
        [0x100, 0, 0, 1, 0, 0, 0, 0],
        64,
        "Dummy IPv6 Prefix",
        "RFC 9780",
        Local,
    ),
    v6(
        [0x2001, 0, 0, 0, 0, 0, 0, 0],
        23,
        "IETF Protocol Assignments",
        "RFC 2928",
        Local,
    ),
    v6(
        [0x2001, 0, 0, 0, 0, 0, 0, 0],
        32,
        "TEREDO",
        "RFC 4380",
        Embedded,
    ),
    v6(
        [0x2001, 1, 0, 0, 0, 0, 0, 1],
        128,
        "Port Control Protocol Anycast",
        "RFC 7723",
        Global,
    ),
    v6(
        [0x2001, 1, 0, 0, 0, 0, 0, 2],
        128,
        "Traversal Using Relays around NAT Anycast",
        "RFC 8155",
        Global,
    ),
    v6(
        [0x2001, 1, 0, 0, 0, 0, 0, 3],
        128,
        "DNS-SD Service Registration Protocol Anycast",
        "RFC 9665",
        Global,
    ),
    v6(
        [0x2001, 2, 0, 0, 0, 0, 0, 0],
        48,
        "Benchmarking",
        "RFC 5180",
        Local,
    ),
    v6([0x2001, 3, 0, 0, 0, 0, 0, 0], 32, "AMT", "RFC 7450", Global),
    v6(
        [0x2001, 4, 0x112, 0, 0, 0, 0, 0],
        48,
        "AS112-v6",
        "RFC 7535",
        Global,
    ),
    v6(
        [0x2001, 0x10, 0, 0, 0, 0, 0, 0],
        28,
        "Deprecated (previously ORCHID)",
        "RFC 4843",
        Local,
    ),
    v6(
        [0x2001, 0x20, 0, 0, 0, 0, 0, 0],
        28,
        "ORCHIDv2",
        "RFC 7343",
        Global,
    ),
    v6(
        [0x2001, 0x30, 0, 0, 0, 0, 0, 0],
        28,
        "Drone Remote ID Protocol Entity Tags (DETs) Prefix",
        "RFC 9374",
        Global,
    ),
    v6(
        [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0],
        32,
        "Documentation",
        "RFC 3849",
        Local,
    ),
    v6(
        [0x2002, 0, 0, 0, 0, 0, 0, 0],
        16,
        "6to4",
        "RFC 3056",
        Embedded,
    ),
    v6(
        [0x2620, 0x4f, 0x8000, 0, 0, 0, 0, 0],
        48,
        "Direct Delegation AS112 Service",
        "RFC 7534",
        Global,
    ),
    v6(
        [0x3fff, 0, 0, 0, 0, 0, 0, 0],
        20,
        "Documentation",
        "RFC 9637",
        Local,
    ),
    v6(
        [0x5f00, 0, 0, 0, 0, 0, 0, 0],
        16,
        "Segment Routing (SRv6) SIDs",
        "RFC 9602",
        Local,
    ),
    v6(
        [0xfc00, 0, 0, 0, 0, 0, 0, 0],
        7,
        "Unique-Local",
        "RFC 4193",
        Local,
    ),
    v6(
        [0xfe80, 0, 0, 0, 0, 0, 0, 0],
        10,
        "Link-Local Unicast",
        "RFC 4291",
        Local,
    ),
];

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
    match e.name {
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
        for e in IPV4_SPECIAL {
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
        for e in IPV6_SPECIAL {
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

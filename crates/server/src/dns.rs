//! How the service resolves the host names it sends requests to (webhook targets): the system
//! resolver, or a fixed table. Its own module, so that the configuration can hold it without
//! importing the webhook code that uses it.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

/// How host names of targets are resolved: the system resolver, or a fixed table (tests, and
/// set-ups that pin their receivers' addresses; not settable from the environment).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Lookup {
    #[default]
    System,
    Fixed(Arc<BTreeMap<String, Vec<IpAddr>>>),
}

impl Lookup {
    /// A fixed table of names and their addresses.
    pub fn fixed<'a>(entries: impl IntoIterator<Item = (&'a str, &'a [&'a str])>) -> Self {
        let table = entries
            .into_iter()
            .map(|(name, addrs)| {
                let addrs = addrs
                    .iter()
                    .map(|a| a.parse().expect("an IP address"))
                    .collect();
                (name.to_ascii_lowercase(), addrs)
            })
            .collect();
        Lookup::Fixed(Arc::new(table))
    }

    /// The addresses of `host`.
    pub async fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        match self {
            Lookup::System => Ok(tokio::net::lookup_host((host, 0))
                .await?
                .map(|a| a.ip())
                .collect()),
            Lookup::Fixed(table) => {
                let key = host.trim_end_matches('.').to_ascii_lowercase();
                table.get(&key).cloned().ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::NotFound, "no such host")
                })
            }
        }
    }
}

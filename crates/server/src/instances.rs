//! The instances of one deployment know each other through the database (issue 53,
//! docs/operations.md "Running N instances", docs/adr/0032-instances-share-the-database.md):
//! each says every [`HEARTBEAT`] that it is alive and counts the instances that did within
//! [`LIVE_FOR`]; the per-tenant limits (a company's rate, a provider's upload slots and reads)
//! are divided by that count, so N instances behind a round-robin load balancer allow a tenant
//! what one would. This module holds what the state keeps of it ([`Instances`]); the loop that
//! beats and prunes is [`crate::jobs`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use uuid::Uuid;

/// How often an instance says it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(5);
/// An instance not heard of for this long is no longer counted.
pub const LIVE_FOR: Duration = Duration::from_secs(15);
/// This instance and the instances alive as last counted.
pub struct Instances {
    pub id: Uuid,
    live: AtomicUsize,
}

impl Default for Instances {
    fn default() -> Self {
        Self {
            id: Uuid::now_v7(),
            live: AtomicUsize::new(1),
        }
    }
}

impl Instances {
    /// The instances alive (at least this one).
    pub fn live(&self) -> usize {
        self.live.load(Ordering::Relaxed).max(1)
    }

    pub fn set_live(&self, n: usize) {
        self.live.store(n.max(1), Ordering::Relaxed);
    }
}

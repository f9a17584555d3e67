//! The counters behind the limits, which the application state holds: the upload slots per
//! provider and the token buckets per company. The layers that use them are in the parent
//! module.

use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

use crate::config::RateLimit;

/// The upload slots each provider holds (a provider with its client companies), for the
/// share each may hold at most: so one provider's slow uploads never take the slots another
/// provider's upload needs.
pub struct UploadShares {
    share: usize,
    held: std::sync::Mutex<std::collections::HashMap<uuid::Uuid, usize>>,
}

/// One slot of a provider's share, given back when dropped.
pub struct ShareGuard<'a> {
    shares: &'a UploadShares,
    provider: uuid::Uuid,
}

impl UploadShares {
    pub fn new(share: usize) -> Self {
        Self {
            share,
            held: Default::default(),
        }
    }

    /// One more slot for `provider`, unless it holds its share already.
    pub fn take(&self, provider: uuid::Uuid) -> Option<ShareGuard<'_>> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let n = held.entry(provider).or_insert(0);
        if *n >= self.share {
            return None;
        }
        *n += 1;
        Some(ShareGuard {
            shares: self,
            provider,
        })
    }

    /// Slots `provider` holds now.
    pub fn held_by(&self, provider: uuid::Uuid) -> usize {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.get(&provider).copied().unwrap_or(0)
    }
}

impl Drop for ShareGuard<'_> {
    fn drop(&mut self) {
        let mut held = self.shares.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = held.get_mut(&self.provider) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.provider);
            }
        }
    }
}

/// A token bucket per company (GCRA, `governor`), which every key of the company shares, so
/// issuing more keys buys no more requests (docs/adr/0004-keys-limited-per-company.md); an
/// operator's keys share the operator's bucket. `burst` requests at once, refilled at
/// `per_second`. Buckets not used for a while are dropped now and then, so the map holds only
/// recently active companies (and only ones with valid keys: it sits after authentication).
pub struct KeyRateLimiter {
    limiter: DefaultKeyedRateLimiter<uuid::Uuid>,
    clock: DefaultClock,
    last_sweep: std::sync::Mutex<Instant>,
}

/// How often idle buckets are swept out of the map.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

impl KeyRateLimiter {
    pub fn new(limit: RateLimit) -> Self {
        let quota = Quota::per_second(limit.per_second).allow_burst(limit.burst);
        let clock = DefaultClock::default();
        Self {
            limiter: governor::RateLimiter::dashmap_with_clock(quota, clock.clone()),
            clock,
            last_sweep: std::sync::Mutex::new(Instant::now()),
        }
    }

    /// Takes a token from the bucket of `owner` (a company or an operator); when there is
    /// none, `Err` with the whole seconds (at least 1) until there is.
    pub fn check(&self, owner: uuid::Uuid) -> Result<(), u64> {
        self.sweep_now_and_then();
        match self.limiter.check_key(&owner) {
            Ok(()) => Ok(()),
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.clock.now());
                Err(wait.as_secs_f64().ceil().max(1.0) as u64)
            }
        }
    }

    /// Companies and operators with a bucket right now.
    pub fn tracked_keys(&self) -> usize {
        self.limiter.len()
    }

    fn sweep_now_and_then(&self) {
        let Ok(mut last) = self.last_sweep.try_lock() else {
            return;
        };
        if last.elapsed() < SWEEP_EVERY {
            return;
        }
        *last = Instant::now();
        self.sweep();
    }

    /// Drops the buckets that are full again (the same as no bucket) and frees their memory.
    fn sweep(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }
}

/// The rate limiter of a configuration, or `None` when limiting is off.
pub fn rate_limiter(limit: Option<RateLimit>) -> Option<KeyRateLimiter> {
    limit.map(KeyRateLimiter::new)
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use super::*;

    fn limiter(per_second: u32, burst: u32) -> KeyRateLimiter {
        KeyRateLimiter::new(RateLimit {
            per_second: NonZeroU32::new(per_second).unwrap(),
            burst: NonZeroU32::new(burst).unwrap(),
        })
    }

    #[test]
    fn burst_then_whole_seconds_to_wait() {
        let (a, b) = (uuid::Uuid::now_v7(), uuid::Uuid::now_v7());
        let l = limiter(1, 2);
        assert_eq!(l.check(a), Ok(()));
        assert_eq!(l.check(a), Ok(()));
        assert_eq!(l.check(a), Err(1));
        assert_eq!(l.check(b), Ok(()));
        // One token every 10 s: the wait is rounded up, never 0.
        let slow = KeyRateLimiter {
            limiter: governor::RateLimiter::dashmap(
                Quota::with_period(Duration::from_secs(10)).unwrap(),
            ),
            clock: DefaultClock::default(),
            last_sweep: std::sync::Mutex::new(Instant::now()),
        };
        assert_eq!(slow.check(a), Ok(()));
        assert!(matches!(slow.check(a), Err(9..=10)));
    }

    #[test]
    fn idle_keys_are_swept() {
        let l = limiter(1000, 1);
        for _ in 0..3 {
            assert_eq!(l.check(uuid::Uuid::now_v7()), Ok(()));
        }
        assert_eq!(l.tracked_keys(), 3);
        std::thread::sleep(Duration::from_millis(20));
        l.sweep();
        assert_eq!(l.tracked_keys(), 0);
    }
}

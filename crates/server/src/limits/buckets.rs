//! The counters behind the limits, which the application state holds: the upload slots per
//! provider and the token buckets per company. The layers that use them are in the parent
//! module.

use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

use crate::config::RateLimit;

/// The upload slots of the instance and who holds them (issue 52.4): work-conserving and fair.
/// A provider (with its client companies; an operator counts as one) takes any free slot
/// while it holds fewer than `cap` and more than `reserve` slots (plus one per newcomer waiting)
/// stay free; one holding none takes any free slot. When none is free, a newcomer takes one
/// from the provider holding the most (at least two): that provider's newest upload is ended
/// with 503 and `Retry-After` and its slot goes to the newcomer within a moment. So one
/// provider alone may use every slot, and a new provider is always served within seconds while
/// any provider holds two (docs/operations.md, "Upload slots"; docs/adr/0031-tenant-fairness.md).
pub struct UploadSlots {
    total: usize,
    reserve: usize,
    cap: usize,
    /// Instances alive: a provider's cap is divided among them (issue 53.3).
    instances: std::sync::atomic::AtomicUsize,
    held: std::sync::Mutex<Held>,
    freed: tokio::sync::Notify,
}

#[derive(Default)]
struct Held {
    in_use: usize,
    next_id: u64,
    /// Newcomers waiting for a slot freed for them.
    waiting: usize,
    by: std::collections::HashMap<uuid::Uuid, Vec<Slot>>,
}

struct Slot {
    id: u64,
    end: tokio_util::sync::CancellationToken,
}

/// Why [`UploadSlots::take`] gave no slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotRefusal {
    /// The caller holds `held` slots already and may not take more now (429).
    OwnShare { held: usize },
    /// Every slot is taken (503).
    Full,
}

/// One slot, given back when dropped. [`SlotGuard::ended`] resolves when the slot is taken
/// for a newcomer.
pub struct SlotGuard<'a> {
    slots: &'a UploadSlots,
    owner: uuid::Uuid,
    id: u64,
    end: tokio_util::sync::CancellationToken,
}

impl SlotGuard<'_> {
    /// Resolves when this upload must give its slot to another provider's.
    pub async fn ended(&self) {
        self.end.cancelled().await
    }
}

impl UploadSlots {
    /// `total` slots, `reserve` of them kept free for providers holding none, at most `cap`
    /// for one.
    pub fn new(total: usize, reserve: usize, cap: usize) -> Self {
        Self {
            total,
            reserve: reserve.min(total.saturating_sub(1)),
            cap: cap.clamp(1, total.max(1)),
            instances: std::sync::atomic::AtomicUsize::new(1),
            held: Default::default(),
            freed: tokio::sync::Notify::new(),
        }
    }

    /// One more slot for `owner` now, or why not.
    pub fn take(&self, owner: uuid::Uuid) -> Result<SlotGuard<'_>, SlotRefusal> {
        let mut h = self.held.lock().unwrap_or_else(|e| e.into_inner());
        self.take_locked(&mut h, owner, false)
    }

    fn take_locked(
        &self,
        h: &mut Held,
        owner: uuid::Uuid,
        newcomer_waiting: bool,
    ) -> Result<SlotGuard<'_>, SlotRefusal> {
        let free = self.total.saturating_sub(h.in_use);
        let held = h.by.get(&owner).map_or(0, Vec::len);
        // Slots freed for waiting newcomers are theirs.
        let others_waiting = h.waiting.saturating_sub(usize::from(newcomer_waiting));
        let allowed = if held == 0 {
            free > others_waiting
        } else if held >= self.cap_here() {
            false
        } else {
            let fair = self.total.div_ceil(h.by.len().max(1));
            let keep = if held < fair {
                self.reserve
            } else {
                2 * self.reserve
            };
            free > keep + others_waiting
        };
        if !allowed {
            return Err(if free == 0 {
                SlotRefusal::Full
            } else {
                SlotRefusal::OwnShare { held }
            });
        }
        h.in_use += 1;
        h.next_id += 1;
        let (id, end) = (h.next_id, tokio_util::sync::CancellationToken::new());
        h.by.entry(owner).or_default().push(Slot {
            id,
            end: end.clone(),
        });
        Ok(SlotGuard {
            slots: self,
            owner,
            id,
            end,
        })
    }

    /// A slot for `owner`: at once if one may be taken; for a provider holding none while
    /// every slot is taken, the newest upload of the provider holding the most (two or more)
    /// is ended and its slot taken, waiting at most `wait` for it.
    pub async fn acquire(
        &self,
        owner: uuid::Uuid,
        wait: Duration,
    ) -> Result<SlotGuard<'_>, SlotRefusal> {
        {
            let mut h = self.held.lock().unwrap_or_else(|e| e.into_inner());
            match self.take_locked(&mut h, owner, false) {
                Err(SlotRefusal::Full) if !h.by.contains_key(&owner) => {
                    if !Self::end_one(&mut h) {
                        return Err(SlotRefusal::Full);
                    }
                    h.waiting += 1;
                }
                other => return other,
            }
        }
        let deadline = tokio::time::Instant::now() + wait;
        let got = loop {
            let notified = self.freed.notified();
            {
                let mut h = self.held.lock().unwrap_or_else(|e| e.into_inner());
                if let Ok(slot) = self.take_locked(&mut h, owner, true) {
                    h.waiting = h.waiting.saturating_sub(1);
                    break Ok(slot);
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                break Err(SlotRefusal::Full);
            }
        };
        if got.is_err() {
            let mut h = self.held.lock().unwrap_or_else(|e| e.into_inner());
            h.waiting = h.waiting.saturating_sub(1);
        }
        got
    }

    /// Ends the newest upload, not ended yet, of the provider holding the most slots (at least
    /// two not ended): `false` when there is none such.
    fn end_one(h: &mut Held) -> bool {
        let live = |slots: &Vec<Slot>| slots.iter().filter(|s| !s.end.is_cancelled()).count();
        let Some(slots) =
            h.by.values()
                .filter(|s| live(s) >= 2)
                .max_by_key(|s| live(s))
        else {
            return false;
        };
        match slots.iter().rev().find(|s| !s.end.is_cancelled()) {
            Some(newest) => {
                newest.end.cancel();
                true
            }
            None => false,
        }
    }

    /// Slots `owner` holds now.
    pub fn held_by(&self, owner: uuid::Uuid) -> usize {
        let h = self.held.lock().unwrap_or_else(|e| e.into_inner());
        h.by.get(&owner).map_or(0, Vec::len)
    }

    /// The instances alive now (each allows a provider its share of the cap).
    pub fn set_instances(&self, n: usize) {
        self.instances
            .store(n.max(1), std::sync::atomic::Ordering::Relaxed);
    }

    /// The most one provider may hold on this instance: the cap divided among the instances.
    pub fn cap_here(&self) -> usize {
        let n = self
            .instances
            .load(std::sync::atomic::Ordering::Relaxed)
            .max(1);
        (self.cap / n).max(1)
    }

    /// Slots in use now, and the providers holding them.
    pub fn in_use(&self) -> (usize, usize) {
        let h = self.held.lock().unwrap_or_else(|e| e.into_inner());
        (h.in_use, h.by.len())
    }

    pub fn total(&self) -> usize {
        self.total
    }
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        {
            let mut h = self.slots.held.lock().unwrap_or_else(|e| e.into_inner());
            h.in_use = h.in_use.saturating_sub(1);
            if let Some(slots) = h.by.get_mut(&self.owner) {
                slots.retain(|s| s.id != self.id);
                if slots.is_empty() {
                    h.by.remove(&self.owner);
                }
            }
        }
        self.slots.freed.notify_waiters();
    }
}

/// The requests that read the database one provider (with its client companies; an operator
/// as one) may have in flight at once, so that one tenant's costly lists never take every
/// read connection another tenant's plain GET needs (issue 52.3). Beyond the cap a request
/// waits its turn (first come, first served) without holding a connection.
pub struct ReadCaps {
    per: usize,
    /// Instances alive: the cap is divided among them (issue 53.3).
    instances: std::sync::atomic::AtomicUsize,
    held: std::sync::Mutex<
        std::collections::HashMap<uuid::Uuid, std::sync::Arc<tokio::sync::Semaphore>>,
    >,
}

impl ReadCaps {
    pub fn new(per: usize) -> Self {
        Self {
            per: per.max(1),
            instances: std::sync::atomic::AtomicUsize::new(1),
            held: Default::default(),
        }
    }

    /// A read slot of `owner`, waiting at most `wait` for one; `None` after it.
    pub async fn take(
        &self,
        owner: uuid::Uuid,
        wait: Duration,
    ) -> Option<tokio::sync::OwnedSemaphorePermit> {
        let semaphore = {
            let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
            if held.len() > 10_000 {
                // Those nobody holds or waits for.
                held.retain(|_, s| std::sync::Arc::strong_count(s) > 1);
            }
            held.entry(owner)
                .or_insert_with(|| std::sync::Arc::new(tokio::sync::Semaphore::new(self.per)))
                .clone()
        };
        // With N instances each allows `per / N` (at least one): a read takes `per` divided by
        // that many permits.
        let n = self
            .instances
            .load(std::sync::atomic::Ordering::Relaxed)
            .max(1);
        let here = (self.per / n).max(1);
        let permits = u32::try_from(self.per / here).unwrap_or(1);
        match semaphore.clone().try_acquire_many_owned(permits) {
            Ok(permit) => Some(permit),
            Err(_) => tokio::time::timeout(wait, semaphore.acquire_many_owned(permits))
                .await
                .ok()
                .and_then(Result::ok),
        }
    }

    /// Reads `owner` has in flight now.
    pub fn in_flight(&self, owner: uuid::Uuid) -> usize {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.get(&owner)
            .map_or(0, |s| self.per.saturating_sub(s.available_permits()))
    }

    pub fn per(&self) -> usize {
        self.per
    }

    /// The instances alive now.
    pub fn set_instances(&self, n: usize) {
        self.instances
            .store(n.max(1), std::sync::atomic::Ordering::Relaxed);
    }
}

/// A token bucket per company (GCRA, `governor`), which every key of the company shares, so
/// issuing more keys buys no more requests (docs/adr/0004-keys-limited-per-company.md); an
/// operator's keys share the operator's bucket. `burst` requests at once, refilled at
/// `per_second`. Buckets not used for a while are dropped now and then, so the map holds only
/// recently active companies (and only ones with valid keys: it sits after authentication).
pub struct KeyRateLimiter<K: std::hash::Hash + Eq + Clone = uuid::Uuid> {
    limiter: DefaultKeyedRateLimiter<K>,
    clock: DefaultClock,
    last_sweep: std::sync::Mutex<Instant>,
    burst: u32,
}

/// How often idle buckets are swept out of the map.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

impl<K: std::hash::Hash + Eq + Clone> KeyRateLimiter<K> {
    pub fn new(limit: RateLimit) -> Self {
        Self::with_quota(
            Quota::per_second(limit.per_second).allow_burst(limit.burst),
            limit.burst.get(),
        )
    }

    /// `limit.per_second` read as per minute: the buckets of client addresses.
    pub fn per_minute(limit: RateLimit) -> Self {
        Self::with_quota(
            Quota::per_minute(limit.per_second).allow_burst(limit.burst),
            limit.burst.get(),
        )
    }

    fn with_quota(quota: Quota, burst: u32) -> Self {
        let clock = DefaultClock::default();
        Self {
            limiter: governor::RateLimiter::dashmap_with_clock(quota, clock.clone()),
            clock,
            last_sweep: std::sync::Mutex::new(Instant::now()),
            burst,
        }
    }

    /// Takes a token from the bucket of `owner` (a company or an operator); when there is
    /// none, `Err` with the whole seconds (at least 1) until there is.
    pub fn check(&self, owner: K) -> Result<(), u64> {
        self.check_n(owner, 1)
    }

    /// Takes `cost` tokens at once (a costly request; at most the burst, so that every
    /// request can be served from a full bucket), or none, and `Err` with the seconds until
    /// there are that many.
    pub fn check_n(&self, owner: K, cost: u32) -> Result<(), u64> {
        self.sweep_now_and_then();
        let n = std::num::NonZeroU32::new(cost.clamp(1, self.burst.max(1)))
            .unwrap_or(std::num::NonZeroU32::MIN);
        match self.limiter.check_key_n(&owner, n) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(not_until)) => {
                let wait = not_until.wait_time_from(self.clock.now());
                Err(wait.as_secs_f64().ceil().max(1.0) as u64)
            }
            // More than the burst: never, as clamped; counted as one second's wait.
            Err(_) => Err(1),
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

    #[test]
    fn costly_requests_take_more_tokens_never_more_than_the_burst() {
        let a = uuid::Uuid::now_v7();
        let l = limiter(1, 10);
        assert_eq!(l.check_n(a, 6), Ok(()));
        assert!(l.check_n(a, 6).is_err(), "4 tokens are left");
        assert_eq!(l.check_n(a, 4), Ok(()));
        // A cost above the burst is the burst: a full bucket serves it.
        let b = uuid::Uuid::now_v7();
        assert_eq!(l.check_n(b, 1000), Ok(()));
        assert!(l.check(b).is_err());
    }

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
            burst: 1,
        };
        assert_eq!(slow.check(a), Ok(()));
        assert!(matches!(slow.check(a), Err(9..=10)));
    }

    #[test]
    fn slots_are_work_conserving_and_keep_a_reserve() {
        // 16 slots, 2 kept for newcomers, no cap below 14.
        let slots = UploadSlots::new(16, 2, 14);
        let ids: Vec<_> = (0..6).map(|_| uuid::Uuid::now_v7()).collect();
        // Alone, a provider uses all but the reserve.
        let mut alone = Vec::new();
        while let Ok(g) = slots.take(ids[0]) {
            alone.push(g);
        }
        assert_eq!(alone.len(), 14);
        assert_eq!(
            slots.take(ids[0]).err(),
            Some(SlotRefusal::OwnShare { held: 14 })
        );
        // Two newcomers get the reserve at once; with every slot taken the answer is 503.
        let b = slots.take(ids[1]).expect("a newcomer is served");
        let _c = slots.take(ids[2]).expect("a second newcomer too");
        assert_eq!(slots.take(ids[3]).err(), Some(SlotRefusal::Full));
        // As the first provider's uploads end, the slots go to the others first.
        alone.pop();
        assert_eq!(
            slots.take(ids[0]).err(),
            Some(SlotRefusal::OwnShare { held: 13 })
        );
        assert_eq!(
            slots.take(ids[1]).err(),
            Some(SlotRefusal::OwnShare { held: 1 })
        );
        let _d = slots
            .take(ids[3])
            .expect("the third newcomer takes the freed slot");
        drop(b);
    }

    #[tokio::test]
    async fn a_newcomer_takes_a_slot_from_the_provider_holding_most() {
        // No reserve: fully work-conserving.
        let slots = UploadSlots::new(4, 0, 4);
        let (a, b, c) = (
            uuid::Uuid::now_v7(),
            uuid::Uuid::now_v7(),
            uuid::Uuid::now_v7(),
        );
        let mut held = Vec::new();
        while let Ok(g) = slots.take(a) {
            held.push(g);
        }
        assert_eq!(held.len(), 4, "alone, every slot");
        // B finds none free: A's newest upload is told to end; B waits for its slot.
        let waiting = slots.acquire(b, Duration::from_secs(5));
        tokio::pin!(waiting);
        assert!(futures::poll!(&mut waiting).is_pending());
        let newest = held.pop().unwrap();
        assert!(
            newest.end.is_cancelled(),
            "the newest of A's uploads was ended"
        );
        assert!(held.iter().all(|g| !g.end.is_cancelled()));
        // A may not take the freed slot back: it is B's.
        drop(newest);
        assert_eq!(slots.take(a).err(), Some(SlotRefusal::OwnShare { held: 3 }));
        let got_b = waiting.await.expect("B got the freed slot");
        assert_eq!(slots.held_by(b), 1);
        // A provider holding one is never ended for a newcomer: C is refused.
        let one = UploadSlots::new(2, 0, 2);
        let _x = one.take(a).unwrap();
        let _y = one.take(b).unwrap();
        assert_eq!(
            one.acquire(c, Duration::from_millis(50)).await.err(),
            Some(SlotRefusal::Full)
        );
        drop(got_b);
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

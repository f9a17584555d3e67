//! One lock per case, for work of this instance that reads a case, renders documents from the
//! read and writes them back (the assignment of a trade office): such work on one case runs
//! one at a time instead of racing to a write that only one of them may make. Other instances
//! are kept out by the write's own guard ([`store::TradeCaseGuard`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use uuid::Uuid;

type CaseMutex = Arc<tokio::sync::Mutex<()>>;

/// The locks of the cases being worked on; a case's entry lives while someone holds or awaits it.
#[derive(Default)]
pub struct CaseLocks {
    held: Mutex<HashMap<Uuid, CaseMutex>>,
}

/// Holds a case's lock until dropped.
pub struct CaseLock<'a> {
    locks: &'a CaseLocks,
    id: Uuid,
    mutex: CaseMutex,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl CaseLocks {
    /// Waits for case `id`'s lock.
    pub async fn lock(&self, id: Uuid) -> CaseLock<'_> {
        let mutex = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(id)
            .or_default()
            .clone();
        let guard = mutex.clone().lock_owned().await;
        CaseLock {
            locks: self,
            id,
            mutex,
            guard: Some(guard),
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.held.lock().unwrap().len()
    }
}

impl Drop for CaseLock<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut held = self
            .locks
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // The map's reference and this one: nobody else holds or awaits the case.
        if Arc::strong_count(&self.mutex) == 2 {
            held.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn one_holder_per_case_and_nothing_kept_after() {
        let locks = Arc::new(CaseLocks::default());
        let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
        let inside = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (locks, inside, most) = (locks.clone(), inside.clone(), most.clone());
                tokio::spawn(async move {
                    let _held = locks.lock(a).await;
                    let now = inside.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                    most.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    inside.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                })
            })
            .collect();
        // Another case is not held up by the first.
        let other = tokio::time::timeout(Duration::from_secs(1), locks.lock(b)).await;
        assert!(other.is_ok());
        drop(other);
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(most.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(locks.len(), 0, "entries go with their last holder");
    }
}

//! Records read recently, each trusted for a while without reading it again.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// Values by key, each trusted for `ttl` after it was read; a zero `ttl` keeps nothing. At
/// most [`Recent::MAX`] values are kept; beyond it the map starts afresh.
pub struct Recent<V> {
    ttl: Duration,
    entries: RwLock<HashMap<String, (V, Instant)>>,
}

impl<V: Clone> Recent<V> {
    pub const MAX: usize = 10_000;

    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: RwLock::default(),
        }
    }

    /// The value kept for `key`, if it was read less than `ttl` ago.
    pub fn get(&self, key: &str) -> Option<V> {
        let entries = self.entries.read().ok()?;
        let (value, at) = entries.get(key)?;
        (at.elapsed() < self.ttl).then(|| value.clone())
    }

    /// Keeps `value`, just read, for `key`.
    pub fn put(&self, key: &str, value: V) {
        if self.ttl.is_zero() {
            return;
        }
        if let Ok(mut entries) = self.entries.write() {
            if entries.len() >= Self::MAX {
                entries.clear();
            }
            entries.insert(key.to_string(), (value, Instant::now()));
        }
    }

    /// Forgets `key` (this instance changed it).
    pub fn forget(&self, key: &str) {
        if let Ok(mut entries) = self.entries.write() {
            entries.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_for_the_ttl_forgotten_and_bounded() {
        let recent = Recent::new(Duration::from_millis(200));
        assert_eq!(recent.get("a"), None);
        recent.put("a", Some(1));
        recent.put("b", None);
        assert_eq!(recent.get("a"), Some(Some(1)));
        assert_eq!(recent.get("b"), Some(None), "an absence is kept too");
        recent.forget("a");
        assert_eq!(recent.get("a"), None);
        std::thread::sleep(Duration::from_millis(250));
        assert_eq!(recent.get("b"), None, "kept past its ttl");

        let recent = Recent::new(Duration::from_secs(60));
        for i in 0..Recent::<u8>::MAX {
            recent.put(&i.to_string(), Some(0));
        }
        assert_eq!(recent.entries.read().unwrap().len(), Recent::<u8>::MAX);
        recent.put("one more", Some(0));
        assert_eq!(recent.entries.read().unwrap().len(), 1);

        let off = Recent::new(Duration::ZERO);
        off.put("a", 1);
        assert_eq!(off.get("a"), None);
    }
}

//! Folder flushes shared between concurrent document writes.
//!
//! A local document write is acknowledged only once its file and the folders holding the new
//! entries are flushed to disk. Under load, many writes land in the same folders at once (this
//! month's `trade/<yyyy-mm>/` and `trade/`), and each `fsync` of a folder is a flush of the
//! device's cache: a VM exit and a flush on the host. A flush of a folder makes durable every
//! entry renamed into it before the flush began, so a write that arrives while a flush of its
//! folder is running waits for that one to end and shares the next with every other write that
//! arrived meanwhile: group commit for folder entries. Files are still flushed one by one.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// The folders of one document store, each with its own line of flushes.
pub(crate) struct FolderFlushes {
    folders: Mutex<HashMap<PathBuf, Arc<FolderFlush>>>,
    /// Above this many folders, the lines nobody is using are dropped (folders of cases from
    /// before the month layout get one each, on their summary's first download).
    most: usize,
}

impl Default for FolderFlushes {
    fn default() -> Self {
        Self::with_most(1024)
    }
}

impl FolderFlushes {
    fn with_most(most: usize) -> Self {
        Self {
            folders: Mutex::default(),
            most,
        }
    }

    /// Returns once a flush of each folder in `dirs`, in order, that began after the call has
    /// ended; the error of any of those flushes that failed.
    pub(crate) fn flush(&self, dirs: &[PathBuf]) -> std::io::Result<()> {
        for dir in dirs {
            let line = {
                let mut folders = lock(&self.folders);
                if folders.len() >= self.most && !folders.contains_key(dir) {
                    // A line only the map holds has no caller in it: a later caller starts a
                    // new one, whose first flush begins after it.
                    folders.retain(|_, line| Arc::strong_count(line) > 1);
                }
                Arc::clone(folders.entry(dir.clone()).or_default())
            };
            line.flush(|| std::fs::File::open(dir)?.sync_all())?;
        }
        Ok(())
    }
}

/// One folder's flushes: at most one runs at a time.
#[derive(Default)]
pub(crate) struct FolderFlush {
    state: Mutex<State>,
    ended: Condvar,
}

#[derive(Default)]
struct State {
    running: bool,
    /// Callers waiting for the running flush to end.
    waiting: usize,
    /// Flushes begun and ended, counted; the ended ones are exactly `1..=ended`.
    begun: u64,
    ended: u64,
    /// The latest flush that failed, with its error.
    failed: Option<(u64, std::io::ErrorKind, String)>,
}

impl FolderFlush {
    /// Returns once a flush (`run`, here or in another caller) that began after this call has
    /// ended, so it covers everything done to the folder before the call. Fails when that flush
    /// or one ended after it failed (a later success would not undo a lost write-back).
    pub(crate) fn flush(&self, run: impl FnOnce() -> std::io::Result<()>) -> std::io::Result<()> {
        let mut run = Some(run);
        let mut state = lock(&self.state);
        let needed = state.begun + 1;
        loop {
            if state.ended >= needed {
                return match &state.failed {
                    Some((n, kind, message)) if *n >= needed => {
                        Err(std::io::Error::new(*kind, message.clone()))
                    }
                    _ => Ok(()),
                };
            }
            if state.running {
                state.waiting += 1;
                state = self
                    .ended
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
                state.waiting -= 1;
                continue;
            }
            // Only the first pass can get here without a flush ended since: a caller that ran
            // one is covered by it (it began after the call).
            let Some(run) = run.take() else {
                unreachable!("a caller's own flush covers it");
            };
            state.running = true;
            state.begun += 1;
            let n = state.begun;
            drop(state);
            let result = run();
            state = lock(&self.state);
            state.running = false;
            state.ended = n;
            if let Err(e) = &result {
                state.failed = Some((n, e.kind(), e.to_string()));
            }
            self.ended.notify_all();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::time::Duration;

    /// Waits until flush number `begun` runs with `waiting` callers waiting for it.
    fn wait_for(line: &FolderFlush, begun: u64, waiting: usize) {
        for _ in 0..5000 {
            {
                let s = lock(&line.state);
                if s.running && s.begun == begun && s.waiting == waiting {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        panic!("no flush {begun} running with {waiting} waiting");
    }

    /// Callers that arrive while a flush runs are not covered by it: they wait, and share one
    /// flush begun after it. A caller alone runs its own.
    #[test]
    fn callers_during_a_flush_share_the_next() {
        let line = Arc::new(FolderFlush::default());
        let runs = Arc::new(AtomicUsize::new(0));
        let (release_first, first_may_end) = mpsc::channel::<()>();
        let (returned, returns) = mpsc::channel::<&'static str>();

        let first = {
            let (line, runs, returned) = (line.clone(), runs.clone(), returned.clone());
            std::thread::spawn(move || {
                line.flush(|| {
                    runs.fetch_add(1, Ordering::SeqCst);
                    first_may_end.recv().unwrap();
                    Ok(())
                })
                .unwrap();
                returned.send("first").unwrap();
            })
        };
        wait_for(&line, 1, 0);
        let later: Vec<_> = ["second", "third"]
            .into_iter()
            .map(|name| {
                let (line, runs, returned) = (line.clone(), runs.clone(), returned.clone());
                std::thread::spawn(move || {
                    line.flush(|| {
                        runs.fetch_add(1, Ordering::SeqCst);
                        Ok(())
                    })
                    .unwrap();
                    returned.send(name).unwrap();
                })
            })
            .collect();
        // Both wait: the running flush began before them.
        wait_for(&line, 1, 2);
        assert!(
            returns.try_recv().is_err(),
            "returned before any flush covered it"
        );

        release_first.send(()).unwrap();
        first.join().unwrap();
        for t in later {
            t.join().unwrap();
        }
        let mut returned: Vec<_> = returns.try_iter().collect();
        returned.sort_unstable();
        assert_eq!(returned, ["first", "second", "third"]);
        // The first flush, and one shared by the two that waited.
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        let s = lock(&line.state);
        assert_eq!((s.begun, s.ended, s.running), (2, 2, false));
        drop(s);

        // Alone, a caller runs a flush of its own.
        line.flush(|| {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 3);
    }

    /// A failed flush fails every caller it covers; callers after it flush again.
    #[test]
    fn a_failed_flush_fails_the_callers_it_covers() {
        let line = Arc::new(FolderFlush::default());
        let (release, may_end) = mpsc::channel::<()>();
        let first = {
            let line = line.clone();
            std::thread::spawn(move || {
                line.flush(|| {
                    may_end.recv().unwrap();
                    Ok(())
                })
            })
        };
        wait_for(&line, 1, 0);
        // Two callers arrive during the first flush; the flush they share fails.
        let (go_second, second_may_run) = mpsc::channel::<()>();
        let second = {
            let line = line.clone();
            std::thread::spawn(move || {
                line.flush(|| {
                    second_may_run.recv().unwrap();
                    Err(std::io::Error::other("disk gone"))
                })
            })
        };
        let third = {
            let line = line.clone();
            std::thread::spawn(move || line.flush(|| Err(std::io::Error::other("disk gone"))))
        };
        wait_for(&line, 1, 2);
        release.send(()).unwrap();
        // Whichever of the two runs the shared flush; the other's is never run.
        let _ = go_second.send(());
        assert!(first.join().unwrap().is_ok());
        for caller in [second, third] {
            let e = caller.join().unwrap().unwrap_err();
            assert_eq!(e.to_string(), "disk gone");
        }
        // One flush ran for both.
        assert_eq!(lock(&line.state).begun, 2);

        // The next caller is not covered by the failed flush: it runs one, which succeeds.
        assert!(line.flush(|| Ok(())).is_ok());
        assert_eq!(lock(&line.state).begun, 3);
    }

    /// Lines nobody uses are dropped above the bound; a line in use is kept.
    #[test]
    fn unused_lines_are_dropped_above_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let flushes = Arc::new(FolderFlushes::with_most(3));
        let folders: Vec<PathBuf> = (0..6).map(|i| dir.path().join(i.to_string())).collect();
        for f in &folders {
            std::fs::create_dir(f).unwrap();
        }
        // Folder 0's line is in use (a flush runs) while the others come and go.
        let busy = Arc::clone(
            lock(&flushes.folders)
                .entry(folders[0].clone())
                .or_default(),
        );
        for f in &folders[1..3] {
            flushes.flush(std::slice::from_ref(f)).unwrap();
        }
        assert_eq!(lock(&flushes.folders).len(), 3);
        flushes.flush(&folders[3..4]).unwrap();
        let kept: std::collections::HashSet<PathBuf> =
            lock(&flushes.folders).keys().cloned().collect();
        assert_eq!(kept, [folders[0].clone(), folders[3].clone()].into());
        drop(busy);
        flushes.flush(&folders[4..6]).unwrap();
        assert!(lock(&flushes.folders).len() <= 3);
    }

    /// Through the store's folders: real folders are flushed, a missing one fails.
    #[test]
    fn folders_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let flushes = FolderFlushes::default();
        flushes.flush(&[dir.path().to_path_buf()]).unwrap();
        let missing = dir.path().join("missing");
        let e = flushes.flush(&[missing]).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }
}

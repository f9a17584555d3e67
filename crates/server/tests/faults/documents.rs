//! The documents directory turns read-only; the documents disk is full.

use super::*;

// --- The documents directory turns read-only -------------------------------------------------

/// `chattr -R +i` on a directory tree, undone on drop (even when the test fails, so the
/// temporary folder can be removed).
///
/// The tests that use it run as root only (`cfg(not_root)` ignores them otherwise): root
/// ignores permission bits but not the immutable flag. As root, a filesystem or sandbox that
/// cannot set the flag fails the test.
struct Immutable(PathBuf);

impl Immutable {
    fn set(dir: &Path) -> Self {
        let out = std::process::Command::new("chattr")
            .args(["-R", "+i"])
            .arg(dir)
            .output()
            .unwrap_or_else(|e| panic!("chattr (e2fsprogs) cannot run: {e}"));
        let guard = Immutable(dir.to_path_buf());
        assert!(
            out.status.success(),
            "chattr +i failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        let probe = dir.join("probe");
        if std::fs::create_dir(&probe).is_ok() {
            let _ = std::fs::remove_dir(&probe);
            panic!("the immutable flag does not stop root here");
        }
        guard
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .args(["-R", "-i"])
            .arg(&self.0)
            .status();
    }
}

backend_tests! {
    #[cfg_attr(not_root, ignore = "needs root: chattr +i on the documents folder")]
    async fn read_only_documents_directory_is_503_and_passes(backend) {
        let before = Before::new(backend, Options::default()).await;
        let Before { app, key, operator, docs, files, .. } = &before;
        assert!(*files > 0);

        let guard = Immutable::set(docs);
        let (s, b, retry) = create(app, key, None).await;
        assert_unavailable(s, &b, retry);
        // Nothing of the failed create: no case, no file; what was stored still reads.
        before.assert_nothing_left(1).await;
        let (s, _) = json(app.get("/healthz", None).send().await.unwrap()).await;
        assert_eq!(s, 200, "the database is fine");

        drop(guard);
        let (s, b, _) = create(app, key, None).await;
        assert_eq!(s, 201, "after the fault: {b}");
        assert_eq!(listed_cases(app, operator).await, 2);
        assert!(files_in(docs) > *files);
    }
}

// --- The documents disk is full ---------------------------------------------------------------

/// A small tmpfs mounted for the test, unmounted on drop. As root (the test is ignored
/// otherwise), a sandbox that cannot mount fails the test.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .unwrap_or_else(|e| panic!("mount cannot run: {e}"));
        assert!(
            out.status.success(),
            "mount -t tmpfs failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        Tmpfs(dir.to_path_buf())
    }

    /// Writes a file until the filesystem is full.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.0.join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        let block = vec![0u8; 64 * 1024];
        while f.write_all(&block).and_then(|()| f.flush()).is_ok() {}
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

#[cfg_attr(not_root, ignore = "needs root: mounts a tmpfs as the documents disk")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_documents_disk_is_503_and_passes() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let docs = dir.path().join("small-disk");
    let disk = Tmpfs::mount(&docs, "8m");
    let url = common::fresh_database(Backend::Sqlite, dir.path())
        .await
        .unwrap();
    let docs_for_app = docs.clone();
    let app = TestApp::spawn_on(
        url,
        dir,
        Options::tweak(move |c| c.storage.documents_dir = docs_for_app),
    )
    .await;
    let (_, key) = app.provider("Plattform GmbH").await;
    let (_, operator) = app.operator("Ops").await;
    let (s, b, _) = create(&app, &key, None).await;
    assert_eq!(s, 201, "{b}");
    let files = files_in(&docs);

    let filler = disk.fill();
    let (s, b, retry) = create(&app, &key, None).await;
    assert_unavailable(s, &b, retry);
    assert_eq!(listed_cases(&app, &operator).await, 1);
    assert_eq!(files_in(&docs), files + 1, "only the filler is new");

    std::fs::remove_file(filler).unwrap();
    let (s, b, _) = create(&app, &key, None).await;
    assert_eq!(s, 201, "after space was freed: {b}");
    assert_eq!(listed_cases(&app, &operator).await, 2);
    drop(app);
}

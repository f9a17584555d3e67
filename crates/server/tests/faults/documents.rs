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

    /// Writes a file of `bytes` (rounded down to MiB) and returns its path.
    fn fill_to(&self, bytes: u64) -> PathBuf {
        use std::io::Write;
        let path = self.0.join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        let block = vec![0u8; 1 << 20];
        for _ in 0..bytes >> 20 {
            f.write_all(&block).unwrap();
        }
        f.flush().unwrap();
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

// --- Below the free-disk watermark --------------------------------------------------------------

/// Issue 52.1 on a real small disk: the data folder (database, spool and documents) is a 64 MiB
/// tmpfs with a 24 MiB watermark. Once a filler leaves about 20 MiB free, a signed upload is
/// refused 503 before a byte of it is spooled, while a create without an upload still writes
/// its case to the same disk (the database is never the one that runs out); after the filler is
/// removed the same upload is stored.
#[cfg_attr(not_root, ignore = "needs root: mounts a tmpfs as the data disk")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn below_the_watermark_on_a_small_disk_uploads_wait_and_the_database_goes_on() {
    const MIB: u64 = 1 << 20;
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let data = dir.path().join("data");
    let disk = Tmpfs::mount(&data, "64m");
    let url = common::fresh_database(Backend::Sqlite, &data)
        .await
        .unwrap();
    let app = TestApp::spawn_on(url, dir, Options::tweak(|c| c.min_free_disk = 24 * MIB)).await;
    let (_, key) = app.provider("Plattform GmbH").await;
    let (_, operator) = app.operator("Ops").await;
    let upload = || {
        let mut data = example("self");
        data["owners"][0]["documents"] = serde_json::json!({"gewa_1": {"file": "signed"}});
        data["owners"][0]["signatures"]
            .as_object_mut()
            .unwrap()
            .remove("gewa_1");
        let form = reqwest::multipart::Form::new()
            .text("data", data.to_string())
            .part(
                "signed",
                reqwest::multipart::Part::bytes(common::signed_gewa1_pdf()).file_name("signed.pdf"),
            );
        app.post(PATH, Some(&key)).multipart(form).send()
    };
    let (s, b) = json(upload().await.unwrap()).await;
    assert_eq!(s, 201, "{b}");

    let free = fs4::available_space(&data).unwrap();
    let filler = disk.fill_to(free.saturating_sub(20 * MIB));
    let free = fs4::available_space(&data).unwrap();
    assert!((16 * MIB..24 * MIB).contains(&free), "{free} bytes free");
    let res = upload().await.unwrap();
    let retry = res
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
    let (s, b) = json(res).await;
    assert_unavailable(s, &b, retry);
    assert!(
        b["response"]["message"].as_str().unwrap().contains("disk"),
        "{b}"
    );
    assert_eq!(
        std::fs::read_dir(data.join("tmp")).unwrap().count(),
        0,
        "nothing spooled"
    );
    assert_eq!(listed_cases(&app, &operator).await, 1);
    let (s, b, _) = create(&app, &key, None).await;
    assert_eq!(
        s, 201,
        "a create without an upload below the watermark: {b}"
    );
    assert_eq!(listed_cases(&app, &operator).await, 2);

    std::fs::remove_file(filler).unwrap();
    let (s, b) = json(upload().await.unwrap()).await;
    assert_eq!(s, 201, "after space was freed: {b}");
    assert_eq!(listed_cases(&app, &operator).await, 3);
    drop(app);
}

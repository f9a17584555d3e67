use super::*;

/// A local write replaces a document whole, leaves no staging file behind, and in a folder
/// it cannot write fails as unavailable, also without a staging file (the tests run as
/// root, which ignores permissions, so the folder's place is taken by a file).
#[tokio::test]
async fn local_writes_leave_no_staging_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("docs");
    let store = DocumentStore::local(&root).unwrap();
    let big = Bytes::from(vec![7u8; 3 << 20]);
    store.put("trade/2026-11/a.pdf", big.clone()).await.unwrap();
    store
        .put(
            "trade/2026-11/a.pdf",
            Bytes::from_static(b"%PDF-1.7 second"),
        )
        .await
        .unwrap();
    assert_eq!(
        std::fs::read(root.join("trade/2026-11/a.pdf")).unwrap(),
        b"%PDF-1.7 second"
    );
    let names = |folder: &str| -> Vec<String> {
        let mut n: Vec<String> = std::fs::read_dir(root.join(folder))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    assert_eq!(names("trade/2026-11"), ["a.pdf"]);

    std::fs::write(root.join("tax"), b"not a folder").unwrap();
    let e = store
        .put("tax/2026-11/b.xml", Bytes::from_static(b"<x/>"))
        .await
        .unwrap_err();
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    std::fs::create_dir_all(root.join("trade/2026-12/b.pdf")).unwrap();
    let e = store.put("trade/2026-12/b.pdf", big).await.unwrap_err();
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    assert_eq!(names("trade/2026-12"), ["b.pdf"], "a staging file was left");
    assert!(root.join("trade/2026-12/b.pdf").is_dir());
}

#[test]
fn the_settled_record_starts_afresh_at_its_bound() {
    let settled = std::sync::Mutex::new(std::collections::HashSet::new());
    let p = |s: &str| std::path::PathBuf::from(s);
    record_settled(&settled, vec![p("a"), p("b")], 3);
    record_settled(&settled, vec![], 3);
    assert_eq!(settled.lock().unwrap().len(), 2);
    record_settled(&settled, vec![p("c"), p("d")], 3);
    assert_eq!(*settled.lock().unwrap(), [p("c"), p("d")].into());
}

/// A write settles the folders it flushed the entries of; a delete unsettles its folder
/// (before trying to remove it: whether it is empty is only known by trying), so the write
/// that recreates a removed month's folder flushes `trade/` again.
#[tokio::test]
async fn deleting_an_emptied_folder_unsettles_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("docs");
    let store = DocumentStore::local(&root).unwrap();
    let (trade, month) = (root.join("trade"), root.join("trade/2026-11"));
    let settled = |p: &std::path::Path| store.settled.lock().unwrap().contains(p);
    let plan = || dirs_to_flush(&month.join("c.pdf"), &root, &store.settled);

    store
        .put("trade/2026-11/a.pdf", Bytes::from_static(b"%PDF a"))
        .await
        .unwrap();
    store
        .put("trade/2026-11/b.pdf", Bytes::from_static(b"%PDF b"))
        .await
        .unwrap();
    assert!(settled(&month) && settled(&trade));
    assert_eq!(plan(), (vec![month.clone()], vec![]));

    // Not the last document: the folder stays, unsettled until a write flushes it again.
    store.delete("trade/2026-11/a.pdf").await.unwrap();
    assert!(month.is_dir() && !settled(&month));
    store
        .put("trade/2026-11/a.pdf", Bytes::from_static(b"%PDF a"))
        .await
        .unwrap();
    assert!(settled(&month));
    store.delete("trade/2026-11/a.pdf").await.unwrap();
    store.delete("trade/2026-11/b.pdf").await.unwrap();
    assert!(!month.exists());
    assert!(!settled(&month) && settled(&trade));
    assert_eq!(
        plan(),
        (vec![month.clone(), trade.clone()], vec![month.clone()])
    );

    store
        .put("trade/2026-11/c.pdf", Bytes::from_static(b"%PDF c"))
        .await
        .unwrap();
    assert!(settled(&month));
}

#[tokio::test]
async fn local_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let store = DocumentStore::local(&dir.path().join("docs")).unwrap();
    assert_eq!(store.get("a/b.pdf").await.unwrap(), None);
    store
        .put("a/b.pdf", Bytes::from_static(b"%PDF-1.7"))
        .await
        .unwrap();
    assert_eq!(
        store.get("a/b.pdf").await.unwrap().as_deref(),
        Some(&b"%PDF-1.7"[..])
    );
    assert!(dir.path().join("docs/a/b.pdf").exists());
    store.delete("a/b.pdf").await.unwrap();
    store.delete("a/b.pdf").await.unwrap();
    assert_eq!(store.get("a/b.pdf").await.unwrap(), None);
    // A folder directly below the root stays when emptied; an emptied case folder goes,
    // one that still holds a file stays.
    assert!(dir.path().join("docs/a").is_dir());
    for key in ["trade/c1/x.pdf", "trade/c2/x.pdf", "trade/c2/y.pdf"] {
        store
            .put(key, Bytes::from_static(b"%PDF-1.7"))
            .await
            .unwrap();
    }
    store.delete("trade/c1/x.pdf").await.unwrap();
    store.delete("trade/c2/x.pdf").await.unwrap();
    assert!(!dir.path().join("docs/trade/c1").exists());
    assert!(dir.path().join("docs/trade/c2/y.pdf").exists());
    store.delete("trade/c2/y.pdf").await.unwrap();
    assert!(!dir.path().join("docs/trade/c2").exists());
    assert!(dir.path().join("docs/trade").is_dir());
    // A write into a case folder removed meanwhile recreates it.
    store
        .put("trade/c1/z.pdf", Bytes::from_static(b"%PDF-1.7"))
        .await
        .unwrap();
    assert!(dir.path().join("docs/trade/c1/z.pdf").exists());
}

/// The file's folder is flushed on each write; the folder above a folder, until this
/// process has flushed it once; the store's own folder at start up to the first that
/// existed.
#[test]
fn folders_flushed_after_a_write() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("docs");
    let settled = std::sync::Mutex::new(std::collections::HashSet::new());
    let plan = |key: &str| dirs_to_flush(&root.join(key), &root, &settled);
    let (trade, month) = (root.join("trade"), root.join("trade/2026-11"));
    // The first write into `trade/2026-11/`: the month, `trade/` and the root.
    assert_eq!(
        plan("trade/2026-11/a.pdf"),
        (
            vec![month.clone(), trade.clone(), root.clone()],
            vec![month.clone(), trade.clone()]
        )
    );
    // Once `put` has recorded them: the month's folder alone, whose entries changed.
    settled
        .lock()
        .unwrap()
        .extend([month.clone(), trade.clone()]);
    assert_eq!(plan("trade/2026-11/b.pdf"), (vec![month.clone()], vec![]));
    // A new month: its folder and `trade/`, which gained its entry.
    let december = root.join("trade/2026-12");
    assert_eq!(
        plan("trade/2026-12/a.pdf"),
        (
            vec![december.clone(), trade.clone()],
            vec![december.clone()]
        )
    );
    assert_eq!(
        plan("trade/2026-11/d/a.pdf"),
        (
            vec![root.join("trade/2026-11/d"), month.clone()],
            vec![root.join("trade/2026-11/d")]
        )
    );
    assert_eq!(
        plan("tax/c/a.xml"),
        (
            vec![root.join("tax/c"), root.join("tax"), root.clone()],
            vec![root.join("tax/c"), root.join("tax")]
        )
    );
    assert_eq!(plan("top.pdf"), (vec![root.clone()], vec![]));
    // The store's own folder at start: up to the first folder that exists.
    assert_eq!(
        dirs_created_by(&dir.path().join("x/y")),
        [dir.path().join("x"), dir.path().to_path_buf()]
    );
    assert_eq!(
        dirs_created_by(std::path::Path::new("relative-dir-that-is-not-there/docs")),
        [
            std::path::PathBuf::from("relative-dir-that-is-not-there"),
            std::path::PathBuf::from(".")
        ]
    );
}

/// The sweep's two listings: finished objects by age, and unfinished local staging files
/// (which the listing never shows), removed only when old enough.
#[tokio::test]
async fn listing_by_age_and_staging_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("docs");
    let store = DocumentStore::local(&root).unwrap();
    store
        .put("trade/a/x.pdf", Bytes::from_static(b"x"))
        .await
        .unwrap();
    store
        .put("tax/b/y.xml", Bytes::from_static(b"y"))
        .await
        .unwrap();
    std::fs::write(root.join("trade/a/z.pdf#17"), b"half").unwrap();
    std::fs::write(root.join("trade/a/notes#draft.pdf"), b"a real name").unwrap();
    let past = time::OffsetDateTime::now_utc() - time::Duration::minutes(1);
    let future = time::OffsetDateTime::now_utc() + time::Duration::minutes(1);

    async fn listed(store: &DocumentStore, cutoff: time::OffsetDateTime) -> Vec<String> {
        let all: Vec<Result<String>> = store.keys_written_before(cutoff).collect().await;
        all.into_iter().collect::<Result<_>>().unwrap()
    }
    assert!(listed(&store, past).await.is_empty());
    let mut keys = listed(&store, future).await;
    keys.sort();
    assert_eq!(
        keys,
        ["tax/b/y.xml", "trade/a/notes#draft.pdf", "trade/a/x.pdf"]
    );

    assert_eq!(store.remove_staging_before(past).await.unwrap(), 0);
    assert!(root.join("trade/a/z.pdf#17").exists());
    assert_eq!(store.remove_staging_before(future).await.unwrap(), 1);
    assert!(!root.join("trade/a/z.pdf#17").exists());
    assert!(root.join("trade/a/notes#draft.pdf").exists());
    assert!(root.join("trade/a/x.pdf").exists());
    assert!(is_staging("a.pdf#1") && !is_staging("a#b") && !is_staging("a#"));
}

//! `filing backup` and `filing restore` on the real binary: a backup taken while a server
//! takes creates restores into a new data folder, where every case acknowledged before the
//! backup started is readable with documents whose bytes match the SHA-256 the API names.

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::process::Child;

/// A `filing serve` on `dir/data` listening on `port`, once `/healthz` answers.
async fn serve(dir: &Path, port: u16) -> Child {
    let child = common::filing_process(dir)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("start filing serve");
    let (base, client) = common::served_on(port, Duration::from_secs(5));
    for _ in 0..400 {
        let up = client.get(format!("{base}/healthz")).send().await;
        if up.is_ok_and(|r| r.status() == 200) {
            return child;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the server on {port} did not come up");
}

/// SIGTERM, and the exit.
async fn stop(mut child: Child) {
    let pid = child.id().expect("running").to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().await.unwrap();
    assert!(exit.success(), "{exit:?}");
}

/// Runs a command of the CLI with `dir/data`: exit code, stdout, stderr.
async fn filing(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = common::filing_process(dir)
        .args(args)
        .output()
        .await
        .expect("run filing");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// One acknowledged create: when it was sent and answered, and its id.
#[derive(Debug, Clone)]
struct Acked {
    sent: Instant,
    answered: Instant,
    id: String,
}

/// The case `id` as the server on `base` answers it to `key`: `None` when it is unknown
/// (404); otherwise every document is downloaded and must match its `size` and `sha256`.
async fn case_whole(client: &reqwest::Client, base: &str, key: &str, id: &str) -> Option<usize> {
    let res = client
        .get(format!("{base}/v1/trade-registration/{id}"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let body: Value = res.json().await.unwrap();
    if status == 404 {
        return None;
    }
    assert_eq!(status, 200, "{id}: {body}");
    let documents = body["response"]["documents"].as_array().expect("documents");
    assert!(!documents.is_empty(), "{id}: no documents");
    for doc in documents {
        let url = doc["download_url"].as_str().expect("download_url");
        let res = client.get(url).send().await.unwrap();
        assert_eq!(res.status(), 200, "{id}: {doc}");
        let bytes = res.bytes().await.unwrap();
        assert_eq!(
            common::sha256_hex(&bytes),
            doc["sha256"].as_str().expect("sha256"),
            "{id}: {doc}"
        );
        assert_eq!(Some(bytes.len() as u64), doc["size"].as_u64(), "{id}");
    }
    Some(documents.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backup_under_create_load_restores_every_acknowledged_case() {
    server::webhooks::install_tls();
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    let server = serve(dir.path(), port).await;
    let (code, out, err) = filing(
        dir.path(),
        &["providers", "create", "--name", "Backup GmbH"],
    )
    .await;
    assert_eq!(code, Some(0), "{err}");
    let key: Value = serde_json::from_str(out.trim()).unwrap();
    let key = key["api_key"].as_str().unwrap().to_string();

    // Creates from four tasks until told to stop; every acknowledged one is recorded.
    let (base, client) = common::served_on(port, Duration::from_secs(60));
    let acked = Arc::new(Mutex::new(Vec::<Acked>::new()));
    let stop_load = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut tasks = Vec::new();
    for t in 0..4 {
        let (client, base, key) = (client.clone(), base.clone(), key.clone());
        let (acked, stop_load) = (acked.clone(), stop_load.clone());
        tasks.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop_load.load(std::sync::atomic::Ordering::Relaxed) {
                let mut body = domain::rule_cases::example("self");
                body["client_reference"] = Value::from(format!("backup-{t}-{n}"));
                n += 1;
                let sent = Instant::now();
                let res = common::post_trade(&client, &base, &key, &body).await;
                let status = res.status().as_u16();
                let b: Value = res.json().await.unwrap();
                assert_eq!(status, 201, "{b}");
                let id = b["response"]["trade_registration_id"].as_str().unwrap();
                acked.lock().unwrap().push(Acked {
                    sent,
                    answered: Instant::now(),
                    id: id.to_string(),
                });
            }
        }));
    }
    // The backup starts once some creates are acknowledged (on a loaded machine the first ones
    // take longer than any fixed pause), so that it has cases it must hold.
    let waiting = Instant::now();
    while acked.lock().unwrap().len() < 8 {
        assert!(
            waiting.elapsed() < Duration::from_secs(120),
            "no 8 creates acknowledged within 120 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let backup_dir = dir.path().join("backup");
    let backup_started = Instant::now();
    let (code, out, err) = filing(
        dir.path(),
        &["backup", "--out", backup_dir.to_str().unwrap()],
    )
    .await;
    let backup_ended = Instant::now();
    assert_eq!(code, Some(0), "{err}");
    let data = dir.path().join("data");
    let db_line = format!("database: sqlite://{}", data.join("filing.db").display());
    assert!(err.lines().any(|l| l == db_line), "{err}");
    let report: Value = serde_json::from_str(out.trim()).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop_load.store(true, std::sync::atomic::Ordering::Relaxed);
    for task in tasks {
        task.await.unwrap();
    }
    stop(server).await;
    let acked = acked.lock().unwrap().clone();
    let before: Vec<&Acked> = acked
        .iter()
        .filter(|a| a.answered < backup_started)
        .collect();
    let overlapping = acked
        .iter()
        .filter(|a| a.sent < backup_ended && a.answered > backup_started)
        .count();
    assert!(
        before.len() >= 4,
        "{} creates before the backup",
        before.len()
    );
    assert!(
        overlapping >= 1,
        "no create was in flight during the backup"
    );
    let cases = report["counts"]["trade_registrations"].as_u64().unwrap() as usize;
    assert!(cases >= before.len(), "{report}");
    assert!(
        report["documents"].as_u64().unwrap() as usize >= cases,
        "{report}"
    );
    assert_eq!(
        report["secrets"],
        serde_json::json!(["signing-secret", "webhook-sealing-key"]),
        "{report}"
    );

    // Owner-only, as the data folder.
    {
        use std::os::unix::fs::PermissionsExt;
        for path in [
            backup_dir.clone(),
            backup_dir.join("secrets/signing-secret"),
        ] {
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o077;
            assert_eq!(mode, 0, "{} is open to others", path.display());
        }
    }

    // A restore refuses a data folder that holds anything, and changes nothing there.
    let (code, _, err) = filing(dir.path(), &["restore", backup_dir.to_str().unwrap()]).await;
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("not empty"), "{err}");

    let second = tempfile::tempdir().unwrap();
    let (code, out, err) = filing(second.path(), &["restore", backup_dir.to_str().unwrap()]).await;
    assert_eq!(code, Some(0), "{err}");
    let restored: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(restored["counts"], report["counts"], "{restored}");
    assert_eq!(
        std::fs::read(second.path().join("data/signing-secret")).unwrap(),
        std::fs::read(data.join("signing-secret")).unwrap()
    );

    let port = common::free_port();
    let server = serve(second.path(), port).await;
    let (base, client) = common::served_on(port, Duration::from_secs(60));
    for a in &before {
        let docs = case_whole(&client, &base, &key, &a.id).await;
        assert!(
            docs.is_some(),
            "{} was acknowledged before the backup and is missing",
            a.id
        );
    }
    // Those acknowledged later may be there or not; those there are whole.
    let mut later_present = 0;
    for a in acked.iter().filter(|a| a.answered >= backup_started) {
        later_present += usize::from(case_whole(&client, &base, &key, &a.id).await.is_some());
    }
    assert_eq!(
        before.len() + later_present,
        cases,
        "the restored cases are those the backup counted"
    );
    stop(server).await;
    eprintln!(
        "{} creates before the backup, {} in flight during it, {later_present} later ones in it; \
         {cases} cases",
        before.len(),
        overlapping
    );

    // A damaged backup is refused whole: nothing is written.
    let some_document = common::files_below(&backup_dir.join("documents"))[0].clone();
    let mut bytes = std::fs::read(&some_document).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&some_document, bytes).unwrap();
    let third = tempfile::tempdir().unwrap();
    let (code, _, err) = filing(third.path(), &["restore", backup_dir.to_str().unwrap()]).await;
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("damaged"), "{err}");
    assert!(!third.path().join("data").exists());
}

/// PostgreSQL and bucket deployments are backed up with their own tools: the command says so
/// and touches nothing.
#[tokio::test]
async fn backup_refuses_postgresql_and_buckets() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("backup");
    let run = |env: (&'static str, &'static str)| {
        let mut cmd = common::filing_process(dir.path());
        cmd.args(["backup", "--out", out.to_str().unwrap()])
            .env(env.0, env.1);
        cmd
    };
    for (env, want) in [
        (
            ("DATABASE_URL", "postgres://filing:pw@db.invalid/filing"),
            "pg_dump",
        ),
        (
            ("FILING_DOCUMENTS_URL", "s3://filing-docs/prod"),
            "bucket versioning",
        ),
    ] {
        let out_put = run(env).output().await.unwrap();
        let err = String::from_utf8_lossy(&out_put.stderr);
        assert_eq!(out_put.status.code(), Some(1), "{err}");
        assert!(
            err.contains(want) && err.contains("docs/operations.md"),
            "{err}"
        );
        assert!(!err.contains("pw@"), "the password is shown: {err}");
        assert!(out_put.stdout.is_empty());
    }
    assert!(!out.exists());
}

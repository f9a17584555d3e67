//! The deployment: a data folder and database, `filing serve` started on them and killed, and
//! the command line.

use super::*;

/// The data folder and database all rounds share, and the server's log.
pub(crate) struct Deployment {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) database_url: String,
    pub(crate) log: PathBuf,
    pub(crate) request_timeout_secs: Option<u64>,
}

pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) base: String,
    pub(crate) client: reqwest::Client,
}

impl Deployment {
    pub(crate) async fn new(backend: Backend, settle: bool) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let database_url = match backend {
            Backend::Sqlite => format!("sqlite://{}", dir.path().join("data/filing.db").display()),
            Backend::Postgres => fresh_database(backend, dir.path())
                .await
                .expect("TEST_DATABASE_URL is set"),
        };
        let log = dir.path().join("server.log");
        Deployment {
            dir,
            database_url,
            log,
            request_timeout_secs: settle.then_some(SETTLE_REQUEST_TIMEOUT_SECS),
        }
    }

    pub(crate) fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub(crate) fn command(&self) -> Command {
        let mut cmd = common::filing_process(self.dir.path());
        cmd.env("DATABASE_URL", &self.database_url)
            // As a production deployment: production tax cases get their XML at create.
            .env("FILING_ELSTER_HERSTELLER_ID", "40417");
        if let Some(secs) = self.request_timeout_secs {
            cmd.env("FILING_REQUEST_TIMEOUT_SECS", secs.to_string());
        }
        cmd
    }

    /// Runs a command of the CLI; returns the JSON object it printed.
    pub(crate) async fn cli(&self, args: &[&str]) -> Value {
        let out = self
            .command()
            .args(args)
            .output()
            .await
            .expect("run filing");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "filing {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("{args:?} printed {stdout:?}: {e}"))
    }

    pub(crate) fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Starts `filing serve` on a free port and waits until `/healthz` answers 200.
    pub(crate) async fn start(&self, label: &str) -> Server {
        for _ in 0..5 {
            let port = common::free_port();
            let mut log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.log)
                .expect("server log");
            use std::io::Write;
            writeln!(log, "---- {label}: starting on port {port}").unwrap();
            let mut child = self
                .command()
                .arg("serve")
                .env("FILING_LISTEN", format!("127.0.0.1:{port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::from(log))
                .spawn()
                .expect("start filing serve");
            let (base, client) = common::served_on(port, Duration::from_secs(120));
            let started = Instant::now();
            loop {
                if let Some(status) = child.try_wait().expect("child status") {
                    if self.log_tail().contains("cannot listen") {
                        break; // someone took the port meanwhile: another one
                    }
                    panic!(
                        "{label}: the server exited at start ({status}):\n{}",
                        self.log_tail()
                    );
                }
                let ok = client
                    .get(format!("{base}/healthz"))
                    .timeout(Duration::from_secs(2))
                    .send()
                    .await
                    .is_ok_and(|r| r.status() == 200);
                if ok {
                    return Server {
                        child,
                        base,
                        client,
                    };
                }
                assert!(
                    started.elapsed() < Duration::from_secs(120),
                    "{label}: /healthz did not answer 200 within 120 s:\n{}",
                    self.log_tail()
                );
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
        panic!("{label}: no free port to listen on");
    }
}

impl Server {
    /// SIGKILL, and checks that it was the signal that ended the process.
    pub(crate) async fn kill(mut self) {
        use std::os::unix::process::ExitStatusExt;
        self.child.start_kill().expect("SIGKILL");
        let status = self.child.wait().await.expect("wait for the server");
        assert_eq!(
            status.signal(),
            Some(9),
            "the server ended by itself ({status}), not by the kill"
        );
    }

    pub(crate) async fn get_json(&self, path: &str, key: &str) -> Result<(u16, Value), String> {
        let res = self
            .client
            .get(format!("{}{path}", self.base))
            .bearer_auth(key)
            .send()
            .await
            .map_err(|e| format!("GET {path}: {e}"))?;
        let status = res.status().as_u16();
        let text = res.text().await.map_err(|e| format!("GET {path}: {e}"))?;
        let v = serde_json::from_str(&text)
            .map_err(|e| format!("GET {path}: not JSON ({e}): {text:?}"))?;
        Ok((status, v))
    }
}

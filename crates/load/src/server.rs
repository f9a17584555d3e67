//! The server under test: the release `filing` binary as a child process on a fresh data
//! directory, and its resident set size read from `/proc`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// How to run the `filing` binary against one database and data folder.
#[derive(Clone)]
pub struct Setup {
    pub binary: PathBuf,
    pub data_dir: PathBuf,
    pub database_url: String,
    pub addr: SocketAddr,
}

impl Setup {
    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.binary);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("FILING_DATA_DIR", &self.data_dir)
            .env("DATABASE_URL", &self.database_url)
            .env("FILING_LISTEN", self.addr.to_string())
            .env("FILING_PUBLIC_URL", format!("http://{}", self.addr))
            .env("FILING_LOG", "warn")
            .env("FILING_OPERATOR_NAME", "Muster Gründungsservice GmbH")
            .env("FILING_OPERATOR_ADDRESS", "Friedrichstraße 1, 10117 Berlin")
            .env("RUST_BACKTRACE", "0")
            // A made-up manufacturer id: production tax creates write their XML, as deployed.
            .env("FILING_ELSTER_HERSTELLER_ID", "40417")
            // The default of 16 simultaneous uploads would refuse part of the 32-connection
            // multipart run with 503: measure the create path, not the guard.
            .env("FILING_MAX_CONCURRENT_UPLOADS", "64")
            // One provider sends every request: its share is every slot.
            .env("FILING_MAX_UPLOADS_PER_PROVIDER", "64")
            // One provider sends thousands of requests a second: a rate limit it never meets,
            // so the limiter's cost is measured (on by default since issue 52.5) but no 429.
            .env("FILING_RATE_LIMIT_PER_SECOND", "1000000")
            .env("FILING_RATE_LIMIT_BURST", "1000000");
        cmd
    }

    /// Runs a CLI command (`providers create`, `seed-trade-copies`, ...) and parses the one JSON
    /// object it prints.
    pub fn cli(&self, args: &[&str]) -> anyhow::Result<serde_json::Value> {
        let out = self
            .command()
            .args(args)
            .stderr(Stdio::inherit())
            .output()
            .with_context(|| format!("cannot run {}", self.binary.display()))?;
        if !out.status.success() {
            bail!("filing {args:?} failed: {}", out.status);
        }
        Ok(serde_json::from_slice(&out.stdout)?)
    }

    /// Starts `filing serve` and waits until `/healthz` answers.
    pub async fn start(&self) -> anyhow::Result<Server> {
        let child = self
            .command()
            .arg("serve")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start {}", self.binary.display()))?;
        let server = Server { child };
        let started = Instant::now();
        loop {
            let call = crate::run::Call {
                method: hyper::Method::GET,
                path: "/healthz".into(),
                content_type: None,
                body: crate::bodies::Body::Same(bytes::Bytes::new()),
                bearer: None,
                expect: 200,
            };
            if let Ok((200, _)) = crate::run::once(self.addr, &call).await {
                return Ok(server);
            }
            if started.elapsed() > Duration::from_secs(30) {
                bail!("the server did not answer /healthz within 30 s");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

pub struct Server {
    child: Child,
}

impl Server {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the server with SIGTERM (graceful) and waits for it.
    pub fn stop(mut self) -> anyhow::Result<()> {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let started = Instant::now();
        while self.child.try_wait()?.is_none() {
            if started.elapsed() > Duration::from_secs(40) {
                self.child.kill()?;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `VmRSS` and `VmHWM` (peak) of a process in MiB.
pub fn rss_mib(pid: u32) -> Option<(f64, f64)> {
    let status =
        std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("status")).ok()?;
    let field = |name: &str| -> Option<f64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb / 1024.0)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

//! Storage faults, made for real against the running app: a read-only documents directory
//! (`chattr +i`), a full documents disk (a small tmpfs), an SQLite database whose write lock another connection holds, a PostgreSQL
//! server that drops and refuses connections or accepts them and never answers (a TCP proxy in
//! the test that is cut, stalled and restored), a PostgreSQL database that turns read-only, and
//! a document bucket (S3) that is cut and stalled the same way. Each time: while the fault lasts,
//! a create is answered 503 `SERVICE_UNAVAILABLE` (with `Retry-After` and a request id) and no
//! half case or stray file is left; once it clears, the same request succeeds without
//! restarting the app.

#[path = "../common/mod.rs"]
mod common;

mod bucket;
mod database;
mod documents;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Backend, Options, TestApp, assert_error, json};
use domain::rule_cases::example;
use serde_json::Value;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::AbortHandle;

const PATH: &str = "/v1/trade-registration";

/// The database timeout the tests configure: a request waits this long for a connection or a
/// lock before it is answered 503.
const DB_TIMEOUT: Duration = Duration::from_secs(1);

/// The database timeout of [`DB_TIMEOUT`], and API keys remembered as in production: a create
/// then authenticates from the cache during a fault and reaches its own statements (the
/// transaction through the pool), instead of stopping at the key lookup (a read on
/// `ReadConnections`).
fn short_db_timeout() -> Options {
    Options::tweak(|c| {
        c.db_timeout = DB_TIMEOUT;
        c.key_cache = Duration::from_secs(300);
    })
}

/// Status, body and `Retry-After` of a trade registration create (the `self` example, which
/// creates its client company in the same transaction).
async fn create(
    app: &TestApp,
    key: &str,
    idempotency_key: Option<&str>,
) -> (u16, Value, Option<u64>) {
    let mut rb = app.post(PATH, Some(key)).json(&example("self"));
    if let Some(k) = idempotency_key {
        rb = rb.header("idempotency-key", k);
    }
    let res = rb.send().await.expect("the app answers");
    let retry_after = res.headers().get("retry-after").map(|v| {
        v.to_str()
            .unwrap()
            .parse::<u64>()
            .expect("Retry-After in seconds")
    });
    let (status, body) = json(res).await;
    (status, body, retry_after)
}

fn assert_unavailable(status: u16, body: &Value, retry_after: Option<u64>) {
    let r = assert_error(status, body, 503, "SERVICE_UNAVAILABLE");
    let message = r["message"].as_str().unwrap();
    assert!(
        !message.contains("sqlx") && !message.contains("error:"),
        "internals leak: {message}"
    );
    assert!(
        retry_after.is_some_and(|s| s >= 1),
        "503 without Retry-After"
    );
}

/// Trade registrations as the operator API lists them.
async fn listed_cases(app: &TestApp, operator_key: &str) -> usize {
    let (s, b) = app
        .get_json("/v1/operator/trade-registrations?limit=100", operator_key)
        .await;
    assert_eq!(s, 200, "{b}");
    b["response"]["cases"].as_array().unwrap().len()
}

/// A create while the fault lasts: 503 as [`assert_unavailable`] wants it, within the
/// database timeout and a few seconds.
async fn create_is_503_in_time(app: &TestApp, key: &str, fault: &str) {
    let started = Instant::now();
    let (s, b, retry) = create(app, key, None).await;
    assert_unavailable(s, &b, retry);
    eprintln!("{fault}: 503 after {:?}", started.elapsed());
    assert!(
        started.elapsed() < DB_TIMEOUT + Duration::from_secs(4),
        "503 only after {:?}",
        started.elapsed()
    );
}

/// An app on `backend` with `options`, a provider, an operator and one case the provider
/// created: what a fault must leave as it found it.
struct Before {
    app: TestApp,
    key: String,
    operator: String,
    /// The answer to the create before the fault.
    created: Value,
    docs: PathBuf,
    files: usize,
}

impl Before {
    async fn new(backend: Backend, options: Options) -> Self {
        let app = TestApp::spawn_with(backend, options).await.unwrap();
        let (_, key) = app.provider("Plattform GmbH").await;
        let (_, operator) = app.operator("Ops").await;
        let (s, b, _) = create(&app, &key, None).await;
        assert_eq!(s, 201, "{b}");
        let docs = documents_dir(&app);
        let files = files_in(&docs);
        Before {
            app,
            key,
            operator,
            created: b,
            docs,
            files,
        }
    }

    /// No file of a failed create is left, and the operator lists `cases` cases, no half one.
    async fn assert_nothing_left(&self, cases: usize) {
        assert_eq!(
            files_in(&self.docs),
            self.files,
            "files of the failed create were left"
        );
        assert_eq!(listed_cases(&self.app, &self.operator).await, cases);
    }
}

fn files_in(dir: &Path) -> usize {
    common::files_below(dir).len()
}

fn documents_dir(app: &TestApp) -> PathBuf {
    app.state.config.storage.documents_dir.clone()
}

/// A TCP proxy between the app and PostgreSQL (or the S3 test server) that can be cut (open
/// connections dropped, new ones refused: nothing listens) and restored on the same port, or
/// slowed down.
struct Proxy {
    addr: SocketAddr,
    target: SocketAddr,
    /// The task accepting connections (forwarding them, or holding them during a stall).
    accept: Mutex<Option<tokio::task::JoinHandle<()>>>,
    conns: Arc<Mutex<Vec<AbortHandle>>>,
    /// For new connections: the server's answers pass in pieces of this many bytes with this
    /// pause after each (a slow link); `None` forwards at full speed.
    throttle: Arc<Mutex<Option<(usize, Duration)>>>,
}

impl Proxy {
    async fn start(target: SocketAddr) -> Arc<Self> {
        let listener = Self::bind("127.0.0.1:0".parse().unwrap());
        let proxy = Arc::new(Proxy {
            addr: listener.local_addr().unwrap(),
            target,
            accept: Mutex::new(None),
            conns: Arc::new(Mutex::new(Vec::new())),
            throttle: Arc::new(Mutex::new(None)),
        });
        proxy.serve(listener);
        proxy
    }

    fn bind(addr: SocketAddr) -> TcpListener {
        let socket = TcpSocket::new_v4().unwrap();
        socket.set_reuseaddr(true).unwrap();
        socket.bind(addr).unwrap();
        socket.listen(64).unwrap()
    }

    fn serve(&self, listener: TcpListener) {
        let target = self.target;
        let conns = self.conns.clone();
        let throttle = self.throttle.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    continue;
                };
                let throttle = *throttle.lock().unwrap();
                let handle = tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(target).await else {
                        return;
                    };
                    match throttle {
                        None => {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                        Some((piece, pause)) => {
                            use tokio::io::{AsyncReadExt, AsyncWriteExt};
                            let (mut client_read, mut client_write) = client.into_split();
                            let (mut server_read, mut server_write) = server.into_split();
                            let upstream = tokio::spawn(async move {
                                let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
                            });
                            let mut buf = vec![0u8; piece];
                            while let Ok(n) = server_read.read(&mut buf).await {
                                if n == 0 || client_write.write_all(&buf[..n]).await.is_err() {
                                    break;
                                }
                                tokio::time::sleep(pause).await;
                            }
                            upstream.abort();
                        }
                    }
                });
                conns.lock().unwrap().push(handle.abort_handle());
            }
        });
        *self.accept.lock().unwrap() = Some(task);
    }

    /// Ends the accepting task and waits until it is gone, with its listener and whatever
    /// connections it held.
    async fn stop_accepting(&self) {
        let accepting = self.accept.lock().unwrap().take();
        if let Some(task) = accepting {
            task.abort();
            let _ = task.await;
        }
    }

    /// Stops listening and drops every open connection.
    async fn cut(&self) {
        self.stop_accepting().await;
        for c in self.conns.lock().unwrap().drain(..) {
            c.abort();
        }
        // Let the aborted tasks drop their sockets.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            TcpStream::connect(self.addr).await.is_err(),
            "the cut proxy still accepts"
        );
    }

    /// New connections pass the server's answers `piece` bytes at a time, pausing after each.
    fn throttle(&self, piece: usize, pause: Duration) {
        *self.throttle.lock().unwrap() = Some((piece, pause));
    }

    /// Listens and forwards again on the same port, after a cut or a stall.
    async fn restore(&self) {
        self.stop_accepting().await;
        self.serve(Self::bind(self.addr));
    }

    /// Drops every open connection, then accepts new ones and never answers on them (a server
    /// that hangs, or a network that swallows packets). [`Proxy::restore`] ends it.
    async fn stall(&self) {
        self.cut().await;
        let listener = Self::bind(self.addr);
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        *self.accept.lock().unwrap() = Some(task);
    }
}

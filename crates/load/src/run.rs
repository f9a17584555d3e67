//! Fixed-concurrency load: `connections` tasks, each with its own HTTP/1.1 keep-alive
//! connection, send the request back to back for a fixed time (the same body, or for the trade
//! creates a new one each time, see `bodies.rs`); every latency is kept.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// One request, sent again and again.
#[derive(Clone)]
pub struct Call {
    pub method: hyper::Method,
    pub path: String,
    pub content_type: Option<String>,
    pub body: crate::bodies::Body,
    pub bearer: Option<String>,
    /// The answer that counts as success; anything else is an error.
    pub expect: u16,
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Answers received (expected or not).
    pub requests: u64,
    /// Answers with the expected status.
    pub ok: u64,
    pub errors: u64,
    pub seconds: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// The first unexpected answer (status and the start of the body), to say why.
    pub first_error: Option<String>,
}

impl Measured {
    pub fn rps(&self) -> f64 {
        self.requests as f64 / self.seconds
    }
}

async fn connect(addr: SocketAddr) -> anyhow::Result<SendRequest<Full<Bytes>>> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (sender, conn) = http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// Sends `call` once on `sender`; the status and, for an unexpected one, the body's start.
pub async fn send(
    sender: &mut SendRequest<Full<Bytes>>,
    addr: SocketAddr,
    call: &Call,
) -> anyhow::Result<(u16, Bytes)> {
    sender.ready().await?;
    let mut req = Request::builder()
        .method(call.method.clone())
        .uri(&call.path)
        .header(hyper::header::HOST, addr.to_string());
    if let Some(ct) = &call.content_type {
        req = req.header(hyper::header::CONTENT_TYPE, ct);
    }
    if let Some(key) = &call.bearer {
        req = req.header(hyper::header::AUTHORIZATION, format!("Bearer {key}"));
    }
    let res = sender
        .send_request(req.body(Full::new(call.body.next()))?)
        .await?;
    let status = res.status().as_u16();
    let body = res.into_body().collect().await?.to_bytes();
    Ok((status, body))
}

/// One request on a fresh connection (for seeding and checks).
pub async fn once(addr: SocketAddr, call: &Call) -> anyhow::Result<(u16, Bytes)> {
    let mut sender = connect(addr).await?;
    send(&mut sender, addr, call).await
}

/// Runs `call` on `connections` connections for `duration`.
pub async fn run(
    addr: SocketAddr,
    call: Call,
    connections: usize,
    duration: Duration,
) -> anyhow::Result<Measured> {
    let call = Arc::new(call);
    let started = Instant::now();
    let deadline = started + duration;
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let call = call.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies: Vec<u32> = Vec::with_capacity(1 << 16);
            let mut errors = 0u64;
            let mut ok = 0u64;
            let mut first_error = None;
            let mut sender = None;
            while Instant::now() < deadline {
                if sender.is_none() {
                    match connect(addr).await {
                        Ok(s) => sender = Some(s),
                        Err(e) => {
                            errors += 1;
                            first_error.get_or_insert_with(|| format!("connect: {e}"));
                            tokio::time::sleep(Duration::from_millis(10)).await;
                            continue;
                        }
                    }
                }
                let s = sender.as_mut().expect("connected");
                let t0 = Instant::now();
                let outcome = send(s, addr, &call).await;
                let micros = t0.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
                match outcome {
                    Ok((status, _)) if status == call.expect => {
                        latencies.push(micros);
                        ok += 1;
                    }
                    Ok((status, body)) => {
                        latencies.push(micros);
                        errors += 1;
                        first_error.get_or_insert_with(|| {
                            let text = String::from_utf8_lossy(&body[..body.len().min(300)]);
                            format!("{status}: {text}")
                        });
                    }
                    Err(e) => {
                        errors += 1;
                        first_error.get_or_insert_with(|| format!("transport: {e}"));
                        sender = None;
                    }
                }
            }
            (latencies, ok, errors, first_error)
        }));
    }
    let mut all = Vec::new();
    let mut errors = 0;
    let mut ok = 0;
    let mut first_error = None;
    for t in tasks {
        let (l, o, e, f) = t.await?;
        all.extend(l);
        ok += o;
        errors += e;
        if first_error.is_none() {
            first_error = f;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    all.sort_unstable();
    let pct = |q: f64| -> f64 {
        if all.is_empty() {
            return 0.0;
        }
        let i = ((all.len() as f64 * q).ceil() as usize).clamp(1, all.len()) - 1;
        f64::from(all[i]) / 1000.0
    };
    Ok(Measured {
        requests: all.len() as u64,
        ok,
        errors,
        seconds,
        p50_ms: pct(0.50),
        p99_ms: pct(0.99),
        max_ms: all.last().map_or(0.0, |&m| f64::from(m) / 1000.0),
        first_error,
    })
}

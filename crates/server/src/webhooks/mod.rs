//! Webhook delivery (docs/api/webhooks.md, ADR 0019, Standard Webhooks): secrets and signatures, and the
//! worker that drains the outbox the store fills in the transaction of every status change (and
//! of every replacement of documents by an office assignment).
//!
//! The worker leases due messages (`WebhookStore::claim_webhook_messages`: `FOR UPDATE SKIP
//! LOCKED` on PostgreSQL, so several instances never take the same message), posts each with the
//! `webhook-id`, `webhook-timestamp` and `webhook-signature` headers, and records the attempt:
//! delivered on 2xx; otherwise retried after the next pause of the schedule, or given up when
//! the schedule is used up. A lease that runs out (the instance died mid-delivery) makes the
//! message due again, so delivery is at least once. Only the oldest pending message of a case
//! at an endpoint is ever due, so one case's events arrive in order.
//!
//! Fairness (docs/adr/0029-fair-webhook-delivery.md): each attempt is a task of its own, at
//! most `FILING_WEBHOOK_MAX_IN_FLIGHT` of them, and the worker claims again as soon as one
//! ends; the claim keeps the limits in flight per endpoint and per provider (all instances'
//! leases counted), takes round robin, and skips endpoints whose circuit breaker is open.

pub mod address;
pub mod target;

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use store::{AttemptOutcome, ClaimedMessage, WebhookAttempt, WebhookEndpoint};
use time::OffsetDateTime;
use tokio::sync::watch;
use uuid::Uuid;

use crate::config::WebhookConfig;
use crate::state::AppState;

/// Longest error text kept per attempt.
const MAX_ERROR_LEN: usize = 500;

pub use crate::sealing::{
    Resealed, SEALING_KEY_FILE, SealingKey, SealingKeys, is_sealed, keys_with_default, open_bytes,
    reseal_bytes, seal_bytes,
};

/// The secret as it is stored for `endpoint`: sealed with the current key (the endpoint's id as
/// associated data, so it opens on its own row only), or as it is without one.
pub fn seal(keys: &SealingKeys, endpoint: Uuid, secret: &str) -> String {
    String::from_utf8(seal_bytes(keys, endpoint.as_bytes(), secret.as_bytes()))
        .expect("sealed values are ASCII, unsealed ones the secret itself")
}

/// The secret of a stored value (see [`open_bytes`]).
pub fn open(keys: &SealingKeys, endpoint: Uuid, stored: &str) -> Option<String> {
    String::from_utf8(open_bytes(keys, endpoint.as_bytes(), stored.as_bytes())?).ok()
}

/// What [`reseal_all`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ResealReport {
    pub endpoints: usize,
    pub resealed: usize,
    pub unchanged: usize,
    /// Endpoints whose secret or previous secret opens with none of the keys: what does not
    /// open is left as it is, what does is resealed (such an endpoint counts under `resealed`
    /// as well, so the counts can add up to more than `endpoints`).
    pub unreadable: Vec<Uuid>,
}

/// Stores every endpoint's secrets (deleted endpoints' too) as the current key seals them. An
/// endpoint rotated in between is read again; a secret that opens with none of the keys is
/// left as it is and its endpoint reported.
pub async fn reseal_all(
    repo: &dyn store::Repository,
    keys: &SealingKeys,
) -> store::Result<ResealReport> {
    reseal_endpoints(repo, keys, false).await
}

/// Seals the secrets stored in clear (by versions before sealing was the default), leaving
/// sealed ones as they are: what a server does at start. Moving secrets to a new key stays the
/// job of `filing webhooks reseal`, so that instances of a rolling restart still on the old key
/// keep opening them.
pub async fn seal_clear_secrets(
    repo: &dyn store::Repository,
    keys: &SealingKeys,
) -> store::Result<ResealReport> {
    reseal_endpoints(repo, keys, true).await
}

async fn reseal_endpoints(
    repo: &dyn store::Repository,
    keys: &SealingKeys,
    only_clear: bool,
) -> store::Result<ResealReport> {
    let mut report = ResealReport::default();
    let mut todo = repo.webhook_endpoint_secrets().await?;
    report.endpoints = todo.len();
    // A rotation racing us stores values sealed with some instance's current key; a few
    // rounds settle it, and more would mean instances disagree on the key.
    for _ in 0..5 {
        let mut raced = Vec::new();
        for stored in todo {
            let aad = stored.endpoint_id.as_bytes();
            // A stored value as the current key stores it, whether that changed it, and whether
            // no key opened it (then it stays as it is, and is reported).
            let reseal = |was: &str| match reseal_bytes(keys, aad, was.as_bytes()) {
                _ if only_clear && is_sealed(was.as_bytes()) => (was.to_owned(), false, false),
                Resealed::Changed(bytes) => (
                    String::from_utf8(bytes).unwrap_or_else(|_| was.into()),
                    true,
                    false,
                ),
                Resealed::Current => (was.to_owned(), false, false),
                Resealed::Unreadable => (was.to_owned(), false, true),
            };
            let (secret, mut changed, mut unreadable) = reseal(&stored.secret);
            let previous_secret = stored.previous_secret.as_deref().map(|p| {
                let (text, c, u) = reseal(p);
                (changed, unreadable) = (changed || c, unreadable || u);
                text
            });
            // Counted from the reading that ends an endpoint's turn (nothing to change, or the
            // write went through), not from one a concurrent rotation made stale.
            if !changed {
                if unreadable {
                    report.unreadable.push(stored.endpoint_id);
                } else {
                    report.unchanged += 1;
                }
                continue;
            }
            let new = store::StoredSecrets {
                endpoint_id: stored.endpoint_id,
                secret,
                previous_secret,
            };
            if repo.replace_webhook_endpoint_secrets(&stored, &new).await? {
                report.resealed += 1;
                if unreadable {
                    report.unreadable.push(stored.endpoint_id);
                }
            } else {
                raced.push(stored.endpoint_id);
            }
        }
        if raced.is_empty() {
            return Ok(report);
        }
        todo = repo
            .webhook_endpoint_secrets()
            .await?
            .into_iter()
            .filter(|s| raced.contains(&s.endpoint_id))
            .collect();
    }
    Err(store::StoreError::Unavailable(
        "endpoint secrets kept changing while being re-sealed: do all instances have the same \
         FILING_WEBHOOK_SECRETS_KEY?"
            .into(),
    ))
}

/// A new endpoint secret: `whsec_` and 32 random bytes in base64.
pub fn new_secret() -> String {
    let bytes: [u8; 32] = rand::random();
    format!("whsec_{}", B64.encode(bytes))
}

/// The signing key of a `whsec_` secret.
fn key_of(secret: &str) -> Option<Vec<u8>> {
    B64.decode(secret.strip_prefix("whsec_").unwrap_or(secret))
        .ok()
}

/// `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`.
pub fn sign(secret: &str, msg_id: &str, timestamp: i64, body: &str) -> Option<String> {
    let key = key_of(secret)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
    mac.update(format!("{msg_id}.{timestamp}.").as_bytes());
    mac.update(body.as_bytes());
    Some(format!("v1,{}", B64.encode(mac.finalize().into_bytes())))
}

/// The `webhook-signature` value: the current secret's signature and, during the 24 hours
/// after a rotation, the previous secret's too (space-separated, as the specification allows).
pub fn signature_header(
    endpoint: &WebhookEndpoint,
    now: OffsetDateTime,
    msg_id: &str,
    timestamp: i64,
    body: &str,
) -> Option<String> {
    let mut sigs = vec![sign(&endpoint.secret, msg_id, timestamp, body)?];
    if let (Some(prev), Some(until)) = (
        &endpoint.previous_secret,
        endpoint.previous_secret_expires_at,
    ) && now < until
        && let Some(s) = sign(prev, msg_id, timestamp, body)
    {
        sigs.push(s);
    }
    Some(sigs.join(" "))
}

/// The HTTP client of deliveries: no redirects, no proxy, the configured timeout, and a
/// resolver that refuses private addresses unless they are allowed.
pub fn client(config: &WebhookConfig) -> anyhow::Result<reqwest::Client> {
    install_tls();
    Ok(reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(config.timeout)
        .connect_timeout(config.timeout.min(Duration::from_secs(10)))
        .user_agent(concat!("filing-webhooks/", env!("CARGO_PKG_VERSION")))
        .dns_resolver(Arc::new(target::PublicResolver {
            allow_private: config.allow_private_targets,
            lookup: config.lookup.clone(),
        }))
        .build()?)
}

/// reqwest uses rustls with whichever crypto provider the process installed: ring, once.
pub fn install_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A running worker; [`WorkerHandle::stop`] ends it after the attempts in flight (each is
/// recorded).
pub struct WorkerHandle {
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl WorkerHandle {
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// The least time between two looks at the outbox that a wake starts. Every create and
/// status change wakes the worker, and under load a look per wake was a query per request
/// (a fourth statement per trade create on PostgreSQL, for a provider without endpoints a
/// look that finds nothing); with this gap, the wakes of a busy moment share one look, and a
/// message waits at most this long longer. A look that sent something is followed at once by
/// the next (the outbox is drained), and the poll interval still applies when nothing wakes it.
/// An attempt that ends is a wake too: its place (and its endpoint's and provider's) is free.
pub const MIN_WAKE_GAP: Duration = Duration::from_millis(25);

/// Starts the delivery worker of this instance.
pub fn spawn_worker(state: Arc<AppState>) -> anyhow::Result<WorkerHandle> {
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(async move {
        tracing::info!("webhook worker started");
        let poll = state.config.webhooks.poll_interval;
        let places = state.config.webhooks.limits.in_flight;
        let state = &state;
        worker_loop(
            |free| async move {
                match claim(state, free).await {
                    Ok(batch) => batch
                        .into_iter()
                        .map(|m| {
                            let state = state.clone();
                            async move { deliver(&state, &state.webhook_client, m).await }
                        })
                        .collect(),
                    Err(e) => {
                        tracing::warn!(error = %e, "webhook worker: cannot read the outbox");
                        Vec::new()
                    }
                }
            },
            &state.webhook_wake,
            stopped,
            (poll, MIN_WAKE_GAP),
            places,
            |n| state.metrics.webhook_in_flight(n),
        )
        .await;
        tracing::info!("webhook worker stopped");
    });
    Ok(WorkerHandle { stop, task })
}

/// Runs `look` (a claim of at most the free places, given; the attempts it claimed) until
/// `stopped` says so or its sender is gone, each attempt a task of its own, at most `places`
/// at once: again at once after a look that claimed something while places are left,
/// otherwise after `poll`, a wake or the end of an attempt, and never sooner than `min_gap`
/// after the previous look began. No look while every place is taken. `in_flight` hears the
/// attempts running after each look. Ends once the attempts in flight have ended.
async fn worker_loop<F, D>(
    mut look: impl FnMut(usize) -> F,
    wake: &tokio::sync::Notify,
    mut stopped: watch::Receiver<bool>,
    (poll, min_gap): (Duration, Duration),
    places: usize,
    in_flight: impl Fn(usize),
) where
    F: std::future::Future<Output = Vec<D>>,
    D: std::future::Future<Output = ()> + Send + 'static,
{
    let mut attempts = tokio::task::JoinSet::new();
    loop {
        if *stopped.borrow() {
            break;
        }
        while attempts.try_join_next().is_some() {}
        let began = tokio::time::Instant::now();
        let free = places.saturating_sub(attempts.len());
        let mut claimed = 0;
        if free > 0 {
            for attempt in look(free).await {
                attempts.spawn(attempt);
                claimed += 1;
            }
        }
        in_flight(attempts.len());
        if claimed > 0 && attempts.len() < places {
            continue;
        }
        // A dropped sender ends the worker (else `changed` would return at once, for ever).
        tokio::select! {
            _ = tokio::time::sleep(poll) => continue,
            _ = wake.notified() => {}
            Some(_) = attempts.join_next(), if !attempts.is_empty() => {}
            changed = stopped.changed() => match changed {
                Ok(()) => continue,
                Err(_) => break,
            },
        }
        tokio::select! {
            _ = tokio::time::sleep_until(began + min_gap) => {}
            changed = stopped.changed() => if changed.is_err() { break },
        }
    }
    while attempts.join_next().await.is_some() {}
    in_flight(0);
}

/// Claims at most `free` due messages as the limits in flight and the endpoints' circuits
/// allow (all instances' leases counted).
async fn claim(state: &AppState, free: usize) -> anyhow::Result<Vec<ClaimedMessage>> {
    let now = OffsetDateTime::now_utc();
    let now_us = store::micros(now);
    // The lease outlives the longest attempt, with room for recording it.
    let lease = state.config.webhooks.timeout + Duration::from_secs(45);
    let lease_us = now_us.saturating_add(i64::try_from(lease.as_micros()).unwrap_or(i64::MAX));
    let limits = state.config.webhooks.limits;
    let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    let limits = store::ClaimLimits {
        total: count(free),
        per_endpoint: count(limits.per_endpoint),
        per_provider: count(limits.per_provider),
    };
    Ok(state
        .repo
        .claim_webhook_messages(now_us, lease_us, limits)
        .await?)
}

/// Claims as many due messages as there are places and attempts each once, waiting for them
/// all; the number attempted (tests, and a worker of one round).
pub async fn run_once(state: &AppState, client: &reqwest::Client) -> anyhow::Result<usize> {
    let batch = claim(state, state.config.webhooks.limits.in_flight).await?;
    let n = batch.len();
    futures::future::join_all(batch.into_iter().map(|m| deliver(state, client, m))).await;
    Ok(n)
}

async fn deliver(state: &AppState, client: &reqwest::Client, m: ClaimedMessage) {
    let attempt_no = m.attempts.saturating_add(1);
    let started = Instant::now();
    let at = crate::clock::now_micros();
    let (status_code, error) = attempt(state, client, &m.endpoint, m.id, &m.payload, at).await;
    let duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    let delivered = status_code.is_some_and(|c| (200..300).contains(&c));
    let outcome = if delivered {
        AttemptOutcome::Delivered
    } else {
        let made = u32::try_from(attempt_no).unwrap_or(u32::MAX);
        match domain::webhook::next_retry(&state.config.webhooks.retry_schedule, made) {
            Some(pause) => {
                let next = OffsetDateTime::now_utc() + pause;
                AttemptOutcome::RetryAt(store::micros(next))
            }
            None => AttemptOutcome::Failed,
        }
    };
    match outcome {
        AttemptOutcome::Delivered => {
            tracing::debug!(message_id = %m.id, event = %m.event_type, attempt = attempt_no, "webhook delivered");
        }
        AttemptOutcome::RetryAt(_) => {
            tracing::info!(message_id = %m.id, endpoint_id = %m.endpoint.id, attempt = attempt_no, ?status_code, error = error.as_deref().unwrap_or(""), "webhook attempt failed; will retry");
        }
        AttemptOutcome::Failed => {
            tracing::warn!(message_id = %m.id, endpoint_id = %m.endpoint.id, attempt = attempt_no, ?status_code, error = error.as_deref().unwrap_or(""), "webhook delivery failed for good");
        }
    }
    let record = WebhookAttempt {
        message_id: m.id,
        endpoint_id: m.endpoint.id,
        attempt: attempt_no,
        at,
        status_code: status_code.map(i32::from),
        error,
        duration_ms,
    };
    state.metrics.webhook_attempt(outcome);
    let breaker = state.config.webhooks.breaker;
    let rule = store::CircuitRule {
        open_after: i32::try_from(breaker.failures).unwrap_or(i32::MAX),
        open_until_us: store::micros(OffsetDateTime::now_utc() + breaker.cooldown),
    };
    // If this fails the lease runs out and the message is tried again: at least once.
    match state
        .repo
        .record_webhook_attempt(&record, outcome, rule)
        .await
    {
        Ok(after) => circuit_moved(state, &m.endpoint, delivered, after, rule),
        Err(e) => {
            tracing::warn!(message_id = %m.id, error = %e, "cannot record a webhook attempt");
        }
    }
}

/// Logs and counts what an attempt did to its endpoint's circuit: opened it (the failure that
/// reached the limit, or a failed half-open attempt) or closed it (a delivery while it was
/// half open). `endpoint.circuit` is the circuit when the message was claimed.
fn circuit_moved(
    state: &AppState,
    endpoint: &WebhookEndpoint,
    delivered: bool,
    after: store::EndpointCircuit,
    rule: store::CircuitRule,
) {
    let before = endpoint.circuit;
    let opened = !delivered
        && after.open_until_us.is_some()
        && (before.open_until_us.is_some() || after.consecutive_failures == rule.open_after);
    let closed = delivered && before.open_until_us.is_some();
    if opened {
        let until = after
            .open_until_us
            .and_then(|us| OffsetDateTime::from_unix_timestamp_nanos(i128::from(us) * 1000).ok());
        tracing::warn!(endpoint_id = %endpoint.id, provider_id = %endpoint.provider_id, failures = after.consecutive_failures, open_until = ?until, "webhook endpoint keeps failing: its circuit is open");
        state.metrics.webhook_circuit(store::CircuitState::Open);
    } else if closed {
        tracing::info!(endpoint_id = %endpoint.id, "webhook endpoint answered again: its circuit is closed");
        state.metrics.webhook_circuit(store::CircuitState::Closed);
    }
}

/// What a test ping got back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PingOutcome {
    /// The `webhook-id` it was sent with.
    pub message_id: Uuid,
    pub status_code: Option<u16>,
    /// Why it was not a 2xx (a status, a timeout, a refused target), as in the deliveries.
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// Sends a signed `ping` to `endpoint` now, through the same target checks, signing and client
/// settings as every delivery, but outside the outbox: nothing is stored and nothing retried.
pub async fn ping(state: &AppState, endpoint: &WebhookEndpoint) -> anyhow::Result<PingOutcome> {
    let at = crate::clock::now_micros();
    let payload = domain::webhook::ping_body(endpoint.id, at)
        .ok_or_else(|| anyhow::anyhow!("cannot write the ping's timestamp"))?;
    let message_id = Uuid::now_v7();
    let started = Instant::now();
    let (status_code, error) = attempt(
        state,
        &state.webhook_client,
        endpoint,
        message_id,
        &payload,
        at,
    )
    .await;
    Ok(PingOutcome {
        message_id,
        status_code,
        error,
        duration_ms: i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX),
    })
}

/// One POST of `payload` as message `id` to `endpoint`; the status code when a response came,
/// else why not.
async fn attempt(
    state: &AppState,
    client: &reqwest::Client,
    endpoint: &WebhookEndpoint,
    id: Uuid,
    payload: &str,
    now: OffsetDateTime,
) -> (Option<u16>, Option<String>) {
    let allow_private = state.config.webhooks.allow_private_targets;
    let url = match target::check_url(&endpoint.url, true)
        .and_then(|u| target::check_literal(&u, allow_private).map(|()| u))
    {
        Ok(u) => u,
        Err(e) => return (None, Some(e)),
    };
    let msg_id = id.to_string();
    let timestamp = now.unix_timestamp();
    let key = &state.config.webhooks.sealing;
    let mut endpoint = endpoint.clone();
    let opened = open(key, endpoint.id, &endpoint.secret);
    let Some(secret) = opened else {
        tracing::error!(endpoint_id = %endpoint.id, "cannot open the endpoint's sealed secret");
        return (
            None,
            Some(
                "the endpoint's secret is sealed and cannot be opened: neither \
                 FILING_WEBHOOK_SECRETS_KEY nor FILING_WEBHOOK_SECRETS_OLD_KEYS holds the key it \
                 was sealed with"
                    .into(),
            ),
        );
    };
    endpoint.secret = secret;
    // A previous secret that cannot be opened only loses its extra signature.
    endpoint.previous_secret = endpoint
        .previous_secret
        .as_deref()
        .and_then(|p| open(key, endpoint.id, p));
    let Some(signature) = signature_header(&endpoint, now, &msg_id, timestamp, payload) else {
        return (None, Some("the endpoint's secret is unreadable".into()));
    };
    let sent = client
        .post(url)
        .header("content-type", "application/json")
        .header("webhook-id", &msg_id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(payload.to_owned())
        .send()
        .await;
    match sent {
        Ok(res) => {
            let code = res.status().as_u16();
            let error = (!res.status().is_success()).then(|| {
                if res.status().is_redirection() {
                    format!("HTTP {code} (redirects are not followed)")
                } else {
                    format!("HTTP {code}")
                }
            });
            (Some(code), error)
        }
        Err(e) => (None, Some(describe(&e))),
    }
}

/// A reqwest error with its causes, cut to a readable length.
fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return "timed out".into();
    }
    let mut text = if e.is_connect() {
        "connection failed".to_string()
    } else {
        "request failed".to_string()
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    if text.len() > MAX_ERROR_LEN {
        let mut cut = MAX_ERROR_LEN;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worker's looks at the outbox, at the (paused) times they began, with `sends`
    /// deciding what each look sent; stops it after `run` has driven it.
    async fn looks(
        sends: impl Fn(usize) -> usize,
        run: impl AsyncFnOnce(&tokio::sync::Notify),
    ) -> Vec<tokio::time::Instant> {
        let wake = tokio::sync::Notify::new();
        let (stop, stopped) = watch::channel(false);
        let times = std::sync::Mutex::new(Vec::new());
        let look = |_free: usize| {
            let mut t = times.lock().unwrap();
            t.push(tokio::time::Instant::now());
            let attempts = (0..sends(t.len())).map(|_| std::future::ready(()));
            std::future::ready(attempts.collect::<Vec<_>>())
        };
        let poll = Duration::from_secs(3600);
        let worker = worker_loop(look, &wake, stopped, (poll, MIN_WAKE_GAP), 1000, |_| {});
        let driver = async {
            run(&wake).await;
            stop.send(true).unwrap();
        };
        tokio::join!(worker, driver);
        times.into_inner().unwrap()
    }

    /// A wake a second apart from the last look is answered at once; a wake every
    /// millisecond for a second makes a look per gap, not a thousand.
    #[tokio::test(start_paused = true)]
    async fn wakes_of_a_busy_moment_share_a_look() {
        let start = tokio::time::Instant::now();
        let times = looks(
            |_| 0,
            async |wake| {
                tokio::time::sleep(Duration::from_secs(1)).await;
                wake.notify_one();
                tokio::time::sleep(Duration::from_secs(1)).await;
                for _ in 0..1000 {
                    wake.notify_one();
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            },
        )
        .await;
        // The look at start, the prompt one, then the busy second.
        assert_eq!(times[0], start);
        assert_eq!(times[1], start + Duration::from_secs(1));
        let busy = &times[2..];
        let expected = 1000 / MIN_WAKE_GAP.as_millis() as usize;
        assert!(
            (expected - 2..=expected + 2).contains(&busy.len()),
            "{} looks in the busy second",
            busy.len()
        );
        for pair in busy.windows(2) {
            assert!(pair[1] - pair[0] >= MIN_WAKE_GAP, "{pair:?}");
        }
    }

    /// The worker ends when its stop channel's sender is dropped without a word (a worker
    /// whose handle is gone), instead of looking again and again.
    #[tokio::test(start_paused = true)]
    async fn a_dropped_stop_sender_ends_the_worker() {
        let wake = tokio::sync::Notify::new();
        let (stop, stopped) = watch::channel(false);
        let looks = std::sync::atomic::AtomicUsize::new(0);
        let look = |_free: usize| {
            let n = looks.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            assert!(n < 100, "the worker kept looking");
            std::future::ready(Vec::<std::future::Ready<()>>::new())
        };
        drop(stop);
        let ended = tokio::time::timeout(
            Duration::from_secs(10),
            worker_loop(
                look,
                &wake,
                stopped,
                (Duration::from_secs(3600), MIN_WAKE_GAP),
                8,
                |_| {},
            ),
        )
        .await;
        assert!(ended.is_ok(), "the worker kept running");
        assert_eq!(looks.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    /// A look that sent something is followed at once by the next, without a wake; the end of
    /// the attempts is a wake.
    #[tokio::test(start_paused = true)]
    async fn a_look_that_sent_is_followed_at_once() {
        let start = tokio::time::Instant::now();
        let times = looks(
            |n| if n <= 3 { 32 } else { 0 },
            async |_| tokio::time::sleep(Duration::from_secs(1)).await,
        )
        .await;
        assert_eq!(times[..4], [start; 4]);
        // The attempts ending free their places: one look more, after the gap.
        assert_eq!(times[4..], [start + MIN_WAKE_GAP], "{times:?}");
    }

    /// Attempts run on their own: with two places, two attempts of 5 s and 10 s and a third
    /// claimable, the third is claimed when the first ends (at 5 s), not after both (the
    /// batch of before), and no look is made while both places are taken, wakes or not.
    #[tokio::test(start_paused = true)]
    async fn an_ending_attempt_frees_its_place_at_once() {
        let start = tokio::time::Instant::now();
        let wake = tokio::sync::Notify::new();
        let (stop, stopped) = watch::channel(false);
        let looks = std::sync::Mutex::new(Vec::new());
        let in_flight = std::sync::Mutex::new(Vec::new());
        let look = |free: usize| {
            let mut l = looks.lock().unwrap();
            l.push((tokio::time::Instant::now() - start, free));
            let secs: &[u64] = match l.len() {
                1 => &[5, 10],
                2 => &[1],
                _ => &[],
            };
            let attempts = secs
                .iter()
                .map(|s| tokio::time::sleep(Duration::from_secs(*s)));
            std::future::ready(attempts.collect::<Vec<_>>())
        };
        let worker = worker_loop(
            look,
            &wake,
            stopped,
            (Duration::from_secs(3600), MIN_WAKE_GAP),
            2,
            |n| in_flight.lock().unwrap().push(n),
        );
        let driver = async {
            for _ in 0..10 {
                tokio::time::sleep(Duration::from_millis(300)).await;
                wake.notify_one();
            }
            tokio::time::sleep(Duration::from_secs(20)).await;
            stop.send(true).unwrap();
        };
        tokio::join!(worker, driver);
        let looks = looks.into_inner().unwrap();
        let secs = |s: u64| Duration::from_secs(s);
        assert_eq!(looks[0], (secs(0), 2));
        assert_eq!(looks[1], (secs(5), 1), "{looks:?}");
        // The third attempt (1 s) ends at 6 s: a look with one place, then the second ends.
        assert_eq!(looks[2], (secs(6), 1), "{looks:?}");
        assert_eq!(looks[3], (secs(10), 2), "{looks:?}");
        assert_eq!(looks.len(), 4, "{looks:?}");
        assert_eq!(in_flight.into_inner().unwrap().last(), Some(&0));
    }

    /// The example of the Standard Webhooks specification.
    #[test]
    fn signs_like_the_specification() {
        let sig = sign(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            r#"{"test": 2432232314}"#,
        )
        .unwrap();
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn sealed_secrets_open_only_with_their_key_and_on_their_row() {
        let key = SealingKey::parse(&B64.encode([7u8; 32])).unwrap();
        let other = SealingKey::parse(&B64.encode([8u8; 32])).unwrap();
        let (keys, others, none) = (
            SealingKeys::new(key.clone()),
            SealingKeys::new(other),
            SealingKeys::default(),
        );
        let (row, another_row) = (Uuid::now_v7(), Uuid::now_v7());
        let secret = new_secret();
        let sealed = seal(&keys, row, &secret);
        assert!(sealed.starts_with("sealed:v1:"), "{sealed}");
        assert!(!sealed.contains(secret.trim_start_matches("whsec_")));
        assert_ne!(
            sealed,
            seal(&keys, row, &secret),
            "a fresh nonce every time"
        );
        assert_eq!(open(&keys, row, &sealed).as_deref(), Some(secret.as_str()));
        assert_eq!(open(&others, row, &sealed), None, "another key");
        assert_eq!(
            open(&keys, another_row, &sealed),
            None,
            "copied to another row"
        );
        assert_eq!(open(&none, row, &sealed), None, "no key");
        let mut tampered = sealed.clone();
        tampered.replace_range(tampered.len() - 4.., "AAAA");
        assert_eq!(open(&keys, row, &tampered), None);
        // Stored before a key was set: as it is, with or without a key.
        assert_eq!(seal(&none, row, &secret), secret);
        assert_eq!(open(&keys, row, &secret).as_deref(), Some(secret.as_str()));
        assert_eq!(open(&none, row, &secret).as_deref(), Some(secret.as_str()));
        // Keys are exactly 32 bytes of base64.
        assert!(SealingKey::parse(&B64.encode([1u8; 31])).is_none());
        assert!(SealingKey::parse("not base64").is_none());
        assert_eq!(format!("{key:?}"), "SealingKey(***)");
    }

    /// A change of key: the new key seals, the old one still opens what it sealed, and
    /// `reseal_bytes` moves a value to the new key (or out of sealing, with no current key).
    #[test]
    fn old_keys_open_and_reseal_moves_values_to_the_current_key() {
        let old = SealingKey::parse(&B64.encode([7u8; 32])).unwrap();
        let new = SealingKey::parse(&B64.encode([9u8; 32])).unwrap();
        let before = SealingKeys::new(old.clone());
        let during = SealingKeys {
            current: Some(new.clone()),
            old: vec![old.clone()],
        };
        let after = SealingKeys::new(new);
        let row = Uuid::now_v7();
        let aad = row.as_bytes();
        let sealed_old = seal_bytes(&before, aad, b"whsec_x");
        assert_eq!(
            open_bytes(&during, aad, &sealed_old).as_deref(),
            Some(&b"whsec_x"[..])
        );
        assert_eq!(open_bytes(&after, aad, &sealed_old), None);

        let Resealed::Changed(moved) = reseal_bytes(&during, aad, &sealed_old) else {
            panic!("an old key's value is sealed again");
        };
        assert_eq!(
            open_bytes(&after, aad, &moved).as_deref(),
            Some(&b"whsec_x"[..])
        );
        assert_eq!(
            open_bytes(&before, aad, &moved),
            None,
            "not with the old key any more"
        );
        assert_eq!(reseal_bytes(&during, aad, &moved), Resealed::Current);
        // A plain value gets sealed; an unknown key's value is reported, not replaced.
        let Resealed::Changed(sealed_plain) = reseal_bytes(&after, aad, b"whsec_y") else {
            panic!("a plain value is sealed");
        };
        assert_eq!(
            open_bytes(&after, aad, &sealed_plain).as_deref(),
            Some(&b"whsec_y"[..])
        );
        assert_eq!(reseal_bytes(&before, aad, &moved), Resealed::Unreadable);
        assert_eq!(
            reseal_bytes(&during, Uuid::now_v7().as_bytes(), &moved),
            Resealed::Unreadable
        );
        // Without a current key, old keys unseal: the value is stored as it is.
        let unsealing = SealingKeys {
            current: None,
            old: vec![old],
        };
        assert_eq!(
            reseal_bytes(&unsealing, aad, &sealed_old),
            Resealed::Changed(b"whsec_x".to_vec())
        );
        assert_eq!(reseal_bytes(&unsealing, aad, b"whsec_x"), Resealed::Current);
    }

    #[test]
    fn rotation_signs_with_both_secrets_for_a_while() {
        let now = OffsetDateTime::now_utc();
        let mut e = WebhookEndpoint {
            id: uuid::Uuid::nil(),
            provider_id: uuid::Uuid::nil(),
            url: "https://example.com".into(),
            events: None,
            secret: new_secret(),
            previous_secret: Some(new_secret()),
            previous_secret_expires_at: Some(now + time::Duration::hours(24)),
            created_at: now,
            circuit: Default::default(),
        };
        let both = signature_header(&e, now, "m", 1, "{}").unwrap();
        assert_eq!(both.split(' ').count(), 2);
        assert!(both.starts_with(&sign(&e.secret, "m", 1, "{}").unwrap()));
        e.previous_secret_expires_at = Some(now - time::Duration::seconds(1));
        assert_eq!(
            signature_header(&e, now, "m", 1, "{}")
                .unwrap()
                .split(' ')
                .count(),
            1
        );
        assert!(new_secret().starts_with("whsec_"));
        assert_eq!(key_of(&new_secret()).unwrap().len(), 32);
    }
}

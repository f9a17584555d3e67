//! The background jobs of an instance ([`spawn`]): every [`HEARTBEAT`] it says it is alive and
//! counts the live instances ([`crate::instances`]), and it runs the pruning job, on one
//! instance at a time (a lease in the database) and once per `FILING_PRUNE_INTERVAL_SECS`.

use std::sync::Arc;

use crate::instances::{HEARTBEAT, LIVE_FOR};
use crate::state::AppState;

/// The lease's name of the pruning job.
const PRUNE: &str = "prune";

use crate::clock::{epoch_micros as now_us, micros};

/// One heartbeat: records this instance and counts the live ones.
pub async fn heartbeat(state: &AppState) -> store::Result<usize> {
    let now = now_us();
    let live = state
        .repo
        .heartbeat(state.instances.id, now, now - micros(LIVE_FOR))
        .await?;
    let live = usize::try_from(live).unwrap_or(1).max(1);
    state.instances.set_live(live);
    state.uploads.set_instances(live);
    state.read_caps.set_instances(live);
    Ok(live)
}

/// The pruning job, when this instance gets its lease for the period: what it removed.
pub async fn prune_if_due(state: &AppState) -> store::Result<Option<store::Pruned>> {
    let now = now_us();
    let period = state.config.retention.prune_every;
    let got = state
        .repo
        .take_lease(PRUNE, state.instances.id, now, now + micros(period))
        .await?;
    if !got {
        return Ok(None);
    }
    let at = time::OffsetDateTime::now_utc();
    let r = &state.config.retention;
    let before = store::PruneBefore {
        events: at - r.events,
        webhook_messages: at - r.webhook_messages,
        // Answers are replayed for 24 hours; a day more for requests still in flight.
        idempotency_keys: at - time::Duration::hours(48),
        sessions_seen_us: now - micros(crate::console::session::IDLE),
        sessions_started_us: now - micros(crate::console::session::MAX_AGE),
    };
    let pruned = state.repo.prune(&before).await?;
    tracing::info!(
        events = pruned.events,
        webhook_messages = pruned.webhook_messages,
        idempotency_keys = pruned.idempotency_keys,
        console_sessions = pruned.console_sessions,
        "pruned what is past its retention"
    );
    state.metrics.pruned(&pruned);
    Ok(Some(pruned))
}

/// The heartbeat and the pruning job, until the returned handle is dropped or aborted.
pub fn spawn(state: Arc<AppState>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(HEARTBEAT);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if let Err(e) = heartbeat(&state).await {
                tracing::warn!(error = %e, "could not record this instance's heartbeat");
                continue;
            }
            if let Err(e) = prune_if_due(&state).await {
                tracing::warn!(error = %e, "the pruning job failed; it runs again next period");
            }
        }
    })
}

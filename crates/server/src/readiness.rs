//! Whether this instance is ready for traffic (`GET /readyz`): the database answers, every
//! migration the binary bundles is applied, and the document store answers. Each check is
//! bounded by `FILING_DB_TIMEOUT_SECS`; the reasons of a failure go to the log, the answer
//! names only the checks.

use serde::Serialize;
use utoipa::ToSchema;

use crate::state::AppState;

/// The state of one readiness check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadinessCheck {
    Ok,
    Failed,
    /// Not checked because a check it needs failed (the migrations, without a database).
    Unchecked,
}

/// What `/readyz` checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct ReadinessChecks {
    /// The database answers a query.
    pub database: ReadinessCheck,
    /// Every migration this binary bundles is applied, and none failed midway.
    pub migrations: ReadinessCheck,
    /// The document store (the folder, or the bucket) answers.
    pub documents: ReadinessCheck,
}

impl ReadinessChecks {
    /// The names of the checks that did not pass.
    pub fn failed(&self) -> Vec<&'static str> {
        [
            ("database", self.database),
            ("migrations", self.migrations),
            ("documents", self.documents),
        ]
        .into_iter()
        .filter(|(_, c)| *c != ReadinessCheck::Ok)
        .map(|(name, _)| name)
        .collect()
    }
}

/// Runs the checks (the database's and the document store's at the same time).
pub async fn check(state: &AppState) -> ReadinessChecks {
    let ((database, migrations), documents) = tokio::join!(database(state), documents(state));
    ReadinessChecks {
        database,
        migrations,
        documents,
    }
}

/// `what` within the database timeout; a failure or a timeout is logged with its reason.
async fn bounded<T, E: std::fmt::Display>(
    state: &AppState,
    what: &str,
    work: impl std::future::Future<Output = Result<T, E>>,
) -> Option<T> {
    let bound = state.config.db_timeout;
    match tokio::time::timeout(bound, work).await {
        Ok(Ok(done)) => Some(done),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "not ready: {what} failed");
            None
        }
        Err(_) => {
            tracing::warn!(?bound, "not ready: {what} did not answer in time");
            None
        }
    }
}

async fn database(state: &AppState) -> (ReadinessCheck, ReadinessCheck) {
    if bounded(state, "the database", state.repo.ping())
        .await
        .is_none()
    {
        return (ReadinessCheck::Failed, ReadinessCheck::Unchecked);
    }
    let migrations = match bounded(
        state,
        "reading the migrations",
        state.repo.migration_state(),
    )
    .await
    {
        Some(m) if m.is_current() => ReadinessCheck::Ok,
        Some(m) => {
            tracing::warn!(
                pending = ?m.pending(),
                failed = ?m.failed,
                "not ready: migrations this binary bundles are not applied (run `filing migrate`, or restart to apply them)"
            );
            ReadinessCheck::Failed
        }
        None => ReadinessCheck::Failed,
    };
    (ReadinessCheck::Ok, migrations)
}

async fn documents(state: &AppState) -> ReadinessCheck {
    match bounded(state, "the document store", state.documents.check()).await {
        Some(()) => ReadinessCheck::Ok,
        None => ReadinessCheck::Failed,
    }
}

//! What an operator watches of the store: whether the migrations the binary bundles are
//! applied (readiness), the cases by status, the webhook outbox's backlog and the use of the
//! connection pools (metrics); and, for a start that cannot reach the database, where it is
//! and one attempt to reach it that says why it failed.

use std::str::FromStr;
use std::time::Duration;

use domain::case::CaseKind;
use domain::company::Environment;
use time::OffsetDateTime;

use crate::{Result, StoreError};

/// The migrations a binary bundles against those its database records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationState {
    /// The versions this binary bundles, ascending.
    pub bundled: Vec<i64>,
    /// The versions the database records as applied successfully, ascending.
    pub applied: Vec<i64>,
    /// The versions the database records as begun and not finished (`success = false`).
    pub failed: Vec<i64>,
}

impl MigrationState {
    /// The bundled versions the database has not applied (or whose run failed).
    pub fn pending(&self) -> Vec<i64> {
        self.bundled
            .iter()
            .copied()
            .filter(|v| !self.applied.contains(v))
            .collect()
    }

    /// Applied versions this binary does not know: a newer release migrated the database.
    pub fn unknown(&self) -> Vec<i64> {
        self.applied
            .iter()
            .copied()
            .filter(|v| !self.bundled.contains(v))
            .collect()
    }

    /// Every bundled migration is applied and none failed.
    pub fn is_current(&self) -> bool {
        self.pending().is_empty() && self.failed.is_empty()
    }

    pub(crate) fn of(migrator: &sqlx::migrate::Migrator, rows: Vec<(i64, bool)>) -> Self {
        let mut bundled: Vec<i64> = migrator.iter().map(|m| m.version).collect();
        bundled.sort_unstable();
        let (mut applied, mut failed) = (Vec::new(), Vec::new());
        for (version, success) in rows {
            if success {
                applied.push(version);
            } else {
                failed.push(version);
            }
        }
        applied.sort_unstable();
        failed.sort_unstable();
        Self {
            bundled,
            applied,
            failed,
        }
    }
}

/// How many cases of one kind and environment are in one status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseCount {
    pub kind: CaseKind,
    pub environment: Environment,
    /// Of the same kind as `kind`.
    pub status: domain::case_state::CaseStatus,
    pub count: i64,
}

/// The webhook messages waiting for delivery (every endpoint of every provider together).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OutboxBacklog {
    /// Messages not yet delivered that will be tried (again).
    pub pending: i64,
    /// When the oldest of them was written; `None` when there is none.
    pub oldest_created_at: Option<OffsetDateTime>,
    /// Endpoints (not deleted) whose circuit is open: no attempts until its cool-down ends.
    pub circuits_open: i64,
    /// ... whose cool-down has ended: one attempt at a time.
    pub circuits_half_open: i64,
    /// Pending messages of the endpoints whose circuit is open (held back until it is not).
    pub held: i64,
}

/// The connections of one pool, now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUse {
    /// `writer` and `reads` (SQLite: the one writing connection, the reading pool);
    /// `pool` and `reads` (PostgreSQL: the pool, the connections of one-statement reads).
    pub pool: &'static str,
    /// Connections handed out.
    pub in_use: u32,
    /// Connections open and waiting to be handed out.
    pub idle: u32,
    /// The most the pool opens.
    pub max: u32,
}

impl PoolUse {
    pub(crate) fn of<DB: sqlx::Database>(name: &'static str, pool: &sqlx::Pool<DB>) -> Self {
        let open = pool.size();
        let idle = u32::try_from(pool.num_idle()).unwrap_or(u32::MAX);
        Self {
            pool: name,
            in_use: open.saturating_sub(idle),
            idle,
            max: pool.options().get_max_connections(),
        }
    }
}

/// Where a database URL points, for messages: `PostgreSQL at HOST:PORT (database NAME)` or
/// `the SQLite file PATH`; never the password.
pub fn describe_database(url: &str) -> String {
    if url.starts_with("sqlite:") {
        match sqlx::sqlite::SqliteConnectOptions::from_str(url) {
            Ok(o) => format!("the SQLite file {}", o.get_filename().display()),
            Err(_) => "an SQLite database".into(),
        }
    } else {
        match sqlx::postgres::PgConnectOptions::from_str(url) {
            Ok(o) => {
                let host = o.get_host();
                let at = if host.starts_with('/') {
                    format!("the socket in {host} (port {})", o.get_port())
                } else if host.contains(':') {
                    format!("[{host}]:{}", o.get_port())
                } else {
                    format!("{host}:{}", o.get_port())
                };
                match o.get_database() {
                    Some(db) => format!("PostgreSQL at {at} (database {db})"),
                    None => format!("PostgreSQL at {at}"),
                }
            }
            Err(_) => "a PostgreSQL server".into(),
        }
    }
}

/// One attempt to reach the PostgreSQL server of `url` within `timeout`, with the reason it
/// failed (refused, unknown host, no answer, a wrong password) rather than the pool's
/// "timed out" after its retries. Nothing to do for SQLite (a file opens or not).
pub async fn probe(url: &str, timeout: Duration) -> Result<()> {
    use sqlx::Connection;
    if url.starts_with("sqlite:") {
        return Ok(());
    }
    let options = sqlx::postgres::PgConnectOptions::from_str(url)
        .map_err(|e| StoreError::Config(e.to_string()))?;
    match tokio::time::timeout(timeout, sqlx::PgConnection::connect_with(&options)).await {
        Ok(Ok(conn)) => {
            let _ = conn.close().await;
            Ok(())
        }
        Ok(Err(e)) => Err(e.into()),
        Err(_) => Err(StoreError::Unavailable(format!(
            "no answer within {:.1} s",
            timeout.as_secs_f64()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_is_described_without_its_password() {
        assert_eq!(
            describe_database("postgres://filing:secret@db.internal:6432/filing?sslmode=require"),
            "PostgreSQL at db.internal:6432 (database filing)"
        );
        assert_eq!(
            describe_database("postgresql://filing@10.0.0.5/f"),
            "PostgreSQL at 10.0.0.5:5432 (database f)"
        );
        assert_eq!(
            describe_database("sqlite:///srv/filing/filing.db"),
            "the SQLite file /srv/filing/filing.db"
        );
    }

    #[test]
    fn pending_migrations_are_the_bundled_ones_not_applied() {
        let state = MigrationState {
            bundled: vec![1, 2, 3],
            applied: vec![1, 2, 4],
            failed: vec![],
        };
        assert_eq!((state.pending(), state.unknown()), (vec![3], vec![4]));
        assert!(!state.is_current());
        let newer = MigrationState {
            applied: vec![1, 2, 3, 4],
            ..state.clone()
        };
        assert!(
            newer.is_current(),
            "a newer release's migration is no failure"
        );
        let failed = MigrationState {
            failed: vec![4],
            ..newer
        };
        assert!(!failed.is_current());
    }
}

//! Connections of their own for reads of one statement, outside sqlx's pool.

use futures::future::BoxFuture;

use crate::{Result, StoreError};

/// Connections for reads of one statement (a case, a document, a key), kept outside sqlx's
/// pool: the pool pings a connection before handing it out and again, in a task of its own, when
/// it comes back, so a read through it costs three round trips to PostgreSQL instead of one
/// (ADR 0011: under GET load those round trips were most of the context switches).
///
/// Without a ping, a connection that died while idle (the server restarted, the network dropped
/// it) is found out by the read itself: a read that fails that way on a reused connection runs
/// again once on a newly opened one, which reads may (they change nothing). A read cancelled
/// midway drops its connection. Like the pool, connections are replaced after
/// [`Self::MAX_IDLE`] unused or [`Self::MAX_LIFETIME`] in all (so reads follow a failover), and
/// connecting is retried while the server refuses (restarting, too many connections).
///
/// Waiting for a connection, connecting and the statement together are bounded by the pool's
/// acquire timeout; past it the read is [`StoreError::Unavailable`]. The same bound is each
/// connection's `statement_timeout` and `lock_timeout`, so a read given up on here does not keep
/// a backend waiting (a lock held by a migration, say) while a new one takes its slot.
pub(crate) struct ReadConnections {
    options: sqlx::postgres::PgConnectOptions,
    pub(super) idle: std::sync::Mutex<Vec<Idle>>,
    /// At most this many connections exist (idle or in use).
    slots: tokio::sync::Semaphore,
    timeout: std::time::Duration,
}

/// An idle read connection and its age.
pub(super) struct Idle {
    conn: sqlx::PgConnection,
    opened: std::time::Instant,
    since: std::time::Instant,
}

impl ReadConnections {
    /// Connections per instance, beside the pool's 16: two cores keep no more than a few
    /// statements in flight.
    const MAX: usize = 8;
    /// sqlx's pool defaults.
    const MAX_IDLE: std::time::Duration = std::time::Duration::from_secs(10 * 60);
    const MAX_LIFETIME: std::time::Duration = std::time::Duration::from_secs(30 * 60);

    pub(super) fn new(
        options: sqlx::postgres::PgConnectOptions,
        timeout: std::time::Duration,
    ) -> Self {
        let millis = timeout.as_millis().max(1).to_string();
        let options = options.options([
            ("statement_timeout", millis.as_str()),
            ("lock_timeout", millis.as_str()),
        ]);
        Self {
            options,
            idle: std::sync::Mutex::new(Vec::new()),
            slots: tokio::sync::Semaphore::new(Self::MAX),
            timeout,
        }
    }

    /// The connections now: those reads hold, those kept idle, the most there may be.
    pub(crate) fn pool_use(&self) -> crate::observe::PoolUse {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).len();
        let held = Self::MAX.saturating_sub(self.slots.available_permits());
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        crate::observe::PoolUse {
            pool: "reads",
            in_use: count(held),
            idle: count(idle),
            max: count(Self::MAX),
        }
    }

    /// The most recently used idle connection that is not too old (older ones are closed).
    fn take_idle(&self) -> Option<(sqlx::PgConnection, std::time::Instant)> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(i) = idle.pop() {
            if i.since.elapsed() < Self::MAX_IDLE && i.opened.elapsed() < Self::MAX_LIFETIME {
                return Some((i.conn, i.opened));
            }
        }
        None
    }

    fn put_back(&self, conn: sqlx::PgConnection, opened: std::time::Instant) {
        self.idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Idle {
                conn,
                opened,
                since: std::time::Instant::now(),
            });
    }

    /// A new connection; while the server refuses them (starting, restarting, at its
    /// connection limit), tried again after 10 ms, 20 ms, ... up to 1 s apart, until the caller's
    /// timeout ends the wait.
    async fn connect(&self) -> sqlx::Result<sqlx::PgConnection> {
        use sqlx::Connection;
        let mut pause = std::time::Duration::from_millis(10);
        loop {
            match sqlx::PgConnection::connect_with(&self.options).await {
                Err(e) if refused_for_now(&e) => {
                    tracing::debug!(error = %e, "PostgreSQL refused a read connection; trying again");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(std::time::Duration::from_secs(1));
                }
                done => return done,
            }
        }
    }

    /// Runs `read` (one statement, no writes) on a connection of its own; see the type.
    pub(crate) async fn run<T>(
        &self,
        read: impl for<'c> Fn(&'c mut sqlx::PgConnection) -> BoxFuture<'c, sqlx::Result<T>>,
    ) -> Result<T> {
        let work = async {
            let _slot = self
                .slots
                .acquire()
                .await
                .map_err(|_| StoreError::Unavailable("read connections closed".into()))?;
            let mut retried = false;
            loop {
                // The second attempt takes a new connection: the other idle ones may have died
                // with the first (a server restart ends them all).
                let idle = if retried { None } else { self.take_idle() };
                let (mut conn, opened, reused) = match idle {
                    Some((conn, opened)) => (conn, opened, true),
                    None => (self.connect().await?, std::time::Instant::now(), false),
                };
                match read(&mut conn).await {
                    Ok(value) => {
                        self.put_back(conn, opened);
                        return Ok(value);
                    }
                    Err(e) if connection_lost(&e) => {
                        drop(conn);
                        if reused && !retried {
                            retried = true;
                            tracing::debug!(error = %e, "idle read connection was lost; reading again on a new one");
                            continue;
                        }
                        return Err(e.into());
                    }
                    Err(e) => {
                        self.put_back(conn, opened);
                        return Err(e.into());
                    }
                }
            }
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(done) => done,
            Err(_) => Err(StoreError::Unavailable(format!(
                "no answer from PostgreSQL within {:?}",
                self.timeout
            ))),
        }
    }
}

/// A database error as PostgreSQL's, if it is one.
fn pg_error(e: &sqlx::Error) -> Option<&sqlx::postgres::PgDatabaseError> {
    match e {
        sqlx::Error::Database(db) => db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>(),
        _ => None,
    }
}

/// Whether an error means the connection is gone (as opposed to a statement that failed on a
/// working connection): I/O, TLS and protocol errors, SQLSTATE class 08, and any error of
/// severity `FATAL` or `PANIC` (the server ended the session: shutdown `57P01`..`57P03`, idle
/// session timeout `57P05`, a terminated backend, ...).
fn connection_lost(e: &sqlx::Error) -> bool {
    use sqlx::postgres::PgSeverity;
    match e {
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::Protocol(_) => true,
        _ => pg_error(e).is_some_and(|db| {
            db.code().starts_with("08")
                || matches!(db.severity(), PgSeverity::Fatal | PgSeverity::Panic)
        }),
    }
}

/// Whether a failed connect is worth trying again shortly, as sqlx's pool does: refused or reset
/// (the server is not listening yet), too many connections (`53300`), starting up (`57P03`).
fn refused_for_now(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(io) => matches!(
            io.kind(),
            std::io::ErrorKind::ConnectionRefused
                | std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::ConnectionAborted
        ),
        _ => pg_error(e).is_some_and(|db| matches!(db.code(), "53300" | "57P03")),
    }
}

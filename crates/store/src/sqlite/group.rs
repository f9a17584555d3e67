//! Group commit: creates that arrive while one is being written are written together, in one
//! transaction with one commit, through the rusqlite writer (`write.rs`).

use sqlx::SqlitePool;

use super::write::DirectWriter;
use crate::new_case::NewCase;
use crate::{Result, StoreError};

/// The direct create path: the rusqlite writer and the queue of [`write_creates`].
pub(super) struct Direct {
    /// For tests (the queue's task holds it).
    #[cfg(test)]
    pub(super) writer: std::sync::Arc<DirectWriter>,
    creates: tokio::sync::mpsc::Sender<Create>,
}

/// A case to create and where its outcome goes.
struct Create {
    case: NewCase,
    outcome: tokio::sync::oneshot::Sender<Result<()>>,
}

/// Most creates written in one transaction.
const MAX_GROUP: usize = 64;

/// The task behind [`Direct::create`]: takes every create waiting (at most
/// [`MAX_GROUP`]), waits for the writer pool's only connection, writes them in one transaction
/// on a blocking thread (`DirectWriter::create_all`) and answers each. While one group is
/// written the next gathers, so under load a commit (and its `fsync`) serves many creates,
/// and the line for SQLite's one writer moves a group at a time rather than a create at a time.
/// A create's answer is sent only after its transaction has ended; a caller that stopped
/// waiting does not stop its write. The task ends with the repository (its queue's sender).
async fn write_creates(
    writer: std::sync::Arc<DirectWriter>,
    turns: SqlitePool,
    mut queue: tokio::sync::mpsc::Receiver<Create>,
) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    while queue.recv_many(&mut group, MAX_GROUP).await > 0 {
        let creates = std::mem::take(&mut group);
        let turn = match turns.acquire().await {
            Ok(turn) => turn,
            // A timed-out or closed pool: unavailable, as `From<sqlx::Error>` has it.
            Err(e) => {
                for c in creates {
                    let _ = c.outcome.send(Err(StoreError::Unavailable(e.to_string())));
                }
                continue;
            }
        };
        let writer = writer.clone();
        let written = tokio::task::spawn_blocking(move || {
            let (cases, mut outcomes): (Vec<NewCase>, Vec<_>) = creates
                .into_iter()
                .map(|c| (c.case, Some(c.outcome)))
                .unzip();
            let cases: Vec<&NewCase> = cases.iter().collect();
            // Each answer goes out as soon as its case's transaction has ended.
            writer.create_all(&cases, |i, outcome| {
                if let Some(sender) = outcomes.get_mut(i).and_then(Option::take) {
                    let _ = sender.send(outcome);
                }
            });
            drop(turn);
        })
        .await;
        // `create_all` answers every case, a panicking one included; should the task fail
        // anyway, the senders it dropped tell their callers that the outcome is unknown.
        if let Err(e) = written {
            tracing::error!(error = %e, "the SQLite create writer failed");
        }
    }
}

impl Direct {
    /// Starts the queue's task: the rusqlite writer of the database file at `path`, which
    /// takes its turns on `turns`, the sqlx writer pool's only connection.
    pub(super) fn start(
        path: std::path::PathBuf,
        busy_timeout: std::time::Duration,
        turns: SqlitePool,
    ) -> Self {
        let writer = std::sync::Arc::new(DirectWriter::new(path, busy_timeout));
        let (creates, queue) = tokio::sync::mpsc::channel(4 * MAX_GROUP);
        tokio::spawn(write_creates(writer.clone(), turns, queue));
        Direct {
            #[cfg(test)]
            writer,
            creates,
        }
    }

    /// Writes a new case through the group-commit writer ([`write_creates`]).
    pub(super) async fn create(&self, case: NewCase) -> Result<()> {
        let (outcome, answer) = tokio::sync::oneshot::channel();
        if self.creates.send(Create { case, outcome }).await.is_err() {
            return Err(StoreError::Unavailable(
                "the SQLite create writer has stopped".into(),
            ));
        }
        answer.await.unwrap_or_else(|_| {
            Err(StoreError::Corrupt(
                "the SQLite create writer stopped before answering".into(),
            ))
        })
    }
}

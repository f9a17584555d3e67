//! What SQLite and PostgreSQL share: most statements read the same in both dialects, so they
//! are written once here, as code generic over the dialect's sqlx [`Database`](sqlx::Database)
//! on its pools ([`Shared`]). What differs per dialect (a few parts of the SQL text, the
//! connections reads use, the copy of a case's children PostgreSQL keeps) is its [`Dialect`]
//! implementation, in `sqlite/` and `postgres/`. One `impl Repository` (`repository.rs`) serves
//! both backends: it calls into [`Shared`], and into the backend's own [`Backend`] methods for
//! the create, the trade read, the migrations and the pools.

#[macro_use]
pub(crate) mod text;
mod accounts;
mod cases;
mod children;
pub(crate) mod event_log;
pub(crate) mod events;
mod instances;
#[cfg(test)]
pub(crate) mod list_tests;
pub(crate) mod lists;
mod observe;
mod repository;
#[cfg(test)]
pub(crate) mod webhook_tests;
mod webhooks;

pub(crate) use repository::Backend;

use futures::future::BoxFuture;

use crate::Result;

/// A dialect's differences from the statements written here.
pub(crate) trait Dialect:
    sqlx::Database<Arguments: sqlx::IntoArguments<Self>> + sqlx::database::HasStatementCache
{
    /// `"sqlite"` or `"postgres"` ([`AccountStore::backend`](crate::AccountStore::backend)).
    const BACKEND: &'static str;

    /// The dialect's migrations.
    const MIGRATOR: &'static sqlx::migrate::Migrator;

    /// A comparison of a case's `created_at` (`t`) with a parameter bound as RFC 3339 text in
    /// UTC, as (column, parameter) expressions, `?` standing for the parameter's number. SQLite
    /// stores the text, whose fraction has no trailing zeros: without the `Z` such texts order
    /// as their instants do, with it `…:05Z` would sort after `…:05.5Z`.
    const CREATED_AT: (&'static str, &'static str);

    /// The conditions that a case (`t`) of `kind` contains each of `words` (those of a
    /// [`CaseSearch::Text`](crate::CaseSearch::Text), case-insensitively: lower-cased by
    /// Unicode's rules), each with the one value it binds, `$?` standing for its number.
    fn text_search(kind: crate::CaseKind, words: &[&str]) -> Vec<(String, String)>;

    /// What reads of one statement run on, beside the pool (see [`Dialect::read`]).
    type Reads: Send + Sync;

    /// The statements whose text differs by dialect.
    const SQL: text::DialectSql;

    /// Runs a read of one statement (SQLite: on a connection of the pool; PostgreSQL: on the
    /// connections of `reads`).
    fn read<'a, T: Send + 'a>(
        reads: &'a Self::Reads,
        pool: &'a sqlx::Pool<Self>,
        read: impl Read<Self, T> + 'a,
    ) -> BoxFuture<'a, Result<T>>;

    /// Brings the dialect's copy of these cases' children up to date inside the transaction of
    /// `conn`: every transaction that changes a case's history, documents or identity
    /// verifications ends with it (PostgreSQL keeps them in `case_children`; SQLite builds them
    /// in the read and has nothing to do: the default).
    fn refresh_children<'c>(
        _conn: &'c mut Self::Connection,
        _cases: &'c [uuid::Uuid],
    ) -> BoxFuture<'c, Result<()>> {
        Box::pin(async { Ok(()) })
    }

    /// Writes the copy of a new case's children, for the create through sqlx
    /// ([`Shared::create_in_transaction`]); by default nothing, as [`Dialect::refresh_children`].
    #[cfg(test)]
    fn children_created<'c>(
        _conn: &'c mut Self::Connection,
        _case: uuid::Uuid,
        _documents: &'c [crate::DocumentRecord],
        _history: &'c [crate::StatusChange],
    ) -> BoxFuture<'c, Result<()>> {
        Box::pin(async { Ok(()) })
    }

    /// The rows a statement changed.
    fn rows_affected(done: &Self::QueryResult) -> u64;
}

/// A read of one statement on a connection of `DB`, giving a `T`.
pub(crate) trait Read<DB: sqlx::Database, T>:
    for<'c> Fn(&'c mut DB::Connection) -> BoxFuture<'c, sqlx::Result<T>> + Send + Sync
{
}

impl<DB: sqlx::Database, T, F> Read<DB, T> for F where
    F: for<'c> Fn(&'c mut DB::Connection) -> BoxFuture<'c, sqlx::Result<T>> + Send + Sync
{
}

/// A dialect's pools, with the statements both dialects share as methods.
pub(crate) struct Shared<DB: Dialect> {
    /// Reads (and writes that need no turn of their own).
    pub(crate) pool: sqlx::Pool<DB>,
    /// Writes (SQLite: its one connection, where they queue; PostgreSQL: the same pool).
    pub(crate) writer: sqlx::Pool<DB>,
    pub(crate) reads: DB::Reads,
}

impl<DB: Dialect> Shared<DB> {
    /// Runs a read of one statement where the dialect runs them ([`Dialect::read`]).
    pub(crate) async fn read<T: Send>(&self, read: impl Read<DB, T>) -> Result<T> {
        DB::read(&self.reads, &self.pool, read).await
    }
}

/// An environment as stored, or [`StoreError::Corrupt`](crate::StoreError::Corrupt).
pub(crate) fn environment(text: &str) -> Result<domain::company::Environment> {
    domain::company::Environment::parse(text)
        .ok_or_else(|| crate::StoreError::Corrupt(format!("unknown environment {text:?}")))
}

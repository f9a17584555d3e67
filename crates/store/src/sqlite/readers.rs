//! The trade registration read on the calling thread, through rusqlite (see `mod.rs`).

use super::SQL;
use crate::{Result, StoreError, TradeRegistrationRecord};

/// Read-only connections used synchronously, at most `MAX_IDLE` kept; `None` for an in-memory
/// database, which another connection could not see.
pub(super) struct Readers {
    pub(super) path: std::path::PathBuf,
    pub(super) idle: std::sync::Mutex<Vec<rusqlite::Connection>>,
}

impl Readers {
    const MAX_IDLE: usize = 8;

    fn open(&self) -> rusqlite::Result<rusqlite::Connection> {
        use rusqlite::OpenFlags;
        let conn = rusqlite::Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // Never sleep on the calling (async) thread: busy means "use the pool".
        conn.busy_timeout(std::time::Duration::ZERO)?;
        Ok(conn)
    }

    /// Runs `f` on an idle connection (opened when none is idle) and puts it back.
    fn with<T>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let taken = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match taken {
            Some(c) => c,
            None => self.open()?,
        };
        let out = f(&conn);
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < Self::MAX_IDLE {
            idle.push(conn);
        }
        out
    }

    /// A trade registration read on the calling thread; `None` when this cannot be done now
    /// (the database is busy, or the read failed), and the caller reads through the pool.
    pub(super) fn trade(&self, id: uuid::Uuid) -> Option<Result<Option<TradeRegistrationRecord>>> {
        match self.with(|conn| {
            let mut statement = conn.prepare_cached(SQL.trade)?;
            let mut rows = statement.query([id.as_bytes().as_slice()])?;
            match rows.next()? {
                Some(row) => Ok(Some(trade_from_row(row, id))),
                None => Ok(None),
            }
        }) {
            Ok(Some(decoded)) => Some(decoded.map(Some)),
            Ok(None) => Some(Ok(None)),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) =>
            {
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, "on-thread SQLite read failed; reading through the pool");
                None
            }
        }
    }
}

/// Decodes a row of `TRADE_SELECT` as sqlx stores it in SQLite: ids as 16-byte blobs,
/// timestamps as RFC 3339 text, JSON as text.
fn trade_from_row(row: &rusqlite::Row<'_>, id: uuid::Uuid) -> Result<TradeRegistrationRecord> {
    use rusqlite::types::ValueRef;
    let corrupt = |what: &str, e: &dyn std::fmt::Display| {
        StoreError::Corrupt(format!("trade registration {id}: {what}: {e}"))
    };
    let get = |name: &str| row.get_ref(name).map_err(|e| corrupt(name, &e));
    let uuid = |name: &str| -> Result<uuid::Uuid> {
        match get(name)? {
            ValueRef::Blob(b) => uuid::Uuid::from_slice(b).map_err(|e| corrupt(name, &e)),
            other => Err(corrupt(name, &format!("{:?}", other.data_type()))),
        }
    };
    let text = |name: &str| -> Result<Option<&str>> {
        match get(name)? {
            ValueRef::Null => Ok(None),
            ValueRef::Text(t) | ValueRef::Blob(t) => std::str::from_utf8(t)
                .map(Some)
                .map_err(|e| corrupt(name, &e)),
            other => Err(corrupt(name, &format!("{:?}", other.data_type()))),
        }
    };
    let required =
        |name: &str| -> Result<&str> { text(name)?.ok_or_else(|| corrupt(name, &"NULL")) };
    let json = |name: &str| -> Result<Option<serde_json::Value>> {
        text(name)?
            .map(|t| serde_json::from_str(t).map_err(|e| corrupt(name, &e)))
            .transpose()
    };
    let int = |name: &str| -> Result<Option<i64>> {
        match get(name)? {
            ValueRef::Null => Ok(None),
            ValueRef::Integer(i) => Ok(Some(i)),
            other => Err(corrupt(name, &format!("{:?}", other.data_type()))),
        }
    };
    let environment = required("environment")?;
    let provider_id = uuid("provider_id")?;
    Ok(TradeRegistrationRecord {
        head: crate::CaseHead {
            id: uuid("id")?,
            company_id: uuid("company_id")?,
            provider_id,
            environment: domain::company::Environment::parse(environment)
                .ok_or_else(|| corrupt("environment", &environment))?,
            package: crate::rows::named(
                "package",
                required("package")?,
                domain::trade::Package::parse,
            )?,
            status: crate::rows::status(required("status")?)?,
            record: json("record")?.ok_or_else(|| corrupt("record", &"NULL"))?,
            created_at: crate::rows::timestamp(required("created_at")?)?,
            documents: crate::rows::documents_from_json(required("documents_json")?, id)?,
            history: crate::rows::history_from_json(
                crate::CaseKind::Trade,
                required("history_json")?,
                &crate::rows::actor_names(
                    provider_id,
                    text("provider_name")?.map(str::to_string),
                    text("operators_json")?,
                )?,
            )?,
        },
        price_cents: int("price_cents")?.ok_or_else(|| corrupt("price_cents", &"NULL"))?,
        city_fee_cents: int("city_fee_cents")?,
        is_paid: int("is_paid")?.ok_or_else(|| corrupt("is_paid", &"NULL"))? != 0,
        trade_office: json("trade_office")?,
        trade_office_candidates: json("trade_office_candidates")?,
        trade_office_entry: match text("office_key")? {
            Some(key) => Some(crate::TradeOfficeEntry {
                key: key.to_string(),
                name: required("office_name")?.to_string(),
                address: text("office_address")?.map(str::to_string),
                email: text("office_email")?.map(str::to_string),
                phone: text("office_phone")?.map(str::to_string),
                website: text("office_website")?.map(str::to_string),
                updated_at: crate::rows::timestamp(required("office_updated_at")?)?,
            }),
            None => None,
        },
        source_product: text("source_product")?.map(str::to_string),
        company_name: text("company_name")?.map(str::to_string),
        company_legal_form: text("company_legal_form")?.map(str::to_string),
        identity_verifications: crate::rows::verifications_from_json(required("verified_json")?)?,
    })
}

//! The SQL text both dialects share (both accept `$1` placeholders), the small `concat!`
//! helpers that put a dialect's parts into the statements that differ, and `shared_impl!`,
//! the one statement of what the code generic over both dialects needs of sqlx.

/// An API key record; the statement of `insert_api_key` and of the capped
/// `insert_company_api_key`.
pub(crate) const INSERT_API_KEY: &str = "INSERT INTO api_keys (prefix, hash, kind, company_id, \
     operator_id, created_at, revoked_at, environment) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

/// Binds: id, name, provider id, environment, legal form, registration number, business
/// address (JSON), created at.
pub(crate) const INSERT_CLIENT_COMPANY: &str = "INSERT INTO companies (id, kind, name, provider_id, \
     environment, legal_form, registration_number, business_address, created_at) \
     VALUES ($1, 'client', $2, $3, $4, $5, $6, $7, $8)";

// The statements of a case create, written once for both dialects: run as they are by SQLite's
// create (`sqlite/write.rs`), made parts of one statement by PostgreSQL's (`postgres/create.rs`);
// each comment names the values in bind order.

/// id, company id, provider id, environment, package, status, record (JSON), price (cents),
/// is paid, trade office (JSON), candidates (JSON), created at (also `updated_at`).
pub(crate) const INSERT_TRADE: &str = "INSERT INTO trade_registrations (id, company_id, \
     provider_id, environment, package, status, record, price_cents, is_paid, trade_office, \
     trade_office_candidates, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)";

/// id, company id, provider id, environment, package, legal form, status, record (JSON), tax
/// office number, tax office lookup (JSON), created at (also `updated_at`), list key, public id.
pub(crate) const INSERT_TAX: &str = "INSERT INTO tax_registrations (id, company_id, provider_id, \
     environment, package, legal_form, status, record, tax_office_number, tax_office_lookup, \
     created_at, updated_at, list_key, public_id) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12, $13)";

/// The fields of a [`crate::DocumentRecord`] in declaration order.
pub(crate) const INSERT_DOCUMENT: &str = "INSERT INTO documents (id, case_id, case_kind, \
     owner_index, doc_type, name, storage_key, content_type, size, sha256, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

/// case id, case kind, then the fields of a [`crate::StatusChange`] in declaration order.
pub(crate) const INSERT_HISTORY: &str = "INSERT INTO status_history (case_id, case_kind, status, \
     previous_status, actor, reason, at) VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// A field-change entry: case id, case kind, status (also `previous_status`: the entry keeps
/// the case's status), actor, time, changes (JSON).
pub(crate) const INSERT_FIELD_CHANGES: &str = "INSERT INTO status_history (case_id, case_kind, \
     status, previous_status, actor, reason, at, changes) VALUES ($1, $2, $3, $3, $4, NULL, $5, $6)";

/// Gives up an endpoint's pending messages (`$1` the time, `$2` the endpoint): when it is
/// deleted, and when the worker finds messages a create queued for it as the delete committed.
pub(crate) const GIVE_UP_PENDING: &str = "UPDATE webhook_messages SET state = 'failed', \
     finished_at = $1, locked_until_us = NULL WHERE endpoint_id = $2 AND state = 'pending'";

/// The fields of an [`EventMessage`](super::events::EventMessage): id, endpoint id, case id,
/// event type, body, next attempt (µs), created at.
pub(crate) const INSERT_WEBHOOK_MESSAGE: &str = "INSERT INTO webhook_messages (id, endpoint_id, \
     case_id, event_type, payload, state, attempts, next_attempt_us, created_at) \
     VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $7)";

/// The fields of an [`crate::IdempotentAnswer`]: status, body, scope, key. Completes the claim
/// only while it is still this request's (`state = 'in-flight'`).
pub(crate) const COMPLETE_CLAIM: &str = "UPDATE idempotency_keys SET state = 'done', \
     response_status = $1, response_body = $2 \
     WHERE scope = $3 AND key = $4 AND state = 'in-flight'";

/// The case and the endpoints of its provider that may receive its events (binds: case id), in
/// the order their messages are written; one row with no endpoint when the provider has none
/// (the event log takes the case from it); columns as in [`EventTarget`](super::events::EventTarget).
pub(crate) fn event_targets_query(kind: crate::CaseKind) -> &'static str {
    if kind == crate::CaseKind::Tax {
        "SELECT c.public_id, c.provider_id, c.company_id, c.status, c.environment, \
         c.record ->> 'client_reference' AS client_reference, e.id AS endpoint_id, e.events \
         FROM tax_registrations c LEFT JOIN webhook_endpoints e \
         ON e.provider_id = c.provider_id AND e.deleted_at IS NULL WHERE c.id = $1 \
         ORDER BY e.created_at, e.id"
    } else {
        "SELECT c.id AS public_id, c.provider_id, c.company_id, c.status, c.environment, \
         c.record ->> 'client_reference' AS client_reference, e.id AS endpoint_id, e.events \
         FROM trade_registrations c LEFT JOIN webhook_endpoints e \
         ON e.provider_id = c.provider_id AND e.deleted_at IS NULL WHERE c.id = $1 \
         ORDER BY e.created_at, e.id"
    }
}

/// An entry of the event log (`LoggedEvent`'s fields: id, provider, company, case id as the
/// provider knows it, environment, type, body, time).
pub(crate) const INSERT_EVENT: &str = "INSERT INTO events (id, provider_id, company_id, case_id, \
     environment, event_type, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

/// The statements whose text differs by dialect, built by `dialect_sql!` from the dialect's
/// parts.
pub(crate) struct DialectSql {
    /// A trade registration with its company, history, documents, identity verifications and
    /// the directory entry of its trade office (`office_*`, NULL when the directory has none).
    pub trade: &'static str,
    /// A tax registration with its history and documents, by key.
    pub tax_by_id: &'static str,
    /// ... by the id its provider knows it by, among the provider's cases.
    pub tax_by_provider: &'static str,
    /// ... by that id, for a client company.
    pub tax_by_company: &'static str,
    /// Leases due webhook messages (see `claim_webhook_messages`).
    pub claim_messages: &'static str,
    /// Run before the claim in its transaction, so that instances' claims take turns (each
    /// sees the leases of the one before, and the limits in flight hold for all together);
    /// empty when the dialect's writers take turns anyway.
    pub claim_turn: &'static str,
}

/// An `impl<DB: Dialect> Shared<DB>` block of these items, bounded by what the statements
/// written once for both dialects (`sql/*.rs`) need of sqlx: running on a connection, reading
/// columns by name and position, and binding and decoding the Rust types they use. Both
/// dialects meet every bound; one list of them serves every file (Rust does not imply bounds on
/// other types than `Self` from a trait's `where`, so an alias trait could not carry them).
/// Called with parentheses, so that rustfmt formats the items.
macro_rules! shared_impl {
    (@bounds [$($head:tt)*] [$($pre:tt)*] $($item:tt)*) => {
        $($head)*
        where
            $($pre)*
            for<'c> &'c mut DB::Connection: ::sqlx::Executor<'c, Database = DB>,
            for<'r> &'r str: ::sqlx::ColumnIndex<DB::Row>,
            for<'r> usize: ::sqlx::ColumnIndex<DB::Row>,
            for<'q> ::uuid::Uuid: ::sqlx::Encode<'q, DB> + ::sqlx::Decode<'q, DB> + ::sqlx::Type<DB>,
            for<'q> String: ::sqlx::Encode<'q, DB> + ::sqlx::Decode<'q, DB> + ::sqlx::Type<DB>,
            for<'q> &'q str: ::sqlx::Encode<'q, DB> + ::sqlx::Type<DB>,
            for<'q> i32: ::sqlx::Encode<'q, DB> + ::sqlx::Decode<'q, DB> + ::sqlx::Type<DB>,
            for<'q> i64: ::sqlx::Encode<'q, DB> + ::sqlx::Decode<'q, DB> + ::sqlx::Type<DB>,
            for<'q> bool: ::sqlx::Encode<'q, DB> + ::sqlx::Decode<'q, DB> + ::sqlx::Type<DB>,
            for<'q> Vec<u8>: ::sqlx::Encode<'q, DB> + ::sqlx::Decode<'q, DB> + ::sqlx::Type<DB>,
            for<'q> &'q [u8]: ::sqlx::Encode<'q, DB> + ::sqlx::Type<DB>,
            for<'q> ::time::OffsetDateTime:
                ::sqlx::Encode<'q, DB> + ::sqlx::Decode<'q, DB> + ::sqlx::Type<DB>,
            for<'q> ::sqlx::types::Json<&'q serde_json::Value>:
                ::sqlx::Encode<'q, DB> + ::sqlx::Type<DB>,
            for<'q> ::sqlx::types::Json<serde_json::Value>:
                ::sqlx::Encode<'q, DB> + ::sqlx::Decode<'q, DB> + ::sqlx::Type<DB>,
            for<'q> ::sqlx::types::Json<Vec<String>>:
                ::sqlx::Encode<'q, DB> + ::sqlx::Decode<'q, DB> + ::sqlx::Type<DB>,
            for<'q> Option<::uuid::Uuid>: ::sqlx::Encode<'q, DB>,
            for<'q> Option<String>: ::sqlx::Encode<'q, DB>,
            for<'q> Option<&'q str>: ::sqlx::Encode<'q, DB>,
            for<'q> Option<i32>: ::sqlx::Encode<'q, DB>,
            for<'q> Option<i64>: ::sqlx::Encode<'q, DB>,
            for<'q> Option<Vec<u8>>: ::sqlx::Encode<'q, DB>,
            for<'q> Option<::time::OffsetDateTime>: ::sqlx::Encode<'q, DB>,
            for<'q> Option<::sqlx::types::Json<&'q serde_json::Value>>: ::sqlx::Encode<'q, DB>,
            for<'q> Option<::sqlx::types::Json<serde_json::Value>>: ::sqlx::Encode<'q, DB>,
            for<'q> Option<::sqlx::types::Json<Vec<String>>>: ::sqlx::Encode<'q, DB>,
        {
            $($item)*
        }
    };
    ($($item:tt)*) => {
        shared_impl!(@bounds [impl<DB: $crate::sql::Dialect> $crate::sql::Shared<DB>] [] $($item)*);
    };
}

/// An `impl` of the role trait `$role` (`crate::repository`) for every [`Backend`](crate::sql::Backend), with the
/// bounds of `shared_impl!`: the role's SQL, written once for both dialects; `self.sql()` is the
/// backend's [`Shared`](crate::sql::Shared). Called with parentheses and the role as an item
/// (`type Role = CaseStore;`), so that rustfmt formats the items.
macro_rules! role_impl {
    (type Role = $role:ident; $($item:tt)*) => {
        shared_impl!(
            @bounds
            [#[::async_trait::async_trait] impl<B, DB> $crate::$role for B]
            [B: $crate::sql::Backend<DB = DB>, DB: $crate::sql::Dialect,]
            $($item)*
        );
    };
}

/// The columns of a `trade_offices` row (alias `o`) as `rows::Columns::trade_office`
/// reads them.
macro_rules! office_columns {
    () => {
        "o.key AS office_key, o.name AS office_name, o.address AS office_address, \
         o.email AS office_email, o.phone AS office_phone, o.website AS office_website, \
         o.updated_at AS office_updated_at"
    };
}

/// The endpoints (not deleted) that `$filter`, a condition with an optional `ORDER BY`, selects,
/// with the columns of [`Columns::endpoint`](crate::rows::Columns::endpoint).
macro_rules! endpoints_where {
    ($filter:literal) => {
        concat!(
            "SELECT id, provider_id, url, events, secret, previous_secret, \
             previous_secret_expires_at, created_at, consecutive_failures, \
             circuit_open_until_us FROM webhook_endpoints \
             WHERE deleted_at IS NULL AND ",
            $filter
        )
    };
}

/// The columns of a tax registration read (alias `t`), before its children; with its
/// provider's name (`provider_name`, from `provider_join!`).
macro_rules! tax_columns {
    () => {
        "SELECT t.id, t.public_id, t.company_id, t.provider_id, t.environment, t.package, \
         t.legal_form, t.status, t.record, t.tax_office_number, t.tax_office_lookup, \
         t.tax_number, t.created_at, pc.name AS provider_name, "
    };
}

/// The case's provider company (alias `pc`), whose name a read gives the history's
/// `provider:<id>` entries: the only provider that acts on a case is the one that created it.
macro_rules! provider_join {
    () => {
        " LEFT JOIN companies pc ON pc.id = t.provider_id"
    };
}

/// A [`DialectSql`] from the dialect's parts: `$children`, `$verified`: the case's children as
/// JSON (columns `history_json`, `documents_json`, `verified_json`, and `operators_json`: the
/// names of the operators in the history, `[["operator:<id>", name], ...]`) and the `$join`
/// they need; `$skip_locked`: the row-locking clause of the webhook claim, `$claim_turn` the
/// statement that makes claims take turns.
macro_rules! dialect_sql {
    ($children:literal, $verified:literal, $join:literal, $skip_locked:literal, $claim_turn:literal) => {
        $crate::sql::text::DialectSql {
            trade: concat!(
                "SELECT t.id, t.company_id, t.provider_id, t.environment, t.package, t.status, \
                 t.record, t.price_cents, t.city_fee_cents, t.is_paid, t.trade_office, \
                 t.trade_office_candidates, t.source_product, t.created_at, \
                 c.name AS company_name, c.legal_form AS company_legal_form, \
                 pc.name AS provider_name, ",
                office_columns!(),
                ", ",
                $children,
                ", ",
                $verified,
                " FROM trade_registrations t LEFT JOIN companies c ON c.id = t.company_id \
                 LEFT JOIN trade_offices o ON o.key = (t.trade_office ->> 'key')",
                provider_join!(),
                $join,
                " WHERE t.id = $1"
            ),
            tax_by_id: concat!(tax_columns!(), $children, " FROM tax_registrations t",
                provider_join!(), $join,
                " WHERE t.id = $1"),
            tax_by_provider: concat!(tax_columns!(), $children, " FROM tax_registrations t",
                provider_join!(), $join,
                " WHERE t.provider_id = $1 AND t.public_id = $2"),
            tax_by_company: concat!(tax_columns!(), $children, " FROM tax_registrations t",
                provider_join!(), $join,
                " WHERE t.company_id = $1 AND t.public_id = $2"),
            // Binds: lease until, now, total, per endpoint, per provider (µs, counts). In
            // flight: a pending message whose lease runs (the attempt's record clears it).
            // `ready`: every endpoint whose circuit lets attempts through (closed: the limit;
            // half open: one), with its free places and its provider's; deleted ones too, so
            // that messages a create queued as the delete committed are claimed and given up.
            // `due`: their due messages, the oldest pending of its case each, ranked per
            // endpoint; `ranked`: those within the endpoint's places, ranked per provider by
            // what the endpoint would have in flight with each; taken within the provider's
            // places, fewest in flight for their provider first, then the oldest.
            claim_messages: concat!(
                "WITH busy AS (SELECT l.endpoint_id, COUNT(*) AS n FROM webhook_messages l \
                 WHERE l.locked_until_us IS NOT NULL AND l.locked_until_us >= $2 \
                 AND l.state = 'pending' GROUP BY l.endpoint_id), \
                 busy_provider AS (SELECT e.provider_id, CAST(SUM(b.n) AS BIGINT) AS n \
                 FROM busy b JOIN webhook_endpoints e ON e.id = b.endpoint_id GROUP BY e.provider_id), \
                 ready AS (SELECT e.id, e.provider_id, \
                 COALESCE(b.n, 0) AS endpoint_busy, COALESCE(bp.n, 0) AS provider_busy, \
                 CASE WHEN e.circuit_open_until_us IS NULL THEN CAST($4 AS BIGINT) ELSE 1 END \
                 AS endpoint_limit \
                 FROM webhook_endpoints e LEFT JOIN busy b ON b.endpoint_id = e.id \
                 LEFT JOIN busy_provider bp ON bp.provider_id = e.provider_id \
                 WHERE (e.circuit_open_until_us IS NULL OR e.circuit_open_until_us <= $2)), \
                 due AS (SELECT m.seq, m.next_attempt_us, r.provider_id, r.endpoint_busy, \
                 r.endpoint_limit, r.provider_busy, \
                 ROW_NUMBER() OVER (PARTITION BY m.endpoint_id ORDER BY m.next_attempt_us, m.seq) \
                 AS endpoint_rank \
                 FROM ready r JOIN webhook_messages m ON m.endpoint_id = r.id \
                 WHERE r.endpoint_busy < r.endpoint_limit AND r.provider_busy < CAST($5 AS BIGINT) \
                 AND m.state = 'pending' AND m.next_attempt_us <= $2 \
                 AND (m.locked_until_us IS NULL OR m.locked_until_us < $2) \
                 AND NOT EXISTS (SELECT 1 FROM webhook_messages p WHERE p.endpoint_id = m.endpoint_id \
                 AND p.case_id = m.case_id AND p.state = 'pending' AND p.seq < m.seq)), \
                 ranked AS (SELECT seq, next_attempt_us, provider_busy, \
                 ROW_NUMBER() OVER (PARTITION BY provider_id \
                 ORDER BY endpoint_busy + endpoint_rank, next_attempt_us, seq) AS provider_rank \
                 FROM due WHERE endpoint_busy + endpoint_rank <= endpoint_limit) \
                 UPDATE webhook_messages SET locked_until_us = $1 WHERE seq IN (\
                 SELECT w.seq FROM webhook_messages w WHERE w.seq IN (\
                 SELECT seq FROM ranked WHERE provider_busy + provider_rank <= CAST($5 AS BIGINT) \
                 ORDER BY provider_busy + provider_rank, next_attempt_us, seq LIMIT $3) \
                 AND w.state = 'pending' AND (w.locked_until_us IS NULL OR w.locked_until_us < $2) ",
                $skip_locked,
                ") RETURNING id, endpoint_id, case_id, event_type, payload, attempts"
            ),
            claim_turn: $claim_turn,
        }
    };
}

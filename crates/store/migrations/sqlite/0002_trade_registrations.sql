-- Trade registrations, their documents and status history.
-- One trade registration per company: the UNIQUE constraint decides races between instances.

CREATE TABLE trade_registrations (
    id              BLOB PRIMARY KEY NOT NULL,
    company_id      BLOB NOT NULL UNIQUE REFERENCES companies (id),
    provider_id     BLOB NOT NULL REFERENCES companies (id),
    environment     TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    package         TEXT NOT NULL,
    status          TEXT NOT NULL,
    record          TEXT NOT NULL,
    price_cents     INTEGER NOT NULL,
    city_fee_cents  INTEGER,
    is_paid         INTEGER NOT NULL DEFAULT 0,
    trade_office    TEXT,
    source_product  TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX trade_registrations_provider ON trade_registrations (provider_id);

CREATE TABLE documents (
    id           BLOB PRIMARY KEY NOT NULL,
    case_id      BLOB NOT NULL,
    case_kind    TEXT NOT NULL CHECK (case_kind IN ('trade', 'tax')),
    owner_index  INTEGER,
    doc_type     TEXT NOT NULL,
    name         TEXT NOT NULL,
    storage_key  TEXT NOT NULL UNIQUE,
    content_type TEXT NOT NULL,
    size         INTEGER NOT NULL,
    sha256       BLOB NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX documents_case ON documents (case_id);

CREATE TABLE status_history (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    case_id         BLOB NOT NULL,
    case_kind       TEXT NOT NULL CHECK (case_kind IN ('trade', 'tax')),
    status          TEXT NOT NULL,
    previous_status TEXT,
    actor           TEXT NOT NULL,
    reason          TEXT,
    at              TEXT NOT NULL
);
CREATE INDEX status_history_case ON status_history (case_id, seq);

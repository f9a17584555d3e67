-- Trade registrations, their documents and status history.
-- One trade registration per company: the UNIQUE constraint decides races between instances.

CREATE TABLE trade_registrations (
    id              UUID PRIMARY KEY,
    company_id      UUID NOT NULL UNIQUE REFERENCES companies (id),
    provider_id     UUID NOT NULL REFERENCES companies (id),
    environment     TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    package         TEXT NOT NULL,
    status          TEXT NOT NULL,
    record          JSONB NOT NULL,
    price_cents     BIGINT NOT NULL,
    city_fee_cents  BIGINT,
    is_paid         BOOLEAN NOT NULL DEFAULT FALSE,
    trade_office    JSONB,
    source_product  TEXT,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX trade_registrations_provider ON trade_registrations (provider_id);

CREATE TABLE documents (
    id           UUID PRIMARY KEY,
    case_id      UUID NOT NULL,
    case_kind    TEXT NOT NULL CHECK (case_kind IN ('trade', 'tax')),
    owner_index  INTEGER,
    doc_type     TEXT NOT NULL,
    name         TEXT NOT NULL,
    storage_key  TEXT NOT NULL UNIQUE,
    content_type TEXT NOT NULL,
    size         BIGINT NOT NULL,
    sha256       BYTEA NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX documents_case ON documents (case_id);

CREATE TABLE status_history (
    seq             BIGSERIAL PRIMARY KEY,
    case_id         UUID NOT NULL,
    case_kind       TEXT NOT NULL CHECK (case_kind IN ('trade', 'tax')),
    status          TEXT NOT NULL,
    previous_status TEXT,
    actor           TEXT NOT NULL,
    reason          TEXT,
    at              TIMESTAMPTZ NOT NULL
);
CREATE INDEX status_history_case ON status_history (case_id, seq);

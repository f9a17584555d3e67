-- Companies, operators, API keys and idempotency records.
-- Timestamps are RFC 3339 text (sqlx's encoding of time::OffsetDateTime); ids are UUID blobs.

CREATE TABLE companies (
    id                  BLOB PRIMARY KEY NOT NULL,
    kind                TEXT NOT NULL CHECK (kind IN ('provider', 'client')),
    name                TEXT NOT NULL,
    provider_id         BLOB REFERENCES companies (id),
    environment         TEXT CHECK (environment IN ('sandbox', 'production')),
    legal_form          TEXT,
    registration_number TEXT,
    business_address    TEXT,
    created_at          TEXT NOT NULL,
    CHECK ((kind = 'provider' AND provider_id IS NULL) OR (kind = 'client' AND provider_id IS NOT NULL))
);
CREATE INDEX companies_provider_id ON companies (provider_id);

CREATE TABLE operators (
    id         BLOB PRIMARY KEY NOT NULL,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE api_keys (
    prefix      TEXT PRIMARY KEY NOT NULL,
    hash        BLOB NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('provider', 'client', 'operator')),
    company_id  BLOB REFERENCES companies (id),
    operator_id BLOB REFERENCES operators (id),
    created_at  TEXT NOT NULL,
    revoked_at  TEXT,
    CHECK ((company_id IS NULL) <> (operator_id IS NULL))
);

CREATE TABLE idempotency_keys (
    scope           BLOB NOT NULL,
    key             TEXT NOT NULL,
    request_hash    BLOB NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('in-flight', 'done')),
    response_status INTEGER,
    response_body   BLOB,
    created_at      TEXT NOT NULL,
    PRIMARY KEY (scope, key)
);

-- Companies, operators, API keys and idempotency records.

CREATE TABLE companies (
    id                  UUID PRIMARY KEY,
    kind                TEXT NOT NULL CHECK (kind IN ('provider', 'client')),
    name                TEXT NOT NULL,
    provider_id         UUID REFERENCES companies (id),
    environment         TEXT CHECK (environment IN ('sandbox', 'production')),
    legal_form          TEXT,
    registration_number TEXT,
    business_address    JSONB,
    created_at          TIMESTAMPTZ NOT NULL,
    CHECK ((kind = 'provider' AND provider_id IS NULL) OR (kind = 'client' AND provider_id IS NOT NULL))
);
CREATE INDEX companies_provider_id ON companies (provider_id);

CREATE TABLE operators (
    id         UUID PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE api_keys (
    prefix      TEXT PRIMARY KEY,
    hash        BYTEA NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('provider', 'client', 'operator')),
    company_id  UUID REFERENCES companies (id),
    operator_id UUID REFERENCES operators (id),
    created_at  TIMESTAMPTZ NOT NULL,
    revoked_at  TIMESTAMPTZ,
    CHECK ((company_id IS NULL) <> (operator_id IS NULL))
);

CREATE TABLE idempotency_keys (
    scope           UUID NOT NULL,
    key             TEXT NOT NULL,
    request_hash    BYTEA NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('in-flight', 'done')),
    response_status INTEGER,
    response_body   BYTEA,
    created_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (scope, key)
);

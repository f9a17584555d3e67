-- Tax registrations (UG, GmbH; later GbR). One per company: the UNIQUE constraint decides races
-- between instances. The id may be chosen by the caller, so it is the primary key's conflict
-- that reports a duplicate id.
CREATE TABLE tax_registrations (
    id                UUID PRIMARY KEY,
    company_id        UUID NOT NULL UNIQUE REFERENCES companies (id),
    provider_id       UUID NOT NULL REFERENCES companies (id),
    environment       TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    package           TEXT NOT NULL,
    legal_form        TEXT NOT NULL,
    status            TEXT NOT NULL,
    record            JSONB NOT NULL,
    tax_office_number TEXT,
    tax_office_lookup JSONB,
    created_at        TIMESTAMPTZ NOT NULL,
    updated_at        TIMESTAMPTZ NOT NULL
);
CREATE INDEX tax_registrations_provider ON tax_registrations (provider_id);

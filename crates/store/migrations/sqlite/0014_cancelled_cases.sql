-- no-transaction
-- A cancelled case no longer blocks a new one for its company (issue 37, docs/api/lifecycle.md
-- "Cancellation"): one registration per company and kind becomes one *not cancelled* one. The
-- inline UNIQUE of `company_id` cannot be dropped in SQLite, so both case tables are rebuilt
-- (https://www.sqlite.org/lang_altertable.html#otheralter, the twelve steps): foreign keys off
-- (identity_verifications and its log reference trade_registrations; a PRAGMA is a no-op inside a
-- transaction, hence `no-transaction` and our own BEGIN/COMMIT), copy, drop, rename, indexes,
-- check, commit, foreign keys on. Re-running the script after a crash between its COMMIT and
-- sqlx's bookkeeping row rebuilds the tables once more and ends in the same schema.
PRAGMA foreign_keys = OFF;
BEGIN;

CREATE TABLE trade_registrations_new (
    id              BLOB PRIMARY KEY NOT NULL,
    company_id      BLOB NOT NULL REFERENCES companies (id),
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
    updated_at      TEXT NOT NULL,
    trade_office_candidates TEXT
);
INSERT INTO trade_registrations_new (id, company_id, provider_id, environment, package, status,
    record, price_cents, city_fee_cents, is_paid, trade_office, source_product, created_at,
    updated_at, trade_office_candidates)
SELECT id, company_id, provider_id, environment, package, status, record, price_cents,
    city_fee_cents, is_paid, trade_office, source_product, created_at, updated_at,
    trade_office_candidates
FROM trade_registrations;
DROP TABLE trade_registrations;
ALTER TABLE trade_registrations_new RENAME TO trade_registrations;
CREATE INDEX trade_registrations_provider ON trade_registrations (provider_id);
CREATE UNIQUE INDEX trade_registrations_company_id_open ON trade_registrations (company_id)
    WHERE status <> 'cancelled';

CREATE TABLE tax_registrations_new (
    id                BLOB PRIMARY KEY NOT NULL,
    company_id        BLOB NOT NULL REFERENCES companies (id),
    provider_id       BLOB NOT NULL REFERENCES companies (id),
    environment       TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    package           TEXT NOT NULL,
    legal_form        TEXT NOT NULL,
    status            TEXT NOT NULL,
    record            TEXT NOT NULL,
    tax_office_number TEXT,
    tax_office_lookup TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    tax_number        TEXT,
    list_key          BLOB,
    public_id         BLOB
);
INSERT INTO tax_registrations_new (id, company_id, provider_id, environment, package, legal_form,
    status, record, tax_office_number, tax_office_lookup, created_at, updated_at, tax_number,
    list_key, public_id)
SELECT id, company_id, provider_id, environment, package, legal_form, status, record,
    tax_office_number, tax_office_lookup, created_at, updated_at, tax_number, list_key, public_id
FROM tax_registrations;
DROP TABLE tax_registrations;
ALTER TABLE tax_registrations_new RENAME TO tax_registrations;
CREATE INDEX tax_registrations_provider ON tax_registrations (provider_id);
CREATE INDEX tax_registrations_list ON tax_registrations (list_key);
CREATE UNIQUE INDEX tax_registrations_public_id ON tax_registrations (provider_id, public_id);
CREATE UNIQUE INDEX tax_registrations_company_id_open ON tax_registrations (company_id)
    WHERE status <> 'cancelled';
CREATE TRIGGER tax_registrations_public_id_default AFTER INSERT ON tax_registrations
WHEN NEW.public_id IS NULL
BEGIN
    UPDATE tax_registrations SET public_id = NEW.id WHERE id = NEW.id;
END;

COMMIT;
PRAGMA foreign_keys = ON;

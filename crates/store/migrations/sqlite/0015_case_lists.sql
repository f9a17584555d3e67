-- The case lists of providers and client companies (GET /v1/trade-registration and
-- /v1/tax-registration, docs/api/lists.md): newest first by the time-ordered key (a trade
-- registration's id, a tax registration's `list_key`), filtered by the caller's provider and
-- optionally status, environment or client reference.
--
-- `client_reference` is the stored request's, as a generated column: every row has it, those
-- written before this migration and those an instance on the previous release writes during a
-- rolling restart, and it cannot disagree with the record. SQLite adds generated columns as
-- VIRTUAL only (computed on read); the index below stores it.
ALTER TABLE trade_registrations ADD COLUMN client_reference TEXT
    GENERATED ALWAYS AS (record ->> 'client_reference') VIRTUAL;
ALTER TABLE tax_registrations ADD COLUMN client_reference TEXT
    GENERATED ALWAYS AS (record ->> 'client_reference') VIRTUAL;

-- A provider's cases newest first; it serves every lookup by provider the old index did.
CREATE INDEX trade_registrations_provider_list ON trade_registrations (provider_id, id);
DROP INDEX trade_registrations_provider;
CREATE INDEX trade_registrations_provider_status ON trade_registrations (provider_id, status, id);
CREATE INDEX trade_registrations_provider_environment
    ON trade_registrations (provider_id, environment, id);
CREATE INDEX trade_registrations_provider_reference
    ON trade_registrations (provider_id, client_reference, id) WHERE client_reference IS NOT NULL;

CREATE INDEX tax_registrations_provider_list ON tax_registrations (provider_id, list_key);
DROP INDEX tax_registrations_provider;
CREATE INDEX tax_registrations_provider_status ON tax_registrations (provider_id, status, list_key);
CREATE INDEX tax_registrations_provider_environment
    ON tax_registrations (provider_id, environment, list_key);
CREATE INDEX tax_registrations_provider_reference
    ON tax_registrations (provider_id, client_reference, list_key)
    WHERE client_reference IS NOT NULL;

-- The operators' case lists (the console, GET /v1/operator/trade-registrations and
-- /tax-registrations; docs/adr/0024-operator-case-search.md): every case, newest or oldest first
-- by the time-ordered key (a trade registration's id, a tax registration's `list_key`), filtered
-- by environment, status, provider, office, a case id, a postal code or words, and counted by
-- status; and the webhook deliveries of one case.
--
-- Words are found with trigram indexes (pg_trgm, part of PostgreSQL's standard contrib and a
-- trusted extension: a role with CREATE on the database may create it, or an administrator
-- creates it beforehand, after which this statement does nothing).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- Generated columns, so that they cannot disagree with what they are read from: a trade
-- registration's receiving office (its key, set by the determination and by an operator's
-- assignment), the establishment's postal code (a tax registration's: the company address's;
-- its office is `tax_office_number`), and the text words are found in, lower-cased by Unicode's
-- rules (ICU's root collation, whatever the database's locale): the company name, the client
-- reference and the names of the people of the case (a trade registration's owners, a tax
-- registration's directors or partners). Adding STORED columns rewrites both tables once under
-- an exclusive lock (one rewrite per table: the columns are added in one statement).
ALTER TABLE trade_registrations
    ADD COLUMN office_key TEXT GENERATED ALWAYS AS (trade_office ->> 'key') STORED,
    ADD COLUMN postal_code TEXT
        GENERATED ALWAYS AS (record -> 'registered_office' ->> 'zip') STORED,
    ADD COLUMN search_text TEXT GENERATED ALWAYS AS (lower((
        coalesce(record ->> 'name', '') || ' ' || coalesce(record ->> 'client_reference', '')
        || ' ' || jsonb_path_query_array(record::jsonb, '$.owners[*].first_name')::text
        || ' ' || jsonb_path_query_array(record::jsonb, '$.owners[*].last_name')::text
        || ' ' || jsonb_path_query_array(record::jsonb, '$.owners[*].birth_name')::text
    ) COLLATE "und-x-icu")) STORED;

ALTER TABLE tax_registrations
    ADD COLUMN postal_code TEXT GENERATED ALWAYS AS (record -> 'address' ->> 'zip') STORED,
    ADD COLUMN search_text TEXT GENERATED ALWAYS AS (lower((
        coalesce(record ->> 'name', '') || ' ' || coalesce(record ->> 'client_reference', '')
        || ' ' || jsonb_path_query_array(record::jsonb, '$.directors[*].first_name')::text
        || ' ' || jsonb_path_query_array(record::jsonb, '$.directors[*].middle_name')::text
        || ' ' || jsonb_path_query_array(record::jsonb, '$.directors[*].last_name')::text
        || ' ' || jsonb_path_query_array(record::jsonb, '$.partners.individuals[*].first_name')::text
        || ' ' || jsonb_path_query_array(record::jsonb, '$.partners.individuals[*].last_name')::text
        || ' ' || jsonb_path_query_array(record::jsonb, '$.partners.entities[*].name')::text
    ) COLLATE "und-x-icu")) STORED;

-- Every case of an environment (and status), of an office, of a provider, in both orders; the
-- counts by status of an environment, an office or a provider read from the same indexes alone.
CREATE INDEX trade_registrations_environment_list ON trade_registrations (environment, id);
CREATE INDEX trade_registrations_environment_status
    ON trade_registrations (environment, status, id);
CREATE INDEX trade_registrations_office_list ON trade_registrations (office_key, environment, id);
CREATE INDEX trade_registrations_office_status
    ON trade_registrations (office_key, environment, status, id);
CREATE INDEX trade_registrations_provider_environment_status
    ON trade_registrations (provider_id, environment, status, id);
CREATE INDEX trade_registrations_postal_code ON trade_registrations (postal_code, id);
CREATE INDEX trade_registrations_search ON trade_registrations USING gin (search_text gin_trgm_ops);

CREATE INDEX tax_registrations_environment_list ON tax_registrations (environment, list_key);
CREATE INDEX tax_registrations_environment_status
    ON tax_registrations (environment, status, list_key);
CREATE INDEX tax_registrations_office_list
    ON tax_registrations (tax_office_number, environment, list_key);
CREATE INDEX tax_registrations_office_status
    ON tax_registrations (tax_office_number, environment, status, list_key);
CREATE INDEX tax_registrations_provider_environment_status
    ON tax_registrations (provider_id, environment, status, list_key);
CREATE INDEX tax_registrations_postal_code ON tax_registrations (postal_code, list_key);
-- A case id an operator searches for may be a tax registration's public id (unique per
-- provider only, so the provider's index cannot find it without the provider).
CREATE INDEX tax_registrations_public_id_any ON tax_registrations (public_id);
CREATE INDEX tax_registrations_search ON tax_registrations USING gin (search_text gin_trgm_ops);

-- The webhook deliveries of one case, newest first, with each message's last attempt.
CREATE INDEX webhook_messages_case_list ON webhook_messages (case_id, seq);
CREATE INDEX webhook_attempts_message ON webhook_attempts (message_id, seq);

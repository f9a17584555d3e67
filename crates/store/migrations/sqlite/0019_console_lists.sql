-- The operators' case lists (the console, GET /v1/operator/trade-registrations and
-- /tax-registrations; docs/adr/0024-operator-case-search.md): every case, newest or oldest first
-- by the time-ordered key (a trade registration's id, a tax registration's `list_key`), filtered
-- by environment, status, provider, office, a case id, a postal code or words, and counted by
-- status; and the webhook deliveries of one case.
--
-- The office and the postal code as generated columns, so that they cannot disagree with what
-- they are read from (SQLite adds them as VIRTUAL; the indexes below store them): a trade
-- registration's receiving office (its key, set by the determination and by an operator's
-- assignment) and its establishment's postal code, a tax registration's company address's
-- postal code (its office is `tax_office_number`).
ALTER TABLE trade_registrations ADD COLUMN office_key TEXT
    GENERATED ALWAYS AS (trade_office ->> 'key') VIRTUAL;
ALTER TABLE trade_registrations ADD COLUMN postal_code TEXT
    GENERATED ALWAYS AS (record -> 'registered_office' ->> 'zip') VIRTUAL;
ALTER TABLE tax_registrations ADD COLUMN postal_code TEXT
    GENERATED ALWAYS AS (record -> 'address' ->> 'zip') VIRTUAL;

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

-- Words: the company name, the client reference and the names of the people of a case (a trade
-- registration's owners, a tax registration's directors, or its partners), each case's in one
-- text row (`*_search_text`, kept by the triggers below from the record, which is written once)
-- and a trigram full-text index over them (`*_search`, FTS5 with that table as its external
-- content): a word of three or more characters is found anywhere in the text, case-folded by
-- Unicode. The text rows have a key of their own, which VACUUM keeps (it may renumber the
-- case tables' implicit rowids), and the case's key, unique, for the triggers to find them.
CREATE TABLE trade_search_text (
    id       INTEGER PRIMARY KEY,
    case_id  BLOB NOT NULL UNIQUE,
    text     TEXT NOT NULL
);
CREATE VIRTUAL TABLE trade_search USING fts5 (
    text, content = 'trade_search_text', content_rowid = 'id', tokenize = 'trigram'
);
CREATE TRIGGER trade_search_text_insert AFTER INSERT ON trade_search_text BEGIN
    INSERT INTO trade_search (rowid, text) VALUES (NEW.id, NEW.text);
END;
CREATE TRIGGER trade_search_text_delete AFTER DELETE ON trade_search_text BEGIN
    INSERT INTO trade_search (trade_search, rowid, text) VALUES ('delete', OLD.id, OLD.text);
END;

CREATE TABLE tax_search_text (
    id       INTEGER PRIMARY KEY,
    case_id  BLOB NOT NULL UNIQUE,
    text     TEXT NOT NULL
);
CREATE VIRTUAL TABLE tax_search USING fts5 (
    text, content = 'tax_search_text', content_rowid = 'id', tokenize = 'trigram'
);
CREATE TRIGGER tax_search_text_insert AFTER INSERT ON tax_search_text BEGIN
    INSERT INTO tax_search (rowid, text) VALUES (NEW.id, NEW.text);
END;
CREATE TRIGGER tax_search_text_delete AFTER DELETE ON tax_search_text BEGIN
    INSERT INTO tax_search (tax_search, rowid, text) VALUES ('delete', OLD.id, OLD.text);
END;

-- A trade registration's text: name, client reference, each owner's first, last and birth name.
CREATE TRIGGER trade_registrations_search_insert AFTER INSERT ON trade_registrations BEGIN
    INSERT INTO trade_search_text (case_id, text) VALUES (NEW.id,
        coalesce(NEW.record ->> 'name', '') || ' ' || coalesce(NEW.record ->> 'client_reference', '')
        || coalesce((SELECT ' ' || group_concat(coalesce(o.value ->> 'first_name', '') || ' '
                     || coalesce(o.value ->> 'last_name', '')
                     || coalesce(' ' || (o.value ->> 'birth_name'), ''), ' ')
                     FROM json_each(NEW.record, '$.owners') o), ''));
END;
CREATE TRIGGER trade_registrations_search_update AFTER UPDATE OF record ON trade_registrations
BEGIN
    DELETE FROM trade_search_text WHERE case_id = OLD.id;
    INSERT INTO trade_search_text (case_id, text) VALUES (NEW.id,
        coalesce(NEW.record ->> 'name', '') || ' ' || coalesce(NEW.record ->> 'client_reference', '')
        || coalesce((SELECT ' ' || group_concat(coalesce(o.value ->> 'first_name', '') || ' '
                     || coalesce(o.value ->> 'last_name', '')
                     || coalesce(' ' || (o.value ->> 'birth_name'), ''), ' ')
                     FROM json_each(NEW.record, '$.owners') o), ''));
END;
CREATE TRIGGER trade_registrations_search_delete AFTER DELETE ON trade_registrations BEGIN
    DELETE FROM trade_search_text WHERE case_id = OLD.id;
END;

-- A tax registration's text: name, client reference, each director's first, middle and last
-- name (UG, GmbH), each partner's first and last name or an entity partner's name (GbR, eGbR).
CREATE TRIGGER tax_registrations_search_insert AFTER INSERT ON tax_registrations BEGIN
    INSERT INTO tax_search_text (case_id, text) VALUES (NEW.id,
        coalesce(NEW.record ->> 'name', '') || ' ' || coalesce(NEW.record ->> 'client_reference', '')
        || coalesce((SELECT ' ' || group_concat(coalesce(p.value ->> 'first_name', '')
                     || coalesce(' ' || (p.value ->> 'middle_name'), '') || ' '
                     || coalesce(p.value ->> 'last_name', ''), ' ')
                     FROM json_each(NEW.record, '$.directors') p), '')
        || coalesce((SELECT ' ' || group_concat(coalesce(p.value ->> 'first_name', '') || ' '
                     || coalesce(p.value ->> 'last_name', ''), ' ')
                     FROM json_each(NEW.record, '$.partners.individuals') p), '')
        || coalesce((SELECT ' ' || group_concat(coalesce(p.value ->> 'name', ''), ' ')
                     FROM json_each(NEW.record, '$.partners.entities') p), ''));
END;
CREATE TRIGGER tax_registrations_search_update AFTER UPDATE OF record ON tax_registrations BEGIN
    DELETE FROM tax_search_text WHERE case_id = OLD.id;
    INSERT INTO tax_search_text (case_id, text) VALUES (NEW.id,
        coalesce(NEW.record ->> 'name', '') || ' ' || coalesce(NEW.record ->> 'client_reference', '')
        || coalesce((SELECT ' ' || group_concat(coalesce(p.value ->> 'first_name', '')
                     || coalesce(' ' || (p.value ->> 'middle_name'), '') || ' '
                     || coalesce(p.value ->> 'last_name', ''), ' ')
                     FROM json_each(NEW.record, '$.directors') p), '')
        || coalesce((SELECT ' ' || group_concat(coalesce(p.value ->> 'first_name', '') || ' '
                     || coalesce(p.value ->> 'last_name', ''), ' ')
                     FROM json_each(NEW.record, '$.partners.individuals') p), '')
        || coalesce((SELECT ' ' || group_concat(coalesce(p.value ->> 'name', ''), ' ')
                     FROM json_each(NEW.record, '$.partners.entities') p), ''));
END;
CREATE TRIGGER tax_registrations_search_delete AFTER DELETE ON tax_registrations BEGIN
    DELETE FROM tax_search_text WHERE case_id = OLD.id;
END;

-- The cases there are already.
INSERT INTO trade_search_text (case_id, text)
SELECT t.id,
    coalesce(t.record ->> 'name', '') || ' ' || coalesce(t.record ->> 'client_reference', '')
    || coalesce((SELECT ' ' || group_concat(coalesce(o.value ->> 'first_name', '') || ' '
                 || coalesce(o.value ->> 'last_name', '')
                 || coalesce(' ' || (o.value ->> 'birth_name'), ''), ' ')
                 FROM json_each(t.record, '$.owners') o), '')
FROM trade_registrations t;
INSERT INTO tax_search_text (case_id, text)
SELECT t.id,
    coalesce(t.record ->> 'name', '') || ' ' || coalesce(t.record ->> 'client_reference', '')
    || coalesce((SELECT ' ' || group_concat(coalesce(p.value ->> 'first_name', '')
                 || coalesce(' ' || (p.value ->> 'middle_name'), '') || ' '
                 || coalesce(p.value ->> 'last_name', ''), ' ')
                 FROM json_each(t.record, '$.directors') p), '')
    || coalesce((SELECT ' ' || group_concat(coalesce(p.value ->> 'first_name', '') || ' '
                 || coalesce(p.value ->> 'last_name', ''), ' ')
                 FROM json_each(t.record, '$.partners.individuals') p), '')
    || coalesce((SELECT ' ' || group_concat(coalesce(p.value ->> 'name', ''), ' ')
                 FROM json_each(t.record, '$.partners.entities') p), '')
FROM tax_registrations t;

-- The webhook deliveries of one case, newest first, with each message's last attempt.
CREATE INDEX webhook_messages_case_list ON webhook_messages (case_id, seq);
CREATE INDEX webhook_attempts_message ON webhook_attempts (message_id, seq);

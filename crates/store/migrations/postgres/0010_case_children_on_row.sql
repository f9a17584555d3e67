-- The children of a case (status history, documents, identity verifications) kept on the case
-- row as the JSON arrays the case read returns, maintained by triggers in the transaction that
-- changes them. A case read is then one row (and two key lookups) instead of three aggregate
-- subqueries, which halved the statement's cost (BENCHMARKS.md).

ALTER TABLE trade_registrations
    ADD COLUMN history_json   TEXT NOT NULL DEFAULT '[]',
    ADD COLUMN documents_json TEXT NOT NULL DEFAULT '[]',
    ADD COLUMN verified_json  TEXT NOT NULL DEFAULT '[]';
ALTER TABLE tax_registrations
    ADD COLUMN history_json   TEXT NOT NULL DEFAULT '[]',
    ADD COLUMN documents_json TEXT NOT NULL DEFAULT '[]';

-- The arrays, built as the read used to build them. Timestamps in UTC whatever the session says.
CREATE FUNCTION case_history_json(p_case UUID) RETURNS TEXT
LANGUAGE sql STABLE SET timezone = 'UTC' AS $$
    SELECT coalesce(json_agg(json_build_array(status, previous_status, actor, reason, at) ORDER BY seq), '[]')::text
    FROM status_history WHERE case_id = p_case
$$;

CREATE FUNCTION case_documents_json(p_case UUID) RETURNS TEXT
LANGUAGE sql STABLE SET timezone = 'UTC' AS $$
    SELECT coalesce(json_agg(json_build_array(replace(id::text, '-', ''), case_kind, owner_index, doc_type, name,
        storage_key, content_type, size, encode(sha256, 'hex'), created_at)
        ORDER BY created_at, owner_index, doc_type), '[]')::text
    FROM documents WHERE case_id = p_case
$$;

CREATE FUNCTION case_verified_json(p_case UUID) RETURNS TEXT
LANGUAGE sql STABLE SET timezone = 'UTC' AS $$
    SELECT coalesce(json_agg(json_build_array(owner_index, verified_at) ORDER BY owner_index), '[]')::text
    FROM identity_verifications WHERE case_id = p_case
$$;

-- Statement-level triggers: one refresh per case a statement touched (`changed` is the
-- statement's transition table: new rows on INSERT and UPDATE, old rows on DELETE).
CREATE FUNCTION refresh_case_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE trade_registrations t SET history_json = case_history_json(t.id)
    WHERE t.id IN (SELECT case_id FROM changed WHERE case_kind = 'trade');
    UPDATE tax_registrations t SET history_json = case_history_json(t.id)
    WHERE t.id IN (SELECT case_id FROM changed WHERE case_kind = 'tax');
    RETURN NULL;
END
$$;

CREATE FUNCTION refresh_case_documents() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE trade_registrations t SET documents_json = case_documents_json(t.id)
    WHERE t.id IN (SELECT case_id FROM changed WHERE case_kind = 'trade');
    UPDATE tax_registrations t SET documents_json = case_documents_json(t.id)
    WHERE t.id IN (SELECT case_id FROM changed WHERE case_kind = 'tax');
    RETURN NULL;
END
$$;

CREATE FUNCTION refresh_case_verified() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE trade_registrations t SET verified_json = case_verified_json(t.id)
    WHERE t.id IN (SELECT case_id FROM changed);
    RETURN NULL;
END
$$;

CREATE TRIGGER status_history_inserted AFTER INSERT ON status_history
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION refresh_case_history();
CREATE TRIGGER status_history_updated AFTER UPDATE ON status_history
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION refresh_case_history();
CREATE TRIGGER status_history_deleted AFTER DELETE ON status_history
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION refresh_case_history();

CREATE TRIGGER documents_inserted AFTER INSERT ON documents
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION refresh_case_documents();
CREATE TRIGGER documents_updated AFTER UPDATE ON documents
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION refresh_case_documents();
CREATE TRIGGER documents_deleted AFTER DELETE ON documents
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION refresh_case_documents();

CREATE TRIGGER identity_verifications_inserted AFTER INSERT ON identity_verifications
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION refresh_case_verified();
CREATE TRIGGER identity_verifications_updated AFTER UPDATE ON identity_verifications
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION refresh_case_verified();
CREATE TRIGGER identity_verifications_deleted AFTER DELETE ON identity_verifications
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION refresh_case_verified();

-- Cases written before this migration.
UPDATE trade_registrations t SET history_json = case_history_json(t.id),
    documents_json = case_documents_json(t.id), verified_json = case_verified_json(t.id);
UPDATE tax_registrations t SET history_json = case_history_json(t.id),
    documents_json = case_documents_json(t.id);

-- The fields an operator changed, on the history entry that records the change (issue 39,
-- docs/adr/0025-audit-of-operator-changes.md): a JSON array of {"field", "old", "new"}, the
-- values as a clerk reads them. NULL on status steps, which change no field; a field-change
-- entry keeps the case's status (status = previous_status) and has no webhook event.
ALTER TABLE status_history ADD COLUMN changes JSON;

-- The operators who appear in a case's history, kept with the copy of its history: a case read
-- looks their names up by key (`operators_json`), which costs a fraction of finding them in the
-- history's JSON (ADR 0025). NULL: none.
ALTER TABLE case_children ADD COLUMN operator_ids UUID[];

-- The history array of `case_children` carries an entry's changes as a sixth element, only on
-- entries that have them: the arrays of status steps stay as they were, so the copies written
-- before this migration (and by the one-statement create) need no rewrite. An actor that is not
-- `operator:` and a UUID (old test data) names no operator.
CREATE OR REPLACE FUNCTION refresh_case_children(p_cases UUID[]) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM case_children WHERE case_id = ANY(p_cases) ORDER BY case_id FOR UPDATE;
    INSERT INTO case_children (case_id, history_json, documents_json, verified_json, operator_ids)
    SELECT c.id,
        (SELECT coalesce(json_agg(CASE WHEN h.changes IS NULL
                    THEN json_build_array(h.status, h.previous_status, h.actor, h.reason, h.at)
                    ELSE json_build_array(h.status, h.previous_status, h.actor, h.reason, h.at, h.changes)
                END ORDER BY h.seq), '[]')::text
            FROM status_history h WHERE h.case_id = c.id),
        (SELECT coalesce(json_agg(json_build_array(replace(d.id::text, '-', ''), d.case_kind, d.owner_index,
                d.doc_type, d.name, d.storage_key, d.content_type, d.size, encode(d.sha256, 'hex'), d.created_at)
                ORDER BY d.created_at, d.owner_index, d.doc_type COLLATE "C"), '[]')::text
            FROM documents d WHERE d.case_id = c.id),
        (SELECT coalesce(json_agg(json_build_array(v.owner_index, v.verified_at) ORDER BY v.owner_index), '[]')::text
            FROM identity_verifications v WHERE v.case_id = c.id),
        (SELECT array_agg(DISTINCT substr(h.actor, 10)::uuid)
            FROM status_history h WHERE h.case_id = c.id
            AND h.actor ~ '^operator:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')
    FROM unnest(p_cases) AS c(id)
    ON CONFLICT (case_id) DO UPDATE SET history_json = excluded.history_json,
        documents_json = excluded.documents_json, verified_json = excluded.verified_json,
        operator_ids = excluded.operator_ids;
END
$$;

-- The operators of the cases written before: only the copies of cases an operator acted on
-- are rewritten.
UPDATE case_children k SET operator_ids = o.ids
FROM (SELECT h.case_id, array_agg(DISTINCT substr(h.actor, 10)::uuid) AS ids
      FROM status_history h
      WHERE h.actor ~ '^operator:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
      GROUP BY h.case_id) o
WHERE k.case_id = o.case_id;

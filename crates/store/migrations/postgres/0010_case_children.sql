-- The children of a case (status history, documents, identity verifications) as the JSON
-- arrays the case read returns, one row per case in `case_children`. A case read then joins one
-- row by its key instead of running three aggregate subqueries, which were more than half of the
-- statement's cost (BENCHMARKS.md). Every transaction that changes a case's children ends with
-- `refresh_case_children` (the store's `refresh_children`), so the copy changes in the same
-- commit as the rows it copies.
--
-- A table of its own rather than columns of the case rows: a refresh rewrites a narrow row (a
-- heap-only update), not a 4 KB case row and its four indexes. With the columns on the case
-- rows, tax creates lost a quarter of their rate; with triggers on the child tables firing per
-- statement, 30 %.

CREATE TABLE case_children (
    case_id        UUID PRIMARY KEY,
    history_json   TEXT NOT NULL,
    documents_json TEXT NOT NULL,
    verified_json  TEXT NOT NULL
);

-- The arrays, built as the read used to build them, for the cases in `p_cases`. PL/pgSQL, so
-- that each connection plans the statement once (an SQL function is planned on every call, which
-- cost more than the write itself). Timestamps render in the session's time zone, UTC for sqlx;
-- the store reads any offset.
CREATE FUNCTION refresh_case_children(p_cases UUID[]) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO case_children (case_id, history_json, documents_json, verified_json)
    SELECT c.id,
        (SELECT coalesce(json_agg(json_build_array(h.status, h.previous_status, h.actor, h.reason, h.at)
                ORDER BY h.seq), '[]')::text
            FROM status_history h WHERE h.case_id = c.id),
        (SELECT coalesce(json_agg(json_build_array(replace(d.id::text, '-', ''), d.case_kind, d.owner_index,
                d.doc_type, d.name, d.storage_key, d.content_type, d.size, encode(d.sha256, 'hex'), d.created_at)
                ORDER BY d.created_at, d.owner_index, d.doc_type COLLATE "C"), '[]')::text
            FROM documents d WHERE d.case_id = c.id),
        (SELECT coalesce(json_agg(json_build_array(v.owner_index, v.verified_at) ORDER BY v.owner_index), '[]')::text
            FROM identity_verifications v WHERE v.case_id = c.id)
    FROM unnest(p_cases) AS c(id)
    ON CONFLICT (case_id) DO UPDATE SET history_json = excluded.history_json,
        documents_json = excluded.documents_json, verified_json = excluded.verified_json;
END
$$;

-- Cases written before this migration.
SELECT refresh_case_children(array_agg(id)) FROM trade_registrations;
SELECT refresh_case_children(array_agg(id)) FROM tax_registrations;

-- `refresh_case_children` locks the rows it rewrites before it reads the children. Without the
-- lock, two transactions changing one case's children at once (an operator's transition and an
-- identity verification, or a summary's first download) each built the arrays from a snapshot
-- taken before the other committed; the later upsert waited for the earlier one's row lock and
-- then overwrote it with arrays that missed the earlier change, for good (a case read shows
-- `case_children` only). Under READ COMMITTED each statement of a PL/pgSQL function takes a new
-- snapshot, so once the lock is held the aggregates see every change committed before it.
-- Ordered by key, so that refreshes of several cases cannot deadlock each other.
CREATE OR REPLACE FUNCTION refresh_case_children(p_cases UUID[]) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM case_children WHERE case_id = ANY(p_cases) ORDER BY case_id FOR UPDATE;
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

-- A document may be recorded before its file exists: the tax registration summary PDF is
-- rendered from the stored case on its first download (docs/decisions.md, "Tax summary on first
-- download"). Until then `size` and `sha256` are NULL; both are set together, once.
-- SQLite cannot drop a NOT NULL constraint in place, so the table is rebuilt.
CREATE TABLE documents_new (
    id           BLOB PRIMARY KEY NOT NULL,
    case_id      BLOB NOT NULL,
    case_kind    TEXT NOT NULL CHECK (case_kind IN ('trade', 'tax')),
    owner_index  INTEGER,
    doc_type     TEXT NOT NULL,
    name         TEXT NOT NULL,
    storage_key  TEXT NOT NULL UNIQUE,
    content_type TEXT NOT NULL,
    size         INTEGER,
    sha256       BLOB,
    created_at   TEXT NOT NULL,
    CHECK ((size IS NULL) = (sha256 IS NULL))
);
INSERT INTO documents_new SELECT id, case_id, case_kind, owner_index, doc_type, name, storage_key,
    content_type, size, sha256, created_at FROM documents;
DROP TABLE documents;
ALTER TABLE documents_new RENAME TO documents;
CREATE INDEX documents_case ON documents (case_id);

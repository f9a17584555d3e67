-- A document may be recorded before its file exists: the tax registration summary PDF is
-- rendered from the stored case on its first download (docs/decisions.md, "Tax summary on first
-- download"). Until then `size` and `sha256` are NULL; both are set together, once.
ALTER TABLE documents ALTER COLUMN size DROP NOT NULL;
ALTER TABLE documents ALTER COLUMN sha256 DROP NOT NULL;
ALTER TABLE documents ADD CONSTRAINT documents_rendered CHECK ((size IS NULL) = (sha256 IS NULL));

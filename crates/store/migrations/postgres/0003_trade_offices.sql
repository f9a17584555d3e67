-- The operator-maintained directory of trade offices (key: 8-digit AGS or 9-digit
-- Gemeindeverband key), and the candidates of a case whose municipality is ambiguous.
CREATE TABLE trade_offices (
    key        TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    address    TEXT,
    email      TEXT,
    phone      TEXT,
    website    TEXT,
    updated_at TIMESTAMPTZ NOT NULL
);

ALTER TABLE trade_registrations ADD COLUMN trade_office_candidates JSONB;

-- The provider's event log (issue 37: `GET /v1/events`, docs/api/events.md): every event a
-- case's change produced, with the body its webhook messages carry, written in the transaction
-- of the change whether or not the provider has an endpoint. Events before this migration are
-- not in it (their bodies were only kept per endpoint, in webhook_messages).
CREATE TABLE events (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           BLOB NOT NULL UNIQUE,
    provider_id  BLOB NOT NULL,
    company_id   BLOB NOT NULL,
    -- The id the provider knows the case by (a tax registration's public id).
    case_id      BLOB NOT NULL,
    environment  TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    event_type   TEXT NOT NULL,
    payload      TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
-- A provider's events newest first, all or of one type; a case's; a client company's.
CREATE INDEX events_provider ON events (provider_id, seq);
CREATE INDEX events_provider_type ON events (provider_id, event_type, seq);
CREATE INDEX events_case ON events (case_id, seq);
CREATE INDEX events_company ON events (company_id, seq);

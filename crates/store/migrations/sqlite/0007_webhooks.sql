-- Webhooks (decisions.md §6): a provider's endpoints, the outbox of messages (one per event and
-- endpoint, written in the transaction of the status change) and every delivery attempt.

CREATE TABLE webhook_endpoints (
    id                          BLOB PRIMARY KEY NOT NULL,
    provider_id                 BLOB NOT NULL REFERENCES companies (id),
    url                         TEXT NOT NULL,
    -- JSON array of event types; NULL: every event, including types added later.
    events                      TEXT,
    secret                      TEXT NOT NULL,
    -- After a rotation the old secret keeps signing until it expires.
    previous_secret             TEXT,
    previous_secret_expires_at  TEXT,
    created_at                  TEXT NOT NULL,
    deleted_at                  TEXT
);
CREATE INDEX webhook_endpoints_provider ON webhook_endpoints (provider_id) WHERE deleted_at IS NULL;

CREATE TABLE webhook_messages (
    -- Insertion order: the delivery order of one case's events at one endpoint.
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               BLOB NOT NULL UNIQUE,
    endpoint_id      BLOB NOT NULL REFERENCES webhook_endpoints (id),
    case_id          BLOB NOT NULL,
    event_type       TEXT NOT NULL,
    payload          TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    -- Times the worker compares are microseconds since the epoch (exact in both dialects).
    next_attempt_us  INTEGER NOT NULL,
    -- Set while one worker delivers it; a worker that dies lets the lease run out.
    locked_until_us  INTEGER,
    created_at       TEXT NOT NULL,
    finished_at      TEXT
);
CREATE INDEX webhook_messages_due ON webhook_messages (next_attempt_us) WHERE state = 'pending';
CREATE INDEX webhook_messages_case ON webhook_messages (endpoint_id, case_id, seq) WHERE state = 'pending';

CREATE TABLE webhook_attempts (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id   BLOB NOT NULL REFERENCES webhook_messages (id),
    endpoint_id  BLOB NOT NULL,
    attempt      INTEGER NOT NULL,
    at           TEXT NOT NULL,
    status_code  INTEGER,
    error        TEXT,
    duration_ms  INTEGER NOT NULL,
    -- delivered | retrying | failed
    outcome      TEXT NOT NULL
);
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, seq);

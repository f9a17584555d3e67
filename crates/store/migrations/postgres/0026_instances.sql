-- What instances share (issue 53, docs/operations.md "Running N instances").
-- Console sessions, by the SHA-256 of their token (the cookie holds the token, the database
-- never does): any instance serves an operator's next request, and a restart signs no one out.
CREATE TABLE console_sessions (
    token_hash    BYTEA PRIMARY KEY NOT NULL,
    operator_id   UUID NOT NULL,
    operator_name TEXT NOT NULL,
    key_prefix    TEXT NOT NULL,
    csrf          TEXT NOT NULL,
    started_us    BIGINT NOT NULL,
    seen_us       BIGINT NOT NULL,
    -- The messages the next page shows once (JSON), or NULL.
    flash         TEXT
);
CREATE INDEX console_sessions_seen ON console_sessions (seen_us);
-- Jobs one instance at a time runs (the pruning job): who holds each, and until when.
CREATE TABLE leases (
    name      TEXT PRIMARY KEY NOT NULL,
    holder    UUID NOT NULL,
    until_us  BIGINT NOT NULL
);
-- The instances that said they are alive, and when they last did.
CREATE TABLE instances (
    id       UUID PRIMARY KEY NOT NULL,
    seen_us  BIGINT NOT NULL
);

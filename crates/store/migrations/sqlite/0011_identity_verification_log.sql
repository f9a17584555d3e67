-- Every record and removal of an owner's identity verification, with who made it and when
-- (`GET /v1/operator/trade-registrations/{id}/owners/{i}/identity-verified`):
-- `identity_verifications` holds only the record in force. Existing records are copied in as
-- recorded at their own time.
CREATE TABLE identity_verification_log (
    id          INTEGER PRIMARY KEY,
    case_id     BLOB NOT NULL REFERENCES trade_registrations (id),
    owner_index INTEGER NOT NULL,
    action      TEXT NOT NULL CHECK (action IN ('recorded', 'removed')),
    verified_at TEXT,
    actor       TEXT NOT NULL,
    at          TEXT NOT NULL
);
CREATE INDEX identity_verification_log_owner
    ON identity_verification_log (case_id, owner_index, id);
INSERT INTO identity_verification_log (case_id, owner_index, action, verified_at, actor, at)
    SELECT case_id, owner_index, 'recorded', verified_at, actor, verified_at
    FROM identity_verifications ORDER BY verified_at;

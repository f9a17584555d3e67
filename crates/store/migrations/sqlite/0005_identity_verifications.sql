-- When an operator verified an owner's identity (one row per owner of a trade registration).
CREATE TABLE identity_verifications (
    case_id     BLOB NOT NULL REFERENCES trade_registrations (id),
    owner_index INTEGER NOT NULL,
    verified_at TEXT NOT NULL,
    actor       TEXT NOT NULL,
    PRIMARY KEY (case_id, owner_index)
);

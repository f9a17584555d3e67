-- When an operator verified an owner's identity (one row per owner of a trade registration).
CREATE TABLE identity_verifications (
    case_id     UUID NOT NULL REFERENCES trade_registrations (id),
    owner_index INTEGER NOT NULL,
    verified_at TIMESTAMPTZ NOT NULL,
    actor       TEXT NOT NULL,
    PRIMARY KEY (case_id, owner_index)
);

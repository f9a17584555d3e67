-- Keys restricted to one environment (docs/adr/0021-environment-restricted-keys.md): a
-- restricted key creates and sees only cases and client companies of `environment`; NULL is an
-- unrestricted key (every key issued before, and still the default). Operator keys are never
-- restricted.
ALTER TABLE api_keys ADD COLUMN environment TEXT
    CHECK (environment IN ('sandbox', 'production'));

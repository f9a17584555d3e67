-- Keys listed and capped per company over HTTP (`GET /v1/companies/{id}/api-keys`,
-- `FILING_MAX_KEYS_PER_COMPANY`): when each key was last used (written at most once a minute
-- per key and instance), and an index for a company's keys in listing order.
ALTER TABLE api_keys ADD COLUMN last_used_at TIMESTAMPTZ;
CREATE INDEX api_keys_company ON api_keys (company_id, created_at, prefix);

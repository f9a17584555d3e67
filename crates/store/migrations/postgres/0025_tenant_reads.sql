-- Reads one tenant cannot make slow for itself or others (issue 52.3, docs/operations.md
-- "Reads"). A list by client reference and status walked every case of that reference (an
-- attacker's 300,000 of one reference took about a second each); the reference index now
-- names the status too, so both filters together are one index range (a list by reference
-- alone reads the same range and sorts what it found, a few rows for a real reference).
DROP INDEX trade_registrations_provider_reference;
CREATE INDEX trade_registrations_provider_reference
    ON trade_registrations (provider_id, client_reference, status, id)
    WHERE client_reference IS NOT NULL;
DROP INDEX tax_registrations_provider_reference;
CREATE INDEX tax_registrations_provider_reference
    ON tax_registrations (provider_id, client_reference, status, list_key)
    WHERE client_reference IS NOT NULL;
-- A key restricted to one environment reads its provider's events of that environment: the
-- log had no index with `environment`, so every such read walked the provider's whole log.
CREATE INDEX events_provider_environment ON events (provider_id, environment, seq);

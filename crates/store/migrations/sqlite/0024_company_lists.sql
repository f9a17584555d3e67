-- An index every list statement showed missing when each filter combination was explained at a
-- million cases and their events (issue 52.3: crates/store/src/plans.rs,
-- crates/store/examples/console_lists.rs --explain, docs/operations.md "Reads"): a client
-- company's list, and a provider's list filtered by `company_id`, had no index with the
-- company, and the first page walked every case in order (SQLite 7 to 22 s, PostgreSQL about
-- 1 s at a million cases, for a company with one case).
CREATE INDEX trade_registrations_company_list ON trade_registrations (company_id, id);
CREATE INDEX tax_registrations_company_list ON tax_registrations (company_id, list_key);
-- A provider's list by client reference without a status: the reference index names the
-- status before the order, so such a page sorted every case of the reference (300,000 of an
-- attacker's one reference outran the read budget); this one reads them in the list's order.
CREATE INDEX trade_registrations_provider_reference_list
    ON trade_registrations (provider_id, client_reference, id) WHERE client_reference IS NOT NULL;
CREATE INDEX tax_registrations_provider_reference_list
    ON tax_registrations (provider_id, client_reference, list_key) WHERE client_reference IS NOT NULL;

-- A cancelled case no longer blocks a new one for its company (issue 37, docs/api/lifecycle.md
-- "Cancellation"): one registration per company and kind becomes one *not cancelled* one. The
-- partial unique indexes keep `company_id` in their names, which is how a refused create is told
-- apart from other conflicts (`StoreError::is_company_conflict`).
ALTER TABLE trade_registrations DROP CONSTRAINT trade_registrations_company_id_key;
CREATE UNIQUE INDEX trade_registrations_company_id_open ON trade_registrations (company_id)
    WHERE status <> 'cancelled';
ALTER TABLE tax_registrations DROP CONSTRAINT tax_registrations_company_id_key;
CREATE UNIQUE INDEX tax_registrations_company_id_open ON tax_registrations (company_id)
    WHERE status <> 'cancelled';

-- The cases by status for the metrics (`filing_cases`): a GROUP BY read from this index alone,
-- without touching the rows (ADR 0023).
CREATE INDEX trade_registrations_status_environment ON trade_registrations (status, environment);
CREATE INDEX tax_registrations_status_environment ON tax_registrations (status, environment);

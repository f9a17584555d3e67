-- The fields an operator changed, on the history entry that records the change (issue 39,
-- docs/adr/0025-audit-of-operator-changes.md): a JSON array of {"field", "old", "new"}, the
-- values as a clerk reads them. NULL on status steps, which change no field; a field-change
-- entry keeps the case's status (status = previous_status) and has no webhook event.
ALTER TABLE status_history ADD COLUMN changes TEXT;

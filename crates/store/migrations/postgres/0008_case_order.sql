-- "Oldest first" for tax registrations: a caller may choose a tax registration's id, so listings
-- cannot sort by id. `list_key` is a time-ordered UUID the service assigns at insert.
ALTER TABLE tax_registrations ADD COLUMN list_key UUID;
UPDATE tax_registrations SET list_key = id;
CREATE INDEX tax_registrations_list ON tax_registrations (list_key);

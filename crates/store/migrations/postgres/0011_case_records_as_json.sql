-- A case's stored request (`record`) as `json`, its text as written, instead of `jsonb`.
--
-- Every case read sends the whole record (about 2 KB). For `jsonb` PostgreSQL turns its binary
-- form back into text on every read (`jsonb_send`: 5 % of the machine's CPU under trade GET load,
-- BENCHMARKS.md); for `json` it sends the stored text. Nothing looks inside a record but the
-- webhook messages' `record ->> 'client_reference'`, which `json` has too, and no index covers a
-- record. Writes still bind `jsonb` parameters; the assignment cast stores their text.
--
-- Rewrites both tables once, under an exclusive lock: 30 s for a million trade cases on the
-- benchmark machine (2.4 GB of table and indexes before, 2.0 GB after).
ALTER TABLE trade_registrations ALTER COLUMN record TYPE json USING record::json;
ALTER TABLE tax_registrations ALTER COLUMN record TYPE json USING record::json;

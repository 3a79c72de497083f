-- 007: cheaper accepted sends (the database's share of an accept).
--
-- `batches.items` (the distinct contacts of a send, 5-10 kB for 50 contacts) is written once, by the
-- accept, as JSON text the service itself produced, and read back whole, once, by the worker. As jsonb,
-- PostgreSQL parsed and re-encoded it, then compressed it with pglz, on every accept. Measured on a
-- 9 kB items text, per row: jsonb + pglz 117 µs, text + pglz 43 µs, text + lz4 9 µs. So: text, and
-- lz4 where the server has it (PostgreSQL builds with lz4 do; the embedded PGlite does not, and keeps
-- pglz).
ALTER TABLE batches ALTER COLUMN items TYPE text USING items::text;
DO $$
BEGIN
  ALTER TABLE batches ALTER COLUMN items SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  NULL; -- built without lz4
END $$;

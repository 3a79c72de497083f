-- 034: automations and campaigns can be archived (docs/operator-api.md "Archive and restore"): an
-- archived source is hidden from the lists and cannot be sent or triggered, and is restored by setting
-- `archived_at` back to NULL. Nothing else about it changes, so a restore gives back exactly what was
-- archived (an automation keeps its `active` flag).
ALTER TABLE automations ADD COLUMN archived_at timestamptz;

ALTER TABLE campaigns ADD COLUMN archived_at timestamptz;

-- The console's lists show each source's last send and the results of its recent sends
-- (src/db/source-results.ts): this index finds a source's batches, newest first, without reading the
-- company's other batches (an automation triggered all day has many).
CREATE INDEX batches_source ON batches (company_id, kind, source_id, created_at DESC);

-- 006: cheaper message updates for the send pipeline.
--
-- A message row is written once by fan-out and updated once or twice by delivery (claim, result).
-- Those updates change no indexed column, so PostgreSQL can make them HOT (no new index entries) when
-- the page has room: leave half of each new page free, and drop 001's partial index on pending
-- messages, whose predicate on `status` made every result update a non-HOT one. Lookups of a batch's
-- pending messages use the (batch_id, seq) unique index instead (at most 1000 rows a batch).
DROP INDEX IF EXISTS messages_pending;
ALTER TABLE messages SET (fillfactor = 50);

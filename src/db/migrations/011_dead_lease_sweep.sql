-- 011: the dead-lease sweep without an index on messages.lease_until.
--
-- 008 indexed `lease_until` so that the workers' sweep could find messages whose delivery run died.
-- But every claim, renewal and result changes `lease_until`, and an indexed column that changes makes
-- PostgreSQL's update a non-HOT one (a new entry in every index of the table, which migration 006 had
-- removed from the hot path): webhook delivery fell from ~7.6k to ~5k messages/s. The sweep now starts
-- from the batches still being delivered (a small partial index: a batch leaves it when it completes)
-- and reads their messages through the (batch_id, seq) index.
DROP INDEX IF EXISTS messages_leased;
CREATE INDEX batches_processing ON batches (batch_id) WHERE status = 'processing';

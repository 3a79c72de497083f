-- 028: bounded storage (docs/operations.md "Retention"): what the retention job (src/queue/retention.ts,
-- MESSAGE_RETENTION) needs to find old rows without reading whole tables, so that it deletes them in
-- short statements of a few thousand rows.
--
-- - Finished batches by acceptance time. Partial: a new batch (completed_at NULL) adds no entry, so the
--   accept path writes no more than before; completing a batch already is not a HOT update
--   (batches_processing of 011 names `status`).
-- - Inbound messages (replies) by arrival.
-- - The Overview's counts (015) by bucket: a new bucket's row adds an entry, a count's change does not.
--
-- Messages are found through their batch (the (batch_id, seq) index). `messages` stays one table:
-- partitioning it by month, so that retention could drop months, cost the send pipeline's statements
-- far more server CPU than the deletes it saves (docs/operations.md "Why messages are not
-- partitioned").
CREATE INDEX batches_finished ON batches (created_at) WHERE completed_at IS NOT NULL;
CREATE INDEX inbound_messages_created ON inbound_messages (created_at);
CREATE INDEX message_counts_bucket ON message_counts (bucket);

-- 025: a batch's messages filtered by status, a page at a time (src/domain/batch-messages.ts): the
-- keyset page `WHERE batch_id = $1 AND status = $2 AND seq > $3 ORDER BY seq LIMIT n` reads this index
-- instead of walking the whole batch through (batch_id, seq) to find, say, its few failed messages.
-- Status updates already are not HOT (the partial index messages_waiting of 017 names `status` in its
-- predicate), so this index adds one index entry per status change and no lost HOT update.
CREATE INDEX messages_batch_status_seq ON messages (batch_id, status, seq);

-- 024: a batch's funnel in one place for SQL (docs/decisions.md#7-a-messages-life; docs/architecture.md "Where
-- SQL lives"). Its TypeScript twin is batchCounts() in src/domain/batch-counts.ts, which every
-- TypeScript caller uses over cms_batch_status_counts(); test/pipeline/batch-counts.test.ts checks on
-- the same rows that GET /admin/batches/{id}, the batch list, the console's Sends list and the
-- batch.completed event (this file's cms_batch_counts) agree. The SQL copy of the rule stays because
-- the outbox trigger writes the event in the transaction of the change, where no TypeScript runs.

-- The messages of a batch by status, each message once, under its own status. A set-returning SQL
-- function (STABLE, not STRICT): the planner inlines it, so `LEFT JOIN LATERAL
-- cms_batch_status_counts(b.batch_id)` is planned like the subquery it replaced (the batch's index).
CREATE FUNCTION cms_batch_status_counts(p_batch_id uuid)
RETURNS TABLE (sent int, delivered int, read int, failed int, skipped int)
LANGUAGE sql STABLE AS $$
  SELECT count(*) FILTER (WHERE m.status = 'sent')::int,
         count(*) FILTER (WHERE m.status = 'delivered')::int,
         count(*) FILTER (WHERE m.status = 'read')::int,
         count(*) FILTER (WHERE m.status = 'failed')::int,
         count(*) FILTER (WHERE m.status = 'skipped')::int
  FROM messages m WHERE m.batch_id = p_batch_id
$$;

-- The funnel of a batch of `p_total` messages as JSON (keys in the order of the API's BatchCounts): a
-- read message counts as sent, delivered and read, a delivered one as sent and delivered; failed and
-- skipped as they are; pending = total - sent - failed - skipped (messages not yet written included).
CREATE FUNCTION cms_batch_counts(p_batch_id uuid, p_total int) RETURNS json
LANGUAGE sql STABLE AS $$
  SELECT json_build_object(
    'total', p_total,
    'sent', c.sent + c.delivered + c.read,
    'delivered', c.delivered + c.read,
    'read', c.read,
    'failed', c.failed,
    'skipped', c.skipped,
    'pending', p_total - (c.sent + c.delivered + c.read) - c.failed - c.skipped)
  FROM cms_batch_status_counts(p_batch_id) c
$$;

-- batch.completed with the batch's final counts (as 008 wrote it, the counts now from cms_batch_counts).
CREATE OR REPLACE FUNCTION cms_batch_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'batch.completed', json_build_object(
    'type', 'batch.completed',
    'timestamp', cms_rfc3339(coalesce(n.completed_at, now())),
    'data', json_build_object('batch_id', n.batch_id, 'kind', n.kind, 'source_id', n.source_id,
      'counts', cms_batch_counts(n.batch_id, n.total)))
  FROM new_rows n
  JOIN old_rows o ON o.batch_id = n.batch_id
  WHERE n.status = 'completed' AND o.status <> 'completed' AND cms_wants_event(n.company_id, 'batch.completed');
  RETURN NULL;
END $$;

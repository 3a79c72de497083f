-- 035: a batch's counts kept as they change, and counters that concurrent writers do not queue on
-- (docs/architecture.md "Where SQL lives", counts kept by triggers).
--
-- 1. `batch_status_counts`: per batch, its messages by final or sent status. GET /admin/batches/{id},
--    the batch list, the console's Sends pages and the batch.completed event read the batch's counts
--    through cms_batch_status_counts() (024), which counted the batch's messages: for a send of
--    1,000,000 messages, about 0.8 s of PostgreSQL's CPU at every look, and integrations and the
--    console's progress look every few seconds while it delivers (measured: with a poll every 250 ms,
--    three quarters of PostgreSQL's CPU in a delivery of 200,000 messages). Now the function sums at
--    most 8 rows. Pending is not counted: it is total - sent - failed - skipped as before, messages not
--    yet written included.
-- 2. `shard`: statement-level triggers with transition tables (as 015 does) add each statement's
--    changes to a row of the counters. Two workers that settle results of the same company (015) or
--    the same batch at once would update the same counter row, and the second waits for the first's
--    commit (measured: 7 ms on average per result statement spent waiting in 015's upsert with two
--    worker processes). Each database session writes to the row of its own shard
--    (pg_backend_pid() % 8); readers sum the shards. On PGlite, with one session, there is one shard.
--
-- The counts survive retention's deletion of a finished batch's messages (their batch still shows its
-- final counts) and go with the batch (foreign key).
CREATE TABLE batch_status_counts (
  batch_id  uuid     NOT NULL REFERENCES batches ON DELETE CASCADE,
  shard     smallint NOT NULL,
  sent      integer  NOT NULL DEFAULT 0,
  delivered integer  NOT NULL DEFAULT 0,
  read      integer  NOT NULL DEFAULT 0,
  failed    integer  NOT NULL DEFAULT 0,
  skipped   integer  NOT NULL DEFAULT 0,
  PRIMARY KEY (batch_id, shard)
);

-- The shard of the current session's counter rows.
CREATE FUNCTION cms_count_shard() RETURNS smallint LANGUAGE sql VOLATILE AS $$
  SELECT (pg_backend_pid() % 8)::smallint
$$;

-- Adds per-batch status deltas (a set of (batch_id, status, delta) rows) to the session's shard.
-- Statuses other than the five counted ones (pending) are left out; a batch whose deltas sum to zero
-- (a claim or lease renewal: pending to pending) writes nothing. Ordered by batch, so that concurrent
-- statements lock counter rows in the same order.
CREATE FUNCTION cms_batch_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO batch_status_counts AS c (batch_id, shard, sent, delivered, read, failed, skipped)
  SELECT n.batch_id, cms_count_shard(),
         count(*) FILTER (WHERE n.status = 'sent'), count(*) FILTER (WHERE n.status = 'delivered'),
         count(*) FILTER (WHERE n.status = 'read'), count(*) FILTER (WHERE n.status = 'failed'),
         count(*) FILTER (WHERE n.status = 'skipped')
  FROM new_rows n
  WHERE n.status IN ('sent', 'delivered', 'read', 'failed', 'skipped')
  GROUP BY n.batch_id
  ORDER BY n.batch_id
  ON CONFLICT (batch_id, shard) DO UPDATE SET
    sent = c.sent + EXCLUDED.sent, delivered = c.delivered + EXCLUDED.delivered, read = c.read + EXCLUDED.read,
    failed = c.failed + EXCLUDED.failed, skipped = c.skipped + EXCLUDED.skipped;
  RETURN NULL;
END $$;

CREATE FUNCTION cms_batch_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO batch_status_counts AS c (batch_id, shard, sent, delivered, read, failed, skipped)
  SELECT d.batch_id, cms_count_shard(), d.sent, d.delivered, d.read, d.failed, d.skipped
  FROM (SELECT x.batch_id,
               coalesce(sum(x.delta) FILTER (WHERE x.status = 'sent'), 0)::int AS sent,
               coalesce(sum(x.delta) FILTER (WHERE x.status = 'delivered'), 0)::int AS delivered,
               coalesce(sum(x.delta) FILTER (WHERE x.status = 'read'), 0)::int AS read,
               coalesce(sum(x.delta) FILTER (WHERE x.status = 'failed'), 0)::int AS failed,
               coalesce(sum(x.delta) FILTER (WHERE x.status = 'skipped'), 0)::int AS skipped
        FROM (SELECT n.batch_id, n.status, 1 AS delta FROM new_rows n WHERE n.status <> 'pending'
              UNION ALL
              SELECT o.batch_id, o.status, -1 FROM old_rows o WHERE o.status <> 'pending') x
        GROUP BY x.batch_id) d
  WHERE d.sent <> 0 OR d.delivered <> 0 OR d.read <> 0 OR d.failed <> 0 OR d.skipped <> 0
  ORDER BY d.batch_id
  ON CONFLICT (batch_id, shard) DO UPDATE SET
    sent = c.sent + EXCLUDED.sent, delivered = c.delivered + EXCLUDED.delivered, read = c.read + EXCLUDED.read,
    failed = c.failed + EXCLUDED.failed, skipped = c.skipped + EXCLUDED.skipped;
  RETURN NULL;
END $$;

CREATE TRIGGER messages_batch_counts_insert AFTER INSERT ON messages
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_batch_counts_insert();
CREATE TRIGGER messages_batch_counts_update AFTER UPDATE ON messages
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_batch_counts_update();

-- The messages already stored (the triggers above hold the lock that keeps writers out until commit).
INSERT INTO batch_status_counts (batch_id, shard, sent, delivered, read, failed, skipped)
SELECT m.batch_id, 0,
       count(*) FILTER (WHERE m.status = 'sent'), count(*) FILTER (WHERE m.status = 'delivered'),
       count(*) FILTER (WHERE m.status = 'read'), count(*) FILTER (WHERE m.status = 'failed'),
       count(*) FILTER (WHERE m.status = 'skipped')
FROM messages m
WHERE m.status <> 'pending'
GROUP BY m.batch_id;

-- 024's function, now over the counters: one row, the same columns.
CREATE OR REPLACE FUNCTION cms_batch_status_counts(p_batch_id uuid)
RETURNS TABLE (sent int, delivered int, read int, failed int, skipped int)
LANGUAGE sql STABLE AS $$
  SELECT coalesce(sum(c.sent), 0)::int, coalesce(sum(c.delivered), 0)::int, coalesce(sum(c.read), 0)::int,
         coalesce(sum(c.failed), 0)::int, coalesce(sum(c.skipped), 0)::int
  FROM batch_status_counts c WHERE c.batch_id = p_batch_id
$$;

-- 015's counters, sharded the same way: the shard joins the key, and readers already sum.
ALTER TABLE message_counts ADD COLUMN shard smallint NOT NULL DEFAULT 0;
ALTER TABLE message_counts DROP CONSTRAINT message_counts_pkey;
ALTER TABLE message_counts ADD PRIMARY KEY (company_id, bucket, status, code, shard);

CREATE OR REPLACE FUNCTION cms_message_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_counts AS c (company_id, bucket, status, code, shard, count, example)
  SELECT n.company_id, cms_count_bucket(b.created_at), n.status,
         cms_count_code(n.status, n.reason, n.error_code, n.error), cms_count_shard(), count(*), max(left(n.error, 200))
  FROM new_rows n JOIN batches b ON b.batch_id = n.batch_id
  GROUP BY 1, 2, 3, 4
  ORDER BY 1, 2, 3, 4
  ON CONFLICT (company_id, bucket, status, code, shard)
  DO UPDATE SET count = c.count + EXCLUDED.count, example = coalesce(EXCLUDED.example, c.example);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION cms_message_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_counts AS c (company_id, bucket, status, code, shard, count, example)
  SELECT d.company_id, cms_count_bucket(b.created_at), d.status, d.code, cms_count_shard(), sum(d.delta), max(d.example)
  FROM (SELECT x.company_id, x.batch_id, x.status, x.code, sum(x.delta) AS delta, max(x.example) AS example
        FROM (SELECT n.company_id, n.batch_id, n.status, cms_count_code(n.status, n.reason, n.error_code, n.error) AS code, 1 AS delta, left(n.error, 200) AS example FROM new_rows n
              UNION ALL
              SELECT o.company_id, o.batch_id, o.status, cms_count_code(o.status, o.reason, o.error_code, o.error), -1, NULL FROM old_rows o) x
        GROUP BY 1, 2, 3, 4
        HAVING sum(x.delta) <> 0) d
  JOIN batches b ON b.batch_id = d.batch_id
  GROUP BY 1, 2, 3, 4
  ORDER BY 1, 2, 3, 4
  ON CONFLICT (company_id, bucket, status, code, shard)
  DO UPDATE SET count = c.count + EXCLUDED.count, example = coalesce(EXCLUDED.example, c.example);
  RETURN NULL;
END $$;

-- A batch's waiting messages by reason (GET /admin/batches/{id} `waiting`): the pending messages with a
-- reason, found without reading the batch's other pending messages. Only messages that wait are in it,
-- and status and reason are in other indexes already, so no update that was HOT stops being so.
CREATE INDEX messages_batch_waiting ON messages (batch_id, reason) WHERE status = 'pending' AND reason IS NOT NULL;

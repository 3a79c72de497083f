-- 036: the statement triggers of `messages` return at once when a statement has nothing for them
-- (docs/architecture.md "Where SQL lives", counts kept by triggers; docs/events.md).
--
-- Every claim, lease renewal and result of the delivery workers is an UPDATE of `messages`, and each
-- fires the statement triggers with the statement's rows as transition tables. Most of those
-- statements give the event and count triggers nothing to do, yet the triggers joined the old and new
-- rows and called cms_wants_event() once per changed row to find that out:
-- - a claim or renewal leaves every row `pending` (no event, no change of a batch's counts);
-- - a result of a company without an enabled event endpoint writes no event (measured with
--   pg_stat_statements, 20,000 webhook deliveries: 12 of PostgreSQL's ~170 µs a message went to the
--   two event INSERTs of the message triggers, which wrote no row).
-- Each function now first looks whether any row left `pending` and, for events, whether any of those
-- rows' companies has an enabled endpoint; the statements after the guard are those of 008/018/035
-- unchanged. What the triggers write is the same row for row.

-- message.<status> on insert (008), after the guard.
CREATE OR REPLACE FUNCTION cms_message_insert_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM (SELECT DISTINCT n.company_id FROM new_rows n WHERE n.status <> 'pending') c
                 JOIN event_endpoints e ON e.company_id = c.company_id AND e.enabled) THEN
    RETURN NULL;
  END IF;
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'message.' || n.status, json_build_object(
    'type', 'message.' || n.status,
    'timestamp', cms_rfc3339(cms_message_event_time(n)),
    'data', cms_message_event_data(n, b.kind, b.source_id))
  FROM new_rows n
  JOIN batches b ON b.batch_id = n.batch_id
  WHERE n.status <> 'pending' AND cms_wants_event(n.company_id, 'message.' || n.status);
  RETURN NULL;
END $$;

-- message.<status> on update (018), after the guard: an event needs a row that is not `pending` now.
CREATE OR REPLACE FUNCTION cms_message_update_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM (SELECT DISTINCT n.company_id FROM new_rows n WHERE n.status <> 'pending') c
                 JOIN event_endpoints e ON e.company_id = c.company_id AND e.enabled) THEN
    RETURN NULL;
  END IF;
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'message.delivered', json_build_object(
    'type', 'message.delivered',
    'timestamp', cms_rfc3339(coalesce(n.delivered_at, n.read_at, now())),
    'data', cms_message_event_data(n, b.kind, b.source_id))
  FROM new_rows n
  JOIN old_rows o ON o.message_id = n.message_id
  JOIN batches b ON b.batch_id = n.batch_id
  WHERE n.status = 'read' AND o.status NOT IN ('delivered', 'read') AND cms_wants_event(n.company_id, 'message.delivered');

  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'message.' || n.status, json_build_object(
    'type', 'message.' || n.status,
    'timestamp', cms_rfc3339(cms_message_event_time(n)),
    'data', cms_message_event_data(n, b.kind, b.source_id))
  FROM new_rows n
  JOIN old_rows o ON o.message_id = n.message_id
  JOIN batches b ON b.batch_id = n.batch_id
  WHERE n.status <> o.status AND n.status <> 'pending' AND cms_wants_event(n.company_id, 'message.' || n.status);
  RETURN NULL;
END $$;

-- A batch's counts on update (035), after the guard: `pending` is not counted, so a statement whose
-- rows were and stay `pending` changes no count.
CREATE OR REPLACE FUNCTION cms_batch_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.status <> 'pending')
     AND NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.status <> 'pending') THEN
    RETURN NULL;
  END IF;
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

-- 037: the Overview's counter trigger on `messages` updates (015, 035) returns at once when every row
-- of the statement was and stays `pending`, as 036 does for the batch counts.
--
-- The counters key on (company, 15-minute slice of the batch, status, code), and cms_count_code()
-- gives '' to every `pending` message whatever its wait reason or error; an UPDATE changes neither a
-- message's company nor its batch. A statement whose rows are `pending` before and after (a claim, a
-- lease renewal, a release) therefore changes no counter: every sum the function builds is 0 and the
-- HAVING clause drops it. The guard skips building those sums (measured with pg_stat_statements,
-- 20,000 webhook deliveries: 642 claims ran the aggregation and wrote nothing). What the trigger writes
-- is the same row for row; the statement after the guard is 035's unchanged.
CREATE OR REPLACE FUNCTION cms_message_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.status <> 'pending')
     AND NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.status <> 'pending') THEN
    RETURN NULL;
  END IF;
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

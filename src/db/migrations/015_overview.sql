-- 015: message counts for the Overview, kept by triggers.
--
-- The Overview shows a company's messages per local day by status over 30 days and its top failure
-- reasons. Counting them from `messages` took 1.2-5.6 s for a company with 1,000,000 messages on
-- PostgreSQL (a hash join of every message of the period with its batch; docs/benchmarks.md), and no
-- index can make it cheap: an index holding `status` would turn every delivery result into a non-HOT
-- update (see 006 and 011). So the counts are kept as they change, in `message_counts`: per company,
-- per 15 minutes of batch acceptance (`batches.created_at`; every time zone's midnight falls on such a
-- boundary), per status, per failure code. The Overview sums at most 2,880 buckets a company.
--
-- `code`: '' for pending / sent / delivered / read; a skipped message's reason; a failed message's
-- provider error code, or its error text (first 200 characters) when it has no code. `example`: an
-- error text seen with the code.
--
-- Statement-level triggers with transition tables (like 008's events) apply one grouped upsert per
-- statement: +1 for each new message, and -1/+1 for each message whose (status, code) changed. Claims
-- and lease renewals change neither and write nothing. Measured (bench/overview-trigger.ts, an UPDATE
-- of 500 messages on PostgreSQL): +1-2 ms on a result or receipt update of 21-23 ms, +2-4 ms on a
-- claim of 11-16 ms, on a loaded machine. Upserts are ordered by key, so concurrent
-- statements lock counter rows in the same order. Messages are never deleted by the service (a
-- company's deletion removes its counts by the foreign key).
CREATE TABLE message_counts (
  company_id integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  bucket     timestamptz NOT NULL,
  status     text        NOT NULL,
  code       text        NOT NULL,
  count      bigint      NOT NULL,
  example    text,
  PRIMARY KEY (company_id, bucket, status, code)
);

-- The counted code of a message (see above).
CREATE FUNCTION cms_count_code(status text, reason text, error_code text, error text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE status WHEN 'skipped' THEN coalesce(reason, 'unknown')
                     WHEN 'failed' THEN coalesce(error_code, left(error, 200), 'unknown')
                     ELSE '' END
$$;

-- The 15-minute bucket of a batch's acceptance time.
CREATE FUNCTION cms_count_bucket(created_at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$
  SELECT date_bin('15 minutes', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')
$$;

CREATE FUNCTION cms_message_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_counts AS c (company_id, bucket, status, code, count, example)
  SELECT n.company_id, cms_count_bucket(b.created_at), n.status,
         cms_count_code(n.status, n.reason, n.error_code, n.error), count(*), max(left(n.error, 200))
  FROM new_rows n JOIN batches b ON b.batch_id = n.batch_id
  GROUP BY 1, 2, 3, 4
  ORDER BY 1, 2, 3, 4
  ON CONFLICT (company_id, bucket, status, code)
  DO UPDATE SET count = c.count + EXCLUDED.count, example = coalesce(EXCLUDED.example, c.example);
  RETURN NULL;
END $$;

CREATE FUNCTION cms_message_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- The change of each (batch, status, code): new rows count +1, old rows -1, with no join of the two
  -- (a claim or lease renewal changes no status: every sum is 0 and nothing is written).
  INSERT INTO message_counts AS c (company_id, bucket, status, code, count, example)
  SELECT d.company_id, cms_count_bucket(b.created_at), d.status, d.code, sum(d.delta), max(d.example)
  FROM (SELECT x.company_id, x.batch_id, x.status, x.code, sum(x.delta) AS delta, max(x.example) AS example
        FROM (SELECT n.company_id, n.batch_id, n.status, cms_count_code(n.status, n.reason, n.error_code, n.error) AS code, 1 AS delta, left(n.error, 200) AS example FROM new_rows n
              UNION ALL
              SELECT o.company_id, o.batch_id, o.status, cms_count_code(o.status, o.reason, o.error_code, o.error), -1, NULL FROM old_rows o) x
        GROUP BY 1, 2, 3, 4
        HAVING sum(x.delta) <> 0) d
  JOIN batches b ON b.batch_id = d.batch_id
  GROUP BY 1, 2, 3, 4
  ORDER BY 1, 2, 3, 4
  ON CONFLICT (company_id, bucket, status, code)
  DO UPDATE SET count = c.count + EXCLUDED.count, example = coalesce(EXCLUDED.example, c.example);
  RETURN NULL;
END $$;

CREATE TRIGGER messages_counts_insert AFTER INSERT ON messages
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_message_counts_insert();
CREATE TRIGGER messages_counts_update AFTER UPDATE ON messages
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_message_counts_update();

-- The messages already stored (the triggers above hold the lock that keeps writers out until commit).
INSERT INTO message_counts (company_id, bucket, status, code, count, example)
SELECT m.company_id, cms_count_bucket(b.created_at), m.status, cms_count_code(m.status, m.reason, m.error_code, m.error),
       count(*), max(left(m.error, 200))
FROM messages m JOIN batches b ON b.batch_id = m.batch_id
GROUP BY 1, 2, 3, 4;

-- The Overview's opt-out rate: the company's contacts and its opted-out ones, erased contacts left out,
-- by index-only scans (100,000 contacts: a sequential scan took 90-180 ms). Neither index holds a
-- column that ordinary contact updates change (names, variables, updated_at), so those stay HOT.
CREATE INDEX contacts_live ON contacts (company_id) WHERE erased_at IS NULL;
CREATE INDEX contacts_opted_out ON contacts (company_id, opt_out_at) WHERE opted_out AND erased_at IS NULL;

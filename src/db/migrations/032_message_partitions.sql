-- 032: `messages` partitioned by month (docs/operations.md "Partitions"), so that the retention job
-- (src/queue/retention.ts, MESSAGE_RETENTION) drops whole months instead of deleting their rows.
--
-- 1. Message ids are version 7 UUIDs whose first 48 bits are the Unix milliseconds of their batch's
--    acceptance (`batches.created_at`, src/db/messages.ts uuidv7), so `messages` is partitioned by
--    RANGE (message_id) with one partition per UTC month: `messages_pYYYYMM` holds the messages of
--    the batches accepted that month, and retention drops a whole month at once instead of deleting
--    its rows. The primary key (message_id) holds the partition key, so a look-up by message id (the
--    delivery results, gateway receipts) reads one partition. UNIQUE (batch_id, seq) cannot be a
--    constraint of the partitioned table (it does not hold the key); each partition has it as its own
--    unique index, and since a batch's messages all fall in one partition it still holds per batch.
--    No table references messages(message_id).
-- 2. The rows already stored stay where they are: the old table becomes the partition
--    `messages_legacy` of everything before next month (attached, not copied: attaching reads it once
--    to check the range, it does not rewrite it). Rows whose id is not a version 7 UUID of that range
--    (written by hand, never by the service) move to `messages_default`, the partition of ids no
--    other partition covers, so that an insert never fails for want of a partition.
-- 3. cms_messages_add_partitions(n) creates the partitions of this month and the n next ones that are
--    missing (the workers call it at start and daily; see src/queue/retention.ts), moving any rows of
--    their range out of the default partition first. cms_messages_drop_old_partition(cutoff) drops the
--    oldest partition whose messages are all older than the cutoff and whose batches have all
--    finished before it.
-- 4. batches.message_ids_at: the acceptance time fan-out put into the batch's message ids (NULL for
--    batches fanned out before this migration, whose ids carry the fan-out's own time). The delivery
--    statements of such a batch add the id range of t's month to their `batch_id` condition, so the
--    planner reads one partition instead of every one (src/db/messages.ts messageIdRange;
--    docs/operations.md "Partitions").
--
-- The indexes, triggers, foreign keys and row-type functions of the old table are carried over to the
-- partitioned one as they are found in the catalogue (not as earlier migrations wrote them), so a
-- migration that changed `messages` before this one is carried over too.

-- The smallest UUID of the millisecond `t`: the lower bound of the version 7 UUIDs made at or after t.
CREATE FUNCTION cms_uuid_floor(t timestamptz) RETURNS uuid LANGUAGE sql IMMUTABLE AS $$
  SELECT (lpad(to_hex(floor(extract(epoch FROM t) * 1000)::bigint), 12, '0') || '00000000000000000000')::uuid
$$;

-- The time in the first 48 bits of a version 7 UUID (Unix milliseconds).
CREATE FUNCTION cms_uuid_time(u uuid) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
  SELECT to_timestamp(('x' || lpad(left(replace(u::text, '-', ''), 12), 16, '0'))::bit(64)::bigint / 1000.0)
$$;

ALTER TABLE messages RENAME TO messages_legacy;

DO $migration$
DECLARE
  r record;
  bound uuid := cms_uuid_floor(date_trunc('month', now(), 'UTC') + interval '1 month');
BEGIN
  -- The old table's indexes take the names messages_legacy_*, freeing messages_* for the new table.
  FOR r IN SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE i.indrelid = 'messages_legacy'::regclass AND c.relname LIKE 'messages\_%' LOOP
    EXECUTE format('ALTER INDEX %I RENAME TO %I', r.relname, 'messages_legacy_' || substr(r.relname, 10));
  END LOOP;

  CREATE TABLE messages (LIKE messages_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED
    INCLUDING STORAGE INCLUDING COMPRESSION) PARTITION BY RANGE (message_id);
  ALTER TABLE messages ADD CONSTRAINT messages_pkey PRIMARY KEY (message_id);

  -- Foreign keys (batch_id → batches ON DELETE CASCADE): attaching the old table adopts its own.
  FOR r IN SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
           WHERE conrelid = 'messages_legacy'::regclass AND contype = 'f' LOOP
    EXECUTE format('ALTER TABLE messages ADD CONSTRAINT %I %s', r.conname, r.def);
  END LOOP;

  -- Every index but the primary key and the unique ones without message_id ((batch_id, seq): each
  -- partition's own). Attaching the old table adopts its equal index instead of building one.
  FOR r IN SELECT c.relname, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE i.indrelid = 'messages_legacy'::regclass AND NOT i.indisprimary AND NOT i.indisunique LOOP
    EXECUTE regexp_replace(r.def, '^CREATE INDEX \S+ ON (\S+\.)?messages_legacy ', format('CREATE INDEX %I ON messages ', 'messages_' || substr(r.relname, 17)));
  END LOOP;

  -- Functions taking a messages row (the event payload builders): the same ones for the new row type.
  FOR r IN SELECT p.oid, pg_get_functiondef(p.oid) AS def FROM pg_proc p
           WHERE 'messages_legacy'::regtype = ANY (p.proargtypes) LOOP
    EXECUTE replace(replace(r.def, 'CREATE OR REPLACE FUNCTION', 'CREATE FUNCTION'), 'messages_legacy', 'messages');
    EXECUTE format('DROP FUNCTION %s', r.oid::regprocedure);
  END LOOP;

  -- Triggers (the event outbox of 008, the counts of 015) move to the partitioned table: a statement
  -- trigger there sees the rows of every partition in its transition tables.
  FOR r IN SELECT tgname, pg_get_triggerdef(oid) AS def FROM pg_trigger
           WHERE tgrelid = 'messages_legacy'::regclass AND NOT tgisinternal LOOP
    EXECUTE format('DROP TRIGGER %I ON messages_legacy', r.tgname);
    EXECUTE regexp_replace(r.def, ' ON (\S+\.)?messages_legacy ', ' ON messages ');
  END LOOP;

  CREATE TABLE messages_default PARTITION OF messages DEFAULT WITH (fillfactor = 50);
  CREATE UNIQUE INDEX messages_default_batch_seq ON messages_default (batch_id, seq);

  -- Rows outside the old table's range (ids that are not version 7 UUIDs of the past) go to the default.
  EXECUTE format('WITH moved AS (DELETE FROM messages_legacy WHERE message_id >= %L RETURNING *) INSERT INTO messages_default SELECT * FROM moved', bound);
  EXECUTE format('ALTER TABLE messages ATTACH PARTITION messages_legacy FOR VALUES FROM (MINVALUE) TO (%L)', bound);
END $migration$;

-- The partitions of `messages`: name, range [lower, upper) of message ids (NULL: unbounded), default.
CREATE FUNCTION cms_messages_partitions() RETURNS TABLE (name text, lower uuid, upper uuid, is_default boolean)
LANGUAGE sql STABLE AS $$
  SELECT c.relname::text,
         substring(pg_get_expr(c.relpartbound, c.oid) FROM $re$FROM \('([0-9a-f-]{36})'\)$re$)::uuid,
         substring(pg_get_expr(c.relpartbound, c.oid) FROM $re$TO \('([0-9a-f-]{36})'\)$re$)::uuid,
         pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT'
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
  WHERE i.inhparent = 'messages'::regclass
$$;

-- Creates the missing monthly partitions of this UTC month and the `months_ahead` next ones (a month
-- that an existing partition already overlaps is left as it is); returns how many it created. Each is
-- created on its own and then attached (which locks the parent less than CREATE TABLE ... PARTITION
-- OF), after the rows of its range, if any, moved out of the default partition. Serialised by an
-- advisory lock taken only when something is missing.
CREATE FUNCTION cms_messages_add_partitions(months_ahead integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  first_month timestamptz := date_trunc('month', now(), 'UTC');
  m timestamptz;
  lo uuid;
  hi uuid;
  part text;
  made integer := 0;
  locked boolean := false;
BEGIN
  FOR i IN 0..months_ahead LOOP
    m := first_month + make_interval(months => i);
    lo := cms_uuid_floor(m);
    hi := cms_uuid_floor(m + interval '1 month');
    CONTINUE WHEN EXISTS (SELECT 1 FROM cms_messages_partitions() p
                          WHERE NOT p.is_default AND (p.lower IS NULL OR p.lower < hi) AND (p.upper IS NULL OR p.upper > lo));
    IF NOT locked THEN
      PERFORM pg_advisory_xact_lock(727028);
      locked := true;
      -- Another process may have created it while this one waited.
      CONTINUE WHEN EXISTS (SELECT 1 FROM cms_messages_partitions() p
                            WHERE NOT p.is_default AND (p.lower IS NULL OR p.lower < hi) AND (p.upper IS NULL OR p.upper > lo));
    END IF;
    part := 'messages_p' || to_char(m AT TIME ZONE 'UTC', 'YYYYMM');
    EXECUTE format('CREATE TABLE %I (LIKE messages INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMPRESSION) WITH (fillfactor = 50)', part);
    EXECUTE format('CREATE UNIQUE INDEX %I ON %I (batch_id, seq)', part || '_batch_seq', part);
    EXECUTE format('INSERT INTO %I SELECT * FROM messages_default WHERE message_id >= %L AND message_id < %L', part, lo, hi);
    EXECUTE format('DELETE FROM messages_default WHERE message_id >= %L AND message_id < %L', lo, hi);
    EXECUTE format('ALTER TABLE messages ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, lo, hi);
    made := made + 1;
  END LOOP;
  RETURN made;
END $$;

-- Drops the oldest partition (never the default) whose ids all lie before `cutoff`, when no batch
-- accepted before its end is unfinished or finished at or after `cutoff` (its messages are then all
-- due for retention; a batch's messages are in the partition of its acceptance month). Returns the
-- partition's name, or NULL when there is none to drop. Newer partitions wait while the oldest does.
CREATE FUNCTION cms_messages_drop_old_partition(cutoff timestamptz) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  p record;
BEGIN
  SELECT * INTO p FROM cms_messages_partitions() c
  WHERE NOT c.is_default AND c.upper IS NOT NULL AND c.upper <= cms_uuid_floor(cutoff)
  ORDER BY c.upper LIMIT 1;
  IF NOT FOUND THEN RETURN NULL; END IF;
  IF EXISTS (SELECT 1 FROM batches WHERE created_at < cms_uuid_time(p.upper) AND (completed_at IS NULL OR completed_at >= cutoff)) THEN
    RETURN NULL;
  END IF;
  EXECUTE format('DROP TABLE %I', p.name);
  RETURN p.name;
END $$;

SELECT cms_messages_add_partitions(3);

ALTER TABLE batches ADD COLUMN message_ids_at timestamptz;

-- 008: the delivery loop (docs/decisions.md#7-a-messages-life): what happens after `sent`.
--
-- 1. A message's life (§1): `delivered` and `read` after `sent`, the provider's id, the four times, the
--    provider's error code; `next_attempt_at` while a transient failure waits for its retry (§2; the
--    wait itself is a hold, `held_until`, released by the same sweep as delivery hours).
-- 2. Inbound (§3): replies stored per contact, opt-out keywords per company, the opt-out's source and
--    time on the contact, a WhatsApp phone_number_id owned by one company only.
-- 3. Events out (§5) as a transactional outbox: triggers write an `events` row in the same statement
--    (so the same transaction) as the change that causes it. No code path can change a message's
--    status, complete a batch, opt a contact out or in, or store a reply without its event, and a
--    change that rolls back takes its event with it. An event is written only when the company has an
--    enabled endpoint subscribed to its type (nobody to tell otherwise; the hot path pays one index
--    probe). A second trigger fans each new event out into one `event_deliveries` row per subscribed
--    endpoint, which the event workers deliver.

-- 1. Message lifecycle ------------------------------------------------------------------------------
ALTER TABLE messages DROP CONSTRAINT IF EXISTS messages_status_check;
ALTER TABLE messages ADD CONSTRAINT messages_status_check
  CHECK (status IN ('pending', 'sent', 'delivered', 'read', 'failed', 'skipped'));
ALTER TABLE messages ADD COLUMN provider_message_id text;
ALTER TABLE messages ADD COLUMN delivered_at timestamptz;
ALTER TABLE messages ADD COLUMN read_at timestamptz;
ALTER TABLE messages ADD COLUMN failed_at timestamptz;
ALTER TABLE messages ADD COLUMN error_code text;
ALTER TABLE messages ADD COLUMN next_attempt_at timestamptz;
-- Receipts find a message by the provider's id (WhatsApp's wamid), always together with its company.
CREATE INDEX messages_provider_message_id ON messages (provider_message_id) WHERE provider_message_id IS NOT NULL;
-- The lease sweep finds messages whose delivery run died (lease ran out, still pending).
CREATE INDEX messages_leased ON messages (lease_until) WHERE lease_until IS NOT NULL;

-- 2. Inbound ----------------------------------------------------------------------------------------
ALTER TABLE companies ADD COLUMN opt_out_keywords text[] NOT NULL
  DEFAULT ARRAY['STOP', 'STOPP', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT'];
ALTER TABLE companies ADD COLUMN opt_in_keywords text[] NOT NULL
  DEFAULT ARRAY['START', 'UNSTOP', 'SUBSCRIBE'];
-- A WhatsApp number belongs to one company: its webhooks name it, and receipts are applied to it.
CREATE UNIQUE INDEX companies_whatsapp_number ON companies ((channel->>'phone_number_id'))
  WHERE channel->>'provider' = 'whatsapp';

-- Where the contact's current opt-out state came from ('keyword', 'operator', 'import', 'console')
-- and when it last changed.
ALTER TABLE contacts ADD COLUMN opt_out_source text;
ALTER TABLE contacts ADD COLUMN opt_out_at timestamptz;

-- A message a contact sent to the company (a reply, a button press). `provider_message_id` makes a
-- webhook delivered twice store it once.
CREATE TABLE inbound_messages (
  inbound_id          bigserial   PRIMARY KEY,
  company_id          integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  contact_id          bigint      NOT NULL REFERENCES contacts ON DELETE CASCADE,
  provider_message_id text        NOT NULL,
  type                text        NOT NULL,
  text                text,
  payload             text,
  received_at         timestamptz NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  UNIQUE (company_id, provider_message_id)
);
CREATE INDEX inbound_messages_contact ON inbound_messages (contact_id, received_at DESC);

-- 3. Events out -------------------------------------------------------------------------------------
CREATE TABLE event_endpoints (
  endpoint_id     serial      PRIMARY KEY,
  company_id      integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  url             text        NOT NULL,
  events          text[]      NOT NULL,
  description     text,
  enabled         boolean     NOT NULL DEFAULT true,
  secret_sealed   text        NOT NULL,   -- whsec_..., sealed like provider secrets
  disabled_reason text,                   -- why the service disabled it (410, failing for 5 days)
  failing_since   timestamptz,            -- first failed attempt since the last success
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_endpoints_company ON event_endpoints (company_id);

-- One event: `payload` is the whole body sent ({type, timestamp, data}); `event_id` is its webhook-id.
CREATE TABLE events (
  event_id   text        PRIMARY KEY,
  company_id integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  type       text        NOT NULL,
  payload    json        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_company_created ON events (company_id, created_at);
CREATE INDEX events_created ON events (created_at);

-- One event to one endpoint. `next_attempt_at` NULL means due now; otherwise due when the injectable
-- clock reaches it. `lease_until` (database time) is a delivery run's claim.
CREATE TABLE event_deliveries (
  event_id        text        NOT NULL REFERENCES events ON DELETE CASCADE,
  endpoint_id     integer     NOT NULL REFERENCES event_endpoints ON DELETE CASCADE,
  status          text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts        integer     NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  lease_until     timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (event_id, endpoint_id)
);
CREATE INDEX event_deliveries_due ON event_deliveries (next_attempt_at NULLS FIRST) WHERE status = 'pending';
CREATE INDEX event_deliveries_endpoint ON event_deliveries (endpoint_id);

-- Every attempt to deliver an event to an endpoint (the attempt log).
CREATE TABLE event_attempts (
  attempt_id       bigserial   PRIMARY KEY,
  event_id         text        NOT NULL REFERENCES events ON DELETE CASCADE,
  endpoint_id      integer     NOT NULL REFERENCES event_endpoints ON DELETE CASCADE,
  attempt          integer     NOT NULL,
  status_code      integer,
  error            text,
  response_excerpt text,
  duration_ms      integer     NOT NULL,
  at               timestamptz NOT NULL
);
CREATE INDEX event_attempts_endpoint ON event_attempts (endpoint_id, attempt_id DESC);
CREATE INDEX event_attempts_event ON event_attempts (event_id);

-- RFC 3339 in UTC with milliseconds, as JavaScript's toISOString writes it; NULL stays NULL.
CREATE FUNCTION cms_rfc3339(t timestamptz) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- A new event id (the webhook-id): `evt_` and 32 hex digits.
CREATE FUNCTION cms_event_id() RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT 'evt_' || replace(gen_random_uuid()::text, '-', '')
$$;

-- True when company `c` has an enabled endpoint subscribed to `t`.
CREATE FUNCTION cms_wants_event(c integer, t text) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM event_endpoints e WHERE e.company_id = c AND e.enabled AND t = ANY (e.events))
$$;

-- The `data` of a message event (§5), from a messages row and its batch.
CREATE FUNCTION cms_message_event_data(m messages, kind text, source_id integer) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_strip_nulls(json_build_object(
    'message_id', m.message_id, 'batch_id', m.batch_id, 'company_id', m.company_id,
    'kind', kind, 'source_id', source_id, 'phone', m.phone, 'status', m.status,
    'reason', m.reason, 'error', m.error, 'error_code', m.error_code,
    'provider_message_id', m.provider_message_id,
    'sent_at', cms_rfc3339(m.sent_at), 'delivered_at', cms_rfc3339(m.delivered_at),
    'read_at', cms_rfc3339(m.read_at), 'failed_at', cms_rfc3339(m.failed_at)))
$$;

-- The time a message event reports: when the status it announces was reached.
CREATE FUNCTION cms_message_event_time(m messages) RETURNS timestamptz LANGUAGE sql STABLE AS $$
  SELECT coalesce(CASE m.status WHEN 'sent' THEN m.sent_at WHEN 'delivered' THEN m.delivered_at
    WHEN 'read' THEN m.read_at WHEN 'failed' THEN m.failed_at END, now())
$$;

-- message.<status> for each message whose status changed to a non-pending one.
CREATE FUNCTION cms_message_update_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
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

-- Messages written final by fan-out (skipped, or failed to render).
CREATE FUNCTION cms_message_insert_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
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

CREATE TRIGGER messages_update_events AFTER UPDATE ON messages
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_message_update_events();
CREATE TRIGGER messages_insert_events AFTER INSERT ON messages
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_message_insert_events();

-- batch.completed with the batch's final counts (a read message counts in sent, delivered and read).
CREATE FUNCTION cms_batch_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'batch.completed', json_build_object(
    'type', 'batch.completed',
    'timestamp', cms_rfc3339(coalesce(n.completed_at, now())),
    'data', json_build_object('batch_id', n.batch_id, 'kind', n.kind, 'source_id', n.source_id,
      'counts', (SELECT json_build_object(
        'total', n.total,
        'sent', count(*) FILTER (WHERE m.status IN ('sent', 'delivered', 'read')),
        'delivered', count(*) FILTER (WHERE m.status IN ('delivered', 'read')),
        'read', count(*) FILTER (WHERE m.status = 'read'),
        'failed', count(*) FILTER (WHERE m.status = 'failed'),
        'skipped', count(*) FILTER (WHERE m.status = 'skipped'),
        'pending', n.total - count(*) FILTER (WHERE m.status <> 'pending'))
        FROM messages m WHERE m.batch_id = n.batch_id)))
  FROM new_rows n
  JOIN old_rows o ON o.batch_id = n.batch_id
  WHERE n.status = 'completed' AND o.status <> 'completed' AND cms_wants_event(n.company_id, 'batch.completed');
  RETURN NULL;
END $$;

CREATE TRIGGER batches_update_events AFTER UPDATE ON batches
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_batch_events();

-- contact.opted_out / contact.opted_in when `opted_out` changes (or a contact is created opted out).
CREATE FUNCTION cms_contact_update_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, t.type, json_build_object(
    'type', t.type,
    'timestamp', cms_rfc3339(coalesce(n.opt_out_at, now())),
    'data', json_strip_nulls(json_build_object('phone', n.phone, 'source', n.opt_out_source, 'at', cms_rfc3339(coalesce(n.opt_out_at, now())))))
  FROM new_rows n
  JOIN old_rows o ON o.contact_id = n.contact_id
  CROSS JOIN LATERAL (SELECT CASE WHEN n.opted_out THEN 'contact.opted_out' ELSE 'contact.opted_in' END AS type) t
  WHERE n.opted_out <> o.opted_out AND cms_wants_event(n.company_id, t.type);
  RETURN NULL;
END $$;

CREATE FUNCTION cms_contact_insert_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'contact.opted_out', json_build_object(
    'type', 'contact.opted_out',
    'timestamp', cms_rfc3339(coalesce(n.opt_out_at, now())),
    'data', json_strip_nulls(json_build_object('phone', n.phone, 'source', n.opt_out_source, 'at', cms_rfc3339(coalesce(n.opt_out_at, now())))))
  FROM new_rows n
  WHERE n.opted_out AND cms_wants_event(n.company_id, 'contact.opted_out');
  RETURN NULL;
END $$;

CREATE TRIGGER contacts_update_events AFTER UPDATE ON contacts
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_contact_update_events();
CREATE TRIGGER contacts_insert_events AFTER INSERT ON contacts
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_contact_insert_events();

-- message.received for each stored inbound message.
CREATE FUNCTION cms_inbound_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'message.received', json_build_object(
    'type', 'message.received',
    'timestamp', cms_rfc3339(n.received_at),
    'data', json_strip_nulls(json_build_object('phone', c.phone, 'type', n.type, 'text', n.text,
      'payload', n.payload, 'provider_message_id', n.provider_message_id, 'received_at', cms_rfc3339(n.received_at))))
  FROM new_rows n
  JOIN contacts c ON c.contact_id = n.contact_id
  WHERE cms_wants_event(n.company_id, 'message.received');
  RETURN NULL;
END $$;

CREATE TRIGGER inbound_messages_events AFTER INSERT ON inbound_messages
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_inbound_events();

-- Each new event: one delivery per enabled endpoint of its company subscribed to its type.
CREATE FUNCTION cms_event_fanout() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_deliveries (event_id, endpoint_id)
  SELECT n.event_id, e.endpoint_id
  FROM new_rows n
  JOIN event_endpoints e ON e.company_id = n.company_id AND e.enabled AND n.type = ANY (e.events);
  RETURN NULL;
END $$;

CREATE TRIGGER events_fanout AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_event_fanout();

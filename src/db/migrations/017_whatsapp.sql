-- 017: WhatsApp by Meta's rules (docs/whatsapp.md): the template catalogue, the channel's state and
-- pacing, the pair rate, the messaging limit, message expiry, Meta's error details, and the events
-- whatsapp.template.updated, channel.paused and channel.resumed (written by triggers in the changing
-- transaction, as the events of 008 are).
--
-- Times: `next_slot_at` and `slowed_until` are database time (they pace real requests per second
-- across processes); every other time here comes from the service's injectable clock.

-- The synced copy of a company's WhatsApp message templates. Meta owns them; a sync replaces the copy
-- (UPDATE the known ones, INSERT the new ones, DELETE the gone ones, in one transaction) and webhooks
-- change single fields.
CREATE TABLE whatsapp_templates (
  company_id      integer     NOT NULL REFERENCES companies (company_id) ON DELETE CASCADE,
  template_id     text        NOT NULL,  -- Meta's `id`
  name            text        NOT NULL,
  language        text        NOT NULL,
  status          text        NOT NULL,  -- as Meta spells it: APPROVED, PENDING, REJECTED, PAUSED, DISABLED, ...
  category        text,
  quality_score   text,
  rejected_reason text,
  parameters      jsonb       NOT NULL,  -- {header: 0 | 1 | "image" | "video" | "document", body: n, buttons: [n, ...]}
  components      jsonb       NOT NULL,  -- Meta's components, as Meta sent them
  synced_at       timestamptz NOT NULL,
  PRIMARY KEY (company_id, template_id)
);
CREATE UNIQUE INDEX whatsapp_templates_name ON whatsapp_templates (company_id, name, language);

-- A WhatsApp channel's state beside its configuration (companies.channel): paused when Meta says the
-- number may not send, the quality Meta last reported, and the throughput pacer's next free slot.
-- A company without a row is `active`.
CREATE TABLE whatsapp_channel_state (
  company_id     integer     PRIMARY KEY REFERENCES companies (company_id) ON DELETE CASCADE,
  state          text        NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused')),
  reason         text,                  -- why the state last changed (the paused reason while paused)
  changed_at     timestamptz,
  quality_rating text,                  -- GREEN, YELLOW, RED, ... as Meta last reported, or NULL
  next_slot_at   timestamptz,           -- database time: the earliest start of the number's next request
  slowed_until   timestamptz,           -- database time: after 130429 the rate is reduced until then
  updated_at     timestamptz NOT NULL DEFAULT now()
);

-- Pair rate: the earliest time of the next send from a company's number to one recipient (E.164).
CREATE TABLE whatsapp_pairs (
  company_id integer     NOT NULL REFERENCES companies (company_id) ON DELETE CASCADE,
  recipient  text        NOT NULL,
  next_at    timestamptz NOT NULL,
  PRIMARY KEY (company_id, recipient)
);
CREATE INDEX whatsapp_pairs_next ON whatsapp_pairs (next_at);

-- Messaging limit: the people a company's number has opened a conversation with (a template message
-- while their customer-service window was closed), counted once per person per moving 24 h.
CREATE TABLE whatsapp_limit_counts (
  company_id integer     NOT NULL REFERENCES companies (company_id) ON DELETE CASCADE,
  recipient  text        NOT NULL,
  counted_at timestamptz NOT NULL,
  PRIMARY KEY (company_id, recipient)
);
CREATE INDEX whatsapp_limit_counts_window ON whatsapp_limit_counts (company_id, counted_at);

-- A message not handed to the provider by `expires_at` ends skipped with reason `expired`.
ALTER TABLE messages ADD COLUMN expires_at timestamptz;
-- The provider's error as it gave it: {code, title, message, details} (WhatsApp).
ALTER TABLE messages ADD COLUMN provider_error jsonb;
-- Pending messages that wait for something (src/db/whatsapp-channel.ts WAIT_REASONS), per company:
-- whatever ends the wait releases them by company and reason.
CREATE INDEX messages_waiting ON messages (company_id, reason) WHERE status = 'pending' AND reason IS NOT NULL;

-- How long a source's messages stay worth sending (a duration such as `24h`, or NULL: forever).
ALTER TABLE automations ADD COLUMN expire_after text;
ALTER TABLE campaigns ADD COLUMN expire_after text DEFAULT '24h';

-- The contact's last inbound message: its customer-service window is open for 24 h after it.
ALTER TABLE contacts ADD COLUMN last_inbound_at timestamptz;
UPDATE contacts c SET last_inbound_at = i.t
FROM (SELECT contact_id, max(received_at) AS t FROM inbound_messages GROUP BY contact_id) i
WHERE i.contact_id = c.contact_id;

-- A template as the operator API shows it (docs/whatsapp.md, the catalogue).
CREATE FUNCTION cms_whatsapp_template_json(t whatsapp_templates) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object(
    'template_id', t.template_id, 'name', t.name, 'language', t.language, 'status', t.status,
    'category', t.category, 'quality_score', t.quality_score, 'rejected_reason', t.rejected_reason,
    'parameters', t.parameters, 'components', t.components, 'synced_at', cms_rfc3339(t.synced_at))
$$;

-- whatsapp.template.updated when a template's status, category, quality or rejection reason changes.
CREATE FUNCTION cms_whatsapp_template_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'whatsapp.template.updated', json_build_object(
    'type', 'whatsapp.template.updated',
    'timestamp', cms_rfc3339(n.synced_at),
    'data', cms_whatsapp_template_json(n))
  FROM new_rows n
  JOIN old_rows o ON o.company_id = n.company_id AND o.template_id = n.template_id
  WHERE (n.status, n.category, n.quality_score, n.rejected_reason) IS DISTINCT FROM (o.status, o.category, o.quality_score, o.rejected_reason)
    AND cms_wants_event(n.company_id, 'whatsapp.template.updated');
  RETURN NULL;
END $$;

CREATE TRIGGER whatsapp_templates_update_events AFTER UPDATE ON whatsapp_templates
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_whatsapp_template_events();

-- channel.paused / channel.resumed when the channel's state changes ({company_id, reason}).
CREATE FUNCTION cms_channel_state_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, t.type, json_build_object(
    'type', t.type,
    'timestamp', cms_rfc3339(coalesce(n.changed_at, now())),
    'data', json_build_object('company_id', n.company_id, 'reason', n.reason))
  FROM new_rows n
  LEFT JOIN old_rows o ON o.company_id = n.company_id
  CROSS JOIN LATERAL (SELECT CASE WHEN n.state = 'paused' THEN 'channel.paused' ELSE 'channel.resumed' END AS type) t
  WHERE n.state IS DISTINCT FROM coalesce(o.state, 'active')
    AND cms_wants_event(n.company_id, t.type);
  RETURN NULL;
END $$;

CREATE TRIGGER whatsapp_channel_state_update_events AFTER UPDATE ON whatsapp_channel_state
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_channel_state_events();

CREATE FUNCTION cms_channel_state_insert_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'channel.paused', json_build_object(
    'type', 'channel.paused',
    'timestamp', cms_rfc3339(coalesce(n.changed_at, now())),
    'data', json_build_object('company_id', n.company_id, 'reason', n.reason))
  FROM new_rows n
  WHERE n.state = 'paused' AND cms_wants_event(n.company_id, 'channel.paused');
  RETURN NULL;
END $$;

CREATE TRIGGER whatsapp_channel_state_insert_events AFTER INSERT ON whatsapp_channel_state
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_channel_state_insert_events();

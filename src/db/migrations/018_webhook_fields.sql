-- 018: every Meta webhook field, richer inbound messages, one event per status reached
-- (docs/whatsapp.md "Webhook fields", "Inbound messages", "One event per status"; docs/events.md).
--
-- 1. Account-level webhooks (templates, quality, account_update) name no phone number, only the WhatsApp
--    Business Account (`entry[].id`): channels are found by `channel->>'waba_id'`.
-- 2. Inbound messages keep what answers what (Meta's `context.id`, or the message a reaction is
--    about), a reaction's emoji, a media's id and MIME type, a location's coordinates; message.received
--    shows them, with `reply_to` naming our message when the answered one is ours.
-- 3. A `read` that skips `delivered` (read before, or with, delivered) writes message.delivered and then
--    message.read, so a subscriber to message.delivered sees every delivered message; event deliveries
--    are numbered in creation order (`seq`) and claimed oldest first.

-- 1. Channels by WABA -------------------------------------------------------------------------------
CREATE INDEX companies_whatsapp_waba ON companies ((channel->>'waba_id'))
  WHERE channel->>'provider' = 'whatsapp';

-- 2. Inbound messages -------------------------------------------------------------------------------
-- The provider id of the message this one answers: Meta's `context.id`, or for a reaction the message
-- reacted to. Resolved to our message (same company, same provider id) when the event is written.
ALTER TABLE inbound_messages ADD COLUMN reply_to_provider_message_id text;
-- {emoji, provider_message_id}: a reaction (no emoji: the reaction was removed).
ALTER TABLE inbound_messages ADD COLUMN reaction jsonb;
-- {id, mime_type, sha256?, filename?}: an image, video, audio, document or sticker (its caption is `text`).
ALTER TABLE inbound_messages ADD COLUMN media jsonb;
-- {latitude, longitude, name?, address?, url?}: a shared location.
ALTER TABLE inbound_messages ADD COLUMN location jsonb;

-- message.received (replaces 008's function): the enrichments, and `reply_to` when the message answers
-- another: {message_id, batch_id} of ours, or null when the answered message is not one of ours.
CREATE OR REPLACE FUNCTION cms_inbound_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'message.received', json_build_object(
    'type', 'message.received',
    'timestamp', cms_rfc3339(n.received_at),
    'data', jsonb_strip_nulls(jsonb_build_object('phone', c.phone, 'type', n.type, 'text', n.text,
      'payload', n.payload, 'provider_message_id', n.provider_message_id, 'received_at', cms_rfc3339(n.received_at),
      'reaction', n.reaction, 'media', n.media, 'location', n.location))
      || CASE WHEN n.reply_to_provider_message_id IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('reply_to', (
        SELECT jsonb_build_object('message_id', m.message_id, 'batch_id', m.batch_id)
        FROM messages m
        WHERE m.provider_message_id = n.reply_to_provider_message_id AND m.company_id = n.company_id
        LIMIT 1)) END)
  FROM new_rows n
  JOIN contacts c ON c.contact_id = n.contact_id
  WHERE cms_wants_event(n.company_id, 'message.received');
  RETURN NULL;
END $$;

-- 3. One event per status reached ---------------------------------------------------------------------
-- Deliveries in creation order: `seq` grows with every delivery written, and the claim takes the due
-- ones by (next_attempt_at NULLS FIRST, seq).
ALTER TABLE event_deliveries ADD COLUMN seq bigserial;
DROP INDEX event_deliveries_due;
CREATE INDEX event_deliveries_due ON event_deliveries (next_attempt_at NULLS FIRST, seq) WHERE status = 'pending';

-- message.<status> for each message whose status changed to a non-pending one (replaces 008's
-- function). A message that reaches `read` from a status before `delivered` first gets its
-- message.delivered (its own INSERT, so that event and its deliveries are written first).
CREATE OR REPLACE FUNCTION cms_message_update_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
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

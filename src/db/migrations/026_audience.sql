-- 026: the audience (docs/segments.md "Dynamic segments", docs/contacts.md "Tags and facts"): tags on
-- contacts, the facts a filter reads (last sent / delivered / read, country) and dynamic segments.

-- Tags: a set of 1-64 character strings per contact (at most 100; the service keeps them distinct and
-- sorted). `{"tag": T}` filters as `tags @> ARRAY[T]`, which the GIN index answers.
ALTER TABLE contacts ADD COLUMN tags text[] NOT NULL DEFAULT '{}';
CREATE INDEX contacts_tags ON contacts USING gin (tags);

-- Facts: when a message to the contact last reached sent, delivered and read (the latest such time of
-- any of its messages, never moved back), kept by the triggers below in the writing transaction, and
-- the number's country (ISO 3166 alpha-2) written by the service at upsert with libphonenumber-js:
-- NULL = not computed yet (contacts written before this migration; src/domain/contacts.ts
-- fillCountries computes them in bounded chunks), '' = the number belongs to no country (+800, ...).
-- None of these columns is indexed, so the updates stay HOT.
ALTER TABLE contacts ADD COLUMN last_sent_at timestamptz;
ALTER TABLE contacts ADD COLUMN last_delivered_at timestamptz;
ALTER TABLE contacts ADD COLUMN last_read_at timestamptz;
ALTER TABLE contacts ADD COLUMN country text;

-- One UPDATE per statement on messages: the contacts of the changed rows that reached sent / delivered /
-- read get the latest times. Rows still pending, skipped or failed (claims, lease renewals, holds) are
-- filtered out before any join; a contact is written only when one of its times moves forward. Rows
-- are locked first in (company_id, phone) order, the order in which batch-process upserts a batch's
-- contacts (src/queue/handlers/batch-process.ts sorts them by phone), so a fan-out and a delivery result
-- touching the same contacts never wait on each other in a cycle.
CREATE FUNCTION cms_contact_message_facts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM contacts c
  WHERE c.contact_id IN (SELECT n.contact_id FROM new_rows n WHERE n.status IN ('sent', 'delivered', 'read') AND n.contact_id IS NOT NULL)
  ORDER BY c.company_id, c.phone FOR NO KEY UPDATE;
  IF NOT FOUND THEN RETURN NULL; END IF;
  UPDATE contacts c SET
    last_sent_at = greatest(c.last_sent_at, f.sent),
    last_delivered_at = greatest(c.last_delivered_at, f.delivered),
    last_read_at = greatest(c.last_read_at, f.read)
  FROM (SELECT n.contact_id, max(n.sent_at) AS sent, max(n.delivered_at) AS delivered, max(n.read_at) AS read
        FROM new_rows n WHERE n.status IN ('sent', 'delivered', 'read') AND n.contact_id IS NOT NULL
        GROUP BY n.contact_id) f
  WHERE c.contact_id = f.contact_id
    AND (f.sent > coalesce(c.last_sent_at, '-infinity') OR f.delivered > coalesce(c.last_delivered_at, '-infinity')
         OR f.read > coalesce(c.last_read_at, '-infinity'));
  RETURN NULL;
END $$;

CREATE TRIGGER messages_contact_facts_update AFTER UPDATE ON messages
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_contact_message_facts();
CREATE TRIGGER messages_contact_facts_insert AFTER INSERT ON messages
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION cms_contact_message_facts();

-- The messages already stored.
UPDATE contacts c SET last_sent_at = f.sent, last_delivered_at = f.delivered, last_read_at = f.read
FROM (SELECT contact_id, max(sent_at) AS sent, max(delivered_at) AS delivered, max(read_at) AS read
      FROM messages WHERE status IN ('sent', 'delivered', 'read') AND contact_id IS NOT NULL GROUP BY contact_id) f
WHERE c.contact_id = f.contact_id;

-- A text as a time when it is an ISO 8601 date (midnight UTC) or date-time with `Z` or an offset; else
-- NULL (never an error): how a filter compares a variable with a time.
CREATE FUNCTION cms_text_time(t text) RETURNS timestamptz LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF t ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' THEN RETURN (t || 'T00:00:00Z')::timestamptz; END IF;
  IF t ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:[0-9]{2})$' THEN RETURN t::timestamptz; END IF;
  RETURN NULL;
EXCEPTION WHEN others THEN RETURN NULL;
END $$;

-- A dynamic segment's filter (docs/segments.md, the filter language); NULL: a static segment.
ALTER TABLE segments ADD COLUMN filter jsonb;

-- 026: the audience (docs/segments.md "Dynamic segments", docs/contacts.md "Tags and facts"): tags on
-- contacts, the facts a filter reads (last sent / delivered / read, country) and dynamic segments.

-- Tags: a set of 1-64 character strings per contact (at most 100; the service keeps them distinct and
-- sorted). `{"tag": T}` filters as `tags @> ARRAY[T]`, which the GIN index answers.
ALTER TABLE contacts ADD COLUMN tags text[] NOT NULL DEFAULT '{}';
CREATE INDEX contacts_tags ON contacts USING gin (tags);

-- Facts: the number's country (ISO 3166 alpha-2), written by the service at upsert with
-- libphonenumber-js: NULL = not computed yet (contacts written before this migration;
-- src/domain/contacts.ts fillCountries computes them in bounded chunks), '' = the number belongs to no
-- country (+800, ...). When a message to the contact last reached sent, delivered and read is not
-- stored on the contact: a filter and the contact view read it from the contact's messages through
-- the (company_id, phone) index, so the delivery path writes no contact rows (a statement trigger that
-- kept these times on the contact made the outbox hand-off of 20,000 messages 2.5 times slower).
ALTER TABLE contacts ADD COLUMN country text;

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

-- 029: frequency caps and the consent ledger (docs/audience.md).

-- 1. Frequency caps. A company's cap `{"messages": N, "per": "7d"}` (NULL: none); a campaign may
--    ignore it. Judged at fan-out from the messages' (company_id, phone) index (migration 004).
ALTER TABLE companies ADD COLUMN frequency_cap jsonb;
ALTER TABLE campaigns ADD COLUMN ignore_frequency_cap boolean NOT NULL DEFAULT false;

-- 2. The consent ledger: one row per change of a number's opt-out state, kept under the SHA-256 digest
--    of its E.164 form with the `+` (the contacts' `sha256_plus`) and never the number itself, so it
--    survives the contact's erasure (`erased` is set then). Written by the contacts triggers below from
--    the row's new state: `opt_out_source`, `opt_out_at` and `opt_out_evidence` (what proves it), which
--    every writer of `opted_out` sets in the same statement.
ALTER TABLE contacts ADD COLUMN opt_out_evidence jsonb;

CREATE TABLE consent_ledger (
  entry_id     bigserial   PRIMARY KEY,
  company_id   integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  phone_sha256 bytea       NOT NULL,
  at           timestamptz NOT NULL,
  opted_out    boolean     NOT NULL,
  source       text        NOT NULL,
  category     text        NOT NULL DEFAULT 'marketing',
  evidence     jsonb,
  erased       boolean     NOT NULL DEFAULT false
);
-- A number's history (the consent route) in order of writing.
CREATE INDEX consent_ledger_number ON consent_ledger (company_id, phone_sha256, entry_id);
-- Numbers whose contact was erased: what a contact created for such a number again starts from. Small
-- (erasures only), so the lookup every contact insert makes costs next to nothing.
CREATE INDEX consent_ledger_erased ON consent_ledger (company_id, phone_sha256, entry_id DESC) WHERE erased;

-- The state of every contact whose opt-out state was ever set, as the ledger's first entry.
INSERT INTO consent_ledger (company_id, phone_sha256, at, opted_out, source, evidence)
SELECT company_id, sha256_plus, coalesce(opt_out_at, created_at), opted_out, opt_out_source, '{"recorded": "state when the ledger began"}'::jsonb
FROM contacts
WHERE erased_at IS NULL AND opt_out_source IS NOT NULL
ORDER BY contact_id;

-- 3. The contacts triggers of migration 008, each now also writing the ledger (one pass over the
--    changed rows serves both). An update writes an entry when `opted_out` changes; an insert when the
--    new contact is opted out and its number's latest entry (of an erased contact) does not say so
--    already: a number that comes back inherits its state (src/domain/contacts.ts) without a new entry.
CREATE OR REPLACE FUNCTION cms_contact_update_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH changed AS MATERIALIZED (
    SELECT n.company_id, n.phone, n.sha256_plus, n.opted_out, n.opt_out_source, n.opt_out_at, n.opt_out_evidence
    FROM new_rows n
    JOIN old_rows o ON o.contact_id = n.contact_id
    WHERE n.opted_out <> o.opted_out
  ), ledger AS (
    INSERT INTO consent_ledger (company_id, phone_sha256, at, opted_out, source, evidence)
    SELECT company_id, sha256_plus, coalesce(opt_out_at, now()), opted_out, coalesce(opt_out_source, 'operator'), opt_out_evidence
    FROM changed
  )
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, t.type, json_build_object(
    'type', t.type,
    'timestamp', cms_rfc3339(coalesce(n.opt_out_at, now())),
    'data', json_strip_nulls(json_build_object('phone', n.phone, 'source', n.opt_out_source, 'at', cms_rfc3339(coalesce(n.opt_out_at, now())))))
  FROM changed n
  CROSS JOIN LATERAL (SELECT CASE WHEN n.opted_out THEN 'contact.opted_out' ELSE 'contact.opted_in' END AS type) t
  WHERE cms_wants_event(n.company_id, t.type);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION cms_contact_insert_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM new_rows WHERE opted_out) THEN RETURN NULL; END IF;
  INSERT INTO consent_ledger (company_id, phone_sha256, at, opted_out, source, evidence)
  SELECT n.company_id, n.sha256_plus, coalesce(n.opt_out_at, now()), true, coalesce(n.opt_out_source, 'operator'), n.opt_out_evidence
  FROM new_rows n
  WHERE n.opted_out AND NOT coalesce((
    SELECT l.opted_out FROM consent_ledger l
    WHERE l.company_id = n.company_id AND l.phone_sha256 = n.sha256_plus AND l.erased
    ORDER BY l.entry_id DESC LIMIT 1), false);
  INSERT INTO events (event_id, company_id, type, payload)
  SELECT cms_event_id(), n.company_id, 'contact.opted_out', json_build_object(
    'type', 'contact.opted_out',
    'timestamp', cms_rfc3339(coalesce(n.opt_out_at, now())),
    'data', json_strip_nulls(json_build_object('phone', n.phone, 'source', n.opt_out_source, 'at', cms_rfc3339(coalesce(n.opt_out_at, now())))))
  FROM new_rows n
  WHERE n.opted_out AND cms_wants_event(n.company_id, 'contact.opted_out');
  RETURN NULL;
END $$;

-- The cost of migration 026's contact-facts trigger on the outbox's hand-off (src/db/messages.ts
-- sendRangeToOutbox: one UPDATE of a whole batch to `sent`), on PostgreSQL:
--   psql "$DATABASE_URL" -f bench/contact-facts-trigger.sql
-- Builds a company with N contacts and a batch of N pending messages, then times the same UPDATE
-- with the trigger disabled and enabled (each run rolled back, 3 rounds). Writes nothing that stays.
\timing on
\set n 20000
BEGIN;
INSERT INTO companies (name) VALUES ('bench-facts') RETURNING company_id \gset
INSERT INTO contacts (company_id, phone, sha256_plus, sha256_bare)
SELECT :company_id, '+49151' || lpad(i::text, 8, '0'), sha256(convert_to('+49151' || lpad(i::text, 8, '0'), 'UTF8')), sha256(convert_to('49151' || lpad(i::text, 8, '0'), 'UTF8'))
FROM generate_series(1, :n) i;
INSERT INTO batches (batch_id, company_id, kind, source_id, total, items, template)
VALUES ('00000000-0000-4000-8000-000000000026', :company_id, 'campaign', 1, :n, '[]', '{}');
INSERT INTO messages (message_id, batch_id, company_id, seq, contact_id, phone, status)
SELECT gen_random_uuid(), '00000000-0000-4000-8000-000000000026', :company_id, row_number() OVER (ORDER BY contact_id) - 1, contact_id, phone, 'pending'
FROM contacts WHERE company_id = :company_id;
ANALYZE messages; ANALYZE contacts;
\echo 'without the trigger'
ALTER TABLE messages DISABLE TRIGGER messages_contact_facts_update;
SAVEPOINT a; UPDATE messages SET status = 'sent', attempts = attempts + 1, sent_at = now(), updated_at = now() WHERE batch_id = '00000000-0000-4000-8000-000000000026' AND status = 'pending'; ROLLBACK TO a;
SAVEPOINT a; UPDATE messages SET status = 'sent', attempts = attempts + 1, sent_at = now(), updated_at = now() WHERE batch_id = '00000000-0000-4000-8000-000000000026' AND status = 'pending'; ROLLBACK TO a;
SAVEPOINT a; UPDATE messages SET status = 'sent', attempts = attempts + 1, sent_at = now(), updated_at = now() WHERE batch_id = '00000000-0000-4000-8000-000000000026' AND status = 'pending'; ROLLBACK TO a;
\echo 'with the trigger'
ALTER TABLE messages ENABLE TRIGGER messages_contact_facts_update;
SAVEPOINT a; UPDATE messages SET status = 'sent', attempts = attempts + 1, sent_at = now(), updated_at = now() WHERE batch_id = '00000000-0000-4000-8000-000000000026' AND status = 'pending'; ROLLBACK TO a;
SAVEPOINT a; UPDATE messages SET status = 'sent', attempts = attempts + 1, sent_at = now(), updated_at = now() WHERE batch_id = '00000000-0000-4000-8000-000000000026' AND status = 'pending'; ROLLBACK TO a;
SAVEPOINT a; UPDATE messages SET status = 'sent', attempts = attempts + 1, sent_at = now(), updated_at = now() WHERE batch_id = '00000000-0000-4000-8000-000000000026' AND status = 'pending'; ROLLBACK TO a;
\echo 'a claim (status stays pending) with the trigger'
SAVEPOINT a; UPDATE messages SET lease_until = now() + interval '1 minute' WHERE batch_id = '00000000-0000-4000-8000-000000000026' AND status = 'pending'; ROLLBACK TO a;
ROLLBACK;

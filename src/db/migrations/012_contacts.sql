-- 012: contacts in the company console: name search, imports with progress, erasure.
--
-- 1. Name search: a case-insensitive prefix of the first or last name, per company. `text_pattern_ops`
--    lets `lower(first_name) LIKE 'ann%'` use the index whatever the database's collation (PostgreSQL and
--    PGlite alike; no extension needed). Number search uses the (company_id, phone) unique index.
CREATE INDEX contacts_first_name_lower ON contacts (company_id, lower(first_name) text_pattern_ops);
CREATE INDEX contacts_last_name_lower ON contacts (company_id, lower(last_name) text_pattern_ops);

-- 2. Erasure (GDPR Art. 17): an erased contact keeps its row (messages and batches keep their counts)
--    but its phone is a random tombstone, its names and variables are gone, and it is left out of every
--    list, search and export. A later send to the same number creates a new contact.
ALTER TABLE contacts ADD COLUMN erased_at timestamptz;

-- 3. A contact's history: audit entries name it as `contact:<contact_id>`.
CREATE INDEX audit_log_company_target ON audit_log (company_id, target, entry_id DESC);

-- 4. A CSV import from the console or the operator API, run by the `contacts-import` job. `csv` holds the
--    uploaded file until the import ends (then it is cleared); `processed` rows are committed together
--    with the contacts they wrote, so a job that runs again resumes after them. `errors` keeps the first
--    rows that could not be imported: [{"line": n, "error": "..."}].
CREATE TABLE contact_imports (
  import_id   bigserial   PRIMARY KEY,
  company_id  integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  actor       text        NOT NULL,
  filename    text,
  delimiter   text        NOT NULL,
  csv         bytea,
  status      text        NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed')),
  total       integer     NOT NULL,
  processed   integer     NOT NULL DEFAULT 0,
  created     integer     NOT NULL DEFAULT 0,
  updated     integer     NOT NULL DEFAULT 0,
  failed      integer     NOT NULL DEFAULT 0,
  errors      jsonb       NOT NULL DEFAULT '[]',
  error       text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX contact_imports_company ON contact_imports (company_id, import_id DESC);

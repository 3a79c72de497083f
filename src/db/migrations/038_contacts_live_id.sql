-- The company's live contacts in contact id order: a dynamic segment's filter is evaluated over them one
-- bounded chunk a statement (src/db/segment-filter.ts scanStep), each chunk starting after the last
-- contact id of the one before (docs/segments.md "Limits").
CREATE INDEX contacts_live_id ON contacts (company_id, contact_id) WHERE erased_at IS NULL;

-- 021: the pair rate counts from the start of a request (docs/whatsapp.md "Pacing and limits"). An
-- admitted message claims its pair until its request starts; `claimed_by` names that message, so that
-- the same message admitted again (its run was interrupted before the request) is not held by its own
-- claim. NULL once the request has started (next_at is then the start plus the pair interval).
ALTER TABLE whatsapp_pairs ADD COLUMN claimed_by text;

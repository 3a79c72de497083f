/**
 * Erasure of a contact (GDPR Art. 17), the same from the console, the operator API
 * (`DELETE /admin/companies/{id}/contacts/{phone}`) and `cms contacts erase`.
 *
 * In one transaction:
 * - the contact keeps its row (and id) but its phone becomes a random tombstone (`erased:<uuid>`, not
 *   derived from the number), its phone digests the digests of the tombstone, its names and variables
 *   are cleared and `erased_at` is set; lists, searches, lookups and the export leave it out. A later
 *   send to the same number creates a new contact.
 * - its messages (matched by contact id or number): phone replaced by the tombstone, the rendered
 *   message (text, variables, media) removed; statuses, reasons, times and provider ids are kept, so
 *   batch counts do not change. A message still waiting (pending, not under a delivery run's lease)
 *   becomes `skipped` with reason `erased` (it can no longer be sent) and its batch is completed if
 *   nothing else is pending. A message handed to a provider at that moment is delivered once more at most.
 * - its entry in the `items` of batches already fanned out: the phone and every field but the tombstone
 *   removed (the entry's position, `seq`, is kept).
 * - its inbound messages: text, payload, reaction, media and location removed (type, times and ids kept).
 * - events still stored about it (`data.phone`): the phone replaced by the tombstone, texts removed.
 * - its segment memberships are deleted.
 * - its consent ledger (docs/audience.md) stays, keyed by the SHA-256 of the number and without
 *   personal data, marked `erased`: a contact created for the same number later (import, send,
 *   inbound) starts in the ledger's latest state, so an opted-out number stays opted out until it
 *   opts in again. The answer says how many entries were kept and whether the number stays opted out
 *   (`consent_entries`, `suppressed`). The contact's own `opt_out_evidence` is cleared.
 * - one audit entry `contact.erase` on `contact:<id>` with the counts of what changed, never the
 *   personal data.
 * 404 `Contact not found` when the contact is unknown, erased already or another company's.
 */
import { createHash, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { findContact } from '../db/contacts.ts';
import { markLedgerErased } from '../db/consent.ts';
import { completeBatchIfDone } from '../db/messages.ts';
import { recordAudit } from './audit.ts';
import { DomainError } from './errors.ts';
import { phoneDigests } from './phone.ts';

/** What an erasure changed (also the audit entry's details). */
export interface ErasureResult {
  contact_id: number;
  messages: number;
  skipped: number;
  inbound: number;
  segments: number;
  events: number;
  /** Consent ledger entries kept under the number's SHA-256 digest. */
  consent_entries: number;
  /** The number stays opted out of campaigns if it comes back. */
  suppressed: boolean;
}

/** Erases the company's contact `contactId` (see the module comment); `now` from the service clock. */
export async function eraseContact(db: Db, companyId: number, contactId: number, who: { actor: string; now: Date }): Promise<ErasureResult> {
  const result = await db.transaction().execute(async (trx) => {
    const contact = await findContact(trx, companyId, { contactId });
    if (!contact) throw new DomainError(404, 'Contact not found');
    // Lock the row: two erasures (or an erasure and an edit) of one contact run one after the other.
    await sql`SELECT 1 FROM contacts WHERE contact_id = ${contactId} FOR UPDATE`.execute(trx);
    const phone = contact.phone;
    const at = who.now.toISOString();
    const tomb = `erased:${randomUUID()}`;
    const digest = createHash('sha256').update(tomb).digest();

    // Pending messages nobody is delivering: skipped / erased (before the phone changes, by number).
    const skipped = await sql<{ batch_id: string }>`
      UPDATE messages SET status = 'skipped', reason = 'erased', held_until = NULL, next_attempt_at = NULL, updated_at = ${at}::timestamptz
      WHERE company_id = ${companyId} AND phone = ${phone} AND status = 'pending'
        AND (lease_until IS NULL OR lease_until < now())
      RETURNING batch_id`.execute(trx);
    await sql`
      UPDATE batches b SET items = jsonb_set(b.items::jsonb, ARRAY[m.seq::text], jsonb_build_object('phone', ${tomb}::text, 'e164', ${tomb}::text))::text
      FROM messages m
      WHERE m.company_id = ${companyId} AND m.phone = ${phone} AND m.batch_id = b.batch_id AND b.status <> 'accepted'`.execute(trx);
    const messages = await sql`
      UPDATE messages SET phone = ${tomb}, rendered = CASE WHEN status = 'pending' THEN rendered END, updated_at = ${at}::timestamptz
      WHERE company_id = ${companyId} AND (phone = ${phone} OR contact_id = ${contactId}) RETURNING 1`.execute(trx);
    const inbound = await sql`
      UPDATE inbound_messages SET text = NULL, payload = NULL, reaction = NULL, media = NULL, location = NULL WHERE company_id = ${companyId} AND contact_id = ${contactId} RETURNING 1`.execute(trx);
    const events = await sql`
      UPDATE events SET payload = jsonb_set(payload::jsonb, '{data}',
        ((payload::jsonb -> 'data') - 'text' - 'payload' - 'reaction' - 'media' - 'location') || jsonb_build_object('phone', ${tomb}::text))::json
      WHERE company_id = ${companyId} AND payload -> 'data' ->> 'phone' = ${phone} RETURNING 1`.execute(trx);
    const segments = await sql`DELETE FROM segment_members WHERE contact_id = ${contactId} RETURNING 1`.execute(trx);
    const consent = await markLedgerErased(trx, companyId, phoneDigests(phone).plus);
    await sql`
      UPDATE contacts SET phone = ${tomb}, sha256_plus = ${digest}, sha256_bare = ${digest}, first_name = NULL, last_name = NULL,
        variables = '{}'::jsonb, opt_out_evidence = NULL, erased_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
      WHERE contact_id = ${contactId} AND company_id = ${companyId}`.execute(trx);
    const out: ErasureResult = {
      contact_id: contactId,
      messages: messages.rows.length,
      skipped: skipped.rows.length,
      inbound: inbound.rows.length,
      segments: segments.rows.length,
      events: events.rows.length,
      consent_entries: consent.entries,
      suppressed: consent.opted_out,
    };
    await recordAudit(trx, { actor: who.actor, action: 'contact.erase', target: `contact:${contactId}`, company_id: companyId, details: { ...out } });
    return { out, batches: [...new Set(skipped.rows.map((r) => r.batch_id))] };
  });
  for (const b of result.batches) await completeBatchIfDone(db, b, who.now.getTime());
  return result.out;
}

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
import type { Db } from '../db/database.ts';
import { findContact, lockContactRow } from '../db/contacts.ts';
import { markLedgerErased } from '../db/consent.ts';
import {
  clearInboundContent, deleteMembershipsOf, skipPendingMessagesTo, tombstoneBatchItems, tombstoneContact, tombstoneEvents, tombstoneMessages,
} from '../db/erasure.ts';
import { completeBatchIfDone } from '../db/messages.ts';
import { audit, type Actor } from './actor.ts';
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

/**
 * Command: erases the company's contact `contactId` for `actor` (see the module comment), audit-logged
 * as `contact.erase`; `now` from the service clock. 404 `Contact not found`.
 */
export async function eraseContact(db: Db, actor: Actor, companyId: number, contactId: number, now: Date): Promise<ErasureResult> {
  const result = await db.transaction().execute(async (trx) => {
    const contact = await findContact(trx, companyId, { contactId });
    if (!contact) throw new DomainError(404, 'Contact not found');
    // Lock the row: two erasures (or an erasure and an edit) of one contact run one after the other.
    await lockContactRow(trx, contactId);
    const phone = contact.phone;
    const at = now.toISOString();
    const tomb = `erased:${randomUUID()}`;
    const digest = createHash('sha256').update(tomb).digest();

    // Pending messages nobody is delivering: skipped / erased (before the phone changes, by number).
    const skipped = await skipPendingMessagesTo(trx, companyId, phone, at);
    await tombstoneBatchItems(trx, companyId, phone, tomb);
    const messages = await tombstoneMessages(trx, companyId, phone, contactId, tomb, at);
    const inbound = await clearInboundContent(trx, companyId, contactId);
    const events = await tombstoneEvents(trx, companyId, phone, tomb);
    const segments = await deleteMembershipsOf(trx, contactId);
    const consent = await markLedgerErased(trx, companyId, phoneDigests(phone).plus);
    await tombstoneContact(trx, companyId, contactId, tomb, digest, at);
    const out: ErasureResult = {
      contact_id: contactId,
      messages,
      skipped: skipped.length,
      inbound,
      segments,
      events,
      consent_entries: consent.entries,
      suppressed: consent.opted_out,
    };
    await audit(trx, actor, { action: 'contact.erase', target: `contact:${contactId}`, companyId, details: { ...out } });
    return { out, batches: [...new Set(skipped)] };
  });
  for (const b of result.batches) await completeBatchIfDone(db, b, now.getTime());
  return result.out;
}

/**
 * The statements of a contact's erasure (src/domain/erasure.ts decides what is erased and runs them in
 * one transaction), one per function, each scoped to the company. `tomb` is the contact's tombstone
 * phone (`erased:<uuid>`); `at` an ISO time of the service clock.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * The company's messages to `phone` still pending and under no live delivery lease become `skipped`
 * with reason `erased`; the batch of each (one row per message).
 */
export async function skipPendingMessagesTo(db: Db, companyId: number, phone: string, at: string): Promise<string[]> {
  const { rows } = await sql<{ batch_id: string }>`
    UPDATE messages SET status = 'skipped', reason = 'erased', held_until = NULL, next_attempt_at = NULL, updated_at = ${at}::timestamptz
    WHERE company_id = ${companyId} AND phone = ${phone} AND status = 'pending'
      AND (lease_until IS NULL OR lease_until < now())
    RETURNING batch_id`.execute(db);
  return rows.map((r) => r.batch_id);
}

/** Replaces the entry of `phone` in the `items` of the batches fanned out to it by `{phone: tomb, e164: tomb}` (its position kept). */
export async function tombstoneBatchItems(db: Db, companyId: number, phone: string, tomb: string): Promise<void> {
  await sql`
    UPDATE batches b SET items = jsonb_set(b.items::jsonb, ARRAY[m.seq::text], jsonb_build_object('phone', ${tomb}::text, 'e164', ${tomb}::text))::text
    FROM messages m
    WHERE m.company_id = ${companyId} AND m.phone = ${phone} AND m.batch_id = b.batch_id AND b.status <> 'accepted'`.execute(db);
}

/**
 * The company's messages to `phone` or to contact `contactId`: phone replaced by `tomb`, the rendered
 * message removed unless still pending; how many.
 */
export async function tombstoneMessages(db: Db, companyId: number, phone: string, contactId: number, tomb: string, at: string): Promise<number> {
  const { rows } = await sql`
    UPDATE messages SET phone = ${tomb}, rendered = CASE WHEN status = 'pending' THEN rendered END, updated_at = ${at}::timestamptz
    WHERE company_id = ${companyId} AND (phone = ${phone} OR contact_id = ${contactId}) RETURNING 1`.execute(db);
  return rows.length;
}

/** Removes the text, payload, reaction, media and location of contact `contactId`'s inbound messages; how many. */
export async function clearInboundContent(db: Db, companyId: number, contactId: number): Promise<number> {
  const { rows } = await sql`
    UPDATE inbound_messages SET text = NULL, payload = NULL, reaction = NULL, media = NULL, location = NULL
    WHERE company_id = ${companyId} AND contact_id = ${contactId} RETURNING 1`.execute(db);
  return rows.length;
}

/** The company's stored events about `phone` (`data.phone`): phone replaced by `tomb`, texts removed; how many. */
export async function tombstoneEvents(db: Db, companyId: number, phone: string, tomb: string): Promise<number> {
  const { rows } = await sql`
    UPDATE events SET payload = jsonb_set(payload::jsonb, '{data}',
      ((payload::jsonb -> 'data') - 'text' - 'payload' - 'reaction' - 'media' - 'location') || jsonb_build_object('phone', ${tomb}::text))::json
    WHERE company_id = ${companyId} AND payload -> 'data' ->> 'phone' = ${phone} RETURNING 1`.execute(db);
  return rows.length;
}

/** Deletes contact `contactId`'s segment memberships; how many. */
export async function deleteMembershipsOf(db: Db, contactId: number): Promise<number> {
  const { rows } = await sql`DELETE FROM segment_members WHERE contact_id = ${contactId} RETURNING 1`.execute(db);
  return rows.length;
}

/**
 * The contact row made a tombstone: phone `tomb` and its digest `digest` (both digests), names,
 * variables and opt-out evidence cleared, `erased_at` = `at`.
 */
export async function tombstoneContact(db: Db, companyId: number, contactId: number, tomb: string, digest: Buffer, at: string): Promise<void> {
  await sql`
    UPDATE contacts SET phone = ${tomb}, sha256_plus = ${digest}, sha256_bare = ${digest}, first_name = NULL, last_name = NULL,
      variables = '{}'::jsonb, opt_out_evidence = NULL, erased_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
    WHERE contact_id = ${contactId} AND company_id = ${companyId}`.execute(db);
}

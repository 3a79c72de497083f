/**
 * SQL of the consent ledger (migration 029; docs/audience.md "The consent ledger"): a number's
 * entries, what erasure does to them, and which numbers of a send are opted out, the ledger included.
 * Entries are written by the contacts triggers, never here. Numbers are named by the SHA-256 of their
 * E.164 form with the `+` (src/domain/phone.ts `phoneDigests(...).plus`), as the ledger keeps them.
 * One statement per function.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/** One ledger entry as stored. */
export interface ConsentEntryRow {
  at: Date;
  opted_out: boolean;
  source: string;
  category: string;
  evidence: Record<string, unknown> | null;
}

/** The company's entries for the number with digest `digest`, in the order they were recorded (oldest first). */
export async function selectConsentEntries(db: Db, companyId: number, digest: Buffer, limit: number): Promise<ConsentEntryRow[]> {
  return await db.selectFrom('consent_ledger').select(['at', 'opted_out', 'source', 'category', 'evidence'])
    .where('company_id', '=', companyId).where('phone_sha256', '=', digest)
    .orderBy('entry_id').limit(limit).execute() as ConsentEntryRow[];
}

/**
 * Marks the company's entries for `digest` as those of an erased contact (the erasure's transaction);
 * how many there are and the state of the latest (false without entries).
 */
export async function markLedgerErased(db: Db, companyId: number, digest: Buffer): Promise<{ entries: number; opted_out: boolean }> {
  const { rows } = await sql<{ entries: number; opted_out: boolean | null }>`
    WITH u AS (
      UPDATE consent_ledger SET erased = true WHERE company_id = ${companyId} AND phone_sha256 = ${digest} RETURNING entry_id, opted_out)
    SELECT (SELECT count(*) FROM u)::int AS entries, (SELECT opted_out FROM u ORDER BY entry_id DESC LIMIT 1) AS opted_out`.execute(db);
  return { entries: rows[0]?.entries ?? 0, opted_out: rows[0]?.opted_out === true };
}

/**
 * Of the E.164 numbers `phones`, those a campaign message would skip as opted out now: the company's
 * contact with that number is opted out, or there is no such contact and the number's latest ledger
 * entry (of an erased contact) is an opt-out, so the contact the send creates starts opted out
 * (src/domain/contacts.ts `upsertContacts`). The digest is computed in the database, and only for
 * numbers without a contact.
 */
export async function selectOptedOutNumbers(db: Db, companyId: number, phones: string[]): Promise<string[]> {
  if (phones.length === 0) return [];
  const { rows } = await sql<{ phone: string }>`
    SELECT t.phone FROM unnest(${phones}::text[]) AS t(phone)
    LEFT JOIN contacts c ON c.company_id = ${companyId} AND c.phone = t.phone
    WHERE CASE WHEN c.contact_id IS NOT NULL THEN c.opted_out ELSE coalesce((
      SELECT l.opted_out FROM consent_ledger l
      WHERE l.company_id = ${companyId} AND l.phone_sha256 = sha256(convert_to(t.phone, 'UTF8')) AND l.erased
      ORDER BY l.entry_id DESC LIMIT 1), false) END`.execute(db);
  return rows.map((r) => r.phone);
}

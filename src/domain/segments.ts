/**
 * Segments (api.md 4.1, 4.2; decisions.md §3, §5): static segments of a company's contacts.
 *
 * Creation takes a slot from `companies.segment_count` and inserts the segment in one statement, so the
 * limit of 20 holds under concurrent requests. Managing members matches every item of a request with
 * one indexed statement, whatever the number of items.
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { DomainError, isRowId, notFound } from './errors.ts';
import { isDigest, toE164 } from './phone.ts';

export const MAX_SEGMENTS_PER_COMPANY = 20;

/** Creates an empty static segment; 400 when the company already holds 20. */
export async function createSegment(db: Db, companyId: number, name: string): Promise<{ name: string; segment_id: number }> {
  const { rows } = await sql<{ segment_id: number; name: string }>`
    WITH slot AS (
      UPDATE companies SET segment_count = segment_count + 1
      WHERE company_id = ${companyId} AND segment_count < ${MAX_SEGMENTS_PER_COMPANY}
      RETURNING company_id)
    INSERT INTO segments (company_id, name) SELECT company_id, ${name} FROM slot
    RETURNING segment_id, name`.execute(db);
  const row = rows[0];
  if (!row) throw new DomainError(400, `Segment limit reached: a company can hold at most ${MAX_SEGMENTS_PER_COMPANY} segments`);
  // The name as given: no need to decode what was just sent.
  return { name, segment_id: row.segment_id };
}

export interface ManageRequest { contacts: string[]; mode: 'add' | 'delete'; use_hashed_phone: boolean }
export interface ManageResult {
  segment_id: number;
  mode: 'add' | 'delete';
  contacts_provided: number;
  contacts_found: number;
  contacts_not_found: number;
  contacts_processed: number;
}

/**
 * Normalises request items: raw numbers to E.164 (default country of the company), digests to bytes.
 * Returns the number of distinct normalised items and the lookup keys among them (E.164 numbers, lowercase hex digests; unparseable items
 * are distinct by their text and can never be found).
 */
export function normaliseItems(items: string[], hashed: boolean, defaultCountry: string): { provided: number; phones: string[]; digests: string[] } {
  const distinct = new Set<string>();
  const phones: string[] = [];
  const digests: string[] = [];
  for (const item of items) {
    if (hashed) {
      const digest = isDigest(item) ? item.toLowerCase() : undefined;
      const key = digest ? 'd:' + digest : 'x:' + item;
      if (distinct.has(key)) continue;
      distinct.add(key);
      if (digest) digests.push(digest);
    } else {
      const e164 = toE164(item, defaultCountry);
      const key = e164 ? 'p:' + e164 : 'x:' + item;
      if (distinct.has(key)) continue;
      distinct.add(key);
      if (e164) phones.push(e164);
    }
  }
  return { provided: distinct.size, phones, digests };
}

/**
 * Adds or removes existing contacts (by phone or digest) to or from a segment of the company.
 * 404 `Segment not found` for an unknown segment or another company's.
 */
export async function manageSegmentContacts(
  db: Db, companyId: number, defaultCountry: string, segmentId: number | bigint, req: ManageRequest,
): Promise<ManageResult> {
  if (!isRowId(segmentId)) throw notFound('Segment not found');
  const { provided, phones, digests } = normaliseItems(req.contacts, req.use_hashed_phone, defaultCountry);
  // `matched` holds the request items that name an existing contact (an item counts once even when a
  // digest with and one without `+` name the same contact); `found` the distinct contacts.
  const matched = req.use_hashed_phone
    ? sql`SELECT d.item, c.contact_id FROM (SELECT decode(h, 'hex') AS item FROM unnest(${digests}::text[]) AS h) d
          JOIN contacts c ON c.company_id = ${companyId} AND (c.sha256_plus = d.item OR c.sha256_bare = d.item)`
    : sql`SELECT c.phone AS item, c.contact_id FROM contacts c
          WHERE c.company_id = ${companyId} AND c.phone = ANY(${phones}::text[])`;
  const change = req.mode === 'add'
    ? sql`INSERT INTO segment_members (segment_id, contact_id)
          SELECT seg.segment_id, f.contact_id FROM seg, (SELECT DISTINCT contact_id FROM matched) f
          ON CONFLICT DO NOTHING RETURNING 1`
    : sql`DELETE FROM segment_members m USING seg
          WHERE m.segment_id = seg.segment_id AND m.contact_id IN (SELECT contact_id FROM matched)
          RETURNING 1`;
  const { rows } = await sql<{ segment: number; found: number; processed: number }>`
    WITH seg AS (SELECT segment_id FROM segments WHERE segment_id = ${segmentId} AND company_id = ${companyId}),
         matched AS (${matched}),
         changed AS (${change})
    SELECT (SELECT count(*) FROM seg)::int AS segment,
           (SELECT count(DISTINCT item) FROM matched)::int AS found,
           (SELECT count(*) FROM changed)::int AS processed`.execute(db);
  const row = rows[0];
  if (!row || row.segment === 0) throw notFound('Segment not found');
  return {
    segment_id: segmentId,
    mode: req.mode,
    contacts_provided: provided,
    contacts_found: row.found,
    contacts_not_found: provided - row.found,
    contacts_processed: row.processed,
  };
}

/**
 * Segments (docs/api.md 4.1, 4.2; docs/decisions.md#3-outcomes-of-the-four-operations, #5-phone-numbers-and-digests): static segments of a company's contacts.
 *
 * Creation takes a slot from `companies.segment_count` and inserts the segment in one statement, so the
 * limit of 20 holds under concurrent requests. Managing members matches every item of a request with
 * one indexed statement, whatever the number of items.
 */
import type { Db } from '../db/database.ts';
import { changeSegmentMembers, insertSegmentInSlot } from '../db/segments.ts';
import { DomainError, isRowId, notFound } from './errors.ts';
import { isDigest, toE164 } from './phone.ts';

export const MAX_SEGMENTS_PER_COMPANY = 20;

/**
 * Creates an empty static segment, or a dynamic one when `filter` (checked by the caller,
 * src/domain/segment-filter.ts) is given; 400 when the company already holds 20 (both kinds count).
 */
export async function createSegment(db: Db, companyId: number, name: string, filter: unknown = null): Promise<{ name: string; segment_id: number }> {
  const segmentId = await insertSegmentInSlot(db, companyId, name, MAX_SEGMENTS_PER_COMPANY, filter);
  if (segmentId === undefined) throw new DomainError(400, `Segment limit reached: a company can hold at most ${MAX_SEGMENTS_PER_COMPANY} segments`);
  // The name as given: no need to decode what was just sent.
  return { name, segment_id: segmentId };
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
 * 404 `Segment not found` for an unknown segment or another company's; 409 for a dynamic segment
 * (its members follow its filter), checked in the same statement, after the public operation's own
 * checks, so every other answer of 4.2 is unchanged.
 */
export async function manageSegmentContacts(
  db: Db, companyId: number, defaultCountry: string, segmentId: number | bigint, req: ManageRequest,
): Promise<ManageResult> {
  if (!isRowId(segmentId)) throw notFound('Segment not found');
  const { provided, phones, digests } = normaliseItems(req.contacts, req.use_hashed_phone, defaultCountry);
  const row = await changeSegmentMembers(db, companyId, segmentId, req.mode, req.use_hashed_phone ? { digests } : { phones });
  if (row?.dynamic) throw new DomainError(409, 'Segment is dynamic: its members follow its filter');
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

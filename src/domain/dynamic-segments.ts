/**
 * Dynamic segments (docs/segments.md "Dynamic segments"): a segment whose members are the company's
 * live contacts matching its filter at the moment of asking. The filter is checked by
 * src/domain/segment-filter.ts, compiled and evaluated in the database by src/db/segment-filter.ts.
 * Times (`now`, ms) come from the caller's clock; relative times and durations count back from it.
 */
import type { Db } from '../db/database.ts';
import { countMatching, selectMatching, type MatchingContact } from '../db/segment-filter.ts';
import { selectStaticSegmentIds } from '../db/segments.ts';
import { fillCountries } from './contacts.ts';
import { conditionsOf, FilterError, parseFilter, type FilterNode } from './segment-filter.ts';

/** Contacts a preview shows. */
export const PREVIEW_SAMPLE = 10;

/**
 * Checks a filter given by a user for the company: the language's rules (FilterError 422 with `loc`),
 * and every `segment` condition naming a static segment of the company (a dynamic or unknown one is a
 * FilterError at its place). Returns the checked tree.
 */
export async function checkFilter(db: Db, companyId: number, filter: unknown): Promise<FilterNode> {
  const node = parseFilter(filter);
  const ids = conditionsOf(node).flatMap((c) => (c.kind === 'segment' ? [c.segment_id] : []));
  if (ids.length) {
    const known = new Set(await selectStaticSegmentIds(db, companyId, [...new Set(ids)]));
    const bad = ids.find((id) => !known.has(id));
    if (bad !== undefined) {
      // Find the place of the first bad reference for `loc`.
      const loc = locOfSegment(filter, bad) ?? [];
      throw new FilterError([...loc, 'segment'], `segment ${bad} is not a static segment of this company`);
    }
  }
  return node;
}

function locOfSegment(v: unknown, id: number, loc: (string | number)[] = []): (string | number)[] | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (o.segment === id && !('all' in o) && !('any' in o) && !('not' in o)) return loc;
  for (const g of ['all', 'any'] as const) {
    if (Array.isArray(o[g])) {
      for (let i = 0; i < (o[g] as unknown[]).length; i++) {
        const found = locOfSegment((o[g] as unknown[])[i], id, [...loc, g, i]);
        if (found) return found;
      }
    }
  }
  return 'not' in o ? locOfSegment(o.not, id, [...loc, 'not']) : undefined;
}

/** The checked tree of a stored filter (stored filters were checked when written). */
function stored(filter: unknown): FilterNode {
  return parseFilter(filter);
}

/** Before evaluating: contacts written before migration 026 get their country when the filter reads it. */
async function prepare(db: Db, companyId: number, node: FilterNode): Promise<void> {
  if (conditionsOf(node).some((c) => c.kind === 'text' && c.field === 'country')) await fillCountries(db, companyId);
}

/** How many of the company's contacts match `filter` (a stored one, or a checked tree) at `now`. */
export async function countMembers(db: Db, companyId: number, filter: unknown, now: number): Promise<number> {
  const node = stored(filter);
  await prepare(db, companyId, node);
  return countMatching(db, { companyId, now }, node);
}

/** At most `limit` matching contacts after contact id `after`, in contact id order. */
export async function matchingPage(db: Db, companyId: number, filter: unknown, now: number, after: number, limit: number): Promise<MatchingContact[]> {
  const node = stored(filter);
  await prepare(db, companyId, node);
  return selectMatching(db, { companyId, now }, node, after, limit);
}

/**
 * The numbers of the matching contacts in contact id order, at most `max` + 1 (the caller refuses
 * more than `max`): what a campaign send to a dynamic segment resolves once, when it is made.
 */
export async function matchingPhones(db: Db, companyId: number, filter: unknown, now: number, max: number): Promise<string[]> {
  return (await matchingPage(db, companyId, filter, now, 0, max + 1)).map((c) => c.phone);
}

/** A preview of a filter given by a user: checked (FilterError 422), then its count and first PREVIEW_SAMPLE contacts. */
export async function previewFilter(db: Db, companyId: number, filter: unknown, now: number): Promise<{ count: number; sample: MatchingContact[] }> {
  const node = await checkFilter(db, companyId, filter);
  await prepare(db, companyId, node);
  const [count, sample] = [await countMatching(db, { companyId, now }, node), await selectMatching(db, { companyId, now }, node, 0, PREVIEW_SAMPLE)];
  return { count, sample };
}

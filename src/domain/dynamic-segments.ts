/**
 * Dynamic segments (docs/segments.md "Dynamic segments"): a segment whose members are the company's
 * live contacts matching its filter at the moment of asking. The filter is checked by
 * src/domain/segment-filter.ts, compiled and evaluated in the database by src/db/segment-filter.ts.
 * Times (`now`, ms) come from the caller's clock; relative times and durations count back from it.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as turn } from 'node:timers/promises';
import type { Db } from '../db/database.ts';
import { selectCompanyAutomationIds, selectCompanyCampaignIds } from '../db/automations.ts';
import { scanStep, type MatchingContact } from '../db/segment-filter.ts';
import { selectStaticSegmentIds } from '../db/segments.ts';
import { fillCountries } from './contacts.ts';
import { conditionsOf, filterCost, FilterError, parseFilter, type FilterNode } from './segment-filter.ts';

export type { MatchingContact };

/** Contacts a preview shows. */
export const PREVIEW_SAMPLE = 10;

/**
 * The size of a scan's steps. The first step takes SCAN_BUDGET / cost contacts (cost: the filter's
 * work units, docs/segments.md "Limits"; at the costliest filter 4,000 contacts, about 30 ms on the
 * embedded database: docs/benchmarks.md "Filter previews"); then each step is sized from the last
 * one's time towards STEP_TARGET_MS (doubled below half of it, halved above twice of it), always
 * between SCAN_CHUNK_MIN and SCAN_CHUNK_MAX contacts. So on the embedded database a request of
 * another company waits for about one step; on PostgreSQL, where a step's fixed cost (planning, a
 * round trip) is larger and its contacts cheaper, steps grow.
 */
export const SCAN_BUDGET = 200_000;
export const SCAN_CHUNK_MIN = 1_000;
export const SCAN_CHUNK_MAX = 1_000_000;
export const STEP_TARGET_MS = 25;

/** Contacts of a scan's first step for a filter of `cost` units. */
export function scanChunk(cost: number): number {
  return Math.max(SCAN_CHUNK_MIN, Math.min(SCAN_CHUNK_MAX, Math.floor(SCAN_BUDGET / Math.max(1, cost))));
}

/** The next step's contacts after a step of `chunk` contacts took `ms`. */
function nextChunk(chunk: number, ms: number): number {
  if (ms < STEP_TARGET_MS / 2) return Math.min(SCAN_CHUNK_MAX, chunk * 2);
  if (ms > STEP_TARGET_MS * 2) return Math.max(SCAN_CHUNK_MIN, Math.floor(chunk / 2));
  return chunk;
}

/** What a scan found: the count of matches (all, or until `limit` were found) and the first matches. */
interface ScanResult { count: number; matches: MatchingContact[] }

/**
 * Evaluates `node` over the company's live contacts after contact id `after`, one bounded statement a
 * step ({@link scanStep}); between steps the event loop turns, so on the embedded database the
 * statements of other requests run between them (docs/security.md "Bounded work per request"). Keeps
 * the first `keep` matches; with `stopAt`, stops once that many matches were found (count is then the
 * matches seen so far).
 */
async function scan(db: Db, companyId: number, node: FilterNode, now: number, opts: { after?: number; keep: number; stopAt?: number }): Promise<ScanResult> {
  let chunk = scanChunk(filterCost(node));
  const matches: MatchingContact[] = [];
  let count = 0;
  let after = opts.after ?? 0;
  for (;;) {
    const started = performance.now();
    const step = await scanStep(db, { companyId, now }, node, after, chunk, Math.max(0, opts.keep - matches.length));
    count += step.count;
    matches.push(...step.sample);
    if (step.last === null || (opts.stopAt !== undefined && matches.length >= opts.stopAt)) break;
    after = step.last;
    chunk = nextChunk(chunk, performance.now() - started);
    await turn();
  }
  return { count, matches };
}

/**
 * Checks a filter given by a user for the company: the language's rules (FilterError 422 with `loc`),
 * and every `segment` condition naming a static segment of the company (a dynamic or unknown one is a
 * FilterError at its place). Returns the checked tree.
 */
export async function checkFilter(db: Db, companyId: number, filter: unknown): Promise<FilterNode> {
  const node = parseFilter(filter);
  const conditions = conditionsOf(node);
  const refs: { key: 'segment' | 'campaign_id' | 'automation_id'; ids: number[]; known: (ids: number[]) => Promise<number[]>; what: string }[] = [
    { key: 'segment', ids: conditions.flatMap((c) => (c.kind === 'segment' ? [c.segment_id] : [])), known: (ids) => selectStaticSegmentIds(db, companyId, ids), what: 'a static segment' },
    { key: 'campaign_id', ids: conditions.flatMap((c) => (c.kind === 'message' && c.campaign_id !== undefined ? [c.campaign_id] : [])), known: (ids) => selectCompanyCampaignIds(db, companyId, ids), what: 'a campaign' },
    { key: 'automation_id', ids: conditions.flatMap((c) => (c.kind === 'message' && c.automation_id !== undefined ? [c.automation_id] : [])), known: (ids) => selectCompanyAutomationIds(db, companyId, ids), what: 'an automation' },
  ];
  for (const ref of refs) {
    if (!ref.ids.length) continue;
    const known = new Set(await ref.known([...new Set(ref.ids)]));
    const bad = ref.ids.find((id) => !known.has(id));
    if (bad !== undefined) {
      // Find the place of the first bad reference for `loc`.
      const loc = locOf(filter, ref.key, bad) ?? [];
      throw new FilterError([...loc, ref.key], `${ref.key === 'segment' ? 'segment' : ref.key} ${bad} is not ${ref.what} of this company`);
    }
  }
  return node;
}

/** The place (`loc`) of the first condition whose `key` is `id`. */
function locOf(v: unknown, key: string, id: number, loc: (string | number)[] = []): (string | number)[] | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (o[key] === id && !('all' in o) && !('any' in o) && !('not' in o)) return loc;
  for (const g of ['all', 'any'] as const) {
    if (Array.isArray(o[g])) {
      for (let i = 0; i < (o[g] as unknown[]).length; i++) {
        const found = locOf((o[g] as unknown[])[i], key, id, [...loc, g, i]);
        if (found) return found;
      }
    }
  }
  return 'not' in o ? locOf(o.not, key, id, [...loc, 'not']) : undefined;
}

/**
 * The checked tree of a stored filter (stored filters were checked when written; one stored before
 * the work limits existed may exceed them and is still evaluated, in steps like any other).
 */
function stored(filter: unknown): FilterNode {
  return parseFilter(filter, { limitCost: false });
}

/** Before evaluating: contacts written before migration 026 get their country when the filter reads it. */
async function prepare(db: Db, companyId: number, node: FilterNode): Promise<void> {
  if (conditionsOf(node).some((c) => c.kind === 'text' && c.field === 'country')) await fillCountries(db, companyId);
}

/** How many of the company's contacts match `filter` (a stored one, or a checked tree) at `now`. */
export async function countMembers(db: Db, companyId: number, filter: unknown, now: number): Promise<number> {
  const node = stored(filter);
  await prepare(db, companyId, node);
  return (await scan(db, companyId, node, now, { keep: 0 })).count;
}

/** At most `limit` matching contacts after contact id `after`, in contact id order. */
export async function matchingPage(db: Db, companyId: number, filter: unknown, now: number, after: number, limit: number): Promise<MatchingContact[]> {
  const node = stored(filter);
  await prepare(db, companyId, node);
  return (await scan(db, companyId, node, now, { after, keep: limit, stopAt: limit })).matches;
}

/**
 * The numbers of the matching contacts in contact id order, at most `max` + 1 (the caller refuses
 * more than `max`): what a campaign send to a dynamic segment resolves once, when it is made.
 */
export async function matchingPhones(db: Db, companyId: number, filter: unknown, now: number, max: number): Promise<string[]> {
  return (await matchingPage(db, companyId, filter, now, 0, max + 1)).map((c) => c.phone);
}

/**
 * A preview of a filter given by a user: checked (FilterError 422, the work limits included), then its
 * count and first PREVIEW_SAMPLE contacts, found in one pass of bounded steps.
 */
export async function previewFilter(db: Db, companyId: number, filter: unknown, now: number): Promise<{ count: number; sample: MatchingContact[] }> {
  const node = await checkFilter(db, companyId, filter);
  await prepare(db, companyId, node);
  const { count, matches } = await scan(db, companyId, node, now, { keep: PREVIEW_SAMPLE });
  return { count, sample: matches };
}


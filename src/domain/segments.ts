/**
 * Segments of a company's contacts (docs/api.md 4.1, 4.2; docs/decisions.md#3-outcomes-of-the-four-operations,
 * #5-phone-numbers-and-digests): the public operations' creation and membership change, and their
 * administration by a company's people and the operator.
 *
 * Creation takes a slot from `companies.segment_count` and inserts the segment in one statement, so the
 * limit of 20 holds under concurrent requests. Managing members matches every item of a request with
 * one indexed statement, whatever the number of items.
 *
 * Administration: the same rules in the console (`/console/segments…`), the operator API
 * (`/admin/…/segments…`) and `cms segment`.
 *
 * - **Create**: the name rule of docs/api.md 4.1 (1 to 255 characters, counted as code points; names need
 *   not be unique) and its limit of `MAX_SEGMENTS_PER_COMPANY` (20), through 4.1's own `createSegment`.
 * - **Rename**: the same name rule.
 * - **Delete**: removes the segment and its memberships (never the contacts) and frees its slot of the
 *   20. A campaign send made from the segment, scheduled or already running, is **not affected**: the
 *   send resolved the segment to its members' numbers when it was accepted (src/domain/campaign-sends.ts
 *   `audiencePhones`; the batch stores those numbers), so it goes out as planned to the members of that
 *   moment. To stop it, cancel the send.
 * - **Members**: add or remove by phone numbers or SHA-256 digests with the matching of docs/api.md 4.2
 *   (through 4.2's own `manageSegmentContacts`: E.164 in the company's default country; a digest of the
 *   E.164 form with or without `+`, any case; only existing contacts, none created). Before matching,
 *   items that are not a phone number (or, with digests, not 64 hex digits) are set aside as **invalid**
 *   with their positions, and the rest are de-duplicated; at most `MAX_MEMBER_ITEMS` per change, all of
 *   it in one transaction (chunks of `CHUNK` items per statement).
 * - **Members paged**: keyset pagination by contact id (`after`), `MEMBERS_PAGE_SIZE` per page.
 * - **Dynamic segments** (a `filter`, src/domain/dynamic-segments.ts): created and re-filtered here;
 *   their `members` count and member pages are the contacts matching the filter at `now` (ms of the
 *   caller's clock); members cannot be added or removed by hand (409).
 */
import type { Db } from '../db/database.ts';
import {
  changeSegmentMembers, countDigestContacts, deleteSegmentRow, insertSegmentInSlot, selectMembersPage, selectSegment, selectSegments, updateSegmentFilter,
  updateSegmentName, type MemberEntry, type SegmentSummary,
} from '../db/segments.ts';
import { audit, type Actor } from './actor.ts';
import { checkFilter, countMembers, matchingPage } from './dynamic-segments.ts';
import { DomainError, isRowId, notFound } from './errors.ts';
import { isDigest, toE164 } from './phone.ts';
import { storableText } from './storable.ts';
import type { ListItem } from './segment-lists.ts';

export type { MemberEntry, SegmentSummary };

/** Segments (static and dynamic) a company can hold (docs/api.md 4.1). */
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

/** Longest segment name (docs/api.md 4.1), in code points. */
export const SEGMENT_NAME_MAX = 255;
/** Members per page in the console; the operator API's default `limit`. */
export const MEMBERS_PAGE_SIZE = 50;
/** Largest `limit` of one members page in the operator API. */
export const MEMBERS_PAGE_MAX = 1000;
/** Most items (numbers or digests, before de-duplication) one change of members takes. */
export const MAX_MEMBER_ITEMS = 100_000;
/** Invalid items listed in a summary (all are counted). */
export const INVALID_LISTED = 100;
/** Items matched per statement. */
const CHUNK = 10_000;

/** What is wrong with a segment name (4.1: 1 to 255 characters), or undefined when it is fine. */
export function segmentNameProblem(name: string): string | undefined {
  const length = [...name].length;
  if (length === 0) return 'Enter a name.';
  if (length > SEGMENT_NAME_MAX) return `The name can have at most ${SEGMENT_NAME_MAX} characters (this one has ${length}).`;
  return undefined;
}

/** The name as stored (U+0000 and lone surrogates replaced, as everywhere); 422 when it breaks the rule. */
function checkedName(name: string): string {
  const problem = segmentNameProblem(name);
  if (problem) throw new DomainError(422, problem);
  return storableText(name);
}

/** A dynamic segment's `members`: its matching contacts at `now`. */
async function counted(db: Db, companyId: number, row: SegmentSummary, now: number): Promise<SegmentSummary> {
  return row.filter == null ? { ...row, filter: null } : { ...row, members: await countMembers(db, companyId, row.filter, now) };
}

/** The company's segments with member counts (dynamic ones: matching contacts at `now`), oldest first. */
export async function listSegments(db: Db, companyId: number, now = Date.now()): Promise<SegmentSummary[]> {
  const rows = await selectSegments(db, companyId);
  const out: SegmentSummary[] = [];
  for (const row of rows) out.push(await counted(db, companyId, row, now));
  return out;
}

/** One segment of the company; 404 `Segment not found` (also for another company's). */
export async function getSegment(db: Db, companyId: number, segmentId: number, now = Date.now()): Promise<SegmentSummary> {
  const row = isRowId(segmentId) ? await selectSegment(db, companyId, segmentId) : undefined;
  if (!row) throw notFound('Segment not found');
  return counted(db, companyId, row, now);
}

/**
 * Creates an empty static segment, or a dynamic one with `filter`; 422 for a bad name, FilterError
 * (422 with `loc`) for a bad filter, 400 when the company holds 20 already (4.1's answer).
 */
async function newSegment(db: Db, companyId: number, name: string, filter?: unknown, now = Date.now()): Promise<SegmentSummary> {
  const stored = checkedName(name);
  if (filter !== undefined && filter !== null) await checkFilter(db, companyId, filter);
  const created = await createSegment(db, companyId, stored, filter ?? null);
  return getSegment(db, companyId, created.segment_id, now);
}

/**
 * One segment of the company as stored, without evaluating a dynamic segment's filter (`members` of a
 * dynamic one is then 0); 404 `Segment not found` (also for another company's).
 */
export async function findSegment(db: Db, companyId: number, segmentId: number): Promise<SegmentSummary> {
  const row = isRowId(segmentId) ? await selectSegment(db, companyId, segmentId) : undefined;
  if (!row) throw notFound('Segment not found');
  return row.filter == null ? { ...row, filter: null } : row;
}

/**
 * Replaces the filter of a dynamic segment of the company; FilterError (422) for a bad filter, 404
 * `Segment not found`, 409 for a static segment (its members are kept by hand). The segment as
 * stored, its members not counted (callers count with getSegment after their transaction: counting
 * evaluates the filter over every contact, which a transaction should not hold).
 */
async function setSegmentFilter(db: Db, companyId: number, segmentId: number, filter: unknown): Promise<SegmentSummary> {
  const before = await findSegment(db, companyId, segmentId);
  if (before.filter == null) throw new DomainError(409, 'Segment is static: its members are kept by hand, it has no filter');
  await checkFilter(db, companyId, filter);
  const row = await updateSegmentFilter(db, companyId, before.segment_id, filter);
  if (!row) throw notFound('Segment not found');
  return findSegment(db, companyId, row.segment_id);
}

/** Renames a segment of the company; 422 for a bad name, 404 `Segment not found`. */
async function renameSegment(db: Db, companyId: number, segmentId: number, name: string): Promise<SegmentSummary> {
  const stored = checkedName(name);
  const row = isRowId(segmentId) ? await updateSegmentName(db, companyId, segmentId, stored) : undefined;
  if (!row) throw notFound('Segment not found');
  return row;
}

/** Deletes a segment of the company (see the module comment); the deleted segment; 404 `Segment not found`. */
async function deleteSegment(db: Db, companyId: number, segmentId: number): Promise<SegmentSummary> {
  const row = isRowId(segmentId) ? await deleteSegmentRow(db, companyId, segmentId) : undefined;
  if (!row) throw notFound('Segment not found');
  return row;
}

/** One page of members (see the module comment); `next` is the cursor of the next page, null on the last. */
export interface MembersPage { segment: SegmentSummary; members: MemberEntry[]; next: number | null }

/** Members of a segment of the company after contact id `after` (0: from the start); 404 `Segment not found`. */
export async function membersPage(db: Db, companyId: number, segmentId: number, after = 0, limit = MEMBERS_PAGE_SIZE, now = Date.now()): Promise<MembersPage> {
  const segment = await getSegment(db, companyId, segmentId, now);
  if (segment.filter != null) {
    const rows = await matchingPage(db, companyId, segment.filter, now, Math.max(0, Math.trunc(after) || 0), limit + 1);
    const members = rows.slice(0, limit).map((r) => ({ ...r, added_at: null }));
    return { segment, members, next: rows.length > limit ? members[members.length - 1].contact_id : null };
  }
  const page = await selectMembersPage(db, companyId, segment.segment_id, Math.max(0, Math.trunc(after) || 0), limit);
  return { segment, ...page };
}

/** What a change of members did. */
export interface MembershipSummary {
  segment_id: number;
  mode: 'add' | 'delete';
  /** Distinct items given (after normalisation), invalid ones included. */
  contacts_provided: number;
  /** Members added (add) or removed (delete). */
  contacts_processed: number;
  /** Contacts found but not changed: already members (add), not members (delete); a contact counts once. */
  contacts_unchanged: number;
  /** Valid numbers or digests that name no contact of the company. */
  contacts_not_found: number;
  /** Distinct items that are not a phone number (or, with digests, not a SHA-256 hex digest). */
  contacts_invalid: number;
  /** The first `INVALID_LISTED` invalid items with their first position. */
  invalid: ListItem[];
}

/** The company data a change of members needs. */
export interface MemberCompany { company_id: number; default_country: string }

/**
 * Adds (`add`) or removes (`delete`) members of a segment of the company (see the module comment).
 * 404 `Segment not found`; 422 for no items or more than `MAX_MEMBER_ITEMS`.
 */
async function changeMembers(
  db: Db, company: MemberCompany, segmentId: number, mode: 'add' | 'delete', hashed: boolean, items: ListItem[],
): Promise<MembershipSummary> {
  if (items.length === 0) throw new DomainError(422, hashed ? 'Give at least one digest.' : 'Give at least one phone number.');
  if (items.length > MAX_MEMBER_ITEMS) throw new DomainError(422, `At most ${MAX_MEMBER_ITEMS.toLocaleString('en')} numbers per change (got ${items.length.toLocaleString('en')}): split the list.`);
  const segment = await getSegment(db, company.company_id, segmentId);
  if (segment.filter != null) throw new DomainError(409, 'Segment is dynamic: its members follow its filter');
  const keys = new Set<string>();
  const invalid = new Map<string, number>();
  for (const { value, position } of items) {
    const key = hashed ? (isDigest(value) ? value.toLowerCase() : null) : toE164(value, company.default_country);
    if (key) keys.add(key);
    else if (!invalid.has(value)) invalid.set(value, position);
  }
  const valid = [...keys];
  let found = 0;
  let contacts = 0;
  let processed = 0;
  if (valid.length > 0) {
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < valid.length; i += CHUNK) {
        const chunk = valid.slice(i, i + CHUNK);
        const r = await manageSegmentContacts(trx, company.company_id, company.default_country, segment.segment_id, {
          contacts: chunk, mode, use_hashed_phone: hashed,
        });
        found += r.contacts_found;
        processed += r.contacts_processed;
        // Numbers name one contact each; two digests (with and without `+`) may name the same one.
        contacts += hashed ? await countDigestContacts(trx, company.company_id, chunk) : r.contacts_found;
      }
    });
  }
  return {
    segment_id: segment.segment_id,
    mode,
    contacts_provided: valid.length + invalid.size,
    contacts_processed: processed,
    contacts_unchanged: contacts - processed,
    contacts_not_found: valid.length - found,
    contacts_invalid: invalid.size,
    invalid: [...invalid].slice(0, INVALID_LISTED).map(([value, position]) => ({ value, position })),
  };
}

/*
 * Commands: each use case of the administration, for an actor (the operator, a console user), with its
 * own audit entry. The operator API (src/http/admin/segments.ts) and the console
 * (src/console/routes/segments.ts, segment.ts, segment-builder.ts, segment-members.ts) call these.
 */

/**
 * Command: creates an empty static segment, or a dynamic one with `filter`, audit-logged as
 * `segment.create` on `segment:<id>` with `{name, kind}` (`static` or `dynamic`); a console user's
 * static segment records `{name}` alone, as the console always has. The segment with its members
 * counted at `now`. Errors: 422 for a bad name, FilterError (422 with `loc`) for a bad filter, 400
 * when the company holds 20 already (4.1's answer).
 */
export async function addSegment(db: Db, actor: Actor, companyId: number, input: { name: string; filter?: unknown }, now = Date.now()): Promise<SegmentSummary> {
  const created = await newSegment(db, companyId, input.name, input.filter ?? undefined, now);
  const kind = created.filter == null ? 'static' : 'dynamic';
  await audit(db, actor, {
    action: 'segment.create', target: `segment:${created.segment_id}`, companyId,
    details: actor.kind === 'console' && kind === 'static' ? { name: created.name } : { name: created.name, kind },
  });
  return created;
}

/**
 * Command: replaces the filter of a dynamic segment (`filter`) and/or renames it (`name`), in one
 * transaction, audit-logged as `segment.filter` (`{filter}`) then `segment.rename` (`{from, to}`) on
 * `segment:<id>`. The segment as stored (a dynamic one's `members` not counted: callers that show it
 * count with getSegment after the transaction, as counting scans the contacts). Errors: 404 `Segment
 * not found` (also another company's), 409 for a filter of a static segment, FilterError (422) for a
 * bad filter, 422 for a bad name; nothing changes then.
 */
export async function editSegment(db: Db, actor: Actor, companyId: number, segmentId: number, change: { name?: string; filter?: unknown }): Promise<SegmentSummary> {
  const before = await findSegment(db, companyId, segmentId);
  let after = before;
  await db.transaction().execute(async (trx) => {
    if (change.filter !== undefined) {
      after = await setSegmentFilter(trx, companyId, before.segment_id, change.filter);
      await audit(trx, actor, { action: 'segment.filter', target: `segment:${before.segment_id}`, companyId, details: { filter: change.filter } });
    }
    if (change.name !== undefined) {
      after = { ...(await renameSegment(trx, companyId, before.segment_id, change.name)), members: after.members, filter: after.filter };
      await audit(trx, actor, { action: 'segment.rename', target: `segment:${before.segment_id}`, companyId, details: { from: before.name, to: after.name } });
    }
  });
  return after;
}

/**
 * Command: deletes a segment of the company (see the module comment), audit-logged as
 * `segment.delete` on `segment:<id>` with `{name, members}`; the deleted segment (`members`: the
 * memberships removed). 404 `Segment not found`.
 */
export async function removeSegment(db: Db, actor: Actor, companyId: number, segmentId: number): Promise<SegmentSummary> {
  const deleted = await deleteSegment(db, companyId, segmentId);
  await audit(db, actor, { action: 'segment.delete', target: `segment:${deleted.segment_id}`, companyId, details: { name: deleted.name, members: deleted.members } });
  return deleted;
}

/**
 * Command: adds (`add`) or removes (`delete`) members of a static segment of the company (see the
 * module comment), audit-logged as `segment.members.add` / `segment.members.remove` on
 * `segment:<id>` with the summary's counts, `hashed` and, when given, `source` (what the items came
 * from, e.g. `pasted text`). The summary. Errors: 404 `Segment not found`; 409 for a dynamic segment;
 * 422 for no items or more than `MAX_MEMBER_ITEMS`.
 */
export async function editSegmentMembers(
  db: Db, actor: Actor, company: MemberCompany, segmentId: number,
  change: { mode: 'add' | 'delete'; hashed: boolean; items: ListItem[]; source?: string },
): Promise<MembershipSummary> {
  const summary = await changeMembers(db, company, segmentId, change.mode, change.hashed, change.items);
  const { invalid: _listed, ...counts } = summary;
  await audit(db, actor, {
    action: change.mode === 'add' ? 'segment.members.add' : 'segment.members.remove', target: `segment:${summary.segment_id}`, companyId: company.company_id,
    details: { ...counts, hashed: change.hashed, ...(change.source === undefined ? {} : { source: change.source }) },
  });
  return summary;
}

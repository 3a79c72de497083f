/**
 * SQL of segments, one statement per function: administration (list, rename, delete,
 * members paged by keyset) and the statements of docs/api.md 4.1 / 4.2 (src/domain/segments.ts decides what
 * they answer). Every statement is scoped to the company, so another company's segment is never found
 * (callers answer 404 exactly as for an unknown id).
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/** A segment as administration shows it; `members` is its member count. */
export interface SegmentSummary { segment_id: number; name: string; created_at: Date; members: number; filter: unknown }

/** The company's segments (at most 20) with member counts, oldest first. */
export async function selectSegments(db: Db, companyId: number): Promise<SegmentSummary[]> {
  const { rows } = await sql<SegmentSummary>`
    SELECT s.segment_id, s.name, s.created_at, s.filter,
           (SELECT count(*) FROM segment_members m WHERE m.segment_id = s.segment_id)::int AS members
    FROM segments s WHERE s.company_id = ${companyId} ORDER BY s.segment_id`.execute(db);
  return rows;
}

/** One segment of the company with its member count, or undefined. */
export async function selectSegment(db: Db, companyId: number, segmentId: number): Promise<SegmentSummary | undefined> {
  const { rows } = await sql<SegmentSummary & { company_id: number }>`
    SELECT s.segment_id, s.name, s.created_at, s.filter,
           (SELECT count(*) FROM segment_members m WHERE m.segment_id = s.segment_id)::int AS members
    FROM segments s WHERE s.segment_id = ${segmentId} AND s.company_id = ${companyId}`.execute(db);
  return rows[0];
}

/**
 * The company's segments' ids and names (at most 20), without member counts: for naming segments
 * a dynamic segment's filter refers to (a count per segment would read every membership).
 */
export async function selectSegmentNames(db: Db, companyId: number): Promise<{ segment_id: number; name: string }[]> {
  const { rows } = await sql<{ segment_id: number; name: string }>`
    SELECT segment_id, name FROM segments WHERE company_id = ${companyId} ORDER BY segment_id`.execute(db);
  return rows;
}

/** The company of a segment (for operator routes, which name a segment by id alone), or undefined. */
export async function selectSegmentCompany(db: Db, segmentId: number): Promise<{ company_id: number; default_country: string } | undefined> {
  const { rows } = await sql<{ company_id: number; default_country: string }>`
    SELECT c.company_id, c.default_country FROM segments s JOIN companies c ON c.company_id = s.company_id
    WHERE s.segment_id = ${segmentId}`.execute(db);
  return rows[0];
}

/** Renames a segment of the company; the renamed segment, or undefined when it is not the company's. */
export async function updateSegmentName(db: Db, companyId: number, segmentId: number, name: string): Promise<SegmentSummary | undefined> {
  const { rows } = await sql<SegmentSummary>`
    UPDATE segments s SET name = ${name} WHERE s.segment_id = ${segmentId} AND s.company_id = ${companyId}
    RETURNING s.segment_id, s.name, s.created_at, s.filter,
              (SELECT count(*) FROM segment_members m WHERE m.segment_id = s.segment_id)::int AS members`.execute(db);
  return rows[0];
}

/**
 * Deletes a segment of the company and its memberships (ON DELETE CASCADE) and gives its slot back
 * (`companies.segment_count`, the counter 4.1 takes slots from) in the same statement; the deleted
 * segment with the member count it had, or undefined when it is not the company's.
 */
export async function deleteSegmentRow(db: Db, companyId: number, segmentId: number): Promise<SegmentSummary | undefined> {
  const { rows } = await sql<SegmentSummary>`
    WITH gone AS (
      DELETE FROM segments s WHERE s.segment_id = ${segmentId} AND s.company_id = ${companyId}
      RETURNING s.segment_id, s.name, s.created_at, s.company_id, s.filter),
    slot AS (
      UPDATE companies c SET segment_count = greatest(c.segment_count - 1, 0)
      FROM gone WHERE c.company_id = gone.company_id RETURNING c.company_id)
    SELECT gone.segment_id, gone.name, gone.created_at, gone.filter,
           (SELECT count(*) FROM segment_members m WHERE m.segment_id = gone.segment_id)::int AS members
    FROM gone, slot`.execute(db);
  return rows[0];
}

/** One member of a segment; `contact_id` is also the page cursor. */
export interface MemberEntry { contact_id: number; phone: string; first_name: string | null; last_name: string | null; added_at: Date | null }

/**
 * At most `limit` members of a segment (the caller has checked it is the company's) with contact id
 * greater than `after`, in contact id order; one more than `limit` is read to tell whether a next page
 * exists. Uses the primary key (segment_id, contact_id): cost per page is independent of the page's depth.
 */
export async function selectMembersPage(
  db: Db, companyId: number, segmentId: number, after: number, limit: number,
): Promise<{ members: MemberEntry[]; next: number | null }> {
  const { rows } = await sql<MemberEntry>`
    SELECT m.contact_id, c.phone, c.first_name, c.last_name, m.added_at
    FROM segment_members m JOIN contacts c ON c.contact_id = m.contact_id AND c.company_id = ${companyId}
    WHERE m.segment_id = ${segmentId} AND m.contact_id > ${after}
    ORDER BY m.contact_id LIMIT ${limit + 1}`.execute(db);
  const members = rows.slice(0, limit).map((r) => ({ ...r, contact_id: Number(r.contact_id) }));
  return { members, next: rows.length > limit ? members[members.length - 1].contact_id : null };
}

/**
 * How many distinct contacts of the company the digests (lowercase hex) name: a contact named by the
 * digest of its number with `+` and by the one without counts once (docs/api.md 4.2 counts such items twice
 * as found; administration reports contacts).
 */
export async function countDigestContacts(db: Db, companyId: number, digests: string[]): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(DISTINCT c.contact_id)::int AS n
    FROM (SELECT decode(h, 'hex') AS d FROM unnest(${digests}::text[]) AS h) x
    JOIN contacts c ON c.company_id = ${companyId} AND (c.sha256_plus = x.d OR c.sha256_bare = x.d)`.execute(db);
  return rows[0]?.n ?? 0;
}

/**
 * Api 4.1's statement: takes one of the company's `max` segment slots (`companies.segment_count`) and
 * inserts the segment in it; its id, or undefined when every slot is taken (or no such company).
 */
export async function insertSegmentInSlot(db: Db, companyId: number, name: string, max: number, filter: unknown = null): Promise<number | undefined> {
  const { rows } = await sql<{ segment_id: number }>`
    WITH slot AS (
      UPDATE companies SET segment_count = segment_count + 1
      WHERE company_id = ${companyId} AND segment_count < ${max}
      RETURNING company_id)
    INSERT INTO segments (company_id, name, filter) SELECT company_id, ${name}, ${filter === null ? null : JSON.stringify(filter)}::jsonb FROM slot
    RETURNING segment_id`.execute(db);
  return rows[0]?.segment_id;
}

/**
 * Api 4.2's statement: adds (`add`) or removes (`delete`) the company's existing contacts named by E.164
 * `phones`, or by hex SHA-256 `digests` (of the number with or without `+`), to or from its segment.
 * `segment`: 1 when the segment is the company's and static, else 0 (then nothing changed); `dynamic`: 1
 * when it is the company's dynamic segment (docs/segments.md, nothing changed); `found`: the distinct
 * request items that name a contact; `processed`: memberships added or removed.
 */
export async function changeSegmentMembers(
  db: Db, companyId: number, segmentId: number, mode: 'add' | 'delete', by: { phones: string[] } | { digests: string[] },
): Promise<{ segment: number; dynamic: number; found: number; processed: number }> {
  // `matched` holds the request items that name an existing contact (an item counts once even when a
  // digest with and one without `+` name the same contact); `found` the distinct contacts.
  const matched = 'digests' in by
    ? sql`SELECT d.item, c.contact_id FROM (SELECT decode(h, 'hex') AS item FROM unnest(${by.digests}::text[]) AS h) d
          JOIN contacts c ON c.company_id = ${companyId} AND (c.sha256_plus = d.item OR c.sha256_bare = d.item)`
    : sql`SELECT c.phone AS item, c.contact_id FROM contacts c
          WHERE c.company_id = ${companyId} AND c.phone = ANY(${by.phones}::text[])`;
  const change = mode === 'add'
    ? sql`INSERT INTO segment_members (segment_id, contact_id)
          SELECT seg.segment_id, f.contact_id FROM seg, (SELECT DISTINCT contact_id FROM matched) f
          ON CONFLICT DO NOTHING RETURNING 1`
    : sql`DELETE FROM segment_members m USING seg
          WHERE m.segment_id = seg.segment_id AND m.contact_id IN (SELECT contact_id FROM matched)
          RETURNING 1`;
  const { rows } = await sql<{ segment: number; dynamic: number; found: number; processed: number }>`
    WITH seg AS (SELECT segment_id FROM segments WHERE segment_id = ${segmentId} AND company_id = ${companyId} AND filter IS NULL),
         matched AS (${matched}),
         changed AS (${change})
    SELECT (SELECT count(*) FROM seg)::int AS segment,
           (SELECT count(*) FROM segments WHERE segment_id = ${segmentId} AND company_id = ${companyId} AND filter IS NOT NULL)::int AS dynamic,
           (SELECT count(DISTINCT item) FROM matched)::int AS found,
           (SELECT count(*) FROM changed)::int AS processed`.execute(db);
  return rows[0];
}

/** Sets the filter of the company's dynamic segment; the segment, or undefined when it is not the company's dynamic one. */
export async function updateSegmentFilter(db: Db, companyId: number, segmentId: number, filter: unknown): Promise<SegmentSummary | undefined> {
  const { rows } = await sql<SegmentSummary>`
    UPDATE segments s SET filter = ${JSON.stringify(filter)}::jsonb
    WHERE s.segment_id = ${segmentId} AND s.company_id = ${companyId} AND s.filter IS NOT NULL
    RETURNING s.segment_id, s.name, s.created_at, s.filter, 0 AS members`.execute(db);
  return rows[0];
}

/** Of `segmentIds`, those that are static segments of the company. */
export async function selectStaticSegmentIds(db: Db, companyId: number, segmentIds: number[]): Promise<number[]> {
  const { rows } = await sql<{ segment_id: number }>`
    SELECT segment_id FROM segments WHERE company_id = ${companyId} AND filter IS NULL AND segment_id = ANY(${segmentIds}::int[])`.execute(db);
  return rows.map((r) => r.segment_id);
}

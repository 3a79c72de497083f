/**
 * SQL of segment administration (issue 15 item 3; api.md 4.1 / 4.2 keep theirs in src/domain/segments.ts):
 * list, rename, delete, and members paged by keyset. Every statement is scoped to the company, so another
 * company's segment is never found (callers answer 404 exactly as for an unknown id).
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/** A segment as administration shows it; `members` is its member count. */
export interface SegmentSummary { segment_id: number; name: string; created_at: Date; members: number }

/** The company's segments (at most 20) with member counts, oldest first. */
export async function selectSegments(db: Db, companyId: number): Promise<SegmentSummary[]> {
  const { rows } = await sql<SegmentSummary>`
    SELECT s.segment_id, s.name, s.created_at,
           (SELECT count(*) FROM segment_members m WHERE m.segment_id = s.segment_id)::int AS members
    FROM segments s WHERE s.company_id = ${companyId} ORDER BY s.segment_id`.execute(db);
  return rows;
}

/** One segment of the company with its member count, or undefined. */
export async function selectSegment(db: Db, companyId: number, segmentId: number): Promise<SegmentSummary | undefined> {
  const { rows } = await sql<SegmentSummary & { company_id: number }>`
    SELECT s.segment_id, s.name, s.created_at,
           (SELECT count(*) FROM segment_members m WHERE m.segment_id = s.segment_id)::int AS members
    FROM segments s WHERE s.segment_id = ${segmentId} AND s.company_id = ${companyId}`.execute(db);
  return rows[0];
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
    RETURNING s.segment_id, s.name, s.created_at,
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
      RETURNING s.segment_id, s.name, s.created_at, s.company_id),
    slot AS (
      UPDATE companies c SET segment_count = greatest(c.segment_count - 1, 0)
      FROM gone WHERE c.company_id = gone.company_id RETURNING c.company_id)
    SELECT gone.segment_id, gone.name, gone.created_at,
           (SELECT count(*) FROM segment_members m WHERE m.segment_id = gone.segment_id)::int AS members
    FROM gone, slot`.execute(db);
  return rows[0];
}

/** One member of a segment; `contact_id` is also the page cursor. */
export interface MemberEntry { contact_id: number; phone: string; first_name: string | null; last_name: string | null; added_at: Date }

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
 * digest of its number with `+` and by the one without counts once (api.md 4.2 counts such items twice
 * as found; administration reports contacts).
 */
export async function countDigestContacts(db: Db, companyId: number, digests: string[]): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(DISTINCT c.contact_id)::int AS n
    FROM (SELECT decode(h, 'hex') AS d FROM unnest(${digests}::text[]) AS h) x
    JOIN contacts c ON c.company_id = ${companyId} AND (c.sha256_plus = x.d OR c.sha256_bare = x.d)`.execute(db);
  return rows[0]?.n ?? 0;
}

/** Segments of one company with member counts (Segments pages). Every query is scoped to the company. */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { isRowId } from '../../domain/errors.ts';

export interface SegmentRow { segment_id: number; name: string; created_at: Date; members: number }

/** All segments of the company (at most 20, api.md part 2) with their member counts, oldest first. */
export async function listCompanySegments(db: Db, companyId: number): Promise<SegmentRow[]> {
  return db.selectFrom('segments as s')
    .leftJoin('segment_members as m', 'm.segment_id', 's.segment_id')
    .select(['s.segment_id', 's.name', 's.created_at', sql<number>`count(m.contact_id)::int`.as('members')])
    .where('s.company_id', '=', companyId)
    .groupBy(['s.segment_id', 's.name', 's.created_at'])
    .orderBy('s.segment_id').execute();
}

/** One segment of the company with its member count, or undefined (unknown or another company's). */
export async function findCompanySegment(db: Db, companyId: number, segmentId: number): Promise<SegmentRow | undefined> {
  if (!isRowId(segmentId)) return undefined;
  return db.selectFrom('segments as s')
    .leftJoin('segment_members as m', 'm.segment_id', 's.segment_id')
    .select(['s.segment_id', 's.name', 's.created_at', sql<number>`count(m.contact_id)::int`.as('members')])
    .where('s.company_id', '=', companyId).where('s.segment_id', '=', segmentId)
    .groupBy(['s.segment_id', 's.name', 's.created_at'])
    .executeTakeFirst();
}

export interface MemberRow { phone: string; first_name: string | null; last_name: string | null; added_at: Date }

/** The most recently added members of a segment (the caller has checked the segment is the company's). */
export async function listSegmentMembers(db: Db, companyId: number, segmentId: number, limit = 100): Promise<MemberRow[]> {
  return db.selectFrom('segment_members as m')
    .innerJoin('contacts as c', 'c.contact_id', 'm.contact_id')
    .select(['c.phone', 'c.first_name', 'c.last_name', 'm.added_at'])
    .where('m.segment_id', '=', segmentId).where('c.company_id', '=', companyId)
    .orderBy('m.added_at', 'desc').orderBy('c.phone').limit(limit).execute();
}

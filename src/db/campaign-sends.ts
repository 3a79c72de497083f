/**
 * The reads of a campaign send (src/domain/campaign-sends.ts decides what they mean): the company's
 * send settings, a segment's filter, a static segment's member numbers and member counts. One
 * statement per function; every one is scoped to the company.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/** The company's send settings (`delivery_hours` as stored), or undefined when there is no such company. */
export async function selectSendCompany(db: Db, companyId: number) {
  return db.selectFrom('companies').select(['company_id', 'default_country', 'delivery_hours']).where('company_id', '=', companyId).executeTakeFirst();
}

/**
 * The filter of the company's segment `segmentId` (`{filter: null}` for a static segment), or
 * undefined when the company has no such segment.
 */
export async function selectSegmentFilterOf(db: Db, companyId: number, segmentId: number): Promise<{ filter: unknown } | undefined> {
  return db.selectFrom('segments').select('filter').where('segment_id', '=', segmentId).where('company_id', '=', companyId).executeTakeFirst();
}

/**
 * Up to `limit` numbers of the members of the company's static segment `segmentId`, in the order they
 * were added (`added_at`; members added together in contact order): a send's list order, which the
 * WhatsApp messaging limit follows (docs/segments.md); with `notOptedOut` only those of contacts that
 * are not opted out.
 */
export async function selectSegmentMemberPhones(db: Db, companyId: number, segmentId: number, limit: number, opts: { notOptedOut?: boolean } = {}): Promise<string[]> {
  let q = db.selectFrom('segment_members as m').innerJoin('contacts as c', 'c.contact_id', 'm.contact_id')
    .select('c.phone').where('m.segment_id', '=', segmentId).where('c.company_id', '=', companyId);
  if (opts.notOptedOut) q = q.where('c.opted_out', '=', false);
  const rows = await q.orderBy('m.added_at').orderBy('c.contact_id').limit(limit).execute();
  return rows.map((r) => r.phone);
}

/**
 * Whether the company has segment `segmentId` (`found`), and how many members it has (`total`) and
 * how many of them are opted out, counted without loading them.
 */
export async function countSegmentMembers(db: Db, companyId: number, segmentId: number): Promise<{ found: boolean; total: number; opted_out: number }> {
  const { rows } = await sql<{ found: boolean; total: number; opted_out: number }>`
    SELECT EXISTS (SELECT 1 FROM segments WHERE segment_id = ${segmentId} AND company_id = ${companyId}) AS found,
           count(c.contact_id)::int AS total, count(c.contact_id) FILTER (WHERE c.opted_out)::int AS opted_out
    FROM segment_members m JOIN contacts c ON c.contact_id = m.contact_id AND c.company_id = ${companyId}
    WHERE m.segment_id = ${segmentId}`.execute(db);
  return rows[0];
}

/**
 * SQL of the template tools: which variable names some contact of a company has (the check at save
 * time), the data of one contact a preview renders with, and, for a send's review, the recipients a
 * template's names would render empty for and the audience's first recipient. One statement per function.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * The subset of `names` that at least one contact of the company has as a stored variable
 * (`contacts.variables ? name`). Empty input: no query.
 */
export async function knownVariableNames(db: Db, companyId: number, names: string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const { rows } = await sql<{ name: string }>`
    SELECT n.name FROM unnest(${names}::text[]) AS n(name)
    WHERE EXISTS (SELECT 1 FROM contacts c WHERE c.company_id = ${companyId} AND c.variables ? n.name)`.execute(db);
  return new Set(rows.map((r) => r.name));
}

/** The names and variables of the company's contact with phone `e164`, or undefined (a preview's contact). */
export async function selectPreviewContact(db: Db, companyId: number, e164: string): Promise<{ first_name: string | null; last_name: string | null; variables: Record<string, unknown> | null } | undefined> {
  const row = await db.selectFrom('contacts').select(['first_name', 'last_name', 'variables'])
    .where('company_id', '=', companyId).where('phone', '=', e164).executeTakeFirst();
  return row ? { first_name: row.first_name, last_name: row.last_name, variables: row.variables as Record<string, unknown> | null } : undefined;
}

/** A name a template reads that renders empty for some recipients: how many, and the first of them. */
export interface MissingRow { name: string; missing: number; example: string }

/**
 * For each of `names` (first_name, last_name or a variable name), how many of the numbers `phones`
 * (E.164, distinct) would render it empty: no contact of the company with that number, or a contact
 * whose name is null or empty, or whose variable is absent, null or empty. Names no number lacks are
 * left out. Empty input: no query.
 */
export async function missingForNumbers(db: Db, companyId: number, phones: string[], names: string[]): Promise<MissingRow[]> {
  if (phones.length === 0 || names.length === 0) return [];
  const { rows } = await sql<MissingRow>`
    SELECT n.name, count(*)::int AS missing, min(p.phone) AS example
    FROM unnest(${phones}::text[]) AS p(phone)
    CROSS JOIN unnest(${names}::text[]) AS n(name)
    LEFT JOIN contacts c ON c.company_id = ${companyId} AND c.phone = p.phone
    WHERE CASE n.name WHEN 'first_name' THEN coalesce(c.first_name, '') = ''
                      WHEN 'last_name' THEN coalesce(c.last_name, '') = ''
                      ELSE coalesce(c.variables->>n.name, '') = '' END
    GROUP BY n.name ORDER BY n.name`.execute(db);
  return rows;
}

/**
 * As {@link missingForNumbers}, for the members of the company's static segment `segmentId` who are
 * not opted out (the ones a send reaches).
 */
export async function missingForSegment(db: Db, companyId: number, segmentId: number, names: string[]): Promise<MissingRow[]> {
  if (names.length === 0) return [];
  const { rows } = await sql<MissingRow>`
    SELECT n.name, count(*)::int AS missing, min(c.phone) AS example
    FROM segment_members m JOIN contacts c ON c.contact_id = m.contact_id AND c.company_id = ${companyId}
    CROSS JOIN unnest(${names}::text[]) AS n(name)
    WHERE m.segment_id = ${segmentId} AND NOT c.opted_out
      AND CASE n.name WHEN 'first_name' THEN coalesce(c.first_name, '') = ''
                      WHEN 'last_name' THEN coalesce(c.last_name, '') = ''
                      ELSE coalesce(c.variables->>n.name, '') = '' END
    GROUP BY n.name ORDER BY n.name`.execute(db);
  return rows;
}

/** The number of the first member (in contact order) of the company's static segment `segmentId` who is not opted out, or undefined. */
export async function firstSegmentRecipient(db: Db, companyId: number, segmentId: number): Promise<string | undefined> {
  const row = await db.selectFrom('segment_members as m').innerJoin('contacts as c', 'c.contact_id', 'm.contact_id')
    .select('c.phone').where('m.segment_id', '=', segmentId).where('c.company_id', '=', companyId).where('c.opted_out', '=', false)
    .orderBy('c.contact_id').limit(1).executeTakeFirst();
  return row?.phone;
}

/**
 * SQL of the template tools: which variable names some contact of a company has (the check at save
 * time), and the data of one contact a preview renders with. One statement per function.
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

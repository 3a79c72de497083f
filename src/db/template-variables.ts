/**
 * SQL of the template check at save time: which variable names some contact of a company
 * has. One statement.
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

/**
 * The WhatsApp send path's own writes (docs/whatsapp.md "What each error code does"). One statement
 * per function.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * Marks a company's catalogue entry `name` / `language` with `status` after Meta refused a message
 * for it (132000-132016: `PAUSED`, `DISABLED`, `DELETED`, `MISMATCHED`); the table's trigger writes
 * `whatsapp.template.updated` when the status changes. A later sync of the catalogue replaces the
 * mark with Meta's status. Returns whether an entry changed.
 */
export async function markTemplateStatus(db: Db, companyId: number, name: string, language: string, status: string): Promise<boolean> {
  const result = await sql`
    UPDATE whatsapp_templates SET status = ${status}
    WHERE company_id = ${companyId} AND name = ${name} AND language = ${language} AND status <> ${status}`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}

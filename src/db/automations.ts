/**
 * The automation lookup of 4.3 (src/domain/automations.ts caches it and decides what may be
 * triggered): one constant statement, run as a named prepared statement on PostgreSQL (db/prepared.ts).
 */
import type { Db } from './database.ts';
import { executePrepared } from './prepared.ts';

/** The company's automation `automationId` as stored (every column); undefined if there is none. */
export async function findAutomationRow(db: Db, companyId: number, automationId: number) {
  const [row] = await executePrepared(db, db.selectFrom('automations').selectAll()
    .where('automation_id', '=', automationId).where('company_id', '=', companyId));
  return row;
}

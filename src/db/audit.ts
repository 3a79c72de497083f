/**
 * The statements on `audit_log` (src/domain/audit.ts: what an entry is), one per function.
 */
import type { Db } from './database.ts';

/** One new entry (details as JSON text). */
export interface NewAuditRow { actor: string; action: string; target: string; company_id: number | null; details: string }

/** Appends one entry. */
export async function insertAuditRow(db: Db, row: NewAuditRow): Promise<void> {
  await db.insertInto('audit_log').values(row).execute();
}

/** The newest `limit` entries first, of company `companyId` when given. */
export async function selectAuditRows(db: Db, limit: number, companyId?: number) {
  let q = db.selectFrom('audit_log').select(['entry_id', 'at', 'actor', 'action', 'target', 'company_id', 'details'])
    .orderBy('entry_id', 'desc').limit(limit);
  if (companyId !== undefined) q = q.where('company_id', '=', companyId);
  return q.execute();
}

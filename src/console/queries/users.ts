/**
 * The history of one console user for its page: the company's audit entries whose
 * target is `user:<id>` (joined, role changes, reset links, resets, sign-ins, password changes),
 * newest first. Scoped to the company; served by the (company_id, target) index of migration 012.
 */
import type { Db } from '../../db/database.ts';
import type { HistoryEntry } from '../views/users.ts';

/** At most `limit` (default 20) newest entries about the user. */
export async function userHistory(db: Db, companyId: number, userId: number, limit = 20): Promise<HistoryEntry[]> {
  const rows = await db.selectFrom('audit_log').select(['at', 'actor', 'action', 'details'])
    .where('company_id', '=', companyId).where('target', '=', `user:${userId}`)
    .orderBy('entry_id', 'desc').limit(limit).execute();
  return rows.map((r) => ({ at: r.at, actor: r.actor, action: r.action, details: typeof r.details === 'string' ? JSON.parse(r.details) : r.details }));
}

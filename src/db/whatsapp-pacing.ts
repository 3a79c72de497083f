/**
 * SQL of the WhatsApp messaging limit as the operator API shows it (table `whatsapp_limit_counts`,
 * migration 017; docs/whatsapp.md "The channel"). Times are ms of the injectable clock.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * The company's messaging-limit budget in use at `now`: `used` = people counted in the moving 24 h
 * window (counted_at > now - 24 h), `resets_at` = when the oldest of them leaves the window (ms), or
 * null when nobody is counted.
 */
export async function limitUsage(db: Db, companyId: number, now: number): Promise<{ used: number; resets_at: number | null }> {
  const { rows } = await sql<{ used: string | number; oldest: Date | null }>`
    SELECT count(*) AS used, min(counted_at) AS oldest FROM whatsapp_limit_counts
    WHERE company_id = ${companyId} AND counted_at > ${new Date(now - 86_400_000).toISOString()}::timestamptz`.execute(db);
  const row = rows[0];
  return { used: Number(row?.used ?? 0), resets_at: row?.oldest ? new Date(row.oldest).getTime() + 86_400_000 : null };
}

/**
 * SQL of frequency caps (migration 029; docs/audience.md "Frequency caps"): the cap that applies to a
 * campaign's send, and which recipients reached it. One statement per function.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { FrequencyCap } from './schema.ts';

/**
 * The company's frequency cap (null: none) and whether campaign `campaignId` ignores it (false when
 * the campaign is not the company's); undefined when the company does not exist.
 */
export async function selectCapPolicy(db: Db, companyId: number, campaignId: number | null): Promise<{ cap: FrequencyCap | null; ignore: boolean } | undefined> {
  const { rows } = await sql<{ frequency_cap: FrequencyCap | null; ignore: boolean | null }>`
    SELECT c.frequency_cap, k.ignore_frequency_cap AS ignore
    FROM companies c LEFT JOIN campaigns k ON k.campaign_id = ${campaignId}::int AND k.company_id = c.company_id
    WHERE c.company_id = ${companyId}`.execute(db);
  const row = rows[0];
  return row ? { cap: row.frequency_cap ?? null, ignore: row.ignore === true } : undefined;
}

/**
 * Of the E.164 numbers `phones`, those that got at least `messages` campaign messages of the company
 * (status `sent`, `delivered` or `read`) sent after `since` (ms, exclusive). Probes the messages'
 * (company_id, phone) index per number and reads each of its messages (a heap fetch each: about 400 ms
 * per 10,000 recipients with 8 messages each on a busy machine, docs/audience.md "Measurements"); no index of its own,
 * so the delivery path's status updates stay HOT.
 */
export async function selectCappedPhones(db: Db, companyId: number, phones: string[], messages: number, since: number): Promise<string[]> {
  if (phones.length === 0) return [];
  const { rows } = await sql<{ phone: string }>`
    SELECT m.phone FROM unnest(${phones}::text[]) AS t(phone)
    JOIN messages m ON m.company_id = ${companyId} AND m.phone = t.phone
    JOIN batches b ON b.batch_id = m.batch_id
    WHERE m.status IN ('sent', 'delivered', 'read') AND m.sent_at > ${new Date(since).toISOString()}::timestamptz
      AND b.kind = 'campaign'
    GROUP BY m.phone HAVING count(*) >= ${messages}::int`.execute(db);
  return rows.map((r) => r.phone);
}

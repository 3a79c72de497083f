/**
 * The statements on `idempotency_keys`, one per function: the claim, its look-up, release and purge
 * (for domain/idempotency.ts, whose rules of claims, leases and replays they are) and the answer that
 * the accept store stores inside its own transactions (db/accept-store.ts).
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * Claims the company's `key` for a request of `hash`, leased until `lease`, in one statement: a fresh
 * key is inserted; an answer created at or before `expired`, or an unanswered claim whose lease ended by
 * `now` with the same hash, is taken over. True when claimed.
 */
export async function claimKeyRow(db: Db, companyId: number, key: string, hash: Buffer, now: Date, lease: Date, expired: Date): Promise<boolean> {
  const { rows } = await sql<{ claimed: boolean }>`
    INSERT INTO idempotency_keys AS k (company_id, idempotency_key, request_hash, locked_until, created_at)
    VALUES (${companyId}, ${key}, ${hash}, ${lease}, ${now})
    ON CONFLICT (company_id, idempotency_key) DO UPDATE
      SET request_hash = EXCLUDED.request_hash, locked_until = EXCLUDED.locked_until,
          response_status = NULL, response_body = NULL, created_at = EXCLUDED.created_at
      WHERE k.created_at <= ${expired}
         OR (k.response_status IS NULL AND k.locked_until <= ${now} AND k.request_hash = EXCLUDED.request_hash)
    RETURNING true AS claimed`.execute(db);
  return rows.length > 0;
}

/** The company's key as stored (request hash, answer), or undefined. */
export async function selectKeyRow(db: Db, companyId: number, key: string) {
  return db.selectFrom('idempotency_keys')
    .select(['request_hash', 'response_status', 'response_body'])
    .where('company_id', '=', companyId).where('idempotency_key', '=', key).executeTakeFirst();
}

/** Deletes the company's key if it has no answer yet. */
export async function deleteUnansweredKey(db: Db, companyId: number, key: string): Promise<void> {
  await db.deleteFrom('idempotency_keys')
    .where('company_id', '=', companyId).where('idempotency_key', '=', key).where('response_status', 'is', null).execute();
}

/** Deletes up to `limit` keys created before `before` (index idempotency_keys_created); how many. */
export async function deleteKeysBefore(db: Db, before: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM idempotency_keys k USING (
        SELECT company_id, idempotency_key FROM idempotency_keys WHERE created_at < ${before} LIMIT ${limit}) d
      WHERE k.company_id = d.company_id AND k.idempotency_key = d.idempotency_key
      RETURNING 1)
    SELECT count(*)::int AS n FROM gone`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Stores the first answer (`status`, exact `body` text) under the company's key and ends its lease;
 * in the caller's transaction when `db` is one. A key that is not claimed is left as it is.
 */
export async function storeAnswer(db: Db, companyId: number, key: string, status: number, body: string): Promise<void> {
  await db.updateTable('idempotency_keys')
    .set({ response_status: status, response_body: body, locked_until: null })
    .where('company_id', '=', companyId).where('idempotency_key', '=', key).execute();
}

/**
 * The statements on `idempotency_keys` that the accept store runs inside its own transactions
 * (db/accept-store.ts). The rules of keys (claims, leases, replays) are domain/idempotency.ts's.
 */
import type { Db } from './database.ts';

/**
 * Stores the first answer (`status`, exact `body` text) under the company's key and ends its lease;
 * in the caller's transaction when `db` is one. A key that is not claimed is left as it is.
 */
export async function storeAnswer(db: Db, companyId: number, key: string, status: number, body: string): Promise<void> {
  await db.updateTable('idempotency_keys')
    .set({ response_status: status, response_body: body, locked_until: null })
    .where('company_id', '=', companyId).where('idempotency_key', '=', key).execute();
}

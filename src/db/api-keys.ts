/**
 * The API key lookup of every public request (src/domain/api-keys.ts decides what a key is): one
 * constant statement, run as a named prepared statement on PostgreSQL (db/prepared.ts).
 */
import type { Db } from './database.ts';
import { executePrepared } from './prepared.ts';

/** An unrevoked key's row with the parts of its company the API needs. */
export interface ActiveKeyRow {
  key_id: number;
  key_hash: Uint8Array;
  company_id: number;
  default_country: string;
  subscription_active: boolean;
  connector_connected: boolean;
}

/** The unrevoked key whose SHA-256 is `hash` (32 bytes), with its company's settings; undefined if none. */
export async function findActiveKeyByHash(db: Db, hash: Buffer): Promise<ActiveKeyRow | undefined> {
  const [row] = await executePrepared(db, db.selectFrom('api_keys as k')
    .innerJoin('companies as c', 'c.company_id', 'k.company_id')
    .select(['k.key_id', 'k.key_hash', 'k.company_id', 'c.default_country', 'c.subscription_active', 'c.connector_connected'])
    .where('k.key_hash', '=', hash)
    .where('k.revoked_at', 'is', null));
  return row;
}

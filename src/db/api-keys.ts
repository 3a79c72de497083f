/**
 * API keys (src/domain/api-keys.ts decides what a key is and drops the lookup cache after a write): one
 * statement per function. The lookup of every public request is a constant statement, run as a named
 * prepared statement on PostgreSQL (db/prepared.ts).
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

/** Inserts a key (its SHA-256 and display prefix) for company `companyId` if that company exists; undefined if not. */
export async function insertApiKey(db: Db, companyId: number, keyHash: Buffer, prefix: string, label: string | null) {
  return db.insertInto('api_keys')
    .columns(['company_id', 'key_hash', 'prefix', 'label'])
    .expression((eb) => eb.selectFrom('companies')
      .select(['company_id', eb.val(keyHash).as('key_hash'), eb.val(prefix).as('prefix'), eb.val(label).as('label')])
      .where('company_id', '=', companyId))
    .returning(['key_id', 'label', 'prefix', 'created_at'])
    .executeTakeFirst();
}

/** Sets `revoked_at` of key `keyId` (of company `companyId` when given) to `at`; its company, or undefined. */
export async function revokeKeyRow(db: Db, keyId: number, companyId: number | undefined, at: Date): Promise<{ company_id: number } | undefined> {
  let q = db.updateTable('api_keys').set({ revoked_at: at }).where('key_id', '=', keyId);
  if (companyId !== undefined) q = q.where('company_id', '=', companyId);
  return q.returning(['company_id']).executeTakeFirst();
}

/** A key as lists show it. */
export interface KeyListRow { key_id: number; label: string | null; prefix: string; created_at: Date; last_used_at: Date | null; revoked_at: Date | null }

/** The keys of company `companyId`, oldest first, revoked ones included. */
export async function selectCompanyKeys(db: Db, companyId: number): Promise<KeyListRow[]> {
  return db.selectFrom('api_keys')
    .select(['key_id', 'label', 'prefix', 'created_at', 'last_used_at', 'revoked_at'])
    .where('company_id', '=', companyId).orderBy('key_id').execute();
}

/** Sets `last_used_at` of the keys to `at`. */
export async function touchKeyRows(db: Db, keyIds: number[], at: Date): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('key_id', 'in', keyIds).execute();
}

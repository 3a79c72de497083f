/**
 * The API keys of one company for the Credentials page (never the keys themselves: only label,
 * display prefix, times). Every query is scoped to the company.
 */
import type { Db } from '../../db/database.ts';
import { isRowId } from '../../domain/errors.ts';

export interface KeyRow {
  key_id: number;
  label: string | null;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** The company's keys: active ones first (newest first), then revoked ones (most recently revoked first). */
export async function listCompanyKeys(db: Db, companyId: number): Promise<KeyRow[]> {
  const rows = await db.selectFrom('api_keys')
    .select(['key_id', 'label', 'prefix', 'created_at', 'last_used_at', 'revoked_at'])
    .where('company_id', '=', companyId)
    .orderBy('key_id', 'desc').limit(500).execute();
  const active = rows.filter((r) => !r.revoked_at);
  const revoked = rows.filter((r) => r.revoked_at).sort((a, b) => b.revoked_at!.getTime() - a.revoked_at!.getTime());
  return [...active, ...revoked];
}

/** One active key of the company, or undefined (unknown, revoked, or another company's). */
export async function findActiveCompanyKey(db: Db, companyId: number, keyId: number): Promise<KeyRow | undefined> {
  if (!isRowId(keyId)) return undefined;
  return db.selectFrom('api_keys')
    .select(['key_id', 'label', 'prefix', 'created_at', 'last_used_at', 'revoked_at'])
    .where('company_id', '=', companyId).where('key_id', '=', keyId).where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/**
 * The statements on `console_password_resets` (src/domain/users/password-resets.ts decides): one
 * statement per function. A usable link is one not used, not revoked and not expired at `now`.
 */
import type { Db } from './database.ts';

/** A usable reset link with its user and company, as the reset page shows it. */
export interface UsableResetRow { reset_id: number; user_id: number; email: string; company_id: number; company_name: string; expires_at: Date }

/** Sets `revoked_at` of user `userId`'s open (not used, not revoked) links. */
export async function revokeOpenResetsOf(db: Db, userId: number, at: Date): Promise<void> {
  await db.updateTable('console_password_resets').set({ revoked_at: at })
    .where('user_id', '=', userId).where('used_at', 'is', null).where('revoked_at', 'is', null).execute();
}

/** Inserts a link (only its token's SHA-256); its id. */
export async function insertReset(db: Db, values: { user_id: number; token_hash: Buffer; created_by: string; created_at: Date; expires_at: Date }): Promise<number> {
  return (await db.insertInto('console_password_resets').values(values).returning(['reset_id']).executeTakeFirstOrThrow()).reset_id;
}

/** The link usable at `now` whose token hashes to `tokenHash`, with its user and company; undefined if none. */
export async function selectUsableResetByHash(db: Db, tokenHash: Buffer, now: Date): Promise<UsableResetRow | undefined> {
  return db.selectFrom('console_password_resets as r')
    .innerJoin('console_users as u', 'u.user_id', 'r.user_id')
    .innerJoin('companies as c', 'c.company_id', 'u.company_id')
    .select(['r.reset_id', 'r.user_id', 'r.expires_at', 'u.email', 'u.company_id', 'c.name as company_name'])
    .where('r.token_hash', '=', tokenHash)
    .where('r.used_at', 'is', null)
    .where('r.revoked_at', 'is', null)
    .where('r.expires_at', '>', now)
    .executeTakeFirst();
}

/** Sets `used_at` of the link usable at `now` whose token hashes to `tokenHash`; its ids, or undefined. */
export async function useResetByHash(db: Db, tokenHash: Buffer, now: Date): Promise<{ reset_id: number; user_id: number } | undefined> {
  return db.updateTable('console_password_resets').set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null).where('revoked_at', 'is', null).where('expires_at', '>', now)
    .returning(['reset_id', 'user_id'])
    .executeTakeFirst();
}

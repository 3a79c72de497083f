/**
 * The statements on `console_sessions` (src/domain/users/sessions.ts decides lifetimes): one statement
 * per function. Sessions are found by the SHA-256 of their cookie value.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { ConsoleRole } from './schema.ts';

/** A live session with its user and the company settings the console needs (null when unset). */
export interface SessionRow {
  created_at: Date; last_seen_at: Date; user_id: number; email: string; role: ConsoleRole; company_id: number;
  company_name: string; channel_provider: string | null; time_zone: string | null;
}

/** Deletes user `userId`'s sessions that expired by `now`. */
export async function deleteExpiredSessionsOf(db: Db, userId: number, now: Date): Promise<void> {
  await db.deleteFrom('console_sessions').where('user_id', '=', userId).where('expires_at', '<=', now).execute();
}

/** Inserts a session. */
export async function insertSession(db: Db, values: { session_hash: Buffer; user_id: number; created_at: Date; last_seen_at: Date; expires_at: Date }): Promise<void> {
  await db.insertInto('console_sessions').values(values).execute();
}

/** The session of `sessionHash` unexpired at `now`, with its user and company; undefined if none. */
export async function selectLiveSession(db: Db, sessionHash: Buffer, now: Date): Promise<SessionRow | undefined> {
  return db.selectFrom('console_sessions as s')
    .innerJoin('console_users as u', 'u.user_id', 's.user_id')
    .innerJoin('companies as c', 'c.company_id', 'u.company_id')
    .select(['s.created_at', 's.last_seen_at', 'u.user_id', 'u.email', 'u.role', 'u.company_id', 'c.name as company_name', sql<string | null>`c.channel->>'provider'`.as('channel_provider'), sql<string | null>`c.delivery_hours->>'timezone'`.as('time_zone')])
    .where('s.session_hash', '=', sessionHash)
    .where('s.expires_at', '>', now)
    .executeTakeFirst();
}

/** Sets a session's `last_seen_at` and `expires_at`. */
export async function touchSession(db: Db, sessionHash: Buffer, lastSeenAt: Date, expiresAt: Date): Promise<void> {
  await db.updateTable('console_sessions').set({ last_seen_at: lastSeenAt, expires_at: expiresAt }).where('session_hash', '=', sessionHash).execute();
}

/** Deletes the session of `sessionHash` (none: nothing happens). */
export async function deleteSessionByHash(db: Db, sessionHash: Buffer): Promise<void> {
  await db.deleteFrom('console_sessions').where('session_hash', '=', sessionHash).execute();
}

/** Deletes every session of user `userId` but the one of `keepHash` (when given). */
export async function deleteSessionsOf(db: Db, userId: number, keepHash?: Buffer): Promise<void> {
  let q = db.deleteFrom('console_sessions').where('user_id', '=', userId);
  if (keepHash !== undefined) q = q.where('session_hash', '!=', keepHash);
  await q.execute();
}

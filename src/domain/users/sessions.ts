/**
 * Console sessions: random cookie values of which only the SHA-256 is stored, so any process on the
 * same database accepts them. A session ends after `SESSION_IDLE_MS` without use or `SESSION_MAX_MS`
 * after sign-in, on sign-out, on removal of the user, and (other sessions of the user) on a password
 * change or reset. Sign-in and sign-out are commands audited as `console.sign_in` / `console.sign_out`
 * (by the user, target `user:<id>`). Times are the caller's clock (`now`).
 */
import { audit, consoleActor, type ConsoleActor } from '../actor.ts';
import { deleteExpiredSessionsOf, deleteSessionByHash, insertSession, selectLiveSession, touchSession } from '../../db/console-sessions.ts';
import type { Db } from '../../db/database.ts';
import { authenticateUser } from './accounts.ts';
import { hashToken, newToken, plausibleToken, type PasswordHashing } from './credentials.ts';
import type { ConsoleUser } from './invitations.ts';
import { clearLoginFailures, loginBlockedFor, recordLoginFailure } from './login-throttle.ts';
import type { Role } from './roles.ts';

/** A session ends after this long without a request: 12 hours. */
export const SESSION_IDLE_MS = 12 * 3600_000;
/** A session ends this long after sign-in whatever its use: 7 days. */
export const SESSION_MAX_MS = 7 * 24 * 3600_000;
/** `last_seen_at` / `expires_at` are written at most this often per session: 1 minute. */
const SESSION_TOUCH_MS = 60_000;

/** What a valid session resolves to: the user, its role, the company, and the session's cookie value. */
export interface SessionInfo {
  token: string;
  user_id: number;
  email: string;
  role: Role;
  company_id: number;
  company_name: string;
  /** The company's channel provider (`outbox`, `webhook`, `whatsapp`): the console links WhatsApp pages by it. */
  channel_provider: string;
  /** The company's time zone (that of its delivery hours, else UTC): the console shows times in it. */
  time_zone: string;
}

/** Starts a session for the user; resolves to the cookie value (shown to the browser only). */
export async function createSession(db: Db, userId: number, now: Date): Promise<string> {
  const token = newToken();
  const expiresAt = new Date(now.getTime() + Math.min(SESSION_IDLE_MS, SESSION_MAX_MS));
  await db.transaction().execute(async (trx) => {
    await deleteExpiredSessionsOf(trx, userId, now);
    await insertSession(trx, { session_hash: hashToken(token), user_id: userId, created_at: now, last_seen_at: now, expires_at: expiresAt });
  });
  return token;
}

/**
 * Resolves a cookie value to its session, or undefined when unknown or expired. The role is read with
 * it on every request, so a role change or a removal applies at once. Extends the idle expiry (at
 * most once a minute), never beyond `SESSION_MAX_MS` after sign-in.
 */
export async function findSession(db: Db, token: string | undefined, now: Date): Promise<SessionInfo | undefined> {
  if (!token || !plausibleToken(token)) return undefined;
  const tokenHash = hashToken(token);
  const row = await selectLiveSession(db, tokenHash, now);
  if (!row) return undefined;
  if (now.getTime() - row.last_seen_at.getTime() >= SESSION_TOUCH_MS) {
    const expiresAt = new Date(Math.min(row.created_at.getTime() + SESSION_MAX_MS, now.getTime() + SESSION_IDLE_MS));
    await touchSession(db, tokenHash, now, expiresAt);
  }
  return { token, user_id: row.user_id, email: row.email, role: row.role, company_id: row.company_id, company_name: row.company_name, channel_provider: row.channel_provider ?? 'outbox', time_zone: row.time_zone ?? 'UTC' };
}

/** Ends a session (no audit: sign-out is {@link signOut}). Unknown tokens are ignored. */
export async function deleteSession(db: Db, token: string): Promise<void> {
  await deleteSessionByHash(db, hashToken(token));
}

/** The outcome of a sign-in: a new session, or refused (wrong email or password), or blocked for `waitMs`. */
export type SignInOutcome =
  | { kind: 'signed_in'; user: ConsoleUser; token: string }
  | { kind: 'refused' }
  | { kind: 'blocked'; waitMs: number };

/**
 * Command: signs a person in from client `address`. While the email's or the address's failures are
 * over their limit (login-throttle.ts) it answers `blocked` before any password is checked; a wrong
 * email or password counts a failure and answers `refused`. Otherwise the email's failures are
 * forgotten, the session of `replacesToken` (the browser's previous cookie, if any) ends, a new one
 * starts (no session fixation), and `console.sign_in` is audited by the user.
 */
export async function signIn(db: Db, passwords: PasswordHashing, input: { email: string; password: string; address: string; replacesToken?: string }, now: Date): Promise<SignInOutcome> {
  const waitMs = await loginBlockedFor(db, input.email, input.address, now);
  if (waitMs > 0) return { kind: 'blocked', waitMs };
  const user = await authenticateUser(db, passwords, input.email, input.password);
  if (!user) {
    await recordLoginFailure(db, input.email, input.address, now);
    return { kind: 'refused' };
  }
  await clearLoginFailures(db, input.email);
  if (input.replacesToken) await deleteSession(db, input.replacesToken);
  const token = await createSession(db, user.user_id, now);
  await audit(db, consoleActor(user), { action: 'console.sign_in', target: `user:${user.user_id}`, companyId: user.company_id });
  return { kind: 'signed_in', user, token };
}

/** Command: ends the signed-in user's session `token` and audits `console.sign_out`. */
export async function signOut(db: Db, actor: ConsoleActor, token: string): Promise<void> {
  await deleteSession(db, token);
  await audit(db, actor, { action: 'console.sign_out', target: `user:${actor.userId}`, companyId: actor.companyId });
}

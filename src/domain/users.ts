/**
 * Company users of the console (issue 6 item 1): people who belong to one company and sign in with an
 * email and a password.
 *
 * - Passwords are hashed with argon2id (@node-rs/argon2 defaults: 19 MiB, 2 passes, 1 lane, 16-byte
 *   salt; the OWASP recommendation) and stored as PHC strings.
 * - An operator invites a person with a one-time link (`/console/invite/<token>`), valid for
 *   `INVITATION_TTL_MS`; accepting it sets the password and creates the user. Only the SHA-256 of the
 *   token is stored, and a newer invitation for the same email supersedes older ones.
 * - Sessions are random cookie values of which only the SHA-256 is stored, so any process on the same
 *   database accepts them. A session ends after `SESSION_IDLE_MS` without use or `SESSION_MAX_MS` after
 *   sign-in, on sign-out, and (other sessions of the user) on a password change.
 *
 * Emails are compared lowercased and are unique across companies. Times are `Date`s taken from the
 * caller's clock (`now`), so tests can move them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import type { Db } from '../db/database.ts';
import { DomainError, isRowId } from './errors.ts';

/** How long an invitation link stays valid: 7 days. */
export const INVITATION_TTL_MS = 7 * 24 * 3600_000;
/** A session ends after this long without a request: 12 hours. */
export const SESSION_IDLE_MS = 12 * 3600_000;
/** A session ends this long after sign-in whatever its use: 7 days. */
export const SESSION_MAX_MS = 7 * 24 * 3600_000;
/** `last_seen_at` / `expires_at` are written at most this often per session: 1 minute. */
const SESSION_TOUCH_MS = 60_000;

/** Shortest password, in code points (NIST SP 800-63B asks at least 8; we ask 10). */
export const PASSWORD_MIN = 10;
/** Longest password, in code points (bounds the hashing work per request). */
export const PASSWORD_MAX = 200;
/** Longest email accepted (RFC 5321 path limit). */
export const EMAIL_MAX = 254;

const EMAIL_RE = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:"]+$/;

/** SHA-256 of a token (invitation or session): what the database stores and looks up. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** A new random token: 32 bytes (256 bits), base64url (43 characters). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Trims and lowercases an email; undefined when it does not look like one or is too long. */
export function normaliseEmail(email: string): string | undefined {
  const e = email.trim().toLowerCase();
  return e.length <= EMAIL_MAX && EMAIL_RE.test(e) ? e : undefined;
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  const n = [...password].length;
  if (n < PASSWORD_MIN) return `The password must have at least ${PASSWORD_MIN} characters.`;
  if (n > PASSWORD_MAX) return `The password must have at most ${PASSWORD_MAX} characters.`;
  return undefined;
}

/** argon2id PHC string of `password`. */
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/** True when `password` matches the PHC string; false for a wrong password or a malformed hash. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

// Verified against when the email is unknown, so that the answer takes as long as for a known one.
let dummyHash: Promise<string> | undefined;

// ---------------------------------------------------------------------------------------------------
// Invitations

export interface Invitation {
  invitation_id: number;
  company_id: number;
  email: string;
  expires_at: Date;
}

export interface CreatedInvitation extends Invitation {
  /** The one-time token of the link; shown only in this answer. */
  token: string;
}

/**
 * Invites `email` to the company. Errors (DomainError): 404 `Company not found`, 422 `Invalid email
 * address`, 409 when a user with that email already exists (in any company). Earlier pending
 * invitations of the company for the same email are revoked.
 */
export async function createInvitation(db: Db, companyId: number, email: string, now: Date): Promise<CreatedInvitation> {
  if (!isRowId(companyId)) throw new DomainError(404, 'Company not found');
  const normalised = normaliseEmail(email);
  if (!normalised) throw new DomainError(422, 'Invalid email address');
  const token = newToken();
  const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS);
  return db.transaction().execute(async (trx) => {
    const company = await trx.selectFrom('companies').select('company_id').where('company_id', '=', companyId).executeTakeFirst();
    if (!company) throw new DomainError(404, 'Company not found');
    const user = await trx.selectFrom('console_users').select('user_id').where('email', '=', normalised).executeTakeFirst();
    if (user) throw new DomainError(409, 'A console user with this email already exists');
    await trx.updateTable('console_invitations').set({ revoked_at: now })
      .where('company_id', '=', companyId).where('email', '=', normalised)
      .where('accepted_at', 'is', null).where('revoked_at', 'is', null).execute();
    const row = await trx.insertInto('console_invitations')
      .values({ company_id: companyId, email: normalised, token_hash: hashToken(token), created_at: now, expires_at: expiresAt })
      .returning(['invitation_id', 'company_id', 'email', 'expires_at'])
      .executeTakeFirstOrThrow();
    return { ...row, token };
  });
}

/** The pending (not used, not superseded, not expired) invitation of a token, or undefined. */
export async function findInvitation(db: Db, token: string, now: Date): Promise<(Invitation & { company_name: string }) | undefined> {
  if (token.length < 20 || token.length > 100) return undefined;
  return db.selectFrom('console_invitations as i')
    .innerJoin('companies as c', 'c.company_id', 'i.company_id')
    .select(['i.invitation_id', 'i.company_id', 'i.email', 'i.expires_at', 'c.name as company_name'])
    .where('i.token_hash', '=', hashToken(token))
    .where('i.accepted_at', 'is', null)
    .where('i.revoked_at', 'is', null)
    .where('i.expires_at', '>', now)
    .executeTakeFirst();
}

/**
 * Uses an invitation: creates the user with the password and marks the link used, in one transaction.
 * Errors (DomainError): 404 `Invitation not found` (unknown, used, superseded or expired), 422 with
 * the password problem, 409 when a user with the email exists already (e.g. two links accepted).
 */
export async function acceptInvitation(db: Db, token: string, password: string, now: Date): Promise<{ user_id: number; company_id: number; email: string }> {
  const problem = passwordProblem(password);
  if (problem) throw new DomainError(422, problem);
  if (!(await findInvitation(db, token, now))) throw new DomainError(404, 'Invitation not found');
  const passwordHash = await hashPassword(password);
  return db.transaction().execute(async (trx) => {
    const inv = await trx.updateTable('console_invitations').set({ accepted_at: now })
      .where('token_hash', '=', hashToken(token))
      .where('accepted_at', 'is', null).where('revoked_at', 'is', null).where('expires_at', '>', now)
      .returning(['company_id', 'email'])
      .executeTakeFirst();
    if (!inv) throw new DomainError(404, 'Invitation not found');
    const user = await trx.insertInto('console_users')
      .values({ company_id: inv.company_id, email: inv.email, password_hash: passwordHash, created_at: now, password_changed_at: now })
      .onConflict((oc) => oc.column('email').doNothing())
      .returning(['user_id', 'company_id', 'email'])
      .executeTakeFirst();
    if (!user) throw new DomainError(409, 'A console user with this email already exists');
    return user;
  });
}

// ---------------------------------------------------------------------------------------------------
// Users

export interface ConsoleUser { user_id: number; company_id: number; email: string }

/**
 * The user whose email and password match, or undefined. Takes about as long for an unknown email as
 * for a wrong password (a dummy hash is verified), so timing does not tell which emails exist.
 */
export async function authenticateUser(db: Db, email: string, password: string): Promise<ConsoleUser | undefined> {
  const normalised = normaliseEmail(email);
  const row = normalised && password.length <= PASSWORD_MAX * 4
    ? await db.selectFrom('console_users').select(['user_id', 'company_id', 'email', 'password_hash']).where('email', '=', normalised).executeTakeFirst()
    : undefined;
  if (!row) {
    dummyHash ??= hashPassword(newToken());
    await verifyPassword(await dummyHash, password.slice(0, PASSWORD_MAX * 4));
    return undefined;
  }
  if (!(await verifyPassword(row.password_hash, password))) return undefined;
  return { user_id: row.user_id, company_id: row.company_id, email: row.email };
}

/**
 * Changes a user's password after checking the current one, and ends every other session of the user
 * (the one named by `keepSessionToken` stays). Errors (DomainError): 403 `The current password is
 * wrong`, 422 with the problem of the new password.
 */
export async function changePassword(db: Db, userId: number, current: string, next: string, keepSessionToken: string, now: Date): Promise<void> {
  const row = await db.selectFrom('console_users').select('password_hash').where('user_id', '=', userId).executeTakeFirst();
  if (!row || !(await verifyPassword(row.password_hash, current))) throw new DomainError(403, 'The current password is wrong');
  const problem = passwordProblem(next);
  if (problem) throw new DomainError(422, problem);
  const passwordHash = await hashPassword(next);
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('console_users').set({ password_hash: passwordHash, password_changed_at: now }).where('user_id', '=', userId).execute();
    await trx.deleteFrom('console_sessions').where('user_id', '=', userId).where('session_hash', '!=', hashToken(keepSessionToken)).execute();
  });
}

/** The users and pending invitations of a company (operator API listing). */
export async function listCompanyUsers(db: Db, companyId: number, now: Date) {
  const users = await db.selectFrom('console_users').select(['user_id', 'email', 'created_at'])
    .where('company_id', '=', companyId).orderBy('user_id').execute();
  const invitations = await db.selectFrom('console_invitations').select(['invitation_id', 'email', 'created_at', 'expires_at'])
    .where('company_id', '=', companyId).where('accepted_at', 'is', null).where('revoked_at', 'is', null)
    .where('expires_at', '>', now).orderBy('invitation_id').execute();
  return { users, invitations };
}

// ---------------------------------------------------------------------------------------------------
// Sessions

/** What a valid session resolves to: the user, the company, and the session's cookie value. */
export interface SessionInfo {
  token: string;
  user_id: number;
  email: string;
  company_id: number;
  company_name: string;
}

/** Starts a session for the user; resolves to the cookie value (shown to the browser only). */
export async function createSession(db: Db, userId: number, now: Date): Promise<string> {
  const token = newToken();
  const expiresAt = new Date(now.getTime() + Math.min(SESSION_IDLE_MS, SESSION_MAX_MS));
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('console_sessions').where('user_id', '=', userId).where('expires_at', '<=', now).execute();
    await trx.insertInto('console_sessions')
      .values({ session_hash: hashToken(token), user_id: userId, created_at: now, last_seen_at: now, expires_at: expiresAt })
      .execute();
  });
  return token;
}

/**
 * Resolves a cookie value to its session, or undefined when unknown or expired. Extends the idle
 * expiry (at most once a minute), never beyond `SESSION_MAX_MS` after sign-in.
 */
export async function findSession(db: Db, token: string | undefined, now: Date): Promise<SessionInfo | undefined> {
  if (!token || token.length < 20 || token.length > 100) return undefined;
  const tokenHash = hashToken(token);
  const row = await db.selectFrom('console_sessions as s')
    .innerJoin('console_users as u', 'u.user_id', 's.user_id')
    .innerJoin('companies as c', 'c.company_id', 'u.company_id')
    .select(['s.created_at', 's.last_seen_at', 'u.user_id', 'u.email', 'u.company_id', 'c.name as company_name'])
    .where('s.session_hash', '=', tokenHash)
    .where('s.expires_at', '>', now)
    .executeTakeFirst();
  if (!row) return undefined;
  if (now.getTime() - row.last_seen_at.getTime() >= SESSION_TOUCH_MS) {
    const expiresAt = new Date(Math.min(row.created_at.getTime() + SESSION_MAX_MS, now.getTime() + SESSION_IDLE_MS));
    await db.updateTable('console_sessions').set({ last_seen_at: now, expires_at: expiresAt })
      .where('session_hash', '=', tokenHash).execute();
  }
  return { token, user_id: row.user_id, email: row.email, company_id: row.company_id, company_name: row.company_name };
}

/** Ends a session (sign-out). Unknown tokens are ignored. */
export async function deleteSession(db: Db, token: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('session_hash', '=', hashToken(token)).execute();
}

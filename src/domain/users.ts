/**
 * Company users of the console: people who belong to one company and sign in with an
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
 * - Every user has a role (migration 013): `owner`, `developer` or `marketer`
 *   (what each may do: src/console/permissions.ts). An invitation names the role the person gets.
 *   A company always keeps at least one owner: the last one cannot be demoted or removed (409).
 * - A password reset link (`/console/password-reset/<token>`), made by an owner or the operator, is
 *   one-time, stored as its SHA-256 like invitations, valid `PASSWORD_RESET_TTL_MS`; a newer link for
 *   the same user supersedes older ones. Using it sets the password and ends every session of the user.
 * - Every change (invite, revoke, join, role change, removal, reset link, reset) is written to the
 *   audit log in the same transaction, with the actor who made it (`admin` or `console:<email>`).
 *
 * Emails are compared lowercased and are unique across companies. Times are `Date`s taken from the
 * caller's clock (`now`), so tests can move them. Functions that take an optional `companyId` answer
 * 404 for a user or invitation of another company exactly as for an unknown one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import { sql, type Generated } from 'kysely';
import type { Db } from '../db/database.ts';
import { recordAudit } from './audit.ts';
import { DomainError, isRowId } from './errors.ts';

/** The roles of a console user: `owner` (everything), `developer`, `marketer`. */
export const ROLES = ['owner', 'developer', 'marketer'] as const;
export type Role = typeof ROLES[number];

/** True for one of {@link ROLES}. */
export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

// Columns and table of migration 013 (merged into the Kysely schema of src/db/schema.ts).
declare module '../db/schema.ts' {
  interface ConsoleUsersTable {
    /** 013: what the user may do in the console. */
    role: Role;
  }
  interface ConsoleInvitationsTable {
    /** 013: the role the person gets on accepting. */
    role: Role;
    /** 013: audit actor who invited (`admin` or `console:<email>`). */
    invited_by: string;
  }
  interface DB {
    console_password_resets: ConsolePasswordResetsTable;
  }
}

/** 013: a one-time password reset link (only the SHA-256 of its token is stored). */
export interface ConsolePasswordResetsTable {
  reset_id: Generated<number>;
  user_id: number;
  token_hash: Uint8Array;
  created_by: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  revoked_at: Date | null;
}

/** How long an invitation link stays valid: 7 days. */
export const INVITATION_TTL_MS = 7 * 24 * 3600_000;
/** How long a password reset link stays valid: 1 hour. */
export const PASSWORD_RESET_TTL_MS = 3600_000;
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

/**
 * How console passwords are hashed and checked: argon2id PHC strings. One is built in service.ts and
 * passed to the functions below that take or check a password.
 */
export interface PasswordHashing {
  /** argon2id PHC string of `password`. */
  hash(password: string): Promise<string>;
  /** True when `password` matches the PHC string; false for a wrong password or a malformed hash. */
  verify(passwordHash: string, password: string): Promise<boolean>;
  /**
   * Verifies `password` against a hash of a random secret made once by this instance (always false),
   * so that an unknown email takes about as long to refuse as a wrong password.
   */
  verifyDummy(password: string): Promise<false>;
}

/** The cost of new hashes: argon2's memory in KiB and its passes. */
export interface PasswordHashCost { memoryCost: number; timeCost: number }

/**
 * The low cost tests give their services (1 MiB, one pass: about 0.1 ms instead of 11 ms of CPU; test
 * users are made by the hundred and sign in as often). Never a service's own choice.
 */
export const TEST_PASSWORD_HASH_COST: PasswordHashCost = Object.freeze({ memoryCost: 1024, timeCost: 1 });

/**
 * argon2id hashing (@node-rs/argon2): new hashes at `cost`, by default the library's defaults (see the
 * module comment), which the service always uses. Verification reads the cost from the stored hash,
 * so hashes of any cost verify the same way.
 */
export function argon2Hashing(cost?: PasswordHashCost): PasswordHashing {
  const options = cost ? { memoryCost: cost.memoryCost, timeCost: cost.timeCost } : undefined;
  let dummyHash: Promise<string> | undefined; // made on the first unknown email
  const hashing: PasswordHashing = {
    hash: (password) => (options ? hash(password, options) : hash(password)),
    async verify(passwordHash, password) {
      try {
        return await verify(passwordHash, password);
      } catch {
        return false;
      }
    },
    async verifyDummy(password) {
      dummyHash ??= hashing.hash(newToken());
      await hashing.verify(await dummyHash, password);
      return false;
    },
  };
  return hashing;
}

// ---------------------------------------------------------------------------------------------------
// Invitations

export interface Invitation {
  invitation_id: number;
  company_id: number;
  email: string;
  role: Role;
  expires_at: Date;
}

export interface CreatedInvitation extends Invitation {
  /** The one-time token of the link; shown only in this answer. */
  token: string;
}

/** Who asks for a change: the audit actor (`admin` or `console:<email>`). */
export interface Actor { actor: string }

/**
 * Invites `email` to the company with `role`. Errors (DomainError): 404 `Company not found`, 422
 * `Invalid email address` / `Invalid role`, 409 when a user with that email already exists (in any
 * company). Earlier pending invitations of the company for the same email are revoked. Audited as
 * `user.invite` (target `invitation:<id>`).
 */
export async function createInvitation(
  db: Db, companyId: number, input: { email: string; role: Role } & Actor, now: Date,
): Promise<CreatedInvitation> {
  if (!isRowId(companyId)) throw new DomainError(404, 'Company not found');
  const normalised = normaliseEmail(input.email);
  if (!normalised) throw new DomainError(422, 'Invalid email address');
  if (!isRole(input.role)) throw new DomainError(422, 'Invalid role');
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
      .values({ company_id: companyId, email: normalised, role: input.role, invited_by: input.actor, token_hash: hashToken(token), created_at: now, expires_at: expiresAt })
      .returning(['invitation_id', 'company_id', 'email', 'role', 'expires_at'])
      .executeTakeFirstOrThrow();
    await recordAudit(trx, { actor: input.actor, action: 'user.invite', target: `invitation:${row.invitation_id}`, company_id: companyId, details: { email: row.email, role: row.role } });
    return { ...row, token };
  });
}

/**
 * Revokes a pending invitation (its link stops working). Errors: 404 `Invitation not found` (unknown,
 * used, revoked, expired, or of another company when `companyId` is given). Audited as
 * `user.invitation_revoke`.
 */
export async function revokeInvitation(db: Db, invitationId: number, opts: { companyId?: number } & Actor, now: Date): Promise<Invitation> {
  if (!isRowId(invitationId) || (opts.companyId !== undefined && !isRowId(opts.companyId))) throw new DomainError(404, 'Invitation not found');
  return db.transaction().execute(async (trx) => {
    let q = trx.updateTable('console_invitations').set({ revoked_at: now })
      .where('invitation_id', '=', invitationId)
      .where('accepted_at', 'is', null).where('revoked_at', 'is', null).where('expires_at', '>', now);
    if (opts.companyId !== undefined) q = q.where('company_id', '=', opts.companyId);
    const row = await q.returning(['invitation_id', 'company_id', 'email', 'role', 'expires_at']).executeTakeFirst();
    if (!row) throw new DomainError(404, 'Invitation not found');
    await recordAudit(trx, { actor: opts.actor, action: 'user.invitation_revoke', target: `invitation:${row.invitation_id}`, company_id: row.company_id, details: { email: row.email, role: row.role } });
    return row;
  });
}

/** The pending (not used, not superseded, not expired) invitation of a token, or undefined. */
export async function findInvitation(db: Db, token: string, now: Date): Promise<(Invitation & { company_name: string }) | undefined> {
  if (token.length < 20 || token.length > 100) return undefined;
  return db.selectFrom('console_invitations as i')
    .innerJoin('companies as c', 'c.company_id', 'i.company_id')
    .select(['i.invitation_id', 'i.company_id', 'i.email', 'i.role', 'i.expires_at', 'c.name as company_name'])
    .where('i.token_hash', '=', hashToken(token))
    .where('i.accepted_at', 'is', null)
    .where('i.revoked_at', 'is', null)
    .where('i.expires_at', '>', now)
    .executeTakeFirst();
}

/**
 * Uses an invitation: creates the user with the invitation's role and the password and marks the link
 * used, in one transaction (audited as `user.join` by the new user). Errors (DomainError): 404
 * `Invitation not found` (unknown, used, superseded or expired), 422 with the password problem, 409
 * when a user with the email exists already (e.g. two links accepted).
 */
export async function acceptInvitation(db: Db, passwords: PasswordHashing, token: string, password: string, now: Date): Promise<ConsoleUser> {
  const problem = passwordProblem(password);
  if (problem) throw new DomainError(422, problem);
  if (!(await findInvitation(db, token, now))) throw new DomainError(404, 'Invitation not found');
  const passwordHash = await passwords.hash(password);
  return db.transaction().execute(async (trx) => {
    const inv = await trx.updateTable('console_invitations').set({ accepted_at: now })
      .where('token_hash', '=', hashToken(token))
      .where('accepted_at', 'is', null).where('revoked_at', 'is', null).where('expires_at', '>', now)
      .returning(['invitation_id', 'company_id', 'email', 'role'])
      .executeTakeFirst();
    if (!inv) throw new DomainError(404, 'Invitation not found');
    const user = await trx.insertInto('console_users')
      .values({ company_id: inv.company_id, email: inv.email, role: inv.role, password_hash: passwordHash, created_at: now, password_changed_at: now })
      .onConflict((oc) => oc.column('email').doNothing())
      .returning(['user_id', 'company_id', 'email', 'role'])
      .executeTakeFirst();
    if (!user) throw new DomainError(409, 'A console user with this email already exists');
    await recordAudit(trx, { actor: `console:${user.email}`, action: 'user.join', target: `user:${user.user_id}`, company_id: user.company_id, details: { invitation_id: inv.invitation_id, role: user.role } });
    return user;
  });
}

// ---------------------------------------------------------------------------------------------------
// Users

export interface ConsoleUser { user_id: number; company_id: number; email: string; role: Role }

/**
 * The user whose email and password match, or undefined. Takes about as long for an unknown email as
 * for a wrong password (a dummy hash is verified), so timing does not tell which emails exist.
 */
export async function authenticateUser(db: Db, passwords: PasswordHashing, email: string, password: string): Promise<ConsoleUser | undefined> {
  const normalised = normaliseEmail(email);
  const row = normalised && password.length <= PASSWORD_MAX * 4
    ? await db.selectFrom('console_users').select(['user_id', 'company_id', 'email', 'role', 'password_hash']).where('email', '=', normalised).executeTakeFirst()
    : undefined;
  if (!row) {
    await passwords.verifyDummy(password.slice(0, PASSWORD_MAX * 4));
    return undefined;
  }
  if (!(await passwords.verify(row.password_hash, password))) return undefined;
  return { user_id: row.user_id, company_id: row.company_id, email: row.email, role: row.role };
}

/**
 * Changes a user's password after checking the current one, and ends every other session of the user
 * (the one named by `keepSessionToken` stays). Errors (DomainError): 403 `The current password is
 * wrong`, 422 with the problem of the new password.
 */
export async function changePassword(db: Db, passwords: PasswordHashing, userId: number, current: string, next: string, keepSessionToken: string, now: Date): Promise<void> {
  const row = await db.selectFrom('console_users').select('password_hash').where('user_id', '=', userId).executeTakeFirst();
  if (!row || !(await passwords.verify(row.password_hash, current))) throw new DomainError(403, 'The current password is wrong');
  const problem = passwordProblem(next);
  if (problem) throw new DomainError(422, problem);
  const passwordHash = await passwords.hash(next);
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('console_users').set({ password_hash: passwordHash, password_changed_at: now }).where('user_id', '=', userId).execute();
    await trx.deleteFrom('console_sessions').where('user_id', '=', userId).where('session_hash', '!=', hashToken(keepSessionToken)).execute();
  });
}

/** A user as listed (console users page, operator API). */
export interface ListedUser { user_id: number; email: string; role: Role; created_at: Date }
/** A pending invitation as listed. */
export interface ListedInvitation { invitation_id: number; email: string; role: Role; invited_by: string; created_at: Date; expires_at: Date }

/** The users (by email) and pending invitations (oldest first) of a company. */
export async function listCompanyUsers(db: Db, companyId: number, now: Date): Promise<{ users: ListedUser[]; invitations: ListedInvitation[] }> {
  const users = await db.selectFrom('console_users').select(['user_id', 'email', 'role', 'created_at'])
    .where('company_id', '=', companyId).orderBy('email').execute();
  const invitations = await db.selectFrom('console_invitations').select(['invitation_id', 'email', 'role', 'invited_by', 'created_at', 'expires_at'])
    .where('company_id', '=', companyId).where('accepted_at', 'is', null).where('revoked_at', 'is', null)
    .where('expires_at', '>', now).orderBy('invitation_id').execute();
  return { users, invitations };
}

/**
 * One user, or undefined when unknown or (with `companyId`) of another company. `email` finds a user
 * by email instead of id (any company unless `companyId` is given).
 */
export async function findUser(db: Db, by: { userId: number; companyId?: number } | { email: string; companyId?: number }): Promise<(ListedUser & { company_id: number; password_changed_at: Date }) | undefined> {
  let q = db.selectFrom('console_users').select(['user_id', 'company_id', 'email', 'role', 'created_at', 'password_changed_at']);
  if ('userId' in by) {
    if (!isRowId(by.userId)) return undefined;
    q = q.where('user_id', '=', by.userId);
  } else {
    const email = normaliseEmail(by.email);
    if (!email) return undefined;
    q = q.where('email', '=', email);
  }
  if (by.companyId !== undefined) {
    if (!isRowId(by.companyId)) return undefined;
    q = q.where('company_id', '=', by.companyId);
  }
  return q.executeTakeFirst();
}

type Trx = Parameters<Parameters<ReturnType<Db['transaction']>['execute']>[0]>[0];

/**
 * Locks the user's company (row lock; user changes of one company run one at a time, so two owners
 * cannot demote each other at once) and reads the user again under it. 404 when gone.
 */
async function lockedUser(trx: Trx, userId: number, companyId: number | undefined): Promise<ConsoleUser> {
  const notFound = new DomainError(404, 'User not found');
  if (!isRowId(userId) || (companyId !== undefined && !isRowId(companyId))) throw notFound;
  let q = trx.selectFrom('console_users').select(['company_id']).where('user_id', '=', userId);
  if (companyId !== undefined) q = q.where('company_id', '=', companyId);
  const first = await q.executeTakeFirst();
  if (!first) throw notFound;
  await trx.selectFrom('companies').select('company_id').where('company_id', '=', first.company_id).forNoKeyUpdate().execute();
  const user = await trx.selectFrom('console_users').select(['user_id', 'company_id', 'email', 'role'])
    .where('user_id', '=', userId).where('company_id', '=', first.company_id).executeTakeFirst();
  if (!user) throw notFound;
  return user;
}

async function otherOwners(trx: Trx, user: ConsoleUser): Promise<number> {
  const row = await trx.selectFrom('console_users').select((eb) => eb.fn.countAll<string>().as('n'))
    .where('company_id', '=', user.company_id).where('role', '=', 'owner').where('user_id', '!=', user.user_id)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Gives a user another role; the change applies to the user's next request (sessions read the role).
 * Errors (DomainError): 404 `User not found`, 422 `Invalid role`, 409 when the user is the company's
 * last owner and `role` is not owner. Setting the role the user has changes nothing and is not
 * audited; otherwise audited as `user.role_change` with `{email, from, to}`.
 */
export async function changeRole(db: Db, userId: number, role: Role, opts: { companyId?: number } & Actor): Promise<ConsoleUser & { previous_role: Role }> {
  if (!isRole(role)) throw new DomainError(422, 'Invalid role');
  return db.transaction().execute(async (trx) => {
    const user = await lockedUser(trx, userId, opts.companyId);
    if (user.role === role) return { ...user, previous_role: user.role };
    if (user.role === 'owner' && (await otherOwners(trx, user)) === 0) {
      throw new DomainError(409, 'The last owner of a company cannot be given another role: make someone else an owner first');
    }
    await trx.updateTable('console_users').set({ role }).where('user_id', '=', user.user_id).execute();
    await recordAudit(trx, { actor: opts.actor, action: 'user.role_change', target: `user:${user.user_id}`, company_id: user.company_id, details: { email: user.email, from: user.role, to: role } });
    return { ...user, role, previous_role: user.role };
  });
}

/**
 * Removes a user: the row goes, and with it every session (they end at once) and reset link. Errors
 * (DomainError): 404 `User not found`, 409 when the user is the company's last owner. Audited as
 * `user.remove` with `{email, role}`.
 */
export async function removeUser(db: Db, userId: number, opts: { companyId?: number } & Actor): Promise<ConsoleUser> {
  return db.transaction().execute(async (trx) => {
    const user = await lockedUser(trx, userId, opts.companyId);
    if (user.role === 'owner' && (await otherOwners(trx, user)) === 0) {
      throw new DomainError(409, 'The last owner of a company cannot be removed: make someone else an owner first');
    }
    await trx.deleteFrom('console_users').where('user_id', '=', user.user_id).execute();
    await recordAudit(trx, { actor: opts.actor, action: 'user.remove', target: `user:${user.user_id}`, company_id: user.company_id, details: { email: user.email, role: user.role } });
    return user;
  });
}

// ---------------------------------------------------------------------------------------------------
// Password reset links

export interface CreatedPasswordReset {
  reset_id: number;
  user_id: number;
  company_id: number;
  email: string;
  expires_at: Date;
  /** The one-time token of the link; shown only in this answer. */
  token: string;
}

/**
 * Makes a one-time password reset link for a user, valid `PASSWORD_RESET_TTL_MS`; earlier unused links
 * of the user stop working. Nothing else changes until the link is used (the password and sessions
 * stay). Errors (DomainError): 404 `User not found`. Audited as `user.password_reset_link`.
 */
export async function createPasswordReset(db: Db, userId: number, opts: { companyId?: number } & Actor, now: Date): Promise<CreatedPasswordReset> {
  const user = await findUser(db, { userId, companyId: opts.companyId });
  if (!user) throw new DomainError(404, 'User not found');
  const token = newToken();
  const expiresAt = new Date(now.getTime() + PASSWORD_RESET_TTL_MS);
  return db.transaction().execute(async (trx) => {
    await trx.updateTable('console_password_resets').set({ revoked_at: now })
      .where('user_id', '=', user.user_id).where('used_at', 'is', null).where('revoked_at', 'is', null).execute();
    const row = await trx.insertInto('console_password_resets')
      .values({ user_id: user.user_id, token_hash: hashToken(token), created_by: opts.actor, created_at: now, expires_at: expiresAt })
      .returning(['reset_id'])
      .executeTakeFirstOrThrow();
    await recordAudit(trx, { actor: opts.actor, action: 'user.password_reset_link', target: `user:${user.user_id}`, company_id: user.company_id, details: { email: user.email, reset_id: row.reset_id, expires_at: expiresAt.toISOString() } });
    return { reset_id: row.reset_id, user_id: user.user_id, company_id: user.company_id, email: user.email, expires_at: expiresAt, token };
  });
}

/** The usable (not used, not superseded, not expired) reset link of a token with its user, or undefined. */
export async function findPasswordReset(db: Db, token: string, now: Date): Promise<{ reset_id: number; user_id: number; email: string; company_id: number; company_name: string; expires_at: Date } | undefined> {
  if (token.length < 20 || token.length > 100) return undefined;
  return db.selectFrom('console_password_resets as r')
    .innerJoin('console_users as u', 'u.user_id', 'r.user_id')
    .innerJoin('companies as c', 'c.company_id', 'u.company_id')
    .select(['r.reset_id', 'r.user_id', 'r.expires_at', 'u.email', 'u.company_id', 'c.name as company_name'])
    .where('r.token_hash', '=', hashToken(token))
    .where('r.used_at', 'is', null)
    .where('r.revoked_at', 'is', null)
    .where('r.expires_at', '>', now)
    .executeTakeFirst();
}

/**
 * Uses a reset link: sets the new password, marks the link used and ends every session of the user,
 * in one transaction (audited as `user.password_reset` by the user). Errors (DomainError): 422 with
 * the password problem (the link stays usable), 404 `Reset link not found` (unknown, used,
 * superseded or expired).
 */
export async function resetPassword(db: Db, passwords: PasswordHashing, token: string, password: string, now: Date): Promise<ConsoleUser> {
  const problem = passwordProblem(password);
  if (problem) throw new DomainError(422, problem);
  if (!(await findPasswordReset(db, token, now))) throw new DomainError(404, 'Reset link not found');
  const passwordHash = await passwords.hash(password);
  return db.transaction().execute(async (trx) => {
    const reset = await trx.updateTable('console_password_resets').set({ used_at: now })
      .where('token_hash', '=', hashToken(token))
      .where('used_at', 'is', null).where('revoked_at', 'is', null).where('expires_at', '>', now)
      .returning(['reset_id', 'user_id'])
      .executeTakeFirst();
    if (!reset) throw new DomainError(404, 'Reset link not found');
    const user = await trx.updateTable('console_users').set({ password_hash: passwordHash, password_changed_at: now })
      .where('user_id', '=', reset.user_id)
      .returning(['user_id', 'company_id', 'email', 'role'])
      .executeTakeFirst();
    if (!user) throw new DomainError(404, 'Reset link not found');
    await trx.deleteFrom('console_sessions').where('user_id', '=', user.user_id).execute();
    await recordAudit(trx, { actor: `console:${user.email}`, action: 'user.password_reset', target: `user:${user.user_id}`, company_id: user.company_id, details: { reset_id: reset.reset_id } });
    return user;
  });
}

// ---------------------------------------------------------------------------------------------------
// Sessions

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
    await trx.deleteFrom('console_sessions').where('user_id', '=', userId).where('expires_at', '<=', now).execute();
    await trx.insertInto('console_sessions')
      .values({ session_hash: hashToken(token), user_id: userId, created_at: now, last_seen_at: now, expires_at: expiresAt })
      .execute();
  });
  return token;
}

/**
 * Resolves a cookie value to its session, or undefined when unknown or expired. The role is read with
 * it on every request, so a role change or a removal applies at once. Extends the idle expiry (at
 * most once a minute), never beyond `SESSION_MAX_MS` after sign-in.
 */
export async function findSession(db: Db, token: string | undefined, now: Date): Promise<SessionInfo | undefined> {
  if (!token || token.length < 20 || token.length > 100) return undefined;
  const tokenHash = hashToken(token);
  const row = await db.selectFrom('console_sessions as s')
    .innerJoin('console_users as u', 'u.user_id', 's.user_id')
    .innerJoin('companies as c', 'c.company_id', 'u.company_id')
    .select(['s.created_at', 's.last_seen_at', 'u.user_id', 'u.email', 'u.role', 'u.company_id', 'c.name as company_name', sql<string | null>`c.channel->>'provider'`.as('channel_provider'), sql<string | null>`c.delivery_hours->>'timezone'`.as('time_zone')])
    .where('s.session_hash', '=', tokenHash)
    .where('s.expires_at', '>', now)
    .executeTakeFirst();
  if (!row) return undefined;
  if (now.getTime() - row.last_seen_at.getTime() >= SESSION_TOUCH_MS) {
    const expiresAt = new Date(Math.min(row.created_at.getTime() + SESSION_MAX_MS, now.getTime() + SESSION_IDLE_MS));
    await db.updateTable('console_sessions').set({ last_seen_at: now, expires_at: expiresAt })
      .where('session_hash', '=', tokenHash).execute();
  }
  return { token, user_id: row.user_id, email: row.email, role: row.role, company_id: row.company_id, company_name: row.company_name, channel_provider: row.channel_provider ?? 'outbox', time_zone: row.time_zone ?? 'UTC' };
}

/** Ends a session (sign-out). Unknown tokens are ignored. */
export async function deleteSession(db: Db, token: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('session_hash', '=', hashToken(token)).execute();
}

/**
 * Console user accounts: sign-in checks, password changes, the users of a company, role changes and
 * removals. A company always keeps at least one owner: the last one cannot be demoted or removed
 * (409). User changes of one company run one at a time (the company row is locked), so two owners
 * cannot demote each other at once. Commands record their audit entry in their transaction:
 * `user.password_change` (by the user), `user.role_change`, `user.remove`.
 *
 * Emails are compared lowercased and are unique across companies. A console actor acts on its own
 * company only; another company's user answers 404 exactly as an unknown one.
 */
import { audit, type Actor, type ConsoleActor } from '../actor.ts';
import { lockCompanyRow } from '../../db/companies.ts';
import { selectPendingInvitations } from '../../db/console-invitations.ts';
import { deleteSessionsOf } from '../../db/console-sessions.ts';
import {
  countOtherOwners, deleteUserRow, selectCompanyUser, selectCompanyUsers, selectPasswordHash, selectUser, selectUserCompany,
  selectUserCredentials, updateUserPassword, updateUserRole,
} from '../../db/console-users.ts';
import type { Db } from '../../db/database.ts';
import { DomainError, isRowId } from '../errors.ts';
import { hashToken, normaliseEmail, PASSWORD_MAX, passwordProblem, type PasswordHashing } from './credentials.ts';
import type { ConsoleUser } from './invitations.ts';
import { isRole, type Role } from './roles.ts';
import { companyScope } from './scope.ts';

/** A user as listed (console users page, operator API). */
export interface ListedUser { user_id: number; email: string; role: Role; created_at: Date }
/** A pending invitation as listed. */
export interface ListedInvitation { invitation_id: number; email: string; role: Role; invited_by: string; created_at: Date; expires_at: Date }

/**
 * The user whose email and password match, or undefined. Takes about as long for an unknown email as
 * for a wrong password (a dummy hash is verified), so timing does not tell which emails exist.
 */
export async function authenticateUser(db: Db, passwords: PasswordHashing, email: string, password: string): Promise<ConsoleUser | undefined> {
  const normalised = normaliseEmail(email);
  const row = normalised && password.length <= PASSWORD_MAX * 4 ? await selectUserCredentials(db, normalised) : undefined;
  if (!row) {
    await passwords.verifyDummy(password.slice(0, PASSWORD_MAX * 4));
    return undefined;
  }
  if (!(await passwords.verify(row.password_hash, password))) return undefined;
  return { user_id: row.user_id, company_id: row.company_id, email: row.email, role: row.role };
}

/**
 * Command (the signed-in user): changes the actor's password after checking the current one, and ends
 * every other session of the user (the one named by `keepSessionToken` stays). Errors (DomainError): 403
 * `The current password is wrong`, 422 with the problem of the new password. Audited as
 * `user.password_change` (target `user:<id>`).
 */
export async function changePassword(db: Db, passwords: PasswordHashing, actor: ConsoleActor, current: string, next: string, keepSessionToken: string, now: Date): Promise<void> {
  const userId = actor.userId;
  const stored = userId === undefined ? undefined : await selectPasswordHash(db, userId);
  if (userId === undefined || stored === undefined || !(await passwords.verify(stored, current))) throw new DomainError(403, 'The current password is wrong');
  const problem = passwordProblem(next);
  if (problem) throw new DomainError(422, problem);
  const passwordHash = await passwords.hash(next);
  await db.transaction().execute(async (trx) => {
    await updateUserPassword(trx, userId, passwordHash, now);
    await deleteSessionsOf(trx, userId, hashToken(keepSessionToken));
    await audit(trx, actor, { action: 'user.password_change', target: `user:${userId}`, companyId: actor.companyId });
  });
}

/** The users (by email) and pending invitations (oldest first) of a company. */
export async function listCompanyUsers(db: Db, companyId: number, now: Date): Promise<{ users: ListedUser[]; invitations: ListedInvitation[] }> {
  const users = await selectCompanyUsers(db, companyId);
  const invitations = await selectPendingInvitations(db, companyId, now);
  return { users, invitations };
}

/**
 * One user, or undefined when unknown or (with `companyId`) of another company. `email` finds a user
 * by email instead of id (any company unless `companyId` is given).
 */
export async function findUser(db: Db, by: { userId: number; companyId?: number } | { email: string; companyId?: number }): Promise<(ListedUser & { company_id: number; password_changed_at: Date }) | undefined> {
  if (by.companyId !== undefined && !isRowId(by.companyId)) return undefined;
  if ('userId' in by) return isRowId(by.userId) ? selectUser(db, by) : undefined;
  const email = normaliseEmail(by.email);
  return email ? selectUser(db, { email, companyId: by.companyId }) : undefined;
}

/** Locks the user's company and reads the user again under the lock (`trx`: a transaction). 404 when gone. */
async function lockedUser(trx: Db, userId: number, companyId: number | undefined): Promise<ConsoleUser> {
  const notFound = new DomainError(404, 'User not found');
  if (!isRowId(userId) || (companyId !== undefined && !isRowId(companyId))) throw notFound;
  const company = await selectUserCompany(trx, userId, companyId);
  if (company === undefined) throw notFound;
  await lockCompanyRow(trx, company);
  const user = await selectCompanyUser(trx, userId, company);
  if (!user) throw notFound;
  return user;
}

/**
 * Command: gives a user another role; the change applies to the user's next request (sessions read the
 * role). `companyId` limits an operator to one company. Errors (DomainError): 404 `User not found`, 422
 * `Invalid role`, 409 when the user is the company's last owner and `role` is not owner. Setting the
 * role the user has changes nothing and is not audited; otherwise audited as `user.role_change` with
 * `{email, from, to}`.
 */
export async function changeUserRole(db: Db, actor: Actor, userId: number, role: Role, opts: { companyId?: number } = {}): Promise<ConsoleUser & { previous_role: Role }> {
  if (!isRole(role)) throw new DomainError(422, 'Invalid role');
  return db.transaction().execute(async (trx) => {
    const user = await lockedUser(trx, userId, companyScope(actor, opts.companyId));
    if (user.role === role) return { ...user, previous_role: user.role };
    if (user.role === 'owner' && (await countOtherOwners(trx, user.company_id, user.user_id)) === 0) {
      throw new DomainError(409, 'The last owner of a company cannot be given another role: make someone else an owner first');
    }
    await updateUserRole(trx, user.user_id, role);
    await audit(trx, actor, { action: 'user.role_change', target: `user:${user.user_id}`, companyId: user.company_id, details: { email: user.email, from: user.role, to: role } });
    return { ...user, role, previous_role: user.role };
  });
}

/**
 * Command: removes a user: the row goes, and with it every session (they end at once) and reset link.
 * `companyId` limits an operator to one company. Errors (DomainError): 404 `User not found`, 409 when
 * the user is the company's last owner. Audited as `user.remove` with `{email, role}`.
 */
export async function removeConsoleUser(db: Db, actor: Actor, userId: number, opts: { companyId?: number } = {}): Promise<ConsoleUser> {
  return db.transaction().execute(async (trx) => {
    const user = await lockedUser(trx, userId, companyScope(actor, opts.companyId));
    if (user.role === 'owner' && (await countOtherOwners(trx, user.company_id, user.user_id)) === 0) {
      throw new DomainError(409, 'The last owner of a company cannot be removed: make someone else an owner first');
    }
    await deleteUserRow(trx, user.user_id);
    await audit(trx, actor, { action: 'user.remove', target: `user:${user.user_id}`, companyId: user.company_id, details: { email: user.email, role: user.role } });
    return user;
  });
}

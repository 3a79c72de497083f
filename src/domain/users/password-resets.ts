/**
 * Password reset links (`/console/password-reset/<token>`), made by an owner or the operator: one-time,
 * stored as the SHA-256 of the token like invitations, valid `PASSWORD_RESET_TTL_MS`; a newer link for
 * the same user supersedes older ones. Using it sets the password, ends every session of the user and
 * forgets the user's failed sign-ins. Audited as `user.password_reset_link` (by the actor) and
 * `user.password_reset` (by the user). Times are the caller's clock (`now`).
 */
import { audit, actorName, consoleActor, type Actor } from '../actor.ts';
import { insertReset, revokeOpenResetsOf, selectUsableResetByHash, useResetByHash, type UsableResetRow } from '../../db/console-password-resets.ts';
import { deleteSessionsOf } from '../../db/console-sessions.ts';
import { updateUserPassword } from '../../db/console-users.ts';
import type { Db } from '../../db/database.ts';
import { DomainError } from '../errors.ts';
import { findUser } from './accounts.ts';
import { hashToken, newToken, passwordProblem, plausibleToken, type PasswordHashing } from './credentials.ts';
import type { ConsoleUser } from './invitations.ts';
import { clearLoginFailures } from './login-throttle.ts';
import { companyScope } from './scope.ts';

/** How long a password reset link stays valid: 1 hour. */
export const PASSWORD_RESET_TTL_MS = 3600_000;

/** A new reset link: its id, its user, when it ends, and its token. */
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
 * Command: makes a one-time password reset link for a user, valid `PASSWORD_RESET_TTL_MS`; earlier
 * unused links of the user stop working. Nothing else changes until the link is used (the password and
 * sessions stay). `companyId` limits an operator to one company. Errors (DomainError): 404 `User not
 * found`. Audited as `user.password_reset_link` (`{email, reset_id, expires_at}`).
 */
export async function createPasswordResetLink(db: Db, actor: Actor, userId: number, now: Date, opts: { companyId?: number } = {}): Promise<CreatedPasswordReset> {
  const user = await findUser(db, { userId, companyId: companyScope(actor, opts.companyId) });
  if (!user) throw new DomainError(404, 'User not found');
  const token = newToken();
  const expiresAt = new Date(now.getTime() + PASSWORD_RESET_TTL_MS);
  return db.transaction().execute(async (trx) => {
    await revokeOpenResetsOf(trx, user.user_id, now);
    const resetId = await insertReset(trx, { user_id: user.user_id, token_hash: hashToken(token), created_by: actorName(actor), created_at: now, expires_at: expiresAt });
    await audit(trx, actor, { action: 'user.password_reset_link', target: `user:${user.user_id}`, companyId: user.company_id, details: { email: user.email, reset_id: resetId, expires_at: expiresAt.toISOString() } });
    return { reset_id: resetId, user_id: user.user_id, company_id: user.company_id, email: user.email, expires_at: expiresAt, token };
  });
}

/** The usable (not used, not superseded, not expired) reset link of a token with its user, or undefined. */
export async function findPasswordReset(db: Db, token: string, now: Date): Promise<UsableResetRow | undefined> {
  if (!plausibleToken(token)) return undefined;
  return selectUsableResetByHash(db, hashToken(token), now);
}

/**
 * Command (the user, by the link): sets the new password, marks the link used and ends every session
 * of the user, in one transaction (audited as `user.password_reset` by the user, `{reset_id}`); then
 * forgets the user's failed sign-ins. Errors (DomainError): 422 with the password problem (the link
 * stays usable), 404 `Reset link not found` (unknown, used, superseded or expired).
 */
export async function resetPassword(db: Db, passwords: PasswordHashing, token: string, password: string, now: Date): Promise<ConsoleUser> {
  const problem = passwordProblem(password);
  if (problem) throw new DomainError(422, problem);
  if (!(await findPasswordReset(db, token, now))) throw new DomainError(404, 'Reset link not found');
  const passwordHash = await passwords.hash(password);
  const user = await db.transaction().execute(async (trx) => {
    const reset = await useResetByHash(trx, hashToken(token), now);
    if (!reset) throw new DomainError(404, 'Reset link not found');
    const changed = await updateUserPassword(trx, reset.user_id, passwordHash, now);
    if (!changed) throw new DomainError(404, 'Reset link not found');
    await deleteSessionsOf(trx, changed.user_id);
    await audit(trx, consoleActor(changed), { action: 'user.password_reset', target: `user:${changed.user_id}`, companyId: changed.company_id, details: { reset_id: reset.reset_id } });
    return changed;
  });
  await clearLoginFailures(db, user.email);
  return user;
}

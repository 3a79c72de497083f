/**
 * Company users of the console: people who belong to one company and sign in with an email and a
 * password. The rules live in src/domain/users/, one file per concern:
 *
 * - roles.ts: `owner`, `developer`, `marketer` (what each may do: src/console/permissions.ts);
 * - credentials.ts: emails, password rules, one-time tokens, argon2id hashing (`PasswordHashing`);
 * - invitations.ts: `inviteUser`, `revokeUserInvitation`, `acceptInvitation` (join);
 * - accounts.ts: sign-in checks, `changePassword`, `changeUserRole`, `removeConsoleUser`, listings;
 * - password-resets.ts: `createPasswordResetLink`, `resetPassword`;
 * - sessions.ts: sessions, `signIn`, `signOut`; login-throttle.ts: failed sign-in limits.
 *
 * Each command takes an `Actor` (src/domain/actor.ts) and records its own audit entry. This module
 * re-exports them all, and keeps the earlier signatures that named the actor by its audit text
 * (`{actor: 'admin'}`), which test/console/users.test.ts calls; new callers use the commands.
 */
import { consoleActor, OPERATOR, type Actor } from './actor.ts';
import type { Db } from '../db/database.ts';
import { changeUserRole, removeConsoleUser } from './users/accounts.ts';
import { inviteUser, revokeUserInvitation, type CreatedInvitation, type ConsoleUser, type Invitation } from './users/invitations.ts';
import { createPasswordResetLink, type CreatedPasswordReset } from './users/password-resets.ts';
import type { Role } from './users/roles.ts';

export * from './users/roles.ts';
export * from './users/credentials.ts';
export * from './users/invitations.ts';
export * from './users/accounts.ts';
export * from './users/password-resets.ts';
export * from './users/sessions.ts';

/** The earlier way to name who asks for a change: the audit actor text (`admin` or `console:<email>`). */
export interface ActorText { actor: string }

/** The `Actor` of an audit text: `admin` is the operator; `console:<email>` a console user of `companyId` (required then). */
function actorOfText(text: string, companyId: number | undefined): Actor {
  if (text === 'admin') return OPERATOR;
  if (text.startsWith('console:') && companyId !== undefined) return consoleActor({ email: text.slice('console:'.length), company_id: companyId });
  throw new TypeError(`not an operator or console actor of a known company: ${text}`);
}

/** {@link inviteUser} with the actor as audit text. */
export async function createInvitation(db: Db, companyId: number, input: { email: string; role: Role } & ActorText, now: Date): Promise<CreatedInvitation> {
  return inviteUser(db, actorOfText(input.actor, companyId), companyId, { email: input.email, role: input.role }, now);
}

/** {@link revokeUserInvitation} with the actor as audit text. */
export async function revokeInvitation(db: Db, invitationId: number, opts: { companyId?: number } & ActorText, now: Date): Promise<Invitation> {
  return revokeUserInvitation(db, actorOfText(opts.actor, opts.companyId), invitationId, now, { companyId: opts.companyId });
}

/** {@link changeUserRole} with the actor as audit text. */
export async function changeRole(db: Db, userId: number, role: Role, opts: { companyId?: number } & ActorText): Promise<ConsoleUser & { previous_role: Role }> {
  return changeUserRole(db, actorOfText(opts.actor, opts.companyId), userId, role, { companyId: opts.companyId });
}

/** {@link removeConsoleUser} with the actor as audit text. */
export async function removeUser(db: Db, userId: number, opts: { companyId?: number } & ActorText): Promise<ConsoleUser> {
  return removeConsoleUser(db, actorOfText(opts.actor, opts.companyId), userId, { companyId: opts.companyId });
}

/** {@link createPasswordResetLink} with the actor as audit text. */
export async function createPasswordReset(db: Db, userId: number, opts: { companyId?: number } & ActorText, now: Date): Promise<CreatedPasswordReset> {
  return createPasswordResetLink(db, actorOfText(opts.actor, opts.companyId), userId, now, { companyId: opts.companyId });
}

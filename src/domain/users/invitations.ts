/**
 * Invitations to the console: an owner or the operator invites a person with a one-time link
 * (`/console/invite/<token>`), valid `INVITATION_TTL_MS`, naming the role the person gets. Only the
 * SHA-256 of the token is stored, and a newer invitation of the company for the same email supersedes
 * older ones. Accepting it sets the password and creates the user. Each command records its audit
 * entry in its transaction: `user.invite`, `user.invitation_revoke` (by the actor), `user.join` (by the
 * new user). Times are the caller's clock (`now`).
 */
import { audit, actorName, consoleActor, type Actor } from '../actor.ts';
import { companyExists } from '../../db/companies.ts';
import { acceptPendingInvitationByHash, insertInvitation, revokeOpenInvitationsOf, revokePendingInvitation, selectPendingInvitationByHash } from '../../db/console-invitations.ts';
import { insertUserIfNew, userEmailExists } from '../../db/console-users.ts';
import type { Db } from '../../db/database.ts';
import { DomainError, isRowId } from '../errors.ts';
import { hashToken, newToken, normaliseEmail, passwordProblem, plausibleToken, type PasswordHashing } from './credentials.ts';
import { isRole, type Role } from './roles.ts';
import { companyScope } from './scope.ts';

/** How long an invitation link stays valid: 7 days. */
export const INVITATION_TTL_MS = 7 * 24 * 3600_000;

/** An invitation as the commands answer it (`expires_at`: the service's clock plus `INVITATION_TTL_MS`). */
export interface Invitation {
  invitation_id: number;
  company_id: number;
  email: string;
  role: Role;
  expires_at: Date;
}

/** A new invitation with the token of its link. */
export interface CreatedInvitation extends Invitation {
  /** The one-time token of the link; shown only in this answer. */
  token: string;
}

/** A console user as the commands answer it. */
export interface ConsoleUser { user_id: number; company_id: number; email: string; role: Role }

/**
 * Command: invites `email` to company `companyId` with `role` (a console actor: its own company only).
 * Errors (DomainError): 404 `Company not found`, 422 `Invalid email address` / `Invalid role`, 409 when a
 * user with that email already exists (in any company). Earlier pending invitations of the company for
 * the same email are revoked. Audited as `user.invite` (target `invitation:<id>`, `{email, role}`).
 */
export async function inviteUser(db: Db, actor: Actor, companyId: number, input: { email: string; role: Role }, now: Date): Promise<CreatedInvitation> {
  const scope = companyScope(actor, companyId);
  if (!isRowId(companyId) || scope !== companyId) throw new DomainError(404, 'Company not found');
  const normalised = normaliseEmail(input.email);
  if (!normalised) throw new DomainError(422, 'Invalid email address');
  if (!isRole(input.role)) throw new DomainError(422, 'Invalid role');
  const token = newToken();
  const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS);
  return db.transaction().execute(async (trx) => {
    if (!(await companyExists(trx, companyId))) throw new DomainError(404, 'Company not found');
    if (await userEmailExists(trx, normalised)) throw new DomainError(409, 'A console user with this email already exists');
    await revokeOpenInvitationsOf(trx, companyId, normalised, now);
    const row = await insertInvitation(trx, { company_id: companyId, email: normalised, role: input.role, invited_by: actorName(actor), token_hash: hashToken(token), created_at: now, expires_at: expiresAt });
    await audit(trx, actor, { action: 'user.invite', target: `invitation:${row.invitation_id}`, companyId, details: { email: row.email, role: row.role } });
    return { ...row, token };
  });
}

/**
 * Command: revokes a pending invitation (its link stops working). `companyId` limits an operator to one
 * company; a console actor is limited to its own. Errors: 404 `Invitation not found` (unknown, used,
 * revoked, expired, or of another company). Audited as `user.invitation_revoke` (`{email, role}`).
 */
export async function revokeUserInvitation(db: Db, actor: Actor, invitationId: number, now: Date, opts: { companyId?: number } = {}): Promise<Invitation> {
  const scope = companyScope(actor, opts.companyId);
  if (!isRowId(invitationId) || (scope !== undefined && !isRowId(scope))) throw new DomainError(404, 'Invitation not found');
  return db.transaction().execute(async (trx) => {
    const row = await revokePendingInvitation(trx, invitationId, scope, now);
    if (!row) throw new DomainError(404, 'Invitation not found');
    await audit(trx, actor, { action: 'user.invitation_revoke', target: `invitation:${row.invitation_id}`, companyId: row.company_id, details: { email: row.email, role: row.role } });
    return row;
  });
}

/** The pending (not used, not superseded, not expired) invitation of a token with its company's name, or undefined. */
export async function findInvitation(db: Db, token: string, now: Date): Promise<(Invitation & { company_name: string }) | undefined> {
  if (!plausibleToken(token)) return undefined;
  return selectPendingInvitationByHash(db, hashToken(token), now);
}

/**
 * Command (the invited person, by the link): creates the user with the invitation's role and the
 * password and marks the link used, in one transaction, audited as `user.join` by the new user
 * (`console:<email>`, `{invitation_id, role}`). Errors (DomainError): 404 `Invitation not found`
 * (unknown, used, superseded or expired), 422 with the password problem, 409 when a user with the email
 * exists already (e.g. two links accepted).
 */
export async function acceptInvitation(db: Db, passwords: PasswordHashing, token: string, password: string, now: Date): Promise<ConsoleUser> {
  const problem = passwordProblem(password);
  if (problem) throw new DomainError(422, problem);
  if (!(await findInvitation(db, token, now))) throw new DomainError(404, 'Invitation not found');
  const passwordHash = await passwords.hash(password);
  return db.transaction().execute(async (trx) => {
    const inv = await acceptPendingInvitationByHash(trx, hashToken(token), now);
    if (!inv) throw new DomainError(404, 'Invitation not found');
    const user = await insertUserIfNew(trx, { company_id: inv.company_id, email: inv.email, role: inv.role, password_hash: passwordHash, at: now });
    if (!user) throw new DomainError(409, 'A console user with this email already exists');
    await audit(trx, consoleActor(user), { action: 'user.join', target: `user:${user.user_id}`, companyId: user.company_id, details: { invitation_id: inv.invitation_id, role: user.role } });
    return user;
  });
}

/**
 * The statements on `console_invitations` (src/domain/users/invitations.ts decides): one statement per
 * function. A pending invitation is one not accepted, not revoked and not expired at `now`.
 */
import type { Db } from './database.ts';
import type { ConsoleRole } from './schema.ts';

/** An invitation as commands answer it. */
export interface InvitationRow { invitation_id: number; company_id: number; email: string; role: ConsoleRole; expires_at: Date }
/** A pending invitation as lists show it. */
export interface ListedInvitationRow { invitation_id: number; email: string; role: ConsoleRole; invited_by: string; created_at: Date; expires_at: Date }

/** Sets `revoked_at` of company `companyId`'s open (not accepted, not revoked) invitations of `email`. */
export async function revokeOpenInvitationsOf(db: Db, companyId: number, email: string, at: Date): Promise<void> {
  await db.updateTable('console_invitations').set({ revoked_at: at })
    .where('company_id', '=', companyId).where('email', '=', email)
    .where('accepted_at', 'is', null).where('revoked_at', 'is', null).execute();
}

/** Inserts an invitation (only its token's SHA-256); the new row. */
export async function insertInvitation(db: Db, values: { company_id: number; email: string; role: ConsoleRole; invited_by: string; token_hash: Buffer; created_at: Date; expires_at: Date }): Promise<InvitationRow> {
  return db.insertInto('console_invitations').values(values)
    .returning(['invitation_id', 'company_id', 'email', 'role', 'expires_at'])
    .executeTakeFirstOrThrow();
}

/** Sets `revoked_at` of invitation `invitationId` (of company `companyId` when given) if pending at `now`; the row, or undefined. */
export async function revokePendingInvitation(db: Db, invitationId: number, companyId: number | undefined, now: Date): Promise<InvitationRow | undefined> {
  let q = db.updateTable('console_invitations').set({ revoked_at: now })
    .where('invitation_id', '=', invitationId)
    .where('accepted_at', 'is', null).where('revoked_at', 'is', null).where('expires_at', '>', now);
  if (companyId !== undefined) q = q.where('company_id', '=', companyId);
  return q.returning(['invitation_id', 'company_id', 'email', 'role', 'expires_at']).executeTakeFirst();
}

/** The invitation pending at `now` whose token hashes to `tokenHash`, with its company's name; undefined if none. */
export async function selectPendingInvitationByHash(db: Db, tokenHash: Buffer, now: Date): Promise<(InvitationRow & { company_name: string }) | undefined> {
  return db.selectFrom('console_invitations as i')
    .innerJoin('companies as c', 'c.company_id', 'i.company_id')
    .select(['i.invitation_id', 'i.company_id', 'i.email', 'i.role', 'i.expires_at', 'c.name as company_name'])
    .where('i.token_hash', '=', tokenHash)
    .where('i.accepted_at', 'is', null)
    .where('i.revoked_at', 'is', null)
    .where('i.expires_at', '>', now)
    .executeTakeFirst();
}

/** Sets `accepted_at` of the invitation pending at `now` whose token hashes to `tokenHash`; the row, or undefined. */
export async function acceptPendingInvitationByHash(db: Db, tokenHash: Buffer, now: Date): Promise<Omit<InvitationRow, 'expires_at'> | undefined> {
  return db.updateTable('console_invitations').set({ accepted_at: now })
    .where('token_hash', '=', tokenHash)
    .where('accepted_at', 'is', null).where('revoked_at', 'is', null).where('expires_at', '>', now)
    .returning(['invitation_id', 'company_id', 'email', 'role'])
    .executeTakeFirst();
}

/** The invitations of a company pending at `now`, oldest first. */
export async function selectPendingInvitations(db: Db, companyId: number, now: Date): Promise<ListedInvitationRow[]> {
  return db.selectFrom('console_invitations').select(['invitation_id', 'email', 'role', 'invited_by', 'created_at', 'expires_at'])
    .where('company_id', '=', companyId).where('accepted_at', 'is', null).where('revoked_at', 'is', null)
    .where('expires_at', '>', now).orderBy('invitation_id').execute();
}

/**
 * Operator API: console users, their roles, invitations and password reset links. The rules are the console's (src/domain/users.ts): emails are unique across
 * companies; a company keeps at least one owner (409 on demoting or removing the last); links are
 * one-time and shown only in the answer that makes them (only their SHA-256 is stored); every change
 * is audit-logged with actor `admin`. Links are built from the request's scheme and host. With SMTP_URL set,
 * the link is also emailed to the person (`email_sent`; docs/console.md#email).
 *
 * | route | answers |
 * |---|---|
 * | POST /admin/companies/{company_id}/users/invitations `{email, role?}` | 201 `CreatedInvitation`; 401; 404 company; 409 email has an account; 422 |
 * | GET /admin/companies/{company_id}/users | 200 `{users: ConsoleUser[], invitations: PendingInvitation[]}`; 401; 404 company; 422 |
 * | GET /admin/users?email= | 200 `{users: ConsoleUser[]}` (none or one); 401; 422 |
 * | PATCH /admin/users/{user_id} `{role}` | 200 `ConsoleUser`; 401; 404 user; 409 last owner; 422 |
 * | DELETE /admin/users/{user_id} | 204 (sessions end at once); 401; 404 user; 409 last owner; 422 |
 * | POST /admin/users/{user_id}/password-resets | 201 `PasswordResetLink` (valid 1 hour); 401; 404 user; 422 |
 * | DELETE /admin/invitations/{invitation_id} | 204; 401; 404 invitation; 422 |
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { OPERATOR } from '../../domain/actor.ts';
import { getCompany } from '../../domain/companies.ts';
import { notFound } from '../../domain/errors.ts';
import {
  changeUserRole, createPasswordResetLink, EMAIL_MAX, findUser, inviteUser, listCompanyUsers, normaliseEmail, removeConsoleUser, revokeUserInvitation,
  ROLES, type Role,
} from '../../domain/users.ts';
import { emailInvitation, emailPasswordReset } from '../../domain/user-emails.ts';
import type { AppDeps } from '../deps.ts';
import {
  addComponents, adminErrors, component, conflict, exampleOf, idParams, invalid, invalidInput, iso, noContent, notFound as notFoundAnswer, ok, ref, TIME_EXAMPLE,
} from './components.ts';

const role = Type.Unsafe<Role>({
  type: 'string', enum: [...ROLES],
  description: '`owner` (everything, including users), `developer` (credentials and webhooks; the rest read-only), `marketer` (automations, campaigns, segments, contacts, sends; no credentials or webhooks)',
});
const email = Type.String({ minLength: 3, maxLength: EMAIL_MAX, description: 'the sign-in name; stored trimmed and lowercased' });
const time = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });

/** A console user. */
export const ConsoleUser = component('ConsoleUser', Type.Object({
  user_id: Type.Integer(),
  company_id: Type.Integer(),
  email: Type.String(),
  role,
  created_at: time('when the user accepted the invitation'),
}), { user_id: 31, company_id: 12, email: 'ada@shop.example', role: 'marketer', created_at: TIME_EXAMPLE });

/** A pending invitation (not used, revoked, superseded or expired). */
export const PendingInvitation = component('PendingInvitation', Type.Object({
  invitation_id: Type.Integer(),
  email: Type.String(),
  role,
  invited_by: Type.String({ description: 'who made it: `admin` (the operator) or `console:<email>` (an owner)' }),
  created_at: time(),
  expires_at: time(),
}), { invitation_id: 5, email: 'grace@shop.example', role: 'developer', invited_by: 'console:ada@shop.example', created_at: TIME_EXAMPLE, expires_at: '2026-03-09T09:30:00.000Z' });

/** The answer of an invitation: the one-time link, shown this once. */
export const CreatedInvitation = component('CreatedInvitation', Type.Object({
  invitation_id: Type.Integer(),
  email: Type.String(),
  role,
  company_id: Type.Integer(),
  invite_url: Type.String({ description: 'the one-time link (`/console/invite/<token>`) to hand to the person: shown only in this answer, valid 7 days' }),
  expires_at: time(),
  email_sent: Type.Boolean({ description: 'true when the link was also emailed to the person (SMTP_URL set and the mail server took it); false otherwise: hand the link over yourself' }),
}), { invitation_id: 5, email: 'grace@shop.example', role: 'developer', company_id: 12, invite_url: 'https://cms.example.com/console/invite/Q2hhbmdlIG1lOiB0aGlzIGlzIGFuIGV4YW1wbGUgdG9r', expires_at: '2026-03-09T09:30:00.000Z', email_sent: true });

/** The answer of a password reset link: the one-time link, shown this once. */
export const PasswordResetLink = component('PasswordResetLink', Type.Object({
  user_id: Type.Integer(),
  company_id: Type.Integer(),
  email: Type.String(),
  reset_url: Type.String({ description: 'the one-time link (`/console/password-reset/<token>`) to hand to the person: shown only in this answer, valid 1 hour; using it sets a new password and ends every session of the user. A newer link replaces it' }),
  expires_at: time(),
  email_sent: Type.Boolean({ description: 'true when the link was also emailed to the user (SMTP_URL set and the mail server took it); false otherwise: hand the link over yourself' }),
}), { user_id: 31, company_id: 12, email: 'ada@shop.example', reset_url: 'https://cms.example.com/console/password-reset/UmVzZXQgbGluayBleGFtcGxlIHRva2VuIG9ubHkgaGVyZQ', expires_at: '2026-03-02T10:30:00.000Z', email_sent: true });

const companyParams = idParams('company_id', 'the company', 12);
const userParams = idParams('user_id', 'the console user', 31);
const LAST_OWNER_DEMOTE = 'The last owner of a company cannot be given another role: make someone else an owner first';
const LAST_OWNER_REMOVE = 'The last owner of a company cannot be removed: make someone else an owner first';
const USER_EXISTS = 'A console user with this email already exists';

const consoleBase = (request: FastifyRequest) => `${request.protocol}://${request.host}/console`;
const userAnswer = (u: { user_id: number; company_id: number; email: string; role: Role; created_at: Date }) =>
  ({ user_id: u.user_id, company_id: u.company_id, email: u.email, role: u.role, created_at: iso(u.created_at) });

/** Registers the routes of the module comment. */
export function registerUserRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const tags = ['operator: console users'];
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const now = () => new Date(deps.clock.now());
  const sender = { mailer: deps.mailer, logger: deps.logger };
  addComponents(app, [ConsoleUser, PendingInvitation, CreatedInvitation, PasswordResetLink]);

  r.post('/admin/companies/:company_id/users/invitations', {
    schema: {
      tags, operationId: 'invite_console_user',
      summary: 'Invite a person to the company console with a role (one-time link, shown only in this answer)',
      description: 'A newer invitation for the same email replaces the older link. `role` defaults to `owner`.',
      params: companyParams,
      body: Type.Object({
        email,
        role: Type.Optional(role),
      }, { examples: [{ email: 'grace@shop.example', role: 'developer' }] }),
      response: {
        201: ok('The invitation and its one-time link', ref(CreatedInvitation), exampleOf(CreatedInvitation)),
        ...adminErrors,
        404: notFoundAnswer('Company not found'),
        409: conflict('The email has a console account already (in this or another company)', USER_EXISTS),
        422: invalid({ type: 'value_error', loc: ['body', 'email'], msg: 'value is not a valid email address', input: 'grace at shop' }),
      },
    },
  }, async (request, reply) => {
    const { email: address, role: chosen = 'owner' } = request.body;
    if (!normaliseEmail(address)) throw invalidInput(['body', 'email'], 'value is not a valid email address', 'value_error', address);
    const inv = await inviteUser(db, OPERATOR, request.params.company_id, { email: address, role: chosen }, now());
    request.log.info({ audit: true, action: 'user.invite', invitation_id: inv.invitation_id }, 'console invitation created');
    const inviteUrl = `${consoleBase(request)}/invite/${inv.token}`;
    const emailSent = await emailInvitation(db, sender, inv, inviteUrl);
    return reply.code(201).send({
      invitation_id: inv.invitation_id, email: inv.email, role: inv.role, company_id: inv.company_id,
      invite_url: inviteUrl, expires_at: iso(inv.expires_at), email_sent: emailSent,
    });
  });

  r.get('/admin/companies/:company_id/users', {
    schema: {
      tags, operationId: 'list_console_users', summary: 'List the console users (by email) and pending invitations (oldest first) of a company',
      params: companyParams,
      response: {
        200: ok('Users and pending invitations', Type.Object({ users: Type.Array(ref(ConsoleUser)), invitations: Type.Array(ref(PendingInvitation)) }),
          { users: [exampleOf(ConsoleUser)], invitations: [exampleOf(PendingInvitation)] }),
        ...adminErrors,
        404: notFoundAnswer('Company not found'),
        422: invalid({ type: 'type', loc: ['path', 'company_id'], msg: 'must be integer' }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id); // 404 for an unknown company
    const { users, invitations } = await listCompanyUsers(db, company.company_id, now());
    return {
      users: users.map((u) => userAnswer({ ...u, company_id: company.company_id })),
      invitations: invitations.map((i) => ({ ...i, created_at: iso(i.created_at), expires_at: iso(i.expires_at) })),
    };
  });

  r.get('/admin/users', {
    schema: {
      tags, operationId: 'find_console_users', summary: 'Find the console user with an email (in any company)',
      querystring: Type.Object({ email: Type.String({ minLength: 1, maxLength: EMAIL_MAX * 2, description: 'the email to look for (case and surrounding spaces ignored)', examples: ['ada@shop.example'] }) }),
      response: {
        200: ok('The user with that email: a list of none or one', Type.Object({ users: Type.Array(ref(ConsoleUser), { maxItems: 1 }) }), { users: [exampleOf(ConsoleUser)] }),
        ...adminErrors,
        422: invalid({ type: 'missing', loc: ['query', 'email'], msg: 'Field required' }),
      },
    },
  }, async (request) => {
    const user = await findUser(db, { email: request.query.email });
    return { users: user ? [userAnswer(user)] : [] };
  });

  r.patch('/admin/users/:user_id', {
    schema: {
      tags, operationId: 'change_console_user_role', summary: 'Give a console user another role (applies to their next request)',
      params: userParams,
      body: Type.Object({ role }, { examples: [{ role: 'developer' }] }),
      response: {
        200: ok('The user with the new role (unchanged when it had that role already)', ref(ConsoleUser), exampleOf(ConsoleUser)),
        ...adminErrors,
        404: notFoundAnswer('User not found'),
        409: conflict('The user is the last owner of its company and `role` is not owner', LAST_OWNER_DEMOTE),
        422: invalid({ type: 'enum', loc: ['body', 'role'], msg: 'must be equal to one of the allowed values' }),
      },
    },
  }, async (request) => {
    const changed = await changeUserRole(db, OPERATOR, request.params.user_id, request.body.role);
    const user = await findUser(db, { userId: changed.user_id });
    if (!user) throw notFound('User not found');
    return userAnswer(user);
  });

  r.delete('/admin/users/:user_id', {
    schema: {
      tags, operationId: 'remove_console_user', summary: 'Remove a console user (their sessions end at once)',
      params: userParams,
      response: {
        204: noContent('Removed'),
        ...adminErrors,
        404: notFoundAnswer('User not found'),
        409: conflict('The user is the last owner of its company', LAST_OWNER_REMOVE),
        422: invalid({ type: 'type', loc: ['path', 'user_id'], msg: 'must be integer' }),
      },
    },
  }, async (request, reply) => {
    await removeConsoleUser(db, OPERATOR, request.params.user_id);
    return reply.code(204).send();
  });

  r.post('/admin/users/:user_id/password-resets', {
    schema: {
      tags, operationId: 'create_password_reset_link', summary: 'Make a one-time password reset link for a console user (shown only in this answer)',
      description: 'Nothing changes until the link is used: the password and the sessions stay. A newer link replaces older ones.',
      params: userParams,
      response: {
        201: ok('The one-time link', ref(PasswordResetLink), exampleOf(PasswordResetLink)),
        ...adminErrors,
        404: notFoundAnswer('User not found'),
        422: invalid({ type: 'type', loc: ['path', 'user_id'], msg: 'must be integer' }),
      },
    },
  }, async (request, reply) => {
    const reset = await createPasswordResetLink(db, OPERATOR, request.params.user_id, now());
    request.log.info({ audit: true, action: 'user.password_reset_link', user_id: reset.user_id }, 'password reset link created');
    const resetUrl = `${consoleBase(request)}/password-reset/${reset.token}`;
    const emailSent = await emailPasswordReset(db, sender, reset, resetUrl);
    return reply.code(201).send({
      user_id: reset.user_id, company_id: reset.company_id, email: reset.email,
      reset_url: resetUrl, expires_at: iso(reset.expires_at), email_sent: emailSent,
    });
  });

  r.delete('/admin/invitations/:invitation_id', {
    schema: {
      tags, operationId: 'revoke_console_invitation', summary: 'Revoke a pending invitation (its link stops working)',
      params: idParams('invitation_id', 'the invitation', 5),
      response: {
        204: noContent('Revoked'),
        ...adminErrors,
        404: notFoundAnswer('Invitation not found', 'Unknown, used, revoked, superseded or expired: `Invitation not found`'),
        422: invalid({ type: 'type', loc: ['path', 'invitation_id'], msg: 'must be integer' }),
      },
    },
  }, async (request, reply) => {
    await revokeUserInvitation(db, OPERATOR, request.params.invitation_id, now());
    return reply.code(204).send();
  });
}

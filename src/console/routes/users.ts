/**
 * Settings › Users, for owners only (permissions.ts; others get the 403 page):
 *
 * - `GET /console/settings/users`: users with their roles, pending invitations, the invite form.
 * - `POST /console/settings/users/invitations` `{email, role}`: invites; 303 back to the list, which
 *   shows the one-time link once (link-flash.ts). Errors beside the fields, input kept: 422 not an
 *   email or no role, 409 the email has a console account already.
 * - `POST /console/settings/users/invitations/:invitationId/revoke`: the link stops working; 303.
 * - `GET /console/settings/users/:userId`: the user's role, reset link, removal, history.
 * - `POST /console/settings/users/:userId/role` `{role}`: 303 back (or to the overview when owners
 *   demote themselves); 409 beside the field for the company's last owner.
 * - `POST /console/settings/users/:userId/reset-link`: a one-time password reset link, shown once.
 * - `GET|POST /console/settings/users/:userId/remove`: confirmation, then removal (the user's sessions
 *   end at once); 409 for the last owner. Removing yourself signs you out.
 *
 * With SMTP_URL set, invitation and reset links are also emailed (docs/console.md#email) and the page says
 * whether the email went out; the link is shown as before either way.
 *
 * Every change is a domain command (src/domain/users/*.ts) audited with actor `console:<email>`. Another
 * company's user or invitation ids answer 404 like unknown ones.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { emailInvitation, emailPasswordReset } from '../../domain/user-emails.ts';
import { DomainError, notFound } from '../../domain/errors.ts';
import {
  changeUserRole, createPasswordResetLink, findUser, inviteUser, isRole, listCompanyUsers, normaliseEmail, removeConsoleUser, revokeUserInvitation,
} from '../../domain/users.ts';
import type { AppDeps } from '../../http/deps.ts';
import { field, nowOf, parseId, sendPage, sessionOf, SESSION_COOKIE, SESSION_COOKIE_OPTIONS } from '../context.ts';
import { setLinkFlash, takeLinkFlash } from '../link-flash.ts';
import { userHistory } from '../queries/users.ts';
import { BASE } from '../views/layout.ts';
import {
  removeUserView, userView, usersView, USERS_CRUMBS, USERS_PATH, type InviteErrors, type InviteForm,
} from '../views/users.ts';

/** Fixed notices other requests ask the pages to show (`?done=`). */
const NOTICES: Record<string, string> = {
  removed: 'The user was removed and signed out.',
  revoked: 'The invitation was revoked: its link no longer works.',
  role: 'The role was changed. It applies from the user\'s next click.',
  unchanged: 'The user has this role already: nothing changed.',
};

const actorOf = (request: FastifyRequest) => consoleActor(sessionOf(request));
const linkBase = (request: FastifyRequest) => `${request.protocol}://${request.host}${BASE}`;

/** Registers the users pages (signed-in scope). */
export function registerUsersPages(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const sender = { mailer: deps.mailer, logger: deps.logger };
  const path = '/settings/users';

  async function showList(request: FastifyRequest, reply: FastifyReply, status: number, extra: { form?: InviteForm; errors?: InviteErrors; flash?: string } = {}) {
    const session = sessionOf(request);
    const created = status === 200 ? takeLinkFlash(deps, request, reply) : undefined;
    const { users, invitations } = await listCompanyUsers(db, session.company_id, nowOf(deps));
    return sendPage(request, reply, status, {
      title: 'Users', section: 'users', crumbs: USERS_CRUMBS, flash: created ? undefined : extra.flash,
      body: (csrf) => usersView({ csrf, users, invitations, me: session.user_id, form: extra.form ?? { email: '', role: 'marketer' }, errors: extra.errors ?? {}, created }),
    });
  }

  /** The company's user of the path, or 404. */
  async function userOf(request: FastifyRequest<{ Params: { userId: string } }>) {
    const user = await findUser(db, { userId: parseId(request.params.userId), companyId: sessionOf(request).company_id });
    if (!user) throw notFound('User not found');
    return user;
  }

  async function showUser(request: FastifyRequest<{ Params: { userId: string } }>, reply: FastifyReply, status: number, extra: { role?: string; roleError?: string; flash?: string } = {}) {
    const session = sessionOf(request);
    const user = await userOf(request);
    const created = status === 200 ? takeLinkFlash(deps, request, reply) : undefined;
    const history = await userHistory(db, session.company_id, user.user_id);
    return sendPage(request, reply, status, {
      title: user.email, section: 'users', crumbs: [...USERS_CRUMBS, [user.email]], flash: created ? undefined : extra.flash,
      body: (csrf) => userView({
        csrf, user, me: session.user_id, role: extra.role ?? user.role, roleError: extra.roleError,
        created: created?.kind === 'password_reset' && created.user_id === user.user_id ? created : undefined, history,
      }),
    });
  }

  scope.get<{ Querystring: { done?: string } }>(path, async (request, reply) =>
    showList(request, reply, 200, { flash: NOTICES[String(request.query.done ?? '')] }));

  scope.post(`${path}/invitations`, async (request, reply) => {
    const session = sessionOf(request);
    const form: InviteForm = { email: field(request.body, 'email').trim(), role: field(request.body, 'role') };
    const errors: InviteErrors = {};
    if (form.email === '') errors.email = 'Enter the email address of the person to invite.';
    else if (!normaliseEmail(form.email)) errors.email = 'This is not an email address.';
    if (!isRole(form.role)) errors.role = 'Choose a role.';
    if (errors.email || errors.role || !isRole(form.role)) return showList(request, reply, 422, { form, errors });
    let inv;
    try {
      inv = await inviteUser(db, actorOf(request), session.company_id, { email: form.email, role: form.role }, nowOf(deps));
    } catch (err) {
      if (err instanceof DomainError && err.status === 409) return showList(request, reply, 409, { form, errors: { email: 'This email already has a console account. A person can belong to one company only.' } });
      if (err instanceof DomainError && err.status === 422) return showList(request, reply, 422, { form, errors: { email: 'This is not an email address.' } });
      throw err;
    }
    const url = `${linkBase(request)}/invite/${inv.token}`;
    const emailed = deps.mailer
      ? await emailInvitation(db, sender, inv, url)
      : undefined;
    setLinkFlash(deps, request, reply, {
      kind: 'invitation', email: inv.email, role: inv.role, url, expires_at: inv.expires_at.toISOString(), ...(emailed === undefined ? {} : { emailed }),
    });
    return reply.header('cache-control', 'no-store').redirect(BASE + path, 303);
  });

  scope.post<{ Params: { invitationId: string } }>(`${path}/invitations/:invitationId/revoke`, async (request, reply) => {
    try {
      await revokeUserInvitation(db, actorOf(request), parseId(request.params.invitationId), nowOf(deps));
    } catch (err) {
      if (err instanceof DomainError && err.status === 404) throw notFound('Invitation not found');
      throw err;
    }
    return reply.redirect(`${BASE + path}?done=revoked`, 303);
  });

  scope.get<{ Params: { userId: string }; Querystring: { done?: string } }>(`${path}/:userId`, async (request, reply) =>
    showUser(request, reply, 200, { flash: NOTICES[String(request.query.done ?? '')] }));

  scope.post<{ Params: { userId: string } }>(`${path}/:userId/role`, async (request, reply) => {
    const session = sessionOf(request);
    const user = await userOf(request);
    const role = field(request.body, 'role');
    if (!isRole(role)) return showUser(request, reply, 422, { role, roleError: 'Choose a role.' });
    let changed;
    try {
      changed = await changeUserRole(db, actorOf(request), user.user_id, role);
    } catch (err) {
      if (err instanceof DomainError && err.status === 409) return showUser(request, reply, 409, { role, roleError: `${err.detail}.` });
      throw err;
    }
    if (user.user_id === session.user_id && role !== 'owner') return reply.redirect(`${BASE}/overview`, 303);
    return reply.redirect(`${BASE + path}/${user.user_id}${changed.previous_role === role ? '?done=unchanged' : '?done=role'}`, 303);
  });

  scope.post<{ Params: { userId: string } }>(`${path}/:userId/reset-link`, async (request, reply) => {
    const user = await userOf(request);
    const reset = await createPasswordResetLink(db, actorOf(request), user.user_id, nowOf(deps));
    const url = `${linkBase(request)}/password-reset/${reset.token}`;
    const emailed = deps.mailer
      ? await emailPasswordReset(db, sender, reset, url)
      : undefined;
    setLinkFlash(deps, request, reply, {
      kind: 'password_reset', email: reset.email, user_id: reset.user_id, url, expires_at: reset.expires_at.toISOString(), ...(emailed === undefined ? {} : { emailed }),
    });
    return reply.header('cache-control', 'no-store').redirect(`${BASE + path}/${user.user_id}`, 303);
  });

  scope.get<{ Params: { userId: string } }>(`${path}/:userId/remove`, async (request, reply) => {
    const user = await userOf(request);
    return sendPage(request, reply, 200, {
      title: `Remove ${user.email}`, section: 'users', crumbs: [...USERS_CRUMBS, [user.email, `${USERS_PATH}/${user.user_id}`], ['Remove']],
      body: (csrf) => removeUserView({ csrf, user, me: sessionOf(request).user_id }),
    });
  });

  scope.post<{ Params: { userId: string } }>(`${path}/:userId/remove`, async (request, reply) => {
    const session = sessionOf(request);
    const user = await userOf(request);
    try {
      await removeConsoleUser(db, actorOf(request), user.user_id);
    } catch (err) {
      if (err instanceof DomainError && err.status === 409) {
        return sendPage(request, reply, 409, {
          title: `Remove ${user.email}`, section: 'users', crumbs: [...USERS_CRUMBS, [user.email, `${USERS_PATH}/${user.user_id}`], ['Remove']],
          body: (csrf) => removeUserView({ csrf, user, me: session.user_id, error: `${err.detail}.` }),
        });
      }
      throw err;
    }
    if (user.user_id === session.user_id) {
      reply.clearCookie(SESSION_COOKIE, SESSION_COOKIE_OPTIONS);
      return reply.redirect(`${BASE}/login?done=removed`, 303);
    }
    return reply.redirect(`${BASE + path}?done=removed`, 303);
  });
}

/**
 * Accepting an invitation: GET/POST /console/invite/:token. The link
 * an owner made on the users page, or the operator with `POST /admin/companies/{id}/users/invitations`
 * (`cms user invite`), shows the company and the role and a form to choose a password; submitting it
 * creates the user with that role and uses the link up. Then the person signs in. A used, revoked,
 * superseded, expired or unknown link answers 404.
 */
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { acceptInvitation, findInvitation } from '../../domain/users.ts';
import type { AppDeps } from '../../http/deps.ts';
import { field, nowOf, sendPage } from '../context.ts';
import { sendErrorPage } from '../errors.ts';
import { BASE } from '../views/layout.ts';
import { inviteView } from '../views/invite.ts';

const INVALID = 'This invitation link cannot be used: it was used already, replaced by a newer invitation, revoked, or it expired. Ask the person who invited you for a new one.';

/** The token is in the path: keep these requests out of the info-level request log. */
const QUIET = { logLevel: 'warn' } as const;

/** Registers GET and POST /invite/:token (no session needed). */
export function registerInvitePage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;

  scope.get<{ Params: { token: string } }>('/invite/:token', QUIET, async (request, reply) => {
    const inv = await findInvitation(db, request.params.token, nowOf(deps));
    if (!inv) return sendErrorPage(request, reply, 404, 'Invitation not valid', INVALID);
    return sendPage(request, reply, 200, {
      title: 'Join your company',
      body: (csrf) => inviteView({ csrf, token: request.params.token, email: inv.email, role: inv.role, company: inv.company_name }),
    });
  });

  scope.post<{ Params: { token: string } }>('/invite/:token', QUIET, async (request, reply) => {
    const token = request.params.token;
    const now = nowOf(deps);
    const inv = await findInvitation(db, token, now);
    if (!inv) return sendErrorPage(request, reply, 404, 'Invitation not valid', INVALID);
    const password = field(request.body, 'password');
    const confirm = field(request.body, 'password_confirm');
    const render = (status: number, error: string) => sendPage(request, reply, status, {
      title: 'Join your company',
      body: (csrf) => inviteView({ csrf, token, email: inv.email, role: inv.role, company: inv.company_name, error }),
    });
    if (password !== confirm) return render(400, 'The two passwords differ.');
    try {
      await acceptInvitation(db, deps.passwords, token, password, now); // audited as user.join by the domain
    } catch (err) {
      if (err instanceof DomainError && err.status === 422) return render(400, err.detail);
      if (err instanceof DomainError && err.status === 409) return render(409, 'An account with this email exists already. Sign in instead.');
      if (err instanceof DomainError && err.status === 404) return sendErrorPage(request, reply, 404, 'Invitation not valid', INVALID);
      throw err;
    }
    return reply.redirect(`${BASE}/login?done=joined`, 303);
  });
}

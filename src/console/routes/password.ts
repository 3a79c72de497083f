/**
 * Password change: GET/POST /console/account/password. Needs the current password;
 * other sessions of the user end, this one stays. POST-redirect-GET: a change answers `303`
 * to `?done=changed`, whose GET shows the notice; a refused change shows the form again (400).
 */
import type { FastifyInstance } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { DomainError } from '../../domain/errors.ts';
import { changePassword } from '../../domain/users.ts';
import type { AppDeps } from '../../http/deps.ts';
import { field, nowOf, sendPage, sessionOf } from '../context.ts';
import { BASE } from '../views/layout.ts';
import { passwordView, type PasswordField } from '../views/password.ts';

const CRUMBS: [string, string?][] = [['Account'], ['Password']];

/** Registers GET and POST /account/password (signed-in scope). */
export function registerPasswordPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;

  scope.get<{ Querystring: { done?: string } }>('/account/password', async (request, reply) => sendPage(request, reply, 200, {
    title: 'Change password', section: 'account', crumbs: CRUMBS,
    flash: request.query.done === 'changed' ? 'Password changed. Your other sessions were signed out.' : undefined,
    body: (csrf) => passwordView({ csrf, email: sessionOf(request).email }),
  }));

  scope.post('/account/password', async (request, reply) => {
    const session = sessionOf(request);
    const current = field(request.body, 'current_password');
    const next = field(request.body, 'new_password');
    const confirm = field(request.body, 'new_password_confirm');
    const render = (status: number, field: PasswordField, text: string) => sendPage(request, reply, status, {
      title: 'Change password', section: 'account', crumbs: CRUMBS,
      body: (csrf) => passwordView({ csrf, email: session.email, error: { field, text } }),
    });
    if (next !== confirm) return render(400, 'new_password_confirm', 'The two new passwords differ.');
    try {
      await changePassword(db, deps.passwords, consoleActor(session), current, next, session.token, nowOf(deps)); // audited as user.password_change
    } catch (err) {
      if (err instanceof DomainError && err.status === 403) return render(400, 'current_password', `${err.detail}.`);
      if (err instanceof DomainError && err.status === 422) return render(400, 'new_password', err.detail);
      throw err;
    }
    return reply.redirect(`${BASE}/account/password?done=changed`, 303);
  });
}

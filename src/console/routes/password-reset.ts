/**
 * Password reset by one-time link: GET/POST /console/password-reset/:token, no session
 * needed. The link comes from an owner (Settings › Users › a user › Create reset link) or from the
 * operator (`POST /admin/users/{user_id}/password-resets`, `cms user reset-link`). The form asks for the
 * new password twice; setting it uses the link up, ends every session of the user (also the one of
 * the browser that opened it, if any) and clears the sign-in throttle of the email, then redirects to
 * sign-in (303). A used, superseded, expired or unknown link answers 404; a refused password shows the
 * form again (400) and leaves the link usable.
 */
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { findPasswordReset, resetPassword } from '../../domain/users.ts';
import type { AppDeps } from '../../http/deps.ts';
import { field, nowOf, sendPage } from '../context.ts';
import { sendErrorPage } from '../errors.ts';
import { BASE } from '../views/layout.ts';
import { passwordResetView } from '../views/password-reset.ts';

const INVALID = 'This password reset link cannot be used: it was used already, replaced by a newer link, or it expired (links work for one hour). Ask an owner of your company for a new one.';

/** The token is in the path: keep these requests out of the info-level request log. */
const QUIET = { logLevel: 'warn' } as const;

/** Registers GET and POST /password-reset/:token (no session needed). */
export function registerPasswordResetPages(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;

  scope.get<{ Params: { token: string } }>('/password-reset/:token', QUIET, async (request, reply) => {
    const reset = await findPasswordReset(db, request.params.token, nowOf(deps));
    if (!reset) return sendErrorPage(request, reply, 404, 'Reset link not valid', INVALID);
    return sendPage(request, reply, 200, {
      title: 'Choose a new password',
      body: (csrf) => passwordResetView({ csrf, token: request.params.token, email: reset.email, company: reset.company_name }),
    });
  });

  scope.post<{ Params: { token: string } }>('/password-reset/:token', QUIET, async (request, reply) => {
    const token = request.params.token;
    const now = nowOf(deps);
    const reset = await findPasswordReset(db, token, now);
    if (!reset) return sendErrorPage(request, reply, 404, 'Reset link not valid', INVALID);
    const password = field(request.body, 'password');
    const confirm = field(request.body, 'password_confirm');
    const render = (status: number, error: string) => sendPage(request, reply, status, {
      title: 'Choose a new password',
      body: (csrf) => passwordResetView({ csrf, token, email: reset.email, company: reset.company_name, error }),
    });
    if (password !== confirm) return render(400, 'The two passwords differ.');
    try {
      await resetPassword(db, deps.passwords, token, password, now); // audited as user.password_reset; forgets failed sign-ins
    } catch (err) {
      if (err instanceof DomainError && err.status === 422) return render(400, err.detail);
      if (err instanceof DomainError && err.status === 404) return sendErrorPage(request, reply, 404, 'Reset link not valid', INVALID);
      throw err;
    }
    return reply.header('cache-control', 'no-store').redirect(`${BASE}/login?done=reset`, 303);
  });
}

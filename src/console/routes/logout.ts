/** Sign-out: POST /console/logout (a form with a CSRF token). Ends the session and clears the cookie. */
import type { FastifyInstance } from 'fastify';
import { deleteSession } from '../../domain/users.ts';
import type { AppDeps } from '../../http/deps.ts';
import { sessionOf, SESSION_COOKIE, SESSION_COOKIE_OPTIONS } from '../context.ts';
import { BASE } from '../views/layout.ts';

/** Registers POST /logout (signed-in scope). */
export function registerLogout(scope: FastifyInstance, deps: AppDeps): void {
  scope.post('/logout', async (request, reply) => {
    await deleteSession(deps.database.db, sessionOf(request).token);
    reply.clearCookie(SESSION_COOKIE, SESSION_COOKIE_OPTIONS);
    return reply.redirect(`${BASE}/login?done=signed_out`, 303);
  });
}

/**
 * Sign-out: POST /console/logout (a form with a CSRF token). Ends the session, clears the cookie and
 * records `console.sign_out` in the audit log (as sign-in records `console.sign_in`).
 */
import type { FastifyInstance } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { signOut } from '../../domain/users.ts';
import type { AppDeps } from '../../http/deps.ts';
import { sessionOf, SESSION_COOKIE, SESSION_COOKIE_OPTIONS } from '../context.ts';
import { BASE } from '../views/layout.ts';

/** Registers POST /logout (signed-in scope). */
export function registerLogout(scope: FastifyInstance, deps: AppDeps): void {
  scope.post('/logout', async (request, reply) => {
    const session = sessionOf(request);
    await signOut(deps.database.db, consoleActor(session), session.token);
    reply.clearCookie(SESSION_COOKIE, SESSION_COOKIE_OPTIONS);
    return reply.redirect(`${BASE}/login?done=signed_out`, 303);
  });
}

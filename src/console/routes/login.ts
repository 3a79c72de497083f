/**
 * Sign-in: GET/POST /console/login. A successful sign-in starts a new session (a new
 * cookie value: no session fixation) and redirects to `next` (console paths only) or the console
 * home. Failed attempts are throttled per email and per client address (login-throttle.ts): while
 * blocked the answer is 429 with Retry-After, before any password is checked.
 */
import type { FastifyInstance } from 'fastify';
import { findSession, signIn } from '../../domain/users.ts';
import type { AppDeps } from '../../http/deps.ts';
import { field, nowOf, safeNext, sendPage, SESSION_COOKIE, SESSION_COOKIE_OPTIONS } from '../context.ts';
import { loginView } from '../views/login.ts';

/** Fixed notices that other pages may ask the sign-in page to show (`?done=`). */
const NOTICES: Record<string, string> = {
  joined: 'Your account is ready. Sign in with your email and your new password.',
  signed_out: 'You are signed out.',
  reset: 'Your new password is set and your sessions were signed out. Sign in with the new password.',
  removed: 'You removed yourself from the company and were signed out.',
};

/** Registers GET and POST /login (no session needed). */
export function registerLoginPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;

  scope.get<{ Querystring: { next?: string; done?: string } }>('/login', async (request, reply) => {
    const existing = await findSession(db, request.cookies[SESSION_COOKIE], nowOf(deps));
    if (existing) return reply.redirect(safeNext(request.query.next), 303);
    const notice = NOTICES[String(request.query.done ?? '')];
    return sendPage(request, reply, 200, {
      title: 'Sign in',
      flash: notice,
      body: (csrf) => loginView({ csrf, next: safeNext(request.query.next), email: '' }),
    });
  });

  scope.post('/login', async (request, reply) => {
    const email = field(request.body, 'email').trim();
    const password = field(request.body, 'password');
    const next = safeNext(field(request.body, 'next'));
    const now = nowOf(deps);
    const render = (status: number, error: string) => sendPage(request, reply, status, {
      title: 'Sign in',
      body: (csrf) => loginView({ csrf, next, email, error }),
    });
    if (!email || !password) return render(400, 'Enter your email and your password.');
    const outcome = await signIn(db, deps.passwords, { email, password, address: request.ip, replacesToken: request.cookies[SESSION_COOKIE] }, now);
    if (outcome.kind === 'blocked') {
      const minutes = Math.max(1, Math.ceil(outcome.waitMs / 60_000));
      reply.header('retry-after', String(Math.ceil(outcome.waitMs / 1000)));
      return render(429, `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`);
    }
    if (outcome.kind === 'refused') return render(401, 'The email or the password is wrong.');
    reply.setCookie(SESSION_COOKIE, outcome.token, SESSION_COOKIE_OPTIONS);
    return reply.redirect(next, 303);
  });
}

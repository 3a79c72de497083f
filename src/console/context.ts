/**
 * Request-level helpers of the console: the session cookie, the signed-in user on the request,
 * rendering a page (with a fresh CSRF token), and safe redirects.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionInfo } from '../domain/users.ts';
import { isAllowed } from './permissions.ts';
import { BASE, layout, type PageOptions } from './views/layout.ts';
import type { SafeHtml } from './views/html.ts';
import { inTimeZone } from './views/format.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session of the request (set by the session hook on signed-in routes). */
    consoleSession: SessionInfo | null;
  }
}

/** Name of the session cookie (path /console, httpOnly, SameSite=Lax, Secure over https). */
export const SESSION_COOKIE = 'cms_console_session';

/** Options of the session cookie; `secure: 'auto'` sets Secure when the request came over https. */
export const SESSION_COOKIE_OPTIONS = { path: BASE, httpOnly: true, sameSite: 'lax', secure: 'auto' } as const;

/** Sends an HTML document with the status; console pages are never cached (they show secrets and PII). */
export function sendHtml(reply: FastifyReply, status: number, doc: SafeHtml): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(doc.value);
}

/**
 * Renders a page in the layout, with the request's user (if any) and a CSRF token for its forms; its
 * times are shown in the company's time zone (views/format.ts `inTimeZone`), UTC without a session.
 */
export function sendPage(
  request: FastifyRequest, reply: FastifyReply, status: number,
  page: Omit<PageOptions, 'csrf' | 'user' | 'body'> & { body: (csrf: string) => SafeHtml },
): FastifyReply {
  const csrf = reply.generateCsrf();
  const s = request.consoleSession;
  return sendHtml(reply, status, layout({ ...page, csrf, body: inTimeZone(s?.time_zone ?? 'UTC', () => page.body(csrf)), user: s ? { email: s.email, company_name: s.company_name, role: s.role, channel_provider: s.channel_provider } : undefined }));
}

/**
 * True when the signed-in user's role may send `method` to the console path `url` (permissions.ts):
 * pages use it to leave out buttons and forms the role could not use. False without a session.
 */
export function can(request: FastifyRequest, method: string, url: string): boolean {
  const s = request.consoleSession;
  return s !== null && isAllowed(s.role, method, url);
}

/** A redirect target inside the console from untrusted input (`next`), or the console home. */
export function safeNext(next: unknown): string {
  if (typeof next === 'string' && next.startsWith(`${BASE}/`) && !next.startsWith('//') && !/[\\\s]/.test(next) && next.length < 500) return next;
  return `${BASE}/`;
}

/** A string field of a parsed form body ('' when absent or not a string). */
export function field(body: unknown, name: string): string {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : '';
}

/** The signed-in session; throws when a route that requires one is reached without it (a bug). */
export function sessionOf(request: FastifyRequest): SessionInfo {
  const s = request.consoleSession;
  if (!s) throw new Error('console route without a session');
  return s;
}

/** The caller's clock as a Date. */
export function nowOf(deps: { clock: { now(): number } }): Date {
  return new Date(deps.clock.now());
}

/** A path parameter as a row id; NaN (answered 404 by the lookups) for anything but 1 to 10 digits. */
export function parseId(text: string): number {
  return /^[0-9]{1,10}$/.test(text) ? Number(text) : Number.NaN;
}

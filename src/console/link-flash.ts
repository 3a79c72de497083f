/**
 * One-time links shown once after a POST-redirect-GET: an owner's invitation or
 * password reset link travels from the POST to the next GET of the users pages in a cookie
 * (`cms_console_new_link`, path `/console/settings/users`, HttpOnly, SameSite=Strict, Secure over https,
 * 5 minutes) sealed with the service's secrets box (AES-256-GCM, SECRETS_KEY), as the Credentials page
 * does with a new API key. It is bound to the session and company that made it and cleared by the first
 * GET that takes it, so reloading does not show the link again. The link's token is stored nowhere
 * else in clear (the database keeps its SHA-256).
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../http/deps.ts';
import { sessionOf } from './context.ts';
import { BASE } from './views/layout.ts';

/** The cookie that carries the sealed link. */
export const NEW_LINK_COOKIE = 'cms_console_new_link';

/** How long the flash may wait for its GET (ms). */
const FLASH_TTL_MS = 5 * 60_000;

const COOKIE_OPTIONS = { path: `${BASE}/settings/users`, httpOnly: true, sameSite: 'strict', secure: 'auto' } as const;

/** What is shown once: which kind of link, for whom, the link, and until when it works (ISO 8601). */
export interface NewLink {
  kind: 'invitation' | 'password_reset';
  email: string;
  url: string;
  expires_at: string;
  /** The invited role (invitations). */
  role?: string;
  /** The user the reset link is for (reset links). */
  user_id?: number;
  /** Whether the link was emailed too: true sent, false failed; absent when no mail is configured. */
  emailed?: boolean;
}

interface Sealed { l: NewLink; c: number; s: string; e: number }

const sessionDigest = (token: string) => createHash('sha256').update(token).digest('base64url');

/** Sets the flash for the next GET of the users pages (call before the 303). */
export function setLinkFlash(deps: Pick<AppDeps, 'sealSecret' | 'clock'>, request: FastifyRequest, reply: FastifyReply, link: NewLink): void {
  const session = sessionOf(request);
  const sealed: Sealed = { l: link, c: session.company_id, s: sessionDigest(session.token), e: deps.clock.now() + FLASH_TTL_MS };
  reply.setCookie(NEW_LINK_COOKIE, deps.sealSecret(JSON.stringify(sealed)), { ...COOKIE_OPTIONS, maxAge: FLASH_TTL_MS / 1000 });
}

/**
 * Takes the flash off the request (clearing the cookie); undefined when there is none, or it is
 * expired, unreadable, or was made in another session or company.
 */
export function takeLinkFlash(deps: Pick<AppDeps, 'openSecret' | 'clock'>, request: FastifyRequest, reply: FastifyReply): NewLink | undefined {
  const value = request.cookies[NEW_LINK_COOKIE];
  if (value === undefined) return undefined;
  reply.clearCookie(NEW_LINK_COOKIE, COOKIE_OPTIONS);
  try {
    const sealed = JSON.parse(deps.openSecret(value)) as Sealed;
    const session = sessionOf(request);
    if (sealed.c !== session.company_id || sealed.s !== sessionDigest(session.token) || !(sealed.e > deps.clock.now())) return undefined;
    return sealed.l;
  } catch {
    return undefined;
  }
}

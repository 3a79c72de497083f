/**
 * Settings › Integrations & developers › Credentials (docs/api.md "At a glance"):
 * GET lists the company's API keys (label, prefix, created, last used) and shows the subscription
 * state, whether the push-messaging connector is connected and the channel in use (its provider only,
 * never its settings or secrets). POST creates a key with an optional label, then POST-redirect-GET:
 * `303` back to this page, which shows the new key once, with a copy button. Reloading the page does
 * not create a second key, and does not show the key again.
 *
 * The one-time flash is a cookie (`cms_console_new_key`, path of this page only, HttpOnly,
 * SameSite=Strict, Secure over https, 5 minutes) whose value is the new key sealed with the service's
 * secrets box (AES-256-GCM, SECRETS_KEY): every API process can open it, nobody else can read it. It is
 * bound to the session that created the key and to its company, and cleared by the first GET that sees
 * it. Answers are never cached; the key is never stored in clear or shown again.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor } from '../../domain/actor.ts';
import { createApiKey, type CreatedKey } from '../../domain/api-keys.ts';
import { getCompany } from '../../domain/companies.ts';
import type { SessionInfo } from '../../domain/users.ts';
import type { AppDeps } from '../../http/deps.ts';
import { field, sendPage, sessionOf } from '../context.ts';
import { listCompanyKeys } from '../queries/keys.ts';
import { BASE } from '../views/layout.ts';
import { credentialsView, CREDENTIALS_CRUMBS } from '../views/credentials.ts';

/** Fixed notices other pages may ask this page to show (`?done=`). */
const NOTICES: Record<string, string> = { revoked: 'The API key was revoked. Requests with it are refused from now on.' };

/** Longest key label, as in the operator API. */
const LABEL_MAX = 255;

/** The one-time flash cookie holding a just-created key (sealed). */
export const NEW_KEY_COOKIE = 'cms_console_new_key';

/** How long the flash may wait for its GET (ms). */
const FLASH_TTL_MS = 5 * 60_000;

interface Flash {
  /** The created key. */
  k: Omit<CreatedKey, 'created_at'> & { created_at: string };
  /** Company and session (SHA-256 of its token) the key was created in. */
  c: number;
  s: string;
  /** Expiry, ms since the epoch (the service's clock). */
  e: number;
}

const sessionDigest = (session: SessionInfo) => createHash('sha256').update(session.token).digest('base64url');

/** Registers GET and POST /settings/integrations/credentials (signed-in scope). */
export function registerCredentialsPage(scope: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const path = '/settings/integrations/credentials';
  const cookieOptions = { path: BASE + path, httpOnly: true, sameSite: 'strict', secure: 'auto' } as const;

  async function show(request: FastifyRequest, reply: FastifyReply, status: number, extra: { created?: CreatedKey; error?: string; label?: string; flash?: string }) {
    const session = sessionOf(request);
    const [company, keys] = await Promise.all([getCompany(db, session.company_id), listCompanyKeys(db, session.company_id)]);
    return sendPage(request, reply, status, {
      title: 'Credentials', section: 'credentials', crumbs: CREDENTIALS_CRUMBS, flash: extra.flash,
      body: (csrf) => credentialsView({ csrf, company, keys, created: extra.created, error: extra.error, label: extra.label ?? '' }),
    });
  }

  /** Takes the flash of a just-created key off the request (clearing the cookie); undefined when none is valid. */
  function takeCreated(request: FastifyRequest, reply: FastifyReply): CreatedKey | undefined {
    const sealed = request.cookies[NEW_KEY_COOKIE];
    if (sealed === undefined) return undefined;
    reply.clearCookie(NEW_KEY_COOKIE, cookieOptions);
    try {
      const flash = JSON.parse(deps.openSecret(sealed)) as Flash;
      const session = sessionOf(request);
      if (flash.c !== session.company_id || flash.s !== sessionDigest(session) || !(flash.e > deps.clock.now())) return undefined;
      return { ...flash.k, created_at: new Date(flash.k.created_at) };
    } catch {
      return undefined;
    }
  }

  scope.get<{ Querystring: { done?: string } }>(path, async (request, reply) => {
    const created = takeCreated(request, reply);
    return show(request, reply, 200, { created, flash: created ? undefined : NOTICES[String(request.query.done ?? '')] });
  });

  scope.post(path, async (request, reply) => {
    const session = sessionOf(request);
    const label = field(request.body, 'label').trim();
    if ([...label].length > LABEL_MAX) return show(request, reply, 400, { error: `The label can have at most ${LABEL_MAX} characters.`, label });
    const created = await createApiKey(db, consoleActor(session), session.company_id, label === '' ? null : label); // audited as key.create
    request.log.info({ audit: true, action: 'key.create', key_id: created.key_id, via: 'console' }, 'api key created');
    const flash: Flash = { k: { ...created, created_at: created.created_at.toISOString() }, c: session.company_id, s: sessionDigest(session), e: deps.clock.now() + FLASH_TTL_MS };
    reply.setCookie(NEW_KEY_COOKIE, deps.sealSecret(JSON.stringify(flash)), { ...cookieOptions, maxAge: FLASH_TTL_MS / 1000 });
    return reply.header('cache-control', 'no-store').redirect(BASE + path, 303);
  });
}

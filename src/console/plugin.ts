/**
 * The company console, served under `/console` by the same service: a server-rendered web
 * app for a company's own people. `registerConsole(app, deps)` registers it in its own encapsulated
 * context with
 *
 * - its own body parsing: only `application/x-www-form-urlencoded` forms (@fastify/formbody), 64 KiB;
 * - security headers (@fastify/helmet): a strict Content-Security-Policy (only this origin's CSS and
 *   JS, no inline script), frame-ancestors none, no-referrer (invitation tokens never leak), nosniff;
 * - cookies (@fastify/cookie) signed with a key generated once per installation and kept in the
 *   database (`console_secrets`), so every process accepts every other's cookies;
 * - CSRF protection (@fastify/csrf-protection, signed double-submit cookie) on every non-GET request;
 * - sessions stored hashed in the database (domain/users.ts), required on every page but sign-in,
 *   invitation and password reset, checked when a request arrives (before its body is read); without
 *   one a GET is redirected to sign-in (303) and any other request is refused the same way;
 * - roles: the same hook asks permissions.ts whether the session's role may send
 *   this method to the matched route (`request.routeOptions.url`); if not, it answers 403 with a page
 *   that says so before any handler runs, so nothing is written;
 * - HTML error pages (404 for unknown pages and for other companies' ids, 403 for a bad CSRF token);
 * - assets from the repository and npm (Pico CSS), never from a CDN.
 *
 * Every query of a signed-in page is scoped to the session's company: another company's batch, segment
 * or key id answers 404 exactly like an unknown one.
 */
import { randomBytes } from 'node:crypto';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import { insertSecretIfAbsent, selectSecret } from '../db/console-secrets.ts';
import type { Db } from '../db/database.ts';
import type { AppDeps } from '../http/deps.ts';
import { findSession } from '../domain/users.ts';
import { registerAssets } from './assets.ts';
import { nowOf, SESSION_COOKIE, SESSION_COOKIE_OPTIONS } from './context.ts';
import { registerErrorPages, sendForbiddenPage } from './errors.ts';
import { isAllowed } from './permissions.ts';
import { registerSourcePages } from './routes/automations.ts';
import { registerCampaignSendPages } from './routes/campaign-send.ts';
import { registerBatchPage } from './routes/batch.ts';
import { registerContactPage } from './routes/contact.ts';
import { registerContactsPage } from './routes/contacts.ts';
import { registerCredentialsPage } from './routes/credentials.ts';
import { registerInvitePage } from './routes/invite.ts';
import { registerLoginPage } from './routes/login.ts';
import { registerLogout } from './routes/logout.ts';
import { registerMessagingPage } from './routes/messaging.ts';
import { registerPasswordPage } from './routes/password.ts';
import { registerRevokeKeyPage } from './routes/revoke-key.ts';
import { registerSegmentPage } from './routes/segment.ts';
import { registerSegmentBuilderPages } from './routes/segment-builder.ts';
import { registerSegmentsPage } from './routes/segments.ts';
import { registerSendsPage } from './routes/sends.ts';
import { registerWebhookPage } from './routes/webhook.ts';
import { registerWebhooksPage } from './routes/webhooks.ts';
import { registerOverviewPage } from './routes/overview.ts';
import { registerUsersPages } from './routes/users.ts';
import { registerWhatsappTemplatePages } from './routes/whatsapp-templates.ts';
import { registerPasswordResetPages } from './routes/password-reset.ts';
import { BASE } from './views/layout.ts';

/** A route of the console: its method, URL pattern (`/console/segments/:segmentId`), and whether it needs a session. */
export interface ConsoleRoute { method: string; url: string; signedIn: boolean }

declare module 'fastify' {
  interface FastifyInstance {
    /** Every console route registered so far (HEAD left out): for the role matrix test and diagnostics. */
    consoleRoutes(): ConsoleRoute[];
  }
}

/** Largest console request body (forms only): 64 KiB. */
const BODY_LIMIT = 64 * 1024;

/** The installation's cookie-signing key: created once (random 32 bytes), shared through the database. */
export async function cookieSecret(db: Db): Promise<string> {
  await insertSecretIfAbsent(db, 'cookie_secret', randomBytes(32).toString('base64url'));
  return selectSecret(db, 'cookie_secret');
}

/** Registers the console under `/console` (see the module comment). */
export async function registerConsole(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const secret = await cookieSecret(deps.database.db);
  const routes = new Map<string, ConsoleRoute>();
  const remember = (method: string | string[], url: string, signedIn: boolean) => {
    for (const m of Array.isArray(method) ? method : [method]) {
      if (m === 'HEAD') continue;
      const key = `${m} ${url}`;
      if (signedIn || !routes.has(key)) routes.set(key, { method: m, url, signedIn });
    }
  };
  app.decorate('consoleRoutes', () => [...routes.values()]);
  await app.register(async (scope) => {
    // Console pages are not part of the API's OpenAPI document.
    scope.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
      remember(route.method, route.url, false);
    });
    scope.removeAllContentTypeParsers();
    await scope.register(formbody, { bodyLimit: BODY_LIMIT });
    await scope.register(helmet, {
      hsts: false, // a TLS terminator in front of the service decides that for the whole host
      frameguard: { action: 'deny' },
      referrerPolicy: { policy: 'no-referrer' },
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'none'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'"],
          imgSrc: ["'self'", 'data:'],
          connectSrc: ["'self'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
          baseUri: ["'none'"],
        },
      },
    });
    await scope.register(cookie, { secret });
    await scope.register(csrf, {
      cookieKey: 'cms_console_csrf',
      cookieOpts: { path: BASE, httpOnly: true, sameSite: 'strict', secure: 'auto', signed: true },
    });
    scope.decorateRequest('consoleSession', null);
    // Every form: the CSRF token must match the signed secret cookie (also before sign-in, against
    // login CSRF). Signed-in routes check the session and the role earlier (onRequest, below).
    scope.addHook('preHandler', (request, reply, done) => {
      if (request.method === 'GET' || request.method === 'HEAD') return done();
      scope.csrfProtection(request, reply, done);
    });
    registerErrorPages(scope, deps);
    await registerAssets(scope);

    // Pages without a session.
    registerLoginPage(scope, deps);
    registerInvitePage(scope, deps);
    registerPasswordResetPages(scope, deps);

    // Pages of a signed-in user.
    await scope.register(async (authed) => {
      authed.addHook('onRoute', (route) => remember(route.method, route.url, true));
      // Session and role, before the body is read: an anonymous or refused request never has its
      // form or upload parsed (multipart routes read theirs in preValidation), let alone a handler run.
      authed.addHook('onRequest', async (request, reply) => {
        const token = request.cookies[SESSION_COOKIE];
        const session = await findSession(deps.database.db, token, nowOf(deps));
        if (session) {
          request.consoleSession = session;
          const url = request.routeOptions.url;
          if (url !== undefined && isAllowed(session.role, request.method, url)) return;
          request.log.info({ role: session.role, method: request.method, route: url }, 'console: refused by role');
          return sendForbiddenPage(request, reply);
        }
        if (token) reply.clearCookie(SESSION_COOKIE, SESSION_COOKIE_OPTIONS);
        const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
        return reply.code(303).header('cache-control', 'no-store').redirect(`${BASE}/login${next}`);
      });
      authed.get('/', async (_request, reply) => reply.redirect(`${BASE}/overview`));
      registerOverviewPage(authed, deps);
      registerUsersPages(authed, deps);
      registerLogout(authed, deps);
      registerPasswordPage(authed, deps);
      registerCredentialsPage(authed, deps);
      registerRevokeKeyPage(authed, deps);
      registerWebhooksPage(authed, deps);
      registerWebhookPage(authed, deps);
      registerSegmentsPage(authed, deps);
      registerMessagingPage(authed, deps);
      registerSegmentBuilderPages(authed, deps);
      registerSegmentPage(authed, deps);
      registerSendsPage(authed, deps);
      registerBatchPage(authed, deps);
      registerContactsPage(authed, deps);
      registerContactPage(authed, deps);
      registerSourcePages(authed, deps, 'automation');
      registerSourcePages(authed, deps, 'campaign');
      registerCampaignSendPages(authed, deps);
      registerWhatsappTemplatePages(authed, deps);
    });
  }, { prefix: BASE });
}

/**
 * Builds the HTTP app (fastify/demo style): a function that wires routes to the given dependencies and
 * never listens. Tests call it and use `inject` or listen on port 0; `main.ts` listens for real.
 *
 * Layout: the four public operations (raw bodies, our own Pydantic-compatible validation), the operator
 * API under /admin (bearer token, JSON Schema validation), /openapi.json and /docs (from the same
 * schemas), /healthz and /readyz, /metrics, the landing page `/` and the favicon. Errors never surface
 * as a stack trace.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { DomainError } from '../domain/errors.ts';
import { adminPlugin } from './admin/plugin.ts';
import type { AppDeps } from './deps.ts';
import { isDatabaseUnavailable, isStatementTimeout, sendDetail, UNAVAILABLE_RETRY_AFTER_S } from './errors.ts';
import { preparePublicPlugin, registerPublicOperation } from './public-operation.ts';
import { notFoundReply, rewriteBadPercentEncoding, RouteTable, starletteRouting } from './routing.ts';
import { connectorSendOperation } from './routes/connector-send.ts';
import { createSegmentOperation } from './routes/create-segment.ts';
import { manageSegmentContactsOperation } from './routes/manage-segment-contacts.ts';
import { triggerAutomationOperation } from './routes/trigger-automation.ts';
import { registerHealthRoutes } from './health.ts';
import { registerMetrics } from './metrics-route.ts';
import { registerLanding } from './landing.ts';
import { ConnectorSend, CreateSegment, ManageSegmentContacts, TriggerAutomation, jsonSchemaComponents, type Model } from './validation/index.ts';
import { registerConsole } from '../console/plugin.ts';
import { registerWebhooks } from './webhooks/plugin.ts';
import { lazySerializers, lazyValidators } from './lazy-compilers.ts';
import { completeDocument, DOCUMENT_COMPONENTS, DOCUMENT_INFO, documentServers, TAGS } from './openapi-schemas.ts';

/** Largest request body of the public API (docs/decisions.md#1-request-handling-order: over 1 MiB is 413). */
export const BODY_LIMIT = 1024 * 1024;

/** How long an idle keep-alive connection stays open (ms): above a load balancer's usual 60 s. */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const routes = new RouteTable();
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    requestIdHeader: 'x-request-id',
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    // Slow clients cannot hold the server: whole request within 30 s, headers within 10 s. Node counts
    // both per request, from its first byte; an idle keep-alive connection is bound only by
    // keepAliveTimeout (measured on Node 24: a connection idle for longer than both still serves its next
    // request), so they need not exceed it.
    requestTimeout: 30_000,
    connectionTimeout: 60_000,
    // Idle keep-alive connections stay open 72 s (Fastify's default), longer than the 60 s idle timeout
    // of the usual load balancers: the balancer, not this server, closes an idle connection, so it never
    // sends a request on a connection this server is closing (a 502 at the balancer).
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    http: { headersTimeout: 10_000 },
    // Starlette has no limit on a path parameter (Pydantic answers an over-long segment_id); Node's
    // header size limit (16 KiB) bounds the URL anyway.
    routerOptions: { maxParamLength: 16_384 },
    // Paths with invalid percent-encoding route as uvicorn decodes them (src/http/routing.ts).
    rewriteUrl: (req) => rewriteBadPercentEncoding(req.url ?? '/'),
    // Request validators and response serializers are compiled on a route's first use, not at start.
    schemaController: { compilersFactory: { buildValidator: lazyValidators(deps.compiledSchemas), buildSerializer: lazySerializers(deps.compiledSchemas) } },
  });
  app.addHook('onRoute', (route) => routes.add(route.url, route.method, route.routePath === '' && route.prefixTrailingSlash !== 'no-slash'));
  // Starlette's routing (docs/decisions.md#1-request-handling-order, step 1, src/http/routing.ts): decoded paths, 307 on a toggled
  // trailing slash, no empty or `/`-holding parameters. First of all hooks.
  app.addHook('onRequest', starletteRouting(routes));
  // Routing comes first (docs/decisions.md#1-request-handling-order): a request for no route is 404 or 405 whatever its body and
  // Content-Type, so Fastify must not refuse a malformed Content-Type (415) before the not-found handler.
  app.addHook('onRequest', async (request) => {
    if (request.is404 && request.headers['content-type'] !== undefined) request.raw.headers['content-type'] = 'application/octet-stream';
  });
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  // Error and not-found handlers first: plugins registered later inherit them.
  app.setNotFoundHandler((request, reply) => notFoundReply(routes, request, reply));

  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof DomainError) return sendDetail(reply, err.status, err.detail);
    switch (err.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendDetail(reply, 413, 'Request body too large');
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return sendDetail(reply, 400, 'There was an error parsing the body');
    }
    if (isDatabaseUnavailable(err)) {
      request.log.warn({ err: { message: err.message, code: err.code } }, 'database unavailable');
      return sendDetail(reply, 503, 'Service unavailable', { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_S) });
    }
    // A statement over DB_STATEMENT_TIMEOUT (docs/operations.md "Statement time limits"): the same answer.
    if (isStatementTimeout(err)) {
      request.log.warn({ err: { message: err.message, code: err.code }, route: request.routeOptions.url }, 'database statement timed out');
      return sendDetail(reply, 503, 'Service unavailable', { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_S) });
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return sendDetail(reply, err.statusCode, err.statusCode === 400 ? 'Bad Request' : err.message);
    }
    request.log.error({ err }, 'unhandled error');
    return sendDetail(reply, 500, 'Internal Server Error');
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: DOCUMENT_INFO,
      servers: documentServers(),
      tags: [...TAGS],
      components: {
        ...DOCUMENT_COMPONENTS,
        // The public request models (with their nested models) and the shared error bodies.
        schemas: { ...jsonSchemaComponents([CreateSegment, ManageSegmentContacts, TriggerAutomation, ConnectorSend] as Model<unknown>[]), ...DOCUMENT_COMPONENTS.schemas },
      },
    },
    // Shared schemas (`app.addSchema`, the operator API's components) are listed under their `$id`,
    // so `$ref`s read `#/components/schemas/Company` (the plugin's default names them `def-N`).
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' && /^[A-Za-z0-9._-]+$/.test(json.$id) ? json.$id : `def-${i}`),
    },
    // What every route answers (307, 503, x-request-id ...) and the examples: openapi-schemas.ts.
    transformObject: (document) => ('openapiObject' in document ? completeDocument(document.openapiObject) : document.swaggerObject),
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  registerHealthRoutes(app, deps);
  registerMetrics(app);
  registerLanding(app);

  await app.register(async (pub) => {
    // The public operations read the raw body whatever its Content-Type: docs/decisions.md#1-request-handling-order, step 2
    // decides what it means (see preparePublicPlugin).
    preparePublicPlugin(pub);
    registerPublicOperation(pub, deps, createSegmentOperation);
    registerPublicOperation(pub, deps, manageSegmentContactsOperation);
    registerPublicOperation(pub, deps, triggerAutomationOperation);
    registerPublicOperation(pub, deps, connectorSendOperation);
  });

  await app.register(async (admin) => {
    admin.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, security: [{ AdminBearer: [] }] };
    });
    await adminPlugin(admin, deps);
  });

  // Provider webhooks in (docs/decisions.md#9-whatsapp-webhooks-in, #10-gateway-receipts): public, authenticated by signatures.
  await registerWebhooks(app, deps);

  await registerConsole(app, deps);
  return app;
}

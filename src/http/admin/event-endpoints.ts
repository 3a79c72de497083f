/**
 * Operator API: event endpoints, their attempt log, resend and replay (docs/events.md).
 *
 * | route | answer |
 * |---|---|
 * | POST /admin/companies/{company_id}/event-endpoints `{url, events?, description?}` | 201 endpoint + `secret` (shown once); 404 company; 409 the 21st endpoint; 422 bad input (non-http(s) or private URL, unknown event type) |
 * | GET /admin/companies/{company_id}/event-endpoints | 200 `{endpoints}` (no secrets); 404 company |
 * | GET /admin/event-endpoints/{endpoint_id} | 200 endpoint |
 * | PATCH /admin/event-endpoints/{endpoint_id} `{url?, events?, description?, enabled?}` | 200 endpoint; 422 as on creation |
 * | DELETE /admin/event-endpoints/{endpoint_id} | 204 |
 * | POST /admin/event-endpoints/{endpoint_id}/secret/rotate | 200 `{endpoint_id, secret}` |
 * | GET /admin/event-endpoints/{endpoint_id}/secret | 200 `{endpoint_id, secret}` |
 * | POST /admin/event-endpoints/{endpoint_id}/test | 200 the outcome of one signed test attempt |
 * | GET /admin/event-endpoints/{endpoint_id}/attempts?limit | 200 `{attempts}` newest first |
 * | POST /admin/event-endpoints/{endpoint_id}/replay `{since}` | 202 `{events}`; 409 endpoint disabled |
 * | POST /admin/events/{event_id}/resend | 202 `{events: 1, deliveries}` |
 *
 * Every route naming an endpoint or event takes an optional `?company_id=`: with it, another company's
 * endpoint or event answers 404 exactly like an unknown one (company-scoped operator views).
 * Unknown ids answer 404 `{"detail": "Event endpoint not found"}` / `"Event not found"`; a path id that
 * is not an int4 row id, or a bad query, is 422. Every route also answers 401 without the operator
 * token. Every change is audit-logged (secrets never).
 *
 * Typed from TypeBox schemas with named components, every status documented with an example (the
 * pattern of components.ts).
 */
import type { FastifyInstance } from 'fastify';
import { Type, type TSchema } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { OPERATOR } from '../../domain/actor.ts';
import { getCompany } from '../../domain/companies.ts';
import {
  createEndpoint, DESCRIPTION_MAX, EVENT_TYPES, findEndpoint, listEndpoints, removeEndpoint, replayEvents, replaySinceProblem, resendEvent,
  revealEndpointSecret, rotateEndpointSecret, testEndpoint, updateEndpoint, URL_MAX, endpointView,
} from '../../domain/event-endpoints.ts';
import { selectAttempts } from '../../db/events.ts';
import { sendTestEvent } from '../../queue/events/test-event.ts';
import type { AppDeps } from '../deps.ts';
import {
  addComponents, adminErrors, component, conflict, exampleOf, idParams, invalid, invalidInput, iso, noContent, notFound, ok, ref, rowId, TIME_EXAMPLE,
} from './components.ts';

const tags = ['operator: event endpoints'];
const time = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });
const nullable = <T extends TSchema>(t: T, description?: string) => Type.Union([t, Type.Null()], description ? { description } : {});

const ENDPOINT_URL = 'https://hooks.shop.example.com/cms-events';
const SECRET_EXAMPLE = 'whsec_MfKQ9r3b8mXkP1vY0cL2dT7qN4sW6hZa';
const EVENT_ID_EXAMPLE = 'evt_8f14e45fceea167a5a36dedd4bea2543';

const eventType = Type.String({ maxLength: 64, description: `an event type: ${EVENT_TYPES.join(', ')}` });

/** An event endpoint as answered (never its secret). */
export const EventEndpoint = component('EventEndpoint', Type.Object({
  endpoint_id: Type.Integer(),
  company_id: Type.Integer(),
  url: Type.String({ description: 'where events are POSTed, signed as Standard Webhooks sign' }),
  events: Type.Array(Type.String(), { description: 'the event types it receives' }),
  description: nullable(Type.String()),
  enabled: Type.Boolean(),
  disabled_reason: nullable(Type.String(), 'why the service disabled it (410 Gone, 5 days of failures), or null'),
  failing_since: nullable(time(), 'first failure of the current run of failures'),
  created_at: time(),
}), {
  endpoint_id: 5, company_id: 12, url: ENDPOINT_URL, events: ['message.delivered', 'message.failed'], description: 'Order system',
  enabled: true, disabled_reason: null, failing_since: null, created_at: TIME_EXAMPLE,
});

/** The answer of a registration: the endpoint and its signing secret, shown this once. */
export const CreatedEventEndpoint = component('CreatedEventEndpoint', Type.Object({
  ...EventEndpoint.properties,
  secret: Type.String({ description: 'the signing secret (`whsec_…`): store it now; reveal or rotate it later' }),
}), { ...exampleOf(EventEndpoint), secret: SECRET_EXAMPLE });

/** An endpoint's signing secret. */
export const EventEndpointSecret = component('EventEndpointSecret', Type.Object({
  endpoint_id: Type.Integer(),
  secret: Type.String({ description: '`whsec_` + base64 of 24 random bytes' }),
}), { endpoint_id: 5, secret: SECRET_EXAMPLE });

/** The outcome of one signed test event (type `endpoint.test`). */
export const TestEventOutcome = component('TestEventOutcome', Type.Object({
  event_id: Type.String({ description: 'the webhook-id of the test event' }),
  ok: Type.Boolean({ description: 'the endpoint answered 2xx' }),
  status_code: nullable(Type.Integer(), 'the HTTP status, or null when no answer came'),
  error: nullable(Type.String(), 'a connection error or timeout'),
  response_excerpt: nullable(Type.String(), 'the start of the answer body'),
  duration_ms: Type.Integer({ minimum: 0 }),
}), { event_id: 'evt_test_1f0e9c2b7a6d4e3f', ok: true, status_code: 200, error: null, response_excerpt: '{"received":true}', duration_ms: 84 });

/** One delivery attempt of an event to an endpoint. */
export const EventAttempt = component('EventAttempt', Type.Object({
  event_id: Type.String(),
  type: Type.String({ description: 'the event type' }),
  attempt: Type.Integer({ minimum: 1 }),
  status_code: nullable(Type.Integer()),
  error: nullable(Type.String()),
  response_excerpt: nullable(Type.String()),
  duration_ms: Type.Integer({ minimum: 0 }),
  at: time(),
}), { event_id: EVENT_ID_EXAMPLE, type: 'message.delivered', attempt: 1, status_code: 200, error: null, response_excerpt: '{"received":true}', duration_ms: 91, at: TIME_EXAMPLE });

const components = [EventEndpoint, CreatedEventEndpoint, EventEndpointSecret, TestEventOutcome, EventAttempt];

const endpointProps = {
  url: Type.String({ minLength: 1, maxLength: URL_MAX, description: 'http(s) URL of a public address (private networks only when PROVIDER_ALLOWED_HOSTS allows them)' }),
  events: Type.Array(eventType, { minItems: 1, maxItems: EVENT_TYPES.length, description: `event types (default: all): ${EVENT_TYPES.join(', ')}` }),
  // One `type` list, not anyOf: the validator's type coercion would turn a null into "" for the string branch.
  description: Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength: DESCRIPTION_MAX, description: 'for people; null clears it' }),
};

const companyScope = Type.Object({
  company_id: Type.Optional(rowId('answer 404 unless the endpoint or event is this company\'s', 12)),
});
const endpointParams = idParams('endpoint_id', 'the event endpoint', 5);
const companyParams = idParams('company_id', 'the company', 12);

const endpointNotFound = notFound('Event endpoint not found', 'No such endpoint (or, with `company_id`, another company\'s)');
const badEndpointId = invalid({ type: 'type', loc: ['path', 'endpoint_id'], msg: 'must be integer' }, 'The endpoint id or company_id is not a row id');
const badUrl = invalid({ type: 'value_error', loc: ['body'], msg: 'url resolves to 10.0.0.7, an address of a private or reserved network' }, 'Invalid input (a URL that is not http(s) or points at a private network, an unknown event type ...); nothing changed');

/** Registers the routes of the module comment. */
export function registerEventEndpointRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  addComponents(app, components);

  r.post('/admin/companies/:company_id/event-endpoints', {
    schema: {
      tags, operationId: 'create_event_endpoint', summary: 'Register an event endpoint (the signing secret is answered this once)',
      params: companyParams,
      body: Type.Object({ url: endpointProps.url, events: Type.Optional(endpointProps.events), description: Type.Optional(endpointProps.description) }, {
        additionalProperties: false, examples: [{ url: ENDPOINT_URL, events: ['message.delivered', 'message.failed'], description: 'Order system' }],
      }),
      response: {
        201: ok('Registered; `secret` is shown only here', ref(CreatedEventEndpoint), exampleOf(CreatedEventEndpoint)),
        ...adminErrors,
        404: notFound('Company not found'),
        409: conflict('The company has 20 endpoints already', 'a company can have at most 20 event endpoints'),
        422: badUrl,
      },
    },
  }, async (request, reply) => {
    const created = await createEndpoint(db, deps, OPERATOR, request.params.company_id, request.body); // audited as event_endpoint.create
    return reply.code(201).send(created);
  });

  r.get('/admin/companies/:company_id/event-endpoints', {
    schema: {
      tags, operationId: 'list_event_endpoints', summary: "A company's event endpoints (no secrets)", params: companyParams,
      response: {
        200: ok('The endpoints, oldest first', Type.Object({ endpoints: Type.Array(ref(EventEndpoint)) }), { endpoints: [exampleOf(EventEndpoint)] }),
        ...adminErrors,
        404: notFound('Company not found'),
        422: invalid({ type: 'type', loc: ['path', 'company_id'], msg: 'must be integer' }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    return { endpoints: await listEndpoints(db, company.company_id) };
  });

  r.get('/admin/event-endpoints/:endpoint_id', {
    schema: {
      tags, operationId: 'get_event_endpoint', summary: 'Read an event endpoint (no secret)', params: endpointParams, querystring: companyScope,
      response: { 200: ok('The endpoint', ref(EventEndpoint), exampleOf(EventEndpoint)), ...adminErrors, 404: endpointNotFound, 422: badEndpointId },
    },
  }, async (request) => endpointView(await findEndpoint(db, request.params.endpoint_id, request.query.company_id)));

  r.patch('/admin/event-endpoints/:endpoint_id', {
    schema: {
      tags, operationId: 'update_event_endpoint', summary: 'Change an event endpoint (enabling it again clears disabled_reason)',
      params: endpointParams, querystring: companyScope,
      body: Type.Object({
        url: Type.Optional(endpointProps.url), events: Type.Optional(endpointProps.events), description: Type.Optional(endpointProps.description),
        enabled: Type.Optional(Type.Boolean({ description: 'false pauses deliveries; true resumes them' })),
      }, { additionalProperties: false, examples: [{ events: ['message.delivered', 'message.failed', 'message.read'], enabled: true }] }),
      response: { 200: ok('The endpoint as changed', ref(EventEndpoint), exampleOf(EventEndpoint)), ...adminErrors, 404: endpointNotFound, 422: badUrl },
    },
  }, async (request) => {
    const { after } = await updateEndpoint(db, deps, OPERATOR, request.params.endpoint_id, request.body, { companyId: request.query.company_id }); // audited with the body as given
    return after;
  });

  r.delete('/admin/event-endpoints/:endpoint_id', {
    schema: {
      tags, operationId: 'delete_event_endpoint', summary: 'Remove an event endpoint with its pending deliveries and attempt log',
      params: endpointParams, querystring: companyScope,
      response: { 204: noContent('Removed'), ...adminErrors, 404: endpointNotFound, 422: badEndpointId },
    },
  }, async (request, reply) => {
    await removeEndpoint(db, OPERATOR, request.params.endpoint_id, { companyId: request.query.company_id }); // audited as event_endpoint.delete
    return reply.code(204).send();
  });

  r.post('/admin/event-endpoints/:endpoint_id/secret/rotate', {
    schema: {
      tags, operationId: 'rotate_event_endpoint_secret', summary: 'Replace the signing secret (the new one is answered this once)',
      params: endpointParams, querystring: companyScope,
      response: { 200: ok('The new secret; the old one stops signing at once', ref(EventEndpointSecret), exampleOf(EventEndpointSecret)), ...adminErrors, 404: endpointNotFound, 422: badEndpointId },
    },
  }, async (request) => {
    const { endpoint, secret } = await rotateEndpointSecret(db, deps, OPERATOR, request.params.endpoint_id, { companyId: request.query.company_id });
    return { endpoint_id: endpoint.endpoint_id, secret };
  });

  r.get('/admin/event-endpoints/:endpoint_id/secret', {
    schema: {
      tags, operationId: 'reveal_event_endpoint_secret', summary: 'Reveal the signing secret (audit-logged)',
      params: endpointParams, querystring: companyScope,
      response: {
        200: ok('The secret (never cached)', ref(EventEndpointSecret), exampleOf(EventEndpointSecret), {
          'cache-control': { type: 'string', description: 'always `no-store`: the secret must not be kept by caches', examples: ['no-store'] },
        }),
        ...adminErrors, 404: endpointNotFound, 422: badEndpointId,
      },
    },
  }, async (request, reply) => {
    const { endpoint, secret } = await revealEndpointSecret(db, deps, OPERATOR, request.params.endpoint_id, { companyId: request.query.company_id }); // audited
    reply.header('cache-control', 'no-store');
    return { endpoint_id: endpoint.endpoint_id, secret };
  });

  r.post('/admin/event-endpoints/:endpoint_id/test', {
    schema: {
      tags, operationId: 'test_event_endpoint', summary: 'Send one signed test event (type endpoint.test) now and answer its outcome',
      params: endpointParams, querystring: companyScope,
      response: { 200: ok('The outcome of the attempt (not retried)', ref(TestEventOutcome), exampleOf(TestEventOutcome)), ...adminErrors, 404: endpointNotFound, 422: badEndpointId },
    },
  }, async (request) => {
    const { outcome } = await testEndpoint(db, deps, OPERATOR, request.params.endpoint_id, (target) => sendTestEvent({
      client: deps.delivery, ...target, now: new Date(deps.clock.now()),
    }), { companyId: request.query.company_id }); // audited as event_endpoint.test
    return { event_id: outcome.event_id, ok: outcome.ok, status_code: outcome.status_code, error: outcome.error, response_excerpt: outcome.response_excerpt, duration_ms: outcome.duration_ms };
  });

  r.get('/admin/event-endpoints/:endpoint_id/attempts', {
    schema: {
      tags, operationId: 'list_event_attempts', summary: 'The attempt log of an endpoint, newest first',
      params: endpointParams,
      querystring: Type.Object({
        company_id: companyScope.properties.company_id,
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'at most this many attempts' })),
      }),
      response: {
        200: ok('The attempts, newest first', Type.Object({ attempts: Type.Array(ref(EventAttempt)) }), { attempts: [exampleOf(EventAttempt)] }),
        ...adminErrors, 404: endpointNotFound,
        422: invalid({ type: 'maximum', loc: ['query', 'limit'], msg: 'must be <= 1000' }, 'The endpoint id, company_id or limit is out of range'),
      },
    },
  }, async (request) => {
    const row = await findEndpoint(db, request.params.endpoint_id, request.query.company_id);
    const attempts = await selectAttempts(db, row.endpoint_id, request.query.limit ?? 100);
    return {
      attempts: attempts.map((a) => ({
        event_id: a.event_id, type: a.type, attempt: a.attempt, status_code: a.status_code, error: a.error,
        response_excerpt: a.response_excerpt, duration_ms: a.duration_ms, at: iso(new Date(a.at)),
      })),
    };
  });

  r.post('/admin/event-endpoints/:endpoint_id/replay', {
    schema: {
      tags, operationId: 'replay_events', summary: 'Send every subscribed event of the company created since a time again (same ids)',
      params: endpointParams, querystring: companyScope,
      body: Type.Object({ since: Type.String({ format: 'date-time', description: 'RFC 3339, from 1970-01-01T00:00:00Z to now' }) }, { additionalProperties: false, examples: [{ since: '2026-03-01T00:00:00Z' }] }),
      response: {
        202: ok('Queued for delivery', Type.Object({ events: Type.Integer({ minimum: 0, description: 'events queued again' }) }), { events: 128 }),
        ...adminErrors, 404: endpointNotFound,
        409: conflict('The endpoint is disabled', 'the endpoint is disabled; enable it before replaying events'),
        422: invalid({ type: 'format', loc: ['body', 'since'], msg: 'must match format "date-time"' }),
      },
    },
  }, async (request, reply) => {
    const since = new Date(request.body.since);
    if (Number.isNaN(since.getTime())) throw invalidInput(['body', 'since'], 'since must be an RFC 3339 time', 'format', request.body.since);
    // Events are stamped by the database's clock, so `since` is judged by the wall clock.
    const sinceProblem = replaySinceProblem(since.getTime(), Date.now());
    if (sinceProblem) throw invalidInput(['body', 'since'], sinceProblem, 'value_error', request.body.since);
    const { events } = await replayEvents(db, OPERATOR, request.params.endpoint_id, since, { companyId: request.query.company_id }); // audited
    return reply.code(202).send({ events });
  });

  r.post('/admin/events/:event_id/resend', {
    schema: {
      tags, operationId: 'resend_event', summary: 'Send an event again (same webhook-id) to each enabled endpoint subscribed to it',
      params: Type.Object({ event_id: Type.String({ maxLength: 64, description: 'the event id (`evt_` + 32 hex digits, the webhook-id)', examples: [EVENT_ID_EXAMPLE] }) }),
      querystring: companyScope,
      response: {
        202: ok('Queued for delivery', Type.Object({ events: Type.Literal(1), deliveries: Type.Integer({ minimum: 0, description: 'endpoints it was queued for' }) }), { events: 1, deliveries: 2 }),
        ...adminErrors,
        404: notFound('Event not found', 'No such event (or, with `company_id`, another company\'s)'),
        422: invalid({ type: 'maxLength', loc: ['path', 'event_id'], msg: 'must NOT have more than 64 characters' }, 'The event id or company_id is malformed'),
      },
    },
  }, async (request, reply) => {
    const r2 = await resendEvent(db, OPERATOR, request.params.event_id, { companyId: request.query.company_id }); // audited as event.resend
    return reply.code(202).send({ events: 1 as const, deliveries: r2.deliveries });
  });
}

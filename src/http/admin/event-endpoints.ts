/**
 * Operator API: event endpoints, their attempt log, resend and replay (receipts-and-events.md §5).
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
 * Unknown ids answer 404 `{"detail": "Event endpoint not found"}` / `"Event not found"`. Every change is
 * audit-logged (secrets never).
 */
import type { FastifyInstance } from 'fastify';
import { recordAudit } from '../../domain/audit.ts';
import { getCompany } from '../../domain/companies.ts';
import { DomainError } from '../../domain/errors.ts';
import {
  createEndpoint, DESCRIPTION_MAX, EVENT_TYPES, findEndpoint, listEndpoints, removeEndpoint, replayEvents, resendEvent,
  revealEndpointSecret, rotateEndpointSecret, updateEndpoint, URL_MAX, endpointView, type EndpointInput, type EndpointPatch,
} from '../../domain/event-endpoints.ts';
import { selectAttempts } from '../../db/events.ts';
import { sendTestEvent } from '../../queue/events/test-event.ts';
import type { AppDeps } from '../deps.ts';
import { detailResponse, idParam } from './schemas.ts';

const tags = ['operator: event endpoints'];

const endpointSchema = {
  type: 'object',
  properties: {
    endpoint_id: { type: 'integer' }, company_id: { type: 'integer' }, url: { type: 'string' },
    events: { type: 'array', items: { type: 'string' } }, description: { type: ['string', 'null'] },
    enabled: { type: 'boolean' }, disabled_reason: { type: ['string', 'null'] },
    failing_since: { type: ['string', 'null'], format: 'date-time' }, created_at: { type: 'string', format: 'date-time' },
  },
} as const;

const createdSchema = { ...endpointSchema, properties: { ...endpointSchema.properties, secret: { type: 'string' } } } as const;
const secretSchema = { type: 'object', properties: { endpoint_id: { type: 'integer' }, secret: { type: 'string' } } } as const;

const eventsProp = { type: 'array', minItems: 1, maxItems: 9, items: { type: 'string', maxLength: 64 }, description: `event types: ${EVENT_TYPES.join(', ')}` } as const;
const endpointProps = {
  url: { type: 'string', minLength: 1, maxLength: URL_MAX, description: 'http(s) URL; must pass the network guard' },
  events: eventsProp,
  description: { type: ['string', 'null'], maxLength: DESCRIPTION_MAX },
} as const;

const companyScope = {
  type: 'object', properties: { company_id: { type: 'integer', minimum: 1, maximum: 2147483647, description: 'answer 404 unless it is this company\'s' } },
} as const;

const validation = { type: 'object', properties: { detail: {} } } as const;

export function registerEventEndpointRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const audit = (action: string, endpointId: number, companyId: number, details: Record<string, unknown> = {}) =>
    recordAudit(db, { actor: 'admin', action, target: `event_endpoint:${endpointId}`, company_id: companyId, details });

  app.post<{ Params: { company_id: number }; Body: EndpointInput }>('/admin/companies/:company_id/event-endpoints', {
    schema: {
      tags, operationId: 'create_event_endpoint', summary: 'Register an event endpoint (the signing secret is answered this once)',
      params: idParam('company_id'),
      body: { type: 'object', required: ['url'], additionalProperties: false, properties: endpointProps },
      response: { 201: createdSchema, 404: detailResponse, 409: detailResponse, 422: validation },
    },
  }, async (request, reply) => {
    const created = await createEndpoint(db, deps, request.params.company_id, request.body);
    await audit('event_endpoint.create', created.endpoint_id, created.company_id, { url: created.url, events: created.events, description: created.description });
    return reply.code(201).send(created);
  });

  app.get<{ Params: { company_id: number } }>('/admin/companies/:company_id/event-endpoints', {
    schema: {
      tags, operationId: 'list_event_endpoints', summary: "A company's event endpoints (no secrets)", params: idParam('company_id'),
      response: { 200: { type: 'object', properties: { endpoints: { type: 'array', items: endpointSchema } } }, 404: detailResponse },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    return { endpoints: await listEndpoints(db, company.company_id) };
  });

  app.get<{ Params: { endpoint_id: number }; Querystring: { company_id?: number } }>('/admin/event-endpoints/:endpoint_id', {
    schema: {
      tags, operationId: 'get_event_endpoint', summary: 'Read an event endpoint (no secret)', params: idParam('endpoint_id'), querystring: companyScope,
      response: { 200: endpointSchema, 404: detailResponse },
    },
  }, async (request) => endpointView(await findEndpoint(db, request.params.endpoint_id, request.query.company_id)));

  app.patch<{ Params: { endpoint_id: number }; Querystring: { company_id?: number }; Body: EndpointPatch }>('/admin/event-endpoints/:endpoint_id', {
    schema: {
      tags, operationId: 'update_event_endpoint', summary: 'Change an event endpoint (enabling it again clears disabled_reason)',
      params: idParam('endpoint_id'), querystring: companyScope,
      body: { type: 'object', additionalProperties: false, properties: { ...endpointProps, enabled: { type: 'boolean' } } },
      response: { 200: endpointSchema, 404: detailResponse, 422: validation },
    },
  }, async (request) => {
    const { before, after } = await updateEndpoint(db, deps, request.params.endpoint_id, request.body, request.query.company_id);
    await audit('event_endpoint.update', before.endpoint_id, before.company_id, { ...request.body });
    return after;
  });

  app.delete<{ Params: { endpoint_id: number }; Querystring: { company_id?: number } }>('/admin/event-endpoints/:endpoint_id', {
    schema: {
      tags, operationId: 'delete_event_endpoint', summary: 'Remove an event endpoint with its pending deliveries and attempt log',
      params: idParam('endpoint_id'), querystring: companyScope, response: { 204: { type: 'null' }, 404: detailResponse },
    },
  }, async (request, reply) => {
    const row = await removeEndpoint(db, request.params.endpoint_id, request.query.company_id);
    await audit('event_endpoint.delete', row.endpoint_id, row.company_id, { url: row.url });
    return reply.code(204).send();
  });

  app.post<{ Params: { endpoint_id: number }; Querystring: { company_id?: number } }>('/admin/event-endpoints/:endpoint_id/secret/rotate', {
    schema: {
      tags, operationId: 'rotate_event_endpoint_secret', summary: 'Replace the signing secret (the new one is answered this once)',
      params: idParam('endpoint_id'), querystring: companyScope, response: { 200: secretSchema, 404: detailResponse },
    },
  }, async (request) => {
    const { endpoint, secret } = await rotateEndpointSecret(db, deps, request.params.endpoint_id, request.query.company_id);
    await audit('event_endpoint.rotate_secret', endpoint.endpoint_id, endpoint.company_id);
    return { endpoint_id: endpoint.endpoint_id, secret };
  });

  app.get<{ Params: { endpoint_id: number }; Querystring: { company_id?: number } }>('/admin/event-endpoints/:endpoint_id/secret', {
    schema: {
      tags, operationId: 'reveal_event_endpoint_secret', summary: 'Reveal the signing secret (audit-logged)',
      params: idParam('endpoint_id'), querystring: companyScope, response: { 200: secretSchema, 404: detailResponse },
    },
  }, async (request, reply) => {
    const row = await findEndpoint(db, request.params.endpoint_id, request.query.company_id);
    const secret = await revealEndpointSecret(db, deps, row.endpoint_id);
    await audit('event_endpoint.reveal_secret', row.endpoint_id, row.company_id);
    reply.header('cache-control', 'no-store');
    return { endpoint_id: row.endpoint_id, secret };
  });

  app.post<{ Params: { endpoint_id: number }; Querystring: { company_id?: number } }>('/admin/event-endpoints/:endpoint_id/test', {
    schema: {
      tags, operationId: 'test_event_endpoint', summary: 'Send one signed test event (type endpoint.test) now and answer its outcome',
      params: idParam('endpoint_id'), querystring: companyScope,
      response: {
        200: {
          type: 'object', properties: {
            event_id: { type: 'string' }, ok: { type: 'boolean' }, status_code: { type: ['integer', 'null'] }, error: { type: ['string', 'null'] },
            response_excerpt: { type: ['string', 'null'] }, duration_ms: { type: 'integer' },
          },
        },
        404: detailResponse,
      },
    },
  }, async (request) => {
    const row = await findEndpoint(db, request.params.endpoint_id, request.query.company_id);
    const outcome = await sendTestEvent({
      url: row.url, secret: deps.openSecret(row.secret_sealed), endpointId: row.endpoint_id, policy: deps.addressPolicy,
      timeoutMs: deps.config.deliveryTimeoutMs, now: new Date(deps.clock.now()),
    });
    await audit('event_endpoint.test', row.endpoint_id, row.company_id, { ok: outcome.ok, status_code: outcome.status_code });
    return outcome;
  });

  app.get<{ Params: { endpoint_id: number }; Querystring: { company_id?: number; limit?: number } }>('/admin/event-endpoints/:endpoint_id/attempts', {
    schema: {
      tags, operationId: 'list_event_attempts', summary: 'The attempt log of an endpoint, newest first',
      params: idParam('endpoint_id'),
      querystring: { type: 'object', properties: { ...companyScope.properties, limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } } },
      response: {
        200: {
          type: 'object', properties: {
            attempts: {
              type: 'array', items: {
                type: 'object', properties: {
                  event_id: { type: 'string' }, type: { type: 'string' }, attempt: { type: 'integer' },
                  status_code: { type: ['integer', 'null'] }, error: { type: ['string', 'null'] }, response_excerpt: { type: ['string', 'null'] },
                  duration_ms: { type: 'integer' }, at: { type: 'string', format: 'date-time' },
                },
              },
            },
          },
        },
        404: detailResponse,
      },
    },
  }, async (request) => {
    const row = await findEndpoint(db, request.params.endpoint_id, request.query.company_id);
    const attempts = await selectAttempts(db, row.endpoint_id, request.query.limit ?? 100);
    return { attempts: attempts.map((a) => ({ ...a, at: new Date(a.at).toISOString() })) };
  });

  app.post<{ Params: { endpoint_id: number }; Querystring: { company_id?: number }; Body: { since: string } }>('/admin/event-endpoints/:endpoint_id/replay', {
    schema: {
      tags, operationId: 'replay_events', summary: 'Send every subscribed event of the company created since a time again (same ids)',
      params: idParam('endpoint_id'), querystring: companyScope,
      body: { type: 'object', required: ['since'], additionalProperties: false, properties: { since: { type: 'string', format: 'date-time', description: 'RFC 3339' } } },
      response: { 202: { type: 'object', properties: { events: { type: 'integer' } } }, 404: detailResponse, 409: detailResponse, 422: validation },
    },
  }, async (request, reply) => {
    const since = new Date(request.body.since);
    if (Number.isNaN(since.getTime())) throw new DomainError(422, 'since must be an RFC 3339 time');
    const { endpoint, events } = await replayEvents(db, request.params.endpoint_id, since, request.query.company_id);
    await audit('event_endpoint.replay', endpoint.endpoint_id, endpoint.company_id, { since: since.toISOString(), events });
    return reply.code(202).send({ events });
  });

  app.post<{ Params: { event_id: string }; Querystring: { company_id?: number } }>('/admin/events/:event_id/resend', {
    schema: {
      tags, operationId: 'resend_event', summary: 'Send an event again (same webhook-id) to each enabled endpoint subscribed to it',
      params: { type: 'object', required: ['event_id'], properties: { event_id: { type: 'string', maxLength: 64 } } }, querystring: companyScope,
      response: { 202: { type: 'object', properties: { events: { type: 'integer' }, deliveries: { type: 'integer' } } }, 404: detailResponse },
    },
  }, async (request, reply) => {
    const r = await resendEvent(db, request.params.event_id, request.query.company_id);
    await recordAudit(db, { actor: 'admin', action: 'event.resend', target: `event:${request.params.event_id}`, company_id: r.company_id, details: { deliveries: r.deliveries } });
    return reply.code(202).send({ events: 1, deliveries: r.deliveries });
  });
}

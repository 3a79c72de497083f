/**
 * /healthz (the process is up) and /readyz (the database answers), for load balancers and probes.
 * No authentication (`security: []`). Their schemas are inline (the root scope serialises with them).
 * Probes come every few seconds: their requests are not logged at `info` (route log level `warn`).
 */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from './deps.ts';
import { sendDetail, UNAVAILABLE_RETRY_AFTER_S } from './errors.ts';
import { HEADERS } from './openapi-schemas.ts';

const detail = { type: 'object', required: ['detail'], properties: { detail: { type: 'string' } } } as const;

export function registerHealthRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get('/healthz', {
    logLevel: 'warn',
    schema: {
      tags: ['health'], operationId: 'healthz', summary: 'The process is up', security: [],
      description: 'Liveness: answers as long as the process serves HTTP; reads nothing.',
      response: {
        200: { description: 'Up', type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } }, examples: [{ status: 'ok' }] },
      },
    },
  }, async () => ({ status: 'ok' }));
  app.get('/readyz', {
    logLevel: 'warn',
    schema: {
      tags: ['health'], operationId: 'readyz', summary: 'The database is reachable', security: [],
      description: 'Readiness: 200 when the database answers within 2 seconds, else 503.',
      response: {
        200: {
          description: 'Ready', type: 'object', required: ['status', 'database'],
          properties: { status: { type: 'string', enum: ['ok'] }, database: { type: 'string', enum: ['pglite', 'postgres'] } },
          examples: [{ status: 'ok', database: 'postgres' }],
        },
        503: {
          description: 'The database does not answer',
          headers: { 'Retry-After': { ...HEADERS['Retry-After'].schema, description: HEADERS['Retry-After'].description } },
          ...detail, examples: [{ detail: 'Service unavailable' }],
        },
      },
    },
  }, async (_request, reply) => {
    try {
      await Promise.race([
        deps.database.ping(),
        new Promise((_, reject) => setTimeout(() => reject(new Error('ping timeout')), 2_000).unref()),
      ]);
      return { status: 'ok', database: deps.database.kind };
    } catch {
      return sendDetail(reply, 503, 'Service unavailable', { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_S) });
    }
  });
}

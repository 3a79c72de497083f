/** /healthz (the process is up) and /readyz (the database answers), for load balancers and probes. */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from './deps.ts';
import { sendDetail, UNAVAILABLE_RETRY_AFTER_S } from './errors.ts';

export function registerHealthRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get('/healthz', { schema: { tags: ['health'], summary: 'The process is up' } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { tags: ['health'], summary: 'The database is reachable' } }, async (_request, reply) => {
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

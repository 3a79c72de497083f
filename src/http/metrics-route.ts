/**
 * GET /metrics: the process's Prometheus metrics in text exposition format, and an
 * onResponse hook that counts every answered request by method, route pattern and status code (labels
 * `method`, `route`, `code`). The route label is Fastify's pattern (`/admin/batches/:batch_id`), or
 * `unmatched` for paths no route serves, so label cardinality stays bounded whatever clients send.
 */
import type { FastifyInstance } from 'fastify';
import { httpDuration, httpRequests, registry } from '../metrics.ts';

/** Adds GET /metrics and the request-counting hook to `app` (call once, before routes are added or after). */
export function registerMetrics(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions?.url ?? 'unmatched';
    const method = request.method;
    httpRequests.inc({ method, route, code: String(reply.statusCode) });
    httpDuration.observe({ method, route }, reply.elapsedTime / 1000);
  });

  // Scraped every few seconds: not logged at `info`.
  app.get('/metrics', {
    logLevel: 'warn',
    schema: {
      tags: ['operations'], operationId: 'metrics', security: [],
      summary: 'Prometheus metrics (text exposition format)',
      description: 'HTTP requests by route and status, rate-limit refusals, queue and delivery figures, Node.js process metrics. No authentication.',
      response: {
        200: {
          description: 'Prometheus text format 0.0.4',
          content: {
            'text/plain': {
              schema: { type: 'string' },
              examples: { excerpt: { summary: 'An excerpt', value: '# HELP cms_http_requests_total HTTP requests\n# TYPE cms_http_requests_total counter\ncms_http_requests_total{method="POST",route="/api/automations/send",code="200"} 1042\n# HELP process_resident_memory_bytes Resident memory size in bytes.\n# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 98304000\n' } },
            },
          },
        },
      },
    },
  }, async (_request, reply) => {
    const text = await registry.metrics();
    return reply.header('content-type', registry.contentType).send(text);
  });
}

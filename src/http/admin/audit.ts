/** Operator API: the audit log (issue 5 item 6), newest first. */
import type { FastifyInstance } from 'fastify';
import { listAudit } from '../../domain/audit.ts';
import type { AppDeps } from '../deps.ts';

export function registerAuditRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Querystring: { company_id?: number; limit?: number } }>('/admin/audit', {
    schema: {
      tags: ['operator: audit'], summary: 'Operator actions: who, what, when (newest first)',
      querystring: {
        type: 'object',
        properties: { company_id: { type: 'integer', minimum: 1, maximum: 2147483647 }, limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
      },
    },
  }, async (request) => ({
    entries: await listAudit(deps.database.db, { companyId: request.query.company_id, limit: request.query.limit }),
  }));
}

/** Operator API: batch status and messages (operator-api.md GET /admin/batches/{id}[/messages]). */
import type { FastifyInstance } from 'fastify';
import { getBatch, listBatchMessages } from '../../domain/batches.ts';
import type { AppDeps } from '../deps.ts';

export function registerBatchRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const params = { type: 'object', required: ['batch_id'], properties: { batch_id: { type: 'string', maxLength: 64 } } } as const;

  app.get<{ Params: { batch_id: string } }>('/admin/batches/:batch_id', {
    schema: { tags: ['operator: batches'], summary: 'Status and counts of a send batch', params },
  }, async (request) => {
    const b = await getBatch(db, request.params.batch_id);
    return {
      batch_id: b.batch_id, kind: b.kind, company_id: b.company_id, source_id: b.source_id, status: b.status,
      counts: b.counts, ignored_contacts: b.ignored_contacts, created_at: b.created_at, completed_at: b.completed_at,
    };
  });

  app.get<{ Params: { batch_id: string } }>('/admin/batches/:batch_id/messages', {
    schema: { tags: ['operator: batches'], summary: 'The messages of a send batch with their final status', params },
  }, async (request) => ({ messages: await listBatchMessages(db, request.params.batch_id) }));
}

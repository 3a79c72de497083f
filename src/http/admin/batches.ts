/**
 * Operator API: batch status and messages (operator-api.md GET /admin/batches/{id}[/messages];
 * receipts-and-events.md §1: the funnel counts sent / delivered / read and each message's lifecycle
 * fields). 404 `{"detail":"Batch not found"}` for an unknown or malformed id.
 */
import type { FastifyInstance } from 'fastify';
import { getBatch, listBatchMessages } from '../../domain/batches.ts';
import type { AppDeps } from '../deps.ts';
import { detailResponse } from './schemas.ts';

const time = { type: 'string', format: 'date-time' } as const;
const count = { type: 'integer', minimum: 0 } as const;

const batchSchema = {
  type: 'object',
  properties: {
    batch_id: { type: 'string' },
    kind: { type: 'string', enum: ['automation', 'campaign'] },
    company_id: { type: 'integer' },
    source_id: { type: 'integer' },
    status: { type: 'string', enum: ['accepted', 'processing', 'completed'] },
    counts: {
      type: 'object',
      description: 'sent = sent + delivered + read messages; delivered = delivered + read; total = sent + failed + skipped + pending',
      properties: { total: count, sent: count, delivered: count, read: count, failed: count, skipped: count, pending: count },
    },
    ignored_contacts: count,
    created_at: time,
    completed_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

const messageSchema = {
  type: 'object',
  properties: {
    message_id: { type: 'string' },
    phone: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'sent', 'delivered', 'read', 'failed', 'skipped'] },
    reason: { type: 'string' },
    error: { type: 'string' },
    error_code: { type: 'string', description: "the provider's error code (WhatsApp's numeric code, a webhook answer's HTTP status)" },
    attempts: count,
    scheduled_for: time,
    next_attempt_at: { ...time, description: 'a pending message waiting for a retry: when it is attempted again' },
    provider_message_id: { type: 'string', description: "WhatsApp's wamid; the webhook provider's webhook-id" },
    sent_at: time,
    delivered_at: time,
    read_at: time,
    failed_at: time,
    rendered: {},
  },
} as const;

/** Registers GET /admin/batches/{batch_id} and GET /admin/batches/{batch_id}/messages. */
export function registerBatchRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const params = { type: 'object', required: ['batch_id'], properties: { batch_id: { type: 'string', maxLength: 64 } } } as const;
  const tags = ['operator: batches'];

  app.get<{ Params: { batch_id: string } }>('/admin/batches/:batch_id', {
    schema: {
      tags, operationId: 'get_batch', summary: 'Status and funnel counts of a send batch', params,
      response: { 200: batchSchema, 404: detailResponse },
    },
  }, async (request) => {
    const b = await getBatch(db, request.params.batch_id);
    return {
      batch_id: b.batch_id, kind: b.kind, company_id: b.company_id, source_id: b.source_id, status: b.status,
      counts: b.counts, ignored_contacts: b.ignored_contacts, created_at: b.created_at, completed_at: b.completed_at,
    };
  });

  app.get<{ Params: { batch_id: string } }>('/admin/batches/:batch_id/messages', {
    schema: {
      tags, operationId: 'list_batch_messages', summary: 'The messages of a send batch: status, times, provider id, next attempt', params,
      response: { 200: { type: 'object', properties: { messages: { type: 'array', items: messageSchema } } }, 404: detailResponse },
    },
  }, async (request) => ({ messages: await listBatchMessages(db, request.params.batch_id) }));
}

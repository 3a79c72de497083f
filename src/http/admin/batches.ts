/**
 * Operator API: batch status and messages (docs/operator-api.md GET /admin/batches/{id}[/messages];
 * docs/decisions.md#7-a-messages-life: the funnel counts sent / delivered / read and each message's lifecycle
 * fields), typed from TypeBox schemas (components.ts pattern).
 *
 * | route | answers |
 * |---|---|
 * | GET /admin/batches/{batch_id} | 200 `Batch`; 401; 404 `Batch not found` (unknown or malformed id); 422 (id over 64 characters) |
 * | GET /admin/batches/{batch_id}/messages?after=&limit=&status=&phone= | 200 `MessagePage` `{messages: Message[], next}` in batch order, keyset pages (domain/batch-messages.ts); 401; 404; 422 |
 * | GET /admin/companies/{company_id}/batches?limit=&before= | 200 `BatchPage` newest first (keyset pages, domain/batches.ts `listCompanyBatches`); 401; 404 `Company not found`; 422 (bad id, limit or before) |
 * | POST /admin/batches/{batch_id}/cancel | 200 `CancelAnswer` `{batch_id, cancelled, before_fan_out}`: what the send has not handed to a provider ends skipped, reason `cancelled` (src/domain/batch-control.ts); again: 200 with cancelled 0; 401; 404; 422 |
 * | POST /admin/batches/{batch_id}/pause | 200 `Batch` (status `paused`; again: the same); 401; 404; 409 `Batch is completed` / `Batch is cancelled`; 422 |
 * | POST /admin/batches/{batch_id}/resume | 200 `Batch` (a batch not paused: unchanged); 401; 404; 409 as pause; 422 |
 *
 * Pause and resume: src/domain/batch-control.ts (docs/decisions.md "Cancel, pause and resume").
 *
 * The list serves `cms batch list`, the cancel `cms batch cancel`.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { OPERATOR } from '../../domain/actor.ts';
import { getBatch, listCompanyBatches, type MessageView } from '../../domain/batches.ts';
import { cancelBatch, pauseBatch, resumeBatch } from '../../domain/batch-control.ts';
import { listMessagePage, MESSAGE_PAGE_DEFAULT, MESSAGE_PAGE_MAX, MESSAGE_STATUSES } from '../../domain/batch-messages.ts';
import { DomainError } from '../../domain/errors.ts';
import { getCompany } from '../../domain/companies.ts';
import type { AppDeps } from '../deps.ts';
import { addComponents, adminErrors, component, conflict, exampleOf, idParams, invalid, invalidInput, iso, notFound, ok, ref, renderedContent, TIME_EXAMPLE } from './components.ts';

const time = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });
const count = Type.Integer({ minimum: 0 });
const BATCH_ID_EXAMPLE = '0b6f3c1e-6f0a-4a55-9d1e-2f8f3a7c9b10';

/** A batch's funnel: sent = sent + delivered + read messages; delivered = delivered + read; total = sent + failed + skipped + pending. */
export const BatchCounts = component('BatchCounts', Type.Object({
  total: count, sent: count, delivered: count, read: count, failed: count, skipped: count, pending: count,
}, { description: 'sent = sent + delivered + read messages; delivered = delivered + read; total = sent + failed + skipped + pending' }),
{ total: 3, sent: 2, delivered: 1, read: 0, failed: 0, skipped: 1, pending: 0 });

/** A send batch (one accepted trigger or campaign send) with its counts. */
export const Batch = component('Batch', Type.Object({
  batch_id: Type.String({ format: 'uuid' }),
  kind: Type.Union([Type.Literal('automation'), Type.Literal('campaign')]),
  company_id: Type.Integer(),
  source_id: Type.Integer({ description: 'the automation or campaign id' }),
  status: Type.Union([Type.Literal('accepted'), Type.Literal('processing'), Type.Literal('paused'), Type.Literal('completed')], {
    description: 'accepted → processing → completed; paused while an operator holds the batch back (POST /admin/batches/{batch_id}/pause, until resume)',
  }),
  counts: ref(BatchCounts),
  waiting: Type.Record(Type.String(), count, {
    description: 'pending messages that wait for something, by reason: channel_paused, template_paused, messaging_limit, pair_rate, marketing_held (docs/whatsapp.md); messages waiting for delivery hours or a retry are not counted here',
  }),
  ignored_contacts: Type.Integer({ minimum: 0, description: 'contacts of the request dropped as duplicates' }),
  created_at: time(),
  completed_at: Type.Union([time(), Type.Null()], { description: 'when every message reached a final status' }),
}), {
  batch_id: BATCH_ID_EXAMPLE, kind: 'campaign', company_id: 12, source_id: 8, status: 'completed',
  counts: exampleOf(BatchCounts), waiting: { messaging_limit: 120, pair_rate: 2 }, ignored_contacts: 0, created_at: TIME_EXAMPLE, completed_at: '2026-03-02T09:30:04.210Z',
});

/** What a provider was asked to deliver (docs/operator-api.md "`rendered`"; src/domain/render.ts `Rendered`). */
export const MessageRendered = component('MessageRendered', Type.Object({
  message_id: Type.String({ format: 'uuid' }),
  batch_id: Type.String({ format: 'uuid' }),
  company_id: Type.Integer(),
  kind: Type.Union([Type.Literal('automation'), Type.Literal('campaign')]),
  source_id: Type.Integer({ description: 'the automation or campaign id' }),
  ...renderedContent,
}, { additionalProperties: true, description: 'The message as handed to the provider (the body of a webhook delivery)' }), {
  message_id: '5c0e2d7a-1b3f-4e8d-9a6c-7f2e1d0b9a83', batch_id: BATCH_ID_EXAMPLE, company_id: 12, kind: 'campaign', source_id: 8,
  to: '+4915112345678', header: { type: 'none' }, body: 'Hi Anna, 20 % off all shoes this week.', buttons: [],
});

/** One message of a batch; optional fields appear only when set. */
export const Message = component('Message', Type.Object({
  message_id: Type.String({ format: 'uuid' }),
  phone: Type.String({ description: 'E.164, or the text given when it is not a number (then skipped, reason invalid_phone)' }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('delivered'), Type.Literal('read'), Type.Literal('failed'), Type.Literal('skipped')]),
  reason: Type.Optional(Type.String({ description: 'why skipped (invalid_phone, opted_out, frequency_cap, cancelled, expired, empty_parameter ...), or what a pending message waits for (channel_paused, template_paused, messaging_limit, pair_rate, marketing_held)' })),
  error: Type.Optional(Type.String({ description: 'why it failed (the last error while pending for a retry)' })),
  error_code: Type.Optional(Type.String({ description: "the provider's error code (WhatsApp's numeric code, a webhook answer's HTTP status)" })),
  attempts: count,
  scheduled_for: Type.Optional(time('held for the delivery hours until then')),
  next_attempt_at: Type.Optional(time('a pending message waiting for a retry (or for what `reason` names): when it is attempted again')),
  provider_message_id: Type.Optional(Type.String({ description: "WhatsApp's wamid; the webhook provider's webhook-id" })),
  sent_at: Type.Optional(time()),
  delivered_at: Type.Optional(time()),
  read_at: Type.Optional(time()),
  failed_at: Type.Optional(time()),
  provider_error: Type.Optional(Type.Object({
    code: Type.String(),
    title: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    message: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    details: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  }, { description: "the provider's error as it gave it (WhatsApp: Meta's code, title, message and error_data.details)" })),
  expires_at: Type.Optional(time('not handed to the provider by then, the message ends skipped, reason `expired`')),
  rendered: Type.Union([ref(MessageRendered), Type.Null()], { description: 'the message as handed to the provider; null until rendered (and for a message that never is, e.g. an invalid number)' }),
}), {
  message_id: '5c0e2d7a-1b3f-4e8d-9a6c-7f2e1d0b9a83', phone: '+4915112345678', status: 'delivered', attempts: 1,
  provider_message_id: 'wamid.HBgNNDkxNTExMjM0NTY3OBUCABEYEjQ2QzdCMjM0', sent_at: '2026-03-02T09:30:02.120Z', delivered_at: '2026-03-02T09:30:03.900Z',
  rendered: exampleOf(MessageRendered),
});

/** One page of a company's batches, newest first. */
export const BatchPage = component('BatchPage', Type.Object({
  batches: Type.Array(ref(Batch), { description: 'newest first (acceptance time, then batch id)' }),
  next_before: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'pass as `before` for the next (older) page; null on the last page' }),
}), { batches: [exampleOf(Batch)], next_before: BATCH_ID_EXAMPLE });

/** One page of a batch's messages (GET /admin/batches/{id}/messages). */
export const MessagePage = component('MessagePage', Type.Object({
  messages: Type.Array(ref(Message), { description: 'at most `limit` messages, in batch order' }),
  next: Type.Union([Type.String(), Type.Null()], { description: 'pass as `after` (with the same filters) for the next page; null on the last page. Opaque' }),
}), { messages: [exampleOf(Message)], next: '99' });

/** The query of GET /admin/batches/{id}/messages. */
const MessagePageQuery = Type.Object({
  after: Type.Optional(Type.String({ maxLength: 32, description: 'the `next` of the previous page: messages after it', examples: ['99'] })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MESSAGE_PAGE_MAX, default: MESSAGE_PAGE_DEFAULT, description: 'at most this many messages', examples: [MESSAGE_PAGE_DEFAULT] })),
  status: Type.Optional(Type.Union(MESSAGE_STATUSES.map((st) => Type.Literal(st)), { description: "only messages with this status (the message's own: a read message is `read`)" })),
  phone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "only messages to this number: E.164 (or national, in the company's default country), or 4+ of its digits", examples: ['+4915112345678'] })),
});

/** A batch as answered (times as RFC 3339). */
function batchJson(b: Awaited<ReturnType<typeof getBatch>>) {
  return {
    batch_id: b.batch_id, kind: b.kind, company_id: b.company_id, source_id: b.source_id, status: b.status,
    counts: b.counts, waiting: b.waiting, ignored_contacts: b.ignored_contacts, created_at: iso(b.created_at), completed_at: iso(b.completed_at),
  };
}

/** A message with its times as RFC 3339 (the fields of MessageView that are set). */
function messageJson(m: MessageView) {
  const t = (d: Date | undefined) => (d === undefined ? undefined : iso(d));
  return {
    ...m, scheduled_for: t(m.scheduled_for), next_attempt_at: t(m.next_attempt_at), sent_at: t(m.sent_at),
    delivered_at: t(m.delivered_at), read_at: t(m.read_at), failed_at: t(m.failed_at), expires_at: t(m.expires_at),
    // The stored jsonb is the render's `Rendered` (src/domain/render.ts), or null.
    rendered: m.rendered as Static<typeof MessageRendered> | null,
  };
}

/** The answer of a cancel. */
export const CancelAnswer = component('CancelAnswer', Type.Object({
  batch_id: Type.String({ format: 'uuid' }),
  cancelled: Type.Integer({ description: 'messages this cancel stopped: those not handed to a provider (pending and not claimed by a delivery run) and those not written yet; each ends skipped with reason cancelled (the last ones within seconds). 0 when the batch was completed or cancelled already' }),
  before_fan_out: Type.Boolean({ description: 'none of the batch\'s messages was written yet (the fan-out writes each skipped / cancelled)' }),
}), { batch_id: BATCH_ID_EXAMPLE, cancelled: 118, before_fan_out: false });

/** Registers the routes of the module comment. */
export function registerBatchRoutes(app: FastifyInstance, deps: AppDeps): void {
  const db = deps.database.db;
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  addComponents(app, [BatchCounts, Batch, MessageRendered, Message, MessagePage, BatchPage, CancelAnswer]);
  const params = Type.Object({ batch_id: Type.String({ maxLength: 64, description: 'the batch id (a UUID) answered by the send', examples: [BATCH_ID_EXAMPLE] }) });
  const tags = ['operator: batches'];
  const errors = {
    ...adminErrors,
    404: notFound('Batch not found', 'No such batch (an id that is not a UUID too)'),
    422: invalid({ type: 'maxLength', loc: ['path', 'batch_id'], msg: 'must NOT have more than 64 characters' }),
  };

  r.get('/admin/batches/:batch_id', {
    schema: {
      tags, operationId: 'get_batch', summary: 'Status and funnel counts of a send batch', params,
      response: { 200: ok('The batch', ref(Batch), exampleOf(Batch)), ...errors },
    },
  }, async (request) => batchJson(await getBatch(db, request.params.batch_id)));

  r.get('/admin/batches/:batch_id/messages', {
    schema: {
      tags, operationId: 'list_batch_messages', params,
      summary: 'The messages of a send batch, a page at a time (keyset `after` / `next`), filtered by status or phone: status, times, provider id, next attempt',
      querystring: MessagePageQuery,
      response: {
        200: ok('One page of messages in batch order; `next` is the cursor of the following page (null on the last)', ref(MessagePage), exampleOf(MessagePage)),
        ...errors,
        422: invalid({ type: 'value_error', loc: ['query', 'after'], msg: 'not a cursor of this list (use `next` of the previous page)' }, 'A malformed id, `limit` outside 1..1000, an `after` that is not a `next`, an unknown `status`, a `phone` that is neither a number nor 4+ digits'),
      },
    },
  }, async (request) => {
    const q = request.query;
    try {
      const page = await listMessagePage(db, request.params.batch_id, undefined, { after: q.after, limit: q.limit, status: q.status, phone: q.phone });
      return { messages: page.messages.map(messageJson), next: page.next };
    } catch (err) {
      if (err instanceof DomainError && err.status === 422) {
        const field = err.detail.split(':')[0];
        throw invalidInput(['query', field], err.detail.slice(field.length + 2), 'value_error', q[field as keyof typeof q]);
      }
      throw err;
    }
  });

  const control = {
    200: ok('The batch as it is now (status `paused` while paused)', ref(Batch), { ...exampleOf(Batch), status: 'paused', completed_at: null }),
    ...errors,
    409: conflict('The batch is completed (`Batch is completed`) or cancelled (`Batch is cancelled`): nothing to pause or resume; nothing changed', 'Batch is completed'),
  };
  r.post('/admin/batches/:batch_id/pause', {
    schema: {
      tags, operationId: 'pause_batch', params,
      summary: 'Pause a send: nothing more is handed to a provider until resume',
      description: 'From the answer on, nothing more of the batch is handed to a provider: only messages a delivery run had already claimed can still be sent (at most 2 × 32 per delivery run, in practice those in flight). Every other message stays pending (held ones keep their time) and the batch shows `paused` until `POST /admin/batches/{batch_id}/resume`. Pausing a paused batch changes nothing.',
      response: control,
    },
  }, async (request) => {
    return batchJson(await pauseBatch(deps, OPERATOR, request.params.batch_id));
  });

  r.post('/admin/batches/:batch_id/resume', {
    schema: {
      tags, operationId: 'resume_batch', params,
      summary: 'Resume a paused send: its pending messages are delivered again',
      description: 'Clears the pause: the batch\'s pending messages are enqueued for delivery again within seconds (held ones at their time); nothing is lost and nothing is sent twice. Resuming a batch that is not paused changes nothing.',
      response: control,
    },
  }, async (request) => {
    return batchJson(await resumeBatch(deps, OPERATOR, request.params.batch_id));
  });

  r.get('/admin/companies/:company_id/batches', {
    schema: {
      tags, operationId: 'list_company_batches', summary: "A company's send batches with their counts, newest first, a page at a time",
      params: idParams('company_id', 'the company', 12),
      querystring: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'at most this many batches', examples: [20] })),
        before: Type.Optional(Type.String({ format: 'uuid', description: 'the `next_before` of the previous page: batches older than this one', examples: [BATCH_ID_EXAMPLE] })),
      }),
      response: {
        200: ok('One page of batches (empty when the company has none, or none older than `before`)', ref(BatchPage), exampleOf(BatchPage)),
        ...adminErrors,
        404: notFound('Company not found', 'No such company'),
        422: invalid({ type: 'maximum', loc: ['query', 'limit'], msg: 'must be <= 100' }),
      },
    },
  }, async (request) => {
    const company = await getCompany(db, request.params.company_id);
    const page = await listCompanyBatches(db, company.company_id, { limit: request.query.limit ?? 20, before: request.query.before });
    return { batches: page.batches.map(batchJson), next_before: page.next_before };
  });

  r.post('/admin/batches/:batch_id/cancel', {
    schema: {
      tags: ['operator: batches'], operationId: 'cancel_batch', summary: 'Cancel what a send has not handed to a provider (ends skipped, reason cancelled)',
      description: 'Answers within a short transaction at any moment of a send. From the answer on, nothing more of the batch is handed to a provider: only messages a delivery run had already claimed can still be sent (at most 2 × 32 per delivery run, in practice those in flight); every other message ends skipped with reason `cancelled`. A scheduled send can be cancelled before it starts. A completed or already cancelled batch answers 200 with `cancelled: 0`.',
      params: Type.Object({ batch_id: Type.String({ maxLength: 64, description: 'the batch id (a UUID)', examples: [BATCH_ID_EXAMPLE] }) }),
      response: {
        200: ok('Cancelled (again: 200 with cancelled 0)', ref(CancelAnswer), exampleOf(CancelAnswer)),
        ...adminErrors,
        404: notFound('Batch not found', 'No such batch (an id that is not a UUID too)'),
        422: invalid({ type: 'maxLength', loc: ['path', 'batch_id'], msg: 'must NOT have more than 64 characters' }),
      },
    },
  }, async (request) => {
    return cancelBatch(deps, OPERATOR, request.params.batch_id);
  });
}

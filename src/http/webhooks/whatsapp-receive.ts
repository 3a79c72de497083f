/**
 * POST /webhooks/whatsapp (receipts-and-events.md §3): Meta's statuses and inbound messages.
 *
 * 1. The raw body must be JSON of Meta's shape (`object: "whatsapp_business_account"`, every
 *    `entry[].changes[].value` with `metadata.phone_number_id`): else 400.
 * 2. Every phone_number_id must be a company's WhatsApp channel with an app secret, and
 *    `X-Hub-Signature-256` must verify (constant time) with each of their app secrets: else 401 (an
 *    unknown phone_number_id is 401 too: nobody here can vouch for the payload). Nothing is written.
 * 3. One durable `receipts-apply` job per company is enqueued, then 200 `{"statuses": n, "messages": m}`:
 *    the answer waits only for the job INSERT, never for applying.
 */
import type { FastifyInstance } from 'fastify';
import { findWhatsappChannels } from '../../db/receipts.ts';
import { PayloadError, parseWhatsappPayload, verifyHubSignature, type InboundItem, type StatusItem } from '../../domain/receipts.ts';
import type { ReceiptsJob } from '../../queue/handlers/receipts-apply.ts';
import { storable } from '../../domain/storable.ts';
import type { AppDeps } from '../deps.ts';
import { sendDetail } from '../errors.ts';
import { webhookDetail } from './plugin.ts';

/**
 * Parses the raw body as JSON (PayloadError when it is not) and makes its strings storable (U+0000 and
 * lone surrogates become U+FFFD: PostgreSQL's text refuses them; the signature was over the bytes).
 */
export function parseJson(raw: unknown): unknown {
  if (!Buffer.isBuffer(raw) || raw.length === 0) throw new PayloadError('body must be JSON');
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new PayloadError('body must be JSON');
  }
  try {
    return storable(value);
  } catch {
    throw new PayloadError('body is nested too deeply'); // RangeError: the walk's stack ran out
  }
}

export function registerWhatsappReceive(app: FastifyInstance, deps: AppDeps): void {
  app.post('/webhooks/whatsapp', {
    schema: {
      tags: ['webhooks'], operationId: 'whatsappWebhookReceive',
      summary: "Meta's WhatsApp webhooks: message statuses and inbound messages (signed X-Hub-Signature-256)",
      description: 'Body: Meta\'s payload, at most 4 MiB (413 beyond). Applied durably after the answer. See docs/whatsapp.md.',
      headers: { type: 'object', properties: { 'x-hub-signature-256': { type: 'string', description: 'sha256=<hex HMAC-SHA256 of the raw body with the app secret>' } } },
      response: {
        200: { description: 'Accepted: enqueued for applying', type: 'object', properties: { statuses: { type: 'integer' }, messages: { type: 'integer' } } },
        400: { description: 'Not JSON, or not the shape of a WhatsApp Business webhook', ...webhookDetail },
        401: { description: 'Missing or wrong signature, or a phone_number_id that is not a WhatsApp channel with an app secret here', ...webhookDetail },
        413: { description: 'Body over 4 MiB', ...webhookDetail },
      },
    },
  }, async (request, reply) => {
    const raw = request.body as Buffer;
    let changes;
    try {
      changes = parseWhatsappPayload(parseJson(raw));
    } catch (err) {
      if (err instanceof PayloadError) return sendDetail(reply, 400, err.message);
      throw err;
    }
    const ids = [...new Set(changes.map((c) => c.phoneNumberId))];
    const channels = await findWhatsappChannels(deps.database.db, ids);
    const byNumber = new Map(channels.map((c) => [c.phone_number_id, c]));
    const header = request.headers['x-hub-signature-256'];
    for (const id of ids) {
      const channel = byNumber.get(id);
      let secret: string | undefined;
      try {
        secret = channel?.app_secret_sealed ? deps.openSecret(channel.app_secret_sealed) : undefined;
      } catch {
        secret = undefined;
      }
      if (!secret || !verifyHubSignature(raw, typeof header === 'string' ? header : undefined, secret)) {
        return sendDetail(reply, 401, 'Invalid signature');
      }
    }
    const jobs = new Map<number, { statuses: StatusItem[]; messages: InboundItem[] }>();
    let statuses = 0;
    let messages = 0;
    for (const change of changes) {
      const companyId = byNumber.get(change.phoneNumberId)!.company_id;
      let job = jobs.get(companyId);
      if (!job) jobs.set(companyId, (job = { statuses: [], messages: [] }));
      for (const s of change.statuses) job.statuses.push(s);
      for (const m of change.messages) job.messages.push(m);
      statuses += change.statuses.length;
      messages += change.messages.length;
    }
    for (const [companyId, job] of jobs) {
      if (job.statuses.length === 0 && job.messages.length === 0) continue;
      const data: ReceiptsJob = { company_id: companyId, by: 'provider_message_id', source: 'whatsapp', statuses: job.statuses, ...(job.messages.length ? { messages: job.messages } : {}) };
      await deps.boss.send('receipts-apply', data);
    }
    return reply.code(200).send({ statuses, messages });
  });
}

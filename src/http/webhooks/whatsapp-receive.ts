/**
 * POST /webhooks/whatsapp (receipts-and-events.md §3): Meta's statuses and inbound messages.
 *
 * 1. The raw body must be JSON of Meta's shape (`object: "whatsapp_business_account"`, every
 *    `entry[].changes[].value` with `metadata.phone_number_id`): else 400.
 * 2. Every phone_number_id must be a company's WhatsApp channel with an app secret, and
 *    `X-Hub-Signature-256` must verify (constant time) with each of their app secrets: else 401 (an
 *    unknown phone_number_id is 401 too: nobody here can vouch for the payload). Nothing is written.
 *    An app secret that cannot be decrypted (SECRETS_KEY changed) is 401 too, logged at `error`.
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
import { errorSchemas } from '../openapi-schemas.ts';

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

/**
 * Meta's payload as far as the route reads it (documentation: the route checks the shape itself, 400);
 * other properties are allowed and ignored.
 */
const whatsappPayloadSchema = {
  type: 'object', required: ['object', 'entry'], additionalProperties: true,
  properties: {
    object: { type: 'string', enum: ['whatsapp_business_account'] },
    entry: {
      type: 'array', minItems: 1,
      items: {
        type: 'object', required: ['changes'], additionalProperties: true,
        properties: {
          id: { type: 'string', description: 'WhatsApp Business Account id' },
          changes: {
            type: 'array',
            items: {
              type: 'object', required: ['value'], additionalProperties: true,
              properties: {
                field: { type: 'string' },
                value: {
                  type: 'object', required: ['metadata'], additionalProperties: true,
                  properties: {
                    messaging_product: { type: 'string', enum: ['whatsapp'] },
                    metadata: {
                      type: 'object', required: ['phone_number_id'], additionalProperties: true,
                      properties: { phone_number_id: { type: 'string', pattern: '^[0-9]+$', description: 'the sending number of a company\'s WhatsApp channel' }, display_phone_number: { type: 'string' } },
                    },
                    contacts: { type: 'array', items: { type: 'object', additionalProperties: true, description: 'Meta\'s contact profiles (ignored)' } },
                    statuses: { type: 'array', items: { type: 'object', additionalProperties: true, description: 'Meta\'s status object: id (wamid), status, timestamp, recipient_id, errors' } },
                    messages: { type: 'array', items: { type: 'object', additionalProperties: true, description: 'Meta\'s message object: from, id, timestamp, type, text' } },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;

export function registerWhatsappReceive(app: FastifyInstance, deps: AppDeps): void {
  app.post('/webhooks/whatsapp', {
    schema: {
      tags: ['webhooks'], operationId: 'whatsapp_webhook_receive',
      summary: "Meta's WhatsApp webhooks: message statuses and inbound messages (signed X-Hub-Signature-256)",
      description: 'Body: Meta\'s payload, at most 4 MiB (413 beyond). Applied durably after the answer. See docs/whatsapp.md.',
      headers: {
        type: 'object',
        properties: { 'x-hub-signature-256': { type: 'string', description: 'sha256=<hex HMAC-SHA256 of the raw body with the app secret>', examples: ['sha256=5f1d0c7e9b2a4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c2d'] } },
      },
      body: whatsappPayloadSchema,
      response: {
        200: {
          description: 'Accepted: enqueued for applying',
          type: 'object', required: ['statuses', 'messages'],
          properties: { statuses: { type: 'integer', description: 'statuses in the payload' }, messages: { type: 'integer', description: 'inbound messages in the payload' } },
        },
        400: { description: 'Not JSON, or not the shape of a WhatsApp Business webhook', ...errorSchemas.detail },
        401: { description: 'Missing or wrong signature, or a phone_number_id that is not a WhatsApp channel with an app secret here', ...errorSchemas.detail },
        413: { description: 'Body over 4 MiB', ...errorSchemas.detail },
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
        // Not the sender's fault: the operator must see it (issue 13, first-hour traps).
        request.log.error({ company_id: channel?.company_id, phone_number_id: id }, 'cannot decrypt the WhatsApp app secret of this channel (was SECRETS_KEY changed?): webhook refused with 401');
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

/**
 * POST /webhooks/provider/status (docs/decisions.md#10-gateway-receipts): receipts from a gateway behind the webhook
 * provider, `{"statuses":[{message_id, status: delivered|read|failed, timestamp: RFC 3339, error?: {code,
 * title}}]}`, signed as Standard Webhooks sign (`webhook-id`, `webhook-timestamp`, `webhook-signature`)
 * with the company's webhook-channel secret, the same key bytes the provider signs with (webhookKey()).
 *
 * - Malformed JSON or shape: 400.
 * - Every message_id must be a message of one company whose channel is the webhook provider, and the
 *   signature must verify with its secret, the timestamp within 5 minutes (the `standardwebhooks`
 *   library's tolerance, real time): else 401, nothing written.
 * - A channel secret that cannot be decrypted (SECRETS_KEY changed) is 401 too, logged at `error`.
 * - Then one durable `receipts-apply` job (lookup by message_id) and 200 `{"statuses": n}`.
 */
import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { companiesOfMessages } from '../../db/receipts.ts';
import { isMessageId, PayloadError, parseGatewayPayload } from '../../domain/receipts.ts';
import { webhookKey } from '../../delivery/sign.ts';
import type { AppDeps } from '../deps.ts';
import { sendDetail } from '../errors.ts';
import { errorSchemas } from '../openapi-schemas.ts';
import { parseJson } from './whatsapp-receive.ts';

/** True when the Standard Webhooks headers verify `raw` with the operator's webhook secret. */
export function verifyGatewaySignature(raw: Buffer, headers: Record<string, unknown>, secret: string): boolean {
  const h: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const v = headers[name];
    if (typeof v !== 'string' || v.length === 0) return false;
    h[name] = v;
  }
  try {
    new Webhook(webhookKey(secret).toString('base64')).verify(raw.toString('utf8'), h);
    return true;
  } catch {
    return false;
  }
}

/** The gateway's receipts (documentation: the route checks the shape itself, 400). */
const gatewayPayloadSchema = {
  type: 'object', required: ['statuses'],
  properties: {
    statuses: {
      type: 'array', minItems: 1,
      items: {
        type: 'object', required: ['message_id', 'status', 'timestamp'],
        properties: {
          message_id: { type: 'string', format: 'uuid', description: 'The message id the webhook provider sent' },
          status: { type: 'string', enum: ['delivered', 'read', 'failed'] },
          timestamp: { type: 'string', format: 'date-time', description: 'RFC 3339' },
          error: { type: ['object', 'null'], properties: { code: { type: ['string', 'integer'] }, title: { type: 'string' } } },
        },
      },
    },
  },
} as const;

export function registerProviderStatus(app: FastifyInstance, deps: AppDeps): void {
  app.post('/webhooks/provider/status', {
    schema: {
      tags: ['webhooks'], operationId: 'provider_status_receive',
      summary: 'Receipts from a gateway behind the webhook provider (Standard Webhooks signature)',
      description: 'See docs/decisions.md#10-gateway-receipts and docs/whatsapp.md. At most 4 MiB (413 beyond).',
      headers: {
        type: 'object',
        properties: {
          'webhook-id': { type: 'string', examples: ['msg_2Lh7kQ9rXc3vB1nT'] },
          'webhook-timestamp': { type: 'string', description: 'Unix seconds', examples: ['1780315205'] },
          'webhook-signature': { type: 'string', description: 'v1,<base64 HMAC-SHA256>', examples: ['v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='] },
        },
      },
      body: gatewayPayloadSchema,
      response: {
        200: { description: 'Accepted: enqueued for applying', type: 'object', required: ['statuses'], properties: { statuses: { type: 'integer', description: 'receipts in the payload' } } },
        400: { description: 'Not JSON, or not the documented shape', ...errorSchemas.detail },
        401: { description: 'Unknown message ids, ids of several companies, wrong signature or a timestamp older than 5 minutes', ...errorSchemas.detail },
        413: { description: 'Body over 4 MiB', ...errorSchemas.detail },
      },
    },
  }, async (request, reply) => {
    const raw = request.body as Buffer;
    let statuses;
    try {
      statuses = parseGatewayPayload(parseJson(raw));
    } catch (err) {
      if (err instanceof PayloadError) return sendDetail(reply, 400, err.message);
      throw err;
    }
    const ids = [...new Set(statuses.map((s) => s.id.toLowerCase()))];
    if (!ids.every(isMessageId)) return sendDetail(reply, 401, 'Unknown message_id');
    for (const s of statuses) s.id = s.id.toLowerCase();
    const owners = await companiesOfMessages(deps.database.db, ids);
    const owner = owners.length === 1 && owners[0].n === ids.length ? owners[0] : undefined;
    if (!owner || owner.provider !== 'webhook' || !owner.secret_sealed) return sendDetail(reply, 401, 'Unknown message_id');
    let secret: string;
    try {
      secret = deps.openSecret(owner.secret_sealed);
    } catch {
      request.log.error({ company_id: owner.company_id }, 'cannot decrypt the webhook channel secret (was SECRETS_KEY changed?): receipts refused with 401');
      return sendDetail(reply, 401, 'Invalid signature');
    }
    if (!verifyGatewaySignature(raw, request.headers as Record<string, unknown>, secret)) return sendDetail(reply, 401, 'Invalid signature');
    await deps.boss.send('receipts-apply', { company_id: owner.company_id, by: 'message_id', source: 'gateway', statuses });
    return reply.code(200).send({ statuses: statuses.length });
  });
}

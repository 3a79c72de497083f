/**
 * GET /webhooks/whatsapp (docs/decisions.md#9-whatsapp-webhooks-in): Meta's verification handshake. With
 * `hub.mode=subscribe`, `hub.verify_token=T` and `hub.challenge=C` it answers 200 text/plain `C` when T is
 * the verify token of some WhatsApp channel (found by its SHA-256, src/db/receipts.ts), else 403.
 */
import type { FastifyInstance } from 'fastify';
import { verifyTokenExists } from '../../db/receipts.ts';
import { verifyTokenDigest } from '../../domain/receipts.ts';
import type { AppDeps } from '../deps.ts';
import { sendDetail } from '../errors.ts';
import { errorSchemas } from '../openapi-schemas.ts';

export function registerWhatsappVerify(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Querystring: Record<string, unknown> }>('/webhooks/whatsapp', {
    schema: {
      tags: ['webhooks'], operationId: 'whatsapp_webhook_verify',
      summary: "Meta's webhook verification handshake (docs/whatsapp.md)",
      querystring: {
        type: 'object',
        properties: {
          'hub.mode': { type: 'string', enum: ['subscribe'] },
          'hub.verify_token': { type: 'string', maxLength: 512, description: 'The verify token set on the company\'s WhatsApp channel', examples: ['b7c41e0a2f9d4c3e'] },
          'hub.challenge': { type: 'string', maxLength: 1024, description: 'Echoed as the answer', examples: ['1158201444'] },
        },
      },
      response: {
        200: {
          description: 'The challenge, as sent (text/plain)',
          headers: { 'x-content-type-options': { type: 'string', enum: ['nosniff'], description: 'The echoed text is never sniffed as HTML' } },
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
        403: { description: 'Not a subscribe request, or not the verify token of any WhatsApp channel', ...errorSchemas.detail },
      },
    },
  }, async (request, reply) => {
    const q = request.query ?? {};
    const mode = q['hub.mode'];
    const token = q['hub.verify_token'];
    const challenge = q['hub.challenge'];
    const ok = mode === 'subscribe' && typeof token === 'string' && token.length > 0 && token.length <= 512
      && typeof challenge === 'string' && challenge.length > 0 && challenge.length <= 1024
      && await verifyTokenExists(deps.database.db, verifyTokenDigest(token));
    if (!ok) return sendDetail(reply, 403, 'Verification failed');
    return reply.code(200).header('content-type', 'text/plain; charset=utf-8').header('x-content-type-options', 'nosniff').send(challenge);
  });
}

/**
 * Provider webhooks in (docs/decisions.md#9-whatsapp-webhooks-in, #10-gateway-receipts): public routes (no admin token, no API key) that
 * authenticate by the provider's signature instead.
 *
 * - GET  /webhooks/whatsapp          Meta's verification handshake (whatsapp-verify.ts)
 * - POST /webhooks/whatsapp          Meta's statuses and inbound messages (whatsapp-receive.ts)
 * - POST /webhooks/provider/status   receipts of a webhook-provider gateway (provider-status.ts)
 *
 * They live in their own scope: the raw body of any Content-Type is read as bytes (signatures are over
 * the exact bytes), at most WEBHOOK_BODY_LIMIT (413 beyond), and parsed and checked by the routes
 * themselves (400 for malformed JSON or a wrong shape, never 500).
 */
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.ts';
import { registerProviderStatus } from './provider-status.ts';
import { registerWhatsappReceive } from './whatsapp-receive.ts';
import { registerWhatsappVerify } from './whatsapp-verify.ts';

/**
 * Largest webhook body: 4 MiB. Meta batches at most a few hundred statuses per POST (about 300 bytes
 * each); 4 MiB holds over 10,000, so a legitimate payload never meets it and a 10 MB body is a 413.
 */
export const WEBHOOK_BODY_LIMIT = 4 * 1024 * 1024;

/** Registers the webhook routes in their own scope. */
export async function registerWebhooks(app: FastifyInstance, deps: AppDeps): Promise<void> {
  await app.register(async (scope) => {
    // Any Content-Type (even a malformed one, which Fastify would refuse with 415) reaches the route as bytes.
    scope.addHook('onRequest', async (request) => {
      if (request.headers['content-type'] !== undefined) request.raw.headers['content-type'] = 'application/octet-stream';
    });
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_req, body, done) => done(null, body));
    // The schemas document the routes; the routes check their input themselves (the signature comes first).
    scope.setValidatorCompiler(() => () => true);
    scope.setSerializerCompiler(() => (data) => JSON.stringify(data));
    // No token: every payload is authenticated by the provider's signature (documented as `security: []`).
    scope.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, security: [] };
    });
    registerWhatsappVerify(scope, deps);
    registerWhatsappReceive(scope, deps);
    registerProviderStatus(scope, deps);
  });
}

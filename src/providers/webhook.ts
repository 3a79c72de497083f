/**
 * The `webhook` provider (operator-api.md): POST of `rendered` as JSON to the company's URL, signed as
 * Standard Webhooks do:
 *
 *   webhook-id:        the message id (the same on every attempt, so receivers can de-duplicate)
 *   webhook-timestamp: integer seconds since the epoch (real time, not the service's injectable clock:
 *                      receivers compare it with their own clock)
 *   webhook-signature: `v1,` + base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`))
 *
 * Key derivation from the operator's secret (issue 13): `whsec_<base64>` → the base64-decoded bytes
 * (the Standard Webhooks format: receivers verify with `new Webhook(secret)` of the `standardwebhooks`
 * package). A secret without the prefix is used as its UTF-8 bytes, whatever it looks like (never
 * base64-decoded): receivers verify with `new Webhook(secret, { format: 'raw' })`. When the operator
 * sets the channel without a secret, `generateWebhookSecret` makes one (`whsec_` + 32 random bytes).
 *
 * Connections are kept alive (one shared undici Agent, a pool per origin). Each attempt is bounded by
 * `timeoutMs` (DELIVERY_TIMEOUT, connect to last byte). 2xx is sent, with the `webhook-id` (the message
 * id) as the provider's message id; 408, 429, 5xx, timeouts, connection errors and responses that are
 * not HTTP are retryable (receipts-and-events.md §2); any other status (3xx included: redirects are not
 * followed) fails at once. The HTTP status is the failure's code; a retryable answer's Retry-After is
 * passed on to the retry decision (providers/retry.ts).
 */
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { Agent, request } from 'undici';
import { guardedLookup, type AddressPolicy } from '../domain/network-guard.ts';
import type { Rendered } from '../domain/render.ts';
import { attemptSignal, networkFailure, retryAfterMs } from './http-failure.ts';
import type { Provider, SendResult } from './types.ts';

/** Connections kept per receiving origin. */
export const WEBHOOK_CONNECTIONS_PER_ORIGIN = 128;

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Prefix of Standard Webhooks secrets: `whsec_` + base64 of the key bytes. */
export const WHSEC_PREFIX = 'whsec_';

/** The HMAC key of an operator's webhook secret: `whsec_` + base64 → those bytes; else its UTF-8 bytes. */
export function webhookKey(secret: string): Buffer {
  if (secret.startsWith(WHSEC_PREFIX)) return Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64');
  return Buffer.from(secret, 'utf8');
}

/** Why a `whsec_` secret is malformed (its rest is not non-empty base64, padding optional), or undefined when fine. */
export function webhookSecretProblem(secret: string): string | undefined {
  if (!secret.startsWith(WHSEC_PREFIX)) return undefined;
  const rest = secret.slice(WHSEC_PREFIX.length);
  // Padding may be left out (Node and the reference libraries decode it); anything else is refused.
  if (rest.length === 0 || !STRICT_BASE64.test(rest.length % 4 === 0 ? rest : rest + '='.repeat(4 - (rest.length % 4)))) return 'a secret starting with whsec_ must continue with base64 (Standard Webhooks); a secret without the prefix is used as its UTF-8 bytes';
  return undefined;
}

/** A new Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return WHSEC_PREFIX + randomBytes(32).toString('base64');
}

/** The Standard Webhooks signature header value for one delivery (a KeyObject saves per-call key setup). */
export function signWebhook(key: Buffer | KeyObject, id: string, timestamp: number, body: string): string {
  return 'v1,' + createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

/**
 * A keep-alive HTTP agent for provider requests (webhook and WhatsApp); connects only to addresses
 * `policy` allows; `timeoutMs` (DELIVERY_TIMEOUT) bounds connecting and each wait for data. Close it
 * when the workers stop.
 */
export function createWebhookAgent(policy: AddressPolicy, timeoutMs = 15_000): Agent {
  return new Agent({
    connect: { lookup: guardedLookup(policy) },
    connections: WEBHOOK_CONNECTIONS_PER_ORIGIN,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    connectTimeout: timeoutMs,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
}

export interface WebhookOptions {
  url: string;
  /** The operator's secret, already opened; kept only inside this closure. */
  secret: string;
  agent: Agent;
  /** One attempt's bound, connect to last byte (ms; DELIVERY_TIMEOUT). */
  timeoutMs: number;
}

/** A webhook provider for one company's URL and secret. */
export function webhookProvider(opts: WebhookOptions): Provider {
  const key = createSecretKey(webhookKey(opts.secret));
  const timeoutMs = opts.timeoutMs;
  return {
    name: 'webhook',
    async send(rendered: Rendered, signal?: AbortSignal): Promise<SendResult> {
      const body = JSON.stringify(rendered);
      const id = rendered.message_id;
      const timestamp = Math.floor(Date.now() / 1000);
      const attempt = attemptSignal(timeoutMs, signal);
      try {
        const res = await request(opts.url, {
          method: 'POST',
          dispatcher: opts.agent,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'cms-webhooks/1',
            'webhook-id': id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signWebhook(key, id, timestamp, body),
          },
          body,
          // The agent bounds connecting (connectTimeout); `attempt` bounds the whole attempt.
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          signal: attempt,
        });
        // Read (and drop) the answer so the connection can be reused.
        await res.body.dump({ limit: 64 * 1024, signal: attempt }).catch(() => {});
        const status = res.statusCode;
        if (attempt.aborted) return networkFailure(attempt.reason, timeoutMs, signal, attempt);
        if (status >= 200 && status < 300) return { status: 'sent', providerMessageId: id };
        const retryable = status === 408 || status === 429 || status >= 500;
        return {
          status: 'failed', retryable, error: `HTTP ${status}`, code: String(status),
          retryAfterMs: retryable ? retryAfterMs(res.headers['retry-after']) : undefined,
        };
      } catch (err) {
        return networkFailure(err, timeoutMs, signal, attempt);
      }
    },
  };
}

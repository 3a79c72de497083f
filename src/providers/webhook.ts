/**
 * The `webhook` provider (docs/operator-api.md): POST of `rendered` as JSON to the company's URL through the
 * one signed POST of outbound delivery (delivery/post.ts), signed as Standard Webhooks do with the
 * `standardwebhooks` library; `webhook-id` is the message id (the same on every attempt).
 *
 * The operator's secret: `whsec_<base64>` → the base64-decoded bytes are the key (receivers
 * verify with `new Webhook(secret)` of the `standardwebhooks` package); a secret without the prefix is
 * used as its UTF-8 bytes, whatever it looks like (never base64-decoded): receivers verify with
 * `new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' })` (delivery/sign.ts). When the operator sets the channel
 * without a secret, `generateWebhookSecret` makes one (`whsec_` + 32 random bytes).
 *
 * Requests go through the service's one outbound client (delivery/client.ts, use `messages`: kept-alive
 * connections, a pool per origin, network-guarded). Each attempt is bounded by DELIVERY_TIMEOUT
 * (connect to last byte). A 2xx answer read whole (at most
 * 64 KiB) is sent, with the `webhook-id` (the message id) as the provider's message id; everything
 * else is classified by delivery/failure.ts: 408, 429, 5xx, timeouts, connection errors, answers that
 * are not HTTP or larger than 64 KiB are retryable (docs/decisions.md#8-retries); any other status (3xx
 * included: redirects are not followed) fails at once. The HTTP status is the failure's code; a
 * retryable answer's Retry-After (capped at 7 days) is passed on to the retry decision (delivery/retry.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Webhook } from 'standardwebhooks';
import type { DeliveryClient } from '../delivery/client.ts';
import { createSigner, WHSEC_PREFIX } from '../delivery/sign.ts';
import type { Rendered } from '../domain/render.ts';
import type { SecretBox } from '../domain/secrets.ts';
import { brokenProvider } from './broken.ts';
import type { Provider, ProviderPlugin, SendResult } from './types.ts';

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

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

export interface WebhookOptions {
  url: string;
  /** The operator's secret, already opened; kept only inside this closure (as its signer). */
  secret: string;
  /** The service's outbound client (delivery/client.ts). */
  client: DeliveryClient;
}

/** A webhook provider for one company's URL and secret (an empty key fails each message at once). */
export function webhookProvider(opts: WebhookOptions): Provider {
  let signer: Webhook;
  try {
    signer = createSigner(opts.secret);
  } catch {
    return { name: 'webhook', async send() { return { status: 'failed', retryable: false, error: 'the webhook secret is empty' }; } };
  }
  return {
    name: 'webhook',
    async send(rendered: Rendered, signal?: AbortSignal): Promise<SendResult> {
      const id = rendered.message_id;
      const { failure } = await opts.client.postSigned('messages', {
        url: opts.url, id, body: JSON.stringify(rendered), signer, userAgent: 'cms-webhooks/1', signal,
      });
      return failure ?? { status: 'sent', providerMessageId: id };
    },
  };
}

/**
 * The webhook provider as it plugs in (providers/types.ts ProviderPlugin): a channel
 * `{provider:'webhook', url, secret_sealed}` becomes a webhookProvider; a secret that cannot be opened
 * or a URL whose literal address the guard refuses fails its messages. No periodic tasks.
 */
export function webhookPlugin(opts: { secrets: SecretBox; client: DeliveryClient }): ProviderPlugin {
  return {
    name: 'webhook',
    forChannel(channel) {
      const url = typeof channel.url === 'string' ? channel.url : '';
      let secret: string;
      try {
        secret = opts.secrets.open(typeof channel.secret_sealed === 'string' ? channel.secret_sealed : '');
      } catch {
        return brokenProvider('webhook', 'the webhook secret cannot be opened (was SECRETS_KEY changed?)');
      }
      const problem = opts.client.literalProblem(url);
      if (problem) return brokenProvider('webhook', problem);
      return webhookProvider({ url, secret, client: opts.client });
    },
  };
}

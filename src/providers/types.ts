/**
 * The provider interface (issue 3 item 4; operator-api.md "Providers"): one delivery attempt of a
 * rendered message. Retries with backoff live in `retry.ts`, shared by every provider; a provider only
 * classifies an attempt's outcome. Providers never log or return their secrets.
 */
import type { Rendered } from '../domain/render.ts';

/** Outcome of one attempt. `retryAfterMs`: the provider asked to wait at least this long (e.g. Retry-After). */
export type SendResult =
  | { status: 'sent' }
  | { status: 'failed'; retryable: boolean; error: string; retryAfterMs?: number };

export type ProviderName = 'outbox' | 'webhook' | 'whatsapp';

export interface Provider {
  readonly name: ProviderName;
  /**
   * Hands `rendered` to the provider once. Resolves (never rejects) with the outcome; `signal` aborts
   * a request in flight (the outcome is then a retryable failure).
   */
  send(rendered: Rendered, signal?: AbortSignal): Promise<SendResult>;
}

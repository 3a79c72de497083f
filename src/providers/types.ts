/**
 * The provider interface (issue 3 item 4; operator-api.md "Providers"): ONE delivery attempt of a
 * rendered message. A provider only classifies the attempt's outcome; what happens next (a retry on the
 * schedule, or a final failure) is decided by `retry.ts` (receipts-and-events.md §2) and carried out
 * by the delivery run. Providers never log or return their secrets.
 */
import type { Rendered } from '../domain/render.ts';

/**
 * Outcome of one attempt.
 * - `sent`: the provider took the message; `providerMessageId` is its id for it (WhatsApp's wamid, the
 *   webhook provider's `webhook-id`), used later to apply receipts (§1).
 * - `failed`: `retryable` says whether the failure is transient (§2); `code` is the provider's error
 *   code as text (WhatsApp's numeric code, the HTTP status of a webhook answer), when there is one;
 *   `retryAfterMs`: the provider asked to wait at least this long (Retry-After).
 */
export type SendResult =
  | { status: 'sent'; providerMessageId?: string }
  | { status: 'failed'; retryable: boolean; error: string; code?: string; retryAfterMs?: number };

export type ProviderName = 'outbox' | 'webhook' | 'whatsapp';

export interface Provider {
  readonly name: ProviderName;
  /**
   * Hands `rendered` to the provider once. Resolves (never rejects) with the outcome; `signal` aborts
   * a request in flight (the outcome is then a retryable failure).
   */
  send(rendered: Rendered, signal?: AbortSignal): Promise<SendResult>;
}

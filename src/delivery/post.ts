/**
 * The one signed POST of outbound delivery, for message webhooks (providers/webhook.ts) and event
 * endpoints (queue/events/send.ts): sign, POST, read the answer (bounded), classify.
 *
 *   webhook-id:        `id` (the same on every attempt, so receivers can de-duplicate)
 *   webhook-timestamp: integer seconds since the epoch of the attempt (real time, not the service's
 *                      injectable clock: receivers compare it with their own clock)
 *   webhook-signature: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` (the `standardwebhooks` signer)
 *
 * Bounded (exchange.ts): the whole attempt (connect to last byte) by `timeoutMs`; the answer is read up
 * to RESPONSE_CAP bytes (64 KiB) and its first EXCERPT_CHARS characters kept. An attempt is delivered only when a
 * 2xx answer arrived whole, in time and within the cap: a larger answer is cut off (the connection is
 * dropped) and is a retryable failure, like a timeout or a connection closed mid-answer. Never throws.
 */
import type { Dispatcher } from 'undici';
import type { Webhook } from 'standardwebhooks';
import { exchange, RESPONSE_CAP } from './exchange.ts';
import { statusFailure, type DeliveryFailure } from './failure.ts';

export { RESPONSE_CAP } from './exchange.ts';

/** Characters of the answer kept as its excerpt. */
export const EXCERPT_CHARS = 256;

export interface SignedPost {
  url: string;
  /** The `webhook-id`: a message id or an event id. */
  id: string;
  /** The exact body sent and signed (JSON text). */
  body: string;
  signer: Webhook;
  /** The guarded agent (agent.ts) the request goes through; the delivery client (client.ts) passes its own. */
  agent: Dispatcher;
  /** One attempt's bound, connect to last byte (ms; DELIVERY_TIMEOUT). */
  timeoutMs: number;
  /** The `user-agent` header. */
  userAgent: string;
  /** Interrupts the attempt (claim lost, workers stopping): a retryable `delivery interrupted`. */
  signal?: AbortSignal;
}

/**
 * What one attempt came to. `statusCode`: the answer's HTTP status, null when no answer arrived
 * (network error, timeout before the headers, interrupted, or the answer broke off before its end).
 * `excerpt`: the first EXCERPT_CHARS characters of the answer, null when none. `failure`: undefined
 * when delivered. `durationMs`: whole milliseconds from the start to the outcome.
 */
export interface PostOutcome {
  statusCode: number | null;
  excerpt: string | null;
  durationMs: number;
  failure?: DeliveryFailure;
}

/** POSTs `req.body` signed for `req.id` to `req.url` once (see the module comment); never throws. */
export async function postSigned(req: SignedPost): Promise<PostOutcome> {
  const now = new Date();
  const x = await exchange(req.agent, req.timeoutMs, {
    method: 'POST',
    url: req.url,
    headers: {
      'content-type': 'application/json',
      'user-agent': req.userAgent,
      'webhook-id': req.id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': req.signer.sign(req.id, now, req.body),
    },
    body: req.body,
    cap: RESPONSE_CAP,
    signal: req.signal,
  });
  // 256 characters need at most 768 bytes of UTF-8: the excerpt is read from the first 1 KiB.
  const excerpt = x.statusCode === null ? null : x.body.subarray(0, EXCERPT_CHARS * 4).toString('utf8').slice(0, EXCERPT_CHARS) || null;
  if (!x.answered) return { statusCode: x.statusCode, excerpt, durationMs: x.durationMs, failure: x.failure };
  return { statusCode: x.statusCode, excerpt, durationMs: x.durationMs, failure: statusFailure(x.statusCode, x.headers['retry-after']) };
}

/**
 * The one signed POST of outbound delivery, for message webhooks (providers/webhook.ts) and event
 * endpoints (queue/events/send.ts): sign, POST, read the answer (bounded), classify.
 *
 *   webhook-id:        `id` (the same on every attempt, so receivers can de-duplicate)
 *   webhook-timestamp: integer seconds since the epoch of the attempt (real time, not the service's
 *                      injectable clock: receivers compare it with their own clock)
 *   webhook-signature: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` (the `standardwebhooks` signer)
 *
 * Bounded: the whole attempt (connect to last byte) by `timeoutMs`; the answer is read up to
 * RESPONSE_CAP bytes and its first EXCERPT_CHARS characters kept. An attempt is delivered only when a
 * 2xx answer arrived whole, in time and within the cap: a larger answer is cut off (the connection is
 * dropped) and is a retryable failure, like a timeout or a connection closed mid-answer. Never throws.
 */
import type { Agent } from 'undici';
import { request } from 'undici';
import type { Webhook } from 'standardwebhooks';
import { Attempt, networkFailure, statusFailure, type DeliveryFailure } from './failure.ts';

/** Most bytes of an answer read (64 KiB); more is a failed attempt. */
export const RESPONSE_CAP = 64 * 1024;

/** Characters of the answer kept as its excerpt. */
export const EXCERPT_CHARS = 256;

export interface SignedPost {
  url: string;
  /** The `webhook-id`: a message id or an event id. */
  id: string;
  /** The exact body sent and signed (JSON text). */
  body: string;
  signer: Webhook;
  agent: Agent;
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
  const started = performance.now();
  const duration = () => Math.round(performance.now() - started);
  const attempt = new Attempt(req.timeoutMs, req.signal);
  try {
    const now = new Date();
    const res = await request(req.url, {
      method: 'POST',
      dispatcher: req.agent,
      headers: {
        'content-type': 'application/json',
        'user-agent': req.userAgent,
        'webhook-id': req.id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': req.signer.sign(req.id, now, req.body),
      },
      body: req.body,
      // The agent bounds connecting; `attempt` bounds the whole attempt and drops a too-large answer.
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
      signal: attempt.signal,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      if (size < EXCERPT_CHARS * 4) chunks.push(buf);
      size += buf.length;
      if (size > RESPONSE_CAP) {
        attempt.cut();
        break;
      }
    }
    const excerpt = Buffer.concat(chunks).toString('utf8').slice(0, EXCERPT_CHARS) || null;
    if (size > RESPONSE_CAP) {
      return { statusCode: res.statusCode, excerpt, durationMs: duration(), failure: { status: 'failed', retryable: true, error: `response larger than ${RESPONSE_CAP} bytes` } };
    }
    return { statusCode: res.statusCode, excerpt, durationMs: duration(), failure: statusFailure(res.statusCode, res.headers['retry-after']) };
  } catch (err) {
    return { statusCode: null, excerpt: null, durationMs: duration(), failure: networkFailure(err, req.timeoutMs, req.signal, attempt) };
  } finally {
    attempt.done();
  }
}

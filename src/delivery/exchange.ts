/**
 * One outbound HTTP exchange, bounded: the request through a network-guarded agent (agent.ts), the
 * whole attempt (connect to last byte) bounded by `timeoutMs` (DELIVERY_TIMEOUT), and the answer read
 * up to a byte cap and never further: an answer larger than its cap is cut off (the connection is
 * dropped) and is a retryable failure `response larger than <cap> bytes`, like a timeout or a
 * connection closed mid-answer (failure.ts). Never throws.
 *
 * The caps (bytes of an answer's body):
 * - RESPONSE_CAP, 64 KiB: message webhooks, WhatsApp message sends, event deliveries and test events
 *   (their answers are a status and a short body; a receiver answering more is misbehaving);
 * - TEMPLATES_RESPONSE_CAP, 4 MiB: one page of Meta's template list (100 templates with their
 *   components, a few KiB each at most) and a submitted template's answer.
 *
 * The client (client.ts) is the way in for the service's code; this module is the request itself.
 */
import { request, type Dispatcher } from 'undici';
import { Attempt, networkFailure, type DeliveryFailure } from './failure.ts';

/** Most bytes read of an answer of a message webhook, a WhatsApp send, an event (64 KiB); more is a failed attempt. */
export const RESPONSE_CAP = 64 * 1024;

/** Most bytes read of an answer of Meta's template endpoints (4 MiB: one page of 100 templates). */
export const TEMPLATES_RESPONSE_CAP = 4 * 1024 * 1024;

/** One request. `cap`: most bytes of the answer read (default RESPONSE_CAP). `signal` interrupts it. */
export interface OutboundRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  /** The exact body sent (JSON text), if any. */
  body?: string;
  cap?: number;
  signal?: AbortSignal;
}

/** An answer's headers as undici gives them. */
export type AnswerHeaders = Dispatcher.ResponseData['headers'];

/**
 * What one exchange came to. `answered: true`: a whole answer arrived in time and within the cap,
 * whatever its status (the caller classifies it, e.g. failure.ts `statusFailure`). `answered: false`:
 * no whole answer, `failure` says why (network error, refused address, timeout, interrupted, invalid
 * HTTP, too large); `statusCode` and `headers` are the answer's when it was cut off for its size (with
 * the first `cap` bytes in `body`), else null / {} / empty. `durationMs`: whole ms from start to outcome.
 */
export type Exchange =
  | { answered: true; statusCode: number; headers: AnswerHeaders; body: Buffer; durationMs: number }
  | { answered: false; statusCode: number | null; headers: AnswerHeaders; body: Buffer; durationMs: number; failure: DeliveryFailure };

/** The failure of an answer larger than `cap` bytes (retryable: the receiver may answer less next time). */
export function tooLarge(cap: number): DeliveryFailure {
  return { status: 'failed', retryable: true, error: `response larger than ${cap} bytes` };
}

/** Makes `req` through `dispatcher` (a guarded agent), bounded by `timeoutMs` (see the module comment); never throws. */
export async function exchange(dispatcher: Dispatcher, timeoutMs: number, req: OutboundRequest): Promise<Exchange> {
  const started = performance.now();
  const duration = () => Math.round(performance.now() - started);
  const cap = req.cap ?? RESPONSE_CAP;
  const attempt = new Attempt(timeoutMs, req.signal);
  try {
    const res = await request(req.url, {
      method: req.method,
      dispatcher,
      headers: req.headers,
      ...(req.body !== undefined ? { body: req.body } : {}),
      // The agent bounds connecting; `attempt` bounds the whole exchange and drops a too-large answer.
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: attempt.signal,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > cap) {
        chunks.push(buf.subarray(0, buf.length - (size - cap)));
        attempt.cut();
        break;
      }
      chunks.push(buf);
    }
    const body = Buffer.concat(chunks);
    if (size > cap) return { answered: false, statusCode: res.statusCode, headers: res.headers, body, durationMs: duration(), failure: tooLarge(cap) };
    return { answered: true, statusCode: res.statusCode, headers: res.headers, body, durationMs: duration() };
  } catch (err) {
    return { answered: false, statusCode: null, headers: {}, body: Buffer.alloc(0), durationMs: duration(), failure: networkFailure(err, timeoutMs, req.signal, attempt) };
  } finally {
    attempt.done();
  }
}

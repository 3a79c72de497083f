/**
 * What the HTTP providers (webhook, WhatsApp) share about failed attempts (receipts-and-events.md §2):
 * the one classifier of network errors, the Retry-After parser, and the per-attempt deadline.
 */
import type { SendResult } from './types.ts';

/** Longest Retry-After honoured (ms): a provider asking for more is waited on for a week at most. */
export const MAX_RETRY_AFTER_MS = 7 * 24 * 3600_000;

/**
 * Milliseconds a `Retry-After` header asks to wait: delta-seconds or an HTTP date (judged against
 * `now`, real time ms). Undefined when absent or unparseable; capped at MAX_RETRY_AFTER_MS.
 */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS);
  const at = /^[A-Za-z]{3}, /.test(value) ? Date.parse(value) : NaN; // IMF-fixdate (RFC 9110)
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/**
 * A signal that aborts when `outer` aborts or `timeoutMs` has passed: the bound of one attempt from
 * connecting to the last byte of the answer (DELIVERY_TIMEOUT).
 */
export function attemptSignal(timeoutMs: number, outer?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return outer ? AbortSignal.any([outer, timeout]) : timeout;
}

/**
 * Maps an undici / network error of one attempt to a failure with a short, secret-free reason:
 * interrupted (`outer` aborted: the job lost its claim or the workers stop), timeouts, invalid HTTP,
 * closed connections and other connection errors are retryable; a connection the network guard
 * refused (EADDRNOTALLOWED) is not. `attempt` is the attemptSignal the request ran under: when it fired
 * and `outer` did not, the attempt timed out.
 */
export function networkFailure(err: unknown, timeoutMs: number, outer?: AbortSignal, attempt?: AbortSignal): SendResult {
  if (outer?.aborted) return { status: 'failed', retryable: true, error: 'delivery interrupted' };
  const e = err as { code?: string; name?: string };
  const code = String(e?.code ?? e?.name ?? 'error');
  if (attempt?.aborted || /TIMEOUT/.test(code) || code === 'TimeoutError' || code === 'AbortError') {
    return { status: 'failed', retryable: true, error: `timeout after ${timeoutMs} ms` };
  }
  if (code === 'EADDRNOTALLOWED') return { status: 'failed', retryable: false, error: 'refused to connect: private or reserved address' };
  if (code.startsWith('HPE_') || code === 'HTTPParserError') return { status: 'failed', retryable: true, error: 'invalid HTTP response' };
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET') return { status: 'failed', retryable: true, error: 'connection closed by the receiver' };
  return { status: 'failed', retryable: true, error: `connection error: ${code}` };
}

/**
 * The one failure classifier of outbound HTTP delivery (message webhooks, the WhatsApp Cloud API request,
 * event endpoints; docs/decisions.md#8-retries, docs/events.md): what an attempt's network error or HTTP status
 * means — retryable or permanent — with a short reason that never contains a secret, and the
 * `Retry-After` an answer asked for, honoured only for retryable failures and capped at 7 days.
 *
 * A failure has the shape of the failed branch of a provider's SendResult (providers/types.ts), so a
 * provider returns it as it is.
 */
import { getMaxListeners, setMaxListeners } from 'node:events';

/**
 * One failed attempt. `retryable`: transient (timeouts, connection errors, invalid HTTP, 408, 429, 5xx)
 * or permanent (a refused address, any other status). `error`: the short reason (`HTTP 503`,
 * `timeout after 15000 ms`, ...). `code`: the HTTP status as text, when an answer decided it.
 * `retryAfterMs`: the wait the answer asked for (ms, at most MAX_RETRY_AFTER_MS), only on retryable failures.
 */
export interface DeliveryFailure {
  status: 'failed';
  retryable: boolean;
  error: string;
  code?: string;
  retryAfterMs?: number;
}

/** Longest Retry-After honoured (ms): a receiver asking for more is waited on for a week at most. */
export const MAX_RETRY_AFTER_MS = 7 * 24 * 3600_000;

/**
 * Milliseconds a `Retry-After` header asks to wait (RFC 9110 §10.2.3): delta-seconds (digits only) or
 * an HTTP date (IMF-fixdate, judged against `now`, real time ms; a past date is 0). Undefined when
 * absent or unparseable; capped at MAX_RETRY_AFTER_MS.
 */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS);
  const at = /^[A-Za-z]{3}, /.test(value) ? Date.parse(value) : NaN;
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/** True for the statuses worth another attempt: 408, 429 and 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * The failure an answer with HTTP `status` means, or undefined for 2xx. Redirects (3xx) are not
 * followed and fail like other 4xx. `retryAfter` (the header) is kept only when the failure is
 * retryable; `now` (real time ms) judges an HTTP date.
 */
export function statusFailure(status: number, retryAfter?: string | string[], now = Date.now()): DeliveryFailure | undefined {
  if (status >= 200 && status < 300) return undefined;
  const retryable = isRetryableStatus(status);
  return {
    status: 'failed', retryable, error: `HTTP ${status}`, code: String(status),
    retryAfterMs: retryable ? retryAfterMs(retryAfter, now) : undefined,
  };
}

/**
 * One attempt's bound and interruption: `signal` aborts once `timeoutMs` has passed (connect to last
 * byte of the answer, DELIVERY_TIMEOUT; `timedOut` is then true), when `outer` aborts (the job lost its
 * claim, the workers stop), or on `cut()` (an answer too large). `done()` clears the timer and stops
 * following `outer`; call it once the attempt is over, whatever its outcome.
 *
 * One controller and a timer cleared at the end, rather than `AbortSignal.timeout` joined with
 * `AbortSignal.any`: those timers fire long after each attempt ended, each building a `TimeoutError`
 * and walking the composite signals (measured: about 7 % of a delivering worker's time).
 */
export class Attempt {
  readonly #controller = new AbortController();
  readonly #timer: NodeJS.Timeout;
  readonly #outer: AbortSignal | undefined;
  readonly #onOuter = () => this.#controller.abort(this.#outer?.reason);
  #timedOut = false;

  constructor(timeoutMs: number, outer?: AbortSignal) {
    this.#outer = outer;
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      this.#controller.abort(new DOMException(`timeout after ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs);
    this.#timer.unref();
    if (outer?.aborted) this.#controller.abort(outer.reason);
    else if (outer) {
      // Every attempt of a delivery run listens to the run's one signal (and stops in done()).
      if (getMaxListeners(outer) !== 0) setMaxListeners(0, outer);
      outer.addEventListener('abort', this.#onOuter, { once: true });
    }
  }

  /** Aborts when the attempt is cut off, timed out or interrupted. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** True once the attempt's time ran out. */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** Ends the attempt early (the caller drops the connection: an answer too large). */
  cut(): void {
    this.#controller.abort(new DOMException('cut off', 'AbortError'));
  }

  /** The attempt is over: clears its timer and stops following `outer`. */
  done(): void {
    clearTimeout(this.#timer);
    this.#outer?.removeEventListener('abort', this.#onOuter);
  }
}

/**
 * Maps an undici / network error of one attempt to a failure: interrupted (`outer` aborted: the job
 * lost its claim or the workers stop), timeouts, invalid HTTP, closed connections and other connection
 * errors are retryable; a connection the network guard refused (EADDRNOTALLOWED) is not. `attempt` is
 * the Attempt the request ran under: when its time ran out and `outer` did not abort, the attempt timed out.
 * The reason names only the error code, never a message (which could carry a URL or a token).
 */
export function networkFailure(err: unknown, timeoutMs: number, outer?: AbortSignal, attempt?: { readonly timedOut: boolean }): DeliveryFailure {
  if (outer?.aborted) return { status: 'failed', retryable: true, error: 'delivery interrupted' };
  const e = err as { code?: string; name?: string };
  const code = String(e?.code ?? e?.name ?? 'error');
  if (attempt?.timedOut || /TIMEOUT/.test(code) || code === 'TimeoutError' || code === 'AbortError') {
    return { status: 'failed', retryable: true, error: `timeout after ${timeoutMs} ms` };
  }
  if (code === 'EADDRNOTALLOWED') return { status: 'failed', retryable: false, error: 'refused to connect: private or reserved address' };
  if (code.startsWith('HPE_') || code === 'HTTPParserError') return { status: 'failed', retryable: true, error: 'invalid HTTP response' };
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET') return { status: 'failed', retryable: true, error: 'connection closed by the receiver' };
  return { status: 'failed', retryable: true, error: `connection error: ${code}` };
}

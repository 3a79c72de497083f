/**
 * Retries of transient provider failures (decisions.md §6: "transient provider errors are retried
 * with backoff"): up to `maxAttempts` attempts; before attempt n+1 the wait is exponential with equal
 * jitter, `d/2 + random(d/2)` where `d = min(maxDelayMs, baseDelayMs * 2^(n-1))`, and at least the
 * provider's `retryAfterMs` (capped at maxDelayMs). A non-retryable failure ends at once. Every attempt
 * is observed in the provider-latency histogram.
 */
import type { Rendered } from '../domain/render.ts';
import { providerLatency } from '../metrics.ts';
import type { Provider, SendResult } from './types.ts';

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** The outcome after retries: the last attempt's result and how many attempts were made. */
export interface Delivery {
  result: SendResult;
  attempts: number;
  /** True when `signal` stopped the retries before a final outcome: the message is still to be sent. */
  interrupted: boolean;
}

/** Wait before attempt `attempt + 1` (ms), given the failed attempt's result. */
export function backoffMs(policy: RetryPolicy, attempt: number, retryAfterMs = 0, random = Math.random): number {
  const d = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.max(d / 2 + random() * (d / 2), Math.min(retryAfterMs, policy.maxDelayMs));
}

function sleep(ms: number, signals: (AbortSignal | undefined)[]): Promise<void> {
  return new Promise((resolve) => {
    if (signals.some((s) => s?.aborted)) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      for (const s of signals) s?.removeEventListener('abort', done);
      resolve();
    }
    for (const s of signals) s?.addEventListener('abort', done, { once: true });
  });
}

export interface RetrySignals {
  /** Aborts a request in flight (the job lost its claim). */
  abort?: AbortSignal;
  /** Stops starting attempts and cuts backoff waits short (the workers are stopping). */
  drain?: AbortSignal;
}

/** Sends with retries (see the module comment). Never rejects. */
export async function sendWithRetries(provider: Provider, rendered: Rendered, policy: RetryPolicy, signals: RetrySignals = {}): Promise<Delivery> {
  const { abort, drain } = signals;
  const stopped = () => !!(abort?.aborted || drain?.aborted);
  let attempts = 0;
  let result: SendResult = { status: 'failed', retryable: true, error: 'not attempted' };
  while (attempts < policy.maxAttempts) {
    if (stopped()) return { result, attempts, interrupted: true };
    attempts++;
    const started = performance.now();
    try {
      result = await provider.send(rendered, abort);
    } catch (err) {
      result = { status: 'failed', retryable: true, error: `provider error: ${(err as Error)?.message ?? err}` };
    }
    providerLatency.observe({ provider: provider.name, outcome: result.status }, (performance.now() - started) / 1000);
    if (result.status === 'sent' || !result.retryable) return { result, attempts, interrupted: false };
    if (abort?.aborted) return { result, attempts, interrupted: true };
    if (attempts < policy.maxAttempts) {
      await sleep(backoffMs(policy, attempts, result.retryAfterMs), [abort, drain]);
    }
  }
  return { result, attempts, interrupted: false };
}

/**
 * Retries of messages on a schedule (docs/decisions.md#8-retries). A delivery run makes ONE attempt per
 * message it claims (`attemptOnce`); `nextStep` then decides, from the attempt's result and the
 * message's attempt count, what the message becomes (the schedule step itself is the one of every
 * outbound delivery, delivery/schedule.ts `retryAt`):
 * - `sent`, or `failed` at once for a permanent failure (400, 401, 403, 404, 410, 413, 422, other 4xx,
 *   WhatsApp's permanent codes, a refused address);
 * - for a transient failure after attempt n (timeouts, connection errors, 408, 429, 5xx, WhatsApp's
 *   retryable codes): `retry` at `now + max(schedule[n-1], Retry-After)` while n <= schedule.length
 *   (DELIVERY_RETRY_SCHEDULE, default 5s,30s,2m,10m,30m,1h,2h,4h,8h,8h), else `failed` with the last
 *   error. The message waits `pending` with `next_attempt_at` (and the hold `held_until`), holding no
 *   worker; the workers' sweep releases it when the injectable clock reaches that time;
 * - for a provider's `wait` (providers/types.ts): pending until its `until`, not counted against the
 *   schedule.
 * Every attempt is observed in the provider-latency histogram.
 */
import type { Rendered } from '../domain/render.ts';
import { retryAt } from './schedule.ts';
import { providerLatency } from '../metrics.ts';
import type { Provider, SendResult } from '../providers/types.ts';

/** One attempt through `provider` (never rejects: a thrown error is a retryable failure). */
export async function attemptOnce(provider: Provider, rendered: Rendered, abort?: AbortSignal): Promise<SendResult> {
  const started = performance.now();
  let result: SendResult;
  try {
    result = await provider.send(rendered, abort);
  } catch (err) {
    result = { status: 'failed', retryable: true, error: `provider error: ${(err as Error)?.message ?? err}` };
  }
  providerLatency.observe({ provider: provider.name, outcome: result.status }, (performance.now() - started) / 1000);
  return result;
}

/** What a message becomes after an attempt. Times in ms of the injectable clock. */
export type NextStep =
  | { kind: 'sent'; providerMessageId: string | null }
  | { kind: 'failed'; error: string; code: string | null }
  /**
   * Pending until `at`. `uncounted`: a provider's `wait`, which does not count against the schedule
   * (absent: a transient failure, which does). `reason`: what it waits for (absent: a retry).
   */
  | { kind: 'retry'; at: number; error: string | null; code: string | null; reason?: string; uncounted?: true };

/**
 * The decision after attempt number `attempt` (1-based, counting the attempts that count against the
 * schedule, this one included) ended with `result`, at `now` (ms); `schedule` is the waits (ms) after
 * the 1st, 2nd, ... failure. A `wait` answer waits until its `until` whatever the schedule says.
 */
export function nextStep(result: SendResult, attempt: number, schedule: readonly number[], now: number): NextStep {
  if (result.status === 'sent') return { kind: 'sent', providerMessageId: result.providerMessageId ?? null };
  const code = result.code ?? null;
  if (result.status === 'wait') {
    return { kind: 'retry', at: Math.max(now, result.until), error: result.error ?? null, code, reason: result.reason, uncounted: true };
  }
  const at = result.retryable ? retryAt(schedule, attempt, now, result.retryAfterMs) : null;
  return at === null ? { kind: 'failed', error: result.error, code } : { kind: 'retry', at, error: result.error, code, ...(result.reason ? { reason: result.reason } : {}) };
}

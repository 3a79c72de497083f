/**
 * The one retry schedule step of outbound delivery, shared by messages (DELIVERY_RETRY_SCHEDULE,
 * docs/decisions.md#8-retries) and events (EVENT_RETRY_SCHEDULE, §5).
 */

/**
 * When to try again after attempt number `attempt` (1-based, counting every attempt so far) failed
 * at `now` (ms): `now + max(schedule[attempt-1], retryAfterMs)` while `attempt <= schedule.length`,
 * else null (the failure is final). `schedule` holds the waits (ms) after the 1st, 2nd, ... failure;
 * `retryAfterMs` is the answer's Retry-After (failure.ts passes it only for retryable failures).
 */
export function retryAt(schedule: readonly number[], attempt: number, now: number, retryAfterMs?: number): number | null {
  if (attempt < 1 || attempt > schedule.length) return null;
  return now + Math.max(schedule[attempt - 1], retryAfterMs ?? 0);
}

/**
 * The one schedule step of outbound delivery (src/delivery/schedule.ts `retryAt`), and that message
 * delivery (delivery/retry.ts `nextStep`) and event delivery (queue/events/writer.ts `nextState`) both
 * follow it: after attempt n with a failure, retry at now + max(schedule[n-1], Retry-After) while
 * n <= schedule.length, else the failure is final. Messages fail permanent failures at once; events
 * retry every failure but 410 (Retry-After only of retryable ones, as the classifier passes it on).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { statusFailure } from '../../src/delivery/failure.ts';
import { retryAt } from '../../src/delivery/schedule.ts';
import { nextStep } from '../../src/delivery/retry.ts';
import { nextState } from '../../src/queue/events/writer.ts';

const schedule = [5_000, 30_000, 120_000];
const t = 1_000_000;

describe('retryAt', () => {
  test('the schedule\'s wait after attempt n, then final', () => {
    assert.equal(retryAt(schedule, 1, t), t + 5_000);
    assert.equal(retryAt(schedule, 2, t), t + 30_000);
    assert.equal(retryAt(schedule, 3, t), t + 120_000);
    assert.equal(retryAt(schedule, 4, t), null);
    assert.equal(retryAt(schedule, 40, t), null);
    assert.equal(retryAt([], 1, t), null, 'an empty schedule: no retries');
    assert.equal(retryAt(schedule, 0, t), null, 'no attempt made: nothing to schedule');
  });
  test('Retry-After when longer than the schedule\'s wait, never shorter', () => {
    assert.equal(retryAt(schedule, 1, t, 60_000), t + 60_000);
    assert.equal(retryAt(schedule, 2, t, 1_000), t + 30_000);
    assert.equal(retryAt(schedule, 2, t, 0), t + 30_000);
    assert.equal(retryAt(schedule, 4, t, 60_000), null, 'Retry-After does not extend the schedule');
  });
});

describe('messages and events take the same step', () => {
  test('a retryable failure: both wait the same', () => {
    for (const [attempt, retryAfter] of [[1, undefined], [2, 90], [3, 1], [4, 90]] as const) {
      const f = statusFailure(503, retryAfter === undefined ? undefined : String(retryAfter), t)!;
      const expected = retryAt(schedule, attempt, t, f.retryAfterMs);
      const m = nextStep(f, attempt, schedule, t);
      const e = nextState(schedule, attempt, t, { ok: false, status_code: 503, error: f.error, response_excerpt: null, duration_ms: 1, retry_after_ms: f.retryAfterMs });
      if (expected === null) {
        assert.deepEqual(m, { kind: 'failed', error: 'HTTP 503', code: '503' });
        assert.deepEqual(e, { status: 'failed', next: null });
      } else {
        assert.deepEqual(m, { kind: 'retry', at: expected, error: 'HTTP 503', code: '503' });
        assert.deepEqual(e, { status: 'pending', next: new Date(expected) });
      }
    }
  });
  test('a permanent failure: a message fails at once; an event retries on the schedule without Retry-After', () => {
    const f = statusFailure(400, '3600', t)!;
    assert.deepEqual(nextStep(f, 1, schedule, t), { kind: 'failed', error: 'HTTP 400', code: '400' });
    assert.deepEqual(nextState(schedule, 1, t, { ok: false, status_code: 400, error: f.error, response_excerpt: null, duration_ms: 1, retry_after_ms: f.retryAfterMs }),
      { status: 'pending', next: new Date(t + 5_000) });
  });
  test('an event answered 410 fails at once; a delivered one is done', () => {
    assert.deepEqual(nextState(schedule, 1, t, { ok: false, status_code: 410, error: 'HTTP 410', response_excerpt: null, duration_ms: 1 }), { status: 'failed', next: null });
    assert.deepEqual(nextState(schedule, 1, t, { ok: true, status_code: 200, error: null, response_excerpt: null, duration_ms: 1 }), { status: 'delivered', next: null });
    assert.deepEqual(nextStep({ status: 'sent', providerMessageId: 'm1' }, 1, schedule, t), { kind: 'sent', providerMessageId: 'm1' });
  });
});

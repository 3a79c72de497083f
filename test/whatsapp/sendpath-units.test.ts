/**
 * The WhatsApp error-code table (docs/whatsapp.md "What each error code does") code by code, and the
 * generic retry decision for waits: every code of the table gets its action, Meta's error is kept as
 * given, unknown codes go by HTTP status, and a provider's wait never counts against the schedule.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyAnswer, MARKETING_HOLD_MS, PAIR_BACKOFF_MS, PAUSE_HOLD_MS } from '../../src/providers/whatsapp/errors.ts';
import { nextStep } from '../../src/delivery/retry.ts';

const NOW = Date.parse('2026-03-02T12:00:00Z');
const answer = (code: number, extra: Record<string, unknown> = {}) => JSON.stringify({ error: { message: `(#${code}) m`, type: 'OAuthException', code, error_data: { messaging_product: 'whatsapp', details: 'd' }, fbtrace_id: 'A', ...extra } });
/** The outcome's shape: status, retryable / reason, effects, recheck. */
function shape(status: number, code: number, retryAfter?: string) {
  const r = classifyAnswer(status, answer(code), retryAfter, NOW).result as any;
  return [r.status, r.status === 'failed' ? r.retryable : r.reason, (r.effects ?? []).map((e: any) => e.kind).join(',') || null, r.recheck === true];
}

test('every code of the table gets its action', () => {
  for (const code of [130429, 131000, 131016, 133004, 1, 2, 4, 17, 32, 613, 80007]) assert.deepEqual(shape(400, code), ['failed', true, null, false], String(code));
  assert.deepEqual(shape(400, 131056), ['failed', true, null, false]);
  assert.equal((classifyAnswer(400, answer(131056), undefined, NOW).result as any).reason, 'pair_rate');
  assert.deepEqual(shape(400, 131049), ['wait', 'marketing_held', null, false]);
  assert.deepEqual(shape(400, 131050), ['failed', false, 'opt_out', false]);
  for (const code of [131047, 131026, 131021, 131051, 131052, 131053, 100]) assert.deepEqual(shape(400, code), ['failed', false, null, false], String(code));
  for (const code of [131048, 131031, 368, 190]) assert.deepEqual(shape(400, code), ['wait', 'channel_paused', 'pause_channel', true], String(code));
  for (const code of [132000, 132001, 132005, 132007, 132012, 132016]) assert.deepEqual(shape(400, code), ['failed', false, null, true], String(code));
  assert.deepEqual(shape(400, 132015), ['wait', 'template_paused', null, true]);
});

test('wait times, Retry-After, pause reason, opt-out source; unknown codes by HTTP status', () => {
  assert.equal((classifyAnswer(400, answer(131049), undefined, NOW).result as any).until, NOW + MARKETING_HOLD_MS);
  assert.equal((classifyAnswer(400, answer(131048), undefined, NOW).result as any).until, NOW + PAUSE_HOLD_MS);
  assert.equal((classifyAnswer(429, answer(130429), '90', NOW).result as any).retryAfterMs, 90_000);
  assert.equal((classifyAnswer(400, answer(131056), undefined, NOW).result as any).retryAfterMs, PAIR_BACKOFF_MS);
  assert.equal((classifyAnswer(400, answer(131056), '600', NOW).result as any).retryAfterMs, 600_000);
  assert.deepEqual((classifyAnswer(400, answer(368), undefined, NOW).result as any).effects, [{ kind: 'pause_channel', reason: '368: Temporarily blocked for policies violations' }]);
  assert.deepEqual((classifyAnswer(400, answer(131050), undefined, NOW).result as any).effects, [{ kind: 'opt_out', source: 'whatsapp', evidence: { error_code: 131050 } }]);
  assert.deepEqual(shape(400, 999999), ['failed', false, null, false], 'unknown code, 4xx: permanent');
  assert.deepEqual(shape(503, 999999), ['failed', true, null, false], 'unknown code, 5xx: retried');
  assert.deepEqual(shape(429, 999999), ['failed', true, null, false]);
  assert.deepEqual(shape(408, 999999), ['failed', true, null, false]);
});

test("Meta's error is kept as given: code, title (Meta's, else the table's), message, details", () => {
  assert.deepEqual(classifyAnswer(400, answer(131026), undefined, NOW).result.providerError, { code: '131026', title: 'Message undeliverable', message: '(#131026) m', details: 'd' });
  assert.deepEqual(classifyAnswer(400, answer(131026, { error_user_title: "Meta's title" }), undefined, NOW).result.providerError?.title, "Meta's title");
  assert.deepEqual(classifyAnswer(502, '<html>bad gateway</html>', undefined, NOW).result.providerError, { code: '502', title: null, message: null, details: null });
});

test('a wait is pending until its time and does not count against the schedule; a transient failure does', () => {
  const wait = { status: 'wait', reason: 'marketing_held', until: NOW + 1000, error: 'e', code: '131049' } as const;
  assert.deepEqual(nextStep(wait, 99, [5_000], NOW), { kind: 'retry', at: NOW + 1000, error: 'e', code: '131049', reason: 'marketing_held', uncounted: true });
  const pair = { status: 'failed', retryable: true, error: 'e', code: '131056', retryAfterMs: 60_000, reason: 'pair_rate' } as const;
  assert.deepEqual(nextStep(pair, 1, [5_000], NOW), { kind: 'retry', at: NOW + 60_000, error: 'e', code: '131056', reason: 'pair_rate' });
  assert.deepEqual(nextStep(pair, 2, [5_000], NOW), { kind: 'failed', error: 'e', code: '131056' }, 'after the schedule: failed');
});

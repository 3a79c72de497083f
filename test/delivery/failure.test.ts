/**
 * The one failure classifier of outbound delivery (src/delivery/failure.ts): HTTP statuses and network
 * errors → retryable or permanent with a short reason; the Retry-After parser (delta-seconds or an HTTP
 * date, capped at 7 days) and that it is kept only for retryable failures; the Attempt that bounds one
 * attempt (its timer, the outer signal it follows until done).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Attempt, MAX_RETRY_AFTER_MS, networkFailure, retryAfterMs, statusFailure } from '../../src/delivery/failure.ts';

const NOW = Date.parse('2026-03-02T12:00:00Z');

describe('statuses', () => {
  test('2xx is no failure', () => {
    for (const s of [200, 201, 202, 204, 299]) assert.equal(statusFailure(s), undefined, String(s));
  });
  test('408, 429 and 5xx are retryable; the status is the code and the reason', () => {
    for (const s of [408, 429, 500, 502, 503, 504, 599]) {
      assert.deepEqual(statusFailure(s), { status: 'failed', retryable: true, error: `HTTP ${s}`, code: String(s), retryAfterMs: undefined }, String(s));
    }
  });
  test('other 4xx and 3xx (redirects are not followed) are permanent', () => {
    for (const s of [301, 302, 304, 400, 401, 403, 404, 410, 413, 422, 451]) {
      const f = statusFailure(s)!;
      assert.equal(f.retryable, false, String(s));
      assert.equal(f.error, `HTTP ${s}`);
      assert.equal(f.code, String(s));
    }
  });
  test('Retry-After is kept only for retryable failures', () => {
    assert.equal(statusFailure(429, '90', NOW)!.retryAfterMs, 90_000);
    assert.equal(statusFailure(503, 'Mon, 02 Mar 2026 12:05:00 GMT', NOW)!.retryAfterMs, 300_000);
    assert.equal(statusFailure(400, '90', NOW)!.retryAfterMs, undefined, 'a permanent failure does not wait');
    assert.equal(statusFailure(404, '90', NOW)!.retryAfterMs, undefined);
    assert.equal(statusFailure(200, '90', NOW), undefined);
  });
});

describe('Retry-After', () => {
  test('delta-seconds', () => {
    assert.equal(retryAfterMs('120', NOW), 120_000);
    assert.equal(retryAfterMs(' 0 ', NOW), 0);
    assert.equal(retryAfterMs(['7', '9'], NOW), 7_000, 'the first of repeated headers');
  });
  test('an HTTP date, against now; a past date is no wait', () => {
    assert.equal(retryAfterMs('Mon, 02 Mar 2026 12:05:00 GMT', NOW), 300_000);
    assert.equal(retryAfterMs('Mon, 02 Mar 2026 11:00:00 GMT', NOW), 0);
  });
  test('capped at 7 days, both forms', () => {
    assert.equal(MAX_RETRY_AFTER_MS, 7 * 24 * 3600 * 1000);
    assert.equal(retryAfterMs(String(30 * 24 * 3600), NOW), MAX_RETRY_AFTER_MS);
    assert.equal(retryAfterMs(String(7 * 24 * 3600 - 1), NOW), MAX_RETRY_AFTER_MS - 1000, 'just under the cap is kept');
    assert.equal(retryAfterMs('Thu, 01 Jan 2030 00:00:00 GMT', NOW), MAX_RETRY_AFTER_MS);
  });
  test('anything else is ignored', () => {
    for (const v of [undefined, '', '  ', 'soon', '-5', '1.5', '1e3', '0x10', '2026-03-02T12:05:00Z', []]) {
      assert.equal(retryAfterMs(v as string | string[] | undefined, NOW), undefined, JSON.stringify(v));
    }
  });
});

describe('network errors', () => {
  const aborted = AbortSignal.abort();
  test('timeouts: undici timeout codes, or the attempt signal fired', () => {
    for (const code of ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']) {
      assert.deepEqual(networkFailure({ code }, 15_000), { status: 'failed', retryable: true, error: 'timeout after 15000 ms' }, code);
    }
    assert.deepEqual(networkFailure({ name: 'TimeoutError' }, 1_000), { status: 'failed', retryable: true, error: 'timeout after 1000 ms' });
    assert.deepEqual(networkFailure(new Error('x'), 1_000, undefined, { timedOut: true }), { status: 'failed', retryable: true, error: 'timeout after 1000 ms' });
  });
  test('interrupted (the outer signal) wins over everything', () => {
    assert.deepEqual(networkFailure({ code: 'EADDRNOTALLOWED' }, 1, aborted, { timedOut: true }), { status: 'failed', retryable: true, error: 'delivery interrupted' });
  });
  test('a refused private address is permanent', () => {
    assert.deepEqual(networkFailure({ code: 'EADDRNOTALLOWED' }, 1), { status: 'failed', retryable: false, error: 'refused to connect: private or reserved address' });
  });
  test('invalid HTTP, closed connections and other connection errors are retryable', () => {
    assert.deepEqual(networkFailure({ code: 'HPE_INVALID_CONSTANT' }, 1), { status: 'failed', retryable: true, error: 'invalid HTTP response' });
    assert.deepEqual(networkFailure({ name: 'HTTPParserError' }, 1), { status: 'failed', retryable: true, error: 'invalid HTTP response' });
    assert.deepEqual(networkFailure({ code: 'UND_ERR_SOCKET' }, 1), { status: 'failed', retryable: true, error: 'connection closed by the receiver' });
    assert.deepEqual(networkFailure({ code: 'ECONNRESET' }, 1), { status: 'failed', retryable: true, error: 'connection closed by the receiver' });
    assert.deepEqual(networkFailure({ code: 'ECONNREFUSED' }, 1), { status: 'failed', retryable: true, error: 'connection error: ECONNREFUSED' });
    assert.deepEqual(networkFailure(undefined, 1), { status: 'failed', retryable: true, error: 'connection error: error' });
  });
  test('the reason names the code only, never the message (which may carry a URL or a token)', () => {
    const err = Object.assign(new Error('connect to https://user:s3cret@example.com failed, token EAAG123'), { code: 'ENOTFOUND' });
    const f = networkFailure(err, 1);
    assert.equal(f.error, 'connection error: ENOTFOUND');
    assert.ok(!f.error.includes('s3cret') && !f.error.includes('EAAG123'));
  });
});

describe('Attempt: one attempt\'s bound and interruption', () => {
  test('aborts when its time runs out, and says so', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const a = new Attempt(1_000);
    t.mock.timers.tick(999);
    assert.equal(a.signal.aborted, false);
    t.mock.timers.tick(1);
    assert.equal(a.signal.aborted, true);
    assert.equal(a.timedOut, true);
    assert.equal((a.signal.reason as DOMException).name, 'TimeoutError');
    a.done();
  });
  test('follows the outer signal until done(); done() clears the timer', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const outer = new AbortController();
    const a = new Attempt(1_000, outer.signal);
    const b = new Attempt(1_000, outer.signal);
    b.done();
    outer.abort(new Error('claim lost'));
    assert.equal(a.signal.aborted, true, 'an attempt in progress is interrupted');
    assert.equal(a.timedOut, false);
    assert.equal(b.signal.aborted, false, 'a finished attempt no longer follows the outer signal');
    t.mock.timers.tick(5_000);
    assert.equal(b.signal.aborted, false, 'nor times out');
    assert.equal(b.timedOut, false);
    a.done();
  });
  test('an outer signal aborted already aborts at once; cut() aborts without a timeout', () => {
    const a = new Attempt(1_000, AbortSignal.abort());
    assert.equal(a.signal.aborted, true);
    a.done();
    const c = new Attempt(1_000);
    c.cut();
    assert.equal(c.signal.aborted, true);
    assert.equal(c.timedOut, false);
    c.done();
  });
  test('many attempts on one outer signal: no listener-leak warning, none left after done()', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const outer = new AbortController();
    const attempts = Array.from({ length: 200 }, () => new Attempt(60_000, outer.signal));
    for (const a of attempts) a.done();
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
    assert.deepEqual(warnings, []);
    outer.abort();
    assert.ok(attempts.every((a) => !a.signal.aborted));
  });
});

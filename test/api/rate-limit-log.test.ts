/**
 * The PostgreSQL rate limiter's statement (src/db/rate-limits.ts, migration 016; docs/decisions.md#4-rate-limits) through
 * a real database: which requests of one statement are admitted, what each is told is left, how the
 * sliding log drops admissions that left the window and never holds more than the limit. Exactness
 * across processes is test/faults/rate-limit.test.ts; the answers over HTTP, test/api/concurrency and
 * request-order. PostgreSQL only (the embedded default keeps its limits in memory).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { openPostgres, type Database } from '../../src/db/database.ts';
import { PgRateLimiter } from '../../src/http/rate-limit-pg.ts';
import type { RateLimitRule } from '../../src/http/rate-limit.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const pgUrl = process.env.TEST_DATABASE_URL;
const pgOnly = { skip: pgUrl ? false : 'PostgreSQL only (TEST_DATABASE_URL unset)' };
const RULE: RateLimitRule = { name: 'test_rule', limit: 20, windowMs: 1_000, text: '20 per 1 second' };

let database: Database | undefined;
let limiter: PgRateLimiter;
let s: TestServer | undefined;
before(async () => {
  if (!pgUrl) return;
  s = await startTestServer({ role: 'api' }); // migrates the database
  database = await openPostgres(pgUrl, 4);
  limiter = new PgRateLimiter(database);
});
after(async () => {
  await database?.close();
  await s?.close();
});

const bucket = () => `test:${randomUUID()}`;
const log = async (key: string) => (await database!.pgPool!.query<{ hits: string[]; admitted: number }>(
  'SELECT hits::text[] AS hits, admitted FROM rate_limit_logs WHERE bucket = $1', [key])).rows[0];

test('one statement for 25 requests of a bucket: the first 20 admitted in arrival order, each told what was left', pgOnly, async () => {
  const key = bucket();
  // Requests handed in during one turn of the event loop are decided by one statement.
  const decisions = await Promise.all(Array.from({ length: 25 }, () => limiter.consume(key, RULE, 0)));
  assert.deepEqual(decisions.map((d) => d.allowed), [...Array(20).fill(true), ...Array(5).fill(false)]);
  assert.deepEqual(decisions.map((d) => d.remaining), [...Array.from({ length: 20 }, (_, i) => 19 - i), ...Array(5).fill(0)]);
  for (const d of decisions) assert.ok(d.resetMs > 0 && d.resetMs <= 1_000, `resetMs ${d.resetMs}`);
  const row = await log(key);
  assert.equal(row.hits.length, 20, 'the log holds at most the limit');
  assert.equal(row.admitted, 20);
  assert.equal(new Set(row.hits).size, 1, 'one statement admits at one time');
  // The window is full: the next statement refuses and admits nothing.
  const next = await limiter.consume(key, RULE, 0);
  assert.deepEqual([next.allowed, next.remaining], [false, 0]);
  assert.equal((await log(key)).admitted, 0);
});

test('requests of several buckets in one statement are decided per bucket', pgOnly, async () => {
  const [a, b] = [bucket(), bucket()];
  const one: RateLimitRule = { name: 'one', limit: 1, windowMs: 10_000, text: '1 per 10 second' };
  const decisions = await Promise.all([
    limiter.consume(a, one, 0), limiter.consume(b, RULE, 0), limiter.consume(a, one, 0), limiter.consume(b, RULE, 0),
  ]);
  assert.deepEqual(decisions.map((d) => [d.allowed, d.remaining]), [[true, 0], [true, 19], [false, 0], [true, 18]]);
  assert.ok(decisions[2].resetMs > 9_000 && decisions[2].resetMs <= 10_000, `resetMs ${decisions[2].resetMs}`);
});

test('admissions that left the window are dropped from the log; the oldest one left gives the reset', pgOnly, async () => {
  const key = bucket();
  await Promise.all(Array.from({ length: 20 }, () => limiter.consume(key, RULE, 0)));
  // Age the log: 15 admissions 2 s old (out of the window), 5 of 0.5 s (still in it).
  await database!.pgPool!.query(`UPDATE rate_limit_logs
    SET hits = array_fill(decided_us - 2000000, ARRAY[15]) || array_fill(decided_us - 500000, ARRAY[5]),
        decided_us = decided_us - 500000
    WHERE bucket = $1`, [key]);
  const decisions = await Promise.all(Array.from({ length: 17 }, () => limiter.consume(key, RULE, 0)));
  assert.equal(decisions.filter((d) => d.allowed).length, 15, '20 - 5 still in the window');
  assert.deepEqual(decisions.slice(0, 15).map((d) => d.remaining), Array.from({ length: 15 }, (_, i) => 14 - i));
  // The oldest admission left is about 0.5 s old: its slot frees in about 0.5 s.
  assert.ok(decisions[0].resetMs > 300 && decisions[0].resetMs <= 500, `resetMs ${decisions[0].resetMs}`);
  const row = await log(key);
  assert.equal(row.hits.length, 20);
  assert.equal(row.admitted, 15);
});

test('reset forgets the bucket: its next request starts a fresh window', pgOnly, async () => {
  const key = bucket();
  const one: RateLimitRule = { name: 'one', limit: 1, windowMs: 60_000, text: '1 per 1 minute' };
  assert.equal((await limiter.consume(key, one, 0)).allowed, true);
  assert.equal((await limiter.consume(key, one, 0)).allowed, false);
  await limiter.reset(key);
  assert.equal(await log(key), undefined);
  assert.equal((await limiter.consume(key, one, 0)).allowed, true);
});

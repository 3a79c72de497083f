/**
 * Statement time limits (docs/operations.md "Statement time limits", docs/security.md "Statement time
 * limits and pages"): on PostgreSQL every statement of a request runs under DB_STATEMENT_TIMEOUT and
 * every statement of background work (the workers, pg-boss) under DB_BACKGROUND_STATEMENT_TIMEOUT; a
 * request whose statement runs past its limit is answered 503 `{"detail":"Service unavailable"}` with
 * Retry-After, logged, and the server goes on serving. The settings are range-checked at start (on
 * either database). The embedded PGlite sets no limit (one thread; see the docs).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { sql } from 'kysely';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { ADMIN_TOKEN, FakeClock, startTestServer, type TestServer } from '../helpers/server.ts';

const pgUrl = process.env.TEST_DATABASE_URL;
const PG_ONLY = pgUrl ? false : 'PostgreSQL only (TEST_DATABASE_URL unset): the embedded database has no statement_timeout to set';

test('the two limits are read with defaults and range-checked, naming the setting', () => {
  const base = { DATA_DIR: '/tmp/cms-config-check' };
  const defaults = loadConfig(base);
  assert.equal(defaults.dbStatementTimeoutMs, 10_000);
  assert.equal(defaults.dbBackgroundStatementTimeoutMs, 300_000);
  const set = loadConfig({ ...base, DB_STATEMENT_TIMEOUT: '250ms', DB_BACKGROUND_STATEMENT_TIMEOUT: '2m' });
  assert.equal(set.dbStatementTimeoutMs, 250);
  assert.equal(set.dbBackgroundStatementTimeoutMs, 120_000);
  for (const [name, value] of [
    ['DB_STATEMENT_TIMEOUT', '50ms'], ['DB_STATEMENT_TIMEOUT', '11m'], ['DB_STATEMENT_TIMEOUT', '0s'], ['DB_STATEMENT_TIMEOUT', '10'],
    ['DB_BACKGROUND_STATEMENT_TIMEOUT', '500ms'], ['DB_BACKGROUND_STATEMENT_TIMEOUT', '25h'], ['DB_BACKGROUND_STATEMENT_TIMEOUT', 'soon'],
  ] as const) {
    assert.throws(() => loadConfig({ ...base, [name]: value }), (err: unknown) => err instanceof ConfigError && err.message.startsWith(`${name} must be`), `${name}=${value}`);
  }
});

let s: TestServer;
const logLines: Record<string, unknown>[] = [];
const clock = new FakeClock();
before(async () => {
  if (!pgUrl) return;
  const sink = new Writable({ write(chunk, _enc, done) { for (const line of String(chunk).split('\n')) if (line) logLines.push(JSON.parse(line)); done(); } });
  s = await startTestServer({
    role: 'api', clock, logger: pino({ level: 'warn' }, sink),
    env: { DB_STATEMENT_TIMEOUT: '200ms', DB_BACKGROUND_STATEMENT_TIMEOUT: '1s' },
  });
});
after(async () => {
  await s?.close();
});

test('requests, background work and pg-boss each run under their own limit', { skip: PG_ONLY }, async () => {
  const { database, boss } = s.service.deps;
  const show = async () => (await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(database.db)).rows[0].statement_timeout;
  assert.equal(await show(), '200ms');
  assert.equal(await database.runInBackground(show), '1s');
  // Inside transactions too (a transaction takes its connection in the caller's context).
  assert.equal(await database.db.transaction().execute(async (trx) => (await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(trx)).rows[0].statement_timeout), '200ms');
  assert.equal(await database.runInBackground(() => database.db.transaction().execute(async (trx) => (await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(trx)).rows[0].statement_timeout)), '1s');
  // The requests' pools used directly (prepared statements, the rate limiter; the pipelined accept pool).
  assert.equal((await database.pgPool!.query('SHOW statement_timeout')).rows[0].statement_timeout, '200ms');
  if (database.pipelinePool) assert.equal((await database.pipelinePool.query('SHOW statement_timeout')).rows[0].statement_timeout, '200ms');
  const bossRows = (await boss.getDb().executeSql('SHOW statement_timeout')).rows as { statement_timeout: string }[];
  assert.equal(bossRows[0].statement_timeout, '1s');

  // The limits hold: a request's statement of 0.5 s is cancelled, a background one is not, until its own limit.
  await assert.rejects(sql`SELECT pg_sleep(0.5)`.execute(database.db), (err: { code?: string }) => err.code === '57014');
  await database.runInBackground(() => sql`SELECT pg_sleep(0.5)`.execute(database.db));
  await database.runInBackground(() => assert.rejects(sql`SELECT pg_sleep(1.5)`.execute(database.db), (err: { code?: string }) => err.code === '57014'));
  // The connections stay usable.
  assert.equal(await show(), '200ms');
  assert.equal(await database.runInBackground(show), '1s');
});

test('a request whose statement runs past the limit gets 503, is logged, and the server goes on serving', { skip: PG_ONLY }, async () => {
  const c = await s.company();
  // A real request made slow: another session holds the company's row, so 4.1's slot update waits for it.
  const other = new pg.Client({ connectionString: pgUrl });
  await other.connect();
  try {
    await other.query('BEGIN');
    await other.query('SELECT 1 FROM companies WHERE company_id = $1 FOR UPDATE', [c.companyId]);
    // Without a limit the request would wait for the lock: let it go after 5 s, so that the test fails instead of hanging.
    const release = setTimeout(() => { other.query('ROLLBACK').catch(() => {}); }, 5_000);
    after(() => clearTimeout(release));
    const started = performance.now();
    const slow = await s.api('/api/segments/create', { key: c.key, body: { name: 'held' } });
    const took = performance.now() - started;
    assert.equal(slow.status, 503);
    assert.equal(slow.text, '{"detail":"Service unavailable"}');
    assert.equal(slow.headers.get('retry-after'), '5');
    assert.ok(took < 5_000, `answered after ${Math.round(took)} ms, not held until the lock went`);
    // The operator API maps it the same way.
    const res = await fetch(`${s.url}/admin/companies/${c.companyId}`, {
      method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Renamed' }),
    });
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), { detail: 'Service unavailable' });
  } finally {
    await other.query('ROLLBACK').catch(() => {});
    await other.end();
  }
  const timedOut = logLines.filter((l) => l.msg === 'database statement timed out');
  assert.ok(timedOut.length >= 2, JSON.stringify(logLines));
  assert.equal((timedOut[0].err as { code: string }).code, '57014');
  assert.equal(timedOut[0].route, '/api/segments/create');

  // Nothing was done by the refused request, and the next one is served.
  const ok = await s.api('/api/segments/create', { key: c.key, body: { name: 'after' } });
  assert.equal(ok.status, 200);
  const segments = await s.admin('GET', `/admin/companies/${c.companyId}/segments`);
  assert.deepEqual(segments.segments.map((x: { name: string }) => x.name), ['after']);
  assert.equal((await fetch(`${s.url}/readyz`)).status, 200);
});

/**
 * The embedded database's VACUUM (src/db/embedded-vacuum.ts, docs/operations.md): PGlite has no
 * autovacuum, so while the workers run they VACUUM the tables a send rewrites every
 * PGLITE_VACUUM_INTERVAL. Checked through PostgreSQL's own record of it (`pg_stat_user_tables.last_vacuum`)
 * on a server whose workers run with a short interval; on PostgreSQL nothing is started (autovacuum does
 * the work there); and the setting's parsing.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pino from 'pino';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startEmbeddedVacuum, VACUUMED_TABLES } from '../../src/db/embedded-vacuum.ts';
import { ADMIN_TOKEN, eventually, startTestServer, type TestServer } from '../helpers/server.ts';

/** The tables' names as pg_stat_user_tables shows them (pg-boss's partitioned `job` by its partition for our queues). */
const WATCHED = VACUUMED_TABLES.map((t) => (t === 'pgboss.job' ? 'pgboss.job_common' : t.includes('.') ? t : `public.${t}`));
const lastVacuums = async (s: TestServer) => (await sql<{ name: string; last_vacuum: Date | null }>`
  SELECT schemaname || '.' || relname AS name, last_vacuum FROM pg_stat_user_tables
  WHERE schemaname || '.' || relname = ANY (${WATCHED}::text[])`.execute(s.service.deps.database.db)).rows;

describe('the embedded database is vacuumed while the workers run', () => {
  let s: TestServer;
  before(async () => { s = await startTestServer({ env: { PGLITE_VACUUM_INTERVAL: '100ms' } }); });
  after(() => s?.close());

  test('on PGlite every table a send rewrites gets a VACUUM; on PostgreSQL the service leaves it to autovacuum', async (t) => {
    if (s.kind !== 'pglite') {
      const vacuum = startEmbeddedVacuum(s.service.deps.database, 100, pino({ level: 'silent' }));
      assert.equal(await vacuum.runNow(), 0, 'nothing runs on PostgreSQL');
      await vacuum.stop();
      t.diagnostic('PostgreSQL: autovacuum');
      return;
    }
    const rows = await eventually(async () => {
      const r = await lastVacuums(s);
      return r.length === WATCHED.length && r.every((x) => x.last_vacuum !== null) ? r : undefined;
    }, 20_000);
    assert.deepEqual(rows.map((r) => r.name).sort(), [...WATCHED].sort());
  });
});

describe('PGLITE_VACUUM_INTERVAL', () => {
  const base = { DATA_DIR: '/tmp/unused', ADMIN_TOKEN, SECRETS_KEY: 'test-secrets-key-8Hm3Tq6Yk1Pd9Wf2' };
  test('5 s by default, a duration, 0s turns it off, anything else refused', () => {
    assert.equal(loadConfig(base).pgliteVacuumIntervalMs, 5_000);
    assert.equal(loadConfig({ ...base, PGLITE_VACUUM_INTERVAL: '30s' }).pgliteVacuumIntervalMs, 30_000);
    assert.equal(loadConfig({ ...base, PGLITE_VACUUM_INTERVAL: '0s' }).pgliteVacuumIntervalMs, 0);
    assert.throws(() => loadConfig({ ...base, PGLITE_VACUUM_INTERVAL: 'often' }), ConfigError);
  });
});

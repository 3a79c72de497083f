/**
 * Prepared statements on the hot path (src/db/prepared.ts): a text marked PREPARED runs
 * as a named statement on PostgreSQL (prepared once per connection), other texts stay unnamed, and the
 * accept path's statements are among the prepared ones after a trigger. On PGlite the marker is a comment.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery } from 'kysely';
import { openPostgres, type Database } from '../../src/db/database.ts';
import { statementName } from '../../src/db/driver-tricks.ts';
import { PREPARED } from '../../src/db/prepared.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const pgUrl = process.env.TEST_DATABASE_URL;
const tricksOff = process.env.DB_DRIVER_TRICKS === 'off';
const pgOnly = { skip: pgUrl ? false : 'PostgreSQL only (TEST_DATABASE_URL unset)' };
const serverTricks = { skip: !pgUrl ? 'PostgreSQL only (TEST_DATABASE_URL unset)' : tricksOff ? 'the server runs with DB_DRIVER_TRICKS=off' : false };

let database: Database | undefined;
let s: TestServer;
before(async () => {
  if (pgUrl) database = await openPostgres(pgUrl, 1); // one connection: what one query prepares, the next sees
  s = await startTestServer({ role: 'api' });
});
after(async () => {
  await database?.close();
  await s.close();
});

const prepared = async () => (await database!.pgPool!.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements')).rows;

test('a marked text becomes one named statement on the connection; an unmarked one does not', pgOnly, async () => {
  const marked = `${PREPARED}SELECT $1::int + 1 AS n`;
  for (const x of [1, 2, 3]) {
    const r = await database!.pgPool!.query<{ n: number }>(marked, [x]);
    assert.equal(r.rows[0].n, x + 1);
  }
  await database!.pgPool!.query('SELECT $1::int * 2 AS unmarked', [4]);
  const names = await prepared();
  assert.deepEqual(names.filter((p) => p.statement === marked).map((p) => p.name), [statementName(marked)]);
  assert.equal(names.some((p) => p.statement.includes('unmarked')), false);
  assert.match(statementName(marked), /^cms_[0-9a-f]{24}$/);
});

test('a marked text also runs through Kysely and inside its transactions, with results and errors as usual', pgOnly, async () => {
  const db = database!.db;
  const rows = await db.transaction().execute(async (trx) => (await trx.executeQuery<{ t: string }>(
    CompiledQuery.raw(`${PREPARED}SELECT upper($1::text) AS t`, ['zoë']),
  )).rows);
  assert.deepEqual(rows, [{ t: 'ZOË' }]);
  await assert.rejects(db.executeQuery(CompiledQuery.raw(`${PREPARED}SELECT 1 / $1::int`, [0])), /division by zero/);
});

test('the accept path runs prepared: its batch and job INSERTs are named statements, one text each whatever the group size', serverTricks, async () => {
  const c = await s.company();
  const a = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'a', type: 'api', active: true, template: { body: 'Hi', buttons: [] } });
  const trigger = async (n: number) => {
    const contacts = Array.from({ length: n }, (_, i) => ({ phone: `+4915112345${String(i).padStart(3, '0')}` }));
    const r = await s.api('/api/automations/send', { key: c.key, body: { automation_id: a.automation_id, contacts } });
    assert.equal(r.status, 200);
  };
  // One at a time, then in parallel (commit groups of several batches), with different contact counts.
  for (let i = 1; i <= 3; i++) await trigger(i);
  await Promise.all([1, 2, 3, 4, 5, 6].map(trigger));
  // Ask every idle connection of the service's pools: the accepts ran on some of them (without an
  // Idempotency-Key, on the pipelined pool).
  const pools = [s.service.deps.database.pgPool!, s.service.deps.database.pipelinePool!];
  assert.ok(pools[1].totalCount > 0, 'the accepts ran pipelined');
  const clients = (await Promise.all(pools.map((pool) => Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()))))).flat();
  try {
    const statements = new Set<string>();
    for (const client of clients) {
      for (const row of (await client.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).rows) statements.add(row.statement);
    }
    const texts = [...statements];
    // Exactly one distinct text each: a text that varied per call would pile up prepared statements.
    assert.equal(texts.filter((t) => t.startsWith(PREPARED) && t.includes('INSERT INTO batches')).length, 1, 'batch INSERT prepared, one text');
    assert.equal(texts.filter((t) => t.startsWith(PREPARED) && /INSERT INTO \S*job/.test(t)).length, 1, 'pg-boss job INSERT prepared, one text');
    assert.ok(texts.some((t) => t.startsWith(PREPARED) && t.includes('"api_keys"')), 'API key lookup prepared');
  } finally {
    for (const client of clients) client.release();
  }
});

test('with the driver tricks off, a marked text runs unnamed and there is no pipelined pool', pgOnly, async () => {
  const plain = await openPostgres(pgUrl!, 1, { driverTricks: false });
  try {
    assert.equal(plain.driverTricks, false);
    assert.equal(plain.pipelinePool, undefined);
    const marked = `${PREPARED}SELECT $1::int + 2 AS plain_n`;
    assert.equal((await plain.pgPool!.query<{ plain_n: number }>(marked, [1])).rows[0].plain_n, 3);
    const names = (await plain.pgPool!.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).rows;
    assert.equal(names.some((p) => p.statement.includes('plain_n')), false);
  } finally {
    await plain.close();
  }
});

test('on PGlite, marked texts run as ordinary queries', { skip: pgUrl ? 'PGlite only' : false }, async () => {
  const db = s.service.deps.database.db;
  const r = await db.executeQuery<{ n: number }>(CompiledQuery.raw(`${PREPARED}SELECT $1::int + 1 AS n`, [41]));
  assert.deepEqual(r.rows, [{ n: 42 }]);
});

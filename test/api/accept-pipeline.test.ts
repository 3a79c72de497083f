/**
 * The pipelined accept transaction on PostgreSQL (src/db/accept-store.ts): a group
 * of batches and their jobs commit together or not at all, a failing batch does not take the others
 * down, the connection stays usable, and the guarded batch INSERT writes nothing outside the
 * transaction that its BEGIN opens. On either database: an idempotency record handed to the
 * accept store as data commits with its batch or not at all.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { AcceptStore, BEGIN_GUARDED, INSERT_BATCHES_GUARDED, type BatchRow } from '../../src/db/accept-store.ts';
import { batchProcessJobs } from '../../src/queue/boss.ts';
import { claimKey, requestHash } from '../../src/domain/idempotency.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const pgOnly = {
  skip: !process.env.TEST_DATABASE_URL ? 'PostgreSQL only (TEST_DATABASE_URL unset)'
    : process.env.DB_DRIVER_TRICKS === 'off' ? 'pipelining is a driver trick (DB_DRIVER_TRICKS=off)' : false,
};

let s: TestServer;
before(async () => {
  s = await startTestServer({ role: 'api' }); // no worker: jobs stay where the writer put them
});
after(async () => {
  await s.close();
});

const row = (companyId: number, batchId: string = randomUUID()): BatchRow => ({
  batch_id: batchId, company_id: companyId, kind: 'automation', source_id: 1, total: 1, ignored_contacts: 0,
  items: JSON.stringify([{ phone: '+4915112345678', e164: '+4915112345678' }]), overrides: '{}', template: '{"body":"Hi"}',
});

async function stored(ids: string[]): Promise<{ batches: Set<string>; jobs: Map<string, number> }> {
  const db = s.service.deps.database.db;
  const batches = await db.selectFrom('batches').select('batch_id').where('batch_id', 'in', ids).execute();
  const { rows } = await sql<{ batch_id: string; n: number }>`
    SELECT data->>'batch_id' AS batch_id, count(*)::int AS n FROM pgboss.job
    WHERE name = 'batch-process' AND data->>'batch_id' = ANY(${ids}::text[]) GROUP BY 1`.execute(db);
  return { batches: new Set(batches.map((b) => b.batch_id)), jobs: new Map(rows.map((r) => [r.batch_id, r.n])) };
}

test('a group written together commits every batch with exactly one job each', pgOnly, async () => {
  const c = await s.company();
  const writer = new AcceptStore(s.service.deps.database, batchProcessJobs(s.service.deps.boss));
  const rows = Array.from({ length: 12 }, () => row(c.companyId));
  await Promise.all(rows.map((r) => writer.write(r)));
  const ids = rows.map((r) => r.batch_id);
  const got = await stored(ids);
  assert.deepEqual([...got.batches].sort(), [...ids].sort());
  for (const id of ids) assert.equal(got.jobs.get(id), 1, `one job for ${id}`);
  assert.ok(s.service.deps.database.pipelinePool!.totalCount > 0, 'written on the pipelined connections');
});

test('a failing batch in a group: the others commit with their jobs, the failing one leaves nothing', pgOnly, async () => {
  const c = await s.company();
  const writer = new AcceptStore(s.service.deps.database, batchProcessJobs(s.service.deps.boss));
  const taken = row(c.companyId);
  await writer.write(taken);
  const before = await stored([taken.batch_id]);
  assert.equal(before.jobs.get(taken.batch_id), 1);

  // The same primary key again, in the middle of a group written at once.
  const good = Array.from({ length: 6 }, () => row(c.companyId));
  const group = [...good.slice(0, 3), row(c.companyId, taken.batch_id), ...good.slice(3)];
  const outcomes = await Promise.allSettled(group.map((r) => writer.write(r)));
  assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
  assert.match(String((outcomes[3] as PromiseRejectedResult).reason), /duplicate key/);

  const got = await stored([...good.map((r) => r.batch_id), taken.batch_id]);
  for (const r of good) {
    assert.ok(got.batches.has(r.batch_id), 'good batch stored');
    assert.equal(got.jobs.get(r.batch_id), 1, 'good batch has one job');
  }
  assert.equal(got.jobs.get(taken.batch_id), 1, 'the refused duplicate added no job');

  // The pipelined connections are still usable afterwards.
  const after = row(c.companyId);
  await writer.write(after);
  assert.equal((await stored([after.batch_id])).jobs.get(after.batch_id), 1);
});

test('the guarded batch INSERT writes nothing outside the transaction its BEGIN opens', pgOnly, async () => {
  const c = await s.company();
  const pool = s.service.deps.database.pipelinePool!;
  const r = row(c.companyId);
  const params = [[r.batch_id], [r.company_id], [r.kind], [r.source_id], [r.total], [r.ignored_contacts],
    Buffer.from(r.items), [1], [Buffer.byteLength(r.items)], [r.overrides], [r.template]];
  const client = await pool.connect();
  try {
    const alone = await client.query(INSERT_BATCHES_GUARDED, params); // its own transaction
    assert.equal(alone.rowCount, 0);
    await client.query('BEGIN'); // a transaction, but not the accept one: still nothing
    assert.equal((await client.query(INSERT_BATCHES_GUARDED, params)).rowCount, 0);
    await client.query('ROLLBACK');
    await client.query(BEGIN_GUARDED);
    assert.equal((await client.query(INSERT_BATCHES_GUARDED, params)).rowCount, 1);
    await client.query('ROLLBACK');
  } finally {
    client.release();
  }
  assert.equal((await stored([r.batch_id])).batches.size, 0);
});

test('an idempotency record handed as data commits with its batch, and not at all when the batch fails', async () => {
  const c = await s.company();
  const db = s.service.deps.database.db;
  const acceptor = new AcceptStore(s.service.deps.database, batchProcessJobs(s.service.deps.boss));
  const claim = async (key: string) => {
    const got = await claimKey(db, c.companyId, key, requestHash('t', Buffer.from(key)), Date.now());
    assert.equal(got.kind, 'claimed');
  };
  const record = (key: string) => db.selectFrom('idempotency_keys').select(['response_status', 'response_body'])
    .where('company_id', '=', c.companyId).where('idempotency_key', '=', key).executeTakeFirst();

  await claim('k-good');
  const good = row(c.companyId);
  // Together with requests without a record, as a group.
  const plain = [row(c.companyId), row(c.companyId)];
  await Promise.all([acceptor.write(good, { idempotency: { key: 'k-good', status: 200, body: '{"ok":1}' } }), ...plain.map((r) => acceptor.write(r))]);
  assert.deepEqual(await record('k-good'), { response_status: 200, response_body: '{"ok":1}' });
  const got = await stored([good.batch_id, ...plain.map((r) => r.batch_id)]);
  assert.equal(got.batches.size, 3);
  assert.equal(got.jobs.get(good.batch_id), 1);

  await claim('k-bad');
  const duplicate = row(c.companyId, good.batch_id); // its batch INSERT fails
  await assert.rejects(acceptor.write(duplicate, { idempotency: { key: 'k-bad', status: 200, body: '{"ok":2}' } }), /duplicate key/);
  assert.deepEqual(await record('k-bad'), { response_status: null, response_body: null }, 'the answer was not recorded');
});

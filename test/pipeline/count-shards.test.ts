/**
 * Counters that concurrent writers do not queue on (migration 035; docs/architecture.md "Where SQL
 * lives", counts kept by triggers), on PostgreSQL: two database sessions whose counter shards differ
 * (pg_backend_pid() % 8) change the status of two messages of the same batch at once. The second's
 * statement goes through while the first's transaction is still open (with a lock timeout, it would
 * fail were it waiting for the first's counter row), and once both commit the batch's counts and the
 * company's counts hold both changes. Skipped on PGlite, which has one session.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { batchStatus, messagesOf, phone } from './helpers.ts';

const url = process.env.TEST_DATABASE_URL;
const skip = url ? false : 'PostgreSQL only (TEST_DATABASE_URL): PGlite has one database session';
let s: TestServer;
const clients: pg.Client[] = [];

before(async () => {
  if (!skip) s = await startTestServer();
});
after(async () => {
  for (const c of clients) await c.end().catch(() => {});
  await s?.close();
});

/** A session of its own on the test database, with its counter shard. */
async function session(): Promise<{ client: pg.Client; shard: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  const { rows } = await client.query<{ shard: number }>('SELECT cms_count_shard() AS shard');
  return { client, shard: rows[0].shard };
}

test('two sessions settle messages of one batch at once without waiting for each other', { skip }, async () => {
  const run = Math.floor(Math.random() * 1000);
  const { companyId, key } = await s.company();
  const auto = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'shards', type: 'api', active: true, template: { body: 'Hi' } }, 201);
  const res = await s.api('/api/automations/send', { key, body: { automation_id: auto.automation_id, contacts: [0, 1, 2].map((i) => ({ phone: phone(run, i) })) } });
  assert.equal(res.status, 200, res.text);
  const batchId: string = res.json.batch_id;
  await eventually(async () => (await batchStatus(s, batchId)).status === 'completed' || undefined);
  const [m1, m2] = (await messagesOf(s, batchId)).map((m) => m.message_id as string);

  const a = await session();
  let b = await session();
  for (let tries = 0; b.shard === a.shard && tries < 32; tries++) b = await session();
  assert.notEqual(b.shard, a.shard, 'sessions of different shards');
  await a.client.query('BEGIN');
  await a.client.query(`UPDATE messages SET status = 'delivered', delivered_at = now() WHERE message_id = $1`, [m1]);
  // A wait for A's counter rows would end in a lock-timeout error here.
  await b.client.query(`SET lock_timeout = '3s'`);
  await b.client.query(`UPDATE messages SET status = 'delivered', delivered_at = now() WHERE message_id = $1`, [m2]);
  await a.client.query('COMMIT');

  const counts = (await batchStatus(s, batchId)).counts;
  assert.deepEqual(counts, { total: 3, sent: 3, delivered: 2, read: 0, failed: 0, skipped: 0, pending: 0 });
  const { rows: shards } = await a.client.query('SELECT count(*)::int AS n FROM batch_status_counts WHERE batch_id = $1 AND delivered > 0', [batchId]);
  assert.equal(shards[0].n, 2, 'each session added to its own shard');
  const { rows } = await a.client.query(
    `SELECT status, sum(count)::int AS n FROM message_counts WHERE company_id = $1 GROUP BY 1 HAVING sum(count) <> 0 ORDER BY 1`, [companyId]);
  assert.deepEqual(rows, [{ status: 'delivered', n: 2 }, { status: 'sent', n: 1 }]);
});

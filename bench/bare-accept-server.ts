/**
 * The bare durable accept server: the least a durable 4.3 accept can cost in Node on this
 * database, the yardstick of bench/accept-ratio.ts.
 *
 * Plain `node:http` (bench/lib/bare-accept.ts, shared with bench/bare-embedded-server.ts); reads the
 * body, `JSON.parse`, checks its shape (an object with an integer `automation_id` and a non-empty
 * `contacts` array of objects whose `phone` is a string, optional `first_name`/`last_name` strings and
 * `variables` object; a `service-api-key` header), then hands the batch row to a group commit and
 * answers 200 `{"batch_id","contacts","status":"accepted"}` only after the commit; 422 for a wrong
 * shape. Group commit as the service does it: requests that arrive while up to 4 transactions are in
 * flight are gathered, at most 64 per group, and each group is ONE transaction on its own connection:
 * BEGIN, one multi-row INSERT of the batch rows (arrays through `unnest`, a named prepared statement),
 * pg-boss's own multi-row job INSERT (`boss.insert`, through the same connection), COMMIT. Nothing
 * else: no authentication lookup, no rate limit, no Python-compatible decoding, no phone normalisation,
 * no idempotency.
 *
 * Batch rows go to `bench_bare_batches` (`LIKE batches INCLUDING ALL`: same columns, types,
 * compression and indexes, without the foreign key to companies, since the bare server knows no
 * company; it stores the automation id as the company id). Jobs go to pg-boss queue `bench-bare-accept`
 * (the real `pgboss.job` table; created with the `batch-process` queue's policy, never worked).
 *
 * Usage: node bench/bare-accept-server.ts PORT DATABASE_URL   (sends 'ready' to a parent process)
 */
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { JOB_SPECS } from '../src/queue/jobs.ts';
import { serveBareAccept, type Pending } from './lib/bare-accept.ts';

const port = Number(process.argv[2] ?? 8102);
const url = process.argv[3] ?? 'postgres://postgres@127.0.0.1:5432/cms_h_h';
const QUEUE = 'bench-bare-accept';
const MAX_GROUP = 64;
const MAX_IN_FLIGHT = 4;
const TEMPLATE = JSON.stringify({ body: 'Hi {{ first_name }}, your order {{ order_id }} has shipped.', buttons: [] });

const pool = new pg.Pool({ connectionString: url, max: MAX_IN_FLIGHT + 1 });
await pool.query('CREATE TABLE IF NOT EXISTS bench_bare_batches (LIKE batches INCLUDING ALL)');
const boss = new PgBoss({ connectionString: url, schema: 'pgboss', max: 1, supervise: false, schedule: false } as ConstructorParameters<typeof PgBoss>[0]);
boss.on('error', () => {});
await boss.start();
await boss.createQueue(QUEUE, JOB_SPECS['batch-process'].queue);

const INSERT = {
  name: 'bare_insert_batches',
  text: `INSERT INTO bench_bare_batches (batch_id, company_id, kind, source_id, total, items, template)
SELECT r.id, r.company, 'automation', r.company, r.total, r.items, $5::jsonb
FROM unnest($1::uuid[], $2::int[], $3::int[], $4::text[]) AS r(id, company, total, items)`,
};

/** One transaction for the group: the batch rows and their jobs, committed together. */
async function commit(group: Pending[]): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query({ ...INSERT, values: [group.map((p) => p.id), group.map((p) => p.company), group.map((p) => p.total), group.map((p) => p.items), TEMPLATE] });
    await boss.insert(QUEUE, group.map((p) => ({ data: { batch_id: p.id } })), { db: { executeSql: (text: string, values?: unknown[]) => client.query(text, values) } });
    await client.query('COMMIT');
    client.release();
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    client.release(true);
    throw err;
  }
}

serveBareAccept(port, { commit, maxGroup: MAX_GROUP, maxInFlight: MAX_IN_FLIGHT });

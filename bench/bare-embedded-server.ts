/**
 * The bare durable EMBEDDED accept server: the least a durable 4.3 accept can cost in one
 * Node process with its own PGlite, the yardstick of bench/embedded-accept.ts. It does NO delivery:
 * it stores the batch and a job row and answers; nothing ever works the jobs.
 *
 * Plain `node:http` (bench/lib/bare-accept.ts, shared with bench/bare-accept-server.ts); reads the
 * body, `JSON.parse`, the shape check (an object with an integer `automation_id` and a non-empty
 * `contacts` array of objects whose `phone` is a string, optional `first_name`/`last_name` strings and
 * `variables` object; a `service-api-key` header), then hands the batch row to a group commit and
 * answers 200 `{"batch_id","contacts","status":"accepted"}` only after the commit; 400 for bad JSON,
 * 422 for a wrong shape, 503 when the commit failed. Group commit: the requests that arrive while a
 * transaction is open are gathered, at most 64 per group, and each group is ONE PGlite transaction: one
 * multi-row INSERT of the batch rows (the form the service uses on PGlite, db/accept-store.ts) and
 * one multi-row INSERT of one job row per batch. PGlite has one connection, so one transaction is open
 * at a time. Nothing else: no authentication, rate limit, Python-compatible decoding, phone
 * normalisation or idempotency.
 *
 * Batch rows go to `batches` with the columns, types, defaults, checks and indexes of the service's
 * `batches` (src/db/migrations 001_init.sql, `items` as text from 007, the partial index of 011),
 * without the foreign key to companies (the bare server knows no company; it stores the automation id
 * as the company id). Jobs go to `jobs`, a plain table (id, name, data, state, created_on).
 *
 * Usage: node bench/bare-embedded-server.ts PORT DATA_DIR   (sends 'ready' to a parent process; the
 * directory is created if missing and left behind for the caller to remove)
 */
import { randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { serveBareAccept, type Pending } from './lib/bare-accept.ts';

const port = Number(process.argv[2] ?? 8104);
const dataDir = process.argv[3];
if (!dataDir) throw new Error('usage: node bench/bare-embedded-server.ts PORT DATA_DIR');
const MAX_GROUP = 64;
const TEMPLATE = JSON.stringify({ body: 'Hi {{ first_name }}, your order {{ order_id }} has shipped.', buttons: [] });

const db = await PGlite.create(dataDir);
await db.exec(`
CREATE TABLE IF NOT EXISTS batches (
  batch_id         uuid        PRIMARY KEY,
  company_id       integer     NOT NULL,
  kind             text        NOT NULL CHECK (kind IN ('automation', 'campaign')),
  source_id        integer     NOT NULL,
  status           text        NOT NULL DEFAULT 'accepted' CHECK (status IN ('accepted', 'processing', 'completed')),
  total            integer     NOT NULL,
  ignored_contacts integer     NOT NULL DEFAULT 0,
  items            text        NOT NULL,
  overrides        jsonb       NOT NULL DEFAULT '{}',
  template         jsonb       NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  completed_at     timestamptz
);
CREATE INDEX IF NOT EXISTS batches_company ON batches (company_id, created_at DESC);
CREATE INDEX IF NOT EXISTS batches_processing ON batches (batch_id) WHERE status = 'processing';
CREATE TABLE IF NOT EXISTS jobs (
  id         uuid        PRIMARY KEY,
  name       text        NOT NULL,
  data       jsonb       NOT NULL,
  state      text        NOT NULL DEFAULT 'created',
  created_on timestamptz NOT NULL DEFAULT now()
);`);

/** `INSERT ... VALUES ($1, ...), (...)` for `rows` rows of `cols` parameters each. */
function values(rows: number, cols: number, cast: readonly string[] = []): string {
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    out.push(`(${Array.from({ length: cols }, (_, c) => `$${r * cols + c + 1}${cast[c] ?? ''}`).join(', ')})`);
  }
  return out.join(', ');
}

/** One transaction for the group: the batch rows and their jobs, committed together. */
async function commit(group: Pending[]): Promise<void> {
  const batchParams: unknown[] = [];
  const jobParams: unknown[] = [];
  for (const p of group) {
    batchParams.push(p.id, p.company, 'automation', p.company, p.total, p.items, TEMPLATE);
    jobParams.push(randomUUID(), 'batch-process', `{"batch_id":"${p.id}"}`);
  }
  await db.transaction(async (tx) => {
    await tx.query(`INSERT INTO batches (batch_id, company_id, kind, source_id, total, items, template) VALUES ${values(group.length, 7, ['', '', '', '', '', '', '::jsonb'])}`, batchParams);
    await tx.query(`INSERT INTO jobs (id, name, data) VALUES ${values(group.length, 3, ['', '', '::jsonb'])}`, jobParams);
  });
}

// PGlite has one connection: one transaction open at a time.
const server = serveBareAccept(port, { commit, maxGroup: MAX_GROUP, maxInFlight: 1 });

// Closes PGlite cleanly on SIGTERM/SIGINT so its directory can be removed.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close();
    server.closeAllConnections();
    db.close().finally(() => process.exit(0));
  });
}

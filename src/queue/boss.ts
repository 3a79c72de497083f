/**
 * pg-boss 12 on either database. On PGlite it runs through
 * `fromPglite`; on PostgreSQL it keeps its own pool. Jobs are enqueued inside the caller's Kysely
 * transaction through `fromKysely`, so a batch and the job that processes it commit together.
 *
 * Instance options chosen here: LISTEN/NOTIFY on (workers wake when a job is inserted instead of
 * waiting for a poll; on PostgreSQL it holds one extra connection), and the supervisor/monitor run
 * every 10 s so that a job whose worker died (no heartbeat, see jobs.ts) is retried within ~20 s (heartbeatSeconds 10 for batch-process and messages-deliver).
 * Maintenance (which deletes finished jobs older than their queue's `deleteAfterSeconds`, jobs.ts
 * KEEP_FINISHED) runs every MAINTENANCE_INTERVAL_SECONDS instead of pg-boss's daily default, so that
 * each pass deletes a few minutes of jobs rather than a day of them in one statement
 * (docs/operations.md "Retention").
 */
import { warmQueueCache } from '../db/driver-tricks.ts';
import { PREPARED } from '../db/prepared.ts';
import { PgBoss, fromKysely, fromPglite, type JobInsert } from 'pg-boss';
import type { Database, Tx } from '../db/database.ts';
import type { InsertBatchJobs } from '../db/accept-store.ts';
import type { JobQueue } from '../domain/job-queue.ts';
import { JOB_NAMES, JOB_SPECS, type JobName, type JobPayloads } from './jobs.ts';

export type Boss = PgBoss;

/** pg-boss's schema (its tables and functions). */
export const BOSS_SCHEMA = 'pgboss';

/** How often pg-boss's supervisor looks for expired and heartbeat-less jobs (seconds). */
export const MONITOR_INTERVAL_SECONDS = 10;

/** How often pg-boss's maintenance deletes finished jobs (seconds). */
export const MAINTENANCE_INTERVAL_SECONDS = 300;

/**
 * Creates pg-boss on the database and makes sure every queue of the registry exists with its policy.
 * On PostgreSQL pg-boss keeps its own pool of `poolMax` connections; with `statementTimeoutMs` each
 * of them starts with that `statement_timeout` (pg-boss's documented `options`, passed to node-postgres
 * as `-c statement_timeout=…`): the background limit, docs/operations.md "Statement time limits".
 */
export async function startBoss(database: Database, opts: { poolMax?: number; statementTimeoutMs?: number } = {}): Promise<Boss> {
  const common = {
    schema: BOSS_SCHEMA,
    useListenNotify: true,
    superviseIntervalSeconds: MONITOR_INTERVAL_SECONDS,
    monitorIntervalSeconds: MONITOR_INTERVAL_SECONDS,
    queueCacheIntervalSeconds: MONITOR_INTERVAL_SECONDS,
    maintenanceIntervalSeconds: MAINTENANCE_INTERVAL_SECONDS,
  };
  const boss = database.pgliteStatements
    ? new PgBoss({ ...common, db: fromPglite(database.pgliteStatements), backend: 'pglite' } as ConstructorParameters<typeof PgBoss>[0])
    : new PgBoss({
      ...common, connectionString: database.url!, max: opts.poolMax ?? 4,
      ...(opts.statementTimeoutMs ? { options: `-c statement_timeout=${Math.round(opts.statementTimeoutMs)}` } : {}),
    });
  boss.on('error', () => {});
  await boss.start();
  for (const name of JOB_NAMES) {
    const spec = JOB_SPECS[name].queue;
    await boss.createQueue(name, spec); // no-op when the queue exists
    // Keep an existing queue's policy in step with the registry (options can change between releases).
    const { notify, retryLimit, retryDelay, retryBackoff, retryDelayMax, expireInSeconds, heartbeatSeconds, deleteAfterSeconds } = spec;
    await boss.updateQueue(name, { notify, retryLimit, retryDelay, retryBackoff, retryDelayMax, expireInSeconds, heartbeatSeconds, deleteAfterSeconds });
    // createQueue/updateQueue evict pg-boss's queue cache; refill it before the first accept
    // (db/driver-tricks.ts trick 4: on PGlite a refill inside the accept transaction would wait forever).
    await warmQueueCache(boss, name, { embedded: database.kind === 'pglite', tricks: database.driverTricks });
  }
  return boss;
}

/** Enqueues a job inside the caller's transaction: it exists if and only if the transaction commits. */
export async function enqueue<N extends JobName>(boss: Boss, trx: Tx, name: N, data: JobPayloads[N]): Promise<void> {
  await boss.send(name, data, { db: fromKysely(trx) });
}

/** Enqueues several jobs of one queue in one statement inside the caller's transaction. */
export async function enqueueMany<N extends JobName>(
  boss: Boss, trx: Tx, name: N, jobs: { data: JobPayloads[N]; startAfter?: Date }[],
): Promise<void> {
  const adapter = fromKysely(trx);
  await insertJobs(boss, (text, values) => adapter.executeSql(text, values), name, jobs);
}

/** Runs one SQL text for pg-boss: resolves to its rows. */
export type ExecuteSql = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>;

/**
 * Enqueues several jobs of one queue in ONE statement, run by `executeSql` (which decides the
 * connection and so the transaction). pg-boss's INSERT text is the same for every call on a queue, so
 * it is handed over marked {@link PREPARED}: run as a named prepared statement on PostgreSQL.
 */
export async function insertJobs<N extends JobName>(
  boss: Boss, executeSql: ExecuteSql, name: N, jobs: { data: JobPayloads[N]; startAfter?: Date }[],
): Promise<void> {
  if (jobs.length === 0) return;
  const rows: JobInsert[] = jobs.map((j) => ({ data: j.data, ...(j.startAfter ? { startAfter: j.startAfter } : {}) }));
  await boss.insert(name, rows, { db: { executeSql: (text: string, values?: unknown[]) => executeSql(PREPARED + text, values) } });
}

/**
 * The accept store's job INSERT (db/accept-store.ts {@link InsertBatchJobs}): one `batch-process` job
 * per batch id, in one statement run by the store's `executeSql`.
 */
export function batchProcessJobs(boss: Boss): InsertBatchJobs {
  return (executeSql, batchIds) => insertJobs(boss, executeSql, 'batch-process', batchIds.map((batch_id) => ({ data: { batch_id } })));
}

/** The domain's job queue (domain/job-queue.ts) on pg-boss: each job enqueued in the caller's transaction. */
export function jobQueue(boss: Boss): JobQueue {
  return { enqueue: (trx, name, data) => enqueue(boss, trx, name, data as JobPayloads[typeof name]) };
}

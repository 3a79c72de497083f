/**
 * Wake-ups for jobs that come due (docs/architecture.md "Queue polling").
 *
 * pg-boss wakes a queue's workers through LISTEN/NOTIFY when a job is inserted ready to run, but a
 * job that becomes runnable later (a job retried after its backoff, a job inserted with a start
 * time, an expired job put back by pg-boss's supervisor) sends no notification: without one, a
 * worker finds it only at its next poll. {@link notifyDueQueues} is one statement that finds, among
 * the given queues, those with at least one job ready now and sends pg-boss's own notification for
 * each (the channel comes from pg-boss's `notifyChannelSql`, so it follows pg-boss), which wakes that
 * queue's workers in every process that listens. The workers' polls can then be far apart.
 */
import { sql } from 'kysely';
import { notifyChannelSql } from 'pg-boss/dist/plans.js';
import type { Db } from './database.ts';

/**
 * Sends pg-boss's wake-up notification for each queue of `names` (pg-boss `schema`) that has a job
 * ready to run: created or retry, not blocked, `start_after` at or before pg-boss's database time.
 * Resolves to those queues' names. One statement, an index probe per queue (pg-boss's index on
 * `(name, priority, created_on, start_after)` of jobs not yet active); outside any transaction, the
 * notifications go out when it ends.
 */
export async function notifyDueQueues(db: Db, schema: string, names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const { rows } = await sql<{ name: string }>`
    SELECT q.name, pg_notify(${sql.raw(notifyChannelSql(schema))}, q.name)
    FROM unnest(${[...names]}::text[]) AS q(name)
    WHERE EXISTS (
      SELECT 1 FROM ${sql.table(`${schema}.job`)} j
      WHERE j.name = q.name AND j.state < 'active' AND NOT j.blocked AND j.start_after <= ${sql.raw(schema)}.job_now()
    )`.execute(db);
  return rows.map((r) => r.name);
}

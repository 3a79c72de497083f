/**
 * The workers' wake-up timer for jobs that come due (docs/architecture.md "Queue polling"): every
 * DUE_JOB_CHECK_MS of real time, one statement (db/driver-tricks.ts `notifyDueQueues`, trick 6) sends pg-boss's
 * notification for each of this process's queues that has a job ready to run, so that a retry, a
 * job with a start time or an expired job put back runs within about a second although the
 * workers' own polls (`QUEUE_POLL_SECONDS`) are far apart. Started only with the driver tricks on
 * (workers.ts). Never two rounds at once; errors are logged and the next round tries again.
 */
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { notifyDueQueues } from '../db/driver-tricks.ts';

/** How often the wake-up round runs (ms of real time): the latency of a job that comes due. */
export const DUE_JOB_CHECK_MS = 1_000;

/** A running wake-up timer: `stop()` ends it and waits for a round in progress. */
export interface DueJobWakeups {
  stop(): Promise<void>;
}

/** Starts the wake-up rounds (every DUE_JOB_CHECK_MS) for the queues `names` of pg-boss `schema` on `db`. */
export function startDueJobWakeups(db: Db, schema: string, names: readonly string[], log: Logger): DueJobWakeups {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    running ??= notifyDueQueues(db, schema, names)
      .catch((err) => log.warn({ err: (err as Error).message }, 'due-job wake-up failed; tried again'))
      .finally(() => { running = undefined; });
  }, DUE_JOB_CHECK_MS);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

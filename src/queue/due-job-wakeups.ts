/**
 * The workers' wake-up timer for jobs that come due (docs/architecture.md "Queue polling"): every
 * `intervalMs` of real time, one statement (db/driver-tricks.ts `notifyDueQueues`, trick 6) sends pg-boss's
 * notification for each of this process's queues that has a job ready to run, so that a retry, a
 * job with a start time or an expired job put back runs within about `intervalMs` although the
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
  /** Runs one round now; resolves to the queues it woke. */
  runNow(): Promise<string[]>;
  stop(): Promise<void>;
}

/** Starts the wake-up rounds for the queues `names` of pg-boss `schema` on `db`. */
export function startDueJobWakeups(db: Db, schema: string, names: readonly string[], log: Logger, intervalMs = DUE_JOB_CHECK_MS): DueJobWakeups {
  let running: Promise<string[]> | undefined;
  const round = (): Promise<string[]> => {
    running ??= notifyDueQueues(db, schema, names)
      .catch((err) => { log.warn({ err: (err as Error).message }, 'due-job wake-up failed; tried again'); return []; })
      .finally(() => { running = undefined; });
    return running;
  };
  const timer = setInterval(() => { void round(); }, intervalMs);
  return {
    runNow: round,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

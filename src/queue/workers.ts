/**
 * Background workers: consume the job registry's queues (jobs.ts) in this process,
 * run the held-message sweep, and feed the queue-depth metrics.
 *
 * - `batch-process` → handlers/batch-process.ts (fan-out), `messages-deliver` → handlers/messages-deliver.ts,
 *   `messages-release` → handlers/messages-release.ts, `contacts-import` → handlers/contacts-import.ts,
 *   `batch-control` → handlers/batch-control.ts. Workers fetch jobs in small batches and settle
 *   each job on its own (`perJobResults`): one failing job is retried by pg-boss without touching the
 *   others of its batch.
 * - Chunks in flight: `messages-deliver` runs `localConcurrency` fetch loops of `batchSize` jobs;
 *   WORKER_CONCURRENCY (config.workerConcurrency) sets the number of loops (default 4, i.e. up to 16
 *   chunks at once), each chunk with up to DELIVERY_CONCURRENCY provider requests in flight.
 * - The sweep (every SWEEP_INTERVAL_MS of real time) also runs the providers' periodic tasks
 *   (providers/types.ts PeriodicTask, from the provider registry: e.g. a template catalogue sync, a
 *   pacing prune), each about every `everyMs` and, when it asks, on every sweepNow; errors logged, never
 *   fatal. The workers know them only by those fields.
 * - The sweep (every SWEEP_INTERVAL_MS of real time) releases held messages whose time has come by the
 *   injectable clock (delivery hours, and retries' `next_attempt_at`), and re-enqueues the messages of
 *   dead delivery runs (lease ran out); see handlers/messages-release.ts.
 * - Message retention (retention.ts): its own timer (SWEEP_INTERVAL_MS) starts a round when one is due,
 *   apart from the sweep so that a long round never delays releases.
 * - Jobs that come due later (retries after their backoff, start times, expired jobs put back) wake
 *   their queue's workers within DUE_JOB_CHECK_MS (due-job-wakeups.ts): one statement a second for all
 *   queues instead of every fetch loop polling each second (db/driver-tricks.ts trick 6; with the
 *   tricks off the loops poll each second).
 * - On the embedded database, a VACUUM of the tables a send rewrites every PGLITE_VACUUM_INTERVAL
 *   (db/embedded-vacuum.ts: PGlite has no autovacuum).
 * - stop(): no new delivery attempt starts, the sweep ends, and the call waits for the jobs in hand to
 *   settle (in-flight attempts finish; claimed messages not started are handed back for a later run).
 */
import type { Job } from 'pg-boss';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { SecretBox } from '../domain/secrets.ts';
import type { Clock } from '../clock.ts';
import { countHeldMessages } from '../db/queue-depth.ts';
import type { DeliveryClient } from '../delivery/client.ts';
import { setQueueDepthSource } from '../metrics.ts';
import { createProviderRegistry, providerSettings, type PeriodicTask } from '../providers/index.ts';
import type { Boss } from './boss.ts';
import { FAN_OUT_STEP, FAN_OUT_STEP_POSTGRES, FanOutInterrupted, processBatch } from './handlers/batch-process.ts';
import type { PipelineContext } from './handlers/context.ts';
import { ChunkBusyError, deliverChunk, FLUSH_MS } from './handlers/messages-deliver.ts';
import { ResultWriter } from './handlers/result-writer.ts';
import { recoverDead, releaseBatch, releaseDue } from './handlers/messages-release.ts';
import { applyReceiptsJob } from './handlers/receipts-apply.ts';
import { runContactsImport } from './handlers/contacts-import.ts';
import { controlBatch } from './handlers/batch-control.ts';
import { JOB_NAMES, JOB_SPECS, type JobName, type JobPayloads } from './jobs.ts';
import { MessageRetention, type RetentionRound } from './retention.ts';
import { startEmbeddedVacuum } from '../db/embedded-vacuum.ts';
import { QUEUE_POLL_SECONDS } from '../db/driver-tricks.ts';
import { BOSS_SCHEMA } from './boss.ts';
import { startDueJobWakeups } from './due-job-wakeups.ts';

export interface WorkerDeps {
  database: Database;
  boss: Boss;
  logger: Logger;
  clock: Clock;
  secrets: SecretBox;
  config: Config;
  /** The service's one outbound client (delivery/client.ts); the providers send through it. */
  delivery: DeliveryClient;
}

export interface Workers {
  stop(): Promise<void>;
  /**
   * Runs one held-message sweep now (what the SWEEP_INTERVAL_MS timer runs), after any sweep in
   * progress; resolves when it is done. Tests use it instead of waiting for the timer.
   */
  sweepNow(): Promise<void>;
  /** Runs one message-retention round now (after one in progress); resolves to what it did. */
  retentionNow(): Promise<RetentionRound>;
}

/** Real-time interval of the held-message sweep (ms). */
export const SWEEP_INTERVAL_MS = 1_000;

/**
 * Every how many sweeps the dead-lease recovery runs (5 s): it reads the pending messages of every
 * batch still being delivered (lease_until is not indexed, see migration 011), which is worth doing
 * every few seconds, not every second; a 15 s lease is recovered within 20 s either way.
 */
export const RECOVERY_EVERY_SWEEPS = 5;

/** Provider requests in flight per chunk. */
export const DELIVERY_CONCURRENCY = 32;

type Handler<N extends JobName> = (ctx: PipelineContext, job: Job<JobPayloads[N]>) => Promise<unknown>;

const HANDLERS: { [N in JobName]: Handler<N> } = {
  'batch-process': (ctx, job) => processBatch(ctx, job.data.batch_id),
  'messages-deliver': (ctx, job) => deliverChunk(ctx, job.data, job.signal),
  'messages-release': (ctx, job) => releaseBatch(ctx, job.data),
  'receipts-apply': (ctx, job) => applyReceiptsJob(ctx, job.data),
  'contacts-import': (ctx, job) => runContactsImport(ctx, job.data),
  'batch-control': (ctx, job) => controlBatch(ctx, job.data),
};

/** Starts the workers of this process (roles `worker` and `all`). */
export async function startWorkers(deps: WorkerDeps): Promise<Workers> {
  const { database, boss, logger, clock, config } = deps;
  const log = logger.child({ component: 'workers' });
  const drain = new AbortController();
  const providers = createProviderRegistry({
    secrets: deps.secrets,
    client: deps.delivery,
    db: database.db,
    clock,
    ...providerSettings(config),
  });
  const ctx: PipelineContext = {
    db: database.db, boss, clock, logger: log, providers, drain: drain.signal, deliveryConcurrency: DELIVERY_CONCURRENCY,
    retrySchedule: config.deliveryRetrySchedule, idle: () => database.gate.idle(),
    fanOutStep: database.kind === 'postgres' ? FAN_OUT_STEP_POSTGRES : FAN_OUT_STEP,
    resultWriter: new ResultWriter(database.db, FLUSH_MS),
  };
  boss.on('error', (err: Error) => log.warn({ err: err.message }, 'queue error'));
  // The providers' periodic work, each every `everyMs` rounded to whole sweeps.
  const tasks = providers.periodicTasks().map((task) => ({ task, every: Math.max(1, Math.round(task.everyMs / SWEEP_INTERVAL_MS)) }));
  /** Runs the due tasks one after the other (none once the workers stop); a failure is logged. */
  const runTasks = async (due: (t: { task: PeriodicTask; every: number }) => boolean): Promise<void> => {
    for (const t of tasks) {
      if (drain.signal.aborted || !due(t)) continue;
      try {
        await t.task.run({ signal: drain.signal, log });
      } catch (err) {
        log.warn({ err: (err as Error).message }, `${t.task.name} failed`);
      }
    }
  };

  async function register<N extends JobName>(name: N): Promise<void> {
    const spec = JOB_SPECS[name];
    const localConcurrency = name === 'messages-deliver' ? config.workerConcurrency : spec.work.localConcurrency;
    const handler = HANDLERS[name] as Handler<N>;
    const notifyPollingIntervalSeconds = QUEUE_POLL_SECONDS[database.driverTricks ? 'tricks' : 'plain'];
    await boss.work<JobPayloads[N]>(name, { ...spec.work, localConcurrency, notifyPollingIntervalSeconds, perJobResults: true }, async (jobs) => {
      return Promise.all(jobs.map(async (job) => {
        try {
          await handler(ctx, job);
          return { id: job.id, status: 'completed' as const };
        } catch (err) {
          const message = (err as Error)?.message ?? String(err);
          if (err instanceof ChunkBusyError || err instanceof FanOutInterrupted) log.debug({ job: name, id: job.id, err: message }, 'job will be retried');
          else log.warn({ job: name, id: job.id, retry: job.retryCount, err: message }, 'job failed; pg-boss retries it');
          return { id: job.id, status: 'failed' as const, output: { message } };
        }
      }));
    });
  }
  for (const name of JOB_NAMES) await register(name);
  // Retries, start times and expired jobs wake their queue's workers within a second (due-job-wakeups.ts;
  // with the driver tricks off the loops poll every second instead).
  const wakeups = database.driverTricks ? startDueJobWakeups(database.db, BOSS_SCHEMA, JOB_NAMES, log) : undefined;

  let sweeping = false;
  let sweeps = 0;
  /** One sweep: releases, the lease recovery when `recover`, then the periodic tasks `due` says. */
  const runSweep = (recover: boolean, due: (t: { task: PeriodicTask; every: number }) => boolean) => releaseDue(ctx)
    .then((n) => { if (n) log.info({ released: n }, 'held messages released'); })
    .catch((err) => log.warn({ err: (err as Error).message }, 'release sweep failed'))
    .then(() => (recover ? recoverDead(ctx) : 0))
    .then((n) => { if (n) log.warn({ recovered: n }, 'messages of dead delivery runs enqueued again'); })
    .catch((err) => log.warn({ err: (err as Error).message }, 'lease recovery sweep failed'))
    .then(() => runTasks(due))
    .finally(() => { sweeping = false; });
  const sweep = setInterval(() => {
    if (sweeping || drain.signal.aborted) return;
    sweeping = true;
    const n = ++sweeps;
    void runSweep(n % RECOVERY_EVERY_SWEEPS === 0, (t) => n % t.every === 0);
  }, SWEEP_INTERVAL_MS);

  const retention = new MessageRetention(database, clock, log, config.messageRetentionMs);
  const vacuum = startEmbeddedVacuum(database, config.pgliteVacuumIntervalMs, log);
  const retentionTimer = setInterval(() => {
    if (drain.signal.aborted) return;
    retention.runIfDue(drain.signal).catch((err) => log.warn({ err: (err as Error).message }, 'retention round failed; tried again later'));
  }, SWEEP_INTERVAL_MS);

  setQueueDepthSource({
    async jobs() {
      const queues = await boss.getQueues([...JOB_NAMES]);
      return queues.flatMap((q) => [
        { queue: q.name, state: 'queued', count: q.readyCount },
        { queue: q.name, state: 'deferred', count: q.deferredCount },
        { queue: q.name, state: 'active', count: q.activeCount },
      ]);
    },
    heldMessages: () => countHeldMessages(database.db),
  });

  let stopped = false;
  return {
    async sweepNow() {
      while (sweeping) await new Promise((r) => setTimeout(r, 10));
      sweeping = true;
      await runSweep(true, (t) => t.task.onSweepNow === true);
    },
    retentionNow: () => retention.run(drain.signal),
    async stop() {
      if (stopped) return;
      stopped = true;
      drain.abort();
      clearInterval(sweep);
      clearInterval(retentionTimer);
      await wakeups?.stop();
      setQueueDepthSource(undefined);
      await Promise.all(JOB_NAMES.map((name) => boss.offWork(name, { wait: true }).catch(() => {})));
      while (sweeping) await new Promise((r) => setTimeout(r, 10));
      await retention.idle();
      await vacuum.stop();
      await providers.close();
    },
  };
}

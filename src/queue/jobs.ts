/**
 * The typed job registry: every background job's queue name, payload, queue policy and worker options.
 * Jobs are small and idempotent: running one twice changes nothing the first run did not.
 *
 * - `batch-process` {batch_id}: an accepted batch (4.3 or 4.4) fans out, in steps of FAN_OUT_STEP items (1000 on PostgreSQL)
 *   each its own transaction, into its message rows (contacts written, templates rendered, skips
 *   decided, campaign holds scheduled) and the `messages-deliver` chunks (or one deferred
 *   `messages-release`). Guarded by the batch's `fanned_out` counter, so a second run resumes after
 *   the last committed step and finds nothing to do once the batch is written.
 * - `messages-deliver` {batch_id, company_id, seq_from, seq_to}: the pending, released messages of one
 *   batch in a `seq` range (at most chunkSizeFor(provider) of them) are claimed (a renewable lease per message),
 *   handed to the company's provider and their results committed, set-based. A committed message is
 *   never claimed again; a message whose lease holder died is claimed again once the lease runs out.
 * - `receipts-apply` {company_id, by, source, statuses, messages?, round?}: receipts and inbound messages
 *   a provider posted to /webhooks/..., applied forward-only and set-based (handlers/receipts-apply.ts).
 * - `messages-release` {batch_id}: a campaign's held messages whose window has opened are released
 *   into `messages-deliver` chunks. Sent with `startAfter` at the opening; the workers' periodic sweep
 *   does the same for every batch against the injectable clock.
 *
 * - `contacts-import` {import_id, company_id}: a CSV import of contacts, written in
 *   chunks with its progress; a run resumes after the rows already committed (handlers/contacts-import.ts).
 * - `batch-control` {batch_id}: after a cancel, ends the batch's pending messages skipped / `cancelled`
 *   in bounded steps; after a resume, enqueues its deliveries again (handlers/batch-control.ts).
 *
 * Crash recovery (pg-boss 12): every queue has a heartbeat (`heartbeatSeconds`: 10 for `batch-process`
 * and `messages-deliver`, pg-boss's minimum, so that work of a dead worker resumes within 30 s;
 * 30 for the others). A worker refreshes the heartbeat of the jobs it holds every half of it
 * while the handler runs, so a long chunk (a slow webhook, a phone number paced at 80/s) is never
 * taken for dead; a job whose process died stops heartbeating and is failed and retried by the
 * supervisor within the heartbeat plus one monitor pass (`monitorIntervalSeconds` in boss.ts). Messages
 * a dead run had claimed are recovered sooner by their short leases (handlers/messages-release.ts).
 * `expireInSeconds` is only the hard upper bound of one run (a handler that hangs while its
 * process keeps heartbeating). Retries back off exponentially (1 s doubling, capped at 30 s).
 */
import type { Queue, WorkOptions } from 'pg-boss';

export interface JobPayloads {
  'batch-process': { batch_id: string };
  'messages-deliver': { batch_id: string; company_id: number; seq_from: number; seq_to: number };
  'messages-release': { batch_id: string };
  'receipts-apply': import('./handlers/receipts-apply.ts').ReceiptsJob;
  'contacts-import': import('./handlers/contacts-import.ts').ContactsImportJob;
  'batch-control': { batch_id: string };
}

export type JobName = keyof JobPayloads;

export const JOB_NAMES: readonly JobName[] = ['batch-process', 'messages-deliver', 'messages-release', 'receipts-apply', 'contacts-import', 'batch-control'];

/** Most pending messages one `messages-deliver` job covers (providers that make requests). */
export const CHUNK_SIZE = 250;

/** Chunk for the outbox, whose whole chunk is one UPDATE: a batch (at most 1000) in one job. */
export const OUTBOX_CHUNK_SIZE = 1000;

/** The chunk size for a company's provider (`companies.channel->>'provider'`). */
export function chunkSizeFor(provider: string | null | undefined): number {
  return !provider || provider === 'outbox' ? OUTBOX_CHUNK_SIZE : CHUNK_SIZE;
}

/** How a queue is created and worked. `work.localConcurrency` may be raised by WORKER_CONCURRENCY. */
export interface JobSpec {
  queue: Omit<Queue, 'name'>;
  work: WorkOptions;
}

const RETRY = { retryBackoff: true, retryDelay: 1, retryDelayMax: 30 } as const;

/**
 * How long a finished job (completed, or failed after its last retry) stays in pg-boss's job table
 * before pg-boss's maintenance deletes it (`deleteAfterSeconds`; pg-boss's default is 7 days, see
 * docs/operations.md "Retention"). Nothing reads a finished job: results are in the service's own
 * tables and failures are logged. The per-message queues (`messages-deliver`, `receipts-apply`) keep
 * theirs an hour, the others a day. Jobs not yet run are kept by pg-boss's `retentionSeconds`
 * (default 14 days after their start time), left as it is.
 */
export const KEEP_FINISHED = { perMessage: 3_600, other: 86_400 } as const;

/**
 * Polling: queues are `notify` queues (pg-boss LISTEN/NOTIFY wakes a queue's workers the moment a job
 * is inserted ready to run; the workers' due-job wake-ups, due-job-wakeups.ts, do the same when a
 * retry, a start time or an expired job comes due). How often a fetch loop polls by itself
 * (`notifyPollingIntervalSeconds`) is set by workers.ts from db/driver-tricks.ts QUEUE_POLL_SECONDS;
 * without LISTEN/NOTIFY pg-boss polls every `pollingIntervalSeconds`. Workers fetch several jobs at
 * once and keep fetching while batches come back full.
 */
const POLL = { pollingIntervalSeconds: 0.5, burstWhenBatchFull: true } as const;

export const JOB_SPECS: { readonly [N in JobName]: JobSpec } = {
  'batch-process': {
    // Steps of FAN_OUT_STEP items (FAN_OUT_STEP_POSTGRES on PostgreSQL), each its own transaction: seconds for 100,000 items.
    queue: { ...RETRY, retryLimit: 20, heartbeatSeconds: 10, expireInSeconds: 300, notify: true, deleteAfterSeconds: KEEP_FINISHED.other },
    work: { ...POLL, batchSize: 4, localConcurrency: 2 },
  },
  'messages-deliver': {
    // Up to CHUNK_SIZE provider deliveries, one attempt each; a chunk whose messages another run still
    // leases fails on purpose and is retried (hence the generous retryLimit).
    queue: { ...RETRY, retryLimit: 50, heartbeatSeconds: 10, expireInSeconds: 900, notify: true, deleteAfterSeconds: KEEP_FINISHED.perMessage },
    work: { ...POLL, batchSize: 4, localConcurrency: 2 },
  },
  'messages-release': {
    queue: { ...RETRY, retryLimit: 20, heartbeatSeconds: 30, expireInSeconds: 120, notify: true, deleteAfterSeconds: KEEP_FINISHED.other },
    work: { ...POLL, batchSize: 4, localConcurrency: 1 },
  },
  'receipts-apply': {
    // One UPDATE (and an inbound transaction) per job: well under a second; batches of jobs per fetch.
    queue: { ...RETRY, retryLimit: 20, heartbeatSeconds: 30, expireInSeconds: 120, notify: true, deleteAfterSeconds: KEEP_FINISHED.perMessage },
    work: { ...POLL, batchSize: 8, localConcurrency: 2 },
  },
  'contacts-import': {
    // 20 MiB at most: well under a minute; a retry resumes after the committed chunks.
    queue: { ...RETRY, retryLimit: 10, heartbeatSeconds: 30, expireInSeconds: 900, notify: true, deleteAfterSeconds: KEEP_FINISHED.other },
    work: { ...POLL, batchSize: 1, localConcurrency: 1 },
  },
  'batch-control': {
    // Steps of 1000 messages, or one statement and a few job inserts: seconds for 100,000 messages.
    queue: { ...RETRY, retryLimit: 20, heartbeatSeconds: 30, expireInSeconds: 300, notify: true, deleteAfterSeconds: KEEP_FINISHED.other },
    work: { ...POLL, batchSize: 2, localConcurrency: 1 },
  },
};

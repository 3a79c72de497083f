/**
 * Cancel, pause and resume of a send batch (docs/decisions.md "Cancel, pause and resume";
 * docs/operator-api.md `POST /admin/batches/{id}/cancel|pause|resume`), the same from the operator
 * API, the console and the CLI. Each answers after one short transaction (plus, for a cancel, at most
 * CANCEL_INLINE_MS of bounded steps), however big the batch and whatever the workers are doing.
 *
 * - **Cancel** marks the batch cancelled (`cancelled_at`) and counts what it stops; from that commit
 *   no delivery claim takes a message of the batch (the cancel locks the batch row FOR UPDATE, claims
 *   read it under a key-share lock: db/batch-control.ts, db/messages.ts).
 *   Its pending messages that no delivery run leases (held ones too) end skipped / `cancelled` in
 *   steps of CANCEL_STEP messages: inline for up to CANCEL_INLINE_MS, the rest by the `batch-control`
 *   job enqueued with the mark; the fan-out writes the items it has not reached yet as skipped /
 *   `cancelled`. Messages a delivery run holds at that moment are sent (in flight) or end cancelled
 *   (claimed, not started). The batch completes once nothing is pending. A completed or cancelled
 *   batch: `cancelled: 0`.
 * - **Pause** (`paused_at`): nothing more of the batch is handed to a provider (same claim rule); its
 *   messages stay pending (held ones keep their time), the fan-out goes on writing them, and the
 *   batch shows `paused`. **Resume** clears it and enqueues the `batch-control` job, which enqueues
 *   delivery for every pending, released message again. Pause of a paused batch and resume of a
 *   running one change nothing. Pause or resume of a completed or cancelled batch: 409.
 */
import type { Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
import { cancelPendingStep, countCancellable, markCancelled, readBatchControl, setPaused, type BatchControl } from '../db/batch-control.ts';
import { completeBatchIfDone } from '../db/messages.ts';
import { audit, type Actor } from './actor.ts';
import { getBatch, type BatchView } from './batches.ts';
import { DomainError, notFound } from './errors.ts';
import type { JobQueue } from './job-queue.ts';

/** Messages one cancel step ends skipped / `cancelled` (one short statement each). */
export const CANCEL_STEP = 1_000;

/** How long a cancel request goes on with steps itself before leaving the rest to its job (ms). */
export const CANCEL_INLINE_MS = 300;

/** What a cancel did (docs/operator-api.md): messages it stopped, and whether none was written yet. */
export interface CancelResult { batch_id: string; cancelled: number; before_fan_out: boolean }

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The batch's control row (of `companyId` when given: null is the operator); 404 `Batch not found`. */
async function controlOf(db: Db, batchId: string, companyId: number | null): Promise<BatchControl> {
  const c = UUID_RE.test(batchId) ? await readBatchControl(db, batchId.toLowerCase(), companyId ?? undefined) : undefined;
  if (!c) throw notFound('Batch not found');
  return c;
}

/** 409 for a batch that can no longer be paused or resumed. */
function finished(c: BatchControl): never {
  throw new DomainError(409, c.cancelled ? 'Batch is cancelled' : 'Batch is completed');
}

/** What the commands below need of the service (AppDeps, src/http/deps.ts, has it). */
export interface BatchControlDeps {
  readonly database: { readonly db: Db };
  readonly jobs: JobQueue;
  readonly clock: Clock;
}

/** The company an actor may act on: null (any) for the operator, its own otherwise. */
const scopeOf = (actor: Actor): number | null => (actor.kind === 'operator' ? null : actor.companyId);

/**
 * Command: cancels batch `batchId` (see the module comment) at the service clock's now and records
 * `batch.cancel` (target `batch:<id>`, details `{cancelled}`, the batch's company). The operator
 * reaches every batch, a console user or key its company's. 404 `Batch not found`. Idempotent (again:
 * `cancelled: 0`, recorded again).
 */
export async function cancelBatch(deps: BatchControlDeps, actor: Actor, batchId: string): Promise<CancelResult> {
  const db = deps.database.db;
  const c = await controlOf(db, batchId, scopeOf(actor));
  const result = await cancelControlled(db, deps.jobs, c, deps.clock.now());
  await audit(db, actor, { action: 'batch.cancel', target: `batch:${result.batch_id}`, companyId: c.company_id, details: { cancelled: result.cancelled } });
  return result;
}

/** Cancels the batch of control row `c` at `now` (ms). */
async function cancelControlled(db: Db, jobs: JobQueue, c: BatchControl, now: number): Promise<CancelResult> {
  const id = c.batch_id;
  const marked = await db.transaction().execute(async (trx) => {
    const m = await markCancelled(trx, id, now);
    if (!m) return null;
    const n = await countCancellable(trx, id, m.fanned_out, m.total, m.unresolved);
    await jobs.enqueue(trx, 'batch-control', { batch_id: id });
    return { cancelled: n, before_fan_out: m.fanned_out === 0 };
  });
  if (!marked) return { batch_id: id, cancelled: 0, before_fan_out: false };
  // The first steps here, so that a small batch is done when the answer comes; the job does the rest.
  const deadline = Date.now() + CANCEL_INLINE_MS;
  let after = -1;
  while (Date.now() < deadline) {
    const step = await cancelPendingStep(db, id, { after, limit: CANCEL_STEP });
    if (step.last !== null) after = step.last;
    if (step.picked < CANCEL_STEP) break; // not n: the batch-control job may have taken some
  }
  // Also when the deadline ended the steps: the job may have finished before the last of them committed.
  await completeBatchIfDone(db, id, now);
  return { batch_id: id, ...marked };
}

/**
 * Command: pauses batch `batchId` at the service clock's now and records `batch.pause` (details `{}`);
 * answers the batch as it is then. Scoped as {@link cancelBatch}. 404; 409 completed or cancelled.
 */
export async function pauseBatch(deps: BatchControlDeps, actor: Actor, batchId: string): Promise<BatchView> {
  const db = deps.database.db;
  const companyId = scopeOf(actor);
  const c = await controlOf(db, batchId, companyId);
  if (c.status === 'completed' || c.cancelled) finished(c);
  if (!c.paused && !(await setPaused(db, c.batch_id, true, deps.clock.now()))) finished(await controlOf(db, c.batch_id, companyId));
  const batch = await getBatch(db, c.batch_id, companyId ?? undefined);
  await audit(db, actor, { action: 'batch.pause', target: `batch:${batch.batch_id}`, companyId: batch.company_id, details: {} });
  return batch;
}

/**
 * Command: resumes batch `batchId` and records `batch.resume` (details `{}`); answers the batch as it
 * is then. Scoped as {@link cancelBatch}. 404; 409 completed or cancelled.
 */
export async function resumeBatch(deps: BatchControlDeps, actor: Actor, batchId: string): Promise<BatchView> {
  const db = deps.database.db;
  const jobs = deps.jobs;
  const now = deps.clock.now();
  const companyId = scopeOf(actor);
  const c = await controlOf(db, batchId, companyId);
  if (c.status === 'completed' || c.cancelled) finished(c);
  if (c.paused) {
    const resumed = await db.transaction().execute(async (trx) => {
      if (!(await setPaused(trx, c.batch_id, false, now))) return false;
      await jobs.enqueue(trx, 'batch-control', { batch_id: c.batch_id });
      return true;
    });
    if (!resumed) finished(await controlOf(db, c.batch_id, companyId));
  }
  const batch = await getBatch(db, c.batch_id, companyId ?? undefined);
  await audit(db, actor, { action: 'batch.resume', target: `batch:${batch.batch_id}`, companyId: batch.company_id, details: {} });
  return batch;
}

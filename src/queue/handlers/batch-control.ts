/**
 * `batch-control` {batch_id}: brings a batch in line with its control state after a cancel or a
 * resume (src/domain/batch-control.ts; docs/decisions.md "Cancel, pause and resume").
 *
 * - cancelled: its pending messages that no delivery run leases end skipped / `cancelled` in steps of
 *   CANCEL_STEP, each its own short statement, giving way to requests between two (ctx.idle); then the
 *   batch is completed if nothing is pending (the fan-out, and runs still holding messages, complete
 *   it otherwise). Running it again finds nothing left.
 * - running (resumed): `messages-deliver` chunks for every pending, released message no live run
 *   leases (a resume before a run handed its claimed messages back: that run retries its chunk), in
 *   transactions of at most ENQUEUE_STEP jobs. Chunks enqueued twice find their messages taken.
 * - paused again meanwhile, completed, or gone: nothing.
 */
import { cancelPendingStep, pendingRanges, readBatchControl } from '../../db/batch-control.ts';
import { completeBatchIfDone } from '../../db/messages.ts';
import { CANCEL_STEP } from '../../domain/batch-control.ts';
import { messagesFinal } from '../../metrics.ts';
import { enqueueMany } from '../boss.ts';
import { chunkSizeFor, type JobPayloads } from '../jobs.ts';
import type { PipelineContext } from './context.ts';

/** Delivery jobs enqueued per transaction by a resume. */
export const ENQUEUE_STEP = 500;

/** Runs the `batch-control` job for `data.batch_id`; returns how many messages it cancelled or chunks it enqueued. */
export async function controlBatch(ctx: PipelineContext, data: JobPayloads['batch-control']): Promise<number> {
  const c = await readBatchControl(ctx.db, data.batch_id);
  if (!c || c.status === 'completed') return 0;
  if (c.cancelled) {
    let after = -1;
    let total = 0;
    for (;;) {
      const step = await cancelPendingStep(ctx.db, c.batch_id, { after, limit: CANCEL_STEP });
      total += step.n;
      if (step.n) messagesFinal.inc({ status: 'skipped', provider: 'none' }, step.n);
      if (step.last !== null) after = step.last;
      if (step.picked < CANCEL_STEP) break; // not n: the request's inline steps may have taken some
      await (ctx.idle?.() ?? new Promise<void>((resolve) => setImmediate(resolve)));
    }
    await completeBatchIfDone(ctx.db, c.batch_id, ctx.clock.now());
    return total;
  }
  if (c.paused) return 0;
  const ranges = await pendingRanges(ctx.db, c.batch_id, chunkSizeFor(c.provider));
  for (let i = 0; i < ranges.length; i += ENQUEUE_STEP) {
    await ctx.db.transaction().execute((trx) => enqueueMany(ctx.boss, trx, 'messages-deliver',
      ranges.slice(i, i + ENQUEUE_STEP).map((r) => ({ data: { batch_id: c.batch_id, company_id: c.company_id, ...r } }))));
  }
  return ranges.length;
}

/**
 * Releases held messages once their time has come, judged by the injectable clock: campaign messages
 * waiting for delivery hours (4.4) and messages waiting for a retry (`next_attempt_at`,
 * docs/decisions.md#8-retries). In one transaction per step of RELEASE_STEP messages, due messages lose
 * their hold and `messages-deliver` chunks are enqueued for them. Two callers:
 * - the `messages-release` {batch_id} job, deferred (pg-boss, real time) to the window opening; if the
 *   clock says the batch still has messages not yet due, it defers itself again to the next one;
 * - the workers' periodic sweep (`releaseDue` over every batch), which is what makes a moved clock
 *   take effect within a sweep interval, and which also covers a lost or early release job.
 * Each message is released once (row locks, SKIP LOCKED), so concurrent callers never double-enqueue.
 *
 * `recoverDead` (also run by the sweep) does the same for messages whose delivery run died: pending,
 * released messages whose lease ran out lose it and are enqueued again.
 */
import { enqueueMany } from '../boss.ts';
import { chunkSizeFor, type JobPayloads } from '../jobs.ts';
import type { PipelineContext } from './context.ts';
import type { Tx } from '../../db/database.ts';
import { chunkRanges, companyProviders, nextHeld, recoverExpiredLeases, releaseHeld, type Released } from '../../db/messages.ts';

/** Most messages one call releases (or recovers); the rest wait for the next call. */
export const RELEASE_LIMIT = 10_000;

/**
 * Messages per release (or recovery) transaction: a call works in steps of this many, each its own
 * short transaction, giving way to requests between two (docs/architecture.md "Requests before
 * background work").
 */
export const RELEASE_STEP = 1_000;

/** Runs `step` (at most `size` rows, one transaction) until a step takes fewer or RELEASE_LIMIT rows are done; returns how many. */
async function inSteps(ctx: PipelineContext, step: (trx: Tx, size: number) => Promise<Released[]>): Promise<number> {
  let total = 0;
  while (total < RELEASE_LIMIT) {
    const size = Math.min(RELEASE_STEP, RELEASE_LIMIT - total);
    const n = await ctx.db.transaction().execute(async (trx) => {
      const rows = await step(trx, size);
      await enqueueDelivery(ctx, trx, rows);
      return rows.length;
    });
    total += n;
    if (n < size) break;
    await ctx.idle?.();
  }
  return total;
}

/** Releases due held messages (of one batch, or all) and enqueues their delivery; returns how many. */
export async function releaseDue(ctx: PipelineContext, batchId: string | null = null): Promise<number> {
  const now = ctx.clock.now();
  return inSteps(ctx, (trx, size) => releaseHeld(trx, now, batchId, size));
}

/**
 * Re-enqueues the messages of dead delivery runs (lease ran out while still pending and released);
 * returns how many. Each step one transaction: the leases are cleared only together with the new chunks.
 */
export async function recoverDead(ctx: PipelineContext): Promise<number> {
  return inSteps(ctx, (trx, size) => recoverExpiredLeases(trx, size));
}

/**
 * Enqueues `messages-deliver` chunks (per batch, by seq) for `rows`, in `trx`, each at most
 * `chunkSizeFor` the company's provider, as fan-out chunks them (one provider query per call).
 */
async function enqueueDelivery(ctx: PipelineContext, trx: Tx, rows: Released[]): Promise<void> {
  if (rows.length === 0) return;
  const byBatch = new Map<string, Released[]>();
  for (const r of rows) {
    const list = byBatch.get(r.batch_id) ?? [];
    list.push(r);
    byBatch.set(r.batch_id, list);
  }
  const providers = await companyProviders(trx, [...new Set(rows.map((r) => Number(r.company_id)))]);
  const jobs: { data: JobPayloads['messages-deliver'] }[] = [];
  for (const [id, list] of byBatch) {
    const size = chunkSizeFor(providers.get(Number(list[0].company_id)));
    for (const range of chunkRanges(list.map((r) => r.seq), size)) {
      jobs.push({ data: { batch_id: id, company_id: list[0].company_id, ...range } });
    }
  }
  await enqueueMany(ctx.boss, trx, 'messages-deliver', jobs);
}

/** The `messages-release` job: releases the batch's due messages, and re-defers itself for the rest. */
export async function releaseBatch(ctx: PipelineContext, data: JobPayloads['messages-release']): Promise<void> {
  await releaseDue(ctx, data.batch_id);
  const next = await nextHeld(ctx.db, data.batch_id);
  if (next === null) return;
  const delayMs = Math.max(1_000, next - ctx.clock.now());
  await ctx.db.transaction().execute(async (trx) => {
    await enqueueMany(ctx.boss, trx, 'messages-release', [{ data, startAfter: new Date(Date.now() + delayMs) }]);
  });
}

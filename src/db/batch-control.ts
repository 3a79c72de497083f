/**
 * The SQL of cancel, pause and resume (docs/decisions.md "Cancel, pause and resume"; migration 027):
 * the batch's control columns, the bounded steps that end a cancelled batch's pending messages, and
 * the delivery chunks a resumed batch needs again. One statement per function.
 *
 * A message "not handed to a provider" is a pending one that no live delivery run leases
 * (`lease_until` empty or past, database time): those are what a cancel ends skipped / `cancelled`.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';
import { executePreparedSql } from './prepared.ts';
import type { BatchStatus } from './schema.ts';
import type { DeliveryState } from './messages.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/** The status a batch shows: the stored one, or `paused`. */
export type ShownBatchStatus = BatchStatus | 'paused';

/**
 * The status a batch shows (SQL over a batch row aliased `b`): `paused` while an operator holds it
 * back (paused, not cancelled, not completed), else the stored status.
 */
export const SHOWN_BATCH_STATUS = sql<ShownBatchStatus>`(CASE WHEN b.paused_at IS NOT NULL AND b.cancelled_at IS NULL AND b.status <> 'completed' THEN 'paused' ELSE b.status END)`;

/** A batch's control columns, as cancel, pause and resume read them. */
export interface BatchControl {
  batch_id: string;
  company_id: number;
  status: BatchStatus;
  total: number;
  fanned_out: number;
  paused: boolean;
  cancelled: boolean;
  /** The company's channel provider (chunk sizes), null when none is set. */
  provider: string | null;
}

/** The control columns of batch `batchId` (of company `companyId` when given), or undefined. */
export async function readBatchControl(db: Db, batchId: string, companyId?: number): Promise<BatchControl | undefined> {
  const { rows } = await sql<BatchControl>`
    SELECT b.batch_id, b.company_id, b.status, b.total, b.fanned_out, b.paused_at IS NOT NULL AS paused,
      b.cancelled_at IS NOT NULL AS cancelled, c.channel->>'provider' AS provider
    FROM batches b JOIN companies c ON c.company_id = b.company_id
    WHERE b.batch_id = ${batchId}::uuid AND (${companyId ?? null}::int IS NULL OR b.company_id = ${companyId ?? null}::int)`.execute(db);
  return rows[0];
}

/** The batch's delivery state now (a plain read, for a run between its claims). */
export async function deliveryState(db: Db, batchId: string): Promise<DeliveryState> {
  const { rows } = await executePreparedSql(db, sql<{ paused: boolean; cancelled: boolean }>`
    SELECT paused_at IS NOT NULL AS paused, cancelled_at IS NOT NULL AS cancelled FROM batches WHERE batch_id = ${batchId}::uuid`);
  const r = rows[0];
  return !r ? 'gone' : r.cancelled ? 'cancelled' : r.paused ? 'paused' : 'running';
}

/**
 * The batch row locked FOR UPDATE, for a statement that pauses or cancels (a CTE `locked`): the one
 * lock that waits for delivery claims in progress, which read the row under a key-share lock
 * (db/messages.ts), so that every claim after the change commits sees it.
 */
const lockForClaims = (batchId: string) => sql`SELECT batch_id FROM batches WHERE batch_id = ${batchId}::uuid FOR UPDATE`;

/**
 * Marks a batch cancelled at `now` (ms) unless it is completed or cancelled already; returns its
 * fan-out progress then, or undefined when nothing changed. It waits for delivery claims in progress
 * ({@link lockForClaims}), and every claim after it commits sees the cancel.
 */
export async function markCancelled(db: Db, batchId: string, now: number): Promise<{ fanned_out: number; total: number; unresolved: boolean } | undefined> {
  const { rows } = await sql<{ fanned_out: number; total: number; unresolved: boolean }>`
    WITH locked AS (${lockForClaims(batchId)})
    UPDATE batches b SET cancelled_at = ${iso(now)}::timestamptz
    FROM locked WHERE b.batch_id = locked.batch_id AND b.status <> 'completed' AND b.cancelled_at IS NULL
    RETURNING b.fanned_out, b.total, (b.overrides ? 'segment_id' AND b.fanned_out = 0 AND b.items = '[]') AS unresolved`.execute(db);
  return rows[0];
}

/**
 * Sets (`paused` true) or clears the batch's pause when it is neither completed nor cancelled; true
 * when the batch can be paused / resumed at all. A pause waits for delivery claims in progress, as a
 * cancel does ({@link lockForClaims}).
 */
export async function setPaused(db: Db, batchId: string, paused: boolean, now: number): Promise<boolean> {
  const { rows } = await sql<{ batch_id: string }>`
    WITH locked AS (${lockForClaims(batchId)})
    UPDATE batches b SET paused_at = ${paused ? iso(now) : null}::timestamptz
    FROM locked WHERE b.batch_id = locked.batch_id AND b.status <> 'completed' AND b.cancelled_at IS NULL
    RETURNING b.batch_id`.execute(db);
  return rows.length > 0;
}

/**
 * What a cancel stops (docs/operator-api.md `cancelled`): the batch's pending messages no live run
 * leases, plus its items not yet written that have a valid number (`unresolved`: a segment send whose
 * members are not read yet, all of them).
 */
export async function countCancellable(db: Db, batchId: string, fannedOut: number, total: number, unresolved: boolean): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT (SELECT count(*) FROM messages
            WHERE batch_id = ${batchId}::uuid AND status = 'pending' AND (lease_until IS NULL OR lease_until < now()))::int
      + CASE WHEN ${fannedOut}::int >= ${total}::int THEN 0
             WHEN ${unresolved}::boolean THEN ${total}::int - ${fannedOut}::int
             ELSE (SELECT count(*) FROM batches b, json_array_elements(b.items::json) WITH ORDINALITY AS e(x, i)
                   WHERE b.batch_id = ${batchId}::uuid AND e.i > ${fannedOut}::int AND e.x->>'e164' IS NOT NULL)::int END AS n`.execute(db);
  return rows[0]?.n ?? 0;
}

/**
 * Ends skipped / `cancelled` at most `limit` pending messages of a batch that no live run leases (held
 * ones too), lowest seq first, within seq range [from, to] when given, after seq `after` when given.
 * Returns `n`, how many it changed, and `picked` / `last`: how many it looked at and the highest seq
 * among them (null when none), for the next step. A step of a cancel that runs beside another (the
 * request's inline steps and the batch-control job) may change fewer than it picked, the other
 * having taken some: so "done" is `picked < limit`, never `n < limit`.
 */
export async function cancelPendingStep(
  db: Db, batchId: string, opts: { from?: number; to?: number; after?: number; limit?: number } = {},
): Promise<{ n: number; picked: number; last: number | null }> {
  const from = Math.max(opts.from ?? 0, (opts.after ?? -1) + 1);
  const to = opts.to ?? 2_147_483_647;
  const { rows } = await sql<{ n: number; picked: number; last: number | null }>`
    WITH pick AS (
      SELECT message_id, seq FROM messages
      WHERE batch_id = ${batchId}::uuid AND status = 'pending' AND seq BETWEEN ${from} AND ${to}
        AND (lease_until IS NULL OR lease_until < now())
      ORDER BY seq LIMIT ${opts.limit ?? 2_147_483_647}),
    done AS (
      UPDATE messages m SET status = 'skipped', reason = 'cancelled', held_until = NULL, next_attempt_at = NULL, lease_until = NULL, updated_at = now()
      FROM pick WHERE m.message_id = pick.message_id AND m.status = 'pending' AND (m.lease_until IS NULL OR m.lease_until < now())
      RETURNING m.seq)
    SELECT (SELECT count(*) FROM done)::int AS n, count(*)::int AS picked, max(seq)::int AS last FROM pick`.execute(db);
  return { n: rows[0]?.n ?? 0, picked: rows[0]?.picked ?? 0, last: rows[0]?.last ?? null };
}

/** {@link cancelPendingStep} over a whole seq range in one statement (a delivery chunk: at most 1000 messages); returns how many. */
export async function cancelPending(db: Db, batchId: string, range: { from: number; to: number }): Promise<number> {
  return (await cancelPendingStep(db, batchId, range)).n;
}

/**
 * The `messages-deliver` ranges of a batch's pending, released messages that no live run leases, in
 * chunks of at most `size` messages by seq (what a resume enqueues again).
 */
export async function pendingRanges(db: Db, batchId: string, size: number): Promise<{ seq_from: number; seq_to: number }[]> {
  const { rows } = await sql<{ seq_from: number; seq_to: number }>`
    SELECT min(seq)::int AS seq_from, max(seq)::int AS seq_to FROM (
      SELECT seq, (row_number() OVER (ORDER BY seq) - 1) / ${size}::int AS g FROM messages
      WHERE batch_id = ${batchId}::uuid AND status = 'pending' AND held_until IS NULL
        AND (lease_until IS NULL OR lease_until < now())) t
    GROUP BY g ORDER BY 1`.execute(db);
  return rows;
}

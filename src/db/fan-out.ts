/**
 * SQL of a batch's fan-out (queue/handlers/batch-process.ts): reading the batch to fan out, storing a
 * segment send's items once, and moving its `fanned_out` counter one step on. One statement per
 * function; the handler decides what to do with the answers.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { BatchKind, DeliveryHours } from './schema.ts';
import type { BatchOverrides } from '../domain/batches.ts';
import type { Template } from '../domain/templates.ts';

/** A batch as the fan-out reads it: `items` as stored (JSON text, migration 007), with its company's settings. */
export interface FanOutRow {
  company_id: number;
  kind: BatchKind;
  source_id: number;
  /** The items as JSON text (an array of `BatchItem`). */
  items: string;
  overrides: BatchOverrides;
  template: Template;
  delivery_hours: DeliveryHours | null;
  /** The company's channel provider (`channel->>'provider'`), or null. */
  provider: string | null;
  /** The source's (automation's or campaign's) `expire_after` (a duration such as `24h`, or null). */
  expire_after: string | null;
  created_at: Date;
  status: string;
  /** Items written so far (positions `0 .. fanned_out - 1`). */
  fanned_out: number;
  total: number;
  cancelled: boolean;
}

/** Reads batch `batchId` with its company's delivery hours and provider and its source's expiry; undefined when unknown. */
export async function selectFanOutBatch(db: Db, batchId: string): Promise<FanOutRow | undefined> {
  const { rows } = await sql<FanOutRow>`
    SELECT b.company_id, b.kind, b.source_id, b.items, b.overrides, b.template, c.delivery_hours, c.channel->>'provider' AS provider,
      b.created_at, b.status, b.fanned_out, b.total, b.cancelled_at IS NOT NULL AS cancelled, CASE b.kind
        WHEN 'automation' THEN (SELECT a.expire_after FROM automations a WHERE a.automation_id = b.source_id)
        ELSE (SELECT k.expire_after FROM campaigns k WHERE k.campaign_id = b.source_id) END AS expire_after
    FROM batches b JOIN companies c ON c.company_id = b.company_id
    WHERE b.batch_id = ${batchId}::uuid`.execute(db);
  return rows[0];
}

/**
 * Stores `items` (and their count as `total`) on an accepted batch that has none yet and has not
 * started its fan-out; returns the rows changed (0: another run stored them first, or the batch moved on).
 */
export async function storeBatchItems(db: Db, batchId: string, items: readonly unknown[]): Promise<number> {
  const stored = await sql`
    UPDATE batches SET items = ${JSON.stringify(items)}, total = ${items.length}
    WHERE batch_id = ${batchId}::uuid AND status = 'accepted' AND fanned_out = 0 AND items = '[]'`.execute(db);
  return Number(stored.numAffectedRows ?? 0);
}

/** Moves an accepted batch to `processing` (no change in any other status). */
export async function markBatchProcessing(db: Db, batchId: string): Promise<void> {
  await sql`UPDATE batches SET status = 'processing' WHERE batch_id = ${batchId}::uuid AND status = 'accepted'`.execute(db);
}

/**
 * Moves the batch's `fanned_out` counter from `from` to `to` (and an accepted batch to `processing`)
 * unless it is completed or the counter is no longer at `from`; returns whether the batch is paused and
 * cancelled, or undefined when nothing was changed (another run wrote these positions first).
 */
export async function advanceFannedOut(db: Db, batchId: string, from: number, to: number): Promise<{ paused: boolean; cancelled: boolean } | undefined> {
  const { rows } = await sql<{ paused: boolean; cancelled: boolean }>`
    UPDATE batches SET fanned_out = ${to}, status = CASE WHEN status = 'accepted' THEN 'processing' ELSE status END
    WHERE batch_id = ${batchId}::uuid AND fanned_out = ${from} AND status <> 'completed'
    RETURNING paused_at IS NOT NULL AS paused, cancelled_at IS NOT NULL AS cancelled`.execute(db);
  return rows[0];
}

/**
 * The statements of message retention (docs/operations.md "Retention"; migration 028), one per
 * function, each bounded: it deletes at most `limit` rows, so that the retention job
 * (src/queue/retention.ts) never holds locks or PGlite's one connection for long. `cutoff` is a Date
 * of the injectable clock: what was made before it is due.
 *
 * "Finished" batches are those with a `completed_at` (set when the last message reached a final
 * status); a batch still accepted, processing or otherwise unfinished keeps itself and its messages
 * whatever its age.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * Deletes up to `limit` messages of finished batches accepted and finished before `cutoff`, found
 * through the batches (index batches_finished, then each batch's (batch_id, seq) index). Rows another
 * round holds are skipped. Returns how many.
 */
export async function deleteOldMessages(db: Db, cutoff: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH doomed AS (
      SELECT m.message_id FROM batches b JOIN messages m ON m.batch_id = b.batch_id
      WHERE b.completed_at IS NOT NULL AND b.created_at < ${cutoff} AND b.completed_at < ${cutoff}
      LIMIT ${limit}
      FOR UPDATE OF m SKIP LOCKED),
    gone AS (DELETE FROM messages m USING doomed WHERE m.message_id = doomed.message_id RETURNING 1)
    SELECT count(*)::int AS n FROM gone`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Deletes up to `limit` finished batches accepted and finished before `cutoff` that have no message
 * left (deleteOldMessages took them), so that the cascade to `messages` finds nothing to delete.
 * Returns how many.
 */
export async function deleteOldBatches(db: Db, cutoff: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH doomed AS (
      SELECT b.batch_id FROM batches b
      WHERE b.completed_at IS NOT NULL AND b.created_at < ${cutoff} AND b.completed_at < ${cutoff}
        AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.batch_id = b.batch_id)
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED),
    gone AS (DELETE FROM batches b USING doomed WHERE b.batch_id = doomed.batch_id RETURNING 1)
    SELECT count(*)::int AS n FROM gone`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** Deletes up to `limit` inbound messages (replies) stored before `cutoff`. Returns how many. */
export async function deleteOldInbound(db: Db, cutoff: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM inbound_messages WHERE inbound_id IN (
        SELECT inbound_id FROM inbound_messages WHERE created_at < ${cutoff} LIMIT ${limit})
      RETURNING 1)
    SELECT count(*)::int AS n FROM gone`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Deletes up to `limit` rows of the Overview's message counts (migration 015) whose 15-minute bucket
 * starts before `before`. Returns how many.
 */
export async function deleteOldMessageCounts(db: Db, before: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM message_counts c USING (
        SELECT company_id, bucket, status, code FROM message_counts WHERE bucket < ${before} LIMIT ${limit}) d
      WHERE c.company_id = d.company_id AND c.bucket = d.bucket AND c.status = d.status AND c.code = d.code
      RETURNING 1)
    SELECT count(*)::int AS n FROM gone`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** The tables the retention job deletes from (the ones {@link vacuumTable} accepts). */
export const RETAINED_TABLES = ['messages', 'batches', 'inbound_messages', 'message_counts', 'idempotency_keys'] as const;

/**
 * VACUUM of one of {@link RETAINED_TABLES} (PGlite: it runs no autovacuum, so without it the space of
 * deleted rows would never be reused and the tables would keep growing). Its cost grows with what was
 * deleted since the last one (docs/operations.md "Retention").
 */
export async function vacuumTable(db: Db, table: typeof RETAINED_TABLES[number]): Promise<void> {
  if (!RETAINED_TABLES.includes(table)) throw new Error(`not a retained table: ${table}`);
  await sql`VACUUM ${sql.table(table)}`.execute(db);
}

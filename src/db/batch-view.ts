/**
 * The one reader of the batch view (src/domain/batches.ts `batchViewOf` maps its rows): a batch with
 * its shown status, its per-status message numbers (`cms_batch_status_counts`, migration 035), what its
 * pending messages wait for, its source's name and its scheduled time. The operator API (GET
 * /admin/batches/{id}, the company's batch list, cancel / pause / resume answers), the console (Sends,
 * a send's page) and anything else that shows a batch read it here, for one batch or a page of a
 * company's batches. One statement per call.
 */
import { sql } from 'kysely';
import { SHOWN_BATCH_STATUS, type ShownBatchStatus } from './batch-control.ts';
import type { Db } from './database.ts';
import type { BatchKind } from './schema.ts';

/**
 * SQL of the name of a batch's automation or campaign (over `batches b`; null when it no longer
 * exists), looked up by primary key within the batch's company.
 */
export const SOURCE_NAME = sql<string | null>`(CASE b.kind
  WHEN 'automation' THEN (SELECT a.name FROM automations a WHERE a.automation_id = b.source_id AND a.company_id = b.company_id)
  ELSE (SELECT c.name FROM campaigns c WHERE c.campaign_id = b.source_id AND c.company_id = b.company_id) END)`;

/**
 * SQL of a batch's waiting messages by reason (a JSON object, null when none), for a query over
 * `batches b`: pending messages with a `reason` (the partial index of migration 017 does not serve a
 * batch, the batch's own index does).
 */
const WAITING_BY_REASON = sql<Record<string, number> | null>`(
  SELECT json_object_agg(w.reason, w.n) FROM (
    SELECT reason, count(*)::int AS n FROM messages
    WHERE batch_id = b.batch_id AND status = 'pending' AND reason IS NOT NULL GROUP BY reason) w)`;

/** One batch as the view reads it (the per-status numbers are messages by their own status). */
export interface BatchViewRow {
  batch_id: string;
  kind: BatchKind;
  source_id: number;
  company_id: number;
  status: ShownBatchStatus;
  cancelled: boolean;
  total: number;
  ignored_contacts: number;
  created_at: Date;
  completed_at: Date | null;
  sent: number; delivered: number; read: number; failed: number; skipped: number;
  /** Pending messages with a reason, by reason; null when none (or not asked for). */
  waiting: Record<string, number> | null;
  /** The automation's or campaign's name; null when it no longer exists. */
  source_name: string | null;
  /** A scheduled campaign send's time (`overrides.send_at`, ISO), else null. */
  send_at: string | null;
}

/**
 * Which batches to read:
 * - `{batchId, companyId?}`: one batch (a lower-case UUID), of that company when given;
 * - `{companyId, before, limit}`: keyset page, newest first (created_at, batch_id descending), batches
 *   older than batch `before` (a lower-case UUID of the company; null: the newest; another id: none);
 * - `{companyId, offset, limit}`: offset page, newest first (created_at descending, batch_id ascending).
 */
export type BatchSelection =
  | { batchId: string; companyId?: number }
  | { companyId: number; before: string | null; limit: number }
  | { companyId: number; offset: number; limit: number };

/**
 * The batch view rows of `selection` in its order; `waiting` false leaves `waiting` null (it counts a
 * batch's pending messages: the console's list does without it).
 */
export async function selectBatchViewRows(db: Db, selection: BatchSelection, opts: { waiting: boolean } = { waiting: true }): Promise<BatchViewRow[]> {
  let from;
  let order;
  if ('batchId' in selection) {
    const companyId = selection.companyId ?? null;
    from = sql`(SELECT * FROM batches WHERE batch_id = ${selection.batchId}::uuid AND (${companyId}::int IS NULL OR company_id = ${companyId}::int))`;
    order = sql``;
  } else if ('before' in selection) {
    from = sql`(SELECT * FROM batches
          WHERE company_id = ${selection.companyId}
            AND (${selection.before}::uuid IS NULL OR (created_at, batch_id) < (
                  SELECT created_at, batch_id FROM batches WHERE batch_id = ${selection.before}::uuid AND company_id = ${selection.companyId}))
          ORDER BY created_at DESC, batch_id DESC LIMIT ${selection.limit})`;
    order = sql`ORDER BY b.created_at DESC, b.batch_id DESC`;
  } else {
    from = sql`(SELECT * FROM batches WHERE company_id = ${selection.companyId}
          ORDER BY created_at DESC, batch_id LIMIT ${selection.limit} OFFSET ${selection.offset})`;
    order = sql`ORDER BY b.created_at DESC, b.batch_id`;
  }
  const { rows } = await sql<BatchViewRow>`
    SELECT b.batch_id, b.kind, b.source_id, b.company_id, ${SHOWN_BATCH_STATUS} AS status, b.cancelled_at IS NOT NULL AS cancelled,
           b.total, b.ignored_contacts, b.created_at, b.completed_at,
           coalesce(m.sent, 0)::int AS sent, coalesce(m.delivered, 0)::int AS delivered, coalesce(m.read, 0)::int AS read,
           coalesce(m.failed, 0)::int AS failed, coalesce(m.skipped, 0)::int AS skipped,
           ${opts.waiting ? WAITING_BY_REASON : sql`NULL`} AS waiting,
           ${SOURCE_NAME} AS source_name, b.overrides->>'send_at' AS send_at
    FROM ${from} b
    LEFT JOIN LATERAL cms_batch_status_counts(b.batch_id) m ON true
    ${order}`.execute(db);
  return rows;
}

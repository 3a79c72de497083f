/**
 * A company's send batches, newest first, one page at a time (operator API
 * `GET /admin/companies/{company_id}/batches`, `cms batch list`). Keyset pages:
 * ordered by (created_at, batch_id) descending; `before` is the batch_id of the last batch of the
 * previous page, so a page never repeats or skips a batch while new batches are accepted. A `before`
 * that is not a batch of this company (unknown, malformed, another company's) gives an empty page,
 * exactly like a batch id past the end. Counts as in getBatch (domain/batches.ts): a read message
 * counts in sent, delivered and read; `waiting` counts pending messages by what they wait for.
 */
import { sql } from 'kysely';
import { SHOWN_BATCH_STATUS, type ShownBatchStatus } from './batch-control.ts';
import type { Db } from './database.ts';
import { WAITING_BY_REASON, type BatchView } from '../domain/batches.ts';
import type { BatchKind } from './schema.ts';
import { batchCounts } from '../domain/batch-counts.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Up to `limit` batches of company `companyId` older than batch `before` (the newest when absent);
 * `next_before`: the cursor of the next page, null when this page is the last.
 */
export async function listCompanyBatches(db: Db, companyId: number, opts: { limit: number; before?: string }): Promise<{ batches: BatchView[]; next_before: string | null }> {
  if (opts.before !== undefined && !UUID.test(opts.before)) return { batches: [], next_before: null };
  const before = opts.before?.toLowerCase() ?? null;
  const { rows } = await sql<{
    batch_id: string; kind: BatchKind; source_id: number; status: ShownBatchStatus; total: number; ignored_contacts: number;
    created_at: Date; completed_at: Date | null; sent: number; delivered: number; read: number; failed: number; skipped: number;
    waiting: Record<string, number> | null;
  }>`
    SELECT b.batch_id, b.kind, b.source_id, ${SHOWN_BATCH_STATUS} AS status, b.total, b.ignored_contacts, b.created_at, b.completed_at,
           coalesce(m.sent, 0)::int AS sent, coalesce(m.delivered, 0)::int AS delivered, coalesce(m.read, 0)::int AS read,
           coalesce(m.failed, 0)::int AS failed, coalesce(m.skipped, 0)::int AS skipped, ${WAITING_BY_REASON} AS waiting
    FROM (SELECT * FROM batches
          WHERE company_id = ${companyId}
            AND (${before}::uuid IS NULL OR (created_at, batch_id) < (
                  SELECT created_at, batch_id FROM batches WHERE batch_id = ${before}::uuid AND company_id = ${companyId}))
          ORDER BY created_at DESC, batch_id DESC LIMIT ${opts.limit + 1}) b
    LEFT JOIN LATERAL cms_batch_status_counts(b.batch_id) m ON true
    ORDER BY b.created_at DESC, b.batch_id DESC`.execute(db);
  const batches = rows.slice(0, opts.limit).map((r) => ({
    batch_id: r.batch_id, kind: r.kind, source_id: r.source_id, company_id: companyId, status: r.status,
    counts: batchCounts(r.total, r),
    waiting: r.waiting ?? {}, ignored_contacts: r.ignored_contacts, created_at: r.created_at, completed_at: r.completed_at,
  }));
  return { batches, next_before: rows.length > opts.limit ? batches[batches.length - 1].batch_id : null };
}

/**
 * The status and results of automations and campaigns as their console lists show them
 * (src/domain/source-results.ts decides what they mean): one statement. Each source's batches are
 * found through the `batches_source` index (migration 034), so the cost grows with the sources listed
 * and the messages of their recent sends, not with the company's other batches.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { BatchKind, BatchStatus } from './schema.ts';

/** One source's newest batch and the summed funnel of its batches accepted since the window's start. */
export interface SourceResultRow {
  source_id: number;
  last_batch_at: Date | null;
  last_status: BatchStatus | null;
  last_send_at: string | null;
  last_cancelled: boolean | null;
  last_paused: boolean | null;
  messages: number;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  skipped: number;
}

/**
 * For each of company `companyId`'s sources of `kind` in `ids`: its newest batch (time, status, the
 * scheduled send time of `overrides.send_at`, whether it was cancelled or is paused) and, over its
 * batches accepted at or after `since`, the messages (the batches' totals) and the funnel of
 * `cms_batch_status_counts` (migration 024: sent counts delivered and read ones too). Sources without
 * batches have a row of nulls and zeros.
 */
export async function selectSourceResults(db: Db, companyId: number, kind: BatchKind, ids: number[], since: Date): Promise<SourceResultRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<SourceResultRow>`
    SELECT s.id AS source_id, last.created_at AS last_batch_at, last.status AS last_status, last.send_at AS last_send_at,
           last.cancelled AS last_cancelled, last.paused AS last_paused,
           coalesce(r.messages, 0)::int AS messages, coalesce(r.sent, 0)::int AS sent, coalesce(r.delivered, 0)::int AS delivered,
           coalesce(r.read, 0)::int AS read, coalesce(r.failed, 0)::int AS failed, coalesce(r.skipped, 0)::int AS skipped
    FROM (SELECT DISTINCT unnest(${sql.raw(`ARRAY[${ids.map((i) => Number(i)).filter(Number.isSafeInteger).join(',')}]::int[]`)}) AS id) s
    LEFT JOIN LATERAL (
      SELECT b.created_at, b.status, b.overrides->>'send_at' AS send_at, b.cancelled_at IS NOT NULL AS cancelled, b.paused_at IS NOT NULL AS paused
      FROM batches b WHERE b.company_id = ${companyId} AND b.kind = ${kind} AND b.source_id = s.id
      ORDER BY b.created_at DESC LIMIT 1
    ) last ON true
    LEFT JOIN LATERAL (
      SELECT sum(b.total) AS messages, sum(c.sent + c.delivered + c.read) AS sent, sum(c.delivered + c.read) AS delivered,
             sum(c.read) AS read, sum(c.failed) AS failed, sum(c.skipped) AS skipped
      FROM batches b CROSS JOIN LATERAL cms_batch_status_counts(b.batch_id) c
      WHERE b.company_id = ${companyId} AND b.kind = ${kind} AND b.source_id = s.id AND b.created_at >= ${since}
    ) r ON true`.execute(db);
  return rows;
}

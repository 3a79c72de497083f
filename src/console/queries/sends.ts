/**
 * Send batches and messages of one company (Sends pages): recent batches with their funnel counts
 * (docs/decisions.md#7-a-messages-life: a read message counts in sent, delivered and read), and messages found
 * by phone number with their lifecycle times and a waiting message's next attempt. Every query is scoped to the company; a batch's own page uses
 * domain/batches.ts (getBatch / listBatchMessages) with the company id.
 */
import { sql } from 'kysely';
import { SHOWN_BATCH_STATUS, type ShownBatchStatus } from '../../db/batch-control.ts';
import type { Db } from '../../db/database.ts';
import type { BatchCounts } from '../../domain/batches.ts';
import { batchCounts } from '../../domain/batch-counts.ts';
import type { BatchKind, MessageStatus } from '../../db/schema.ts';
import { toE164 } from '../../domain/phone.ts';

/** Batches per page of the Sends list. */
export const BATCHES_PER_PAGE = 25;
/** Most messages a phone search shows. */
export const SEARCH_LIMIT = 100;

/**
 * SQL of the name of a batch's automation or campaign (over `batches b`; null when it no longer
 * exists), looked up by primary key within the batch's company.
 */
export const SOURCE_NAME = sql<string | null>`(CASE b.kind
  WHEN 'automation' THEN (SELECT a.name FROM automations a WHERE a.automation_id = b.source_id AND a.company_id = b.company_id)
  ELSE (SELECT c.name FROM campaigns c WHERE c.campaign_id = b.source_id AND c.company_id = b.company_id) END)`;

/** What the console says of a send besides its counts: its source's name, its scheduled time, whether it was cancelled. */
export interface SendLabel {
  /** The automation's or campaign's name (null when it no longer exists). */
  source_name: string | null;
  /** A scheduled campaign send's time (ISO), else null. */
  send_at: string | null;
  cancelled: boolean;
}

export interface BatchRow extends SendLabel {
  batch_id: string;
  kind: BatchKind;
  source_id: number;
  status: ShownBatchStatus;
  created_at: Date;
  completed_at: Date | null;
  counts: BatchCounts;
}

/** One page (1-based) of the company's batches, newest first; `more` tells whether another page follows. */
export async function listRecentBatches(db: Db, companyId: number, page: number): Promise<{ batches: BatchRow[]; more: boolean }> {
  const offset = (page - 1) * BATCHES_PER_PAGE;
  const { rows } = await sql<{
    batch_id: string; kind: BatchKind; source_id: number; status: ShownBatchStatus; created_at: Date; completed_at: Date | null;
    source_name: string | null; send_at: string | null; cancelled: boolean; total: number; sent: number; delivered: number; read: number; failed: number; skipped: number;
  }>`
    SELECT b.batch_id, b.kind, b.source_id, ${SHOWN_BATCH_STATUS} AS status, b.created_at, b.completed_at, b.total,
           ${SOURCE_NAME} AS source_name, b.overrides->>'send_at' AS send_at, b.cancelled_at IS NOT NULL AS cancelled,
           coalesce(m.sent, 0)::int AS sent, coalesce(m.delivered, 0)::int AS delivered, coalesce(m.read, 0)::int AS read,
           coalesce(m.failed, 0)::int AS failed, coalesce(m.skipped, 0)::int AS skipped
    FROM (SELECT * FROM batches WHERE company_id = ${companyId}
          ORDER BY created_at DESC, batch_id LIMIT ${BATCHES_PER_PAGE + 1} OFFSET ${offset}) b
    LEFT JOIN LATERAL cms_batch_status_counts(b.batch_id) m ON true
    ORDER BY b.created_at DESC, b.batch_id`.execute(db);
  const batches = rows.slice(0, BATCHES_PER_PAGE).map((r) => ({
    batch_id: r.batch_id, kind: r.kind, source_id: r.source_id, status: r.status, created_at: r.created_at, completed_at: r.completed_at,
    source_name: r.source_name, send_at: r.send_at, cancelled: r.cancelled, counts: batchCounts(r.total, r),
  }));
  return { batches, more: rows.length > BATCHES_PER_PAGE };
}

export interface FoundMessage {
  batch_id: string;
  kind: BatchKind;
  source_id: number;
  source_name: string | null;
  batch_created_at: Date;
  phone: string;
  status: MessageStatus;
  reason: string | null;
  error: string | null;
  error_code: string | null;
  sent_at: Date | null;
  delivered_at: Date | null;
  read_at: Date | null;
  failed_at: Date | null;
  /** Set while a transient failure waits for its retry (only meaningful while `pending`). */
  next_attempt_at: Date | null;
  scheduled_for: Date | null;
}

/**
 * The company's messages to a phone number, newest batch first (at most SEARCH_LIMIT). A query that
 * parses as a number (the company's default country for numbers without a country code) matches its
 * E.164 form exactly; otherwise at least 4 digits match as a part of the number of one of the company's
 * contacts (every valid recipient is one, batch-process upserts them), whose messages are then found
 * through the (company_id, phone) index: scanning every message for the digits took 1.2 s p95 at 1M
 * messages (docs/benchmarks.md, console pages). At most 1,000 matching contacts are considered.
 */
export async function searchMessagesByPhone(db: Db, companyId: number, defaultCountry: string, query: string): Promise<FoundMessage[]> {
  const q = query.trim();
  const e164 = toE164(q, defaultCountry);
  const digits = q.replace(/\D/g, '');
  if (!e164 && digits.length < 4) return [];
  let select = db.selectFrom('messages as m')
    .innerJoin('batches as b', 'b.batch_id', 'm.batch_id')
    .select(['m.batch_id', 'b.kind', 'b.source_id', 'b.created_at as batch_created_at', 'm.phone', 'm.status', 'm.reason', 'm.error',
      'm.error_code', 'm.sent_at', 'm.delivered_at', 'm.read_at', 'm.failed_at', 'm.next_attempt_at', 'm.scheduled_for', SOURCE_NAME.as('source_name')])
    .where('m.company_id', '=', companyId).where('b.company_id', '=', companyId);
  select = e164
    ? select.where((eb) => eb.or([eb('m.phone', '=', e164), eb('m.phone', '=', q)]))
    : select.where('m.phone', 'in', db.selectFrom('contacts').select('phone')
      .where('company_id', '=', companyId).where('phone', 'like', `%${digits}%`).limit(1000));
  return select.orderBy('b.created_at', 'desc').orderBy('m.seq').limit(SEARCH_LIMIT).execute();
}

/** The {@link SendLabel} of the company's batch `batchId` (undefined when it is not one of the company's). */
export async function sendLabel(db: Db, companyId: number, batchId: string): Promise<SendLabel | undefined> {
  const { rows } = await sql<SendLabel>`
    SELECT ${SOURCE_NAME} AS source_name, b.overrides->>'send_at' AS send_at, b.cancelled_at IS NOT NULL AS cancelled
    FROM batches b WHERE b.batch_id = ${batchId}::uuid AND b.company_id = ${companyId}`.execute(db);
  return rows[0];
}

/** The source names (SOURCE_NAME) of the company's batches `batchIds`, by batch id; unknown ids are left out. */
export async function sourceNamesOf(db: Db, companyId: number, batchIds: string[]): Promise<Map<string, string | null>> {
  if (batchIds.length === 0) return new Map();
  const { rows } = await sql<{ batch_id: string; name: string | null }>`
    SELECT b.batch_id, ${SOURCE_NAME} AS name FROM batches b
    WHERE b.company_id = ${companyId} AND b.batch_id = ANY (${batchIds}::uuid[])`.execute(db);
  return new Map(rows.map((r) => [r.batch_id, r.name]));
}

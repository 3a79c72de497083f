/**
 * Send batches and messages of one company (Sends pages): recent batches with their funnel counts
 * (docs/decisions.md#7-a-messages-life: a read message counts in sent, delivered and read), and messages found
 * by phone number with their lifecycle times and a waiting message's next attempt. Every query is scoped to the company; the batches are read by the one batch reader
 * (src/db/batch-view.ts through domain/batches.ts `listSends`), and a batch's own page uses
 * domain/batches.ts (getSend / listBatchMessages) with the company id.
 */
import { sql } from 'kysely';
import { SOURCE_NAME } from '../../db/batch-view.ts';
import type { Db } from '../../db/database.ts';
import { listSends, type SendView } from '../../domain/batches.ts';
import type { BatchKind, MessageStatus } from '../../db/schema.ts';
import { toE164 } from '../../domain/phone.ts';

/** Batches per page of the Sends list. */
export const BATCHES_PER_PAGE = 25;
/** Most messages a phone search shows. */
export const SEARCH_LIMIT = 100;

export type { SendLabel } from '../../domain/batches.ts';

/** A batch of the Sends list: the batch view and its label (src/domain/batches.ts `SendView`). */
export type BatchRow = SendView;

/**
 * One page (1-based) of the company's batches, newest first; `more` tells whether another page
 * follows. Read through the one batch reader (src/db/batch-view.ts, domain/batches.ts `listSends`).
 */
export async function listRecentBatches(db: Db, companyId: number, page: number): Promise<{ batches: BatchRow[]; more: boolean }> {
  return listSends(db, companyId, page, BATCHES_PER_PAGE);
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

/** The source names (SOURCE_NAME) of the company's batches `batchIds`, by batch id; unknown ids are left out. */
export async function sourceNamesOf(db: Db, companyId: number, batchIds: string[]): Promise<Map<string, string | null>> {
  if (batchIds.length === 0) return new Map();
  const { rows } = await sql<{ batch_id: string; name: string | null }>`
    SELECT b.batch_id, ${SOURCE_NAME} AS name FROM batches b
    WHERE b.company_id = ${companyId} AND b.batch_id = ANY (${batchIds}::uuid[])`.execute(db);
  return new Map(rows.map((r) => [r.batch_id, r.name]));
}

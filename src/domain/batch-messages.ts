/**
 * A batch's messages a page at a time, and its delivery progress (docs/operator-api.md
 * `GET /admin/batches/{id}/messages`; the console's send page).
 *
 * Pages are keyset pages in batch order (`seq`): a page is at most `limit` messages after the cursor,
 * read through the (batch_id, seq) unique index (or (batch_id, status, seq), migration 025, when
 * filtered by status; (company_id, phone) when filtered by phone), so a page of a 1,000,000-message batch
 * costs what a page of a 100-message batch costs. The cursor (`next`) is opaque to clients: today the
 * `seq` of the page's last message in decimal. A message is on exactly one page of a walk, whatever
 * changes meanwhile (seq never changes; a status filter judges each message when its page is read).
 *
 * Progress: messages that reached `sent` or `failed` in the last RATE_WINDOW_MS (their sent_at /
 * failed_at, written from the injectable clock) per minute, and the time the pending ones need at
 * that rate.
 */
import { contactPhonesContaining, countFinishedBetween, countMessagesTo, findBatchCompany, selectMessagePage } from '../db/batch-messages.ts';
import type { Db } from '../db/database.ts';
import type { MessageStatus } from '../db/schema.ts';
import { messageView, type MessageView } from './batches.ts';
import { DomainError, notFound } from './errors.ts';
import { toE164 } from './phone.ts';

/** Messages per page unless `limit` says otherwise. */
export const MESSAGE_PAGE_DEFAULT = 100;
/** Most messages per page. */
export const MESSAGE_PAGE_MAX = 1000;
/** The statuses a page can be filtered by (a message's own status). */
export const MESSAGE_STATUSES: readonly MessageStatus[] = ['pending', 'sent', 'delivered', 'read', 'failed', 'skipped'];
/** Most contacts a partial phone number (digits) is matched against, as the console's phone search. */
const PHONE_MATCH_LIMIT = 1000;

/** What a page asks for: all optional. `phone`: an E.164 number (or any form of it), or 4+ of its digits. */
export interface MessagePageQuery {
  after?: string;
  limit?: number;
  status?: MessageStatus;
  phone?: string;
}

/** One page: the messages in batch order and the cursor of the next page (null on the last). */
export interface MessagePage { messages: MessageView[]; next: string | null }

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The seq a cursor stands for; DomainError 422 when it is not one this module made. */
export function parseCursor(cursor: string): number {
  if (!/^\d{1,10}$/.test(cursor) || Number(cursor) > 2147483647) throw new DomainError(422, 'after: not a cursor of this list (use `next` of the previous page)');
  return Number(cursor);
}

/** The batch's company (scoped by `companyId` when given), without counting its messages; 404 when unknown. */
async function batchCompany(db: Db, batchId: string, companyId?: number): Promise<{ company_id: number; default_country: string }> {
  const row = UUID_RE.test(batchId) ? await findBatchCompany(db, batchId.toLowerCase(), companyId) : undefined;
  if (!row) throw notFound('Batch not found');
  return row;
}

/**
 * The numbers a phone filter stands for: its E.164 form (in the company's default country) and the text
 * as given; else, for 4+ digits, the company's contacts whose number contains them (at most 1000).
 * DomainError 422 for fewer than 4 digits that are not a number.
 */
async function phonesFor(db: Db, companyId: number, defaultCountry: string, phone: string): Promise<string[]> {
  const q = phone.trim();
  const e164 = toE164(q, defaultCountry);
  if (e164) return [e164, q];
  const digits = q.replace(/\D/g, '');
  if (digits.length < 4) throw new DomainError(422, 'phone: give a phone number (E.164 or national) or at least 4 of its digits');
  return contactPhonesContaining(db, companyId, digits, PHONE_MATCH_LIMIT);
}

/**
 * One page of a batch's messages (see the module comment); `companyId` scopes the batch (404 `Batch not
 * found` otherwise, or for an unknown id). DomainError 422 for a bad cursor, limit or phone.
 */
export async function listMessagePage(db: Db, batchId: string, companyId: number | undefined, q: MessagePageQuery): Promise<MessagePage> {
  const batch = await batchCompany(db, batchId, companyId);
  const limit = q.limit ?? MESSAGE_PAGE_DEFAULT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MESSAGE_PAGE_MAX) throw new DomainError(422, `limit: from 1 to ${MESSAGE_PAGE_MAX}`);
  const after = q.after === undefined ? undefined : parseCursor(q.after);
  const phones = q.phone === undefined ? undefined : await phonesFor(db, batch.company_id, batch.default_country, q.phone);
  if (phones && phones.length === 0) return { messages: [], next: null };
  // With phones: the company's (company_id, phone) index finds a number's few messages without walking the batch.
  const rows = await selectMessagePage(db, { batchId: batchId.toLowerCase(), companyId: batch.company_id, after, status: q.status, phones, limit: limit + 1 });
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { messages: page.map(messageView), next: more ? String(page[page.length - 1].seq) : null };
}

/** How many messages of a batch match a phone filter (few: a number has one message per batch). */
export async function countPhoneMatches(db: Db, batchId: string, companyId: number, phone: string): Promise<number> {
  const batch = await batchCompany(db, batchId, companyId);
  const phones = await phonesFor(db, batch.company_id, batch.default_country, phone);
  if (phones.length === 0) return 0;
  return countMessagesTo(db, batchId.toLowerCase(), batch.company_id, phones);
}

/** The window over which the delivery rate is measured. */
export const RATE_WINDOW_MS = 5 * 60_000;

/** Delivery progress: messages per minute over the last RATE_WINDOW_MS, and the ms the pending ones need at that rate (null: no rate yet). */
export interface Progress { per_minute: number; remaining_ms: number | null }

/**
 * The progress of a batch with `pending` messages left at `now` (ms, the injectable clock): messages
 * whose sent_at or failed_at falls in the last RATE_WINDOW_MS, per minute. One pass over the batch's
 * rows (the counts of getBatch make one too), asked only while the batch is processing.
 */
export async function batchProgress(db: Db, batchId: string, pending: number, now: number): Promise<Progress> {
  const n = await countFinishedBetween(db, batchId.toLowerCase(), new Date(now - RATE_WINDOW_MS), new Date(now));
  const perMinute = n / (RATE_WINDOW_MS / 60_000);
  return { per_minute: perMinute, remaining_ms: perMinute > 0 ? Math.ceil((pending / perMinute) * 60_000) : null };
}

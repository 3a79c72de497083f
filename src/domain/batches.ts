/**
 * Send batches (docs/api.md 4.3, 4.4; docs/decisions.md#3-outcomes-of-the-four-operations): acceptance and inspection.
 *
 * Acceptance normalises the contacts, drops duplicates, and in ONE transaction writes the batch (its
 * items, overrides, template snapshot, ignored count) and enqueues its processing job. Only after the
 * commit does the caller answer `accepted`: a crash after the answer loses nothing.
 */
import { randomUUID } from 'node:crypto';
import { selectBatchMessages, type MessageColumnsRow } from '../db/batch-messages.ts';
import type { ShownBatchStatus } from '../db/batch-control.ts';
import { selectBatchViewRows, type BatchViewRow } from '../db/batch-view.ts';
import type { Db } from '../db/database.ts';
import type { BatchKind, MessageStatus } from '../db/schema.ts';
import { batchesAccepted } from '../metrics.ts';
import type { AnswerRecord, BatchAcceptor } from './accept-writer.ts';
import { batchCounts } from './batch-counts.ts';
import { notFound } from './errors.ts';
import { toE164 } from './phone.ts';

/** One distinct contact of a batch, as stored in `batches.items` (in request order). */
export interface BatchItem {
  phone: string;             // as given
  e164: string | null;       // normalised; null: skipped with reason invalid_phone
  first_name?: string | null;
  last_name?: string | null;
  variables?: Record<string, unknown> | null;
  image_url?: string | null;
  video_url?: string | null;
}

/** Request-level overrides of a 4.3 batch. */
export interface BatchOverrides {
  image_url?: string | null; video_url?: string | null; url?: string | null; url2?: string | null;
  /** Campaign sends from the console / operator (src/domain/campaign-sends.ts): not before this instant (ISO). */
  send_at?: string | null;
  /** Campaign sends: not handed to the provider by this instant (ISO), a message ends skipped / `expired`. */
  expire_at?: string | null;
  /** A campaign send to a segment accepted without items: batch-process resolves its members (campaign-sends.ts). */
  segment_id?: number;
}

/** Items that 4.3 processes: only the first 50; the rest are accepted and ignored. */
export const AUTOMATION_PROCESS_LIMIT = 50;

/**
 * Normalises and de-duplicates items by E.164 number (invalid numbers by their text). A later duplicate
 * replaces given names and media and merges its variables into the first, which keeps its position.
 */
export function distinctItems(items: Omit<BatchItem, 'e164'>[], defaultCountry: string): BatchItem[] {
  const byKey = new Map<string, BatchItem>();
  for (const raw of items) {
    const e164 = toE164(raw.phone, defaultCountry);
    const key = e164 ?? '\u0000' + raw.phone;
    const prev = byKey.get(key);
    if (!prev) {
      byKey.set(key, { ...raw, e164 });
      continue;
    }
    for (const f of ['first_name', 'last_name', 'image_url', 'video_url'] as const) {
      if (raw[f] != null) prev[f] = raw[f];
    }
    if (raw.variables) prev.variables = Object.assign(Object.create(null), prev.variables ?? {}, raw.variables);
  }
  return [...byKey.values()];
}

export interface AcceptInput {
  /** The new batch's id ({@link newBatchId}), chosen by the caller so its answer can be recorded with it. */
  batchId: string;
  companyId: number;
  kind: BatchKind;
  sourceId: number;
  template: unknown;
  items: BatchItem[];
  /** The batch's total when not `items.length` (a segment send whose members batch-process resolves). */
  total?: number;
  ignored: number;
  overrides: BatchOverrides;
}

/** A fresh batch id (UUID v4). */
export function newBatchId(): string {
  return randomUUID();
}

/**
 * Writes the batch and enqueues its processing in one transaction through the service's `acceptor`;
 * resolves once both are committed, together with `idempotency` (the request's answer under its
 * Idempotency-Key) when given. Concurrent calls share transactions (see db/accept-store.ts).
 */
export async function acceptBatch(acceptor: BatchAcceptor, input: AcceptInput, opts: { idempotency?: AnswerRecord } = {}): Promise<void> {
  await acceptor.write({
    batch_id: input.batchId,
    company_id: input.companyId,
    kind: input.kind,
    source_id: input.sourceId,
    total: input.total ?? input.items.length,
    ignored_contacts: input.ignored,
    items: toJsonText(input.items),
    overrides: JSON.stringify(input.overrides),
    template: JSON.stringify(input.template),
  }, opts);
  batchesAccepted.inc({ kind: input.kind });
}

/**
 * A batch's funnel (docs/decisions.md#7-a-messages-life): `sent` counts every message the provider took (status
 * sent, delivered or read), `delivered` those delivered or read, `read` those read; `total` =
 * sent + failed + skipped + pending.
 */
export interface BatchCounts {
  total: number; sent: number; delivered: number; read: number; failed: number; skipped: number; pending: number;
}

export interface BatchView {
  batch_id: string;
  kind: BatchKind;
  source_id: number;
  company_id: number;
  /** The stored status, or `paused` while an operator holds the batch back (docs/operator-api.md). */
  status: ShownBatchStatus;
  /** Whether the batch was cancelled (set by getBatch). */
  cancelled?: boolean;
  counts: BatchCounts;
  /** Pending messages that wait for something, by `reason` (src/db/whatsapp-channel.ts WAIT_REASONS). */
  waiting: Record<string, number>;
  ignored_contacts: number;
  created_at: Date;
  completed_at: Date | null;
}

/**
 * JSON text of validated request data for a jsonb column. Integers beyond 2^53 arrive as bigint and are
 * written with all their digits (jsonb keeps them exactly); NaN and infinities become null, as
 * Pydantic's JSON mode writes them.
 */
export function toJsonText(value: unknown): string {
  try {
    return JSON.stringify(value); // the common case, twice as fast as with a replacer
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? (JSON as unknown as { rawJSON(t: string): unknown }).rawJSON(v.toString()) : v));
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The batch view of a row of the one batch reader (src/db/batch-view.ts `selectBatchViewRows`), for
 * every caller that shows a batch: the funnel counts ({@link batchCounts}), what its pending messages
 * wait for ({} when nothing, or not read), and whether it was cancelled.
 */
export function batchViewOf(row: BatchViewRow): BatchView {
  return {
    batch_id: row.batch_id,
    kind: row.kind,
    source_id: row.source_id,
    company_id: row.company_id,
    status: row.status,
    cancelled: row.cancelled,
    counts: batchCounts(row.total, row),
    waiting: row.waiting ?? {},
    ignored_contacts: row.ignored_contacts,
    created_at: row.created_at,
    completed_at: row.completed_at,
  };
}

/** What the console says of a send besides its counts: its source's name, its scheduled time, whether it was cancelled. */
export interface SendLabel {
  /** The automation's or campaign's name (null when it no longer exists). */
  source_name: string | null;
  /** A scheduled campaign send's time (ISO), else null. */
  send_at: string | null;
  cancelled: boolean;
}

/** A batch as the console's Sends pages show it: the batch view and its {@link SendLabel}. */
export type SendView = BatchView & SendLabel;

/** The {@link SendView} of a row of the batch reader. */
export function sendViewOf(row: BatchViewRow): SendView {
  return { ...batchViewOf(row), source_name: row.source_name, send_at: row.send_at, cancelled: row.cancelled };
}

/** The row of batch `batchId` (of company `companyId` when given); notFound for an unknown or malformed id. */
async function batchRow(db: Db, batchId: string, companyId?: number): Promise<BatchViewRow> {
  if (!UUID_RE.test(batchId)) throw notFound('Batch not found');
  const [row] = await selectBatchViewRows(db, { batchId: batchId.toLowerCase(), companyId });
  if (!row) throw notFound('Batch not found');
  return row;
}

/**
 * A batch with its counts (docs/operator-api.md GET /admin/batches/{id}; the funnel of
 * docs/decisions.md#7-a-messages-life, see BatchCounts); `companyId` scopes the lookup when given. Messages not
 * yet written, and messages waiting for delivery hours or a retry, count as pending, so the counts
 * always add up to the total; `waiting` counts the pending ones that wait for something by reason.
 * Throws notFound for an unknown or malformed id.
 */
export async function getBatch(db: Db, batchId: string, companyId?: number): Promise<BatchView> {
  return batchViewOf(await batchRow(db, batchId, companyId));
}

/** The company's batch `batchId` as a {@link SendView} (the console's send page); notFound as {@link getBatch}. */
export async function getSend(db: Db, batchId: string, companyId: number): Promise<SendView> {
  return sendViewOf(await batchRow(db, batchId, companyId));
}

/**
 * A company's send batches, newest first, one page at a time (operator API
 * `GET /admin/companies/{company_id}/batches`, `cms batch list`). Keyset pages:
 * ordered by (created_at, batch_id) descending; `before` is the batch_id of the last batch of the
 * previous page, so a page never repeats or skips a batch while new batches are accepted. A `before`
 * that is not a batch of this company (unknown, malformed, another company's) gives an empty page,
 * exactly like a batch id past the end. Up to `limit` batches; `next_before`: the cursor of the next
 * page, null when this page is the last.
 */
export async function listCompanyBatches(db: Db, companyId: number, opts: { limit: number; before?: string }): Promise<{ batches: BatchView[]; next_before: string | null }> {
  if (opts.before !== undefined && !UUID_RE.test(opts.before)) return { batches: [], next_before: null };
  const rows = await selectBatchViewRows(db, { companyId, before: opts.before?.toLowerCase() ?? null, limit: opts.limit + 1 });
  const batches = rows.slice(0, opts.limit).map(batchViewOf);
  return { batches, next_before: rows.length > opts.limit ? batches[batches.length - 1].batch_id : null };
}

/**
 * One page of `perPage` of the company's batches (`page` 1-based), newest first (created_at
 * descending, batch_id ascending) as {@link SendView}s, without `waiting` (the console's Sends list);
 * `more` tells whether another page follows.
 */
export async function listSends(db: Db, companyId: number, page: number, perPage: number): Promise<{ batches: SendView[]; more: boolean }> {
  const rows = await selectBatchViewRows(db, { companyId, offset: (page - 1) * perPage, limit: perPage + 1 }, { waiting: false });
  return { batches: rows.slice(0, perPage).map(sendViewOf), more: rows.length > perPage };
}

/**
 * A provider's error as stored with a message (`messages.provider_error`): the shape the providers
 * record (src/providers/types.ts `ProviderError`), named here so the domain knows no provider.
 */
export interface StoredProviderError {
  code: string;
  title?: string | null;
  message?: string | null;
  details?: string | null;
}

export interface MessageView {
  message_id: string;
  phone: string;
  status: MessageStatus;
  reason?: string;
  error?: string;
  error_code?: string;
  attempts: number;
  scheduled_for?: Date;
  next_attempt_at?: Date;
  provider_message_id?: string;
  sent_at?: Date;
  delivered_at?: Date;
  read_at?: Date;
  failed_at?: Date;
  /** The provider's error as it gave it: `{code, title, message, details}` (WhatsApp). */
  provider_error?: StoredProviderError;
  /** Not handed to the provider by then, the message ends skipped / `expired` (docs/whatsapp.md). */
  expires_at?: Date;
  rendered: unknown;
}

/**
 * The messages of a batch in batch order (docs/operator-api.md GET /admin/batches/{id}/messages;
 * docs/decisions.md#7-a-messages-life): optional fields appear only when set; `next_attempt_at` only while the
 * message is pending (waiting for a retry).
 */
export async function listBatchMessages(db: Db, batchId: string, companyId?: number): Promise<MessageView[]> {
  await getBatch(db, batchId, companyId);
  return (await selectBatchMessages(db, batchId.toLowerCase())).map(messageView);
}

/** A stored message row (the MESSAGE_COLUMNS) as a MessageView: optional fields only when set. */
export function messageView(r: MessageColumnsRow): MessageView {
  return {
    message_id: r.message_id,
    phone: r.phone,
    status: r.status,
    ...(r.reason ? { reason: r.reason } : {}),
    ...(r.error ? { error: r.error } : {}),
    ...(r.error_code ? { error_code: r.error_code } : {}),
    attempts: r.attempts,
    ...(r.scheduled_for ? { scheduled_for: r.scheduled_for } : {}),
    ...(r.next_attempt_at && r.status === 'pending' ? { next_attempt_at: r.next_attempt_at } : {}),
    ...(r.provider_message_id ? { provider_message_id: r.provider_message_id } : {}),
    ...(r.sent_at ? { sent_at: r.sent_at } : {}),
    ...(r.delivered_at ? { delivered_at: r.delivered_at } : {}),
    ...(r.read_at ? { read_at: r.read_at } : {}),
    ...(r.failed_at ? { failed_at: r.failed_at } : {}),
    ...(r.provider_error ? { provider_error: r.provider_error as unknown as StoredProviderError } : {}),
    ...(r.expires_at ? { expires_at: r.expires_at } : {}),
    rendered: r.rendered,
  };
}

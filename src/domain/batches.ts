/**
 * Send batches (docs/api.md 4.3, 4.4; docs/decisions.md#3-outcomes-of-the-four-operations): acceptance and inspection.
 *
 * Acceptance normalises the contacts, drops duplicates, and in ONE transaction writes the batch (its
 * items, overrides, template snapshot, ignored count) and enqueues its processing job. Only after the
 * commit does the caller answer `accepted`: a crash after the answer loses nothing.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import { MESSAGE_COLUMNS } from '../db/batch-messages.ts';
import { SHOWN_BATCH_STATUS, type ShownBatchStatus } from '../db/batch-control.ts';
import type { Db } from '../db/database.ts';
import type { BatchKind, MessagesTable, MessageStatus } from '../db/schema.ts';
import { batchesAccepted } from '../metrics.ts';
import type { AnswerRecord, BatchAcceptor } from './accept-writer.ts';
import { batchCounts } from './batch-counts.ts';
import { notFound } from './errors.ts';
import type { ProviderError } from '../providers/types.ts';
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

/**
 * SQL of a batch's waiting messages by reason (a JSON object, null when none), for a query over
 * `batches b`: pending messages with a `reason` (the partial index of migration 017 does not serve a
 * batch, the batch's own index does).
 */
export const WAITING_BY_REASON = sql<Record<string, number> | null>`(
  SELECT json_object_agg(w.reason, w.n) FROM (
    SELECT reason, count(*)::int AS n FROM messages
    WHERE batch_id = b.batch_id AND status = 'pending' AND reason IS NOT NULL GROUP BY reason) w)`;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A batch with its counts (docs/operator-api.md GET /admin/batches/{id}; the funnel of
 * docs/decisions.md#7-a-messages-life, see BatchCounts); `companyId` scopes the lookup when given. Messages not
 * yet written, and messages waiting for delivery hours or a retry, count as pending, so the counts
 * always add up to the total; `waiting` counts the pending ones that wait for something by reason.
 * Throws notFound for an unknown or malformed id.
 */
export async function getBatch(db: Db, batchId: string, companyId?: number): Promise<BatchView> {
  if (!UUID_RE.test(batchId)) throw notFound('Batch not found');
  const { rows } = await sql<{
    batch_id: string; kind: BatchKind; source_id: number; company_id: number; status: ShownBatchStatus; total: number;
    ignored_contacts: number; created_at: Date; completed_at: Date | null; sent: number; delivered: number; read: number;
    failed: number; skipped: number; waiting: Record<string, number> | null; cancelled: boolean;
  }>`
    SELECT b.batch_id, b.kind, b.source_id, b.company_id, ${SHOWN_BATCH_STATUS} AS status, b.cancelled_at IS NOT NULL AS cancelled,
           b.total, b.ignored_contacts, b.created_at, b.completed_at,
           coalesce(m.sent, 0)::int AS sent, coalesce(m.delivered, 0)::int AS delivered, coalesce(m.read, 0)::int AS read,
           coalesce(m.failed, 0)::int AS failed, coalesce(m.skipped, 0)::int AS skipped, ${WAITING_BY_REASON} AS waiting
    FROM batches b
    LEFT JOIN LATERAL cms_batch_status_counts(b.batch_id) m ON true
    WHERE b.batch_id = ${batchId.toLowerCase()}::uuid
      AND (${companyId ?? null}::int IS NULL OR b.company_id = ${companyId ?? null}::int)`.execute(db);
  const row = rows[0];
  if (!row) throw notFound('Batch not found');
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
  provider_error?: ProviderError;
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
  const rows = await db.selectFrom('messages')
    .select([...MESSAGE_COLUMNS])
    .where('batch_id', '=', batchId.toLowerCase()).orderBy('seq').execute();
  return rows.map(messageView);
}

/** A stored message row (the MESSAGE_COLUMNS) as a MessageView: optional fields only when set. */
export function messageView(r: Pick<Selectable<MessagesTable>, (typeof MESSAGE_COLUMNS)[number]>): MessageView {
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
    ...(r.provider_error ? { provider_error: r.provider_error as unknown as ProviderError } : {}),
    ...(r.expires_at ? { expires_at: r.expires_at } : {}),
    rendered: r.rendered,
  };
}

/**
 * `batch-process`: fans an accepted batch out into messages (docs/decisions.md#5-phone-numbers-and-digests, #6-contacts-personalisation-sending, docs/api.md 4.3 / 4.4), in
 * ONE transaction that also moves the batch from `accepted` to `processing` (or straight to `completed`
 * when nothing is left to send) and enqueues the follow-up jobs. A second run finds the batch no longer
 * `accepted` and does nothing.
 *
 * Per item, in batch order (`seq` = position in `batches.items`):
 * - invalid phone → `skipped` / `invalid_phone` (both kinds);
 * - contacts: 4.3 creates missing ones, replaces given names, merges variables; 4.4 creates missing
 *   ones by phone only;
 * - 4.4 only: an opted-out contact → `skipped` / `opted_out`; outside the company's delivery hours
 *   (judged at fan-out by the injectable clock) every message is held: `pending`, `scheduled_for` =
 *   `held_until` = the next opening, and one `messages-release` job is deferred to that instant;
 * - expiry (docs/whatsapp.md "Messages that expire", {@link expiryOf}): each pending message gets
 *   `expires_at`; a hold ends at the latest then (released, the claim skips it as `expired`); a batch
 *   fanned out after its expiry writes its messages `skipped` / `expired`;
 * - a campaign send to a segment accepted without items (`overrides.segment_id`) takes the segment's
 *   members as its items now, and its `total` becomes their number;
 * - a scheduled send (`overrides.send_at`, src/domain/campaign-sends.ts) is held like delivery hours
 *   until max(send_at, the next opening at send_at); a batch cancelled before its fan-out
 *   (`overrides.cancelled`) writes every valid item `skipped` / `cancelled`;
 * - the template (the batch's snapshot) is rendered per contact; a render error fails that message
 *   only (`failed`, error `template error: ...`, no attempt), logged at `error` with company, batch and
 *   message ids once the fan-out committed (failure-log.ts);
 * - the remaining `pending` messages are split into `messages-deliver` chunks (chunkSizeFor the
 *   company's provider at fan-out time: the outbox takes a whole batch in one statement).
 */
import { sql } from 'kysely';
import { expireAfterMs } from '../../domain/expiry.ts';
import type { BatchKind, DeliveryHours } from '../../db/schema.ts';
import type { BatchItem, BatchOverrides } from '../../domain/batches.ts';
import { segmentItems } from '../../domain/campaign-sends.ts';
import { upsertContacts, type ContactWrite, type StoredContact } from '../../domain/contacts.ts';
import { nextSendTime } from '../../domain/delivery-hours.ts';
import { compileTemplate, RenderError, renderMessage } from '../../domain/render.ts';
import { normaliseTemplate, type Template } from '../../domain/templates.ts';
import { messagesFinal } from '../../metrics.ts';
import { enqueueMany } from '../boss.ts';
import { chunkSizeFor } from '../jobs.ts';
import type { PipelineContext } from './context.ts';
import { FailureLog } from './failure-log.ts';
import { chunkRanges, completeBatchIfDone, insertMessages, uuidv7, type NewMessage } from '../../db/messages.ts';

interface BatchRow {
  company_id: number;
  kind: BatchKind;
  source_id: number;
  items: BatchItem[];
  overrides: BatchOverrides;
  template: Template;
  delivery_hours: DeliveryHours | null;
  provider: string | null;
  /** The source's `expire_after` (a duration such as `24h`, or null). */
  expire_after: string | null;
  created_at: Date;
}

/** The row as read: `items` is stored as JSON text (migration 007). */
interface StoredBatchRow extends Omit<BatchRow, 'items'> {
  items: string;
}

/** What a fan-out decided, for logs and tests. */
export interface FanOut { messages: number; pending: number; held: boolean; chunks: number }

/** Writes the contacts of a batch's valid items; returns them by E.164 number. */
async function writeContacts(db: PipelineContext['db'], batch: BatchRow): Promise<Map<string, StoredContact>> {
  const writes: ContactWrite[] = [];
  for (const item of batch.items) {
    if (!item.e164) continue;
    writes.push(batch.kind === 'automation'
      ? { phone: item.e164, first_name: item.first_name ?? null, last_name: item.last_name ?? null, variables: item.variables ?? null }
      : { phone: item.e164 });
  }
  // A stable order keeps concurrent batches of one company from locking contacts in opposite orders.
  writes.sort((a, b) => (a.phone < b.phone ? -1 : a.phone > b.phone ? 1 : 0));
  const stored = await upsertContacts(db, batch.company_id, writes);
  return new Map(stored.map((c) => [c.phone, c]));
}

/**
 * When the batch's messages expire (ms), or null (docs/whatsapp.md "Messages that expire"): a campaign
 * send's `overrides.expire_at`, else the source's `expire_after` counted from when the batch was
 * accepted, or from its `send_at` when it was scheduled later (a scheduled send would otherwise expire
 * before it starts). An unparseable duration (never written by the API) means no expiry.
 */
export function expiryOf(batch: Pick<BatchRow, 'overrides' | 'expire_after' | 'created_at'>): number | null {
  const at = batch.overrides?.expire_at ? Date.parse(batch.overrides.expire_at) : NaN;
  if (Number.isFinite(at)) return at;
  const after = batch.expire_after ? expireAfterMs(batch.expire_after) : undefined;
  if (after === undefined) return null;
  const sendAt = batch.overrides?.send_at ? Date.parse(batch.overrides.send_at) : NaN;
  return Math.max(new Date(batch.created_at).getTime(), Number.isFinite(sendAt) ? sendAt : 0) + after;
}

/** Fans out batch `batchId`; null when it was not `accepted` (already done, or unknown). */
export async function processBatch(ctx: PipelineContext, batchId: string): Promise<FanOut | null> {
  const finals: Record<string, number> = {};
  // Messages failed by a template error, logged once the fan-out committed.
  let templateFailures: { company_id: number; failed: { message_id: string; error: string }[] } | undefined;
  const outcome = await ctx.db.transaction().execute(async (trx) => {
    const { rows } = await sql<StoredBatchRow>`
      UPDATE batches b SET status = 'processing'
      FROM companies c
      WHERE b.batch_id = ${batchId}::uuid AND b.status = 'accepted' AND c.company_id = b.company_id
      RETURNING b.company_id, b.kind, b.source_id, b.items, b.overrides, b.template, c.delivery_hours, c.channel->>'provider' AS provider,
        b.created_at, CASE b.kind
          WHEN 'automation' THEN (SELECT a.expire_after FROM automations a WHERE a.automation_id = b.source_id)
          ELSE (SELECT k.expire_after FROM campaigns k WHERE k.campaign_id = b.source_id) END AS expire_after`.execute(trx);
    if (!rows[0]) return null;
    const batch: BatchRow = { ...rows[0], items: JSON.parse(rows[0].items) as BatchItem[] };
    if (batch.overrides?.segment_id !== undefined && batch.items.length === 0) {
      // A segment send accepted without items (campaign-sends.ts startSegmentSend): its members now.
      batch.items = await segmentItems(trx, batch.company_id, batch.overrides.segment_id, ctx.clock.now());
      await trx.updateTable('batches').set({ total: batch.items.length }).where('batch_id', '=', batchId).execute();
    }

    const contacts = await writeContacts(trx, batch);
    const now = ctx.clock.now();
    // A scheduled send (overrides.send_at) is held until then, and then until its delivery hours open.
    const sendAt = Math.max(now, batch.overrides?.send_at ? Date.parse(batch.overrides.send_at) || now : now);
    const opensAt = batch.kind === 'campaign' ? nextSendTime(batch.delivery_hours, sendAt) : sendAt;
    const cancelled = batch.overrides?.cancelled === true;
    const held = opensAt > now;
    const expiresAt = expiryOf(batch);
    const expired = expiresAt !== null && expiresAt <= now;
    const holdUntil = expiresAt !== null ? Math.min(opensAt, expiresAt) : opensAt;
    const compiled = compileTemplate(normaliseTemplate(batch.template));

    const messages: NewMessage[] = batch.items.map((item, seq) => {
      const base = { message_id: uuidv7(), seq, contact_id: null, phone: item.e164 ?? item.phone, reason: null, error: null, scheduled_for: null, held_until: null, rendered: null };
      if (!item.e164) return { ...base, status: 'skipped', reason: 'invalid_phone' };
      if (cancelled) return { ...base, status: 'skipped', reason: 'cancelled' };
      const contact = contacts.get(item.e164)!;
      const withContact = { ...base, contact_id: contact.contact_id };
      if (batch.kind === 'campaign' && contact.opted_out) return { ...withContact, status: 'skipped', reason: 'opted_out' };
      try {
        const rendered = renderMessage(compiled, {
          message_id: base.message_id,
          batch_id: batchId,
          company_id: batch.company_id,
          kind: batch.kind,
          source_id: batch.source_id,
          contact: {
            phone: item.e164,
            first_name: contact.first_name,
            last_name: contact.last_name,
            variables: contact.variables,
            image_url: item.image_url ?? null,
            video_url: item.video_url ?? null,
          },
          overrides: batch.overrides ?? {},
        });
        if (expired) return { ...withContact, status: 'skipped', reason: 'expired', rendered };
        return { ...withContact, status: 'pending', rendered, scheduled_for: held ? opensAt : null, held_until: held ? holdUntil : null, expires_at: expiresAt };
      } catch (err) {
        if (!(err instanceof RenderError)) throw err;
        return { ...withContact, status: 'failed', error: err.message };
      }
    });
    await insertMessages(trx, batchId, batch.company_id, messages);
    const failed = messages.filter((m) => m.status === 'failed').map((m) => ({ message_id: m.message_id, error: String(m.error) }));
    templateFailures = failed.length ? { company_id: batch.company_id, failed } : undefined;
    for (const m of messages) if (m.status !== 'pending') finals[m.status] = (finals[m.status] ?? 0) + 1;

    const pendingSeqs = messages.filter((m) => m.status === 'pending').map((m) => m.seq);
    let chunks = 0;
    if (pendingSeqs.length === 0) {
      await completeBatchIfDone(trx, batchId, now);
    } else if (held) {
      // pg-boss waits in real time; the workers' sweep also releases against the injectable clock.
      await enqueueMany(ctx.boss, trx, 'messages-release', [{ data: { batch_id: batchId }, startAfter: new Date(Date.now() + (holdUntil - now)) }]);
    } else {
      const ranges = chunkRanges(pendingSeqs, chunkSizeFor(batch.provider));
      chunks = ranges.length;
      await enqueueMany(ctx.boss, trx, 'messages-deliver', ranges.map((r) => ({ data: { batch_id: batchId, company_id: batch.company_id, ...r } })));
    }
    return { messages: messages.length, pending: pendingSeqs.length, held, chunks };
  });
  for (const [status, n] of Object.entries(finals)) messagesFinal.inc({ status, provider: 'none' }, n);
  if (outcome && templateFailures) {
    const log = new FailureLog(ctx.logger, { company_id: templateFailures.company_id, batch_id: batchId }, 'message not rendered: template error');
    for (const f of templateFailures.failed) log.add({ level: 'error', ...f });
    log.summary();
  }
  return outcome;
}

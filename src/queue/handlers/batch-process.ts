/**
 * `batch-process`: fans an accepted batch out into messages (docs/decisions.md#5-phone-numbers-and-digests,
 * #6-contacts-personalisation-sending, docs/api.md 4.3 / 4.4) in bounded steps (docs/architecture.md
 * "Fan-out in steps"): FAN_OUT_STEP items at a time (FAN_OUT_STEP_POSTGRES on PostgreSQL), each step its own short transaction that writes
 * the step's messages, advances the batch's `fanned_out` and enqueues the step's delivery chunks (or
 * the batch's `messages-release` job), so deliveries start while later steps are still being written,
 * a request never waits behind the whole fan-out, and a crash resumes after the last committed step
 * (pg-boss runs the job again): no item is lost, none is written twice (the counter moves only with
 * its messages, and `(batch_id, seq)` is unique). The batch moves from `accepted` to `processing` with
 * its first step, and is completed once every item has its message and none is pending.
 *
 * Per item, in batch order (`seq` = position in `batches.items`; {@link messageFor}):
 * - invalid phone → `skipped` / `invalid_phone` (both kinds);
 * - contacts: 4.3 creates missing ones, replaces given names, merges variables; 4.4 creates missing
 *   ones by phone only;
 * - 4.4 only: an opted-out contact → `skipped` / `opted_out`; a contact at the company's frequency cap
 *   → `skipped` / `frequency_cap` (src/domain/frequency-caps.ts `cappedRecipients`, judged at each
 *   fan-out step; docs/audience.md); outside the company's delivery hours
 *   (judged at each step by the injectable clock) every message is held: `pending`, `scheduled_for` =
 *   `held_until` = the next opening, and one `messages-release` job is deferred to that instant;
 * - expiry (docs/whatsapp.md "Messages that expire", {@link expiryOf}): each pending message gets
 *   `expires_at`; a hold ends at the latest then (released, the claim skips it as `expired`); a batch
 *   fanned out after its expiry writes its messages `skipped` / `expired`;
 * - a campaign send to a segment accepted without items (`overrides.segment_id`) takes the segment's
 *   members as its items at the start (stored in `batches.items`, once), and its `total` becomes
 *   their number;
 * - a scheduled send (`overrides.send_at`, src/domain/campaign-sends.ts) is held like delivery hours
 *   until max(send_at, the next opening at send_at);
 * - a cancelled batch (docs/decisions.md "Cancel, pause and resume") writes every valid item
 *   `skipped` / `cancelled` (no contact written, nothing rendered); a step that sees the cancel only
 *   at its commit cancels what it wrote. A paused batch is written as usual but no delivery chunk is
 *   enqueued for it: the resume does that;
 * - the template (the batch's snapshot) is rendered per contact; a render error fails that message
 *   only (`failed`, error `template error: ...`, no attempt), logged at `error` with company, batch and
 *   message ids once the step committed (failure-log.ts);
 * - a company whose provider refuses empty template parameters (ProviderPlugin.refusesEmptyParameters:
 *   the WhatsApp room's): a message whose parameter renders empty or as white space only → `skipped` /
 *   `empty_parameter`, its `error` naming the parameter and
 *   the variables it reads (render.ts `emptyParameters`; docs/whatsapp.md "Empty parameters"), its
 *   `rendered` kept; it never reaches the send path;
 * - the step's `pending` messages are split into `messages-deliver` chunks (chunkSizeFor the
 *   company's provider at fan-out time: the outbox takes a whole chunk in one statement).
 *
 * Contacts are written, and messages rendered, before the step's transaction opens (upserting a
 * contact again after a crash changes nothing), so the transaction itself is only the insert of the
 * step's rows, the counter and the jobs; the next step is prepared while that transaction runs. Before
 * each step's preparation the run waits until no request is in flight (ctx.idle,
 * db/foreground-gate.ts): requests before background work.
 */
import { expireAfterMs } from '../../domain/expiry.ts';
import type { BatchItem } from '../../domain/batches.ts';
import { segmentItems } from '../../domain/campaign-sends.ts';
import { upsertContacts, type ContactWrite, type StoredContact } from '../../domain/contacts.ts';
import { nextSendTime } from '../../domain/delivery-hours.ts';
import { cappedRecipients } from '../../domain/frequency-caps.ts';
import { compileTemplate, describeEmptyParameters, emptyParameters, RenderError, renderMessage, type CompiledTemplate } from '../../domain/render.ts';
import { normaliseTemplate } from '../../domain/templates.ts';
import { messagesFinal } from '../../metrics.ts';
import { enqueueMany } from '../boss.ts';
import { chunkSizeFor } from '../jobs.ts';
import type { PipelineContext } from './context.ts';
import { FailureLog } from './failure-log.ts';
import { v7 as uuidv7 } from 'uuid';
import { chunkRanges, completeBatchIfDone, insertMessages, type NewMessage } from '../../db/messages.ts';
import { cancelPendingStep } from '../../db/batch-control.ts';
import { advanceFannedOut, markBatchProcessing, selectFanOutBatch, storeBatchItems, type FanOutRow } from '../../db/fan-out.ts';
import { contactsByPhone } from '../../db/contacts.ts';

/** A batch as the fan-out uses it: the stored row (db/fan-out.ts) with its items parsed. */
interface BatchRow extends Omit<FanOutRow, 'items' | 'status' | 'fanned_out' | 'total' | 'cancelled'> {
  items: BatchItem[];
}

/** What a fan-out decided, for logs and tests (over every step of this run). */
export interface FanOut { messages: number; pending: number; held: boolean; chunks: number; steps: number }

/** Items one fan-out step writes: one short transaction each (tens of milliseconds on PGlite). */
export const FAN_OUT_STEP = 250;

/**
 * Items per fan-out step on PostgreSQL, where a step's statements run on the database server and hold
 * up no request of the process: four times fewer round trips and commits per message. Measured
 * (bench/million.ts, 200,000 recipients, one API and two worker processes on 2 cores): the fan-out,
 * which sets the pace of a big send, took 64 s against 78 s with steps of 250.
 */
export const FAN_OUT_STEP_POSTGRES = 1000;

/**
 * A batch as a fan-out run holds it: the stored row with its items parsed, its template compiled once
 * for the run, and its progress.
 */
interface FanOutBatch extends BatchRow { batch_id: string; fanned_out: number; cancelled: boolean; compiled: CompiledTemplate }

/**
 * Writes the contacts of `items` (the valid ones) of `batch`; returns them by E.164 number. A
 * campaign (4.4) writes a contact by phone only, which changes nothing in one that exists: those are
 * read, and only the missing ones written.
 */
async function writeContacts(db: PipelineContext['db'], batch: BatchRow, items: BatchItem[]): Promise<Map<string, StoredContact>> {
  const writes: ContactWrite[] = [];
  const found = new Map<string, StoredContact>();
  if (batch.kind === 'campaign') {
    const phones = items.filter((i) => i.e164).map((i) => i.e164 as string);
    for (const c of await contactsByPhone(db, batch.company_id, phones)) found.set(c.phone, { ...c, created: false });
  }
  for (const item of items) {
    if (!item.e164 || found.has(item.e164)) continue;
    writes.push(batch.kind === 'automation'
      ? { phone: item.e164, first_name: item.first_name ?? null, last_name: item.last_name ?? null, variables: item.variables ?? null }
      : { phone: item.e164 });
  }
  if (writes.length === 0) return found;
  // A stable order keeps concurrent batches of one company from locking contacts in opposite orders.
  writes.sort((a, b) => (a.phone < b.phone ? -1 : a.phone > b.phone ? 1 : 0));
  for (const c of await upsertContacts(db, batch.company_id, writes)) found.set(c.phone, c);
  return found;
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

/**
 * What every item of one fan-out step shares: the batch, the step's contacts (by E.164 number), the
 * compiled template, and the step's decisions taken at `now` (ms, the injectable clock).
 */
export interface StepContext {
  batch_id: string;
  batch: BatchRow;
  contacts: Map<string, StoredContact>;
  compiled: CompiledTemplate;
  now: number;
  /** The batch is cancelled: every valid item ends skipped / `cancelled`. */
  cancelled: boolean;
  /** Held until `opensAt` (delivery hours or a scheduled send), at the latest until `holdUntil`. */
  held: boolean;
  opensAt: number;
  holdUntil: number;
  expiresAt: number | null;
  expired: boolean;
  /** Numbers of this step at the company's frequency cap (campaigns only; docs/audience.md). */
  capped: ReadonlySet<string>;
  /**
   * The company's provider refuses empty template parameters (at fan-out time): a message whose
   * parameter renders empty is skipped, `empty_parameter` (other providers send the mapping as data).
   */
  checkParameters: boolean;
}

/**
 * The message row of one item (position `seq`) of a fan-out step: the per-contact decisions of the
 * module comment, in order (invalid number, cancelled, opted out, frequency cap, render, empty template
 * parameter, expired, held). A check that
 * skips a contact goes here, before the render.
 */
export function messageFor(step: StepContext, item: BatchItem, seq: number): NewMessage {
  const { batch } = step;
  const base = { message_id: uuidv7(), seq, contact_id: null, phone: item.e164 ?? item.phone, reason: null, error: null, scheduled_for: null, held_until: null, rendered: null };
  if (!item.e164) return { ...base, status: 'skipped', reason: 'invalid_phone' };
  if (step.cancelled) return { ...base, status: 'skipped', reason: 'cancelled' };
  const contact = step.contacts.get(item.e164)!;
  const withContact = { ...base, contact_id: contact.contact_id };
  if (batch.kind === 'campaign' && contact.opted_out) return { ...withContact, status: 'skipped', reason: 'opted_out' };
  if (step.capped.has(item.e164)) return { ...withContact, status: 'skipped', reason: 'frequency_cap' };
  try {
    const rendered = renderMessage(step.compiled, {
      message_id: base.message_id,
      batch_id: step.batch_id,
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
    if (step.checkParameters && rendered.whatsapp) {
      const empty = emptyParameters(step.compiled, rendered.whatsapp);
      if (empty.length) return { ...withContact, status: 'skipped', reason: 'empty_parameter', error: describeEmptyParameters(empty), rendered };
    }
    if (step.expired) return { ...withContact, status: 'skipped', reason: 'expired', rendered };
    return {
      ...withContact, status: 'pending', rendered, scheduled_for: step.held ? step.opensAt : null,
      held_until: step.held ? step.holdUntil : null, expires_at: step.expiresAt,
    };
  } catch (err) {
    if (!(err instanceof RenderError)) throw err;
    return { ...withContact, status: 'failed', error: err.message };
  }
}

/** A fan-out step lost a race with another run of the same batch: this run reads the batch again. */
class StepRace extends Error {}

/** The workers are stopping: the fan-out stops between two steps and resumes when pg-boss runs it again. */
export class FanOutInterrupted extends Error {}

/**
 * Starts (or resumes) the fan-out of `batchId`: reads the batch, taking a segment send's members as its
 * items first (stored once, with its total); returns the batch with its progress, or null when there
 * is nothing to fan out (unknown or completed). The batch moves from `accepted` to `processing` with
 * its first step (an empty one is completed here).
 */
async function openFanOut(ctx: PipelineContext, batchId: string): Promise<FanOutBatch | null> {
  for (;;) {
    const row = await selectFanOutBatch(ctx.db, batchId);
    if (!row || row.status === 'completed') return null;
    let items = JSON.parse(row.items) as BatchItem[];
    if (row.status === 'accepted' && row.overrides?.segment_id !== undefined && items.length === 0 && row.fanned_out === 0) {
      // A segment send accepted without items (campaign-sends.ts sendCampaign): its members now, once.
      items = await segmentItems(ctx.db, row.company_id, row.overrides.segment_id, ctx.clock.now());
      if ((await storeBatchItems(ctx.db, batchId, items)) === 0) continue; // another run took them first: read the batch again
      row.total = items.length;
    }
    if (items.length === 0) {
      // Nothing to write (a segment without members by now): the batch is done.
      await ctx.db.transaction().execute(async (trx) => {
        await markBatchProcessing(trx, batchId);
        await completeBatchIfDone(trx, batchId, ctx.clock.now());
      });
      return null;
    }
    return { ...row, batch_id: batchId, items, fanned_out: row.fanned_out, compiled: compileTemplate(normaliseTemplate(row.template)) };
  }
}

/** A fan-out step prepared outside any transaction: its contacts written, its messages decided and rendered. */
interface PreparedStep {
  from: number;
  to: number;
  step: StepContext;
  messages: NewMessage[];
}

/**
 * Prepares the step of `batch` from position `from` (at most `ctx.fanOutStep` items, by default
 * FAN_OUT_STEP): writes its contacts, reads the frequency cap, decides and renders its messages, all
 * outside any transaction (writing a contact again after a crash changes nothing). Judged at the
 * batch's cancel state as this run knows it then.
 */
async function prepareStep(ctx: PipelineContext, batch: FanOutBatch, from: number): Promise<PreparedStep> {
  const items = batch.items.slice(from, from + (ctx.fanOutStep ?? FAN_OUT_STEP));
  const cancelled = batch.cancelled;
  const contacts = cancelled ? new Map<string, StoredContact>() : await writeContacts(ctx.db, batch, items);
  const now = ctx.clock.now();
  // A scheduled send (overrides.send_at) is held until then, and then until its delivery hours open.
  const sendAt = Math.max(now, batch.overrides?.send_at ? Date.parse(batch.overrides.send_at) || now : now);
  const opensAt = batch.kind === 'campaign' ? nextSendTime(batch.delivery_hours, sendAt) : sendAt;
  const expiresAt = expiryOf(batch);
  const expired = expiresAt !== null && expiresAt <= now;
  // Frequency cap: of this step's recipients that would be sent (valid, not opted out), those at the cap.
  const capped = batch.kind !== 'campaign' || cancelled || expired ? new Set<string>()
    : await cappedRecipients(ctx.db, { companyId: batch.company_id, kind: batch.kind, campaignId: batch.source_id },
      items.flatMap((i) => (i.e164 && !contacts.get(i.e164)!.opted_out ? [i.e164] : [])), now);
  const step: StepContext = {
    batch_id: batch.batch_id, batch, contacts, compiled: batch.compiled, now, cancelled,
    held: opensAt > now, opensAt, holdUntil: expiresAt !== null ? Math.min(opensAt, expiresAt) : opensAt,
    expiresAt, expired, capped, checkParameters: ctx.providers.refusesEmptyParameters(batch.provider),
  };
  return { from, to: from + items.length, step, messages: items.map((item, i) => messageFor(step, item, from + i)) };
}

/**
 * Writes a prepared step in one short transaction: its message rows, the batch's `fanned_out`
 * counter, and its delivery chunks (or the batch's release job). Returns what it wrote; throws
 * StepRace when another run wrote these positions first. A step prepared before the batch was
 * cancelled ends what it wrote `cancelled`.
 */
async function commitStep(ctx: PipelineContext, batch: FanOutBatch, prepared: PreparedStep, releaseQueued: boolean) {
  const { from, to, step, messages } = prepared;
  const now = step.now;
  return ctx.db.transaction().execute(async (trx) => {
    await insertMessages(trx, batch.batch_id, batch.company_id, messages);
    const advanced = await advanceFannedOut(trx, batch.batch_id, from, to);
    if (!advanced) throw new StepRace(`batch ${batch.batch_id}: positions ${from}..${to - 1} were written by another run`);
    let cancelledNow = 0;
    if (advanced.cancelled && !step.cancelled) {
      // Cancelled while this step was being prepared: what it wrote ends cancelled too.
      cancelledNow = (await cancelPendingStep(trx, batch.batch_id, { from, to: to - 1 })).n;
    }
    const pendingSeqs = advanced.cancelled ? [] : messages.filter((m) => m.status === 'pending').map((m) => m.seq);
    let chunks = 0;
    let release = false;
    if (pendingSeqs.length > 0 && step.held) {
      // pg-boss waits in real time; the workers' sweep also releases against the injectable clock.
      if (!releaseQueued) {
        await enqueueMany(ctx.boss, trx, 'messages-release', [{ data: { batch_id: batch.batch_id }, startAfter: new Date(Date.now() + (step.holdUntil - now)) }]);
        release = true;
      }
    } else if (pendingSeqs.length > 0 && !advanced.paused) {
      const ranges = chunkRanges(pendingSeqs, chunkSizeFor(batch.provider));
      chunks = ranges.length;
      await enqueueMany(ctx.boss, trx, 'messages-deliver', ranges.map((r) => ({ data: { batch_id: batch.batch_id, company_id: batch.company_id, ...r } })));
    }
    if (to >= batch.items.length) await completeBatchIfDone(trx, batch.batch_id, now);
    return { to, messages, pending: pendingSeqs.length, chunks, release, cancelled: advanced.cancelled, cancelledNow, held: step.held };
  });
}

/**
 * The next step's preparation, started while the current step's transaction runs: it first waits
 * for its turn (requests before background work, ctx.idle), like every step's CPU work. Its failure
 * is kept for the caller's await (never an unhandled rejection).
 */
function prepareAhead(ctx: PipelineContext, batch: FanOutBatch, from: number): Promise<PreparedStep> {
  const p = (async () => {
    await (ctx.idle?.() ?? new Promise<void>((resolve) => setImmediate(resolve)));
    return prepareStep(ctx, batch, from);
  })();
  p.catch(() => {});
  return p;
}

/**
 * Fans out batch `batchId` (or the rest of it, after a crash) step by step; null when there was
 * nothing to do (unknown, completed, or already written whole). Between steps it gives way to other
 * work; when the workers stop it ends early and pg-boss runs it again later (it resumes).
 */
export async function processBatch(ctx: PipelineContext, batchId: string): Promise<FanOut | null> {
  let batch = await openFanOut(ctx, batchId);
  if (!batch || batch.fanned_out >= batch.items.length) return null;
  const out: FanOut = { messages: 0, pending: 0, held: false, chunks: 0, steps: 0 };
  let releaseQueued = false;
  // One step ahead: the next step is prepared (contacts, cap, rendering) while this one commits.
  let next: Promise<PreparedStep> | undefined = prepareAhead(ctx, batch, batch.fanned_out);
  while (batch.fanned_out < batch.items.length) {
    let prepared = await (next ?? prepareAhead(ctx, batch, batch.fanned_out));
    next = undefined;
    if (ctx.drain.aborted) throw new FanOutInterrupted(`workers stopping: the fan-out of batch ${batchId} resumes at item ${batch.fanned_out}`);
    // A cancel seen by the previous commit: a step prepared before it is prepared again (nothing rendered).
    if (batch.cancelled && !prepared.step.cancelled) prepared = await prepareStep(ctx, batch, batch.fanned_out);
    const committing = commitStep(ctx, batch, prepared, releaseQueued);
    if (prepared.to < batch.items.length) next = prepareAhead(ctx, batch, prepared.to);
    let step;
    try {
      step = await committing;
    } catch (err) {
      await next?.catch(() => {});
      next = undefined;
      if (!(err instanceof StepRace)) throw err;
      batch = await openFanOut(ctx, batchId);
      if (!batch) return out;
      next = prepareAhead(ctx, batch, batch.fanned_out);
      continue;
    }
    batch.fanned_out = step.to;
    if (step.cancelled) batch.cancelled = true;
    releaseQueued ||= step.release;
    out.steps++;
    out.messages += step.messages.length;
    out.pending += step.pending;
    out.chunks += step.chunks;
    out.held ||= step.held && step.pending > 0;
    const finals: Record<string, number> = {};
    for (const m of step.messages) if (m.status !== 'pending') finals[m.status] = (finals[m.status] ?? 0) + 1;
    if (step.cancelledNow) finals.skipped = (finals.skipped ?? 0) + step.cancelledNow;
    for (const [status, n] of Object.entries(finals)) messagesFinal.inc({ status, provider: 'none' }, n);
    const failed = step.messages.filter((m) => m.status === 'failed');
    if (failed.length) {
      const log = new FailureLog(ctx.logger, { company_id: batch.company_id, batch_id: batchId }, 'message not rendered: template error');
      for (const f of failed) log.add({ level: 'error', message_id: f.message_id, error: String(f.error) });
      log.summary();
    }
  }
  return out;
}

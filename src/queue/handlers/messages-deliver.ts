/**
 * `messages-deliver`: delivers one chunk (a batch's `seq` range) through the company's provider.
 *
 * - the outbox (a provider that `sendsNothing`): one statement records every deliverable message of the range as sent (the hand-off is the
 *   commit itself).
 * - a provider that sends (webhook, a messaging API): the deliverable messages are claimed a slice at a time (at most
 *   `deliveryConcurrency` per claim, a new slice when the last one has been started) under a lease
 *   (LEASE_SECONDS of database time, renewed every RENEW_MS while the run works), handed to the
 *   provider ONCE each with up to `deliveryConcurrency` in flight, and their results committed
 *   set-based every FLUSH_ROWS results or
 *   FLUSH_MS, whichever comes first, so a crash loses at most the results of the last moments (the
 *   timed flushes of a process's runs share one statement, with each batch's state: result-writer.ts). After a
 *   transient failure the message waits `pending` with `next_attempt_at` (a hold, released by the
 *   workers' sweep) on DELIVERY_RETRY_SCHEDULE (docs/decisions.md#8-retries, delivery/retry.ts); the
 *   chunk does not wait for it. When the workers stop, no new message starts; claimed messages not
 *   started get their lease back.
 *
 * Generic provider outcomes (providers/types.ts): before sending, the provider's `prepare` may decide
 * claimed messages (wait with a reason, fail, skip) without an attempt; an attempt may end in a `wait`
 * (pending with `reason` until a time, not counted against the schedule), carry Meta's error
 * (`provider_error`) and effects committed with the result in one transaction (opt the contact out,
 * pause the channel: src/domain/channel-state.ts), and ask for a recheck: the run commits what it has, asks `prepare` again about
 * its messages not yet started, and goes on with the ones still to send. An outcome that is `unsent`
 * (the provider's situation changed while the message waited for its turn: a lane that waited for a
 * throughput slot and found its channel paused meanwhile) is no attempt: with `recheck` and a
 * `prepare`, the message is put back and decided by the recheck with the others not yet started
 * (docs/whatsapp.md "A pause stops at once"). Claims skip expired messages
 * (`skipped` / `expired`), and no hold outlasts a message's expiry (db/messages.ts).
 *
 * The lease is short (15 s) so that messages of a run whose process died are found by the workers'
 * sweep (`recoverDead`) within seconds of the lease running out and enqueued again.
 *
 * Pause and cancel (docs/decisions.md "Cancel, pause and resume"): claims and the outbox statement
 * take nothing of a paused or cancelled batch, and the run reads the batch's state again at every
 * flush: once it sees a pause or cancel it starts no new attempt. Its claimed messages not yet started
 * are handed back (paused) or end skipped / `cancelled`; so at most the messages of its current and
 * next slice (2 × deliveryConcurrency) can still go out after the pause or cancel committed, in
 * practice only those in flight. After a cancel the run also cancels what is left pending in its range
 * (a retry that its own results just scheduled included). A paused batch's chunk ends without a
 * retry: a resume enqueues the batch's deliveries again (handlers/batch-control.ts).
 *
 * Afterwards the batch is completed if nothing is pending. If released pending messages are left in
 * the range (another run holds them, or this run was interrupted), the job fails with ChunkBusyError
 * and pg-boss retries it with backoff, until the range is done; messages waiting for a retry are held
 * and do not count.
 */
import type { Provider } from '../../providers/index.ts';
import { attemptOnce, nextStep } from '../../delivery/retry.ts';
import type { PrepareDecision, SendEffect, SendResult } from '../../providers/types.ts';
import { companyChannel } from '../../db/channels.ts';
import type { Db } from '../../db/database.ts';
import { pauseChannel } from '../../domain/channel-state.ts';
import { messagesFinal } from '../../metrics.ts';
import type { JobPayloads } from '../jobs.ts';
import type { PipelineContext } from './context.ts';
import { FailureLog } from './failure-log.ts';
import { ResultWriter, runCommitOf } from './result-writer.ts';
import {
  claimMessages, commitResults, completeBatchIfDone, countUnfinished, optOutContactsOf, renewLeases, sendRangeToOutbox,
  type Claimed, type DeliveryState, type MessageResult,
} from '../../db/messages.ts';
import { cancelPending, deliveryState } from '../../db/batch-control.ts';

/** How long a claim holds without renewal (s, database time). Renewed every RENEW_MS. */
export const LEASE_SECONDS = 15;
/** Lease renewal interval (ms): three renewals per lease, so one slow renewal does not lose it. */
export const RENEW_MS = 5_000;
const FLUSH_ROWS = 100;
/** The runs' timed result flushes (ms): the tick of a worker process's ResultWriter. */
export const FLUSH_MS = 200;

/** The chunk still has pending messages that this run could not finish; retried by pg-boss. */
export class ChunkBusyError extends Error {}

/** Delivers the chunk `data`; `abort` is the job's signal (aborted when pg-boss takes the job back). */
export async function deliverChunk(ctx: PipelineContext, data: JobPayloads['messages-deliver'], abort?: AbortSignal): Promise<void> {
  const { batch_id, company_id, seq_from, seq_to } = data;
  const channel = await companyChannel(ctx.db, company_id);
  if (!channel) return; // the company is gone, and its batches with it
  const provider = ctx.providers.forChannel(channel);
  let state: DeliveryState = 'running';
  if (!ctx.drain.aborted) {
    if (provider.sendsNothing) {
      const { sent, expired, state: seen } = await sendRangeToOutbox(ctx.db, batch_id, seq_from, seq_to, ctx.clock.now());
      if (sent) messagesFinal.inc({ status: 'sent', provider: provider.name }, sent);
      if (expired) messagesFinal.inc({ status: 'skipped', provider: provider.name }, expired);
      state = seen;
    } else {
      state = await deliverClaimed(ctx, provider, data, abort);
    }
  }
  if (state === 'gone') return;
  // Read after this run's results are committed: a cancel that committed before sees them below.
  if (state === 'running') state = await deliveryState(ctx.db, batch_id);
  if (state === 'cancelled') {
    const n = await cancelPending(ctx.db, batch_id, { from: seq_from, to: seq_to });
    if (n) messagesFinal.inc({ status: 'skipped', provider: provider.name }, n);
  }
  await completeBatchIfDone(ctx.db, batch_id, ctx.clock.now());
  if (state === 'paused' || state === 'gone') return; // a resume enqueues the batch's deliveries again
  const left = await countUnfinished(ctx.db, batch_id, seq_from, seq_to);
  if (left > 0) {
    throw new ChunkBusyError(`${left} message(s) of batch ${batch_id} seq ${seq_from}..${seq_to} are still pending (leased by another run, or interrupted); retrying later`);
  }
}

/**
 * The result to commit for claimed message `m` after one attempt (`result`), or after none
 * (`result` null: interrupted before it started). `schedule`: DELIVERY_RETRY_SCHEDULE (ms).
 */
export function resultOf(m: Claimed, result: SendResult | null, interrupted: boolean, schedule: readonly number[], now: number): MessageResult {
  const base = { message_id: m.message_id, sent_at: null };
  if (!result) return { ...base, status: 'pending', error: null, attempts: 0 };
  const attempts = result.status !== 'sent' && result.unsent ? 0 : 1;
  const providerError = result.status === 'sent' ? null : result.providerError ?? null;
  if (interrupted && result.status === 'failed') {
    return { ...base, status: 'pending', error: result.error, error_code: result.code ?? null, attempts, provider_error: providerError };
  }
  const step = nextStep(result, m.attempts + 1, schedule, now);
  switch (step.kind) {
    case 'sent': return { ...base, status: 'sent', error: null, attempts: 1, sent_at: now, provider_message_id: step.providerMessageId };
    case 'failed': return { ...base, status: 'failed', error: step.error, error_code: step.code, attempts, failed_at: now, provider_error: providerError };
    case 'retry': return {
      ...base, status: 'pending', error: step.error, error_code: step.code, attempts, uncounted: step.uncounted === true,
      retry_at: step.at, reason: step.reason ?? null, provider_error: providerError,
    };
  }
}

/** The result to commit for claimed message `m` that the provider's `prepare` decided not to send (no attempt). */
export function decisionResult(m: Claimed, d: Exclude<PrepareDecision, { action: 'send' }>, now: number): MessageResult {
  const base = { message_id: m.message_id, sent_at: null, attempts: 0 };
  switch (d.action) {
    case 'wait': return { ...base, status: 'pending', error: null, retry_at: Math.max(now, d.until), reason: d.reason };
    case 'fail': return { ...base, status: 'failed', error: d.error, error_code: d.code ?? null, failed_at: now, provider_error: d.providerError ?? null };
    case 'skip': return { ...base, status: 'skipped', error: null, reason: d.reason };
  }
}

/**
 * Applies outcomes' effects (providers/types.ts SendEffect) in `db` (the transaction committing their
 * results), at `now` (ms): opt-outs of the messages' contacts, one statement per source and evidence; a pause of the
 * company's channel with the first reason given.
 */
async function applyEffects(db: Db, companyId: number, effects: { message_id: string; effect: SendEffect }[], now: number): Promise<void> {
  const optOuts = new Map<string, { source: string; evidence: Record<string, unknown>; ids: string[] }>();
  let pause: string | null = null;
  for (const { message_id, effect } of effects) {
    if (effect.kind === 'opt_out') {
      const evidence = effect.evidence ?? {};
      const key = `${effect.source}\0${JSON.stringify(evidence)}`;
      const group = optOuts.get(key) ?? { source: effect.source, evidence, ids: [] };
      group.ids.push(message_id);
      optOuts.set(key, group);
    } else pause ??= effect.reason;
  }
  for (const g of optOuts.values()) await optOutContactsOf(db, g.ids, g.source, now, g.evidence);
  if (pause !== null) await pauseChannel(db, companyId, pause, now);
}

/** The result of a claimed message not started because its batch was cancelled meanwhile. */
function cancelledResult(m: Claimed): MessageResult {
  return { message_id: m.message_id, status: 'skipped', reason: 'cancelled', error: null, attempts: 0, sent_at: null };
}

/**
 * Delivers the range's messages a slice at a time (see the module comment); returns the batch's state
 * as the run last saw it.
 */
async function deliverClaimed(ctx: PipelineContext, provider: Provider, data: JobPayloads['messages-deliver'], abort?: AbortSignal): Promise<DeliveryState> {
  const slice = ctx.deliveryConcurrency;
  const writer = ctx.resultWriter ?? new ResultWriter(ctx.db, FLUSH_MS);
  const schedule = ctx.retrySchedule;
  const held = new Set<string>(); // claimed and not yet committed
  const queue: Claimed[] = []; // claimed and not yet started (nor decided by prepare)
  let state: DeliveryState = 'running';
  let exhausted = false; // the last claim found fewer than a slice: nothing more to claim now
  let buffer: MessageResult[] = [];
  let effects: { message_id: string; effect: SendEffect }[] = [];
  let chain: Promise<void> = Promise.resolve();
  let flushError: unknown;
  const see = (s: DeliveryState) => { if (s !== 'running') state = s; };

  const flush = (): Promise<void> => {
    const rows = buffer;
    const fx = effects;
    buffer = [];
    effects = [];
    if (rows.length) {
      chain = chain.then(async () => {
        // A pause or cancel since the last look: start nothing new (the lanes check `state`). Read in
        // the results' own statement while the run has more to start.
        const look = state === 'running' && (queue.length > 0 || !exhausted);
        const { written, state: seen } = fx.length === 0
          ? await writer.commit(rows, data.batch_id, look)
          : await ctx.db.transaction().execute(async (trx) => {
            const c = await commitResults(trx, rows, look ? [data.batch_id] : []);
            await applyEffects(trx, data.company_id, fx, ctx.clock.now());
            return runCommitOf(c, rows, data.batch_id, look);
          });
        see(seen);
        for (const r of rows) held.delete(r.message_id);
        const counts: Record<string, number> = {};
        for (const s of written) if (s !== 'pending') counts[s] = (counts[s] ?? 0) + 1;
        for (const [status, n] of Object.entries(counts)) messagesFinal.inc({ status, provider: provider.name }, n);
      }).catch((err) => {
        flushError ??= err;
      });
    }
    return chain;
  };

  // The provider's look before sending (providers/types.ts prepare): messages it does not send now
  // are decided without an attempt; the rest are returned, in order.
  const decide = async (items: Claimed[], again: boolean): Promise<Claimed[]> => {
    if (!provider.prepare || items.length === 0) return items;
    const decisions = await provider.prepare({ companyId: data.company_id, now: ctx.clock.now(), again }, items.map((m) => ({ message_id: m.message_id, rendered: m.rendered })));
    const now = ctx.clock.now();
    const send: Claimed[] = [];
    for (const m of items) {
      const d = decisions.get(m.message_id);
      if (!d || d.action === 'send') send.push(m);
      else buffer.push(decisionResult(m, d, now));
    }
    return send;
  };
  // The next slice: claimed (none while the batch is paused or cancelled), then looked at by prepare.
  let refilling: Promise<void> | null = null;
  const refill = (): Promise<void> => refilling ??= (async () => {
    const claim = await claimMessages(ctx.db, data.batch_id, data.seq_from, data.seq_to, LEASE_SECONDS, ctx.clock.now(), slice);
    see(claim.state);
    if (claim.expired) messagesFinal.inc({ status: 'skipped', provider: provider.name }, claim.expired);
    if (claim.claimed.length + claim.expired < slice) exhausted = true;
    for (const m of claim.claimed) held.add(m.message_id);
    queue.push(...await decide(claim.claimed, false));
  })().finally(() => { refilling = null; });
  // An outcome asked for a recheck: its effects are committed first, then prepare looks again.
  let recheckWanted = false;
  let recheck: Promise<void> | null = null;
  const recheckIfWanted = async (): Promise<void> => {
    while (recheckWanted || recheck) {
      if (!recheck) {
        recheckWanted = false;
        recheck = (async () => {
          await flush();
          if (flushError === undefined) {
            const items = queue.splice(0);
            try {
              queue.unshift(...await decide(items, true));
            } catch (err) {
              queue.unshift(...items);
              throw err;
            }
          }
        })().finally(() => { recheck = null; });
      }
      await recheck;
    }
  };

  const stopTicks = writer.onTick(() => void flush());
  const renewTimer = setInterval(() => {
    renewLeases(ctx.db, [...held], LEASE_SECONDS).catch((err) => ctx.logger.warn({ err: (err as Error).message, batch_id: data.batch_id }, 'lease renewal failed'));
  }, RENEW_MS);

  // Failed attempts reach the log: `error` when the message ends failed, `warn`
  // when it waits for another attempt; bounded per run (failure-log.ts).
  const failures = new FailureLog(ctx.logger, { company_id: data.company_id, batch_id: data.batch_id }, 'message delivery failed');
  const stopped = () => ctx.drain.aborted || !!abort?.aborted || flushError !== undefined || state !== 'running';
  const lane = async () => {
    while (!stopped()) {
      await recheckIfWanted();
      if (queue.length === 0) {
        if (exhausted && !refilling) break;
        await refill();
        continue;
      }
      const m = queue.shift();
      if (!m || stopped()) {
        if (m) queue.unshift(m);
        break;
      }
      const result = await attemptOnce(provider, m.rendered, abort);
      if (result.status !== 'sent' && result.unsent && result.recheck && provider.prepare) {
        // Not started after all: back to the queue, decided by the recheck with the others.
        queue.unshift(m);
        recheckWanted = true;
        continue;
      }
      const r = resultOf(m, result, !!abort?.aborted, schedule, ctx.clock.now());
      buffer.push(r);
      if (result.status !== 'sent') {
        for (const effect of result.effects ?? []) effects.push({ message_id: m.message_id, effect });
        if (result.recheck) recheckWanted = true;
        if (result.error !== undefined) {
          failures.add({
            level: r.status === 'failed' ? 'error' : 'warn', message_id: m.message_id, provider: provider.name,
            attempt: m.attempts + 1, error: result.error, error_code: result.code ?? null,
            ...(r.reason ? { waiting: r.reason } : {}),
            ...(r.retry_at ? { retry_at: new Date(r.retry_at).toISOString() } : {}),
          });
        }
      }
      if (buffer.length >= FLUSH_ROWS) void flush();
    }
  };
  try {
    await refill();
    if (queue.length > 0 || !exhausted) await Promise.all(Array.from({ length: slice }, lane));
    // Claimed but never started: cancelled with the batch, or (paused, workers stopping) their leases
    // given back at once.
    for (const m of queue.splice(0)) buffer.push((state as DeliveryState) === 'cancelled' ? cancelledResult(m) : resultOf(m, null, true, schedule, ctx.clock.now()));
  } finally {
    stopTicks();
    clearInterval(renewTimer);
    failures.summary();
    await flush();
  }
  if (flushError !== undefined) throw flushError;
  return state;
}

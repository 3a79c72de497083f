/**
 * `messages-deliver`: delivers one chunk (a batch's `seq` range) through the company's provider.
 *
 * - outbox: one statement records every deliverable message of the range as sent (the hand-off is the
 *   commit itself).
 * - webhook / whatsapp: the deliverable messages are claimed under a lease (LEASE_SECONDS of database
 *   time, renewed every RENEW_MS while the run works), handed to the provider ONCE each with up to
 *   `deliveryConcurrency` in flight, and their results committed set-based every FLUSH_ROWS results or
 *   FLUSH_MS, whichever comes first, so a crash loses at most the results of the last moments. After a
 *   transient failure the message waits `pending` with `next_attempt_at` (a hold, released by the
 *   workers' sweep) on DELIVERY_RETRY_SCHEDULE (receipts-and-events.md §2, providers/retry.ts); the
 *   chunk does not wait for it. When the workers stop, no new message starts; claimed messages not
 *   started get their lease back.
 *
 * The lease is short (15 s) so that messages of a run whose process died are found by the workers'
 * sweep (`recoverDead`) within seconds of the lease running out and enqueued again (issue 11 item 5).
 *
 * Afterwards the batch is completed if nothing is pending. If released pending messages are left in
 * the range (another run holds them, or this run was interrupted), the job fails with ChunkBusyError
 * and pg-boss retries it with backoff, until the range is done; messages waiting for a retry are held
 * and do not count.
 */
import type { Provider } from '../../providers/index.ts';
import { attemptOnce, nextStep } from '../../providers/retry.ts';
import type { SendResult } from '../../providers/types.ts';
import { messagesFinal } from '../../metrics.ts';
import type { JobPayloads } from '../jobs.ts';
import type { PipelineContext } from './context.ts';
import { FailureLog } from './failure-log.ts';
import {
  claimMessages, commitResults, completeBatchIfDone, countUnfinished, renewLeases, sendRangeToOutbox,
  type Claimed, type MessageResult,
} from '../../db/messages.ts';

/** How long a claim holds without renewal (s, database time). Renewed every RENEW_MS. */
export const LEASE_SECONDS = 15;
/** Lease renewal interval (ms): three renewals per lease, so one slow renewal does not lose it. */
export const RENEW_MS = 5_000;
const FLUSH_ROWS = 100;
const FLUSH_MS = 200;

/** The chunk still has pending messages that this run could not finish; retried by pg-boss. */
export class ChunkBusyError extends Error {}

/** Delivers the chunk `data`; `abort` is the job's signal (aborted when pg-boss takes the job back). */
export async function deliverChunk(ctx: PipelineContext, data: JobPayloads['messages-deliver'], abort?: AbortSignal): Promise<void> {
  const { batch_id, company_id, seq_from, seq_to } = data;
  const company = await ctx.db.selectFrom('companies').select('channel').where('company_id', '=', company_id).executeTakeFirst();
  if (!company) return; // the company is gone, and its batches with it
  const provider = ctx.providers.forChannel(company.channel);
  if (!ctx.drain.aborted) {
    if (provider.name === 'outbox') {
      const sent = await sendRangeToOutbox(ctx.db, batch_id, seq_from, seq_to, ctx.clock.now());
      if (sent) messagesFinal.inc({ status: 'sent', provider: 'outbox' }, sent);
    } else {
      await deliverClaimed(ctx, provider, data, abort);
    }
  }
  await completeBatchIfDone(ctx.db, batch_id, ctx.clock.now());
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
  if (interrupted && result.status === 'failed') {
    return { ...base, status: 'pending', error: result.error, error_code: result.code ?? null, attempts: 1 };
  }
  const step = nextStep(result, m.attempts + 1, schedule, now);
  switch (step.kind) {
    case 'sent': return { ...base, status: 'sent', error: null, attempts: 1, sent_at: now, provider_message_id: step.providerMessageId };
    case 'failed': return { ...base, status: 'failed', error: step.error, error_code: step.code, attempts: 1, failed_at: now };
    case 'retry': return { ...base, status: 'pending', error: step.error, error_code: step.code, attempts: 1, retry_at: step.at };
  }
}

async function deliverClaimed(ctx: PipelineContext, provider: Provider, data: JobPayloads['messages-deliver'], abort?: AbortSignal): Promise<void> {
  const claimed = await claimMessages(ctx.db, data.batch_id, data.seq_from, data.seq_to, LEASE_SECONDS);
  if (claimed.length === 0) return;
  const schedule = ctx.retrySchedule;
  const held = new Set(claimed.map((m) => m.message_id)); // claimed and not yet committed
  let buffer: MessageResult[] = [];
  let chain: Promise<void> = Promise.resolve();
  let flushError: unknown;

  const flush = (): Promise<void> => {
    const rows = buffer;
    buffer = [];
    if (rows.length) {
      chain = chain.then(async () => {
        const written = await commitResults(ctx.db, rows);
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
  const flushTimer = setInterval(() => void flush(), FLUSH_MS);
  const renewTimer = setInterval(() => {
    renewLeases(ctx.db, [...held], LEASE_SECONDS).catch((err) => ctx.logger.warn({ err: (err as Error).message, batch_id: data.batch_id }, 'lease renewal failed'));
  }, RENEW_MS);

  // Failed attempts reach the log (issue 13 item 4): `error` when the message ends failed, `warn`
  // when it waits for another attempt; bounded per run (failure-log.ts).
  const failures = new FailureLog(ctx.logger, { company_id: data.company_id, batch_id: data.batch_id }, 'message delivery failed');
  let next = 0;
  const lane = async () => {
    while (next < claimed.length && !ctx.drain.aborted && !abort?.aborted && flushError === undefined) {
      const m = claimed[next++];
      const result = await attemptOnce(provider, m.rendered, abort);
      const r = resultOf(m, result, !!abort?.aborted, schedule, ctx.clock.now());
      buffer.push(r);
      if (result?.status === 'failed') {
        failures.add({
          level: r.status === 'failed' ? 'error' : 'warn', message_id: m.message_id, provider: provider.name,
          attempt: m.attempts + 1, error: result.error, error_code: result.code ?? null,
          ...(r.retry_at ? { retry_at: new Date(r.retry_at).toISOString() } : {}),
        });
      }
      if (buffer.length >= FLUSH_ROWS) void flush();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(ctx.deliveryConcurrency, claimed.length) }, lane));
    // Claimed but never started (the workers are stopping): give the leases back at once.
    for (; next < claimed.length; next++) {
      buffer.push(resultOf(claimed[next], null, true, schedule, ctx.clock.now()));
    }
  } finally {
    clearInterval(flushTimer);
    clearInterval(renewTimer);
    failures.summary();
    await flush();
  }
  if (flushError !== undefined) throw flushError;
}

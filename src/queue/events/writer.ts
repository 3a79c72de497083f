/**
 * The result writer of the event loop (loop.ts): attempt outcomes are buffered and written set-based
 * (`recordAttempts`) every FLUSH_MS or FLUSH_ROWS rows, one flush at a time and in order; lease
 * renewals run in the same chain (never beside a flush, so a flush always carries the newest lease).
 *
 * What a delivery becomes after an attempt (`nextState`): 2xx → delivered; 410 → failed, and the
 * endpoint disabled ("receiver answered 410 Gone") with its pending deliveries; any other failure →
 * pending again at delivery/schedule.ts `retryAt` (EVENT_RETRY_SCHEDULE, the Retry-After of a retryable
 * failure when longer), failed after the schedule. Per flush, each endpoint's failure streak
 * (`failing_since`) is updated from its last attempt, and an endpoint whose attempts all failed for
 * FAILING_DISABLE_MS (injectable clock) is disabled, judged at the time of the flush's last failed
 * attempt (not of the write: a clock that moves on meanwhile does not count as failing time).
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { disableEndpoints, recordAttempts, renewLeases, updateFailingSince, type AttemptResult, type ClaimedDelivery } from '../../db/events.ts';
import { retryAt } from '../../delivery/schedule.ts';
import { eventAttempts } from '../../metrics.ts';
import type { AttemptOutcome } from './send.ts';

/** Outcome buffer flush period (ms) and size. */
export const FLUSH_MS = 50;
export const FLUSH_ROWS = 500;
/** An endpoint failing every attempt this long (clock time) is disabled: 5 days. */
export const FAILING_DISABLE_MS = 5 * 24 * 3600 * 1000;

/** A delivery's state after an attempt: its status and, when pending, when it is due again. */
export interface NextState { status: 'pending' | 'failed' | 'delivered'; next: Date | null }

/** What attempt number `attempt` (1-based) with outcome `o` at `now` (clock ms) makes of its delivery. */
export function nextState(schedule: readonly number[], attempt: number, now: number, o: AttemptOutcome): NextState {
  if (o.ok) return { status: 'delivered', next: null };
  if (o.status_code === 410) return { status: 'failed', next: null };
  const at = retryAt(schedule, attempt, now, o.retry_after_ms);
  return at === null ? { status: 'failed', next: null } : { status: 'pending', next: new Date(at) };
}

/** One attempt's effect on its endpoint: succeeded or not, answered 410, when. */
export interface EndpointOutcome { endpoint_id: number; ok: boolean; gone: boolean; at: Date }

/**
 * Per endpoint, the state after its last attempt among `outcomes`: `ok` (last attempt succeeded),
 * `failing` with the first failure since its last success in this set, and `gone` (answered 410);
 * `lastFailure`: the time of the latest failed attempt (null when none failed).
 */
export function failureStreaks(outcomes: EndpointOutcome[]): { ok: number[]; failing: { endpoint_id: number; since: Date }[]; gone: number[]; lastFailure: Date | null } {
  const last = new Map<number, { ok: boolean; firstFailSinceOk: Date | null }>();
  const gone = new Set<number>();
  let lastFailure: Date | null = null;
  for (const o of [...outcomes].sort((a, b) => a.at.getTime() - b.at.getTime())) {
    if (o.gone) gone.add(o.endpoint_id);
    if (!o.ok) lastFailure = o.at;
    const prev = last.get(o.endpoint_id);
    if (o.ok) last.set(o.endpoint_id, { ok: true, firstFailSinceOk: null });
    else last.set(o.endpoint_id, { ok: false, firstFailSinceOk: prev && !prev.ok ? prev.firstFailSinceOk : o.at });
  }
  return {
    ok: [...last].filter(([, v]) => v.ok).map(([id]) => id),
    failing: [...last].filter(([, v]) => !v.ok).map(([id, v]) => ({ endpoint_id: id, since: v.firstFailSinceOk! })),
    gone: [...gone],
    lastFailure,
  };
}

export interface OutcomeWriterOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  /** EVENT_RETRY_SCHEDULE (ms). */
  schedule: readonly number[];
  /** Lease length (ms, database time) set by a renewal. */
  leaseMs: number;
  /** Called with the endpoints a flush disabled (their queued deliveries are to be dropped). */
  onDisabled: (endpointIds: number[]) => void;
}

/** The writer (see the module comment). */
export class OutcomeWriter {
  readonly #opts: OutcomeWriterOptions;
  /** Outcomes to write; the lease is read at write time (a renewal may have replaced it). */
  #buffer: { claim: ClaimedDelivery; result: Omit<AttemptResult, 'lease'> }[] = [];
  #endpointOutcomes: EndpointOutcome[] = [];
  #chain: Promise<void> = Promise.resolve();

  constructor(opts: OutcomeWriterOptions) {
    this.#opts = opts;
  }

  /** Outcomes buffered and not yet written. */
  get buffered(): number {
    return this.#buffer.length;
  }

  /** Buffers the outcome `o` of attempting `d` (flushes when FLUSH_ROWS are buffered). */
  record(d: ClaimedDelivery, o: AttemptOutcome): void {
    const attempt = d.attempts + 1;
    const nowMs = this.#opts.clock.now();
    const at = new Date(nowMs);
    const next = nextState(this.#opts.schedule, attempt, nowMs, o);
    eventAttempts.inc({ outcome: next.status === 'pending' ? 'retry' : next.status });
    this.#buffer.push({
      claim: d,
      result: {
        event_id: d.event_id, endpoint_id: d.endpoint_id, attempt, status_code: o.status_code, error: o.error,
        response_excerpt: o.response_excerpt, duration_ms: o.duration_ms, at, next_status: next.status, next_attempt_at: next.next,
      },
    });
    this.#endpointOutcomes.push({ endpoint_id: d.endpoint_id, ok: o.ok, gone: o.status_code === 410, at });
    if (this.#buffer.length >= FLUSH_ROWS) void this.flush();
  }

  /** Writes the buffered outcomes (after any flush or renewal before it); resolves when written. */
  flush(): Promise<void> {
    return this.#then(async () => {
      if (this.#buffer.length === 0) return;
      const { db, log, onDisabled } = this.#opts;
      const rows = this.#buffer.map((b) => ({ ...b.result, lease: b.claim.lease }));
      const streaks = failureStreaks(this.#endpointOutcomes);
      this.#buffer = [];
      this.#endpointOutcomes = [];
      try {
        // One transaction: a reader that sees an attempt logged also sees the streak it ended.
        await db.transaction().execute(async (trx) => {
          await recordAttempts(trx, rows);
          await updateFailingSince(trx, streaks.ok, streaks.failing);
        });
        if (streaks.gone.length) {
          const off = await disableEndpoints(db, streaks.gone, 'receiver answered 410 Gone');
          onDisabled(off);
          if (off.length) log.warn({ endpoints: off }, 'event endpoints disabled: 410 Gone');
        }
        if (streaks.failing.length && streaks.lastFailure) {
          const off = await disableEndpoints(db, [], 'every delivery attempt failed for 5 days', new Date(streaks.lastFailure.getTime() - FAILING_DISABLE_MS));
          onDisabled(off);
          if (off.length) log.warn({ endpoints: off }, 'event endpoints disabled: failing for 5 days');
        }
      } catch (err) {
        // The leases run out and the deliveries are attempted again: at least once.
        log.warn({ err: (err as Error).message, rows: rows.length }, 'event attempt outcomes not written');
      }
    });
  }

  /** Extends the leases of `held` (in place, on each ClaimedDelivery), in the chain of the flushes. */
  renew(held: () => ClaimedDelivery[]): Promise<void> {
    return this.#then(async () => {
      const list = held();
      if (list.length === 0) return;
      try {
        const renewed = await renewLeases(this.#opts.db, list, this.#opts.leaseMs);
        const byKey = new Map(renewed.map((r) => [`${r.event_id}|${r.endpoint_id}`, r.lease]));
        for (const d of list) {
          const lease = byKey.get(`${d.event_id}|${d.endpoint_id}`);
          if (lease) d.lease = lease;
        }
      } catch (err) {
        this.#opts.log.warn({ err: (err as Error).message }, 'event lease renewal failed');
      }
    });
  }

  /** Runs `step` after everything chained before it (a step never rejects). */
  #then(step: () => Promise<void>): Promise<void> {
    this.#chain = this.#chain.then(step);
    return this.#chain;
  }
}

/**
 * The event delivery loop of one worker process (receipts-and-events.md §5), separate from message
 * delivery (its own claims on `event_deliveries`, its own HTTP agent, bounded concurrency), so event
 * receivers never slow message delivery down.
 *
 * - Claims due deliveries in batches (db/events.ts `claimDeliveries`: FOR UPDATE SKIP LOCKED, a lease
 *   of LEASE_MS in database time, renewed every RENEW_MS while held, so a killed process's claims are
 *   taken over within LEASE_MS), at most MAX_IN_FLIGHT in hand; an endpoint holding EVENT_CONCURRENCY × QUEUE_FACTOR
 *   deliveries in this process is skipped by the next claim. Claims again at once when a claim came
 *   back full or when a saturated endpoint's hand drains below its cap, otherwise every IDLE_MS of real time
 *   (so a busy endpoint costs one claim per many deliveries, not one per delivery).
 * - Per endpoint at most `config.eventConcurrency` requests in flight (send.ts does one attempt).
 * - Outcomes are buffered and written set-based (`recordAttempts`) every FLUSH_MS or FLUSH_ROWS rows:
 *   2xx → delivered; 410 → endpoint disabled ("receiver answered 410 Gone"), its pending deliveries
 *   failed; anything else → pending again after `config.eventRetrySchedule[attempt-1]` (or the
 *   Retry-After when longer), failed after the schedule. An endpoint whose attempts all failed for
 *   FAILING_DISABLE_MS (by the injectable clock, `failing_since`) is disabled.
 * - Retention: events created and attempts made more than `config.eventRetentionMs` ago (injectable
 *   clock) are deleted in batches of RETENTION_BATCH, when the loop starts and then whenever
 *   RETENTION_EVERY_MS passed by real time or by the clock.
 * - stop(): no new claims or attempts; waits for attempts in flight and writes their outcomes; what
 *   was claimed but not started is left to its lease (claimed again once it runs out).
 */
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { Agent } from 'undici';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import {
  claimDeliveries, deleteOldAttempts, deleteOldEvents, disableEndpoints, recordAttempts, renewLeases, updateFailingSince,
  type AttemptResult, type ClaimedDelivery,
} from '../../db/events.ts';
import { parseAddressPolicy } from '../../domain/network-guard.ts';
import type { SecretBox } from '../../domain/secrets.ts';
import type { Clock } from '../../clock.ts';
import { eventAttempts } from '../../metrics.ts';
import { createEventAgent, sendEvent, type AttemptOutcome } from './send.ts';

/** Deliveries in hand per process (claimed, queued or in flight). */
export const MAX_IN_FLIGHT = 512;
/** Deliveries one endpoint may hold in this process, as a multiple of its concurrency. */
export const QUEUE_FACTOR = 8;
/** Real-time wait between claims when the last one was not full (ms). */
export const IDLE_MS = 250;
/** Lease of a claimed delivery (database time) and how often held leases are renewed (ms). */
export const LEASE_MS = 15_000;
export const RENEW_MS = 5_000;
/** Outcome buffer flush period (ms) and size. */
export const FLUSH_MS = 50;
export const FLUSH_ROWS = 500;
/** An endpoint failing every attempt this long (clock time) is disabled: 5 days. */
export const FAILING_DISABLE_MS = 5 * 24 * 3600 * 1000;
/** Retention runs this often (real or clock time, ms) and deletes this many rows per statement. */
export const RETENTION_EVERY_MS = 60_000;
export const RETENTION_BATCH = 5_000;

export interface EventLoopDeps {
  database: Database;
  logger: Logger;
  clock: Clock;
  secrets: SecretBox;
  config: Config;
}

export interface EventLoop { stop(): Promise<void> }

/** Per endpoint: queued deliveries and requests in flight. */
interface Lane { queue: ClaimedDelivery[]; active: number; held: number }

/** The next state of a delivery after a failed attempt `attempt` (1-based). */
export function afterFailure(schedule: readonly number[], attempt: number, nowMs: number, retryAfterMs?: number): { status: 'pending' | 'failed'; next: Date | null } {
  if (attempt > schedule.length) return { status: 'failed', next: null };
  const wait = Math.max(schedule[attempt - 1], retryAfterMs ?? 0);
  return { status: 'pending', next: new Date(nowMs + wait) };
}

/** Starts the loop (roles worker and all). */
export function startEventLoop(deps: EventLoopDeps): EventLoop {
  const { database, clock, config } = deps;
  const db = database.db;
  const log = deps.logger.child({ component: 'events' });
  const perEndpoint = config.eventConcurrency;
  const leaseMs = Math.max(LEASE_MS, config.deliveryTimeoutMs + RENEW_MS);
  const agent: Agent = createEventAgent(parseAddressPolicy(config.providerAllowedHosts), config.deliveryTimeoutMs, Math.max(perEndpoint, 16));
  const stopping = new AbortController();
  const lanes = new Map<number, Lane>();
  const signers = new Map<string, Webhook>();
  let held = 0;
  /** Claimed deliveries whose outcome is not recorded yet (their leases are renewed). */
  const holding = new Set<ClaimedDelivery>();
  /** Outcomes to write; the lease is read at write time (a renewal may have replaced it). */
  let buffer: { claim: ClaimedDelivery; result: Omit<AttemptResult, 'lease'> }[] = [];
  let endpointOutcomes: { endpoint_id: number; ok: boolean; gone: boolean; at: Date }[] = [];
  let flushing: Promise<void> = Promise.resolve();
  let wake: (() => void) | undefined;
  let lastRetentionReal = 0;
  let lastRetentionClock = 0;

  const nudge = () => { const w = wake; wake = undefined; w?.(); };
  const sleep = (ms: number) => new Promise<void>((resolve) => {
    const t = setTimeout(() => { wake = undefined; resolve(); }, ms);
    wake = () => { clearTimeout(t); resolve(); };
  });

  function signer(sealed: string): Webhook {
    let s = signers.get(sealed);
    if (!s) {
      if (signers.size > 1000) signers.clear();
      s = new Webhook(deps.secrets.open(sealed));
      signers.set(sealed, s);
    }
    return s;
  }

  /** Writes the buffered outcomes (one at a time, in order). */
  function flush(): Promise<void> {
    flushing = flushing.then(async () => {
      if (buffer.length === 0) return;
      const rows = buffer.map((b) => ({ ...b.result, lease: b.claim.lease }));
      const outcomes = endpointOutcomes;
      buffer = [];
      endpointOutcomes = [];
      try {
        await recordAttempts(db, rows);
        // Failure streaks: per endpoint, the state after its last attempt of this flush.
        const last = new Map<number, { ok: boolean; firstFailSinceOk: Date | null }>();
        const gone = new Set<number>();
        for (const o of outcomes.sort((a, b) => a.at.getTime() - b.at.getTime())) {
          if (o.gone) gone.add(o.endpoint_id);
          const prev = last.get(o.endpoint_id);
          if (o.ok) last.set(o.endpoint_id, { ok: true, firstFailSinceOk: null });
          else last.set(o.endpoint_id, { ok: false, firstFailSinceOk: prev && !prev.ok ? prev.firstFailSinceOk : o.at });
        }
        const ok = [...last].filter(([, v]) => v.ok).map(([id]) => id);
        const failing = [...last].filter(([, v]) => !v.ok).map(([id, v]) => ({ endpoint_id: id, since: v.firstFailSinceOk! }));
        await updateFailingSince(db, ok, failing);
        if (gone.size) {
          const off = await disableEndpoints(db, [...gone], 'receiver answered 410 Gone');
          dropQueued(off);
          if (off.length) log.warn({ endpoints: off }, 'event endpoints disabled: 410 Gone');
        }
        if (failing.length) {
          const off = await disableEndpoints(db, [], 'every delivery attempt failed for 5 days', new Date(clock.now() - FAILING_DISABLE_MS));
          dropQueued(off);
          if (off.length) log.warn({ endpoints: off }, 'event endpoints disabled: failing for 5 days');
        }
      } catch (err) {
        // The leases run out and the deliveries are attempted again: at least once.
        log.warn({ err: (err as Error).message, rows: rows.length }, 'event attempt outcomes not written');
      }
    });
    return flushing;
  }

  /** Forgets the deliveries of disabled endpoints that are claimed but not started (their rows are failed). */
  function dropQueued(endpointIds: number[]): void {
    for (const id of endpointIds) {
      const lane = lanes.get(id);
      if (!lane) continue;
      for (const d of lane.queue) holding.delete(d);
      lane.held -= lane.queue.length;
      held -= lane.queue.length;
      lane.queue = [];
      if (lane.held === 0) lanes.delete(id);
    }
  }

  function record(d: ClaimedDelivery, o: AttemptOutcome): void {
    const attempt = d.attempts + 1;
    const nowMs = clock.now();
    const at = new Date(nowMs);
    let next: { status: 'pending' | 'failed' | 'delivered'; next: Date | null };
    if (o.ok) next = { status: 'delivered', next: null };
    else if (o.status_code === 410) next = { status: 'failed', next: null };
    else next = afterFailure(config.eventRetrySchedule, attempt, nowMs, o.retry_after_ms);
    holding.delete(d);
    eventAttempts.inc({ outcome: next.status === 'pending' ? 'retry' : next.status });
    buffer.push({
      claim: d,
      result: {
        event_id: d.event_id, endpoint_id: d.endpoint_id, attempt, status_code: o.status_code, error: o.error,
        response_excerpt: o.response_excerpt, duration_ms: o.duration_ms, at, next_status: next.status, next_attempt_at: next.next,
      },
    });
    endpointOutcomes.push({ endpoint_id: d.endpoint_id, ok: o.ok, gone: o.status_code === 410, at });
    if (buffer.length >= FLUSH_ROWS) void flush();
  }

  async function runOne(lane: Lane, d: ClaimedDelivery): Promise<void> {
    let outcome: AttemptOutcome;
    try {
      outcome = await sendEvent({ url: d.url, id: d.event_id, body: d.payload, signer: signer(d.secret_sealed), agent, timeoutMs: config.deliveryTimeoutMs, signal: stopping.signal });
    } catch (err) {
      outcome = { ok: false, status_code: null, error: `delivery error: ${(err as Error).message}`.slice(0, 200), response_excerpt: null, duration_ms: 0 };
    }
    if (!(stopping.signal.aborted && outcome.error === 'delivery interrupted')) record(d, outcome);
  }

  function pump(endpointId: number, lane: Lane): void {
    while (lane.active < perEndpoint && lane.queue.length && !stopping.signal.aborted) {
      const d = lane.queue.shift()!;
      lane.active++;
      void runOne(lane, d).finally(() => {
        lane.active--;
        lane.held--;
        held--;
        if (lane.held === 0) lanes.delete(endpointId);
        else pump(endpointId, lane);
        // Wake the claim loop only when this endpoint has room for a good claim again.
        if (lane.held === perEndpoint * QUEUE_FACTOR - 1 || lane.held === 0 || held === MAX_IN_FLIGHT / 2) nudge();
      });
    }
  }

  async function retention(): Promise<void> {
    const now = clock.now();
    if (Date.now() - lastRetentionReal < RETENTION_EVERY_MS && Math.abs(now - lastRetentionClock) < RETENTION_EVERY_MS) return;
    lastRetentionReal = Date.now();
    lastRetentionClock = now;
    const before = new Date(now - config.eventRetentionMs);
    let events = 0;
    let attempts = 0;
    for (let n = RETENTION_BATCH; n === RETENTION_BATCH && !stopping.signal.aborted;) events += n = await deleteOldEvents(db, before, RETENTION_BATCH);
    for (let n = RETENTION_BATCH; n === RETENTION_BATCH && !stopping.signal.aborted;) attempts += n = await deleteOldAttempts(db, before, RETENTION_BATCH);
    if (events || attempts) log.info({ events, attempts, before: before.toISOString() }, 'expired events and attempts deleted');
  }

  const flusher = setInterval(() => { if (buffer.length) void flush(); }, FLUSH_MS);

  /** Renews the leases of held deliveries, in the same chain as the flushes (never beside one). */
  function renew(): void {
    flushing = flushing.then(async () => {
      const list = [...holding];
      if (list.length === 0) return;
      try {
        const renewed = await renewLeases(db, list, leaseMs);
        const byKey = new Map(renewed.map((r) => [`${r.event_id}|${r.endpoint_id}`, r.lease]));
        for (const d of list) {
          const lease = byKey.get(`${d.event_id}|${d.endpoint_id}`);
          if (lease) d.lease = lease;
        }
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'event lease renewal failed');
      }
    });
  }
  const renewer = setInterval(renew, RENEW_MS);

  async function run(): Promise<void> {
    while (!stopping.signal.aborted) {
      let full = false;
      try {
        await retention();
        const room = MAX_IN_FLIGHT - held;
        if (room >= 16) {
          const saturated = [...lanes].filter(([, l]) => l.held >= perEndpoint * QUEUE_FACTOR).map(([id]) => id);
          const limit = Math.min(room, perEndpoint * QUEUE_FACTOR * 8);
          const claimed = await claimDeliveries(db, new Date(clock.now()), limit, leaseMs, saturated);
          full = claimed.length === limit;
          for (const d of claimed) {
            let lane = lanes.get(d.endpoint_id);
            if (!lane) lanes.set(d.endpoint_id, lane = { queue: [], active: 0, held: 0 });
            lane.queue.push(d);
            holding.add(d);
            lane.held++;
            held++;
          }
          for (const [id, lane] of lanes) pump(id, lane);
        }
      } catch (err) {
        if (!stopping.signal.aborted) log.warn({ err: (err as Error).message }, 'event claim failed');
      }
      if (!full && !stopping.signal.aborted) await sleep(IDLE_MS);
      else if (held >= MAX_IN_FLIGHT - 16) await sleep(IDLE_MS);
    }
  }

  const running = run();
  return {
    async stop() {
      stopping.abort();
      nudge();
      await running;
      const deadline = Date.now() + config.deliveryTimeoutMs + 1000;
      while ([...lanes.values()].some((l) => l.active > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      clearInterval(flusher);
      clearInterval(renewer);
      await flush();
      await agent.close().catch(() => {});
    },
  };
}

/**
 * WhatsApp pacing across every worker process (docs/whatsapp.md "Pacing and limits"): the number's
 * throughput, the pair rate and the messaging limit, kept in the database (migration 017, SQL in
 * src/db/whatsapp-pacing.ts). One instance per worker process, built by the provider registry.
 *
 * Throughput ({@link WhatsappPacing.slot}): the company's `whatsapp_channel_state.next_slot_at` is the
 * number's next free slot in database time. A process reserves a small block of slots `spacing` apart
 * with one statement (at most `blockMs` of the number's time, so processes interleave), converts them
 * to its own monotonic clock with the offset measured at reservation (the smallest `local answer time
 * - clock_timestamp()` seen lately: never early), and hands them to the waiting sending lanes in
 * order. A lane that reaches its slot more than `toleranceMs` late gives it up and takes another, so
 * a late request never bunches with the on-time ones. Every request therefore starts within
 * [slot, slot + D] with D = toleranceMs + the conversion and transit allowance `marginMs`; any 1-s
 * window then holds at most floor((1000 + D) / spacing) + 1 slots, and the spacing is chosen just
 * above (1000 + D) / rate, so that is at most `rate`, at a mean of rate * 1000 / (1000 + D) (0.94 x rate
 * with the defaults, D = 20 + 40 = 60 ms; docs/benchmarks.md has the measured way to the receiver). A number slowed down (Meta's 130429, {@link WhatsappPacing.slowDown})
 * gets twice the spacing until `slowed_until`.
 *
 * Pair rate and messaging limit ({@link WhatsappPacing.admit}): one transaction per call that locks
 * the company's channel-state row (so admissions from all processes are decided one after another)
 * and decides every message of the call in one statement. An admitted message claims its pair (for
 * at most PAIR_CLAIM_MS) until its request starts; slot() given the recipient then records the start
 * (batched, every CONFIRM_FLUSH_MS), and the pair's next send is due one interval after it: two
 * requests to one recipient start at least the interval apart however long a message waited for its
 * slot. Times of these are the injectable clock's.
 *
 * Stops ({@link WhatsappPacing.stops}, stops.ts; docs/whatsapp.md "A pause stops at once"): a stopped
 * number gets no slot. Its lanes waiting for a slot (or holding one not reached yet) are answered
 * false at the instant the stop is set, and every reservation reads the channel's stored state with
 * the slots (a pause stored by another process, or by an `account_update` webhook, stops the number
 * here at this process's next reservation: at most `blockMs` of the number's time later).
 */
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { SendStops } from './stops.ts';
import {
  backOffPairUntil, confirmPairs, decideAdmissions, lockChannelState, pruneLimitCounts, prunePairs, reserveSlots, slowNumber,
} from '../../db/whatsapp-pacing.ts';

/** The answer of {@link WhatsappPacing.admit} for one message; `until`: clock ms when to try again. */
export type Admission = { admitted: true } | { admitted: false; reason: 'pair_rate' | 'messaging_limit'; until: number };

/** Options of {@link WhatsappPacing}. */
export interface WhatsappPacingOptions {
  /** WHATSAPP_PAIR_INTERVAL (ms): the least time between two sends to one recipient from one number. */
  pairIntervalMs: number;
  /** Most of the number's time one reservation covers (ms, default 100). */
  blockMs?: number;
  /** A lane later than this at its slot gives the slot up and takes another (ms, default 20). */
  toleranceMs?: number;
  /** Allowance for the conversion to local time and the way to Meta (ms, default 40). */
  marginMs?: number;
  /** This process's monotonic clock (ms, default performance.now); only for tests. */
  monotonicNow?: () => number;
  /** Told of a reservation that failed (the lanes wait and it is tried again); default: ignored. */
  onError?: (err: unknown) => void;
}

/** How long a 130429 slows the number down (ms) unless its Retry-After asks for longer. */
export const SLOW_DOWN_MS = 60_000;

/**
 * How long an admitted message claims its pair before its request starts (ms). The claim ends when
 * the request starts (slot() with the recipient): the pair's next send is then due one interval after
 * it. A message admitted but not sent within this time no longer holds its pair.
 */
export const PAIR_CLAIM_MS = 120_000;
/** How often the starts of requests are written to the pairs (ms). */
const CONFIRM_FLUSH_MS = 50;

/** How long one offset measurement is trusted (ms): the estimate is the smallest one of this period. */
const OFFSET_SAMPLE_MS = 60_000;
/** Wait after a failed reservation before the next (ms). */
const RETRY_MS = 250;

interface Lane {
  resolve(ok: boolean): void;
  signal?: AbortSignal;
  onAbort?: () => void;
  /** Local time (ms) of the slot held, when one is held. */
  slot?: number;
  timer?: NodeJS.Timeout;
}

/** One company's number in this process: free local slots, waiting lanes, the reservation in progress. */
interface NumberState {
  companyId: number;
  spacing: number;
  free: number[];
  waiting: Lane[];
  holding: number;
  /** Lanes holding a slot they have not reached yet. */
  held: Set<Lane>;
  reserving: boolean;
  /** Local time of the end of the last reserved block. */
  horizon: number;
  wakeTimer?: NodeJS.Timeout;
}

/** Throughput, pair rate and messaging limit of WhatsApp numbers, shared by all worker processes. */
export class WhatsappPacing {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly pairIntervalMs: number;
  readonly blockMs: number;
  readonly toleranceMs: number;
  readonly marginMs: number;
  readonly #mono: () => number;
  readonly #onError: (err: unknown) => void;
  readonly #numbers = new Map<number, NumberState>();
  /** Counts since this instance was made: slots reserved, granted to a request, and lost (reached too late). */
  readonly stats = { reserved: 0, granted: 0, lost: 0, reservations: 0 };
  /** The numbers and templates stopped in this process (stops.ts): a stopped number gets no slot. */
  readonly stops: SendStops;
  /** Starts of requests not written yet: `company_id recipient` → [company, recipient, next_at]. */
  #confirms = new Map<string, [number, string, number]>();
  #confirmTimer: NodeJS.Timeout | undefined;
  #confirming: Promise<void> = Promise.resolve();
  /** Recent offset measurements (local ms - database ms) with the local time they were taken. */
  #offsets: { at: number; value: number }[] = [];

  constructor(db: Db, clock: Clock, opts: WhatsappPacingOptions) {
    this.#db = db;
    this.#clock = clock;
    this.pairIntervalMs = opts.pairIntervalMs;
    this.blockMs = opts.blockMs ?? 100;
    this.toleranceMs = opts.toleranceMs ?? 20;
    this.marginMs = opts.marginMs ?? 40;
    this.#mono = opts.monotonicNow ?? (() => performance.now());
    this.#onError = opts.onError ?? (() => {});
    this.stops = new SendStops(clock, this.#mono);
    this.stops.onNumberStopped((companyId) => this.#release(companyId));
  }

  /** A number stopped: its waiting lanes and the lanes holding a slot are answered false now; its free slots are dropped. */
  #release(companyId: number): void {
    const state = this.#numbers.get(companyId);
    if (!state) return;
    state.free = [];
    const lanes = [...state.waiting.splice(0), ...state.held];
    for (const lane of lanes) this.#settle(state, lane, false);
  }

  /**
   * The spacing of slots (ms) for `ratePerSecond`: just above (1000 + tolerance + margin) / rate, so
   * that any 1-s window holds at most `ratePerSecond` requests (see the module comment).
   */
  spacingFor(ratePerSecond: number): number {
    return (1000 + this.toleranceMs + this.marginMs) / Math.max(1e-6, ratePerSecond) + 0.01;
  }

  /**
   * Pair rate and messaging limit for `items` about to be sent by the company's number, decided in one
   * transaction at the clock's now: admitted ones take their pair slot (and, when counted, their
   * budget). `limit` null: no messaging limit. Keyed by message_id.
   */
  async admit(companyId: number, limit: number | null, items: { message_id: string; recipient: string }[]): Promise<Map<string, Admission>> {
    const out = new Map<string, Admission>();
    if (items.length === 0) return out;
    const now = this.#clock.now();
    const rows = await this.#db.transaction().execute(async (trx) => {
      await lockChannelState(trx, companyId);
      return decideAdmissions(trx, companyId, now, this.pairIntervalMs, PAIR_CLAIM_MS, limit, items.map((i) => i.message_id), items.map((i) => i.recipient));
    });
    for (const r of rows) {
      out.set(r.message_id, r.reason === null ? { admitted: true } : { admitted: false, reason: r.reason, until: r.until_ms ?? now });
    }
    return out;
  }

  /**
   * Resolves true when the company's number may make its next request (all processes together: at
   * most `ratePerSecond` requests in any 1-s window); false when `signal` aborted first or the number
   * is (or becomes) stopped (`stops`). Start the request right away, after looking at `stops` again. With `recipient` (E.164, as given to admit()), the start is recorded as the
   * pair's last send (and an abort gives the pair's claim up).
   */
  slot(companyId: number, ratePerSecond: number, signal?: AbortSignal, recipient?: string): Promise<boolean> {
    if (recipient !== undefined) {
      return this.slot(companyId, ratePerSecond, signal).then((ok) => {
        const now = this.#clock.now();
        this.#confirm(companyId, recipient, ok ? now + this.pairIntervalMs : now);
        return ok;
      });
    }
    if (signal?.aborted || this.stops.numberStop(companyId)) return Promise.resolve(false);
    let st = this.#numbers.get(companyId);
    if (!st) {
      st = { companyId, spacing: 0, free: [], waiting: [], holding: 0, held: new Set(), reserving: false, horizon: -Infinity };
      this.#numbers.set(companyId, st);
    }
    const state = st;
    const spacing = this.spacingFor(ratePerSecond);
    if (spacing !== state.spacing) {
      if (state.spacing !== 0 && spacing > state.spacing) state.free = []; // a lower rate: slots of the old spacing are not used
      state.spacing = spacing;
    }
    return new Promise<boolean>((resolve) => {
      const lane: Lane = { resolve, signal };
      if (signal) {
        lane.onAbort = () => this.#abort(state, lane);
        signal.addEventListener('abort', lane.onAbort, { once: true });
      }
      state.waiting.push(lane);
      this.#pump(state);
    });
  }

  /**
   * Slows the company's number down (Meta's 130429) for `forMs` from now: half the rate, for every
   * process, until then (a longer slow-down in place is kept). Callers pass the longer of their
   * slow-down period and the answer's Retry-After.
   */
  async slowDown(companyId: number, forMs: number): Promise<void> {
    await slowNumber(this.#db, companyId, forMs);
    const st = this.#numbers.get(companyId);
    if (st) st.free = []; // slots reserved at the full rate are not used
  }

  /** Backs the pair (company's number, `recipient`) off until `until` (clock ms; Meta's 131056). */
  async backOffPair(companyId: number, recipient: string, until: number): Promise<void> {
    await this.flush(); // the start of the refused request first: the back-off comes after it
    await backOffPairUntil(this.#db, companyId, recipient, until);
  }

  #confirm(companyId: number, recipient: string, nextAt: number): void {
    this.#confirms.set(`${companyId} ${recipient}`, [companyId, recipient, nextAt]);
    this.#confirmTimer ??= setTimeout(() => { void this.flush(); }, CONFIRM_FLUSH_MS);
  }

  /** Writes the recorded starts of requests to the pairs now (after any write in progress). */
  flush(): Promise<void> {
    if (this.#confirmTimer) clearTimeout(this.#confirmTimer);
    this.#confirmTimer = undefined;
    const rows = [...this.#confirms.values()];
    this.#confirms.clear();
    if (rows.length) {
      this.#confirming = this.#confirming.then(() => confirmPairs(this.#db, rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])))
        .catch((err) => this.#onError(err));
    }
    return this.#confirming;
  }

  #settle(state: NumberState, lane: Lane, ok: boolean): void {
    if (lane.timer) clearTimeout(lane.timer);
    if (lane.signal && lane.onAbort) lane.signal.removeEventListener('abort', lane.onAbort);
    if (lane.slot !== undefined) state.holding--;
    state.held.delete(lane);
    lane.slot = undefined;
    lane.resolve(ok);
    this.#forgetIfIdle(state);
  }

  #abort(state: NumberState, lane: Lane): void {
    const i = state.waiting.indexOf(lane);
    if (i >= 0) state.waiting.splice(i, 1);
    const held = lane.slot;
    this.#settle(state, lane, false);
    if (held !== undefined) {
      this.#addFree(state, [held]); // still good for another lane
      this.#pump(state);
    }
  }

  #addFree(state: NumberState, slots: number[]): void {
    state.free.push(...slots);
    state.free.sort((a, b) => a - b);
  }

  #forgetIfIdle(state: NumberState): void {
    if (state.waiting.length === 0 && state.holding === 0 && !state.reserving && state.free.length === 0) {
      if (state.wakeTimer) clearTimeout(state.wakeTimer);
      this.#numbers.delete(state.companyId);
    }
  }

  /** Hands free slots to waiting lanes; reserves the next block when lanes are left and the horizon is near. */
  #pump(state: NumberState): void {
    const now = this.#mono();
    while (state.free.length && state.free[0] + this.toleranceMs < now) { // too late for anyone
      state.free.shift();
      this.stats.lost++;
    }
    while (state.waiting.length && state.free.length) this.#assign(state, state.waiting.shift()!, state.free.shift()!);
    if (state.waiting.length === 0 || state.reserving) {
      this.#forgetIfIdle(state);
      return;
    }
    const ahead = state.horizon - now;
    if (ahead > this.blockMs) {
      if (!state.wakeTimer) {
        state.wakeTimer = setTimeout(() => { state.wakeTimer = undefined; this.#pump(state); }, Math.ceil(ahead - this.blockMs));
      }
      return;
    }
    void this.#reserve(state);
  }

  #assign(state: NumberState, lane: Lane, slot: number): void {
    lane.slot = slot;
    state.holding++;
    state.held.add(lane);
    this.#wait(state, lane);
  }

  /** Waits for the lane's slot: goes at the slot, or gives a slot it reached too late up and queues again. */
  #wait(state: NumberState, lane: Lane): void {
    const now = this.#mono();
    const slot = lane.slot!;
    if (now < slot) {
      lane.timer = setTimeout(() => { lane.timer = undefined; this.#wait(state, lane); }, Math.max(1, Math.ceil(slot - now)));
      return;
    }
    if (now - slot <= this.toleranceMs) {
      this.stats.granted++;
      this.#settle(state, lane, true);
      return;
    }
    this.stats.lost++;
    lane.slot = undefined; // late: the slot is lost, a new one is taken
    state.holding--;
    state.held.delete(lane);
    state.waiting.unshift(lane);
    this.#pump(state);
  }

  /** The current offset estimate (local ms - database ms). */
  #offset(now: number): number {
    this.#offsets = this.#offsets.filter((o, i, all) => o.at > now - OFFSET_SAMPLE_MS || i === all.length - 1);
    return Math.min(...this.#offsets.map((o) => o.value));
  }

  async #reserve(state: NumberState): Promise<void> {
    state.reserving = true;
    const spacing = state.spacing;
    const n = Math.max(1, Math.min(state.waiting.length, Math.floor(this.blockMs / spacing)));
    try {
      const block = await reserveSlots(this.#db, state.companyId, n, spacing);
      const now = this.#mono();
      this.stats.reservations++;
      this.stats.reserved += block.n;
      this.#offsets.push({ at: now, value: now - block.dbNowMs });
      if (this.#offsets.length > 64) this.#offsets.shift();
      const offset = this.#offset(now);
      const slots = Array.from({ length: block.n }, (_, k) => block.startMs + k * block.spacingMs + offset);
      state.horizon = Math.max(state.horizon, block.startMs + block.n * block.spacingMs + offset);
      state.reserving = false;
      // The stored state came with the slots: a pause stored meanwhile stops the number (its lanes are answered now).
      this.stops.seenChannel(state.companyId, block.state, block.reason, block.changedMs);
      if (this.stops.numberStop(state.companyId)) {
        this.#release(state.companyId);
        this.#forgetIfIdle(state);
        return;
      }
      if (spacing === state.spacing) this.#addFree(state, slots);
      this.#pump(state);
    } catch (err) {
      this.#onError(err);
      setTimeout(() => { state.reserving = false; this.#pump(state); }, RETRY_MS);
    }
  }

  /**
   * Deletes pairs that no longer hold a send back and limit counts older than 24 h at the clock's now,
   * at most `limit` rows of each per statement and `steps` statements each. Returns how many.
   */
  async prune(limit = 1_000, steps = 10): Promise<number> {
    const now = this.#clock.now();
    let total = 0;
    for (const fn of [prunePairs, pruneLimitCounts]) {
      for (let i = 0; i < steps; i++) {
        const n = await fn(this.#db, now, limit);
        total += n;
        if (n < limit) break;
      }
    }
    return total;
  }
}

/**
 * The claimer of the event loop (loop.ts): claims due deliveries in batches (db/events.ts
 * `claimDeliveries`: FOR UPDATE SKIP LOCKED, a lease of `leaseMs` in database time) into the
 * per-endpoint gate (lanes.ts), at most MAX_IN_FLIGHT in hand; endpoints holding their share are
 * skipped by the claim. Claims again at once when a claim came back full or when the gate signals room
 * (`nudge`), otherwise every IDLE_MS of real time, so a busy endpoint costs one claim per many
 * deliveries, not one per delivery. Before each claim the retention sweep runs when it is due.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { claimDeliveries } from '../../db/events.ts';
import { MAX_IN_FLIGHT, type EndpointLanes } from './lanes.ts';
import type { RetentionSweep } from './retention.ts';

/** Real-time wait between claims when the last one was not full (ms). */
export const IDLE_MS = 250;
/** A claim is made only when this many deliveries fit in hand. */
const MIN_CLAIM = 16;

export interface ClaimerOptions {
  db: Db;
  clock: Clock;
  log: Logger;
  lanes: EndpointLanes;
  retention: RetentionSweep;
  /** Lease of a claimed delivery (ms, database time). */
  leaseMs: number;
  /** Ends the claims (the service stops). */
  signal: AbortSignal;
}

/** The claimer (see the module comment). */
export class Claimer {
  readonly #opts: ClaimerOptions;
  #wake: (() => void) | undefined;

  constructor(opts: ClaimerOptions) {
    this.#opts = opts;
  }

  /** Ends the current wait between claims at once. */
  nudge(): void {
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  }

  /** Claims until the signal aborts; resolves after the last claim. */
  async run(): Promise<void> {
    const { log, signal, lanes } = this.#opts;
    while (!signal.aborted) {
      let full = false;
      try {
        full = await this.#claimOnce();
      } catch (err) {
        if (!signal.aborted) log.warn({ err: (err as Error).message }, 'event claim failed');
      }
      if (!full && !signal.aborted) await this.#sleep(IDLE_MS);
      else if (lanes.held >= MAX_IN_FLIGHT - MIN_CLAIM) await this.#sleep(IDLE_MS);
    }
  }

  /** One turn: the retention sweep when due, then a claim when there is room; true when the claim came back full. */
  async #claimOnce(): Promise<boolean> {
    const { db, clock, lanes, retention, leaseMs, signal } = this.#opts;
    await retention.runIfDue(signal);
    const room = MAX_IN_FLIGHT - lanes.held;
    if (room < MIN_CLAIM) return false;
    const limit = Math.min(room, lanes.laneCap * 8);
    const claimed = await claimDeliveries(db, new Date(clock.now()), limit, leaseMs, lanes.saturated());
    lanes.add(claimed);
    return claimed.length === limit;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(() => { this.#wake = undefined; resolve(); }, ms);
      this.#wake = () => { clearTimeout(t); resolve(); };
    });
  }
}

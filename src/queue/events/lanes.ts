/**
 * The per-endpoint concurrency gate of the event loop (loop.ts): claimed deliveries wait in their
 * endpoint's lane, at most `perEndpoint` (EVENT_CONCURRENCY) of a lane are attempted at once, so a slow
 * endpoint holds only its own lane and never the others. Each lane is a `p-limit` limiter of
 * `perEndpoint`; the gate counts what this process holds (claimed, queued or in flight: at most
 * MAX_IN_FLIGHT) and which deliveries still need their leases renewed (claimed and not settled, i.e.
 * their outcome not yet handed to the writer).
 */
import pLimit, { type LimitFunction } from 'p-limit';
import type { ClaimedDelivery } from '../../db/events.ts';

/** Deliveries in hand per process (claimed, queued or in flight). */
export const MAX_IN_FLIGHT = 512;
/** Deliveries one endpoint may hold in this process, as a multiple of its concurrency. */
export const QUEUE_FACTOR = 8;

/** One endpoint's lane: its limiter, its deliveries not started yet, and all it holds (queued or in flight). */
interface Lane { limit: LimitFunction; queued: Set<ClaimedDelivery>; held: number }

export interface EndpointLanesOptions {
  /** Requests in flight per endpoint at most (EVENT_CONCURRENCY). */
  perEndpoint: number;
  /** Makes one attempt of `d` and hands its outcome on (never rejects). */
  attempt: (d: ClaimedDelivery) => Promise<void>;
  /** Called when a lane or the process has room for a good claim again (wakes the claimer). */
  onRoom: () => void;
}

/** The gate (see the module comment). */
export class EndpointLanes {
  readonly #lanes = new Map<number, Lane>();
  /** Claimed deliveries whose outcome is not settled yet (their leases are renewed). */
  readonly #holding = new Set<ClaimedDelivery>();
  readonly #opts: EndpointLanesOptions;
  #held = 0;
  #closed = false;

  constructor(opts: EndpointLanesOptions) {
    this.#opts = opts;
  }

  /** Deliveries held by this process (queued or in flight). */
  get held(): number {
    return this.#held;
  }

  /** Most deliveries one endpoint may hold: EVENT_CONCURRENCY × QUEUE_FACTOR. */
  get laneCap(): number {
    return this.#opts.perEndpoint * QUEUE_FACTOR;
  }

  /** True while any attempt is in flight. */
  get busy(): boolean {
    for (const lane of this.#lanes.values()) if (lane.limit.activeCount > 0) return true;
    return false;
  }

  /** The endpoints holding their whole share: the next claim skips them. */
  saturated(): number[] {
    return [...this.#lanes].filter(([, l]) => l.held >= this.laneCap).map(([id]) => id);
  }

  /** The deliveries whose leases must still be renewed (claimed, outcome not settled). */
  holding(): ClaimedDelivery[] {
    return [...this.#holding];
  }

  /** Queues claimed deliveries in their endpoints' lanes; each lane starts what its limiter allows (nothing once closed). */
  add(claimed: ClaimedDelivery[]): void {
    for (const d of claimed) {
      let lane = this.#lanes.get(d.endpoint_id);
      if (!lane) this.#lanes.set(d.endpoint_id, lane = { limit: pLimit(this.#opts.perEndpoint), queued: new Set(), held: 0 });
      lane.queued.add(d);
      this.#holding.add(d);
      lane.held++;
      this.#held++;
      if (!this.#closed) void lane.limit(() => this.#run(d.endpoint_id, lane!, d));
    }
  }

  /** `d`'s outcome is with the writer: its lease is no longer renewed. */
  settle(d: ClaimedDelivery): void {
    this.#holding.delete(d);
  }

  /** Forgets the queued (not started) deliveries of disabled endpoints (their rows are failed). */
  dropQueued(endpointIds: number[]): void {
    for (const id of endpointIds) {
      const lane = this.#lanes.get(id);
      if (!lane) continue;
      lane.limit.clearQueue();
      for (const d of lane.queued) this.#holding.delete(d);
      lane.held -= lane.queued.size;
      this.#held -= lane.queued.size;
      lane.queued.clear();
      if (lane.held === 0) this.#lanes.delete(id);
    }
  }

  /** Starts no more attempts; queued deliveries stay with their leases (claimed again once they run out). */
  close(): void {
    this.#closed = true;
    for (const lane of this.#lanes.values()) lane.limit.clearQueue();
  }

  /** One attempt of `d` in its lane, then the lane's and the process's counts, and a nudge when there is room. */
  async #run(endpointId: number, lane: Lane, d: ClaimedDelivery): Promise<void> {
    // Closed, or dropped, between the limiter's turn and this start: nothing is attempted (a closed
    // gate keeps it queued with its lease; a dropped one was already uncounted).
    if (this.#closed || !lane.queued.delete(d)) return;
    try {
      await this.#opts.attempt(d);
    } finally {
      lane.held--;
      this.#held--;
      if (lane.held === 0 && this.#lanes.get(endpointId) === lane) this.#lanes.delete(endpointId);
      // Wake the claimer only when this endpoint has room for a good claim again.
      if (lane.held === this.laneCap - 1 || lane.held === 0 || this.#held === MAX_IN_FLIGHT / 2) this.#opts.onRoom();
    }
  }
}

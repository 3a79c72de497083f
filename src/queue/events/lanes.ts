/**
 * The per-endpoint concurrency gate of the event loop (loop.ts): claimed deliveries wait in their
 * endpoint's lane, at most `perEndpoint` (EVENT_CONCURRENCY) of a lane are attempted at once, so a slow
 * endpoint holds only its own lane and never the others. The gate also counts what this process holds
 * (claimed, queued or in flight: at most MAX_IN_FLIGHT) and which deliveries still need their leases
 * renewed (claimed and not settled, i.e. their outcome not yet handed to the writer).
 */
import type { ClaimedDelivery } from '../../db/events.ts';

/** Deliveries in hand per process (claimed, queued or in flight). */
export const MAX_IN_FLIGHT = 512;
/** Deliveries one endpoint may hold in this process, as a multiple of its concurrency. */
export const QUEUE_FACTOR = 8;

/** One endpoint's lane: deliveries waiting, requests in flight, and both together. */
interface Lane { queue: ClaimedDelivery[]; active: number; held: number }

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
    for (const lane of this.#lanes.values()) if (lane.active > 0) return true;
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

  /** Queues claimed deliveries in their endpoints' lanes and starts what the gate allows. */
  add(claimed: ClaimedDelivery[]): void {
    for (const d of claimed) {
      let lane = this.#lanes.get(d.endpoint_id);
      if (!lane) this.#lanes.set(d.endpoint_id, lane = { queue: [], active: 0, held: 0 });
      lane.queue.push(d);
      this.#holding.add(d);
      lane.held++;
      this.#held++;
    }
    for (const [id, lane] of this.#lanes) this.#pump(id, lane);
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
      for (const d of lane.queue) this.#holding.delete(d);
      lane.held -= lane.queue.length;
      this.#held -= lane.queue.length;
      lane.queue = [];
      if (lane.held === 0) this.#lanes.delete(id);
    }
  }

  /** Starts no more attempts; queued deliveries stay with their leases (claimed again once they run out). */
  close(): void {
    this.#closed = true;
  }

  /** Starts queued deliveries of `lane` while it has fewer than `perEndpoint` in flight. */
  #pump(endpointId: number, lane: Lane): void {
    const { perEndpoint, attempt, onRoom } = this.#opts;
    while (lane.active < perEndpoint && lane.queue.length && !this.#closed) {
      const d = lane.queue.shift()!;
      lane.active++;
      void attempt(d).finally(() => {
        lane.active--;
        lane.held--;
        this.#held--;
        if (lane.held === 0) this.#lanes.delete(endpointId);
        else this.#pump(endpointId, lane);
        // Wake the claimer only when this endpoint has room for a good claim again.
        if (lane.held === this.laneCap - 1 || lane.held === 0 || this.#held === MAX_IN_FLIGHT / 2) onRoom();
      });
    }
  }
}

/**
 * Requests before background work on the embedded database (docs/architecture.md "Requests before
 * background work").
 *
 * PGlite has one connection: every statement and transaction waits for the one before it, in order of
 * arrival. With a big send the workers keep a queue of statements in front of it (fan-out steps,
 * delivery claims and results, job fetches), and a request that arrives waits for all of them. The
 * gate sits in front of PGlite: work started by the workers (run inside {@link DbGate.runInBackground})
 * goes to the database one operation (a statement, or a whole transaction) at a time, and only when no
 * request's operation is in progress or waiting, and none ended in the last `graceMs` (a request's
 * next statement usually follows within that); a background operation that has waited `maxWaitMs`
 * goes anyway, so the workers keep moving under a steady stream of requests. A request's operation
 * never waits for the gate, only for the one background operation in progress (so background
 * transactions are kept short: one bounded step each).
 *
 * Background is told apart by an AsyncLocalStorage context: everything the workers start inside
 * `runInBackground` (pg-boss's fetch loops, job handlers, timers) carries it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';

/** Tuning of the gate (ms). */
export interface GateOptions { graceMs: number; maxWaitMs: number }

export const GATE_DEFAULTS: GateOptions = { graceMs: 2, maxWaitMs: 100 };

/** See the module comment. One per embedded database (db/database.ts openPglite). */
export class DbGate {
  readonly #background = new AsyncLocalStorage<boolean>();
  readonly #opts: GateOptions;
  #foreground = 0;
  #lastForegroundEnd = 0;
  #busy = false;
  readonly #waiting: { since: number; go: () => void }[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: Partial<GateOptions> = {}) {
    this.#opts = { ...GATE_DEFAULTS, ...opts };
  }

  /** Runs `fn` (and everything it starts) as background work. */
  runInBackground<T>(fn: () => T): T {
    return this.#background.run(true, fn);
  }

  /** Whether the current async context is background work. */
  get background(): boolean {
    return this.#background.getStore() === true;
  }

  /**
   * Waits for the caller's turn (at once for a request) and returns the function that ends it; call
   * it exactly once when the operation (statement or transaction) is over.
   */
  async enter(): Promise<() => void> {
    if (!this.background) {
      this.#foreground++;
      return once(() => {
        this.#foreground--;
        this.#lastForegroundEnd = performance.now();
        this.#pump();
      });
    }
    await new Promise<void>((go) => {
      this.#waiting.push({ since: performance.now(), go });
      this.#pump();
    });
    return once(() => {
      this.#busy = false;
      this.#pump();
    });
  }

  /** Runs `fn` in the caller's turn. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const leave = await this.enter();
    try {
      return await fn();
    } finally {
      leave();
    }
  }

  /** Lets the next background operation in when its time has come, else looks again when it will. */
  #pump(): void {
    if (this.#busy || this.#waiting.length === 0) return;
    const now = performance.now();
    const head = this.#waiting[0];
    const waited = now - head.since;
    const idle = this.#foreground === 0 ? now - this.#lastForegroundEnd : -1;
    if (idle >= this.#opts.graceMs || waited >= this.#opts.maxWaitMs) {
      this.#waiting.shift();
      this.#busy = true;
      head.go();
      return;
    }
    const dueIn = Math.min(idle >= 0 ? this.#opts.graceMs - idle : Infinity, this.#opts.maxWaitMs - waited);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#pump(), Math.max(1, Math.ceil(dueIn)));
    this.#timer.unref();
  }
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

/**
 * Requests before background work (docs/architecture.md "Requests before background work").
 *
 * The workers share the process, and on the embedded database the one database connection, with the
 * HTTP requests. PGlite runs every statement on the main thread, one after the other in order of
 * arrival: with a big send the workers keep a queue of statements in front of it (fan-out steps,
 * delivery claims and results, job fetches), and a request that arrives waits for all of them.
 *
 * The gate lets the workers' database operations in one at a time (a statement, or a whole
 * transaction: db/driver-tricks.ts and db/pglite-dialect.ts), and only while no request is in flight
 * (from its arrival to its last byte, {@link ForegroundGate.requestStarted}) nor one of its database
 * operations, and none ended in the last `graceMs`; while requests keep coming, background operations
 * get slices of `sliceMs`, each beginning `maxWaitMs` after the last background operation ended, so
 * the workers keep moving (at about half of the time) under a steady stream of requests, and a
 * request's statement waits for at most the one background operation in progress. A request's
 * own operations never wait at the gate, only for the one background operation in progress (so
 * background transactions are kept short: one bounded step each). Handlers also call
 * {@link ForegroundGate.idle} before a step's CPU work (rendering a step of messages), which waits
 * the same way: on PostgreSQL that is all the gate does (its statements run on the database server
 * and do not block the process).
 *
 * Background is told apart by an AsyncLocalStorage context: everything the workers start inside
 * {@link ForegroundGate.runInBackground} (pg-boss's fetch loops and timers, job handlers, the sweep,
 * the events-out loop) carries it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';

/**
 * Tuning of the gate (ms): `graceMs` of quiet after a request before background work goes on freely;
 * while requests keep coming, background work gets slices of `sliceMs`, each `maxWaitMs` after the
 * last one ended.
 */
export interface GateOptions { graceMs: number; maxWaitMs: number; sliceMs: number }

export const GATE_DEFAULTS: GateOptions = { graceMs: 2, maxWaitMs: 50, sliceMs: 50 };

/** See the module comment. One per database (db/database.ts). */
export class ForegroundGate {
  readonly #background = new AsyncLocalStorage<boolean>();
  readonly #opts: GateOptions;
  /** Requests in flight, and request database operations in progress. */
  #foreground = 0;
  #lastForegroundEnd = 0;
  #busy = false;
  #lastBackgroundEnd = 0;
  /** When the current slice of background work began (while requests are in flight). */
  #sliceStart = -Infinity;
  #scheduled = false;
  readonly #waiting: { go: () => void; holds: boolean }[] = [];
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

  /** A request arrived; call the returned function once when its answer is sent (or it is abandoned). */
  requestStarted(): () => void {
    this.#foreground++;
    return this.#foregroundEnd();
  }

  /**
   * Waits for the caller's turn to use the database (at once outside background work) and returns
   * the function that ends it; call it exactly once when the operation (statement or transaction)
   * is over.
   */
  async enter(): Promise<() => void> {
    if (!this.background) {
      this.#foreground++;
      return this.#foregroundEnd();
    }
    await this.#turn(true);
    return once(() => {
      this.#busy = false;
      this.#lastBackgroundEnd = performance.now();
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

  /** Background work: resolves when it may go on (as {@link enter}, without holding the turn); at once otherwise. */
  async idle(): Promise<void> {
    if (this.background) await this.#turn(false);
  }

  #foregroundEnd(): () => void {
    return once(() => {
      this.#foreground--;
      this.#lastForegroundEnd = performance.now();
      this.#pump();
    });
  }

  #turn(holds: boolean): Promise<void> {
    return new Promise<void>((go) => {
      this.#waiting.push({ go, holds });
      this.#pump();
    });
  }

  /** Whether the head background waiter may go now (and, while requests are in flight, in which slice). */
  #due(now: number): boolean {
    const idle = this.#foreground === 0 ? now - this.#lastForegroundEnd : -1;
    if (idle >= this.#opts.graceMs) return true;
    if (now - this.#sliceStart < this.#opts.sliceMs) return true;
    if (now - this.#lastBackgroundEnd >= this.#opts.maxWaitMs) {
      this.#sliceStart = now;
      return true;
    }
    return false;
  }

  /**
   * Lets the next background waiter in when its time has come (see the module comment), else looks
   * again when it will. The waiter goes on in a later turn of the event loop (setImmediate), so that
   * requests that arrived meanwhile are read first: PGlite's statements run on the main thread, and
   * background operations let in one after another in the same turn would keep it from reading
   * sockets at all.
   */
  #pump(): void {
    if (this.#scheduled || this.#busy || this.#waiting.length === 0) return;
    const now = performance.now();
    if (this.#due(now)) {
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        if (this.#busy || this.#waiting.length === 0) return;
        const at = performance.now();
        if (!this.#due(at)) return this.#pump();
        const head = this.#waiting.shift()!;
        if (head.holds) this.#busy = true;
        else this.#lastBackgroundEnd = at;
        head.go();
        this.#pump();
      });
      return;
    }
    const idle = this.#foreground === 0 ? now - this.#lastForegroundEnd : -1;
    const dueIn = Math.min(idle >= 0 ? this.#opts.graceMs - idle : Infinity, this.#opts.maxWaitMs - (now - this.#lastBackgroundEnd));
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

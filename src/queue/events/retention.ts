/**
 * The retention sweep of the event loop (loop.ts): events created and attempts made more than
 * EVENT_RETENTION ago (injectable clock) are deleted in batches of RETENTION_BATCH rows per statement,
 * when the loop starts and then whenever RETENTION_EVERY_MS passed by real time or by the clock (so a
 * test that moves the clock sees the sweep without waiting).
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { deleteOldAttempts, deleteOldEvents } from '../../db/events.ts';

/** Retention runs this often (real or clock time, ms) and deletes this many rows per statement. */
export const RETENTION_EVERY_MS = 60_000;
export const RETENTION_BATCH = 5_000;

/** The sweep (see the module comment). */
export class RetentionSweep {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #retentionMs: number;
  #lastReal = 0;
  #lastClock = 0;

  /** `retentionMs`: EVENT_RETENTION (ms). */
  constructor(db: Db, clock: Clock, log: Logger, retentionMs: number) {
    this.#db = db;
    this.#clock = clock;
    this.#log = log;
    this.#retentionMs = retentionMs;
  }

  /** Deletes what has expired when a sweep is due; stops between statements once `signal` aborts. */
  async runIfDue(signal: AbortSignal): Promise<void> {
    const now = this.#clock.now();
    if (Date.now() - this.#lastReal < RETENTION_EVERY_MS && Math.abs(now - this.#lastClock) < RETENTION_EVERY_MS) return;
    this.#lastReal = Date.now();
    this.#lastClock = now;
    const before = new Date(now - this.#retentionMs);
    let events = 0;
    let attempts = 0;
    for (let n = RETENTION_BATCH; n === RETENTION_BATCH && !signal.aborted;) events += n = await deleteOldEvents(this.#db, before, RETENTION_BATCH);
    for (let n = RETENTION_BATCH; n === RETENTION_BATCH && !signal.aborted;) attempts += n = await deleteOldAttempts(this.#db, before, RETENTION_BATCH);
    if (events || attempts) this.#log.info({ events, attempts, before: before.toISOString() }, 'expired events and attempts deleted');
  }
}

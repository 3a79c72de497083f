/**
 * Message retention (docs/operations.md "Retention"): the workers' scheduled job that keeps storage
 * bounded. A round, with `cutoff` = the injectable clock's now - MESSAGE_RETENTION:
 *
 * 1. deletes, RETENTION_STEP rows per statement, the messages of finished batches accepted and
 *    finished before the cutoff, then (RETENTION_BATCH_STEP per statement) those batches, then the
 *    inbound messages stored before the cutoff;
 * 2. deletes the Overview's message counts older than the cutoff, but never those of the Overview's
 *    period (they are rollups kept by triggers and do not change when messages are deleted), and the
 *    idempotency keys past their 24-hour replay window;
 * 3. on PGlite, which runs no autovacuum, VACUUMs each table it deleted from, so that new rows reuse
 *    the space (PostgreSQL's autovacuum does that by itself).
 *
 * Every statement is short and on its own (no transaction spans two), so sends interleave with a
 * round, on PGlite's one connection too; a round stops between statements once the workers drain.
 * The first round starts FIRST_ROUND_AFTER_MS after the workers start, then one whenever
 * RETENTION_EVERY_MS passed by real time or by the clock (so a test that moves the clock sees a round
 * without waiting); `run()` runs one now. Several worker processes may run rounds at once: the
 * deletes skip the rows another round holds.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Database } from '../db/database.ts';
import { deleteOldBatches, deleteOldInbound, deleteOldMessageCounts, deleteOldMessages, vacuumTable, type RETAINED_TABLES } from '../db/retention.ts';
import { purgeExpiredKeys } from '../domain/idempotency.ts';
import { OVERVIEW_DAYS } from '../console/queries/overview.ts';

/** A round runs this often (real or clock time, ms), the first one this long after the start. */
export const RETENTION_EVERY_MS = 10 * 60_000;
export const FIRST_ROUND_AFTER_MS = 30_000;
/** Rows per delete statement (batches: each also makes its cascade probe `messages` once). */
export const RETENTION_STEP = 2_000;
export const RETENTION_BATCH_STEP = 500;
/** Message counts of this many days before now are always kept (the Overview's period and a day). */
const COUNTS_KEPT_DAYS = OVERVIEW_DAYS + 1;

/** What one round did. */
export interface RetentionRound {
  cutoff: string;
  messages: number;
  batches: number;
  inbound: number;
  message_counts: number;
  idempotency_keys: number;
  /** The tables VACUUMed after their deletes (PGlite only). */
  vacuumed: string[];
}

/** The scheduled job (see the module comment). */
export class MessageRetention {
  readonly #database: Database;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #retentionMs: number;
  #lastReal: number;
  #lastClock: number;
  #running: Promise<RetentionRound> | undefined;

  /** `retentionMs`: MESSAGE_RETENTION (ms). */
  constructor(database: Database, clock: Clock, log: Logger, retentionMs: number) {
    this.#database = database;
    this.#clock = clock;
    this.#log = log;
    this.#retentionMs = retentionMs;
    this.#lastReal = Date.now() - RETENTION_EVERY_MS + FIRST_ROUND_AFTER_MS;
    this.#lastClock = clock.now();
  }

  /** Runs a round when one is due and none is running (see the module comment); undefined otherwise. */
  async runIfDue(signal: AbortSignal): Promise<RetentionRound | undefined> {
    if (this.#running) return undefined;
    const now = this.#clock.now();
    if (Date.now() - this.#lastReal < RETENTION_EVERY_MS && Math.abs(now - this.#lastClock) < RETENTION_EVERY_MS) return undefined;
    return this.run(signal);
  }

  /** Resolves once no round is running (for a stop: call it after the signal aborted). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running.catch(() => undefined);
  }

  /** Runs a round now, after the one in progress if any; resolves to what it did. */
  async run(signal: AbortSignal): Promise<RetentionRound> {
    while (this.#running) await this.#running.catch(() => undefined);
    this.#lastReal = Date.now();
    this.#lastClock = this.#clock.now();
    this.#running = this.#round(this.#lastClock, signal);
    try {
      return await this.#running;
    } finally {
      this.#running = undefined;
    }
  }

  async #round(now: number, signal: AbortSignal): Promise<RetentionRound> {
    const db = this.#database.db;
    const cutoff = new Date(now - this.#retentionMs);
    const round: RetentionRound = { cutoff: cutoff.toISOString(), messages: 0, batches: 0, inbound: 0, message_counts: 0, idempotency_keys: 0, vacuumed: [] };
    /** Runs `step` until it deletes fewer than `limit` rows or the workers drain; the sum. */
    const drain = async (step: () => Promise<number>, limit: number) => {
      let sum = 0;
      for (let n = limit; n === limit && !signal.aborted;) sum += n = await step();
      return sum;
    };
    round.messages = await drain(() => deleteOldMessages(db, cutoff, RETENTION_STEP), RETENTION_STEP);
    round.batches = await drain(() => deleteOldBatches(db, cutoff, RETENTION_BATCH_STEP), RETENTION_BATCH_STEP);
    round.inbound = await drain(() => deleteOldInbound(db, cutoff, RETENTION_STEP), RETENTION_STEP);
    const countsBefore = new Date(Math.min(cutoff.getTime(), now - COUNTS_KEPT_DAYS * 86_400_000));
    round.message_counts = await drain(() => deleteOldMessageCounts(db, countsBefore, RETENTION_STEP), RETENTION_STEP);
    round.idempotency_keys = await drain(() => purgeExpiredKeys(db, now, RETENTION_STEP), RETENTION_STEP);
    if (this.#database.kind === 'pglite') {
      const deleted: [typeof RETAINED_TABLES[number], number][] = [
        ['messages', round.messages], ['batches', round.batches], ['inbound_messages', round.inbound],
        ['message_counts', round.message_counts], ['idempotency_keys', round.idempotency_keys]];
      for (const [table, n] of deleted) {
        if (n === 0 || signal.aborted) continue;
        await vacuumTable(db, table);
        round.vacuumed.push(table);
      }
    }
    const { cutoff: _, vacuumed: __, ...deleted } = round;
    if (Object.values(deleted).some((n) => n > 0)) this.#log.info(round, 'retention: old messages, batches and rows deleted');
    return round;
  }
}

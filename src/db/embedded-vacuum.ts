/**
 * Vacuum for the embedded database (docs/operations.md "The embedded database's vacuum").
 *
 * PGlite runs PostgreSQL in single-user mode: there is no autovacuum process. Every claim, result and
 * receipt of a message, every fan-out step's counter and every queue job leaves dead row versions
 * behind, and nothing reclaims them, so the delivery claims' index scans slow down as a big send goes
 * on (a 40,000-message send: 964 messages/s without, 3,351 with a VACUUM every 3 s; a 100,000-message
 * send fell to about 400 messages/s). While the workers run on PGlite, `startEmbeddedVacuum` runs one
 * `VACUUM` of the tables a send rewrites every `intervalMs` (PGLITE_VACUUM_INTERVAL, default 5 s; 0
 * turns it off), as background work: through the foreground gate, so requests go first, and never two
 * at once. A VACUUM of a table with nothing to clean reads only its visibility map. Errors are logged,
 * never fatal (the next round tries again). PostgreSQL has its own autovacuum: nothing runs there.
 */
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from './database.ts';

/** The tables a send rewrites: messages and their batches, contacts (fan-out upserts), pg-boss's jobs. */
export const VACUUMED_TABLES = ['messages', 'batches', 'contacts', 'pgboss.job'] as const;

/** What `startEmbeddedVacuum` returns: `stop()` ends the timer and waits for a round in progress. */
export interface EmbeddedVacuum {
  /** Runs one round now (after one in progress); resolves to its duration in ms. */
  runNow(): Promise<number>;
  stop(): Promise<void>;
}

/** One VACUUM of VACUUMED_TABLES (one statement; it cannot run inside a transaction). */
export async function vacuumTables(database: Database): Promise<void> {
  await sql.raw(`VACUUM ${VACUUMED_TABLES.join(', ')}`).execute(database.db);
}

/**
 * Starts the periodic VACUUM on the embedded `database` (see the module comment); on PostgreSQL, or
 * with `intervalMs` 0, a timer-less stand-in whose `runNow` does nothing.
 */
export function startEmbeddedVacuum(database: Database, intervalMs: number, log: Logger): EmbeddedVacuum {
  if (database.kind !== 'pglite' || intervalMs <= 0) return { runNow: async () => 0, stop: async () => {} };
  let running: Promise<number> | undefined;
  const round = (): Promise<number> => {
    running ??= database.runInBackground(async () => {
      const t = performance.now();
      try {
        await vacuumTables(database);
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'embedded vacuum failed; tried again later');
      }
      return performance.now() - t;
    }).then((ms) => {
      running = undefined;
      log.debug({ ms: Math.round(ms) }, 'embedded vacuum');
      return ms;
    });
    return running;
  };
  const timer = setInterval(() => { if (!running) void round(); }, intervalMs);
  timer.unref();
  return {
    async runNow() {
      if (running) await running;
      return round();
    },
    async stop() {
      clearInterval(timer);
      if (running) await running;
    },
  };
}

/**
 * The result flushes of one worker process's delivery runs, merged into one statement
 * (docs/architecture.md "Background processing").
 *
 * Every delivery run commits its results every FLUSH_MS (and sooner when it has many, or must):
 * with a statement per run and flush, a process with 16 runs writes 80 result statements a second,
 * and each statement costs PostgreSQL about half a millisecond before its first row (the
 * transaction, the statement triggers), and the Node process a round trip. Here the runs' timed
 * flushes fire on one shared tick, and the commits that reach the writer in the same event-loop turn
 * go out as one `commitResults` (db/messages.ts): one UPDATE of every run's results that
 * also reads the delivery state of every batch whose run asked (pause, cancel).
 *
 * Nothing about a result changes: each row is written as its run would write it alone (only rows still
 * `pending`), and each run learns its own rows' written statuses and its batch's state. A failed
 * statement fails the commit of every run in it, as one run's failed statement fails that run (its
 * messages keep their leases and are sent again after they run out). Results with effects (opt-outs,
 * a channel pause) do not come here: they commit with their effects in a transaction of their run.
 */
import type { Db } from '../../db/database.ts';
import { commitResults, type DeliveryState, type MessageResult, type ResultsAndStates } from '../../db/messages.ts';
import type { MessageStatus } from '../../db/schema.ts';

/** What one run's commit wrote and read. */
export interface RunCommit {
  /** The statuses written for the run's rows, in no particular order (none for rows no longer pending). */
  written: MessageStatus[];
  /** The batch's delivery state when `look` was asked for, else `running`. */
  state: DeliveryState;
}

interface Waiting {
  rows: MessageResult[];
  batchId: string;
  look: boolean;
  resolve: (c: RunCommit) => void;
  reject: (err: unknown) => void;
}

/**
 * What a commit `c` means to one run: the statuses written for its `rows`, and its batch's state when
 * it asked (`look`), else `running`.
 */
export function runCommitOf(c: ResultsAndStates, rows: readonly MessageResult[], batchId: string, look: boolean): RunCommit {
  const written: MessageStatus[] = [];
  for (const r of rows) {
    const s = c.written.get(r.message_id);
    if (s !== undefined) written.push(s);
  }
  return { written, state: look ? c.states.get(batchId) ?? 'gone' : 'running' };
}

/** One per worker process (queue/workers.ts); a handler context without one gives each run its own. */
export class ResultWriter {
  readonly #db: Db;
  readonly #flushMs: number;
  readonly #ticks = new Set<() => void>();
  #timer: NodeJS.Timeout | null = null;
  #waiting: Waiting[] = [];
  #scheduled = false;

  /** `flushMs`: the tick of the runs' timed flushes (ms). */
  constructor(db: Db, flushMs: number) {
    this.#db = db;
    this.#flushMs = flushMs;
  }

  /**
   * Calls `flush` every flushMs, on the same tick as every other run's flush, until the returned
   * function is called (at the end of the run).
   */
  onTick(flush: () => void): () => void {
    this.#ticks.add(flush);
    this.#timer ??= setInterval(() => { for (const f of this.#ticks) f(); }, this.#flushMs);
    return () => {
      this.#ticks.delete(flush);
      if (this.#ticks.size === 0 && this.#timer) {
        clearInterval(this.#timer);
        this.#timer = null;
      }
    };
  }

  /**
   * Commits `rows` (results of a run of batch `batchId`) with the other commits of this event-loop
   * turn; with `look`, also reads the batch's delivery state. Rejects with the statement's error.
   */
  commit(rows: MessageResult[], batchId: string, look: boolean): Promise<RunCommit> {
    return new Promise<RunCommit>((resolve, reject) => {
      this.#waiting.push({ rows, batchId, look, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => void this.#write());
      }
    });
  }

  async #write(): Promise<void> {
    const group = this.#waiting;
    this.#waiting = [];
    this.#scheduled = false;
    const looks = [...new Set(group.filter((w) => w.look).map((w) => w.batchId))];
    try {
      const c = await commitResults(this.#db, group.flatMap((w) => w.rows), looks);
      for (const w of group) w.resolve(runCommitOf(c, w.rows, w.batchId, w.look));
    } catch (err) {
      for (const w of group) w.reject(err);
    }
  }
}

/**
 * Group commit of accepted sends (decisions.md §3 "accepted"; issue 4 item 3).
 *
 * Every accepted batch must be committed (its row and its processing job) before the answer. A commit
 * waits for the WAL to reach the disk, about 1-2 ms here, and a transaction costs four round trips, so
 * one transaction per request caps a database at a few hundred accepted sends per second. The writer
 * gathers the batches that requests hand it while earlier transactions are in flight and writes each
 * group in ONE transaction: one multi-row INSERT of batches, one multi-row INSERT of jobs, then each
 * request's own `withinTransaction` step (its idempotency record), then COMMIT. Every request of the
 * group is answered only after that commit. If a group fails, its requests are retried one by one, so
 * one bad request cannot fail the others.
 */
import type { Transaction } from 'kysely';
import type { Db } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import { StatementGroups } from '../db/statement-groups.ts';
import { enqueueMany, type Boss } from '../queue/boss.ts';

/** One batch row as `batches` takes it (JSON columns already serialised). */
export interface BatchRow {
  batch_id: string;
  company_id: number;
  kind: 'automation' | 'campaign';
  source_id: number;
  total: number;
  ignored_contacts: number;
  items: string;
  overrides: string;
  template: string;
}

interface Pending {
  row: BatchRow;
  within?: (trx: Transaction<DB>, batchId: string) => Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class AcceptWriter {
  readonly #db: Db;
  readonly #boss: Boss;
  readonly #groups: StatementGroups<Pending>;

  /** `maxGroup`: batches per transaction; `maxInFlight`: transactions open at once. */
  constructor(db: Db, boss: Boss, opts: { maxGroup?: number; maxInFlight?: number } = {}) {
    this.#db = db;
    this.#boss = boss;
    this.#groups = new StatementGroups((group) => this.#flush(group), { maxGroup: opts.maxGroup ?? 64, maxInFlight: opts.maxInFlight ?? 4 });
  }

  /** Resolves once the batch row and its `batch-process` job are committed. */
  write(row: BatchRow, within?: Pending['within']): Promise<void> {
    return new Promise((resolve, reject) => this.#groups.add({ row, within, resolve, reject }));
  }

  async #flush(group: Pending[]): Promise<void> {
    try {
      await this.#commit(group);
      for (const p of group) p.resolve();
    } catch (err) {
      if (group.length === 1) {
        group[0].reject(err);
        return;
      }
      // Retry one by one: the failure may belong to a single request (its idempotency step, say).
      for (const p of group) {
        try {
          await this.#commit([p]);
          p.resolve();
        } catch (e) {
          p.reject(e);
        }
      }
    }
  }

  async #commit(group: Pending[]): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx.insertInto('batches').values(group.map((p) => p.row)).execute();
      await enqueueMany(this.#boss, trx, 'batch-process', group.map((p) => ({ data: { batch_id: p.row.batch_id } })));
      for (const p of group) await p.within?.(trx, p.row.batch_id);
    });
  }
}

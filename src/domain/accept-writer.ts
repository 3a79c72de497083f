/**
 * Group commit of accepted sends (decisions.md §3 "accepted"; issue 4 item 3).
 *
 * Every accepted batch must be committed (its row and its processing job) before the answer. A commit
 * waits for the WAL to reach the disk, about 1-2 ms here, and a transaction costs four round trips, so
 * one transaction per request caps a database at a few hundred accepted sends per second. The writer
 * gathers the batches that requests hand it while earlier transactions are in flight and writes each
 * group in ONE transaction: one multi-row INSERT of batches, one multi-row INSERT of jobs, then each
 * request's own `withinTransaction` step (its idempotency record), then COMMIT. Every request of the
 * group is answered only after that commit. On PostgreSQL a group with no such step is sent pipelined,
 * all four statements in one round trip (see #commitPipelined). If a group fails, its requests are
 * retried one by one, so one bad request cannot fail the others.
 */
import { CompiledQuery, type Transaction } from 'kysely';
import type pg from 'pg';
import { isEmbedded, pipelinePool, type Db } from '../db/database.ts';
import { PREPARED } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';
import { StatementGroups } from '../db/statement-groups.ts';
import { enqueueMany, insertJobs, type Boss } from '../queue/boss.ts';

/**
 * The group's batch rows as the parameters of {@link INSERT_BATCHES}: one array per column, and the
 * items texts (5-10 kB each) concatenated into ONE bytea with each row's byte offset and length. A
 * bytea parameter travels in binary and is not parsed at all; as `json` or inside a `text[]` the items
 * cost the database a character-by-character parse (measured with `perf`: json_lex was 10% of the
 * machine under the trigger benchmark).
 */
function groupParams(group: readonly Pending[]): unknown[] {
  const n = group.length;
  const ids = new Array<string>(n), companies = new Array<number>(n), kinds = new Array<string>(n), sources = new Array<number>(n);
  const totals = new Array<number>(n), ignored = new Array<number>(n), offsets = new Array<number>(n), lengths = new Array<number>(n);
  const overrides = new Array<string>(n), templates = new Array<string>(n), items = new Array<Buffer>(n);
  let offset = 1; // substring() counts from 1
  for (let i = 0; i < n; i++) {
    const r = group[i].row;
    ids[i] = r.batch_id; companies[i] = r.company_id; kinds[i] = r.kind; sources[i] = r.source_id;
    totals[i] = r.total; ignored[i] = r.ignored_contacts; overrides[i] = r.overrides; templates[i] = r.template;
    items[i] = Buffer.from(r.items, 'utf8');
    offsets[i] = offset;
    lengths[i] = items[i].length;
    offset += items[i].length;
  }
  return [ids, companies, kinds, sources, totals, ignored, Buffer.concat(items, offset - 1), offsets, lengths, overrides, templates];
}

/** One constant text whatever the group's size, so it is prepared once per connection (db/prepared.ts). */
const INSERT_BATCHES = `${PREPARED}INSERT INTO batches (batch_id, company_id, kind, source_id, total, ignored_contacts, items, overrides, template)
SELECT r.batch_id, r.company_id, r.kind, r.source_id, r.total, r.ignored, convert_from(substring($7::bytea FROM r.off FOR r.len), 'UTF8'),
       r.overrides::jsonb, r.template::jsonb
FROM unnest($1::uuid[], $2::int[], $3::text[], $4::int[], $5::int[], $6::int[], $8::int[], $9::int[], $10::text[], $11::text[])
  AS r(batch_id, company_id, kind, source_id, total, ignored, off, len, overrides, template)`;

/**
 * {@link INSERT_BATCHES} for a pipelined transaction: it inserts only inside the transaction that the
 * BEGIN sent before it opened (that BEGIN also sets `cms.accept_txn`, which lasts to the transaction's
 * end). Should the BEGIN not take effect, this statement would run as a transaction of its own and
 * commit a batch whether or not its job follows; guarded, it then inserts nothing and the writer,
 * seeing fewer rows than batches, fails the group.
 */
export const INSERT_BATCHES_GUARDED = `${INSERT_BATCHES}
WHERE current_setting('cms.accept_txn', true) = 'on'`;

/** One simple-protocol message: if BEGIN fails the rest of the message is not run. */
export const BEGIN_GUARDED = `BEGIN; SET LOCAL cms.accept_txn = 'on'`;

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
  readonly #embedded: boolean;
  readonly #pipeline: pg.Pool | undefined;

  /** `maxGroup`: batches per transaction; `maxInFlight`: transactions open at once. */
  constructor(db: Db, boss: Boss, opts: { maxGroup?: number; maxInFlight?: number } = {}) {
    this.#db = db;
    this.#boss = boss;
    this.#embedded = isEmbedded(db);
    this.#pipeline = pipelinePool(db);
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
    if (this.#pipeline && group.every((p) => p.within === undefined)) return this.#commitPipelined(this.#pipeline, group);
    await this.#db.transaction().execute(async (trx) => {
      if (this.#embedded) {
        // PGlite encodes a bytea parameter in JavaScript, byte by byte (5 ms for 8 rows, measured), and
        // has no plan cache to gain: the plain multi-row INSERT is its fastest form (0.9 ms).
        await trx.insertInto('batches').values(group.map((p) => p.row)).execute();
      } else {
        await trx.executeQuery(CompiledQuery.raw(INSERT_BATCHES, groupParams(group)));
      }
      await enqueueMany(this.#boss, trx, 'batch-process', group.map((p) => ({ data: { batch_id: p.row.batch_id } })));
      for (const p of group) await p.within?.(trx, p.row.batch_id);
    });
  }

  /**
   * The same transaction as {@link #commit}, sent pipelined on one connection (PostgreSQL, groups
   * without a `within` step): BEGIN, the batch INSERT, pg-boss's job INSERT and COMMIT leave in one
   * write and are answered together, one round trip instead of four. Each statement carries its own
   * Sync, so a failing INSERT leaves the transaction aborted and the COMMIT behind it rolls back (it
   * answers ROLLBACK); the group counts as committed only when every statement succeeded, the batch
   * INSERT wrote every row and COMMIT answered COMMIT.
   */
  async #commitPipelined(pool: pg.Pool, group: Pending[]): Promise<void> {
    const client = await pool.connect();
    const stream = (client as unknown as { connection: { stream: { cork?(): void; uncork?(): void } } }).connection.stream;
    // Statements written while corked leave in one write when the cork is released.
    let corked = true;
    const send = () => {
      if (corked) stream.uncork?.();
      corked = false;
    };
    let closed = false; // COMMIT (or ROLLBACK) has been sent
    let broken: Error | undefined;
    stream.cork?.();
    try {
      // Every statement's outcome is read below; until then a rejection must not count as unhandled
      // (the early ROLLBACK path never reads them).
      const statements: Promise<unknown>[] = [];
      const track = <T>(p: Promise<T>): Promise<T> => {
        p.catch(() => {});
        statements.push(p);
        return p;
      };
      track(client.query(BEGIN_GUARDED));
      const batches = track(client.query(INSERT_BATCHES_GUARDED, groupParams(group)));
      let sent!: () => void;
      const jobSent = new Promise<void>((resolve) => { sent = resolve; });
      const job = insertJobs(this.#boss, (text, values) => {
        const q = client.query(text, values);
        sent();
        return q;
      }, 'batch-process', group.map((p) => ({ data: { batch_id: p.row.batch_id } })));
      track(job);
      // pg-boss may look up its queue before it writes; COMMIT must follow its INSERT.
      await Promise.race([jobSent, job.then(() => { throw new Error('pg-boss did not insert the jobs'); })]);
      const commit = track(client.query('COMMIT'));
      closed = true;
      send();
      const results = await Promise.allSettled(statements);
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
      const inserted = (await batches).rowCount;
      const answer = (await commit).command;
      if (inserted !== group.length || answer !== 'COMMIT') {
        throw new Error(`accept transaction not committed (${inserted} of ${group.length} batches written, ${answer})`);
      }
    } catch (err) {
      if (!closed) {
        send();
        await client.query('ROLLBACK').catch((e: Error) => { broken = e; });
      }
      throw err;
    } finally {
      send();
      client.release(broken);
    }
  }
}

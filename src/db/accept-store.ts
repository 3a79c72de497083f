/**
 * Group commit of accepted sends (docs/decisions.md#3-outcomes-of-the-four-operations "accepted"): the service's
 * implementation of the domain's {@link BatchAcceptor} (domain/accept-writer.ts).
 *
 * Every accepted batch must be committed (its row and its processing job) before the answer. A commit
 * waits for the WAL to reach the disk, about 1-2 ms here, and a transaction costs four round trips, so
 * one transaction per request caps a database at a few hundred accepted sends per second. The store
 * gathers the batches that requests hand it while earlier transactions are in flight and writes each
 * group in ONE transaction: one multi-row INSERT of batches, one multi-row INSERT of jobs, then each
 * request's idempotency record (data handed to {@link AcceptStore.write}), then COMMIT. Every request
 * of the group is answered only after that commit. On PostgreSQL with the driver tricks on, a group
 * without idempotency records is sent pipelined, all four statements in one round trip (see
 * #commitPipelined and db/driver-tricks.ts). If a group fails, its requests are retried one by one, so
 * one bad request cannot fail the others.
 *
 * The job INSERT is the queue's ({@link InsertBatchJobs}, queue/boss.ts `batchProcessJobs`), handed in
 * by service.ts: this module does not know the queue. One {@link AcceptStore} per service, built in
 * service.ts and handed to the routes through AppDeps.
 */
import { CompiledQuery } from 'kysely';
import type pg from 'pg';
import type { AnswerRecord, BatchAcceptor, BatchRow } from '../domain/accept-writer.ts';
import type { Database, Db } from './database.ts';
import { BEGIN_GUARDED, corked, guardedInsert } from './driver-tricks.ts';
import { storeAnswer } from './idempotency-keys.ts';
import { PREPARED } from './prepared.ts';
import { StatementGroups } from './statement-groups.ts';

export type { AnswerRecord, BatchRow };

/** Runs one SQL text on the connection (and so in the transaction) the store chose; resolves to its rows. */
export type ExecuteSql = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>;

/**
 * Inserts one `batch-process` job per batch id in ONE statement run through `executeSql`, so that the
 * jobs commit with the store's transaction. Implemented by the queue (queue/boss.ts `batchProcessJobs`).
 */
export type InsertBatchJobs = (executeSql: ExecuteSql, batchIds: string[]) => Promise<void>;

/**
 * The group's batch rows as the parameters of {@link INSERT_BATCHES}: one array per column, and the
 * items texts (5-10 kB each) concatenated into ONE bytea with each row's byte offset and length. A
 * bytea parameter travels in binary and is not parsed at all; as `json` or inside a `text[]` the items
 * cost the database a character-by-character parse (measured with `perf`: json_lex was 10% of the
 * machine under the trigger benchmark).
 */
function groupParams(rows: readonly BatchRow[]): unknown[] {
  const n = rows.length;
  const ids = new Array<string>(n), companies = new Array<number>(n), kinds = new Array<string>(n), sources = new Array<number>(n);
  const totals = new Array<number>(n), ignored = new Array<number>(n), offsets = new Array<number>(n), lengths = new Array<number>(n);
  const overrides = new Array<string>(n), templates = new Array<string>(n);
  let offset = 1; // substring() counts from 1
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    ids[i] = r.batch_id; companies[i] = r.company_id; kinds[i] = r.kind; sources[i] = r.source_id;
    totals[i] = r.total; ignored[i] = r.ignored_contacts; overrides[i] = r.overrides; templates[i] = r.template;
    offsets[i] = offset;
    lengths[i] = Buffer.byteLength(r.items, 'utf8');
    offset += lengths[i];
  }
  // Written straight into one Buffer: a Buffer per request and their concatenation were ~10 kB of
  // garbage per request, promoted with the requests that wait for their group's commit.
  const items = Buffer.allocUnsafe(offset - 1);
  for (let i = 0; i < n; i++) items.write(rows[i].items, offsets[i] - 1, lengths[i], 'utf8');
  return [ids, companies, kinds, sources, totals, ignored, items, offsets, lengths, overrides, templates];
}

/** One constant text whatever the group's size, so it is prepared once per connection (db/prepared.ts). */
const INSERT_BATCHES = `${PREPARED}INSERT INTO batches (batch_id, company_id, kind, source_id, total, ignored_contacts, items, overrides, template)
SELECT r.batch_id, r.company_id, r.kind, r.source_id, r.total, r.ignored, convert_from(substring($7::bytea FROM r.off FOR r.len), 'UTF8'),
       r.overrides::jsonb, r.template::jsonb
FROM unnest($1::uuid[], $2::int[], $3::text[], $4::int[], $5::int[], $6::int[], $8::int[], $9::int[], $10::text[], $11::text[])
  AS r(batch_id, company_id, kind, source_id, total, ignored, off, len, overrides, template)`;

/**
 * {@link INSERT_BATCHES} for a pipelined transaction: it inserts only inside the transaction that
 * {@link BEGIN_GUARDED} opened (db/driver-tricks.ts trick 3). Should the BEGIN not take effect, it
 * inserts nothing and the store, seeing fewer rows than batches, fails the group.
 */
export const INSERT_BATCHES_GUARDED = guardedInsert(INSERT_BATCHES);

export { BEGIN_GUARDED };

interface Pending {
  row: BatchRow;
  idempotency: AnswerRecord | undefined;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** An `executeSql` for statements run in a Kysely transaction (or on its pool when `db` is none). */
function kyselyExecutor(db: Db): ExecuteSql {
  return async (text, values) => ({ rows: [...(await db.executeQuery(CompiledQuery.raw(text, values ?? []))).rows] });
}

/**
 * The service's durable accept (see the module comment): batches handed to {@link write} are committed
 * in groups, each group in one transaction with its jobs and idempotency answers.
 */
export class AcceptStore implements BatchAcceptor {
  readonly #database: Database;
  readonly #insertJobs: InsertBatchJobs;
  readonly #groups: StatementGroups<Pending>;

  /**
   * `insertJobs`: the queue's job INSERT (queue/boss.ts `batchProcessJobs`). `maxGroup`: batches per
   * transaction; `maxInFlight`: transactions open at once.
   */
  constructor(database: Database, insertJobs: InsertBatchJobs, opts: { maxGroup?: number; maxInFlight?: number } = {}) {
    this.#database = database;
    this.#insertJobs = insertJobs;
    this.#groups = new StatementGroups((group) => this.#flush(group), { maxGroup: opts.maxGroup ?? 64, maxInFlight: opts.maxInFlight ?? 4 });
  }

  /**
   * Resolves once the batch row, its `batch-process` job and (when given) the idempotency record of
   * the request's answer are committed together; rejects when they are not (nothing of it is stored).
   */
  write(row: BatchRow, opts: { idempotency?: AnswerRecord } = {}): Promise<void> {
    return new Promise((resolve, reject) => this.#groups.add({ row, idempotency: opts.idempotency, resolve, reject }));
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
    const pipeline = this.#database.pipelinePool;
    if (pipeline && group.every((p) => p.idempotency === undefined)) return this.#commitPipelined(pipeline, group);
    await this.#database.db.transaction().execute(async (trx) => {
      if (this.#database.kind === 'pglite') {
        // PGlite encodes a bytea parameter in JavaScript, byte by byte (5 ms for 8 rows, measured), and
        // has no plan cache to gain: the plain multi-row INSERT is its fastest form (0.9 ms).
        await trx.insertInto('batches').values(group.map((p) => p.row)).execute();
      } else {
        await trx.executeQuery(CompiledQuery.raw(INSERT_BATCHES, groupParams(group.map((p) => p.row))));
      }
      await this.#insertJobs(kyselyExecutor(trx), group.map((p) => p.row.batch_id));
      for (const p of group) {
        if (p.idempotency) await storeAnswer(trx, p.row.company_id, p.idempotency.key, p.idempotency.status, p.idempotency.body);
      }
    });
  }

  /**
   * The same transaction as {@link #commit}, sent pipelined on one connection (PostgreSQL with the
   * driver tricks on, groups without idempotency records): BEGIN, the batch INSERT, the queue's job INSERT and COMMIT leave in
   * one write and are answered together, one round trip instead of four. Each statement carries its own
   * Sync, so a failing INSERT leaves the transaction aborted and the COMMIT behind it rolls back (it
   * answers ROLLBACK); the group counts as committed only when every statement succeeded, the batch
   * INSERT wrote every row and COMMIT answered COMMIT.
   */
  async #commitPipelined(pool: pg.Pool, group: Pending[]): Promise<void> {
    const client = await pool.connect();
    // Statements written while corked leave in one write when `send` uncorks.
    const send = corked(client);
    let closed = false; // COMMIT (or ROLLBACK) has been sent
    let broken: Error | undefined;
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
      const batches = track(client.query(INSERT_BATCHES_GUARDED, groupParams(group.map((p) => p.row))));
      let sent!: () => void;
      const jobSent = new Promise<void>((resolve) => { sent = resolve; });
      const job = this.#insertJobs((text, values) => {
        const q = client.query(text, values);
        sent();
        return q;
      }, group.map((p) => p.row.batch_id));
      track(job);
      // The queue (pg-boss) may look up its queue before it writes; COMMIT must follow its INSERT.
      await Promise.race([jobSent, job.then(() => { throw new Error('the queue did not insert the jobs'); })]);
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

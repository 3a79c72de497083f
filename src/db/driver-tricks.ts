/**
 * Every use of node-postgres's and pg-boss's internals, in one place.
 *
 * Each trick buys speed on the accept path or works around a pg-boss limitation, and
 * each leans on something the libraries do not promise. The switch `DB_DRIVER_TRICKS=off`
 * (`config.driverTricks`) turns all of them off; the plain path then runs on documented APIs only and
 * must pass the whole test suite too (`.ci/run` runs it once). What each trick is and why:
 *
 * 1. {@link PreparingClient} (node-postgres `Client.prototype.query` replaced): texts marked
 *    {@link PREPARED} run as NAMED statements, parsed and planned once per connection. Kysely sends
 *    every statement unnamed; parsing and planning were a third of PostgreSQL's CPU under the trigger
 *    benchmark. Off: a plain `pg.Client`, the marker is only a comment.
 * 2. {@link openPipelinePool} (node-postgres's undocumented `pipeline: true` pool option) and
 *    {@link corked} (a cast into the client's private `connection.stream` to cork the socket): the four
 *    statements of an accept transaction leave in ONE write and are answered together, one round trip
 *    instead of four. Off: no pipelined pool; the accept transaction runs through Kysely.
 * 3. {@link BEGIN_GUARDED} / {@link guardedInsert} (the `cms.accept_txn` setting): in a pipelined
 *    transaction a BEGIN that did not take effect would let the INSERT behind it commit on its own;
 *    guarded, that INSERT writes nothing and the writer fails the group. Only used with trick 2.
 * 4. {@link warmQueueCache} (pg-boss `deleteJob` of a dummy id): `createQueue`/`updateQueue` evict
 *    pg-boss's queue cache and `send`/`insert` refill a missing entry through pg-boss's OWN connection.
 *    On PGlite (one connection, held by the accept transaction) that refill waits forever, so the cache
 *    is filled before the first accept. This one is needed for correctness on PGlite, not for speed:
 *    with the switch off it still runs there (there is no public pg-boss call that fills the cache),
 *    and is skipped on PostgreSQL, where the refill simply takes another pooled connection.
 * 5. {@link PgliteStatements} (PGlite's wire-protocol entry `execProtocol` and its `_runExclusive*`
 *    locks): on the embedded database every statement, Kysely's and pg-boss's, runs as a NAMED
 *    prepared statement, and each execution is one call into PGlite (Bind, Describe, Execute and Sync
 *    in one buffer). `pglite.query` parses, describes and plans every statement again in six calls;
 *    parsing and planning topped PGlite's profile of the test suite, and a typical SELECT went from
 *    about 160 to 35 µs. Off: `pglite.query` and the transaction's `tx.query`, as documented.
 * 6. {@link notifyDueQueues} (pg-boss's job table and its internal `notifyChannelSql`): one statement
 *    a second per worker process sends pg-boss's own LISTEN/NOTIFY wake-up for each queue with a job
 *    that came due (a retry after its backoff, a start time, an expired job put back), which pg-boss
 *    does not notify. The fetch loops then poll by themselves every 30 s ({@link QUEUE_POLL_SECONDS})
 *    instead of every second: one statement a second per idle worker process instead of eleven
 *    fetches (docs/architecture.md "Queue polling"). Off: no wake-ups, and the loops poll every second.
 * 7. {@link keepLeadingBom} (PGlite's protocol reader, a class its `protocol.Parser` keeps in a private
 *    field): PGlite decodes every text of an answer with a `TextDecoder('utf-8')` that drops a leading
 *    U+FEFF, so a text starting with one came back without it. The reader's `string` method is replaced
 *    by one decoding with `ignoreBOM: true`, for every parser PGlite makes. Needed for correctness, so it
 *    runs with the switch off too; checked when applied (it throws when PGlite's reader changed shape).
 */
import type { ForegroundGate } from './foreground-gate.ts';
import { createHash, randomBytes } from 'node:crypto';
import type { PGlite, Results, Transaction as PGliteTx } from '@electric-sql/pglite';
import pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { sql } from 'kysely';
import { notifyChannelSql } from 'pg-boss/dist/plans.js';
import type { Db } from './database.ts';
import { PREPARED } from './prepared.ts';

export { PREPARED };

const names = new Map<string, string>();

/** The statement name of a marked text: `cms_` + 24 hex digits of its SHA-1 (stable across processes). */
export function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `cms_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    if (names.size < 10_000) names.set(text, name);
  }
  return name;
}

type QueryFn = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * Trick 1: a node-postgres client (for `new pg.Pool({ Client: PreparingClient })`) that runs texts
 * starting with {@link PREPARED} as named statements; every other call is passed through unchanged.
 * Only constant texts may carry the marker: each distinct text stays prepared for the connection's life.
 */
export class PreparingClient extends pg.Client {}
(PreparingClient.prototype as unknown as { query: QueryFn }).query = function query(this: pg.Client, config, values, callback) {
  // pg.Client's own query, looked up at call time (like `super.query`), so wrappers of it still apply.
  const base = pg.Client.prototype.query as unknown as QueryFn;
  if (typeof config === 'string' && config.startsWith(PREPARED)) {
    const cb = typeof values === 'function' ? values : callback;
    const vals = typeof values === 'function' ? undefined : values;
    return base.call(this, { name: statementName(config), text: config, values: vals }, cb);
  }
  return base.call(this, config, values, callback);
};

/** The client class of the main pool: {@link PreparingClient} with the tricks on, `pg.Client` off. */
export function clientClass(tricks: boolean): typeof pg.Client {
  return tricks ? PreparingClient : pg.Client;
}

/**
 * Trick 2: a small pool of connections in node-postgres's pipeline mode (statements sent without
 * waiting for each answer), for the accept transaction; undefined with the tricks off.
 */
export function openPipelinePool(tricks: boolean, options: pg.PoolConfig, max: number): pg.Pool | undefined {
  if (!tricks) return undefined;
  return new pg.Pool({ ...options, max, pipeline: true } as pg.PoolConfig);
}

/**
 * Trick 2: corks the client's socket; the statements sent until the returned function is called (it
 * uncorks; idempotent, call it in every path) leave in one write.
 */
export function corked(client: pg.PoolClient): () => void {
  const stream = (client as unknown as { connection: { stream: { cork?(): void; uncork?(): void } } }).connection.stream;
  stream.cork?.();
  let open = true;
  return () => {
    if (open) stream.uncork?.();
    open = false;
  };
}

/** Trick 3: one simple-protocol message; if BEGIN fails the rest of the message is not run. */
export const BEGIN_GUARDED = `BEGIN; SET LOCAL cms.accept_txn = 'on'`;

/** Trick 3: `insert` (an INSERT ... SELECT without WHERE) that writes only after {@link BEGIN_GUARDED}. */
export function guardedInsert(insert: string): string {
  return `${insert}
WHERE current_setting('cms.accept_txn', true) = 'on'`;
}

/**
 * Trick 4: fills pg-boss's queue cache entry of `name` (evicted by createQueue/updateQueue) with a
 * harmless call. Runs on PGlite whatever the switch (see the module's note), on PostgreSQL only with
 * the tricks on.
 */
export async function warmQueueCache(boss: PgBoss, name: string, opts: { embedded: boolean; tricks: boolean }): Promise<void> {
  if (!opts.embedded && !opts.tricks) return;
  await boss.deleteJob(name, '00000000-0000-4000-8000-000000000000');
}

/**
 * Trick 6: how often a worker's fetch loop polls its queue by itself (pg-boss
 * `notifyPollingIntervalSeconds`, s): with the due-job wake-ups ({@link notifyDueQueues}) only as the
 * backstop for a lost notification (pg-boss's default); without them, every second, so that a retry
 * or a start time that comes due is found within a second.
 */
export const QUEUE_POLL_SECONDS = { tricks: 30, plain: 1 } as const;

/**
 * Trick 6: sends pg-boss's wake-up notification (channel from pg-boss's own `notifyChannelSql`, so it
 * follows pg-boss) for each queue of `names` (pg-boss `schema`) that has a job ready to run: created
 * or retry, not blocked, `start_after` at or before pg-boss's database time. Resolves to those queues'
 * names. One statement, an index probe per queue (pg-boss's index of the jobs not yet active);
 * outside any transaction, the notifications go out when it ends, to every listening process.
 */
export async function notifyDueQueues(db: Db, schema: string, names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const { rows } = await sql<{ name: string }>`
    SELECT q.name, pg_notify(${sql.raw(notifyChannelSql(schema))}, q.name)
    FROM unnest(${[...names]}::text[]) AS q(name)
    WHERE EXISTS (
      SELECT 1 FROM ${sql.table(`${schema}.job`)} j
      WHERE j.name = q.name AND j.state < 'active' AND NOT j.blocked AND j.start_after <= ${sql.raw(schema)}.job_now()
    )`.execute(db);
  return rows.map((r) => r.name);
}

/** The parts of the `@electric-sql/pglite` module trick 5 uses (passed in: PostgreSQL never loads PGlite). */
export interface PgliteModule {
  protocol: typeof import('@electric-sql/pglite').protocol;
  parse: typeof import('@electric-sql/pglite').parse;
}

/** The methods of PGlite's protocol reader (its `BufferReader`) that {@link keepLeadingBom} relies on. */
interface ProtocolReader {
  string(length: number): string;
  cstring(): string;
  bytes(length: number): Uint8Array;
}

const bomKept = new WeakSet<PgliteModule['protocol']>();

/**
 * Trick 7: makes PGlite's protocol reader keep a leading U+FEFF of the texts it decodes (column values,
 * command tags, messages), for every `Parser` of `mod.protocol`, made before or after (the method is
 * replaced on the reader's class). The reader is found as the one value a new `Parser` stores in a
 * `WeakMap` (PGlite's build keeps private fields in WeakMaps) with `string`, `cstring` and `bytes`
 * methods; `WeakMap.prototype.set` is wrapped only during that synchronous constructor call. Then a
 * DataRow holding `U+FEFF a` is parsed to check the fix took. Throws when the reader cannot be found or
 * the check fails (a PGlite upgrade changed the reader: see docs/operations.md). Idempotent.
 */
export function keepLeadingBom(mod: Pick<PgliteModule, 'protocol'>): void {
  if (bomKept.has(mod.protocol)) return;
  const set = WeakMap.prototype.set;
  let reader: ProtocolReader | undefined;
  WeakMap.prototype.set = function <K extends WeakKey, V>(this: WeakMap<K, V>, key: K, value: V) {
    const v = value as Partial<ProtocolReader> | undefined;
    if (reader === undefined && typeof v === 'object' && v !== null && typeof v.string === 'function' && typeof v.cstring === 'function' && typeof v.bytes === 'function') reader = v as ProtocolReader;
    return set.call(this, key, value) as WeakMap<K, V>;
  };
  try {
    new mod.protocol.Parser();
  } finally {
    WeakMap.prototype.set = set;
  }
  if (reader === undefined) throw new Error("PGlite's protocol reader was not found: the leading U+FEFF fix (db/driver-tricks.ts trick 7) no longer applies");
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  (Object.getPrototypeOf(reader) as ProtocolReader).string = function string(this: ProtocolReader, length: number): string {
    return decoder.decode(this.bytes(length));
  };
  // Check: a DataRow of one column holding U+FEFF 'a' is parsed back unchanged.
  const value = Buffer.from('\ufeffa');
  const row = Buffer.alloc(11 + value.length);
  row.write('D', 0);
  row.writeInt32BE(10 + value.length, 1);
  row.writeInt16BE(1, 5);
  row.writeInt32BE(value.length, 7);
  value.copy(row, 11);
  let fields: unknown;
  new mod.protocol.Parser().parse(row, (message) => { fields = (message as { fields?: unknown }).fields; });
  if (JSON.stringify(fields) !== JSON.stringify(['\ufeffa'])) throw new Error("PGlite's protocol reader still drops a leading U+FEFF (db/driver-tricks.ts trick 7)");
  bomKept.add(mod.protocol);
}

interface Prepared { name: string; types: number[] }

/**
 * Trick 5: runs statements on one PGlite instance, as named prepared statements with the tricks on
 * and through `pglite.query` / `tx.query` with them off. Statements are kept per SQL text, at most
 * `capacity` of them (the least recently used is closed when a new one is prepared). Parameters are
 * serialised by the types PostgreSQL infers for them, with PGlite's own serializers, and rows parsed
 * with PGlite's parsers: results are the same as `pglite.query`'s. Errors are PostgreSQL's
 * `DatabaseError`s (code, constraint, message) as there.
 *
 * Locks: {@link query} waits for any open transaction and takes the query lock, like `pglite.query`;
 * {@link inTransaction} runs inside a transaction the caller holds, like `tx.query`.
 *
 * The object also serves pg-boss as its `PGliteLike` (query, exec, listen).
 *
 * With a `gate` (db/foreground-gate.ts), {@link query} and {@link exec} wait for their turn there first:
 * requests before background work.
 */
export class PgliteStatements {
  readonly #pglite: PGlite;
  readonly #mod: PgliteModule;
  readonly #prepared: boolean;
  readonly #capacity: number;
  /** Who goes first (db/foreground-gate.ts); absent: arrival order only. */
  readonly gate: ForegroundGate | undefined;
  /** SQL text -> statement, least recently used first (a Map keeps insertion order). */
  readonly #statements = new Map<string, Prepared>();
  /** Names of evicted statements, closed in the next call into PGlite. */
  #toClose: string[] = [];
  /** Statement names: this prefix (unique per instance of this class) and a counter. */
  readonly #prefix = `cms_${randomBytes(4).toString('hex')}_`;
  #next = 0;

  constructor(pglite: PGlite, mod: PgliteModule, opts: { tricks: boolean; capacity?: number; gate?: ForegroundGate }) {
    this.#pglite = pglite;
    this.#mod = mod;
    this.#prepared = opts.tricks;
    this.#capacity = opts.capacity ?? 200;
    this.gate = opts.gate;
  }

  /** One statement outside any transaction (waits for its turn at the gate, then for an open transaction to finish). */
  async query<R>(text: string, params: readonly unknown[] = []): Promise<Results<R>> {
    return this.gate ? this.gate.run(() => this.#query<R>(text, params)) : this.#query<R>(text, params);
  }

  async #query<R>(text: string, params: readonly unknown[]): Promise<Results<R>> {
    if (!this.#prepared) return this.#pglite.query<R>(text, [...params]);
    await this.#pglite._checkReady();
    return this.#pglite._runExclusiveTransaction(async () => {
      const result = await this.#pglite._runExclusiveQuery(() => this.#run<R>(text, params));
      await this.#pglite.syncToFs();
      return result;
    });
  }

  /** One statement inside the open transaction `tx`, whose lock the caller holds. */
  async inTransaction<R>(tx: PGliteTx, text: string, params: readonly unknown[] = []): Promise<Results<R>> {
    if (!this.#prepared) return tx.query<R>(text, [...params]);
    if (tx.closed) throw new Error('Transaction is closed');
    return this.#pglite._runExclusiveQuery(() => this.#run<R>(text, params));
  }

  /** A multi-statement script (simple protocol), as `pglite.exec` (in its turn at the gate). */
  exec(text: string): Promise<Results[]> {
    return this.gate ? this.gate.run(() => this.#pglite.exec(text)) : this.#pglite.exec(text);
  }

  /** LISTEN on `channel`, as `pglite.listen`. */
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>> {
    return this.#pglite.listen(channel, callback);
  }

  /**
   * Forgets every prepared statement (after a schema change: a statement whose result columns
   * changed could not run again). Run by the caller inside the transaction it holds.
   */
  async reset(run: (text: string) => Promise<unknown>): Promise<void> {
    if (!this.#prepared) return;
    this.#statements.clear();
    this.#toClose = [];
    await run('DEALLOCATE ALL');
  }

  async #run<R>(text: string, params: readonly unknown[]): Promise<Results<R>> {
    const { serialize } = this.#mod.protocol;
    let statement = this.#statements.get(text);
    if (statement) {
      this.#statements.delete(text);
      this.#statements.set(text, statement);
    } else {
      statement = await this.#prepare(text);
    }
    const types = statement.types;
    const serializers = this.#pglite.serializers;
    const values = params.map((v, i) => {
      if (v === null || v === undefined) return null;
      const serializer = serializers[types[i]!];
      return serializer ? serializer(v) : String(v);
    });
    let messages;
    try {
      ({ messages } = await this.#pglite.execProtocol(Buffer.concat([
        serialize.bind({ statement: statement.name, values }),
        serialize.describe({ type: 'P' }),
        serialize.execute({}),
        serialize.sync(),
      ]), { syncToFs: false }));
    } catch (err) {
      // The statement is gone (DEALLOCATE outside reset()) or its result columns changed (a schema
      // change outside a migration script): forget it, so that the next call prepares it again.
      const code = (err as { code?: unknown }).code;
      if (code === '26000' || code === '0A000') {
        this.#statements.delete(text);
        this.#toClose.push(statement.name);
      }
      throw err;
    }
    return this.#mod.parse.parseResults(messages, this.#pglite.parsers)[0] as Results<R>;
  }

  /** Parses `text` as a new named statement (closing evicted ones first); learns its parameter types. */
  async #prepare(text: string): Promise<Prepared> {
    const { serialize } = this.#mod.protocol;
    const name = `${this.#prefix}${this.#next++}`;
    const closes = this.#toClose.map((old) => serialize.close({ type: 'S', name: old }));
    this.#toClose = [];
    const { messages } = await this.#pglite.execProtocol(Buffer.concat([
      ...closes,
      serialize.parse({ name, text }),
      serialize.describe({ type: 'S', name }),
      serialize.sync(),
    ]), { syncToFs: false });
    const description = messages.find((m) => m.name === 'parameterDescription') as { dataTypeIDs?: number[] } | undefined;
    const statement = { name, types: description?.dataTypeIDs ?? [] };
    this.#statements.set(text, statement);
    if (this.#statements.size > this.#capacity) {
      const [oldest, old] = this.#statements.entries().next().value!;
      this.#statements.delete(oldest);
      this.#toClose.push(old.name);
    }
    return statement;
  }
}

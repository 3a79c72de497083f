/**
 * Every use of node-postgres's and pg-boss's internals, in one place (issue 14 item 2).
 *
 * Each trick buys speed on the accept path (issue 4 item 3) or works around a pg-boss limitation, and
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
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { PgBoss } from 'pg-boss';
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

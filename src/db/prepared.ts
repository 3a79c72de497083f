/**
 * Server-side prepared statements for the hot path on PostgreSQL (issue 4 item 3).
 *
 * Kysely sends every query as an unnamed statement, so PostgreSQL parses, analyses and plans it on every
 * call. Under the trigger benchmark that was a third of the database's CPU (`perf`: raw_parser,
 * parse_analyze, GetCachedPlan), mostly for statements whose text never changes: the batch INSERT, the
 * pg-boss job INSERT, the automation lookup. A statement whose SQL text starts with {@link PREPARED} is
 * sent by {@link PreparingClient} as a NAMED statement (the name is derived from the text), which
 * node-postgres parses once per connection and PostgreSQL then plans once (a generic plan after its
 * first five custom ones). Only texts that are constant may carry the marker: every distinct text stays
 * prepared on each connection for the connection's life. On PGlite the marker is only a comment.
 */
import { createHash } from 'node:crypto';
import type { Compilable } from 'kysely';
import pg from 'pg';
import type { Db } from './database.ts';

/** Put first in a constant SQL text to run it as a named prepared statement on PostgreSQL. */
export const PREPARED = '/* cms:prepared */ ';

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
 * A node-postgres client (for `new pg.Pool({ Client: PreparingClient })`) that runs texts starting with
 * {@link PREPARED} as named statements; every other call is passed through unchanged.
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

/** Runs a Kysely query (whose compiled text must not vary between calls) as a prepared statement. */
export async function executePrepared<R>(db: Db, query: Compilable<R>): Promise<R[]> {
  const compiled = query.compile();
  return (await db.executeQuery<R>({ ...compiled, sql: PREPARED + compiled.sql })).rows;
}

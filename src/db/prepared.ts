/**
 * Server-side prepared statements for the hot path on PostgreSQL.
 *
 * Kysely sends every query as an unnamed statement, so PostgreSQL parses, analyses and plans it on every
 * call. A statement whose constant SQL text starts with {@link PREPARED} is sent as a NAMED statement
 * by the main pool's client (see `PreparingClient` in db/driver-tricks.ts, trick 1), prepared once per
 * connection. Only texts that are constant may carry the marker. On PGlite, and on PostgreSQL with
 * `DB_DRIVER_TRICKS=off`, the marker is only a comment.
 */
import type { Compilable, QueryResult, RawBuilder } from 'kysely';
import type { Db } from './database.ts';

/** Put first in a constant SQL text to run it as a named prepared statement on PostgreSQL. */
export const PREPARED = '/* cms:prepared */ ';

/** Runs a Kysely query (whose compiled text must not vary between calls) as a prepared statement. */
export async function executePrepared<R>(db: Db, query: Compilable<R>): Promise<R[]> {
  const compiled = query.compile();
  return (await db.executeQuery<R>({ ...compiled, sql: PREPARED + compiled.sql })).rows;
}

/**
 * Runs a raw `sql` template as a prepared statement: the hot statements of the delivery path (claims,
 * lease renewals, results), each run hundreds of times a second. Its text must not vary between calls
 * (values are parameters; no `sql.raw`, no lists spelled out in the text).
 */
export async function executePreparedSql<R>(db: Db, query: RawBuilder<R>): Promise<QueryResult<R>> {
  const compiled = query.compile(db);
  return db.executeQuery<R>({ ...compiled, sql: PREPARED + compiled.sql });
}

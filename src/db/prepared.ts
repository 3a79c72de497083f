/**
 * Server-side prepared statements for the hot path on PostgreSQL.
 *
 * Kysely sends every query as an unnamed statement, so PostgreSQL parses, analyses and plans it on every
 * call. A statement whose constant SQL text starts with {@link PREPARED} is sent as a NAMED statement
 * by the main pool's client (see `PreparingClient` in db/driver-tricks.ts, trick 1), prepared once per
 * connection. Only texts that are constant may carry the marker. On PGlite, and on PostgreSQL with
 * `DB_DRIVER_TRICKS=off`, the marker is only a comment.
 */
import type { Compilable } from 'kysely';
import type { Db } from './database.ts';

/** Put first in a constant SQL text to run it as a named prepared statement on PostgreSQL. */
export const PREPARED = '/* cms:prepared */ ';

/** Runs a Kysely query (whose compiled text must not vary between calls) as a prepared statement. */
export async function executePrepared<R>(db: Db, query: Compilable<R>): Promise<R[]> {
  const compiled = query.compile();
  return (await db.executeQuery<R>({ ...compiled, sql: PREPARED + compiled.sql })).rows;
}

/**
 * The statements on `console_login_failures` (src/domain/users/login-throttle.ts decides the buckets and
 * limits): one statement per function.
 */
import { sql } from 'kysely';
import type { Db } from './database.ts';

/** The buckets among `buckets` whose window started after `windowAfter`, with their counts. */
export async function selectOpenBuckets(db: Db, buckets: string[], windowAfter: Date): Promise<{ bucket: string; failures: number; window_start: Date }[]> {
  return db.selectFrom('console_login_failures').select(['bucket', 'failures', 'window_start'])
    .where('bucket', 'in', buckets)
    .where('window_start', '>', windowAfter)
    .execute();
}

/**
 * Counts one failure in `bucket` at `now`: one more in a window that started after `windowAfter`,
 * else a new window starting at `now` with 1.
 */
export async function upsertFailure(db: Db, bucket: string, now: Date, windowAfter: Date): Promise<void> {
  await sql`
    INSERT INTO console_login_failures AS f (bucket, failures, window_start) VALUES (${bucket}, 1, ${now})
    ON CONFLICT (bucket) DO UPDATE SET
      failures = CASE WHEN f.window_start > ${windowAfter} THEN f.failures + 1 ELSE 1 END,
      window_start = CASE WHEN f.window_start > ${windowAfter} THEN f.window_start ELSE ${now} END`.execute(db);
}

/** Deletes one bucket. */
export async function deleteBucket(db: Db, bucket: string): Promise<void> {
  await db.deleteFrom('console_login_failures').where('bucket', '=', bucket).execute();
}

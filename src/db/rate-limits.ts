/**
 * SQL of the rate limits exact across processes (docs/decisions.md#1-request-handling-order, step 6, #4-rate-limits):
 * one statement decides the requests of many buckets (`<company id>:<rule name>`) at once.
 *
 * A bucket's sliding log is one `rate_limit_logs` row (migration 016): the times, in µs since the epoch,
 * of the admissions still in the window (at most `limit` of them). Requests are admitted by INSERT …
 * ON CONFLICT DO UPDATE: the conflicting row is locked and re-read at its latest version, and the time
 * that stamps the admissions and cuts the window is the database's clock read after that lock is held.
 * Concurrent requests for one bucket, from any number of processes, are therefore decided one after the
 * other, at the moment they are admitted: never more than `limit` admissions in any window. Rows are
 * locked in bucket order, so two statements cannot deadlock on them.
 *
 * The statement returns per bucket how many of its requests it admitted (the first ones, in arrival
 * order), the log's length and oldest time, and the time it decided at: a few integers instead of the log.
 */
import { sql } from 'kysely';
import type { Database, Db } from './database.ts';
import { PREPARED } from './prepared.ts';

/** One request to decide: its bucket and its rule's limit and window. */
export interface RateLimitRequest {
  readonly key: string;
  readonly limit: number;     // requests per window
  readonly windowMs: number;  // window length, ms
}

/** The decision on one request. */
export interface RateLimitDecision {
  readonly allowed: boolean;
  /** Requests still allowed in the current window after this one. */
  readonly remaining: number;
  /** Milliseconds until the oldest request in the window leaves it (a slot frees). */
  readonly resetMs: number;
}

/** A row of {@link CONSUME_RATE_LIMITS}: one bucket after the statement (µs as decimal text: int8). */
export interface ConsumedBucket { bucket: string; admitted: number; total: number; oldest_us: string; decided_us: string }

/**
 * $1 buckets, $2 limits, $3 windows in µs: one entry per request, in arrival order. Per bucket, the
 * first `limit - (admissions still in the window)` of its requests are admitted, all at the time the
 * statement decides that bucket (read per row, after its lock is held). The subqueries that read the
 * clock refer to `q.bucket` so that they are evaluated for each bucket, not once and materialised.
 */
export const CONSUME_RATE_LIMITS = `${PREPARED}
WITH req AS (
  SELECT r.bucket, count(*)::int AS n, max(r.lim) AS lim, max(r.win_us) AS win_us
  FROM unnest($1::text[], $2::int[], $3::bigint[]) AS r(bucket, lim, win_us)
  GROUP BY r.bucket
)
INSERT INTO rate_limit_logs AS t (bucket, hits, decided_us, admitted)
SELECT q.bucket, array_fill(c.now, ARRAY[a.n]), c.now, a.n
FROM req q,
     LATERAL (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now, q.bucket AS b) c,
     LATERAL (SELECT least(q.n, q.lim) AS n) a
ORDER BY q.bucket
ON CONFLICT (bucket) DO UPDATE SET (hits, decided_us, admitted) = (
  SELECT k.kept || array_fill(d.now, ARRAY[a.n]), d.now, a.n
  FROM req q,
       LATERAL (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now, q.bucket AS b) d,
       LATERAL (SELECT coalesce(array_agg(h ORDER BY h), '{}') AS kept FROM unnest(t.hits) AS h WHERE h > d.now - q.win_us) k,
       LATERAL (SELECT greatest(0, least(q.n, q.lim - cardinality(k.kept))) AS n) a
  WHERE q.bucket = excluded.bucket)
RETURNING t.bucket, t.admitted, cardinality(t.hits) AS total, coalesce(t.hits[1], t.decided_us)::text AS oldest_us, t.decided_us::text`;

/** The parameters of {@link CONSUME_RATE_LIMITS} for `requests`, in arrival order. */
export function consumeParams(requests: readonly RateLimitRequest[]): unknown[] {
  return [requests.map((r) => r.key), requests.map((r) => r.limit), requests.map((r) => r.windowMs * 1000)];
}

/**
 * Each request's decision from the statement's rows: the i-th request of a bucket (arrival order) is
 * admitted when i < `admitted`; `remaining` is what was left right after it (also when later requests
 * of the same statement were admitted behind it), `resetMs` the time until the oldest admission of the
 * log leaves the window. A bucket without a row (cannot happen) counts as refused with a full window.
 */
export function rateLimitDecisions(rows: readonly ConsumedBucket[], requests: readonly RateLimitRequest[]): RateLimitDecision[] {
  const byBucket = new Map(rows.map((r) => [r.bucket, r]));
  const seen = new Map<string, number>();
  return requests.map((r) => {
    const i = seen.get(r.key) ?? 0;
    seen.set(r.key, i + 1);
    const row = byBucket.get(r.key);
    if (!row) return { allowed: false, remaining: 0, resetMs: r.windowMs };
    const allowed = i < row.admitted;
    const kept = row.total - row.admitted;
    const resetMs = Math.max(0, Math.ceil((Number(row.oldest_us) - Number(row.decided_us)) / 1000 + r.windowMs));
    return { allowed, remaining: Math.max(0, r.limit - (allowed ? kept + i + 1 : row.total)), resetMs };
  });
}

/**
 * Runs {@link CONSUME_RATE_LIMITS} for `requests` (arrival order) on PostgreSQL's pool, as the named
 * prepared statement `cms_rate_limit_consume_v2`; resolves to its rows, one per bucket. Throws when
 * `database` has no PostgreSQL pool (the embedded database keeps its limits in memory).
 */
export async function consumeRateLimits(database: Pick<Database, 'pgPool'>, requests: readonly RateLimitRequest[]): Promise<ConsumedBucket[]> {
  if (!database.pgPool) throw new Error('rate limits in the database need PostgreSQL');
  const { rows } = await database.pgPool.query<ConsumedBucket>({ name: 'cms_rate_limit_consume_v2', text: CONSUME_RATE_LIMITS, values: consumeParams(requests) });
  return rows;
}

/** Deletes bucket `key`'s log (`rate_limit_logs`), so that its next request starts a fresh window. */
export async function deleteRateLimitLog(db: Db, key: string): Promise<void> {
  await sql`DELETE FROM rate_limit_logs WHERE bucket = ${key}`.execute(db);
}

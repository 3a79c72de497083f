/**
 * Rate limits exact across processes (issue 4 item 2; decisions.md §4): the sliding log of each bucket
 * lives in one `rate_limits` row (times in µs since the epoch, each with a random fraction that names
 * the request it admitted), and requests are admitted by INSERT … ON CONFLICT DO UPDATE.
 *
 * Exactness: the conflicting row is locked and re-read at its latest version, and the time that stamps
 * an admission and cuts the window is the database's clock read after that lock is held. Concurrent
 * requests for one bucket, from any number of processes, are therefore decided one after the other, at
 * the moment they are admitted: never more than `limit` admissions in any window.
 *
 * Throughput (issue 4 item 3): the requests that arrive in one turn of the event loop are decided by ONE
 * statement (a group, like the group commit of accepted sends), run as a named prepared statement, so
 * the database parses and plans it once per connection and commits once per group instead of once per
 * request. Rows are locked in bucket order, so concurrent groups cannot deadlock.
 */
import { randomInt } from 'node:crypto';
import type pg from 'pg';
import { sql } from 'kysely';
import type { Database, Db } from '../db/database.ts';
import { StatementGroups } from '../db/statement-groups.ts';
import type { RateLimitDecision, RateLimiter, RateLimitRule } from './rate-limit.ts';

/**
 * $1 buckets, $2 fractions (the requests' marks), $3 limits, $4 windows in µs: one entry per request.
 * Per bucket, at most `limit - (hits still in the window)` of its requests are admitted, in arrival
 * order; RETURNING gives each bucket's log after the statement and the database time in µs.
 */
const CONSUME_SQL = `
WITH req AS (
  SELECT r.bucket, array_agg(r.frac ORDER BY r.ord) AS fracs, max(r.lim) AS lim, max(r.win_us) AS win_us
  FROM unnest($1::text[], $2::numeric[], $3::int[], $4::bigint[]) WITH ORDINALITY AS r(bucket, frac, lim, win_us, ord)
  GROUP BY r.bucket
)
INSERT INTO rate_limits AS t (bucket, hits)
SELECT q.bucket, (SELECT array_agg(floor(extract(epoch FROM clock_timestamp()) * 1000000) + u.f ORDER BY u.o)
                  FROM unnest(q.fracs[1:q.lim]) WITH ORDINALITY AS u(f, o))
FROM req q ORDER BY q.bucket
ON CONFLICT (bucket) DO UPDATE SET hits = (
  SELECT k.kept || coalesce((SELECT array_agg(c.now + (x.h - floor(x.h)) ORDER BY x.o)
                             FROM unnest(excluded.hits) WITH ORDINALITY AS x(h, o)
                             WHERE x.o <= q.lim - cardinality(k.kept)), '{}')
  FROM req q,
       (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000000)::numeric AS now) c,
       LATERAL (SELECT coalesce(array_agg(h ORDER BY h), '{}') AS kept FROM unnest(t.hits) AS h
                WHERE floor(h) > c.now - q.win_us) k
  WHERE q.bucket = excluded.bucket)
RETURNING t.bucket, t.hits::text[] AS hits, floor(extract(epoch FROM clock_timestamp()) * 1000000)::text AS now_us`;

interface Pending {
  key: string;
  rule: RateLimitRule;
  frac: string; // "0.123456789"
  resolve: (d: RateLimitDecision) => void;
  reject: (err: unknown) => void;
}

/** Most requests decided by one statement, and statements in flight at once. */
const MAX_GROUP = 256;
const MAX_IN_FLIGHT = 4;

export class PgRateLimiter implements RateLimiter {
  readonly #db: Db;
  readonly #pool: pg.Pool;
  readonly #groups = new StatementGroups<Pending>((group) => this.#decide(group), { maxGroup: MAX_GROUP, maxInFlight: MAX_IN_FLIGHT });

  /** `database` must be PostgreSQL (the embedded default keeps its limits in memory). */
  constructor(database: Database) {
    if (!database.pgPool) throw new Error('PgRateLimiter needs PostgreSQL');
    this.#db = database.db;
    this.#pool = database.pgPool;
  }

  async reset(key: string): Promise<void> {
    await sql`DELETE FROM rate_limits WHERE bucket = ${key}`.execute(this.#db);
  }

  /** Admits (and records) or refuses one request; `_now` is unused: the database's clock decides. */
  consume(key: string, rule: RateLimitRule, _now: number): Promise<RateLimitDecision> {
    const frac = `0.${String(randomInt(1, 1_000_000_000)).padStart(9, '0')}`;
    return new Promise((resolve, reject) => this.#groups.add({ key, rule, frac, resolve, reject }));
  }

  async #decide(group: Pending[]): Promise<void> {
    let result: pg.QueryResult<{ bucket: string; hits: string[]; now_us: string }>;
    try {
      result = await this.#pool.query({
        name: 'cms_rate_limit_consume_v1',
        text: CONSUME_SQL,
        values: [group.map((p) => p.key), group.map((p) => p.frac), group.map((p) => p.rule.limit), group.map((p) => p.rule.windowMs * 1000)],
      });
    } catch (err) {
      for (const p of group) p.reject(err);
      return;
    }
    const byBucket = new Map(result.rows.map((r) => [r.bucket, r]));
    for (const p of group) {
      const row = byBucket.get(p.key);
      const hits = row?.hits ?? [];
      const now = Number(row?.now_us ?? Date.now() * 1000) / 1000;
      const suffix = p.frac.slice(1); // ".123456789"
      const position = hits.findIndex((h) => h.endsWith(suffix) && h.slice(h.indexOf('.')) === suffix);
      const allowed = position >= 0;
      const oldest = hits.length ? Math.floor(Number(hits[0])) / 1000 : now;
      p.resolve({
        allowed,
        // What was left right after this request, also when others of its group came after it.
        remaining: Math.max(0, p.rule.limit - (allowed ? position + 1 : hits.length)),
        resetMs: Math.max(0, Math.ceil(oldest + p.rule.windowMs - now)),
      });
    }
  }
}

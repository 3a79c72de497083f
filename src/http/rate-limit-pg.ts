/**
 * Rate limits exact across processes (issue 4 item 2; decisions.md §4): the sliding log of each bucket
 * lives in one `rate_limits` row, and a request is admitted by a single INSERT … ON CONFLICT DO UPDATE.
 * The conflicting row is locked and re-read at its latest version, so concurrent requests for a bucket,
 * from any number of processes, are decided one after the other: never more than `limit` admissions in
 * any window. Each admitted request appends `now + a random fraction`, so the statement's own entry
 * can be recognised in the returned log.
 */
import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { RateLimitDecision, RateLimiter, RateLimitRule } from './rate-limit.ts';

export class PgRateLimiter implements RateLimiter {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  async reset(key: string): Promise<void> {
    await sql`DELETE FROM rate_limits WHERE bucket = ${key}`.execute(this.#db);
  }

  async consume(key: string, rule: RateLimitRule, _now: number): Promise<RateLimitDecision> {
    // The time is the database's, read after the row lock is held: a request that waited for a pooled
    // connection or for the lock is logged at the moment it is admitted, not when it arrived, so no
    // window can ever hold more than `limit` admissions (and several hosts need no shared clock).
    const frac = `0.${String(randomInt(1, 1_000_000_000)).padStart(9, '0')}`;
    const { rows } = await sql<{ hits: string[]; now_us: string }>`
      INSERT INTO rate_limits AS r (bucket, hits)
      VALUES (${key}, ARRAY[floor(extract(epoch FROM clock_timestamp()) * 1000000) + ${frac}::numeric])
      ON CONFLICT (bucket) DO UPDATE SET hits = (
        SELECT CASE WHEN cardinality(k.kept) < ${rule.limit} THEN k.kept || (c.now + ${frac}::numeric) ELSE k.kept END
        FROM (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000000)::numeric AS now) c,
             LATERAL (SELECT coalesce(array_agg(h ORDER BY h), '{}') AS kept FROM unnest(r.hits) AS h
                      WHERE floor(h) > c.now - ${rule.windowMs * 1000}) k)
      RETURNING hits::text[] AS hits, floor(extract(epoch FROM clock_timestamp()) * 1000000)::text AS now_us`.execute(this.#db);
    const hits = rows[0]?.hits ?? [];
    const now = Number(rows[0]?.now_us ?? Date.now() * 1000) / 1000;
    const suffix = frac.slice(1);
    const allowed = hits.some((h) => h.endsWith(suffix) && h.slice(h.indexOf('.')) === suffix);
    const oldest = hits.length ? Math.floor(Number(hits[0])) / 1000 : now;
    return {
      allowed,
      remaining: Math.max(0, rule.limit - hits.length),
      resetMs: Math.max(0, Math.ceil(oldest + rule.windowMs - now)),
    };
  }
}

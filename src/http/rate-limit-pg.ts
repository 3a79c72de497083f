/**
 * Rate limits exact across processes (docs/decisions.md#4-rate-limits), over PostgreSQL's
 * `rate_limit_logs` (the statement, and why it is exact: db/rate-limits.ts).
 *
 * Throughput: the requests that arrive in one turn of the event loop are decided by ONE
 * statement (a group, like the group commit of accepted sends), run as a named prepared statement, so
 * the database parses and plans it once per connection and commits once per group instead of once per
 * request.
 */
import type { Database } from '../db/database.ts';
import { consumeRateLimits, deleteRateLimitLog, rateLimitDecisions, type ConsumedBucket, type RateLimitRequest } from '../db/rate-limits.ts';
import { StatementGroups } from '../db/statement-groups.ts';
import type { RateLimitDecision, RateLimiter, RateLimitRule } from './rate-limit.ts';

interface Pending {
  request: RateLimitRequest;
  resolve: (d: RateLimitDecision) => void;
  reject: (err: unknown) => void;
}

/** Most requests decided by one statement, and statements in flight at once. */
const MAX_GROUP = 256;
const MAX_IN_FLIGHT = 4;

export class PgRateLimiter implements RateLimiter {
  readonly #database: Database;
  readonly #groups = new StatementGroups<Pending>((group) => this.#decide(group), { maxGroup: MAX_GROUP, maxInFlight: MAX_IN_FLIGHT });

  /** `database` must be PostgreSQL (the embedded default keeps its limits in memory). */
  constructor(database: Database) {
    if (!database.pgPool) throw new Error('PgRateLimiter needs PostgreSQL');
    this.#database = database;
  }

  async reset(key: string): Promise<void> {
    await deleteRateLimitLog(this.#database.db, key);
  }

  /** Admits (and records) or refuses one request; `_now` is unused: the database's clock decides. */
  consume(key: string, rule: RateLimitRule, _now: number): Promise<RateLimitDecision> {
    const request: RateLimitRequest = { key, limit: rule.limit, windowMs: rule.windowMs };
    return new Promise((resolve, reject) => this.#groups.add({ request, resolve, reject }));
  }

  async #decide(group: Pending[]): Promise<void> {
    const requests = group.map((p) => p.request);
    let rows: ConsumedBucket[];
    try {
      rows = await consumeRateLimits(this.#database, requests);
    } catch (err) {
      for (const p of group) p.reject(err);
      return;
    }
    const decisions = rateLimitDecisions(rows, requests);
    for (let i = 0; i < group.length; i++) group[i].resolve(decisions[i]);
  }
}

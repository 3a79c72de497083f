/**
 * Authentication of the public API (docs/api.md "At a glance"; docs/decisions.md#1-request-handling-order, step 3): the `service-api-key`
 * header names a company API key. Lookups are cached for at most `ttlMs` (default 2 s), so a key revoked
 * in another process stops working within that time; a revocation in this process takes effect at once.
 * `last_used_at` is written in the background, at most once per flush interval per key. The cache's
 * time is the service's clock (tests pass a fake one).
 */
import { LRUCache } from 'lru-cache';
import { systemClock, type Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
import { findApiKey, hashApiKey, touchApiKeys, type ApiKeyLookupCache, type AuthContext } from '../domain/api-keys.ts';

export type AuthResult = { ok: true; auth: AuthContext } | { ok: false; detail: 'Not authenticated' | 'Invalid API key' };

export class ApiKeyAuthenticator implements ApiKeyLookupCache {
  readonly #db: Db;
  readonly #cache: LRUCache<string, AuthContext | false>;
  readonly #used = new Set<number>();
  readonly #timer: NodeJS.Timeout;

  constructor(db: Db, opts: { ttlMs?: number; flushMs?: number; clock?: Clock } = {}) {
    this.#db = db;
    this.#cache = new LRUCache({ max: 50_000, ttl: opts.ttlMs ?? 2_000, perf: opts.clock ?? systemClock });
    this.#timer = setInterval(() => void this.flush().catch(() => {}), opts.flushMs ?? 5_000);
    this.#timer.unref();
  }

  /** Resolves the header value to a company, or to the 401 detail to answer. */
  async authenticate(header: string | undefined): Promise<AuthResult> {
    if (header === undefined || header === '') return { ok: false, detail: 'Not authenticated' };
    const cacheKey = hashApiKey(header).toString('base64');
    let auth = this.#cache.get(cacheKey);
    if (auth === undefined) {
      auth = (await findApiKey(this.#db, header)) ?? false;
      this.#cache.set(cacheKey, auth);
    }
    if (!auth) return { ok: false, detail: 'Invalid API key' };
    this.#used.add(auth.keyId);
    return { ok: true, auth };
  }

  /**
   * Drops cached lookups so that changes (revocation, subscription, connector) apply at once here;
   * called by the domain's writes that take this object (revokeApiKey, updateCompany, setConnector).
   */
  invalidate(): void {
    this.#cache.clear();
  }

  /** Writes `last_used_at` for the keys used since the last flush. */
  async flush(): Promise<void> {
    if (this.#used.size === 0) return;
    const ids = [...this.#used];
    this.#used.clear();
    await touchApiKeys(this.#db, ids, new Date());
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush().catch(() => {});
  }
}

/**
 * Rate limits (docs/decisions.md#4-rate-limits): per company and operation, sliding semantics: never more accepted
 * requests than the limit in any window of that length. A limiter keeps the times of the accepted
 * requests of each key (a sliding log), so the check is exact, not an approximation by fixed windows.
 */
import type { RateLimitDecision } from '../db/rate-limits.ts';

export type { RateLimitDecision };

/** One operation's limit, e.g. 20 per 1 second, with the text the 429 body carries. */
export interface RateLimitRule {
  readonly name: string;      // the operation, part of the key and of the RateLimit-Policy header
  readonly limit: number;     // requests
  readonly windowMs: number;  // window length in milliseconds
  readonly text: string;      // "20 per 1 second"
}

/** A store of sliding logs; `consume` admits and records a request, or refuses it without recording. */
export interface RateLimiter {
  consume(key: string, rule: RateLimitRule, now: number): Promise<RateLimitDecision>;
  /** Forgets a key's log, so its next request starts a fresh window (tests; operator resets). */
  reset(key: string): Promise<void>;
  close?(): Promise<void>;
}

/** The limits of the four public operations (docs/decisions.md#4-rate-limits). */
export const RULES = {
  createSegment: { name: 'create_segment', limit: 10, windowMs: 1_000, text: '10 per 1 second' },
  manageSegmentContacts: { name: 'segment_contacts', limit: 1, windowMs: 60_000, text: '1 per 1 minute' },
  triggerAutomation: { name: 'trigger_automation', limit: 20, windowMs: 1_000, text: '20 per 1 second' },
  connectorSend: { name: 'connector_send', limit: 1, windowMs: 10_000, text: '1 per 10 second' },
} as const satisfies Record<string, RateLimitRule>;

/**
 * In-process sliding log: exact for one process (the embedded default, where one process owns the
 * database). Each key holds at most `limit` timestamps; keys idle for a whole window are dropped.
 */
export class MemoryRateLimiter implements RateLimiter {
  readonly #logs = new Map<string, { times: number[]; windowMs: number }>();
  #sweeps = 0;

  async consume(key: string, rule: RateLimitRule, now: number): Promise<RateLimitDecision> {
    let log = this.#logs.get(key);
    if (!log) {
      log = { times: [], windowMs: rule.windowMs };
      this.#logs.set(key, log);
    }
    const times = log.times;
    // A request at time t blocks the window (t, t + windowMs]: drop those that have left it.
    while (times.length > 0 && times[0] + rule.windowMs <= now) times.shift();
    if (++this.#sweeps % 10_000 === 0) this.#sweep(now);
    if (times.length >= rule.limit) {
      return { allowed: false, remaining: 0, resetMs: times[0] + rule.windowMs - now };
    }
    times.push(now);
    return { allowed: true, remaining: rule.limit - times.length, resetMs: times[0] + rule.windowMs - now };
  }

  async reset(key: string): Promise<void> {
    this.#logs.delete(key);
  }

  #sweep(now: number): void {
    for (const [key, log] of this.#logs) {
      const last = log.times.at(-1);
      if (last === undefined || last + log.windowMs <= now) this.#logs.delete(key);
    }
  }
}

/** The one rate-limit key of a company's requests under a rule: `<company id>:<rule name>`. */
export function rateLimitKey(companyId: number, rule: Pick<RateLimitRule, 'name'>): string {
  return `${companyId}:${rule.name}`;
}

/** The 429 headers: Retry-After (whole seconds) and the IETF RateLimit-Policy / RateLimit fields. */
export function rateLimitHeaders(rule: RateLimitRule, d: RateLimitDecision): Record<string, string> {
  const windowS = Math.max(1, Math.round(rule.windowMs / 1000));
  const resetS = Math.max(1, Math.ceil(d.resetMs / 1000));
  const headers: Record<string, string> = {
    'RateLimit-Policy': `"${rule.name}";q=${rule.limit};w=${windowS}`,
    'RateLimit': `"${rule.name}";r=${d.remaining};t=${resetS}`,
  };
  if (!d.allowed) headers['Retry-After'] = String(resetS);
  return headers;
}

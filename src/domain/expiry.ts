/**
 * `expire_after` of automations and campaigns (docs/whatsapp.md "Messages that expire"): how long a
 * source's messages stay worth sending, a duration with its unit (`30m`, `24h`, `2d`; units ms, s, m,
 * h, d, as the durations of src/config.ts) from 1s to 30d, or null (forever). Automations default to
 * null, campaigns to {@link DEFAULT_CAMPAIGN_EXPIRE_AFTER}.
 */
import { parseDuration } from '../config.ts';

/** A campaign's expire_after unless given. */
export const DEFAULT_CAMPAIGN_EXPIRE_AFTER = '24h';

/** The JSON Schema pattern of an expire_after duration (the operator API's). */
export const EXPIRE_AFTER_PATTERN = '^[0-9]{1,9}(\\.[0-9]{1,3})?(ms|s|m|h|d)$';

/** The shortest expire_after a request may set (ms): one second (docs/security.md "Durations and times"). */
export const EXPIRE_AFTER_MIN_MS = 1_000;
/** The longest expire_after a request may set (ms): 30 days (docs/security.md "Durations and times"). */
export const EXPIRE_AFTER_MAX_MS = 30 * 86_400_000;
/**
 * Beyond this (ms, 100 years) a stored expire_after (only a value written before the range above was
 * checked) is taken as no expiry: the time it gives would not be a date.
 */
const EXPIRE_AFTER_STORED_MAX_MS = 36_500 * 86_400_000;

/**
 * The duration in ms, or undefined when `value` is not a positive duration with its unit (or one too
 * long to give a date). Reads stored values: the range a request may set is {@link expireAfterProblem}'s.
 */
export function expireAfterMs(value: string): number | undefined {
  if (!new RegExp(EXPIRE_AFTER_PATTERN).test(value)) return undefined;
  try {
    const n = parseDuration('expire_after', value);
    return n > 0 && n <= EXPIRE_AFTER_STORED_MAX_MS ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why `value` is not a valid expire_after for a request (null is valid), or undefined when it is: a
 * duration with its unit from 1s to 30d (docs/whatsapp.md "Messages that expire").
 */
export function expireAfterProblem(value: string | null): string | undefined {
  if (value === null) return undefined;
  const n = expireAfterMs(value);
  return n === undefined || n < EXPIRE_AFTER_MIN_MS || n > EXPIRE_AFTER_MAX_MS
    ? `expire_after must be a duration from 1s to 30d with its unit (ms, s, m, h or d), such as 30m, 24h or 2d, or null; got ${JSON.stringify(value)}`
    : undefined;
}

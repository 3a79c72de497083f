/**
 * `expire_after` of automations and campaigns (docs/whatsapp.md "Messages that expire"): how long a
 * source's messages stay worth sending, a duration with its unit (`30m`, `24h`, `2d`; units ms, s, m,
 * h, d, as the durations of src/config.ts) or null (forever). Automations default to null, campaigns
 * to {@link DEFAULT_CAMPAIGN_EXPIRE_AFTER}.
 */
import { parseDuration } from '../config.ts';

/** A campaign's expire_after unless given. */
export const DEFAULT_CAMPAIGN_EXPIRE_AFTER = '24h';

/** The JSON Schema pattern of an expire_after duration (the operator API's). */
export const EXPIRE_AFTER_PATTERN = '^[0-9]{1,9}(\\.[0-9]{1,3})?(ms|s|m|h|d)$';

/** The duration in ms, or undefined when `value` is not a positive duration with its unit. */
export function expireAfterMs(value: string): number | undefined {
  if (!new RegExp(EXPIRE_AFTER_PATTERN).test(value)) return undefined;
  try {
    const n = parseDuration('expire_after', value);
    return n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Why `value` is not a valid expire_after (null is valid), or undefined when it is. */
export function expireAfterProblem(value: string | null): string | undefined {
  if (value === null) return undefined;
  return expireAfterMs(value) === undefined ? `expire_after must be a positive duration with its unit (ms, s, m, h or d), such as 30m, 24h or 2d, or null; got ${JSON.stringify(value)}` : undefined;
}

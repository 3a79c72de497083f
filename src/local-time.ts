/**
 * The shared checks of local times and time zones (docs/operator-api.md delivery_hours), used by the
 * operator API's schema and checks (src/http/admin), the CLI's option parsers (src/cli/parse.ts) and
 * the delivery window arithmetic (src/domain/delivery-hours.ts). Pure, no dependencies.
 */

/** A 24-hour `HH:MM` wall-clock time, as a JSON Schema / RegExp pattern (captures hours, minutes). */
export const HHMM_PATTERN = '^([01][0-9]|2[0-3]):([0-5][0-9])$';

const HHMM = new RegExp(HHMM_PATTERN);

/** True when `text` is a 24-hour `HH:MM` time (`00:00` to `23:59`). */
export function isHhmm(text: string): boolean {
  return HHMM.test(text);
}

/** Minutes after midnight of an `HH:MM` text; throws on anything else. */
export function parseHhmm(text: string): number {
  const m = HHMM.exec(text);
  if (!m) throw new Error(`not an HH:MM time: ${JSON.stringify(text)}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

/** True when `tz` is a time zone name this runtime's ICU knows (IANA, e.g. `Europe/Berlin`, or `UTC`). */
export function isIanaTimeZone(tz: string): boolean {
  if (tz === '') return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

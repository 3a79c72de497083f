/**
 * Delivery hours of a company (docs/decisions.md#6-contacts-personalisation-sending, docs/operator-api.md `delivery_hours`): a daily window
 * `start`..`end` (HH:MM, 24-hour wall-clock time) in an IANA timezone. Campaign sends (4.4) outside the
 * window are held until it next opens.
 *
 * - `start < end`: open from start (inclusive) to end (exclusive) the same day, e.g. 09:00-21:00.
 * - `start > end`: the window crosses midnight, e.g. 22:00-06:00 is open 22:00..24:00 and 00:00..06:00.
 * - `start == end`: open all day.
 * Wall-clock times that a DST change skips (02:30 on a spring-forward day) open at the first instant
 * after the gap; times it repeats open at their first occurrence.
 */
import type { DeliveryHours } from '../db/schema.ts';
import { parseHhmm } from '../local-time.ts';

export { parseHhmm };

const MINUTE = 60_000;

interface LocalParts { year: number; month: number; day: number; minutes: number }

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Wall-clock date and minute-of-day of instant `ms` in `timeZone`. */
export function localParts(ms: number, timeZone: string): LocalParts & { seconds: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(ms)) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return { year: parts.year, month: parts.month, day: parts.day, minutes: parts.hour * 60 + parts.minute, seconds: parts.second };
}

/** Offset of `timeZone` from UTC at instant `ms`, in ms (positive east of Greenwich). */
function offsetAt(ms: number, timeZone: string): number {
  const p = localParts(ms, timeZone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, 0, p.minutes, p.seconds);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/**
 * The first instant at or after the wall-clock time `minutes` on the local date `y-m-d` in `timeZone`
 * (ms since the epoch). Inside a DST gap this is the end of the gap.
 */
export function instantOf(y: number, m: number, d: number, minutes: number, timeZone: string): number {
  const wall = Date.UTC(y, m - 1, d, 0, minutes);
  // Two candidate offsets (before and after a possible change) give at most two candidate instants.
  const guesses = [wall - offsetAt(wall - 43_200_000, timeZone), wall - offsetAt(wall + 43_200_000, timeZone)];
  const exact = guesses.filter((t) => localWall(t, timeZone) === wall);
  if (exact.length) return Math.min(...exact);
  // A skipped wall-clock time: open at the first minute whose wall clock is past it (the jump).
  let t = Math.min(...guesses);
  while (localWall(t, timeZone) < wall) t += MINUTE;
  return t;
}

/**
 * Every instant (ms, ascending) whose wall clock in `timeZone` reads `minutes` on the local date
 * `y-m-d`: none inside a DST gap (spring forward), two inside an overlap (fall back), else one.
 */
export function wallClockInstants(y: number, m: number, d: number, minutes: number, timeZone: string): number[] {
  const wall = Date.UTC(y, m - 1, d, 0, minutes);
  const guesses = [wall - offsetAt(wall - 43_200_000, timeZone), wall - offsetAt(wall + 43_200_000, timeZone)];
  return [...new Set(guesses.filter((t) => localWall(t, timeZone) === wall))].sort((a, b) => a - b);
}

function localWall(ms: number, timeZone: string): number {
  const p = localParts(ms, timeZone);
  return Date.UTC(p.year, p.month - 1, p.day, 0, p.minutes);
}

/** True when `minuteOfDay` lies in the window (see the module comment for the three shapes). */
export function inWindow(minuteOfDay: number, start: number, end: number): boolean {
  if (start === end) return true;
  if (start < end) return minuteOfDay >= start && minuteOfDay < end;
  return minuteOfDay >= start || minuteOfDay < end;
}

/**
 * When a message may be sent at instant `now` (ms): `now` itself when `hours` is null or the window is
 * open, otherwise the instant the window next opens (always > now). Throws on a malformed window or an
 * unknown timezone (companies are validated on write, so this means corrupt data).
 */
export function nextSendTime(hours: DeliveryHours | null | undefined, now: number): number {
  if (!hours) return now;
  const start = parseHhmm(hours.start);
  const end = parseHhmm(hours.end);
  const local = localParts(now, hours.timezone);
  if (inWindow(local.minutes, start, end)) return now;
  // Closed: the next opening is today's start if it is still ahead, else tomorrow's.
  for (let dayOffset = 0; dayOffset <= 2; dayOffset++) {
    const date = new Date(Date.UTC(local.year, local.month - 1, local.day + dayOffset));
    const t = instantOf(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), start, hours.timezone);
    if (t > now) return t;
  }
  throw new Error('no opening of the delivery window within two days');
}

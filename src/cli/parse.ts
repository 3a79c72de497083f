/**
 * Option-value parsers for commander (`.argParser`). Each throws commander's
 * `InvalidArgumentError`, which commander reports as a usage error naming the option.
 */
import { InvalidArgumentError } from 'commander';
import { isHhmm, isIanaTimeZone } from '../local-time.ts';
import type { DeliveryHours } from './api/types.ts';

/**
 * `09:00-21:00@Europe/Berlin` → `{start: "09:00", end: "21:00", timezone: "Europe/Berlin"}`;
 * `none` → the string `'none'` (no restriction; sent as null — commander turns a parser's null
 * into ''). Times are 24-hour `HH:MM`; the zone must be an IANA name.
 */
export function parseDeliveryHours(value: string): DeliveryHours | 'none' {
  const v = value.trim();
  if (v.toLowerCase() === 'none') return 'none';
  const m = /^([^-@]+)-([^-@]+)@(.+)$/.exec(v);
  if (!m || !isHhmm(m[1]) || !isHhmm(m[2])) {
    throw new InvalidArgumentError('expected HH:MM-HH:MM@Area/City, e.g. 09:00-21:00@Europe/Berlin, or "none".');
  }
  const timezone = m[3];
  if (!isIanaTimeZone(timezone)) {
    throw new InvalidArgumentError(`unknown time zone "${timezone}" (IANA name expected, e.g. Europe/Berlin).`);
  }
  return { start: m[1], end: m[2], timezone };
}

/** Two-letter ISO 3166-1 country code, upper-cased (`de` → `DE`). */
export function parseCountry(value: string): string {
  const v = value.trim();
  if (!/^[A-Za-z]{2}$/.test(v)) throw new InvalidArgumentError('expected a two-letter country code, e.g. DE.');
  return v.toUpperCase();
}

/** A whole number ≥ 1. */
export function parsePositiveInt(value: string): number {
  const v = value.trim();
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError('expected a whole number of at least 1.');
  }
  return n;
}

/** A non-empty string (after trimming), for ids and names. */
export function parseNonEmpty(value: string): string {
  const v = value.trim();
  if (v === '') throw new InvalidArgumentError('must not be empty.');
  return v;
}

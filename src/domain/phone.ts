/**
 * Phone numbers and digests (docs/decisions.md#5-phone-numbers-and-digests): numbers are normalised to E.164 with libphonenumber-js,
 * a number without a country code taking the company's default country; a digest is the lowercase hex
 * SHA-256 of the E.164 form with or without its leading `+`.
 */
import { createHash } from 'node:crypto';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';

/**
 * Parsing and validating one number with libphonenumber-js costs about 25 µs, half the CPU of a 50-contact
 * trigger. Numbers recur (the same customers get message after message), so results are memoised per
 * default country and text; the answer for a given input never changes.
 *
 * The memo is two generations of plain Maps per country (at most MEMO_SIZE entries each): when the young
 * one is full it becomes the old one and the previous old one is dropped; a hit in the old one is copied
 * into the young one. That keeps the numbers in use, like an LRU, at the cost of one Map lookup of the
 * raw text, without building a key string per lookup (measured with `perf`: lru-cache's lookup of
 * `country + text` was 4% of the service's CPU under the trigger benchmark).
 */
const MEMO_SIZE = 50_000;
interface Generations { young: Map<string, string | false>; old: Map<string, string | false> }
const memo = new Map<string, Generations>();
/** countryOf's memo: E.164 -> ISO 3166 alpha-2 ('' for none); filled by countryOf and by toE164. */
const countries = new Map<string, string>();

function remember(g: Generations, raw: string, e164: string | false): void {
  if (g.young.size >= MEMO_SIZE) {
    g.old = g.young;
    g.young = new Map();
  }
  g.young.set(raw, e164);
}

/** Returns the E.164 form of `raw` (e.g. `+4915112345678`), or null when it is not a valid number. */
export function toE164(raw: string, defaultCountry: string): string | null {
  if (raw.length > 64) return null;
  let g = memo.get(defaultCountry);
  if (!g) memo.set(defaultCountry, (g = { young: new Map(), old: new Map() }));
  let known = g.young.get(raw);
  if (known === undefined) {
    known = g.old.get(raw);
    if (known !== undefined) remember(g, raw, known);
  }
  if (known !== undefined) return known || null;
  const parsed = parsePhoneNumberFromString(raw, { defaultCountry: defaultCountry as CountryCode, extract: false });
  const e164 = parsed && parsed.isValid() ? parsed.number : null;
  remember(g, raw, e164 ?? false);
  // Input already in E.164 form is parsed exactly as countryOf parses it (a default country does not
  // apply to a number with `+`), so this parse's country is countryOf's answer: a new contact's
  // number is then parsed and validated once, not twice.
  if (e164 !== null && raw === e164 && !countries.has(e164)) rememberCountry(e164, parsed!.country ?? '');
  return e164;
}

function rememberCountry(e164: string, country: string): void {
  if (countries.size >= MEMO_SIZE) countries.clear();
  countries.set(e164, country);
}

/**
 * The ISO 3166 alpha-2 country of an E.164 number (libphonenumber-js), or '' when the number belongs to
 * no country (+800, +882, ...) or is not valid. Memoised like toE164 (at most MEMO_SIZE numbers, then
 * the memo starts again).
 */
export function countryOf(e164: string): string {
  const known = countries.get(e164);
  if (known !== undefined) return known;
  const parsed = e164.length <= 64 ? parsePhoneNumberFromString(e164, { extract: false }) : undefined;
  const country = parsed && parsed.isValid() ? parsed.country ?? '' : '';
  rememberCountry(e164, country);
  return country;
}

/** SHA-256 of a string's UTF-8 bytes. */
export function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** The two digests that identify an E.164 number: of `+4915...` and of `4915...`. */
export function phoneDigests(e164: string): { plus: Buffer; bare: Buffer } {
  return { plus: sha256(e164), bare: sha256(e164.slice(1)) };
}

const HEX64 = /^[0-9a-fA-F]{64}$/;

/** True when `text` is a hex SHA-256 digest (64 hex digits, any case). */
export function isDigest(text: string): boolean {
  return HEX64.test(text);
}

/** True when `code` is an ISO 3166-1 alpha-2 region libphonenumber-js knows. */
export { isSupportedCountry } from 'libphonenumber-js/max';

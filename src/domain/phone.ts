/**
 * Phone numbers and digests (decisions.md §5): numbers are normalised to E.164 with libphonenumber-js,
 * a number without a country code taking the company's default country; a digest is the lowercase hex
 * SHA-256 of the E.164 form with or without its leading `+`.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';

/**
 * Parsing and validating one number with libphonenumber-js costs about 25 µs, half the CPU of a 50-contact
 * trigger. Numbers recur (the same customers get message after message), so results are memoised per
 * (default country, text); the answer for a given input never changes.
 */
const memo = new LRUCache<string, string | false>({ max: 100_000 });

/** Returns the E.164 form of `raw` (e.g. `+4915112345678`), or null when it is not a valid number. */
export function toE164(raw: string, defaultCountry: string): string | null {
  if (raw.length > 64) return null;
  const key = defaultCountry + raw;
  const known = memo.get(key);
  if (known !== undefined) return known || null;
  const parsed = parsePhoneNumberFromString(raw, { defaultCountry: defaultCountry as CountryCode, extract: false });
  const e164 = parsed && parsed.isValid() ? parsed.number : null;
  memo.set(key, e164 ?? false);
  return e164;
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

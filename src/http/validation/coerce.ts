/**
 * Pydantic v2 (pydantic-core 2.46) lax coercions in Python mode, as FastAPI applies them to
 * `json.loads` output (docs/decisions.md#1-request-handling-order, step 5):
 *
 * - str to int: a JSON-style integer; else trimmed (Unicode White_Space), one leading `+`,
 *   leading zeros, a `.0+` suffix and single underscores between digits are accepted;
 *   more than 4300 characters is `int_parsing_size`;
 * - float to int: finite, integral, strictly inside (-2^63, 2^63);
 * - to bool: `0`/`1` (ints, integral floats), and ASCII-case-insensitive
 *   `0 f n no off false` / `1 t y on yes true` (no trimming).
 *
 * Functions return the value, or the Pydantic error type as a string.
 */

import { normalizeInt } from './values.ts';

/** Int coercion failures. */
export type IntErrorType = 'int_parsing' | 'int_parsing_size' | 'finite_number' | 'int_from_float';

/** Rust's `char::is_whitespace` (Unicode White_Space), used by `str::trim`. */
export function isRustWhitespace(c: number): boolean {
  return (
    (c >= 0x09 && c <= 0x0d) || c === 0x20 || c === 0x85 || c === 0xa0 || c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  );
}

/** Rust's `str::trim`. */
export function rustTrim(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isRustWhitespace(s.charCodeAt(a))) a++;
  while (b > a && isRustWhitespace(s.charCodeAt(b - 1))) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/** jiter's `NumberInt::try_from`: the whole string must be a JSON integer. */
function jiterInt(s: string): number | bigint | 'other' | 'range' {
  const len = s.length;
  let i = s.charCodeAt(0) === 0x2d ? 1 : 0;
  if (i >= len) return 'other';
  const first = s.charCodeAt(i);
  if (first === 0x30) return i + 1 === len ? 0 : 'other';
  if (first < 0x31 || first > 0x39) return 'other';
  i++;
  while (i < len && isDigit(s.charCodeAt(i))) i++;
  if (i > 4300) return 'range';
  if (i !== len) return 'other';
  return len - (s.charCodeAt(0) === 0x2d ? 1 : 0) <= 15 ? Number(s) || 0 : normalizeInt(BigInt(s));
}

/** pydantic-core's `strip_leading_zeros`; null where it gives None. */
function stripLeadingZeros(s: string): string | null {
  if (s.length === 0) return null;
  const first = s.charCodeAt(0);
  if (first !== 0x30) return (first >= 0x31 && first <= 0x39) || first === 0x2d ? s : null;
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x30 || c === 0x5f) continue;
    if ((c >= 0x31 && c <= 0x39) || c === 0x2d) return s.slice(i);
    if (c === 0x2e) return s.slice(i - 1);
    return null;
  }
  return s.slice(-1);
}

/** pydantic-core's `strip_underscores`. */
function stripUnderscores(s: string): string | null {
  if (s.startsWith('_') || s.endsWith('_') || !s.includes('_') || s.includes('__')) return null;
  return s.replaceAll('_', '');
}

/** pydantic-core's `clean_int_str`. */
function cleanIntStr(input: string): string | null {
  const lenBefore = input.length;
  let s = rustTrim(input);
  if (s.startsWith('+')) {
    if (s.startsWith('+-')) return null;
    s = s.slice(1);
  }
  let negative = false;
  if (s.startsWith('-')) {
    if (s.startsWith('--') || s.startsWith('-+')) return null;
    negative = true;
    s = s.slice(1);
  }
  const stripped = stripLeadingZeros(s);
  if (stripped === null) return null;
  s = stripped;
  const dot = s.indexOf('.');
  if (dot >= 0 && dot < s.length - 1 && /^0+$/.test(s.slice(dot + 1))) s = s.slice(0, dot);
  const sign = negative ? '-' : '';
  const noUnderscores = stripUnderscores(s);
  if (noUnderscores !== null) return sign + noUnderscores;
  if (lenBefore === s.length) return null;
  return sign + s;
}

/** pydantic-core's `str_as_int` (the caller has already refused lone surrogates). */
export function strAsInt(s: string): number | bigint | IntErrorType {
  const direct = jiterInt(s);
  if (direct === 'range') return 'int_parsing_size';
  if (direct !== 'other') return direct;
  const cleaned = cleanIntStr(s);
  if (cleaned === null) return 'int_parsing';
  const again = jiterInt(cleaned);
  return typeof again === 'string' ? 'int_parsing' : again;
}

const I64_BOUND = 9223372036854775808; // i64::MAX as f64 (2^63)

/** pydantic-core's `float_as_int`. */
export function floatAsInt(f: number): number | bigint | IntErrorType {
  if (!Number.isFinite(f)) return 'finite_number';
  if (f % 1 !== 0) return 'int_from_float';
  if (f > -I64_BOUND && f < I64_BOUND) return Number.isSafeInteger(f) ? (f === 0 ? 0 : f) : BigInt(f);
  return 'int_parsing_size';
}

const FALSE_WORDS = new Set(['f', 'n', 'no', 'off', 'false']);
const TRUE_WORDS = new Set(['t', 'y', 'on', 'yes', 'true']);

/** pydantic-core's `str_as_bool`; null means `bool_parsing`. */
export function strAsBool(s: string): boolean | null {
  if (s === '0') return false;
  if (s === '1') return true;
  if (s.length > 5) return null;
  const lower = asciiLower(s);
  if (FALSE_WORDS.has(lower)) return false;
  if (TRUE_WORDS.has(lower)) return true;
  return null;
}

function asciiLower(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out += c >= 0x41 && c <= 0x5a ? String.fromCharCode(c + 32) : s[i];
  }
  return out;
}

/** i64 range test for Python ints (bool coercion accepts only 0 and 1 within it). */
export function inI64(n: number | bigint): boolean {
  return typeof n === 'number' || (n >= -9223372036854775808n && n <= 9223372036854775807n);
}

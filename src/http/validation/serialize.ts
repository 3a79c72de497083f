/**
 * Python-compatible compact JSON output, as FastAPI's JSONResponse writes it:
 * `json.dumps(v, ensure_ascii=False, separators=(",", ":"))` (docs/decisions.md#1-request-handling-order, step 5).
 *
 * - strings: `"` `\` and control characters escaped like Python (`\n`, `\u001f`, lowercase
 *   hex), everything else (DEL, U+2028, emoji) written raw;
 * - Python ints (JS numbers that are integers, bigints) in decimal; floats ({@link PyFloat},
 *   or non-integral JS numbers) like Python's `repr`: `1.0`, `1e+16`, `1e-05`, `-0.0`;
 * - dicts (`Map`s, or plain objects for our own data) in insertion order.
 *
 * Deliberate deviations where FastAPI answers 500 instead of writing a body:
 * NaN/±Infinity are written `null` (what Pydantic's JSON mode emits), and lone surrogates
 * are written as `\udXXX` escapes (valid JSON for the same Python string).
 */

import { PyFloat } from './values.ts';

/** Serialises a PyValue (or plain JSON-like data) the way the original service does. */
export function pyJsonDumps(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'string':
      return pyQuote(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      if (!Number.isInteger(v)) return pyFloatRepr(v);
      return v === 0 ? '0' : Math.abs(v) < 1e21 ? String(v) : BigInt(v).toString();
    case 'bigint':
      return v.toString();
    case 'object':
      break;
    default:
      return 'null';
  }
  if (v instanceof PyFloat) return pyFloatRepr(v.value);
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i === 0 ? '' : ',') + pyJsonDumps(v[i]);
    return out + ']';
  }
  let out = '{';
  let first = true;
  const entries: Iterable<[string, unknown]> = v instanceof Map ? v : Object.entries(v);
  for (const [k, x] of entries) {
    out += (first ? '' : ',') + pyQuote(k) + ':' + pyJsonDumps(x);
    first = false;
  }
  return out + '}';
}

const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;
const SHORT_ESCAPES: Record<number, string> = { 0x22: '\\"', 0x5c: '\\\\', 0x08: '\\b', 0x0c: '\\f', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t' };

/** A JSON string literal as Python writes it with ensure_ascii=False (see module doc). */
export function pyQuote(s: string): string {
  const wellFormed = s.isWellFormed();
  if (wellFormed && !NEEDS_ESCAPE.test(s)) return '"' + s + '"';
  let out = '"';
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let rep: string | undefined;
    if (c < 0x20 || c === 0x22 || c === 0x5c) {
      rep = SHORT_ESCAPES[c] ?? '\\u' + c.toString(16).padStart(4, '0');
    } else if (!wellFormed && c >= 0xd800 && c <= 0xdfff) {
      const d = s.charCodeAt(i + 1);
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        i++;
        continue;
      }
      rep = '\\u' + c.toString(16);
    }
    if (rep !== undefined) {
      out += s.slice(from, i) + rep;
      from = i + 1;
    }
  }
  return out + s.slice(from) + '"';
}

/** Python's `repr(float)` (shortest round-trip digits); `null` for NaN/±Infinity. */
export function pyFloatRepr(x: number): string {
  if (!Number.isFinite(x)) return 'null';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const exp = x.toExponential(); // shortest digits, e.g. "-1.2345e+21"
  const ePos = exp.indexOf('e');
  const neg = exp.charCodeAt(0) === 0x2d;
  const mantissa = exp.slice(neg ? 1 : 0, ePos);
  const digits = mantissa.length > 1 ? mantissa[0] + mantissa.slice(2) : mantissa;
  const e = Number(exp.slice(ePos + 1));
  const sign = neg ? '-' : '';
  if (e < -4 || e >= 16) {
    const m = digits.length > 1 ? digits[0] + '.' + digits.slice(1) : digits;
    const ee = Math.abs(e);
    return sign + m + 'e' + (e < 0 ? '-' : '+') + (ee < 10 ? '0' + ee : String(ee));
  }
  if (e < 0) return sign + '0.' + '0'.repeat(-e - 1) + digits;
  if (digits.length <= e + 1) return sign + digits + '0'.repeat(e + 1 - digits.length) + '.0';
  return sign + digits.slice(0, e + 1) + '.' + digits.slice(e + 1);
}

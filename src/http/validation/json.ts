/**
 * A JSON parser that behaves like CPython 3.11's `json.JSONDecoder().decode` (the C scanner),
 * as the original service's body parsing does (docs/decisions.md#1-request-handling-order, step 2):
 *
 * - same grammar: `NaN`, `Infinity`, `-Infinity` accepted; whitespace is only space, tab,
 *   CR, LF; control characters in strings refused; duplicate keys: last value, first position;
 * - same error messages and positions: {@link JsonDecodeError} carries Python's `msg` and
 *   `pos`, counted in code points (not UTF-16 units);
 * - values keep the int/float distinction and big ints (see values.ts);
 * - failures that are not JSONDecodeError in Python (an int literal longer than 4300 digits;
 *   nesting deeper than {@link MAX_DEPTH}, where Python hits its recursion limit) throw
 *   {@link JsonLimitError}: the service answers 400 for them.
 *
 * Nothing here can touch a prototype: objects are `Map`s.
 */

import { PyFloat, normalizeInt, type PyDict, type PyValue } from './values.ts';

/** Deepest accepted nesting of arrays/objects (docs/decisions.md#1-request-handling-order, step 2). */
export const MAX_DEPTH = 512;
/** Python's default `sys.get_int_max_str_digits()`. */
export const MAX_INT_DIGITS = 4300;

/** Python's `json.JSONDecodeError`: `msg` and `pos` (code points) as FastAPI reports them. */
export class JsonDecodeError extends Error {
  readonly msg: string;
  readonly pos: number;
  constructor(msg: string, pos: number) {
    super(`${msg}: char ${pos}`);
    this.msg = msg;
    this.pos = pos;
  }
}

/** A body Python fails to decode with another exception (ValueError, RecursionError). */
export class JsonLimitError extends Error {
  readonly reason: 'depth' | 'int_digits';
  constructor(reason: 'depth' | 'int_digits') {
    super(reason === 'depth' ? `nesting deeper than ${MAX_DEPTH}` : `int literal longer than ${MAX_INT_DIGITS} digits`);
    this.reason = reason;
  }
}

/**
 * Parses `text` like Python's `json.loads` (after bytes decoding).
 * @throws JsonDecodeError | JsonLimitError
 */
export function parsePythonJson(text: string): PyValue {
  return new Scanner(text).decode();
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

const SIMPLE_ESCAPES: Record<number, string> = {
  0x22: '"', 0x5c: '\\', 0x2f: '/', 0x62: '\b', 0x66: '\f', 0x6e: '\n', 0x72: '\r', 0x74: '\t',
};

class Scanner {
  private readonly s: string;
  private readonly len: number;
  /** Index just after the last value scanned. */
  private next = 0;
  private depth = 0;

  constructor(s: string) {
    this.s = s;
    this.len = s.length;
  }

  decode(): PyValue {
    const value = this.scanOnce(this.skipWs(0));
    const end = this.skipWs(this.next);
    if (end !== this.len) throw this.error('Extra data', end);
    return value;
  }

  private skipWs(i: number): number {
    while (i < this.len && isWs(this.s.charCodeAt(i))) i++;
    return i;
  }

  /** Error at UTF-16 index `at`, reported in code points like Python. */
  private error(msg: string, at: number): JsonDecodeError {
    let pos = at;
    for (let i = 0; i < at - 1; i++) {
      const c = this.s.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff) {
        const d = this.s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          pos--;
          i++;
        }
      }
    }
    return new JsonDecodeError(msg, pos);
  }

  private matches(at: number, word: string): boolean {
    return this.s.startsWith(word, at);
  }

  private scanOnce(idx: number): PyValue {
    const s = this.s;
    if (idx >= this.len) throw this.error('Expecting value', idx);
    switch (s.charCodeAt(idx)) {
      case QUOTE:
        return this.scanString(idx + 1);
      case 0x7b: // {
        return this.nested(idx, true);
      case 0x5b: // [
        return this.nested(idx, false);
      case 0x6e: // n
        if (this.matches(idx, 'null')) {
          this.next = idx + 4;
          return null;
        }
        break;
      case 0x74: // t
        if (this.matches(idx, 'true')) {
          this.next = idx + 4;
          return true;
        }
        break;
      case 0x66: // f
        if (this.matches(idx, 'false')) {
          this.next = idx + 5;
          return false;
        }
        break;
      case 0x4e: // N
        if (this.matches(idx, 'NaN')) {
          this.next = idx + 3;
          return new PyFloat(NaN);
        }
        break;
      case 0x49: // I
        if (this.matches(idx, 'Infinity')) {
          this.next = idx + 8;
          return new PyFloat(Infinity);
        }
        break;
      case 0x2d: // -
        if (this.matches(idx, '-Infinity')) {
          this.next = idx + 9;
          return new PyFloat(-Infinity);
        }
        break;
    }
    return this.matchNumber(idx);
  }

  private nested(idx: number, object: boolean): PyValue {
    if (++this.depth > MAX_DEPTH) throw new JsonLimitError('depth');
    const value = object ? this.parseObject(idx + 1) : this.parseArray(idx + 1);
    this.depth--;
    return value;
  }

  private parseObject(start: number): PyDict {
    const s = this.s;
    const map: PyDict = new Map();
    let idx = this.skipWs(start);
    if (idx >= this.len || s.charCodeAt(idx) !== 0x7d) {
      for (;;) {
        if (idx >= this.len || s.charCodeAt(idx) !== QUOTE) {
          throw this.error('Expecting property name enclosed in double quotes', idx);
        }
        const key = this.scanString(idx + 1);
        idx = this.skipWs(this.next);
        if (idx >= this.len || s.charCodeAt(idx) !== 0x3a) throw this.error("Expecting ':' delimiter", idx);
        const value = this.scanOnce(this.skipWs(idx + 1));
        map.set(key, value);
        idx = this.skipWs(this.next);
        if (idx < this.len && s.charCodeAt(idx) === 0x7d) break;
        if (idx >= this.len || s.charCodeAt(idx) !== 0x2c) throw this.error("Expecting ',' delimiter", idx);
        idx = this.skipWs(idx + 1);
      }
    }
    this.next = idx + 1;
    return map;
  }

  private parseArray(start: number): PyValue[] {
    const s = this.s;
    const list: PyValue[] = [];
    let idx = this.skipWs(start);
    if (idx >= this.len || s.charCodeAt(idx) !== 0x5d) {
      for (;;) {
        list.push(this.scanOnce(idx));
        idx = this.skipWs(this.next);
        if (idx < this.len && s.charCodeAt(idx) === 0x5d) break;
        if (idx >= this.len || s.charCodeAt(idx) !== 0x2c) throw this.error("Expecting ',' delimiter", idx);
        idx = this.skipWs(idx + 1);
      }
    }
    this.next = idx + 1;
    return list;
  }

  /** CPython's scanstring_unicode; `start` is just after the opening quote. */
  private scanString(start: number): string {
    const s = this.s;
    const len = this.len;
    const begin = start - 1;
    let out = '';
    let end = start;
    for (;;) {
      let next = end;
      let c = 0;
      for (; next < len; next++) {
        c = s.charCodeAt(next);
        if (c === QUOTE || c === BACKSLASH) break;
        if (c <= 0x1f) throw this.error('Invalid control character at', next);
      }
      if (c !== QUOTE && c !== BACKSLASH) throw this.error('Unterminated string starting at', begin);
      if (next > end) out = out === '' ? s.slice(end, next) : out + s.slice(end, next);
      next++;
      if (c === QUOTE) {
        this.next = next;
        return out;
      }
      if (next === len) throw this.error('Unterminated string starting at', begin);
      c = s.charCodeAt(next);
      if (c !== 0x75) {
        const simple = SIMPLE_ESCAPES[c];
        if (simple === undefined) throw this.error('Invalid \\escape', next - 1);
        out += simple;
        end = next + 1;
        continue;
      }
      next++;
      end = next + 4;
      if (end >= len) throw this.error('Invalid \\uXXXX escape', next - 1);
      const unit = this.hex4(next);
      if (unit < 0) throw this.error('Invalid \\uXXXX escape', end - 5);
      if (unit >= 0xd800 && unit <= 0xdbff && end + 6 < len && s.charCodeAt(end) === BACKSLASH && s.charCodeAt(end + 1) === 0x75) {
        const low = this.hex4(end + 2);
        if (low < 0) throw this.error('Invalid \\uXXXX escape', end + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          out += String.fromCharCode(unit, low);
          end += 6;
          continue;
        }
      }
      out += String.fromCharCode(unit);
    }
  }

  private hex4(at: number): number {
    let v = 0;
    for (let i = at; i < at + 4; i++) {
      const h = hexValue(this.s.charCodeAt(i));
      if (h < 0) return -1;
      v = (v << 4) | h;
    }
    return v;
  }

  /** CPython's _match_number_unicode. */
  private matchNumber(start: number): PyValue {
    const s = this.s;
    const last = this.len - 1;
    let idx = start;
    if (s.charCodeAt(idx) === 0x2d) {
      idx++;
      if (idx > last) throw this.error('Expecting value', start);
    }
    const first = s.charCodeAt(idx);
    if (first >= 0x31 && first <= 0x39) {
      idx++;
      while (idx <= last && isDigit(s.charCodeAt(idx))) idx++;
    } else if (first === 0x30) {
      idx++;
    } else {
      throw this.error('Expecting value', start);
    }
    let isFloat = false;
    if (idx < last && s.charCodeAt(idx) === 0x2e && isDigit(s.charCodeAt(idx + 1))) {
      isFloat = true;
      idx += 2;
      while (idx <= last && isDigit(s.charCodeAt(idx))) idx++;
    }
    if (idx < last && (s.charCodeAt(idx) | 0x20) === 0x65) {
      const eStart = idx;
      idx++;
      if (idx < last && (s.charCodeAt(idx) === 0x2d || s.charCodeAt(idx) === 0x2b)) idx++;
      while (idx <= last && isDigit(s.charCodeAt(idx))) idx++;
      if (isDigit(s.charCodeAt(idx - 1))) isFloat = true;
      else idx = eStart;
    }
    this.next = idx;
    const text = s.slice(start, idx);
    if (isFloat) return new PyFloat(Number(text));
    const digits = idx - start - (text.charCodeAt(0) === 0x2d ? 1 : 0);
    if (digits > MAX_INT_DIGITS) throw new JsonLimitError('int_digits');
    if (digits <= 15) {
      const n = Number(text);
      return n === 0 ? 0 : n;
    }
    return normalizeInt(BigInt(text));
  }
}

/**
 * The fast path for ordinary bodies: native `JSON.parse` (body.ts calls
 * {@link parseOrdinaryJson}) and a validator compiled from each model's schema ({@link compileFast}),
 * taken only where the result is provably the one of the exact path (json.ts + validate.ts,
 * docs/decisions.md#1-request-handling-order, steps 2 and 5, #2-request-models). Anything else DECLINES and the caller runs the
 * exact path, which also produces every error answer.
 *
 * Why `JSON.parse` reads what Python's `json.loads` reads (for the same decoded text): both
 * grammars are RFC 8259 plus, for Python only, `NaN`/`Infinity`/`-Infinity` (JSON.parse throws:
 * declined); the same four whitespace characters, the same escapes (each `\uXXXX` giving the same
 * UTF-16 units, lone surrogates included), control characters refused by both, duplicate keys
 * keeping the first position and the last value in both. Strings are therefore the same UTF-16
 * units; a number is the same double whenever the exact path makes a double of it. What differs is
 * handled here:
 * - the exact parse fails with a 400 for nesting deeper than 512 or an int literal over 4300 digits:
 *   {@link parseOrdinaryJson} declines whenever that could be the case;
 * - int versus float literal (`1` vs `1.0`), big ints (bigint in the exact path) and `-0` (0 for the
 *   literal `-0`, -0 for `-0.0`) cannot be told apart after JSON.parse: the validators accept a
 *   number only where every literal that gives it validates to the same value.
 */

import type { AnyType, FieldSpec, StrType } from './types.ts';
import { MAX_DEPTH, MAX_INT_DIGITS } from './json.ts';
import { codePoints, type PlainObject, type PlainValue } from './values.ts';

/** Returned by a fast validator that leaves the body to the exact path. */
export const DECLINE: unique symbol = Symbol('decline');

/** A compiled fast validator: the validated value (as the exact path returns it), or DECLINE. */
export type FastValidator = (v: unknown) => unknown;

/**
 * `JSON.parse(text)` when the exact parser (json.ts) is certain to succeed on `text` with the same
 * structure, DECLINE otherwise (malformed JSON, NaN/Infinity literals, possibly deeper than
 * MAX_DEPTH, a possible int literal of more than MAX_INT_DIGITS digits). Never throws.
 */
export function parseOrdinaryJson(text: string): unknown {
  let plain: unknown;
  try {
    plain = JSON.parse(text);
  } catch {
    return DECLINE;
  }
  if (text.length > 2 * MAX_DEPTH + 1 && tooManyOpeners(text) && deeperThan(plain, MAX_DEPTH)) return DECLINE;
  if (text.length > MAX_INT_DIGITS && mayHoldLongDigitRun(text)) return DECLINE;
  return plain;
}

/** More than MAX_DEPTH `{`/`[` characters anywhere (needed, not sufficient, for a too deep body). */
function tooManyOpeners(text: string): boolean {
  let n = 0;
  for (const opener of ['{', '[']) {
    for (let i = text.indexOf(opener); i >= 0; i = text.indexOf(opener, i + 1)) if (++n > MAX_DEPTH) return true;
  }
  return false;
}

/** Whether the parsed value nests arrays/objects deeper than `limit` (the exact parser's depth count). */
function deeperThan(v: unknown, limit: number): boolean {
  if (typeof v !== 'object' || v === null) return false;
  if (limit === 0) return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (deeperThan(v[i], limit - 1)) return true;
    return false;
  }
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) if (deeperThan(o[k], limit - 1)) return true;
  return false;
}

/**
 * Whether `text` may hold a run of more than MAX_INT_DIGITS ASCII digits. Any such run covers two
 * consecutive multiples of STRIDE (2 * STRIDE <= MAX_INT_DIGITS + 1), so only where two consecutive
 * sampled characters are digits is the run measured; each character is measured at most once.
 */
function mayHoldLongDigitRun(text: string): boolean {
  const STRIDE = (MAX_INT_DIGITS + 1) >> 1;
  let measuredTo = 0;
  for (let p = STRIDE; p < text.length; p += STRIDE) {
    if (!isDigit(text.charCodeAt(p)) || !isDigit(text.charCodeAt(p - STRIDE)) || p < measuredTo) continue;
    let a = p;
    let b = p;
    while (a > 0 && isDigit(text.charCodeAt(a - 1))) a--;
    while (b < text.length && isDigit(text.charCodeAt(b))) b++;
    if (b - a > MAX_INT_DIGITS) return true;
    measuredTo = b;
  }
  return false;
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/** JSON.parse's number where the exact path would make the same PlainValue of every literal giving it. */
function isUnambiguousNumber(n: number): boolean {
  return Number.isFinite(n) && !Object.is(n, -0) && (!Number.isInteger(n) || Number.isSafeInteger(n));
}

/**
 * `dict[str, Any]` contents as the exact path's `toPlain` gives them: null-prototype objects (same
 * own keys in the same order: both are JS objects built in the body's first-position order),
 * copied arrays, numbers only when unambiguous (see module doc).
 */
function copyJson(v: unknown): unknown {
  if (typeof v === 'number') return isUnambiguousNumber(v) ? v : DECLINE;
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    const out: PlainValue[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = copyJson(v[i]);
      if (x === DECLINE) return DECLINE;
      out[i] = x as PlainValue;
    }
    return out;
  }
  const o = v as Record<string, unknown>;
  const out = Object.create(null) as PlainObject;
  for (const k of Object.keys(o)) {
    const x = copyJson(o[k]);
    if (x === DECLINE) return DECLINE;
    out[k] = x as PlainValue;
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** str: accepted only when the exact path returns it unchanged (well-formed, within lengths, matching). */
function compileStr(t: StrType): FastValidator {
  const { minLength, maxLength, pattern } = t;
  return (v) => {
    if (typeof v !== 'string' || !v.isWellFormed()) return DECLINE;
    if (minLength !== undefined && v.length < 2 * minLength && codePoints(v) < minLength) return DECLINE;
    if (maxLength !== undefined && v.length > maxLength && codePoints(v) > maxLength) return DECLINE;
    if (pattern !== undefined && !pattern.regex.test(v)) return DECLINE;
    return v;
  };
}

/**
 * The fast validator of one schema type, over `JSON.parse` output. It returns exactly what
 * validate.ts returns for the exact parse of the same text, or DECLINE whenever validation would
 * fail or involve a lax coercion (strings to ints, bools from numbers ...). Ints: a safe integer
 * number (every literal giving it validates to it; -0 to 0); a model's validator is its `fast`.
 */
export function compileFast(t: AnyType): FastValidator {
  switch (t.kind) {
    case 'str':
      return compileStr(t);
    case 'int':
      return (v) => (typeof v === 'number' && Number.isSafeInteger(v) ? (v === 0 ? 0 : v) : DECLINE);
    case 'bool':
      return (v) => (typeof v === 'boolean' ? v : DECLINE);
    case 'literal': {
      const values = t.values;
      return (v) => (typeof v === 'string' && values.has(v) ? v : DECLINE);
    }
    case 'nullable': {
      const inner = compileFast(t.inner);
      return (v) => (v === null ? null : inner(v));
    }
    case 'list': {
      const item = compileFast(t.item);
      const { minLength, maxLength } = t;
      return (v) => {
        if (!Array.isArray(v)) return DECLINE;
        if ((maxLength !== undefined && v.length > maxLength) || (minLength !== undefined && v.length < minLength)) return DECLINE;
        const out: unknown[] = new Array(v.length);
        for (let i = 0; i < v.length; i++) {
          const x = item(v[i]);
          if (x === DECLINE) return DECLINE;
          out[i] = x;
        }
        return out;
      };
    }
    case 'dict':
      return (v) => (isObject(v) ? copyJson(v) : DECLINE);
    case 'model':
      return t.fast;
  }
}

/**
 * A model's fast validator: every required field present and every present field accepted by its
 * type's validator; absent optional fields take their default; unknown keys ignored (as validate.ts).
 * The output has the fields in declaration order, like the model's `build`. Generated code (one
 * function per model, field names as JSON string literals) so that every field read and the output
 * object have one fixed shape: V8 then reads them as named properties, a third of the cost of reads
 * by a computed name measured on the trigger body. Fields are read as own properties (a field name
 * that Object.prototype also has is read through hasOwn).
 */
export function compileModel(fields: readonly FieldSpec[]): FastValidator {
  const validators = fields.map((f) => compileFast(f.type));
  const defaults = fields.map((f) => f.default);
  let code = 'if (typeof v !== "object" || v === null || Array.isArray(v)) return D;\n';
  fields.forEach((f, i) => {
    const key = JSON.stringify(f.name);
    code += f.name in Object.prototype ? `let x${i} = Object.hasOwn(v, ${key}) ? v[${key}] : undefined;\n` : `let x${i} = v[${key}];\n`;
    code += `if (x${i} === undefined) ${f.required ? 'return D;' : `x${i} = d[${i}];`}\n`;
    code += `else if ((x${i} = f[${i}](x${i})) === D) return D;\n`;
  });
  code += `return { ${fields.map((f, i) => `${JSON.stringify(f.name)}: x${i}`).join(', ')} };`;
  const make = new Function('D', 'f', 'd', `return (v) => {\n${code}\n};`) as (d: typeof DECLINE, f: FastValidator[], defaults: unknown[]) => FastValidator;
  return make(DECLINE, validators, defaults);
}

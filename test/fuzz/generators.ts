/**
 * fast-check arbitraries derived from the JSON Schemas of the OpenAPI document: values that satisfy a
 * schema (with a bias to boundaries: lengths at their limits counted in code points, astral and control
 * characters, huge integers, deep but allowed nesting, unknown extra fields), and the raw JSON text
 * of such values (big integers and number spellings Python's `json` reads, via `JSON.rawJSON`).
 *
 * "Valid" follows the service's contract (docs/decisions.md#1-request-handling-order, #2-request-models, Pydantic semantics) where it is stricter
 * than plain JSON Schema: a typed string never holds a lone surrogate (Pydantic answers
 * `string_unicode`), and URL text avoids the characters whose whiteness differs between ECMAScript
 * `\s` and the Rust regex `\s` Pydantic uses (U+0085, U+FEFF, U+001C..U+001F).
 */
import fc from 'fast-check';
import { scalarValue } from '../helpers/arbitraries.ts';
import type { Schema } from './openapi.ts';

/** Deepest nesting of arrays and objects the service accepts (docs/decisions.md#1-request-handling-order: deeper is 400). */
export const MAX_NESTING = 512;
/** Longest integer literal the service accepts, in digits (docs/decisions.md#1-request-handling-order). */
export const MAX_INT_DIGITS = 4300;

/** Length in code points, as Python and Pydantic count it (a lone surrogate counts one). */
export function cpLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Characters that have broken parsers, databases and templates before. */
export const NASTY_CHARS: readonly string[] = [
  '\u0000', '\u0001', '\u0008', '\t', '\n', '\r', '\u001b', '\u001f', '\u007f', '\u0080', '\u0085', '\u00a0', '\u00ad',
  '\u0301', '\u200b', '\u200d', '\u2028', '\u2029', '\u202e', '\ufeff', '\ufffd', '\uffff', '\u{1F600}', '\u{1F1E9}',
  '\u{10FFFF}', '\u{E0001}', 'ß', 'İ', 'ﬀ', '"', '\\', '/', "'", '`', '<', '>', '&', '%', '{', '}', '$', '?', '#', '+', ' ',
];
const LONE_SURROGATES = ['\ud800', '\udbff', '\udc00', '\udfff'];

/** A single character from anywhere: printable ASCII, controls, the full Unicode range, nasty ones. */
const anyChar: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: scalarValue },
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_CHARS) },
);
/** Like anyChar, plus lone surrogates (valid only where any JSON value is, e.g. inside `variables`). */
const anyCharOrSurrogate: fc.Arbitrary<string> = fc.oneof({ weight: 12, arbitrary: anyChar }, { weight: 1, arbitrary: fc.constantFrom(...LONE_SURROGATES) });
const astralChar: fc.Arbitrary<string> = fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c));

/** Whitespace for either `\s` (ECMAScript) or Rust regex `\s` (Unicode White_Space). */
const EITHER_WHITESPACE = /[\s\u0085\u001c-\u001f]/u;
const urlChar = anyChar.filter((c) => !EITHER_WHITESPACE.test(c));

/** Strings with code point length in [min, max] made of `unit`, biased to short ones and to the bounds. */
function boundedString(unit: fc.Arbitrary<string>, min: number, max: number, typical = 24, light = false): fc.Arbitrary<string> {
  const short = Math.max(min, Math.min(max, typical));
  const parts: fc.WeightedArbitrary<string>[] = [{ weight: 12, arbitrary: fc.string({ unit, minLength: min, maxLength: short }) }];
  if (!light) {
    parts.push({ weight: 1, arbitrary: fc.string({ unit, minLength: max, maxLength: max }) });
    parts.push({ weight: 1, arbitrary: fc.string({ unit: astralChar, minLength: max, maxLength: max }) });
  }
  if (min > 0) parts.push({ weight: 1, arbitrary: fc.string({ unit, minLength: min, maxLength: min }) });
  // Two adjacent lone surrogates may pair up and shorten the text: keep only what fits.
  return fc.oneof(...parts).filter((s) => { const n = cpLength(s); return n >= min && n <= max; });
}

/** Phone-like texts: E.164, national, formatted, letters, digests, garbage. */
export function phoneArb(pool: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...pool) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom('+49151', '+1415', '0151', '+44 7700 ', '00491'), fc.stringMatching(/^[0-9]{4,9}$/)).map(([a, b]) => a + b) },
    { weight: 1, arbitrary: fc.constantFrom('+', '', '0', '+0000000000', '+999999999999999999', '+49 (151) 123-45-678', '+4915112345678;ext=1', 'tel:+4915112345678', '+٤٩١٥١١٢٣٤٥٦٧٨', '+４９１５１１２３４５６７８', '1'.repeat(64)) },
    { weight: 1, arbitrary: fc.stringMatching(/^[0-9a-fA-F]{64}$/) },
  );
}

/** Hints that make generated values hit existing rows: ids and phone numbers that exist. */
export interface Hints {
  /** Integers worth trying per property name (e.g. automation_id: the ids of this company's automations). */
  ids: Record<string, readonly number[]>;
  /** Phone numbers of existing contacts. */
  phones: readonly string[];
}

const RAW_MARK = '\u{F8FF}RAW-TOKEN\u{F8FF}';

/** A token JSON.rawJSON refuses (`NaN`, `Infinity`): written into the text by toJsonText. */
class NonJsonToken {
  readonly text: string;
  constructor(text: string) { this.text = text; }
  toJSON(): string { return RAW_MARK + this.text + RAW_MARK; }
}

/**
 * A value written as the given JSON text: number spellings and big integers via `JSON.rawJSON`, and
 * tokens only Python's `json` reads (`NaN`, `Infinity`, `-Infinity`).
 */
export function raw(text: string): unknown {
  try {
    return (JSON as unknown as { rawJSON(t: string): unknown }).rawJSON(text);
  } catch {
    return new NonJsonToken(text);
  }
}

/** Whether `v` stands for a raw JSON token rather than a JS value. */
export function isRaw(v: unknown): boolean {
  return v instanceof NonJsonToken || (JSON as unknown as { isRawJSON(x: unknown): boolean }).isRawJSON(v);
}

/** Integers of every size the service must accept: small, 32/64-bit boundaries, huge (up to 4300 digits). */
export function integerArb(hint: readonly number[] = []): fc.Arbitrary<unknown> {
  const parts: fc.WeightedArbitrary<unknown>[] = [
    { weight: 3, arbitrary: fc.integer({ min: -5, max: 50 }) },
    { weight: 2, arbitrary: fc.integer() },
    { weight: 1, arbitrary: fc.constantFrom(2147483647, 2147483648, -2147483648, -2147483649, 4294967296, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER) },
    { weight: 1, arbitrary: fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map((b) => raw(b.toString())) },
    { weight: 1, arbitrary: fc.constantFrom('9223372036854775807', '9223372036854775808', '-9223372036854775809', '18446744073709551616').map(raw) },
    // Spellings Pydantic's lax int takes from JSON: floats with no fraction.
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 99 }).map((n) => raw(`${n}.0`)) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: MAX_INT_DIGITS }).map((n) => raw('9'.repeat(n))) },
  ];
  if (hint.length) parts.push({ weight: 12, arbitrary: fc.constantFrom(...hint) });
  return fc.oneof(...parts);
}

/** An object from entries, with keys such as `__proto__` kept as own data properties. */
export function objectFrom(entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

/** Keys that have broken object handling: prototype names, empty, JSON-path and SQL punctuation. */
const nastyKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '', ' ', '$where', "a'b", 'a.b', '{{x}}', '0', '-1', 'length') },
  { weight: 6, arbitrary: fc.string({ unit: anyCharOrSurrogate, maxLength: 12 }) },
);

/** Any JSON value (with nasty keys, surrogates, huge and odd numbers), nested at most `depth` deep. */
export function anyJsonArb(depth: number): fc.Arbitrary<unknown> {
  const leaf: fc.Arbitrary<unknown> = fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: anyCharOrSurrogate, maxLength: 20 }) },
    { weight: 2, arbitrary: fc.integer() },
    { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
    { weight: 1, arbitrary: fc.constantFrom(true, false, null) },
    { weight: 1, arbitrary: fc.constantFrom('-0.0', '1e308', '1E-400', '-1.5e+10', '12345678901234567890123', '0.1', '1' + '0'.repeat(MAX_INT_DIGITS - 1)).map(raw) },
  );
  if (depth <= 0) return leaf;
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { weight: 6, arbitrary: leaf },
      { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 4 }) },
      { weight: 1, arbitrary: fc.array(fc.tuple(nastyKey, tie('value')), { maxLength: 4 }).map(objectFrom) },
    ),
  }));
  return fc.oneof(
    { weight: 20, arbitrary: value },
    // A chain of arrays and objects exactly as deep as allowed, or nearly.
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: Math.max(0, depth - 2), max: depth }), leaf, fc.boolean()).map(([d, v, obj]) => deepChain(d, v, obj)) },
  );
}

/** `v` wrapped in `depth` containers (alternating objects and arrays when `alternate`). */
export function deepChain(depth: number, v: unknown, alternate: boolean): unknown {
  let out = v;
  for (let i = 0; i < depth; i++) out = alternate && i % 2 === 0 ? objectFrom([['k', out]]) : [out];
  return out;
}

/** Context of one place in a schema while generating. */
interface Place {
  /** Property name the value belongs to (array items inherit their array's name). */
  name?: string;
  /** Containers (objects and arrays) around the value. */
  depth: number;
  /** Keep free-form data small (inside the items of an array at its maximum length). */
  light?: boolean;
}

/**
 * An arbitrary of values that satisfy `schema` (as docs/decisions.md reads it). Supports what the public
 * request schemas use: string (length, enum, the URL pattern), integer, boolean, null, array (item
 * counts), object (properties, required, additionalProperties: true), anyOf.
 */
export function validArb(schema: Schema, hints: Hints, place: Place = { depth: 0 }): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.anyOf)) return fc.oneof(...schema.anyOf.map((s: Schema) => validArb(s, hints, place)));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return integerArb(hints.ids[place.name ?? ''] ?? []);
    case 'string': {
      const min = schema.minLength ?? 0;
      const max = schema.maxLength ?? 64;
      if (schema.pattern !== undefined) return patternArb(schema.pattern, min, max, place.light);
      const text = boundedString(anyChar, min, max, 24, place.light);
      if (place.name === 'phone' || place.name === 'contacts') {
        return fc.oneof({ weight: 3, arbitrary: phoneArb(hints.phones).filter((p) => cpLength(p) >= min && cpLength(p) <= max) }, { weight: 1, arbitrary: text });
      }
      return text;
    }
    case 'array': {
      const min = schema.minItems ?? 0;
      const max = schema.maxItems ?? 10;
      const item = validArb(schema.items ?? {}, hints, { name: place.name, depth: place.depth + 1, light: place.light });
      const lightItem = validArb(schema.items ?? {}, hints, { name: place.name, depth: place.depth + 1, light: true });
      // At the maximum item count, a few generated items repeat (generating 1,000 rich items each
      // time would cost more than sending them).
      const full = fc.array(lightItem, { minLength: 1, maxLength: 5 }).map((few) => Array.from({ length: max }, (_, i) => few[i % few.length]));
      return fc.oneof(
        { weight: 30, arbitrary: fc.array(item, { minLength: min, maxLength: Math.max(min, Math.min(max, 4)) }) },
        { weight: 1, arbitrary: full },
        { weight: 1, arbitrary: fc.array(item, { minLength: min, maxLength: min }) },
      );
    }
    case 'object': {
      const props = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
      if (props.length === 0) {
        // dict[str, Any]: anything, nested up to what the whole body may still hold.
        const budget = place.light ? 1 : MAX_NESTING - place.depth - 1;
        return fc.array(fc.tuple(nastyKey, anyJsonArb(Math.max(0, budget))), { maxLength: place.light ? 2 : 5 }).map(objectFrom);
      }
      const required = new Set<string>(schema.required ?? []);
      const fields = props.map(([name, s]) => fc.tuple(
        fc.constant(name),
        required.has(name) ? fc.constant(true) : fc.boolean(),
        validArb(s, hints, { name, depth: place.depth + 1, light: place.light }),
      ));
      // Unknown fields are ignored (docs/decisions.md#1-request-handling-order, step 5), so a valid body may carry some.
      const known = new Set(props.map(([n]) => n));
      const extras = fc.oneof(
        { weight: 6, arbitrary: fc.constant([] as [string, unknown][]) },
        { weight: 1, arbitrary: fc.array(fc.tuple(nastyKey.filter((k) => !known.has(k)), anyJsonArb(2)), { maxLength: 3 }) },
      );
      return fc.tuple(fc.tuple(...fields), extras, fc.boolean()).map(([fs, ex, extrasFirst]) => {
        const present = fs.filter(([, keep]) => keep).map(([n, , v]) => [n, v] as const);
        return objectFrom(extrasFirst ? [...ex, ...present] : [...present, ...ex]);
      });
    }
    default:
      // `{}`: any JSON value.
      return anyJsonArb(Math.max(0, MAX_NESTING - place.depth - 1));
  }
}

/** The URL pattern of docs/decisions.md#2-request-models (the only pattern the public schemas use). */
const URL_PATTERN = '^https?://\\S+$';

/** Strings matching `pattern` with code point length in [min, max]. */
function patternArb(pattern: string, min: number, max: number, light = false): fc.Arbitrary<string> {
  if (pattern !== URL_PATTERN) {
    const re = new RegExp(pattern, 'u');
    return fc.stringMatching(re).filter((s) => cpLength(s) >= min && cpLength(s) <= max && s.isWellFormed());
  }
  const scheme = fc.constantFrom('http://', 'https://');
  const fits = (s: string) => cpLength(s) >= min && cpLength(s) <= max && s.isWellFormed() && new RegExp(URL_PATTERN, 'u').test(s);
  if (light) return fc.tuple(scheme, boundedString(urlChar, 1, max - 8, 40, true)).map(([a, b]) => a + b).filter(fits);
  return fc.oneof(
    { weight: 8, arbitrary: fc.tuple(scheme, boundedString(urlChar, 1, max - 8, 40)).map(([a, b]) => a + b) },
    { weight: 2, arbitrary: fc.constantFrom('https://cdn.example/a.png', 'https://a', 'http://127.0.0.1/x', 'https://example.com/?q={{first_name}}&x=%00', 'https://😀.example/😀', 'http://[::1]/', 'http://169.254.169.254/latest/meta-data', 'https://user:pw@example.com/', 'http://localhost:0/\u0000') },
    // Exactly at the bound, counted in code points: with astral characters twice as long in UTF-16.
    { weight: 1, arbitrary: fc.tuple(scheme, fc.boolean()).map(([s, astral]) => s + (astral ? '😀' : 'a').repeat(max - s.length)) },
  ).filter(fits);
}

/** A value's JSON text, optionally with every non-ASCII character escaped as `\uXXXX` (same meaning). */
export function toJsonText(value: unknown, asciiOnly = false): string {
  const text = JSON.stringify(value).replaceAll(new RegExp(`"${RAW_MARK}(.*?)${RAW_MARK}"`, 'gu'), '$1');
  return asciiOnly ? text.replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')) : text;
}

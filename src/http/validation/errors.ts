/**
 * Validation error items with Pydantic v2's exact `type` names, `msg` templates and `ctx`,
 * and the 422 body FastAPI writes for them (docs/decisions.md#1-request-handling-order, step 5, docs/api.md#error-bodies).
 *
 * Item keys are rendered in the order `type, loc, msg, input, ctx` (ctx only when present).
 * `input` holds the offending value as parsed (a PyValue: Maps for objects, PyFloat for
 * floats), rendered with Python's JSON conventions by {@link renderValidationError}.
 */

import { pyJsonDumps, pyQuote } from './serialize.ts';

/** Location of an error: `["body", "contacts", 3, "phone"]`, `["path", "segment_id"]`. */
export type Loc = (string | number)[];

/** One entry of the 422 `detail` array. */
export interface ValidationErrorItem {
  type: string;
  loc: Loc;
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/** Error types whose message needs no context. */
const FIXED_MESSAGES = {
  missing: 'Field required',
  model_attributes_type: 'Input should be a valid dictionary or object to extract fields from',
  string_type: 'Input should be a valid string',
  string_unicode: 'Input should be a valid string, unable to parse raw data as a unicode string',
  int_type: 'Input should be a valid integer',
  int_parsing: 'Input should be a valid integer, unable to parse string as an integer',
  int_parsing_size: 'Unable to parse input string as an integer, exceeded maximum size',
  int_from_float: 'Input should be a valid integer, got a number with a fractional part',
  finite_number: 'Input should be a finite number',
  bool_type: 'Input should be a valid boolean',
  bool_parsing: 'Input should be a valid boolean, unable to interpret input',
  list_type: 'Input should be a valid list',
  dict_type: 'Input should be a valid dictionary',
} as const;

/** Error types with a fixed message. */
export type FixedErrorType = keyof typeof FIXED_MESSAGES;

/** An error without ctx (`loc` is copied). */
export function fixedError(type: FixedErrorType, loc: Loc, input: unknown): ValidationErrorItem {
  return { type, loc: loc.slice(), msg: FIXED_MESSAGES[type], input };
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `string_too_short` / `string_too_long`; lengths are code points. */
export function stringLengthError(tooLong: boolean, limit: number, loc: Loc, input: unknown): ValidationErrorItem {
  return tooLong
    ? { type: 'string_too_long', loc: loc.slice(), msg: `String should have at most ${plural(limit, 'character')}`, input, ctx: { max_length: limit } }
    : { type: 'string_too_short', loc: loc.slice(), msg: `String should have at least ${plural(limit, 'character')}`, input, ctx: { min_length: limit } };
}

/** `string_pattern_mismatch`; `pattern` is the pattern's source text. */
export function patternError(pattern: string, loc: Loc, input: unknown): ValidationErrorItem {
  return { type: 'string_pattern_mismatch', loc: loc.slice(), msg: `String should match pattern '${pattern}'`, input, ctx: { pattern } };
}

/** `literal_error`; `expected` as built by {@link literalExpected}. */
export function literalError(expected: string, loc: Loc, input: unknown): ValidationErrorItem {
  return { type: 'literal_error', loc: loc.slice(), msg: `Input should be ${expected}`, input, ctx: { expected } };
}

/** `too_short` / `too_long` for a list (`field_type` "List"). */
export function listLengthError(tooLong: boolean, limit: number, actual: number, loc: Loc, input: unknown): ValidationErrorItem {
  const bound = tooLong ? 'at most' : 'at least';
  return {
    type: tooLong ? 'too_long' : 'too_short',
    loc: loc.slice(),
    msg: `List should have ${bound} ${plural(limit, 'item')} after validation, not ${actual}`,
    input,
    ctx: tooLong
      ? { field_type: 'List', max_length: limit, actual_length: actual }
      : { field_type: 'List', min_length: limit, actual_length: actual },
  };
}

/** FastAPI's body-decoding error: `json_invalid` at `["body", pos]`, input `{}`. */
export function jsonInvalidError(message: string, pos: number): ValidationErrorItem {
  return { type: 'json_invalid', loc: ['body', pos], msg: 'JSON decode error', input: new Map(), ctx: { error: message } };
}

/** Python's repr of a str, as Pydantic uses it in literal messages. */
export function pyRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let body = '';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '\\' || ch === quote) body += '\\' + ch;
    else if (ch === '\n') body += '\\n';
    else if (ch === '\r') body += '\\r';
    else if (ch === '\t') body += '\\t';
    else if (c < 0x20 || c === 0x7f) body += '\\x' + c.toString(16).padStart(2, '0');
    else body += ch;
  }
  return quote + body + quote;
}

/** Pydantic's `expected` text for a Literal: `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`. */
export function literalExpected(values: readonly string[]): string {
  const reprs = values.map(pyRepr);
  if (reprs.length <= 1) return reprs.join('');
  return `${reprs.slice(0, -1).join(', ')} or ${reprs[reprs.length - 1]}`;
}

/** The exact 422 body: `{"detail":[...]}` in Python's compact JSON. */
export function renderValidationError(errors: readonly ValidationErrorItem[]): string {
  let out = '{"detail":[';
  for (let i = 0; i < errors.length; i++) {
    const e = errors[i];
    let loc = '[';
    for (let j = 0; j < e.loc.length; j++) {
      const part = e.loc[j];
      loc += (j === 0 ? '' : ',') + (typeof part === 'number' ? String(part) : pyQuote(part));
    }
    out += `${i === 0 ? '' : ','}{"type":${pyQuote(e.type)},"loc":${loc}],"msg":${pyQuote(e.msg)},"input":${pyJsonDumps(e.input)}`;
    out += e.ctx === undefined ? '}' : `,"ctx":${pyJsonDumps(e.ctx)}}`;
  }
  return out + ']}';
}

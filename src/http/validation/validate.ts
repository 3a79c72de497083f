/**
 * Pydantic v2 validation semantics (Python mode, lax, `from_attributes=True`, as FastAPI
 * calls it) over parsed bodies, and the request-level entry point {@link validateRequest}
 * (docs/decisions.md#1-request-handling-order, step 5, #2-request-models).
 *
 * - errors are collected, never thrown; fields in declaration order; unknown keys ignored;
 * - a missing required field: `missing` with the whole object as input;
 * - strings must be str (no coercion); lone surrogates give `string_unicode`; lengths in
 *   code points; min length, then max length, then pattern;
 * - a list longer than its maximum gives only `too_long` (items are not validated);
 * - path parameters are validated first (`loc: ["path", name]`), then the body (`["body", ...]`).
 *
 * Fast path: a body read by `JSON.parse` (`json` of a parse result, body.ts) goes first
 * through the model's compiled fast validator (fast.ts), which answers only where the result is the
 * one below; when it declines, the exact PyValue is parsed and validated here.
 */

import { floatAsInt, inI64, strAsBool, strAsInt } from './coerce.ts';
import {
  fixedError, listLengthError, literalError, patternError, stringLengthError,
  type Loc, type ValidationErrorItem,
} from './errors.ts';
import type { AnyType, Model, StrType } from './types.ts';
import { PyFloat, codePoints, toPlain, type PyValue } from './values.ts';
import type { BodyParse } from './body.ts';
import { DECLINE } from './fast.ts';

/** A path parameter as routed (percent-decoded); `segment_id` is the only one (an int). */
export interface PathParam {
  name: string;
  raw: string;
}

/**
 * Outcome of {@link validateRequest}. Path values are numbers. Pydantic accepts any int up
 * to 4300 digits; beyond 2^53 the number is rounded (even to Infinity): such an id matches
 * nothing, so routes should answer "not found" when `!Number.isSafeInteger(id)`.
 */
export type Validated<T> =
  | { ok: true; body: T; path: Record<string, number> }
  | { ok: false; errors: ValidationErrorItem[] };

const INVALID: unique symbol = Symbol('invalid');
type Result = unknown;

/**
 * Validates path parameters (ints) and the parsed body against `model`.
 * `body` must be a `value` or `missing` parse result (parse failures are answered earlier,
 * see parseStep in src/http/public-operation.ts); an `invalid` result is passed through as its errors.
 */
export function validateRequest<T>(model: Model<T>, body: BodyParse, path: readonly PathParam[] = []): Validated<T> {
  const errors: ValidationErrorItem[] = [];
  const pathValues: Record<string, number> = {};
  for (const p of path) {
    const v = validateIntValue(p.raw, ['path', p.name], errors);
    if (v !== INVALID) pathValues[p.name] = Number(v as number | bigint);
  }
  let out: Result = INVALID;
  switch (body.kind) {
    case 'missing':
      errors.push(fixedError('missing', ['body'], null));
      break;
    case 'value':
      if (body.json !== undefined && errors.length === 0) {
        const fast = model.fast(body.json);
        if (fast !== DECLINE) return { ok: true, body: fast as T, path: pathValues };
      }
      out = validateValue(model, body.value as PyValue, ['body'], errors);
      break;
    case 'invalid':
      return { ok: false, errors: body.errors };
    case 'unparseable':
      throw new Error('validateRequest: an unparseable body must be answered with 400 before validation');
  }
  if (errors.length > 0 || out === INVALID) return { ok: false, errors };
  return { ok: true, body: out as T, path: pathValues };
}

/** Validates one value; pushes errors (with copies of `loc`) and returns INVALID on failure. */
function validateValue(t: AnyType, v: PyValue, loc: Loc, errors: ValidationErrorItem[]): Result {
  switch (t.kind) {
    case 'str':
      return validateStr(t, v, loc, errors);
    case 'int':
      return validateIntValue(v, loc, errors);
    case 'bool':
      return validateBool(v, loc, errors);
    case 'literal':
      if (typeof v === 'string') {
        if (t.values.has(v)) return v;
        if (!v.isWellFormed()) return fail(errors, fixedError('string_unicode', loc, v));
      }
      return fail(errors, literalError(t.expected, loc, v));
    case 'nullable':
      return v === null ? null : validateValue(t.inner, v, loc, errors);
    case 'list':
      return validateList(t.item, t.minLength, t.maxLength, v, loc, errors);
    case 'dict':
      return v instanceof Map ? toPlain(v) : fail(errors, fixedError('dict_type', loc, v));
    case 'model':
      return validateModel(t, v, loc, errors);
  }
}

function fail(errors: ValidationErrorItem[], e: ValidationErrorItem): typeof INVALID {
  errors.push(e);
  return INVALID;
}

function validateStr(t: StrType, v: PyValue, loc: Loc, errors: ValidationErrorItem[]): Result {
  if (typeof v !== 'string') return fail(errors, fixedError('string_type', loc, v));
  if (!v.isWellFormed()) return fail(errors, fixedError('string_unicode', loc, v));
  const { minLength, maxLength, pattern } = t;
  // UTF-16 length bounds the code point count: cp <= length <= 2 * cp.
  if (minLength !== undefined && v.length < 2 * minLength && codePoints(v) < minLength) {
    return fail(errors, stringLengthError(false, minLength, loc, v));
  }
  if (maxLength !== undefined && v.length > maxLength && codePoints(v) > maxLength) {
    return fail(errors, stringLengthError(true, maxLength, loc, v));
  }
  if (pattern !== undefined && !pattern.regex.test(v)) return fail(errors, patternError(pattern.source, loc, v));
  return v;
}

function validateIntValue(v: PyValue, loc: Loc, errors: ValidationErrorItem[]): Result {
  let r: number | bigint | string;
  switch (typeof v) {
    case 'number':
    case 'bigint':
      return v;
    case 'boolean':
      return v ? 1 : 0;
    case 'string':
      if (!v.isWellFormed()) return fail(errors, fixedError('string_unicode', loc, v));
      r = strAsInt(v);
      break;
    default:
      if (!(v instanceof PyFloat)) return fail(errors, fixedError('int_type', loc, v));
      r = floatAsInt(v.value);
  }
  return typeof r === 'string' ? fail(errors, fixedError(r as 'int_parsing', loc, v)) : r;
}

function validateBool(v: PyValue, loc: Loc, errors: ValidationErrorItem[]): Result {
  let n: number | bigint | string;
  switch (typeof v) {
    case 'boolean':
      return v;
    case 'string': {
      if (!v.isWellFormed()) return fail(errors, fixedError('string_unicode', loc, v));
      const b = strAsBool(v);
      return b === null ? fail(errors, fixedError('bool_parsing', loc, v)) : b;
    }
    case 'number':
    case 'bigint':
      n = v;
      break;
    default:
      if (!(v instanceof PyFloat)) return fail(errors, fixedError('bool_type', loc, v));
      n = floatAsInt(v.value);
      if (typeof n === 'string') return fail(errors, fixedError('bool_type', loc, v));
  }
  if (n === 0) return false;
  if (n === 1) return true;
  return fail(errors, fixedError(inI64(n) ? 'bool_parsing' : 'bool_type', loc, v));
}

function validateList(item: AnyType, min: number | undefined, max: number | undefined, v: PyValue, loc: Loc, errors: ValidationErrorItem[]): Result {
  if (!Array.isArray(v)) return fail(errors, fixedError('list_type', loc, v));
  if (max !== undefined && v.length > max) return fail(errors, listLengthError(true, max, v.length, loc, v));
  const before = errors.length;
  const out: unknown[] = new Array(v.length);
  loc.push(0);
  for (let i = 0; i < v.length; i++) {
    loc[loc.length - 1] = i;
    out[i] = validateValue(item, v[i], loc, errors);
  }
  loc.pop();
  if (errors.length > before) return INVALID;
  if (min !== undefined && out.length < min) return fail(errors, listLengthError(false, min, out.length, loc, v));
  return out;
}

function validateModel(t: Model<unknown>, v: PyValue, loc: Loc, errors: ValidationErrorItem[]): Result {
  if (!(v instanceof Map)) return fail(errors, fixedError('model_attributes_type', loc, v));
  const before = errors.length;
  const fields = t.fields;
  const values: unknown[] = new Array(fields.length);
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    const raw = v.get(f.name);
    if (raw === undefined) {
      if (f.required) errors.push(fixedError('missing', [...loc, f.name], v));
      else values[i] = f.default;
      continue;
    }
    loc.push(f.name);
    values[i] = validateValue(f.type, raw, loc, errors);
    loc.pop();
  }
  return errors.length > before ? INVALID : t.build(values);
}

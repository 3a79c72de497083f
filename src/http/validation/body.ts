/**
 * Reading the raw request body, docs/decisions.md#1-request-handling-order, step 2, exactly as FastAPI 0.142 does
 * (strict content type):
 *
 * - an empty body is `missing` (whatever the Content-Type);
 * - JSON is parsed only when the Content-Type's main type is `application` and its subtype is
 *   `json` or ends with `+json` (Python's `email.message` parsing: case-insensitive, text
 *   before the first `;`, stripped, exactly one `/`); a JSON `null` is `missing`;
 * - any other (or a missing/empty) Content-Type: the body text itself is the input (it then
 *   fails model validation with `model_attributes_type`);
 * - malformed JSON: `invalid` (422 json_invalid, before authentication);
 * - undecodable bytes, nesting deeper than 512, an int literal over 4300 digits: `unparseable`
 *   (400, before authentication). For a non-JSON Content-Type FastAPI would only fail later
 *   (500 when echoing the bytes, or 401): we answer 400 at this step, as docs/decisions.md says.
 *
 * Fast path (fast.ts): a JSON body that native `JSON.parse` reads the way the exact
 * parser would (see parseOrdinaryJson) is a `value` whose `json` (not enumerable) holds the
 * `JSON.parse` result and whose `value` (the exact PyValue) is parsed from the same text only when
 * first read. Its kind is the exact path's (parseOrdinaryJson declines wherever the exact parse
 * could fail), so step 2's answer, before authentication, is unchanged.
 */

import { decodeJsonBytes, decodeUtf8Strict } from './decode.ts';
import { jsonInvalidError, type ValidationErrorItem } from './errors.ts';
import { DECLINE, parseOrdinaryJson } from './fast.ts';
import { JsonDecodeError, parsePythonJson } from './json.ts';
import type { PyValue } from './values.ts';

/**
 * Result of reading the raw body per docs/decisions.md#1-request-handling-order, step 2. A `value` may carry `json`,
 * the same body as read by `JSON.parse` (fast path, fast.ts), for validateRequest.
 */
export type BodyParse =
  | { kind: 'value'; value: PyValue; readonly json?: unknown }
  | { kind: 'missing' }
  | { kind: 'invalid'; errors: ValidationErrorItem[] }
  | { kind: 'unparseable' };

const MISSING: BodyParse = Object.freeze({ kind: 'missing' });
const UNPARSEABLE: BodyParse = Object.freeze({ kind: 'unparseable' });

/** Python's `str.strip()` whitespace within Latin-1 (header values are Latin-1 text). */
function isPyHeaderSpace(c: number): boolean {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c === 0x85 || c === 0xa0;
}

/** Whether FastAPI would parse a body with this Content-Type header value as JSON. */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const semi = contentType.indexOf(';');
  let a = 0;
  let b = semi < 0 ? contentType.length : semi;
  while (a < b && isPyHeaderSpace(contentType.charCodeAt(a))) a++;
  while (b > a && isPyHeaderSpace(contentType.charCodeAt(b - 1))) b--;
  const type = contentType.slice(a, b).toLowerCase();
  const slash = type.indexOf('/');
  if (slash < 0 || type.indexOf('/', slash + 1) >= 0) return false;
  if (type.slice(0, slash) !== 'application') return false;
  const sub = type.slice(slash + 1);
  return sub === 'json' || sub.endsWith('+json');
}

/**
 * Reads the raw body. `contentType` is the first Content-Type header value, if any.
 * Never throws.
 */
export function parseBody(raw: Uint8Array, contentType: string | undefined): BodyParse {
  if (raw.length === 0) return MISSING;
  if (!isJsonContentType(contentType)) {
    const text = decodeUtf8Strict(raw);
    return text === null ? UNPARSEABLE : { kind: 'value', value: text };
  }
  const text = decodeJsonBytes(raw);
  if (text === null) return UNPARSEABLE;
  const json = parseOrdinaryJson(text);
  if (json !== DECLINE) return json === null ? MISSING : lazyValue(text, json);
  let value: PyValue;
  try {
    value = parsePythonJson(text);
  } catch (e) {
    if (e instanceof JsonDecodeError) return { kind: 'invalid', errors: [jsonInvalidError(e.msg, e.pos)] };
    return UNPARSEABLE;
  }
  return value === null ? MISSING : { kind: 'value', value };
}

/**
 * A `value` whose exact PyValue is parsed from `text` when first read (parseOrdinaryJson vouched for
 * it). `json` is not enumerable: the result looks like the exact path's `{kind, value}` to a reader
 * or a deep comparison.
 */
function lazyValue(text: string, json: unknown): BodyParse {
  let value: PyValue | undefined;
  const body = {
    kind: 'value' as const,
    get value(): PyValue {
      value ??= parsePythonJson(text);
      return value;
    },
  };
  return Object.defineProperty(body, 'json', { value: json });
}

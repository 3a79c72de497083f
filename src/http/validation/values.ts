/**
 * The value representation of a parsed request body: what Python's `json.loads`
 * returns, kept exactly enough to validate and echo it like FastAPI/Pydantic do
 * (docs/decisions.md#1-request-handling-order, steps 2 and 5).
 *
 * - `null`, `boolean`, `string` (may hold lone surrogates, as Python's str can);
 * - Python `int`: a JS `number` when it is a safe integer, otherwise a `bigint`;
 * - Python `float`: a {@link PyFloat} (so `1.0` stays distinct from `1`; may be NaN/±Infinity);
 * - Python `list`: a JS array of PyValue;
 * - Python `dict`: a {@link PyDict} (a `Map`: insertion order like Python, duplicate keys keep
 *   the first position and the last value, and no key can touch any prototype).
 */

/** A Python float. `value` may be NaN or ±Infinity (Python's json accepts them). */
export class PyFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
}

/** A Python dict decoded from a JSON object (keys are always strings). */
export type PyDict = Map<string, PyValue>;

/** Any value `json.loads` can produce. */
export type PyValue = null | boolean | number | bigint | string | PyFloat | PyValue[] | PyDict;

/** Plain JSON-like data handed to handlers (validated `dict[str, Any]` values). */
export type PlainValue = null | boolean | number | bigint | string | PlainValue[] | PlainObject;

/** A plain object with no prototype: keys such as `__proto__` are ordinary own keys. */
export interface PlainObject {
  [key: string]: PlainValue;
}

/** Python int from a JS bigint: a number when it is a safe integer (shape of all our ints). */
export function normalizeInt(n: bigint): number | bigint {
  return n >= -9007199254740991n && n <= 9007199254740991n ? Number(n) : n;
}

/**
 * Converts a PyValue into plain data for handlers: floats become numbers (NaN/±Infinity
 * included), dicts become null-prototype objects (own data keys only), arrays are copied.
 * Python ints stay number | bigint.
 */
export function toPlain(v: PyValue): PlainValue {
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof PyFloat) return v.value;
  if (Array.isArray(v)) {
    const out: PlainValue[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = toPlain(v[i]);
    return out;
  }
  const obj = Object.create(null) as PlainObject;
  v.forEach((x, k) => {
    obj[k] = toPlain(x);
  });
  return obj;
}

/** Python's `len(s)` of a str: code points, a lone surrogate counting one (string lengths, docs/decisions.md#2-request-models). */
export function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

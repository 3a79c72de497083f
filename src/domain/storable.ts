/**
 * Text that PostgreSQL can store. JSON and JavaScript strings may hold U+0000 and lone surrogates
 * (`"\u0000"`, `"\ud800"` are valid JSON, and the original API accepts them); PostgreSQL's text and
 * jsonb refuse both. Request data is made storable once, where it enters: U+0000 and lone surrogates
 * become U+FFFD (the replacement character), in values and in object keys alike.
 */

// eslint-disable-next-line no-control-regex
const NUL = /\u0000/g;

// A NUL or any surrogate code unit; only then is the precise (slower) check needed.
// eslint-disable-next-line no-control-regex
const SUSPECT = /[\u0000\ud800-\udfff]/;

/** True when PostgreSQL can store the string as it is. */
function isStorable(s: string): boolean {
  return !SUSPECT.test(s) || (s.isWellFormed() && !s.includes('\u0000'));
}

/** The string with U+0000 and lone surrogates replaced by U+FFFD. */
export function storableText(s: string): string {
  if (isStorable(s)) return s;
  return s.toWellFormed().replace(NUL, '\ufffd');
}

/**
 * JSON-like data with every string (and key) storable. Data that is already storable (nearly all of it)
 * is returned as it is, without a copy; otherwise the parts that change are copied. Copied objects keep
 * a null prototype when they had one, so `__proto__` and `constructor` stay plain data keys.
 */
export function storable<T>(value: T): T {
  return allStorable(value) ? value : copyStorable(value);
}

/** True when every string and key in the data is storable (a walk without allocation). */
function allStorable(value: unknown): boolean {
  if (typeof value === 'string') return isStorable(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!allStorable(value[i])) return false;
    return true;
  }
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !Buffer.isBuffer(value)) {
    const keys = Object.keys(value);
    for (let i = 0; i < keys.length; i++) {
      if (!isStorable(keys[i]) || !allStorable((value as Record<string, unknown>)[keys[i]])) return false;
    }
  }
  return true;
}

function copyStorable<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = copyStorable(value[i]);
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return (out ?? value) as T;
  }
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !Buffer.isBuffer(value)) {
    let changed = false;
    const entries = Object.entries(value).map(([k, v]) => {
      const k2 = storableText(k);
      const v2 = copyStorable(v);
      if (k2 !== k || v2 !== v) changed = true;
      return [k2, v2] as const;
    });
    if (!changed) return value;
    const out = Object.create(Object.getPrototypeOf(value) === null ? null : Object.prototype) as Record<string, unknown>;
    for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    return out as T;
  }
  return value;
}

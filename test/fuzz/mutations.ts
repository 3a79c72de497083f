/**
 * Mutations of valid requests, guided by the request schema: wrong types, missing and extra fields,
 * lengths and item counts just over their limits, lone surrogates, huge and non-finite numbers, nesting
 * past the limit, and raw-body damage (truncation, invalid UTF-8, other encodings, wrong or missing
 * Content-Type, oversized bodies). Each mutation says, where docs/decisions.md fixes it, which status the
 * service must answer.
 */
import fc from 'fast-check';
import { cpLength, deepChain, isRaw, MAX_INT_DIGITS, MAX_NESTING, objectFrom, raw, toJsonText } from './generators.ts';
import type { Schema } from './openapi.ts';

/** Largest accepted body (docs/decisions.md#1-request-handling-order: over 1 MiB is 413). */
export const BODY_LIMIT = 1024 * 1024;

type PathPart = string | number;

/** A place in a generated body, with the schema that governs it (undefined for unknown fields). */
interface Site {
  path: PathPart[];
  schema: Schema | undefined;
  /** Property name when the parent is an object. */
  key?: string;
  required: boolean;
}

/** The alternative of a schema that a non-null value takes (`anyOf: [X, null]` → X). */
function concrete(schema: Schema | undefined): Schema | undefined {
  if (!schema?.anyOf) return schema;
  return (schema.anyOf as Schema[]).find((s) => s.type !== 'null');
}

function nullable(schema: Schema | undefined): boolean {
  return !!schema?.anyOf && (schema.anyOf as Schema[]).some((s) => s.type === 'null');
}

/** Places in `value` worth mutating (the first items of arrays only, not inside free-form data). */
export function collectSites(value: unknown, schema: Schema | undefined, path: PathPart[] = [], out: Site[] = [], required = true, key?: string): Site[] {
  out.push({ path, schema, key, required });
  const s = concrete(schema);
  if (path.length > 6 || s === undefined) return out;
  if (Array.isArray(value)) {
    value.slice(0, 3).forEach((v, i) => collectSites(v, s.items, [...path, i], out, true));
  } else if (value !== null && typeof value === 'object' && !isRaw(value) && s.properties) {
    const req = new Set<string>(s.required ?? []);
    for (const k of Object.keys(value)) {
      collectSites((value as Record<string, unknown>)[k], Object.hasOwn(s.properties, k) ? s.properties[k] : undefined, [...path, k], out, req.has(k), k);
    }
  }
  return out;
}


/** `root` with the value at `path` replaced by `replace(old)`, or removed when it returns REMOVE. */
const REMOVE = Symbol('remove');
function update(root: unknown, path: PathPart[], replace: (old: unknown) => unknown): unknown {
  if (path.length === 0) return replace(root);
  const [head, ...rest] = path;
  if (Array.isArray(root)) {
    const copy = [...root];
    const next = update(copy[head as number], rest, replace);
    if (next === REMOVE) copy.splice(head as number, 1);
    else copy[head as number] = next;
    return copy;
  }
  const entries = Object.entries(root as Record<string, unknown>).flatMap(([k, v]) => {
    if (k !== head) return [[k, v] as const];
    const next = update(v, rest, replace);
    return next === REMOVE ? [] : [[k, next] as const];
  });
  return objectFrom(entries);
}

/** Values of a type the schema cannot take, not even through Pydantic's lax coercion. */
function wrongValues(schema: Schema | undefined): unknown[] {
  const s = concrete(schema);
  const out: unknown[] = [];
  if (!s) return out;
  if (!nullable(schema)) out.push(null);
  if (Array.isArray(s.enum)) return [...out, 'ADD', 'add ', '', 1, [], {}, [s.enum[0]]];
  switch (s.type) {
    case 'string': return [...out, 1, 1.5, true, [], {}, ['x'], raw('1e400')];
    case 'integer': return [...out, 'abc', '', 1.5, '1.5', [], {}, [1], raw('NaN'), raw('Infinity'), raw('-Infinity'), raw('1e400'), '0x10'];
    case 'boolean': return [...out, 'maybe', 2, 0.5, [], {}, 'truee'];
    case 'array': return [...out, 'x', 1, {}, objectFrom([['0', 'x']])];
    case 'object': return [...out, 'x', 1, [], [{}], true];
  }
  return out;
}

/** What a mutation did to the body value, and whether docs/decisions.md makes it a certain 422 or 400. */
export interface MutationResult {
  value: unknown;
  label: string;
  /** 422 for a schema violation Pydantic never lets through; 400 for the parser limits. */
  certain?: 422 | 400;
}

/** One schema-guided mutation of a body value: which kind, and where (seeds picked by fast-check). */
export interface MutationPick { kind: number; site: number; choice: number }

export const mutationPickArb: fc.Arbitrary<MutationPick> = fc.record({ kind: fc.nat(9), site: fc.nat(), choice: fc.nat() });

/** Applies one schema-guided mutation to `value` (a body valid for `schema`). */
export function mutateValue(value: unknown, schema: Schema, pick: MutationPick): MutationResult {
  const sites = collectSites(value, schema);
  const site = sites[pick.site % sites.length];
  const s = concrete(site.schema);
  const at = site.path.join('.') || 'body';
  switch (pick.kind) {
    case 0: case 1: { // wrong type
      const choices = wrongValues(site.schema);
      if (choices.length === 0) break;
      const v = choices[pick.choice % choices.length];
      return { value: update(value, site.path, () => v), label: `wrong type at ${at}: ${toJsonText(v).slice(0, 20)}`, certain: 422 };
    }
    case 2: { // missing field
      const removable = sites.filter((x) => x.key !== undefined);
      if (removable.length === 0) break;
      const r = removable[pick.choice % removable.length];
      return { value: update(value, r.path, () => REMOVE), label: `without ${r.path.join('.')}`, certain: r.required ? 422 : undefined };
    }
    case 3: { // over the maximum length or item count, or under the minimum
      if (s?.type === 'string' && s.minLength && pick.choice % 3 === 2) {
        return { value: update(value, site.path, () => ''), label: `${at} empty`, certain: 422 };
      }
      if (s?.type === 'string' && s.maxLength !== undefined && !s.pattern && !s.enum) {
        const astral = pick.choice % 2 === 1;
        const v = (astral ? '😀' : 'x').repeat(s.maxLength + 1);
        return { value: update(value, site.path, () => v), label: `${at} ${s.maxLength + 1} ${astral ? 'astral ' : ''}characters`, certain: 422 };
      }
      if (s?.type === 'string' && s.pattern) {
        const v = 'https://' + 'a'.repeat((s.maxLength ?? 2048) - 7);
        return { value: update(value, site.path, () => v), label: `${at} URL one over its maximum length`, certain: 422 };
      }
      if (s?.type === 'array' && s.maxItems !== undefined) {
        const over = pick.choice % 3 === 0 && (s.minItems ?? 0) > 0;
        return {
          value: update(value, site.path, (old) => {
            const items = Array.isArray(old) && old.length > 0 ? old : ['x'];
            return over ? [] : Array.from({ length: s.maxItems + 1 }, (_, i) => items[i % items.length]);
          }),
          label: over ? `${at} empty` : `${at} with ${s.maxItems + 1} items`,
          certain: 422,
        };
      }
      break;
    }
    case 4: { // a lone surrogate in a typed string (Pydantic: string_unicode)
      if (s?.type !== 'string') break;
      const sur = ['\ud800', '\udfff', '\udbff'][pick.choice % 3];
      return { value: update(value, site.path, (old) => (typeof old === 'string' ? [...old].slice(0, 3).join('') : '') + sur), label: `lone surrogate in ${at}`, certain: 422 };
    }
    case 5: { // integers beyond the parser's limit, and number spellings
      if (s?.type !== 'integer') break;
      const texts = ['9'.repeat(MAX_INT_DIGITS + 1), '-' + '1'.repeat(MAX_INT_DIGITS + 1), '1e400', '-0', '1E2', '0.5e1', '-9223372036854775809', '1'.repeat(MAX_INT_DIGITS)];
      const t = texts[pick.choice % texts.length];
      return { value: update(value, site.path, () => raw(t)), label: `${at} = ${t.slice(0, 24)}${t.length > 24 ? `… (${t.length} chars)` : ''}`, certain: t.replace('-', '').length > MAX_INT_DIGITS ? 400 : undefined };
    }
    case 6: { // nesting around the limit
      const depth = site.path.length; // containers around the site
      const extra = [MAX_NESTING - depth, MAX_NESTING - depth + 1, MAX_NESTING - depth + 2, 2_000][pick.choice % 4];
      const v = deepChain(extra, 1, pick.choice % 2 === 0);
      return { value: update(value, site.path, () => v), label: `${at} nested ${extra} deep (total ${depth + extra})`, certain: depth + extra > MAX_NESTING ? 400 : undefined };
    }
    case 7: { // extra fields with hostile names
      if (!(s?.type === 'object' || s?.properties)) break;
      const extras: [string, unknown][] = [['__proto__', { polluted: 'yes' }], ['constructor', { prototype: { polluted: 'yes' } }], ['extra', 1], ['', null], ['\u0000', '\ud800']];
      const e = extras[pick.choice % extras.length];
      return { value: update(value, site.path, (old) => objectFrom([...(old !== null && typeof old === 'object' && !Array.isArray(old) && !isRaw(old) ? Object.entries(old) : []), e])), label: `${at} with extra field ${JSON.stringify(e[0])}` };
    }
    case 8: { // non-finite numbers anywhere
      const t = ['NaN', 'Infinity', '-Infinity'][pick.choice % 3];
      return { value: update(value, site.path, () => raw(t)), label: `${at} = ${t}`, certain: s !== undefined && s.type !== undefined ? 422 : undefined };
    }
  }
  // The chosen site does not take this mutation: replace the whole body by the wrong kind of JSON.
  const bodies: unknown[] = [[], [value], 'text', 0, true, objectFrom([])];
  const b = bodies[pick.choice % bodies.length];
  return { value: b, label: `body = ${toJsonText(b).slice(0, 30)}`, certain: 422 };
}

/** A raw body mutation: bytes that are not the JSON text of a valid body. */
export interface RawBody {
  bytes: Buffer;
  label: string;
  /**
   * What docs/decisions.md fixes for these bytes under a JSON Content-Type: the status, and whether it is
   * answered while parsing (before authentication) or by validation (after it).
   */
  json?: { status: 400 | 422; stage: 'parse' | 'validation' };
}

const utf16 = (text: string, bigEndian: boolean) => {
  const le = Buffer.from(text, 'utf16le');
  return bigEndian ? Buffer.from(le).swap16() : le;
};

/** Damaged bodies derived from the JSON text of a valid body. */
export function rawBodies(text: string, choice: number, cut: number): RawBody {
  const b = Buffer.from(text, 'utf8');
  const at = cut % (b.length + 1);
  const cutText = text.slice(0, Math.max(1, Math.min(cut % text.length, text.length - 1)));
  // Cutting or percent-encoding a container or string always breaks it; a number may survive ("12" of "123").
  const breakable = /^[[{"]/.test(text) && text.length > 1;
  const variants: (() => RawBody)[] = [
    () => ({ bytes: Buffer.alloc(0), label: 'empty body', json: { status: 422, stage: 'validation' } }),
    () => ({ bytes: Buffer.from('null'), label: 'null', json: { status: 422, stage: 'validation' } }),
    () => ({ bytes: Buffer.from(cutText), label: `truncated after ${cutText.length} characters`, json: breakable ? { status: 422, stage: 'parse' } : undefined }),
    () => ({ bytes: Buffer.concat([b, Buffer.from(' x')]), label: 'trailing garbage', json: { status: 422, stage: 'parse' } }),
    () => ({ bytes: Buffer.concat([b.subarray(0, at), Buffer.from([0xff]), b.subarray(at)]), label: `0xff byte at ${at}`, json: { status: 400, stage: 'parse' } }),
    () => ({ bytes: Buffer.concat([b.subarray(0, at), Buffer.from([0xc0, 0x80]), b.subarray(at)]), label: `overlong NUL at ${at}`, json: { status: 400, stage: 'parse' } }),
    () => ({ bytes: Buffer.concat([b, Buffer.from([0xe2, 0x82])]), label: 'truncated UTF-8 sequence at the end', json: { status: 400, stage: 'parse' } }),
    () => ({ bytes: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b]), label: 'UTF-8 BOM' }),
    () => ({ bytes: utf16(text, false), label: 'UTF-16LE' }),
    () => ({ bytes: Buffer.concat([Buffer.from([0xfe, 0xff]), utf16(text, true)]), label: 'UTF-16BE with BOM' }),
    () => ({ bytes: Buffer.from(text.replace(/^\{/, '{"a":1,"a":2,')), label: 'duplicate keys' }),
    () => ({ bytes: Buffer.from(text.replace(/"/g, "'")), label: 'single quotes' }),
    () => ({ bytes: Buffer.from('/* c */' + text), label: 'comment' }),
    () => ({ bytes: Buffer.from('['.repeat(MAX_NESTING + 1) + ']'.repeat(MAX_NESTING + 1)), label: `${MAX_NESTING + 1} nested arrays`, json: { status: 400, stage: 'parse' } }),
    () => ({ bytes: Buffer.from('['.repeat(100_000)), label: '100000 unclosed arrays', json: { status: 400, stage: 'parse' } }),
    () => ({ bytes: Buffer.from('{"x":' + '9'.repeat(MAX_INT_DIGITS + 1) + '}'), label: 'int literal over the digit limit', json: { status: 400, stage: 'parse' } }),
    () => ({ bytes: Buffer.concat([b, Buffer.alloc(Math.max(1, BODY_LIMIT + 1 - b.length), 0x20)]), label: 'valid JSON padded past 1 MiB' }),
    () => ({ bytes: Buffer.from(' \t\r\n'.repeat(1000) + text + '\n'.repeat(1000)), label: 'surrounded by whitespace' }),
    // After the first colon, so that the NUL byte cannot look like UTF-16 to the encoding detection.
    () => ({ bytes: Buffer.from(text.replace(/[^\x00-\x7f]/g, '').replace(/:/, ':\u0000')), label: 'raw NUL in the text', json: text.includes(':') ? { status: 422, stage: 'parse' } : undefined }),
    () => ({ bytes: Buffer.from(encodeURIComponent(text)), label: 'URL-encoded JSON', json: breakable ? { status: 422, stage: 'parse' } : undefined }),
  ];
  return variants[choice % variants.length]();
}

/** Content types: JSON ones (case, parameters, `+json`) the service parses, and others it must not. */
export const JSON_CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'Application/JSON', ' application/json ;charset=UTF-8', 'application/vnd.cms+json', 'application/merge-patch+json'];
export const OTHER_CONTENT_TYPES: (string | null)[] = [null, '', 'text/plain', 'text/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'application/json/x', 'application/', 'json', '*/*', 'application/xml', ';application/json'];

/** Whether the service parses a body with this Content-Type as JSON (docs/decisions.md#1-request-handling-order, step 2). */
export function isJsonType(ct: string | null): boolean {
  return ct !== null && JSON_CONTENT_TYPES.includes(ct);
}

/** Code point length helper re-exported for the test's invariants. */
export { cpLength };

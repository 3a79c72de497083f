/**
 * Lax coercions of int and bool fields (Pydantic v2 Python mode) and Python float repr.
 * The corpus (test/fixtures/validation/coercions.json, tools/oracle/coercion_corpus.py)
 * holds Pydantic 2.13.5's verdict on ~3000 inputs per type; the tables below pin the
 * cases docs/decisions.md names.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { PyFloat, bool, int, model, pyFloatRepr, validateRequest, type PyValue } from '../../src/http/validation/index.ts';

const IntBox = model('IntBox', { v: int() });
const BoolBox = model('BoolBox', { v: bool() });

type Verdict = { ok: string | boolean } | { error: string };

function verdict(box: typeof IntBox | typeof BoolBox, input: PyValue): Verdict {
  const r = validateRequest(box as typeof IntBox, { kind: 'value', value: new Map([['v', input]]) });
  if (!r.ok) return { error: r.errors[0].type };
  const v = r.body.v as unknown;
  return { ok: typeof v === 'boolean' ? v : String(v) };
}

/** Fixture input to a PyValue: {"float": repr} is a float, objects are dicts. */
function toPy(x: unknown): PyValue {
  if (x === null || typeof x !== 'object') return x as PyValue;
  if (Array.isArray(x)) return x.map(toPy);
  const o = x as Record<string, unknown>;
  if (typeof o.float === 'string') return new PyFloat(o.float === 'nan' ? NaN : o.float === 'inf' ? Infinity : o.float === '-inf' ? -Infinity : Number(o.float));
  return new Map(Object.entries(o).map(([k, v]) => [k, toPy(v)]));
}

const corpus = JSON.parse(readFileSync(new URL('../fixtures/validation/coercions.json', import.meta.url), 'utf8')) as {
  int: [unknown, Verdict][];
  bool: [unknown, Verdict][];
  float_repr: string[];
};

/** Big ints in the fixture are JSON numbers that lost precision: rebuild them from the verdict. */
function exactInput(x: unknown, v: Verdict): PyValue {
  if (typeof x === 'number' && !Number.isSafeInteger(x) && Number.isInteger(x) && 'ok' in v && typeof v.ok === 'string') return BigInt(v.ok);
  return toPy(x);
}

describe('Pydantic corpus', () => {
  for (const kind of ['int', 'bool'] as const) {
    test(`${kind} field: ${corpus[kind].length} inputs match Pydantic`, () => {
      const box = kind === 'int' ? IntBox : BoolBox;
      const bad: string[] = [];
      for (const [x, want] of corpus[kind]) {
        if (typeof x === 'number' && !Number.isSafeInteger(x) && Number.isInteger(x)) continue; // see intTable
        const got = verdict(box, exactInput(x, want));
        if (JSON.stringify(got) !== JSON.stringify(want)) bad.push(`${JSON.stringify(x)}: got ${JSON.stringify(got)} want ${JSON.stringify(want)}`);
      }
      assert.deepEqual(bad.slice(0, 10), []);
    });
  }
  test(`float repr: ${corpus.float_repr.length} values print like Python`, () => {
    const bad = corpus.float_repr.filter((r) => pyFloatRepr(Number(r)) !== r);
    assert.deepEqual(bad.slice(0, 10), []);
  });
});

describe('int field (docs/decisions.md#1-request-handling-order, step 5)', () => {
  const table: [PyValue, Verdict][] = [
    [7, { ok: '7' }], ['7', { ok: '7' }], [' +7 ', { ok: '7' }], ['1_000', { ok: '1000' }],
    [new PyFloat(7), { ok: '7' }], [new PyFloat(7.5), { error: 'int_from_float' }], [true, { ok: '1' }],
    [false, { ok: '0' }], [null, { error: 'int_type' }], [2n ** 64n, { ok: '18446744073709551616' }],
    [-(2n ** 70n), { ok: '-1180591620717411303424' }], [new PyFloat(Infinity), { error: 'finite_number' }],
    [new PyFloat(NaN), { error: 'finite_number' }], ['abc', { error: 'int_parsing' }], [[], { error: 'int_type' }],
    [new Map(), { error: 'int_type' }], ['7.0', { ok: '7' }], ['7.', { error: 'int_parsing' }], ['7.5', { error: 'int_parsing' }],
    ['\u00a07\u2002', { ok: '7' }], ['\u00857', { ok: '7' }], ['\ufeff7', { error: 'int_parsing' }], ['١٢', { error: 'int_parsing' }],
    ['1__0', { error: 'int_parsing' }], ['_1', { error: 'int_parsing' }], ['00_7', { ok: '7' }], ['0_.0', { error: 'int_parsing' }],
    [new PyFloat(1e20), { error: 'int_parsing_size' }], [new PyFloat(9.223372036854775e18), { ok: '9223372036854774784' }],
    [new PyFloat(-9.223372036854776e18), { error: 'int_parsing_size' }], ['9'.repeat(4301), { error: 'int_parsing_size' }],
    ['-' + '9'.repeat(4300), { error: 'int_parsing_size' }], ['+' + '9'.repeat(4300), { ok: '9'.repeat(4300) }],
    [' ' + '9'.repeat(4301), { error: 'int_parsing' }], ['\ud800', { error: 'string_unicode' }],
  ];
  for (const [input, want] of table) {
    test(`${typeof input === 'string' ? JSON.stringify(input).slice(0, 30) : String(input instanceof PyFloat ? `float ${input.value}` : input)}`, () => {
      assert.deepEqual(verdict(IntBox, input), want);
    });
  }
  test('ints beyond 2^53 come out as bigint, others as number', () => {
    const r = validateRequest(IntBox, { kind: 'value', value: new Map([['v', '9007199254740993']]) });
    assert.ok(r.ok && r.body.v === 9007199254740993n);
    const s = validateRequest(IntBox, { kind: 'value', value: new Map([['v', '-0']]) });
    assert.ok(s.ok && Object.is(s.body.v, 0));
  });
});

describe('bool field (docs/decisions.md#1-request-handling-order, step 5)', () => {
  const table: [PyValue, Verdict][] = [
    ['yes', { ok: true }], ['off', { ok: false }], ['on', { ok: true }], ['t', { ok: true }], ['f', { ok: false }],
    ['1', { ok: true }], ['0', { ok: false }], [1, { ok: true }], [0, { ok: false }], [new PyFloat(0), { ok: false }],
    [new PyFloat(1), { ok: true }], [2, { error: 'bool_parsing' }], [new PyFloat(2), { error: 'bool_parsing' }],
    [new PyFloat(0.5), { error: 'bool_type' }], ['maybe', { error: 'bool_parsing' }], [null, { error: 'bool_type' }],
    ['YES', { ok: true }], ['tRuE', { ok: true }], [' yes', { error: 'bool_parsing' }], ['', { error: 'bool_parsing' }],
    [2n ** 63n - 1n, { error: 'bool_parsing' }], [2n ** 64n, { error: 'bool_type' }], [new PyFloat(1e300), { error: 'bool_type' }],
    [new PyFloat(NaN), { error: 'bool_type' }], [[], { error: 'bool_type' }], ['ｙｅｓ', { error: 'bool_parsing' }],
    ['\ud800', { error: 'string_unicode' }],
  ];
  for (const [input, want] of table) {
    test(`${typeof input === 'string' ? JSON.stringify(input) : String(input instanceof PyFloat ? `float ${input.value}` : input)}`, () => {
      assert.deepEqual(verdict(BoolBox, input), want);
    });
  }
});

describe('Python float repr', () => {
  const table: [number, string][] = [
    [1, '1.0'], [-0, '-0.0'], [0.1, '0.1'], [1e16, '1e+16'], [1e15, '1000000000000000.0'], [1e-5, '1e-05'],
    [0.0001, '0.0001'], [1.5e-7, '1.5e-07'], [123456789012345678, '1.2345678901234568e+17'], [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'], [2.5e25, '2.5e+25'], [NaN, 'null'], [Infinity, 'null'],
  ];
  for (const [x, want] of table) test(`${x} -> ${want}`, () => assert.equal(pyFloatRepr(x), want));
});

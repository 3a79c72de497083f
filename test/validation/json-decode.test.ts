/**
 * The Python-json-compatible parser: error messages and code-point positions, the int/float
 * distinction, big ints, limits. The corpus (test/fixtures/validation/json-decode.json, from
 * tools/oracle/json_corpus.py) holds CPython 3.11's verdict on ~2600 documents.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { JsonDecodeError, JsonLimitError, PyFloat, parsePythonJson, pyFloatRepr, type PyValue } from '../../src/http/validation/index.ts';

/** Canonical text of a value, as tools/oracle/json_corpus.py prints Python's. */
function canon(v: PyValue): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'string') return asciiQuote(v);
  if (v instanceof PyFloat) {
    if (Number.isNaN(v.value)) return 'NaN';
    if (!Number.isFinite(v.value)) return v.value > 0 ? 'Infinity' : '-Infinity';
    return pyFloatRepr(v.value);
  }
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  return `{${[...v].map(([k, x]) => `${asciiQuote(k)}:${canon(x)}`).join(',')}}`;
}

/** json.dumps(s, ensure_ascii=True). */
function asciiQuote(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const short: Record<number, string> = { 0x22: '\\"', 0x5c: '\\\\', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t', 0x08: '\\b', 0x0c: '\\f' };
    if (short[c]) out += short[c];
    else if (c < 0x20 || c > 0x7e) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += s[i];
  }
  return out + '"';
}

type Outcome = { ok: string } | { error: string; pos: number } | { fatal: string };

function run(text: string): Outcome {
  try {
    return { ok: canon(parsePythonJson(text)) };
  } catch (e) {
    if (e instanceof JsonDecodeError) return { error: e.msg, pos: e.pos };
    if (e instanceof JsonLimitError) return { fatal: 'ValueError' };
    throw e;
  }
}

describe('CPython corpus', () => {
  const corpus = JSON.parse(readFileSync(new URL('../fixtures/validation/json-decode.json', import.meta.url), 'utf8')) as (Outcome & { text: string })[];
  test('has thousands of documents', () => assert.ok(corpus.length > 2000));
  test('every document decodes or fails exactly like json.JSONDecoder().decode', () => {
    const mismatches: string[] = [];
    for (const { text, ...want } of corpus) {
      const got = run(text);
      if (JSON.stringify(got) !== JSON.stringify(want)) mismatches.push(`${JSON.stringify(text)}: got ${JSON.stringify(got)} want ${JSON.stringify(want)}`);
    }
    assert.deepEqual(mismatches.slice(0, 10), []);
  });
});

describe('error messages and positions', () => {
  const table: [string, string, number][] = [
    ['{', 'Expecting property name enclosed in double quotes', 1],
    ['{"a":1,}', 'Expecting property name enclosed in double quotes', 7],
    ['[1,]', 'Expecting value', 3],
    ['{"a" 1}', "Expecting ':' delimiter", 5],
    ['[1 2]', "Expecting ',' delimiter", 3],
    ['{"a":1}}', 'Extra data', 7],
    ['"abc', 'Unterminated string starting at', 0],
    ['["a\nb"]', 'Invalid control character at', 3],
    ['"\\x"', 'Invalid \\escape', 1],
    ['"\\u12"', 'Invalid \\uXXXX escape', 2],
    ['"\\ud800\\uZZZZ"', 'Invalid \\uXXXX escape', 8],
    ["{'a':1}", 'Expecting property name enclosed in double quotes', 1],
    [' ', 'Expecting value', 1],
    ['\ufeff{}', 'Expecting value', 0],
    ['-', 'Expecting value', 0],
    ['01', 'Extra data', 1],
    // positions count code points: each emoji is one
    ['["😀😀", "😀" "x"]', "Expecting ',' delimiter", 11],
    ['{"😀":1,}', 'Expecting property name enclosed in double quotes', 7],
    ['"\\ud83d\\ude00" x', 'Extra data', 15],
  ];
  for (const [text, msg, pos] of table) {
    test(JSON.stringify(text), () => assert.deepEqual(run(text), { error: msg, pos }));
  }
});

describe('values', () => {
  test('ints stay ints, floats stay floats, big ints are bigints', () => {
    const v = parsePythonJson('[7, 7.0, -0, -0.0, 1e2, 9007199254740993, 123456789012345678901234567890]') as PyValue[];
    assert.equal(v[0], 7);
    assert.ok(v[1] instanceof PyFloat && v[1].value === 7);
    assert.ok(Object.is(v[2], 0));
    assert.ok(v[3] instanceof PyFloat && Object.is(v[3].value, -0));
    assert.ok(v[4] instanceof PyFloat && v[4].value === 100);
    assert.equal(v[5], 9007199254740993n);
    assert.equal(v[6], 123456789012345678901234567890n);
  });
  test('NaN and infinities are accepted, 1e400 is infinity', () => {
    const v = parsePythonJson('[NaN, Infinity, -Infinity, 1e400]') as PyFloat[];
    assert.ok(Number.isNaN(v[0].value));
    assert.deepEqual(v.slice(1).map((f) => f.value), [Infinity, -Infinity, Infinity]);
  });
  test('duplicate keys: last value wins, first position kept', () => {
    const v = parsePythonJson('{"b":1,"a":2,"b":3,"10":4,"9":5}') as Map<string, PyValue>;
    assert.deepEqual([...v], [['b', 3], ['a', 2], ['10', 4], ['9', 5]]);
  });
  test('escaped surrogate pairs join, lone ones stay lone', () => {
    assert.equal(parsePythonJson('"\\ud83d\\ude00"'), '😀');
    assert.equal(parsePythonJson('"\\ud83d\\u0041"'), '\ud83dA');
    assert.equal(parsePythonJson('"\\ude00\\ud83d"'), '\ude00\ud83d');
  });
  test('__proto__ is an ordinary key and nothing is polluted', () => {
    const v = parsePythonJson('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}') as Map<string, PyValue>;
    assert.ok(v.has('__proto__'));
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
  });
});

describe('limits (400 upstream)', () => {
  const limit = (text: string): string | null => {
    try {
      parsePythonJson(text);
      return null;
    } catch (e) {
      return e instanceof JsonLimitError ? e.reason : 'decode';
    }
  };
  test('nesting: 512 levels pass, 513 fail, even unclosed', () => {
    assert.equal(limit('['.repeat(512) + ']'.repeat(512)), null);
    assert.equal(limit('['.repeat(513) + ']'.repeat(513)), 'depth');
    assert.equal(limit('{"a":'.repeat(513) + '1' + '}'.repeat(513)), 'depth');
    assert.equal(limit('['.repeat(513)), 'depth');
    assert.equal(limit('['.repeat(512)), 'decode');
  });
  test('int literals: 4300 digits pass (sign not counted), 4301 fail; floats are not limited', () => {
    assert.equal(limit('1'.repeat(4300)), null);
    assert.equal(limit('-' + '1'.repeat(4300)), null);
    assert.equal(limit('1'.repeat(4301)), 'int_digits');
    assert.equal(limit('1'.repeat(5000) + '.5'), null);
    assert.equal(limit('[x,' + '1'.repeat(4301) + ']'), 'decode');
    assert.equal(limit('[' + '1'.repeat(4301) + ',x]'), 'int_digits');
  });
});

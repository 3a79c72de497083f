/**
 * Body reading (decisions.md section 1 step 2): Content-Type rules, empty/null bodies,
 * Python's byte decoding (BOM, UTF-16/32 sniffing, surrogatepass), parse failures, and the
 * order body parsing -> authentication -> validation of decideStatus.
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CreateSegment, bodyParseFailure, decideStatus, isJsonContentType, parseBody, validateRequest,
  type AuthOutcome, type BodyParse,
} from '../../src/http/validation/index.ts';

describe('Content-Type', () => {
  const json = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'Application/Json;charset=UTF-8',
    'application/vnd.api+json', 'application/+json', 'application/problem+JSON', 'application/json ; q=1', 'application/json;',
    ' application/json ', 'application/json; charset=latin-1'];
  const raw = [undefined, '', 'text/plain', 'application/jsonx', 'application/xml', 'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x', 'text/json', 'application', 'application/', 'application/json/x', '*/*',
    'application/json, text/plain', 'json'];
  for (const ct of json) test(`${JSON.stringify(ct)} is JSON`, () => assert.equal(isJsonContentType(ct), true));
  for (const ct of raw) test(`${JSON.stringify(ct)} is not JSON`, () => assert.equal(isJsonContentType(ct), false));
  test('a non-JSON body is its text, which fails model validation', () => {
    const p = parseBody(Buffer.from('{"name":"x"}'), 'text/plain');
    assert.deepEqual(p, { kind: 'value', value: '{"name":"x"}' });
    const v = validateRequest(CreateSegment, p);
    assert.ok(!v.ok && v.errors[0].type === 'model_attributes_type');
  });
});

describe('empty and null bodies are missing', () => {
  for (const [body, ct] of [['', 'application/json'], ['', undefined], ['', 'text/plain'], ['null', 'application/json'], [' \n null\t', 'application/json']] as const) {
    test(`${JSON.stringify(body)} with ${ct}`, () => assert.deepEqual(parseBody(Buffer.from(body), ct), { kind: 'missing' }));
  }
  test('whitespace only is malformed JSON (Expecting value at its end)', () => {
    const p = parseBody(Buffer.from(' \t'), 'application/json');
    assert.equal(p.kind, 'invalid');
    assert.deepEqual(p.kind === 'invalid' && [p.errors[0].loc, p.errors[0].ctx], [['body', 2], { error: 'Expecting value' }]);
  });
});

describe('byte decoding like json.loads(bytes)', () => {
  const value = (b: Uint8Array): unknown => {
    const p = parseBody(b, 'application/json');
    return p.kind === 'value' ? p.value : p.kind;
  };
  const name = (v: unknown): unknown => (v instanceof Map ? v.get('name') : v);
  test('one UTF-8 BOM is dropped, a second one is an error', () => {
    assert.equal(name(value(Buffer.from('\ufeff{"name":"x"}'))), 'x');
    assert.equal(value(Buffer.from('\ufeff\ufeff{}')), 'invalid');
  });
  test('UTF-16 and UTF-32, with or without BOM', () => {
    const doc = '{"name":"é😀"}';
    assert.equal(name(value(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(doc, 'utf16le')]))), 'é😀');
    assert.equal(name(value(Buffer.from(doc, 'utf16le'))), 'é😀');
    assert.equal(name(value(Buffer.from(doc, 'utf16le').swap16())), 'é😀');
    const cps = [...doc].map((c) => c.codePointAt(0) as number);
    const le32 = Buffer.alloc(cps.length * 4);
    cps.forEach((cp, i) => le32.writeUInt32LE(cp, i * 4));
    assert.equal(name(value(le32)), 'é😀');
    assert.equal(value(Buffer.concat([Buffer.from(doc, 'utf16le'), Buffer.from([0])])), 'unparseable');
  });
  test('invalid UTF-8 is unparseable whatever the Content-Type', () => {
    for (const bytes of [[0xff], [0x22, 0xc0, 0xaf, 0x22], [0x22, 0xe2, 0x82], [0x22, 0xf4, 0x90, 0x80, 0x80, 0x22]]) {
      assert.equal(parseBody(Buffer.from(bytes), 'application/json').kind, 'unparseable');
      assert.equal(parseBody(Buffer.from(bytes), 'text/plain').kind, 'unparseable');
    }
  });
  test('an encoded lone surrogate passes in JSON (surrogatepass), a CESU-8 pair does not', () => {
    assert.equal(name(value(Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]))), '\ud800');
    assert.equal(value(Buffer.from([0x22, 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80, 0x22])), 'unparseable');
  });
});

describe('order: body parsing, then authentication, then validation', () => {
  const run = (body: string | Buffer, auth: AuthOutcome, ct = 'application/json'): [number, string] => {
    const parsed: BodyParse = parseBody(typeof body === 'string' ? Buffer.from(body) : body, ct);
    const a = decideStatus(parsed, auth, () => validateRequest(CreateSegment, parsed));
    return a ? [a.status, a.body] : [200, ''];
  };
  test('malformed JSON beats a missing key (422 json_invalid)', () => assert.equal(run('{"name":', 'missing')[0], 422));
  test('invalid UTF-8 beats a missing key (400)', () => assert.deepEqual(run(Buffer.from([0xff]), 'missing'), [400, '{"detail":"There was an error parsing the body"}']));
  test('nesting over 512 beats a missing key (400)', () => assert.equal(run('['.repeat(513) + ']'.repeat(513), 'missing')[0], 400));
  test('a missing key beats a missing body and validation errors', () => {
    assert.deepEqual(run('', 'missing'), [401, '{"detail":"Not authenticated"}']);
    assert.deepEqual(run('{"name":""}', 'invalid'), [401, '{"detail":"Invalid API key"}']);
    assert.equal(run('{"name":"x"}', 'missing', 'text/plain')[0], 401);
  });
  test('401 for a missing key carries WWW-Authenticate: APIKey', () => {
    const a = decideStatus({ kind: 'missing' }, 'missing', () => ({ ok: false, errors: [] }));
    assert.equal(a?.headers['www-authenticate'], 'APIKey');
    const b = decideStatus({ kind: 'missing' }, 'invalid', () => ({ ok: false, errors: [] }));
    assert.equal(b?.headers['www-authenticate'], undefined);
  });
  test('with a good key: missing body is 422 missing', () => {
    assert.deepEqual(run('', 'ok'), [422, '{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}']);
  });
  test('bodyParseFailure is null for values and missing bodies', () => {
    assert.equal(bodyParseFailure({ kind: 'missing' }), null);
    assert.equal(bodyParseFailure({ kind: 'value', value: 1 }), null);
  });
});

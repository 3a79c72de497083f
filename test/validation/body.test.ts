/**
 * Body reading (docs/decisions.md#1-request-handling-order, step 2): Content-Type rules, empty/null bodies,
 * Python's byte decoding (BOM, UTF-16/32 sniffing, surrogatepass), parse failures, and the
 * order body parsing -> authentication -> validation of the request pipeline (src/http/public-operation.ts
 * `admit`, the steps the public routes run).
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AuthResult } from '../../src/http/auth.ts';
import { admit, isAnswer, parseStep } from '../../src/http/public-operation.ts';
import { CreateSegment, isJsonContentType, parseBody, validateRequest } from '../../src/http/validation/index.ts';

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
  type Key = 'missing' | 'invalid' | 'ok';
  const company = { keyId: 1, companyId: 1, defaultCountry: 'DE', subscriptionActive: true, connectorConnected: false };
  // The authenticator's answers (src/http/auth.ts) without a database: no key, an unknown key, a good key.
  const authenticate = async (key: string | undefined): Promise<AuthResult> =>
    !key ? { ok: false, detail: 'Not authenticated' } : key === 'good' ? { ok: true, auth: company } : { ok: false, detail: 'Invalid API key' };
  const apiKey = (k: Key) => (k === 'missing' ? undefined : k === 'ok' ? 'good' : 'bad');
  const admitted = (body: string | Buffer, k: Key, ct = 'application/json') =>
    admit({ model: CreateSegment }, { rawBody: typeof body === 'string' ? Buffer.from(body) : body, contentType: ct, apiKey: apiKey(k), params: {} }, authenticate);
  const run = async (body: string | Buffer, k: Key, ct = 'application/json'): Promise<[number, string]> => {
    const a = await admitted(body, k, ct);
    return isAnswer(a) ? [a.status, a.text] : [200, ''];
  };
  test('malformed JSON beats a missing key (422 json_invalid)', async () => assert.equal((await run('{"name":', 'missing'))[0], 422));
  test('invalid UTF-8 beats a missing key (400)', async () => assert.deepEqual(await run(Buffer.from([0xff]), 'missing'), [400, '{"detail":"There was an error parsing the body"}']));
  test('nesting over 512 beats a missing key (400)', async () => assert.equal((await run('['.repeat(513) + ']'.repeat(513), 'missing'))[0], 400));
  test('a missing key beats a missing body and validation errors', async () => {
    assert.deepEqual(await run('', 'missing'), [401, '{"detail":"Not authenticated"}']);
    assert.deepEqual(await run('{"name":""}', 'invalid'), [401, '{"detail":"Invalid API key"}']);
    assert.equal((await run('{"name":"x"}', 'missing', 'text/plain'))[0], 401);
  });
  test('401 for a missing key carries WWW-Authenticate: APIKey', async () => {
    const a = await admitted('', 'missing');
    assert.ok(isAnswer(a));
    assert.equal(a.headers?.['WWW-Authenticate'], 'APIKey');
    const b = await admitted('', 'invalid');
    assert.ok(isAnswer(b));
    assert.equal(b.headers?.['WWW-Authenticate'], undefined);
  });
  test('with a good key: missing body is 422 missing', async () => {
    assert.deepEqual(await run('', 'ok'), [422, '{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}']);
  });
  test('with a good key and a valid body: admitted with the validated body', async () => {
    const a = await admitted('{"name":"x"}', 'ok');
    assert.ok(!isAnswer(a));
    assert.deepEqual(a.body, { name: 'x' });
    assert.equal(a.auth.companyId, 1);
  });
  test('the authenticator is not asked when the body cannot be parsed', async () => {
    let asked = 0;
    const a = await admit({ model: CreateSegment }, { rawBody: Buffer.from('{'), contentType: 'application/json', apiKey: 'good', params: {} },
      async (k) => { asked++; return authenticate(k); });
    assert.ok(isAnswer(a) && a.status === 422);
    assert.equal(asked, 0);
  });
  test('parseStep passes values and missing bodies on', () => {
    assert.deepEqual(parseStep(Buffer.alloc(0), 'application/json'), { kind: 'missing' });
    assert.deepEqual(parseStep(Buffer.from('1'), 'application/json'), { kind: 'value', value: 1 });
  });
});

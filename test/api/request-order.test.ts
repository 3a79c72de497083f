/**
 * docs/decisions.md#1-request-handling-order, row by row, over HTTP against the real server: routing, body parsing, authentication,
 * subscription, validation, rate limit, in that order; every refusal has the documented status and body
 * and changes nothing.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
let key: string;
let companyId: number;
before(async () => {
  s = await startTestServer();
  ({ key, companyId } = await s.company());
});
after(() => s.close());

describe('1. routing', () => {
  test('unknown path: 404 Not Found', async () => {
    const r = await s.api('/api/nope', { key, body: {} });
    assert.equal(r.status, 404);
    assert.equal(r.text, '{"detail":"Not Found"}');
  });
  test('known path, wrong method: 405 with Allow', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const r = await fetch(s.url + '/api/segments/create', { method });
      assert.equal(r.status, 405, method);
      assert.equal(await r.text(), '{"detail":"Method Not Allowed"}');
      assert.equal(r.headers.get('allow'), 'POST');
    }
    const r = await fetch(s.url + '/api/segments/12/contacts', { method: 'GET' });
    assert.equal(r.status, 405);
    assert.equal(r.headers.get('allow'), 'POST');
  });
});

describe('2. body parsing', () => {
  test('malformed JSON: 422 json_invalid with Python position and message, even without a key', async () => {
    const expected = '{"detail":[{"type":"json_invalid","loc":["body",12],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting \',\' delimiter"}}]}';
    for (const k of [key, undefined]) {
      const r = await s.api('/api/segments/create', { key: k, raw: '{"name": "x"' });
      assert.equal(r.status, 422);
      assert.equal(r.text, expected);
    }
  });
  test('JSON content types: application/json with parameters, any case, and +json', async () => {
    for (const ct of ['application/json; charset=utf-8', 'APPLICATION/JSON', 'application/vnd.api+json']) {
      const r = await s.api('/api/segments/create', { key, raw: '{"name": 5}', contentType: ct });
      assert.equal(r.status, 422, ct);
      assert.equal(r.json.detail[0].type, 'string_type', ct);
    }
  });
  test('other or missing Content-Type: the raw text is the input (model_attributes_type)', async () => {
    const r = await s.api('/api/segments/create', { key, raw: 'hello', contentType: 'text/plain' });
    assert.equal(r.status, 422);
    assert.equal(r.text, '{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"hello"}]}');
    const r2 = await s.api('/api/segments/create', { key, raw: '{"name":"x"}', contentType: null });
    assert.equal(r2.status, 422);
    assert.equal(r2.json.detail[0].type, 'model_attributes_type');
  });
  test('empty body or null: 422 missing', async () => {
    for (const raw of ['', 'null']) {
      const r = await s.api('/api/segments/create', { key, raw });
      assert.equal(r.status, 422, JSON.stringify(raw));
      assert.equal(r.text, '{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}');
    }
  });
  test('invalid UTF-8, nesting deeper than 512, number longer than 4300 digits: 400', async () => {
    const bodies: (string | Buffer)[] = [
      Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      '['.repeat(600) + ']'.repeat(600),
      '{"name": ' + '9'.repeat(4301) + '}',
    ];
    for (const raw of bodies) {
      const r = await s.api('/api/segments/create', { key, raw });
      assert.equal(r.status, 400);
      assert.equal(r.text, '{"detail":"There was an error parsing the body"}');
    }
  });
  test('body over 1 MiB: 413', async () => {
    const r = await s.api('/api/segments/create', { key, raw: JSON.stringify({ name: 'x'.repeat(1024 * 1024) }) });
    assert.equal(r.status, 413);
    assert.equal(r.text, '{"detail":"Request body too large"}');
  });
});

describe('3. authentication', () => {
  test('missing or empty key: 401 Not authenticated with WWW-Authenticate: APIKey', async () => {
    for (const k of [undefined, '']) {
      const r = await s.api('/api/segments/create', { key: k, body: { name: 'x' } });
      assert.equal(r.status, 401);
      assert.equal(r.text, '{"detail":"Not authenticated"}');
      assert.equal(r.headers.get('www-authenticate'), 'APIKey');
    }
  });
  test('unknown key: 401 Invalid API key, before validation', async () => {
    for (const k of ['nope', key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A'), 'cms_live_' + 'x'.repeat(38)]) {
      const r = await s.api('/api/segments/create', { key: k, body: { name: '' } });
      assert.equal(r.status, 401);
      assert.equal(r.text, '{"detail":"Invalid API key"}');
    }
  });
  test('revoked key: 401 Invalid API key on every operation', async () => {
    const k = await s.admin('POST', `/admin/companies/${companyId}/api-keys`, { label: 'to revoke' });
    const ok = await s.api('/api/segments/create', { key: k.api_key, body: { name: 'before revoke' } });
    assert.equal(ok.status, 200);
    await s.admin('DELETE', `/admin/api-keys/${k.key_id}`, undefined, 204);
    for (const p of ['/api/segments/create', '/api/segments/1/contacts', '/api/automations/send', '/api/connector/send']) {
      const r = await s.api(p, { key: k.api_key, body: {} });
      assert.equal(r.status, 401, p);
      assert.equal(r.text, '{"detail":"Invalid API key"}');
    }
  });
});

describe('4. subscription (4.2 only)', () => {
  test('no active subscription: 403 on 4.2, before validation; other operations unaffected', async () => {
    const c = await s.company({ subscription_active: false });
    const r = await s.api('/api/segments/abc/contacts', { key: c.key, body: { contacts: 'x' } });
    assert.equal(r.status, 403);
    assert.equal(r.text, '{"detail":"An active subscription is required"}');
    const seg = await s.api('/api/segments/create', { key: c.key, body: { name: 'allowed' } });
    assert.equal(seg.status, 200);
  });
});

describe('5. validation', () => {
  test('path errors first, then body errors in field order', async () => {
    const r = await s.api('/api/segments/abc/contacts', { key, body: { contacts: ['1'], mode: 'upsert' } });
    assert.equal(r.status, 422);
    assert.equal(r.text, '{"detail":[{"type":"int_parsing","loc":["path","segment_id"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"abc"},{"type":"literal_error","loc":["body","mode"],"msg":"Input should be \'add\' or \'delete\'","input":"upsert","ctx":{"expected":"\'add\' or \'delete\'"}}]}');
  });
  test('all errors of a body in one answer', async () => {
    const r = await s.api('/api/connector/send', { key, body: { contacts: [{ phone: 5 }] } });
    assert.equal(r.status, 422);
    assert.equal(r.text, '{"detail":[{"type":"missing","loc":["body","campaign_id"],"msg":"Field required","input":{"contacts":[{"phone":5}]}},{"type":"string_type","loc":["body","contacts",0,"phone"],"msg":"Input should be a valid string","input":5}]}');
  });
  test('unknown fields are ignored; lax coercion of ints', async () => {
    const r = await s.api('/api/segments/create', { key, body: { name: 'lax', extra: [1, 2] } });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.json), ['name', 'segment_id']);
  });
});

describe('6. rate limit', () => {
  test('4.1 admits 10 per second, then 429 with the text and headers; invalid requests do not count', async () => {
    const c = await s.company();
    // Invalid requests first: they must not use up the limit.
    for (let i = 0; i < 15; i++) {
      const bad = await s.api('/api/segments/create', { key: c.key, body: { name: '' } });
      assert.equal(bad.status, 422);
    }
    const answers = await Promise.all(Array.from({ length: 14 }, (_, i) =>
      s.api('/api/segments/create', { key: c.key, body: { name: `n${i}` } })));
    const ok = answers.filter((a) => a.status === 200).length;
    const limited = answers.filter((a) => a.status === 429);
    // All 14 arrive within well under a second on this machine; allow for a slow runner crossing a window.
    assert.ok(ok >= 10 && ok <= 14, `admitted ${ok}`);
    if (ok === 10) assert.equal(limited.length, 4);
    for (const a of limited) {
      assert.equal(a.text, '{"error":"Rate limit exceeded: 10 per 1 second"}');
      assert.match(a.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assert.equal(a.headers.get('ratelimit-policy'), '"create_segment";q=10;w=1');
      assert.match(a.headers.get('ratelimit') ?? '', /^"create_segment";r=0;t=\d+$/);
    }
  });
  test('4.2 admits 1 per minute per company; another company is not affected', async () => {
    const a = await s.company();
    const b = await s.company();
    const segA = (await s.api('/api/segments/create', { key: a.key, body: { name: 'a' } })).json.segment_id;
    const segB = (await s.api('/api/segments/create', { key: b.key, body: { name: 'b' } })).json.segment_id;
    const body = { contacts: ['+4915112345678'], mode: 'add' };
    assert.equal((await s.api(`/api/segments/${segA}/contacts`, { key: a.key, body })).status, 200);
    const second = await s.api(`/api/segments/${segA}/contacts`, { key: a.key, body });
    assert.equal(second.status, 429);
    assert.equal(second.text, '{"error":"Rate limit exceeded: 1 per 1 minute"}');
    assert.ok(Number(second.headers.get('retry-after')) >= 59);
    assert.equal((await s.api(`/api/segments/${segB}/contacts`, { key: b.key, body })).status, 200);
  });
});

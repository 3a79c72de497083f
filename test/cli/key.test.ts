/** `cms key create|revoke` against the fake operator API. */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { cli, startFakeApi, type FakeApi } from './helpers.ts';

describe('cms key', () => {
  let api: FakeApi;
  before(async () => {
    api = await startFakeApi();
  });
  after(() => api.close());
  beforeEach(() => api.reset());

  it('create posts the label and prints the key prominently, once-only warning included', async () => {
    const r = await cli(api, ['key', 'create', '--company', '3', '--label', 'shop']);
    assert.equal(r.code, 0, r.stderr);
    const [req] = api.requests;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/admin/companies/3/api-keys');
    assert.deepEqual(req.body, { label: 'shop' });
    assert.match(r.stdout, /^ {2}cms_live_SECRETKEY123$/m, 'the key stands on its own line');
    assert.match(r.stdout, /shown only once/);
    assert.match(r.stdout, /^key_id\t42$/m);
  });

  it('create without label sends an empty object; --json prints the answer', async () => {
    const r = await cli(api, ['key', 'create', '--company', '3', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(api.requests[0].body, {});
    assert.deepEqual(JSON.parse(r.stdout), { key_id: 42, api_key: 'cms_live_SECRETKEY123', label: null });
  });

  it('revoke sends DELETE and confirms', async () => {
    const r = await cli(api, ['key', 'revoke', '42']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(api.requests[0].method, 'DELETE');
    assert.equal(api.requests[0].path, '/admin/api-keys/42');
    assert.equal(api.requests[0].body, undefined);
    assert.match(r.stdout, /API key 42 revoked/);
    const j = await cli(api, ['key', 'revoke', '42', '--json']);
    assert.deepEqual(JSON.parse(j.stdout), { key_id: '42', revoked: true });
  });

  it('revoke of an unknown key reports the server detail', async () => {
    api.on('DELETE', /^\/admin\/api-keys\/999$/, { status: 404, body: { detail: 'API key not found' } });
    const r = await cli(api, ['key', 'revoke', '999']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not found \(HTTP 404\): API key not found/);
  });
});

/** `cms company create|update` against the fake operator API: requests sent and output. */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { TOKEN, cli, startFakeApi, type FakeApi } from './helpers.ts';

describe('cms company', () => {
  let api: FakeApi;
  before(async () => {
    api = await startFakeApi();
  });
  after(() => api.close());
  beforeEach(() => api.reset());

  it('create sends every option and prints the company as JSON', async () => {
    const r = await cli(api, [
      'company', 'create', '--name', 'Acme', '--subscription-active', '--default-country', 'de',
      '--delivery-hours', '09:00-21:00@Europe/Berlin', '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(api.requests.length, 1);
    const [req] = api.requests;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/admin/companies');
    assert.equal(req.authorization, `Bearer ${TOKEN}`);
    assert.match(req.contentType ?? '', /application\/json/);
    assert.deepEqual(req.body, {
      name: 'Acme',
      subscription_active: true,
      default_country: 'DE',
      delivery_hours: { start: '09:00', end: '21:00', timezone: 'Europe/Berlin' },
    });
    const out = JSON.parse(r.stdout);
    assert.equal(out.company_id, 1);
    assert.equal(out.name, 'Acme');
    assert.equal(r.stderr, '');
  });

  it('create with only a name sends only the name and prints a table', async () => {
    const r = await cli(api, ['company', 'create', '--name', 'Beta GmbH']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(api.requests[0].body, { name: 'Beta GmbH' });
    assert.match(r.stdout, /Company created/);
    assert.match(r.stdout, /^company_id\t\d+$/m);
    assert.match(r.stdout, /Beta GmbH/);
    assert.throws(() => JSON.parse(r.stdout));
  });

  it('accepts --json before the command too', async () => {
    const r = await cli(api, ['--json', 'company', 'create', '--name', 'Gamma']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).name, 'Gamma');
  });

  it('update sends only the given fields with PATCH', async () => {
    const r = await cli(api, ['company', 'update', '5', '--no-subscription-active', '--delivery-hours', 'none', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const [req] = api.requests;
    assert.equal(req.method, 'PATCH');
    assert.equal(req.path, '/admin/companies/5');
    assert.deepEqual(req.body, { subscription_active: false, delivery_hours: null });
    assert.equal(JSON.parse(r.stdout).company_id, 5);
  });

  it('update renders delivery hours compactly in table mode', async () => {
    const r = await cli(api, ['company', 'update', '3', '--delivery-hours', '08:30-20:00@America/New_York']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /08:30-20:00@America\/New_York/);
  });

  it('update without fields is a usage error and sends nothing', async () => {
    const r = await cli(api, ['company', 'update', '5']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /nothing to update/);
    assert.equal(api.requests.length, 0);
  });

  it('rejects malformed options before sending anything', async () => {
    for (const args of [
      ['--delivery-hours', '9-17'],
      ['--delivery-hours', '09:00-21:00@Mars/Olympus'],
      ['--default-country', 'Germany'],
    ]) {
      const r = await cli(api, ['company', 'create', '--name', 'X', ...args]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, /cms: error: option/);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
    const missing = await cli(api, ['company', 'create']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--name/);
    assert.equal(api.requests.length, 0);
  });
});

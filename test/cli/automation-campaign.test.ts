/** `cms automation create|update` and `cms campaign create`: template handling and bodies sent. */
import assert from 'node:assert/strict';
import { writeFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { cli, runCli, startFakeApi, tempDir, TOKEN, type FakeApi } from './helpers.ts';

const template = {
  header: { type: 'image', url: 'https://cdn.example/default.png' },
  body: 'Hi {{ first_name }}, your order {{ order_id }} has shipped.',
  buttons: [{ type: 'url', text: 'Track', url: 'https://shop.example/track' }],
  whatsapp: { name: 'order_shipped', language: 'en' },
};

describe('cms automation / campaign', () => {
  let api: FakeApi;
  let dir: string;
  let file: string;
  before(async () => {
    api = await startFakeApi();
    dir = await tempDir();
    file = path.join(dir, 'shipped.json');
    await writeFile(file, JSON.stringify(template));
    await writeFile(path.join(dir, 'broken.json'), '{"body": ');
  });
  after(async () => {
    await api.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => api.reset());

  it('automation create sends the template file, type api and active by default', async () => {
    const r = await cli(api, ['automation', 'create', '--company', '2', '--name', 'Shipped', '--type', 'api', '--template', file, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const [req] = api.requests;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/admin/companies/2/automations');
    assert.deepEqual(req.body, { name: 'Shipped', type: 'api', active: true, template });
    assert.equal(JSON.parse(r.stdout).automation_id, 7);
  });

  it('automation create --body builds the minimal template; --inactive sends active false', async () => {
    const r = await cli(api, ['automation', 'create', '--company', '2', '--name', 'Hello', '--body', 'Hi {{ first_name }}', '--inactive']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(api.requests[0].body, {
      name: 'Hello',
      type: 'api',
      active: false,
      template: { header: { type: 'none' }, body: 'Hi {{ first_name }}', buttons: [] },
    });
    assert.match(r.stdout, /Automation created/);
    assert.match(r.stdout, /^automation_id\t7$/m);
  });

  it('reads the template from stdin with --template -', async () => {
    const r = await runCli(['automation', 'create', '--company', '2', '--name', 'S', '--template', '-', '--json'], {
      env: { CMS_URL: api.url, ADMIN_TOKEN: TOKEN },
      stdin: JSON.stringify(template),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(api.requests[0].body.template, template);
  });

  it('template problems are reported without sending', async () => {
    const both = await cli(api, ['automation', 'create', '--company', '2', '--name', 'X', '--body', 'b', '--template', file]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /cannot be used with/);
    const none = await cli(api, ['automation', 'create', '--company', '2', '--name', 'X']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /--template FILE.json or --body TEXT/);
    const missing = await cli(api, ['campaign', 'create', '--company', '2', '--name', 'X', '--template', path.join(dir, 'nope.json')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read template file .*nope\.json: ENOENT/);
    const broken = await cli(api, ['campaign', 'create', '--company', '2', '--name', 'X', '--template', path.join(dir, 'broken.json')]);
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /is not valid JSON/);
    assert.equal(api.requests.length, 0);
  });

  it('automation update sends only the given fields', async () => {
    const r = await cli(api, ['automation', 'update', '7', '--inactive', '--name', 'Renamed', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const [req] = api.requests;
    assert.equal(req.method, 'PATCH');
    assert.equal(req.path, '/admin/automations/7');
    assert.deepEqual(req.body, { name: 'Renamed', active: false });
    assert.equal(JSON.parse(r.stdout).active, false);

    const t = await cli(api, ['automation', 'update', '7', '--active', '--template', file]);
    assert.equal(t.code, 0, t.stderr);
    assert.deepEqual(api.requests[1].body, { active: true, template });
    assert.match(t.stdout, /Automation updated/);
  });

  it('automation update refuses --active with --inactive, and no fields at all', async () => {
    const both = await cli(api, ['automation', 'update', '7', '--active', '--inactive']);
    assert.equal(both.code, 2);
    const none = await cli(api, ['automation', 'update', '7']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /nothing to update/);
    assert.equal(api.requests.length, 0);
  });

  it('automation update copes with an empty 200 answer', async () => {
    api.on('PATCH', /^\/admin\/automations\/8$/, { status: 200 });
    const r = await cli(api, ['automation', 'update', '8', '--active']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Automation 8 updated/);
  });

  it('campaign create sends name and template', async () => {
    const r = await cli(api, ['campaign', 'create', '--company', '4', '--name', 'Spring sale', '--body', 'Sale!', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const [req] = api.requests;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/admin/companies/4/campaigns');
    assert.deepEqual(req.body, { name: 'Spring sale', template: { header: { type: 'none' }, body: 'Sale!', buttons: [] } });
    assert.equal(JSON.parse(r.stdout).campaign_id, 9);

    const t = await cli(api, ['campaign', 'create', '--company', '4', '--name', 'Shipped', '--template', file]);
    assert.equal(t.code, 0, t.stderr);
    assert.deepEqual(api.requests[1].body.template, template);
    assert.match(t.stdout, /Campaign created/);
  });
});

/** `cms connector connect|disconnect` and `cms channel set`: bodies per provider, option checks. */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { TOKEN, cli, runCli, startFakeApi, type FakeApi } from './helpers.ts';

describe('cms connector / channel', () => {
  let api: FakeApi;
  before(async () => {
    api = await startFakeApi();
  });
  after(() => api.close());
  beforeEach(() => api.reset());

  it('connector connect and disconnect PUT {connected, provider?}', async () => {
    const c = await cli(api, ['connector', 'connect', '--company', '3', '--provider', 'pushco', '--json']);
    assert.equal(c.code, 0, c.stderr);
    assert.equal(api.requests[0].method, 'PUT');
    assert.equal(api.requests[0].path, '/admin/companies/3/connector');
    assert.deepEqual(api.requests[0].body, { connected: true, provider: 'pushco' });
    assert.equal(JSON.parse(c.stdout).connected, true);

    const d = await cli(api, ['connector', 'disconnect', '--company', '3']);
    assert.equal(d.code, 0, d.stderr);
    assert.deepEqual(api.requests[1].body, { connected: false });
    assert.match(d.stdout, /Connector disconnected/);
  });

  it('channel set outbox / webhook / whatsapp send the matching shapes', async () => {
    const cases: [string[], unknown][] = [
      [['--provider', 'outbox'], { provider: 'outbox' }],
      [
        ['--provider', 'webhook', '--url', 'https://hooks.example/cms', '--secret', 'whsec_abc'],
        { provider: 'webhook', url: 'https://hooks.example/cms', secret: 'whsec_abc' },
      ],
      [
        ['--provider', 'whatsapp', '--phone-number-id', '1234', '--access-token', 'EAAG', '--api-base-url', 'https://graph.example/v21.0'],
        { provider: 'whatsapp', phone_number_id: '1234', access_token: 'EAAG', api_base_url: 'https://graph.example/v21.0' },
      ],
      [
        ['--provider', 'whatsapp', '--phone-number-id', '1234', '--access-token', 'EAAG'],
        { provider: 'whatsapp', phone_number_id: '1234', access_token: 'EAAG' },
      ],
    ];
    for (const [args, body] of cases) {
      api.requests.length = 0;
      const r = await cli(api, ['channel', 'set', '--company', '6', ...args]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(api.requests[0].method, 'PUT');
      assert.equal(api.requests[0].path, '/admin/companies/6/channel');
      assert.deepEqual(api.requests[0].body, body);
      assert.match(r.stdout, /Channel set/);
    }
  });

  it('channel set --url is the webhook URL; the server URL goes before the command', async () => {
    const r = await runCli(
      ['--url', api.url, 'channel', 'set', '--company', '6', '--provider', 'webhook', '--url', 'https://h.example/x', '--secret', 's', '--json'],
      { env: { ADMIN_TOKEN: TOKEN, CMS_URL: 'http://127.0.0.1:2' } },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(api.requests[0].body.url, 'https://h.example/x');
    assert.deepEqual(JSON.parse(r.stdout), { company_id: 6, provider: 'webhook' });
  });

  it('channel set checks provider-specific options locally', async () => {
    const bad: [string[], RegExp][] = [
      [['--provider', 'webhook'], /needs --url/],
      [['--provider', 'webhook', '--url', 'ftp://h.example', '--secret', 's'], /http\(s\) URL/],
      [['--provider', 'whatsapp', '--phone-number-id', '1'], /needs --access-token/],
      [['--provider', 'outbox', '--secret', 's'], /--secret: not used with --provider outbox/],
      [['--provider', 'sms'], /choices/],
      [[], /--provider/],
    ];
    for (const [args, message] of bad) {
      const r = await cli(api, ['channel', 'set', '--company', '6', ...args]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, message);
    }
    assert.equal(api.requests.length, 0);
  });
});

/**
 * No request can make the service fetch an address of the operator's private network.
 * The server here runs with PROVIDER_ALLOWED_HOSTS empty, as in production without exceptions.
 *
 * - Storing a webhook or WhatsApp URL that points at a private, loopback, link-local or otherwise
 *   reserved address (in any spelling: octal, integer, IPv6, IPv4-mapped, a name that resolves there)
 *   is refused with 422 and leaves the channel unchanged.
 * - At connect time, `guardedLookup` refuses such addresses whatever the name: a channel that reaches
 *   the database anyway (DNS rebinding: a name that resolved publicly when it was stored) fails its
 *   messages without a single connection to the private receiver.
 * - Media URLs are passed on, never fetched.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'undici';
import { guardedLookup, parseAddressPolicy } from '../../src/delivery/network-guard.ts';
import { freshDatabase, type FreshDatabase } from '../fuzz/fresh-database.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { approveTemplates } from '../helpers/whatsapp.ts';

let s: TestServer;
let receiver: WebhookReceiver;
let port: number;
let fresh: FreshDatabase | undefined;

before(async () => {
  receiver = await startReceiver();
  port = Number(new URL(receiver.origin).port);
  // On PostgreSQL, a database of its own: the queue of the shared one may hold other files' backlog.
  if (process.env.TEST_DATABASE_URL) fresh = await freshDatabase(process.env.TEST_DATABASE_URL, 'ssrf');
  s = await startTestServer({ env: { PROVIDER_ALLOWED_HOSTS: '', ...(fresh ? { DATABASE_URL: fresh.url } : {}) } });
});
after(async () => {
  await s?.close();
  await receiver?.close();
  await fresh?.drop();
});

const PRIVATE_URLS = [
  'http://127.0.0.1/x', 'http://127.1/x', 'http://0177.0.0.1/x', 'http://2130706433/x', 'http://0x7f000001/x',
  'http://0.0.0.0/x', 'http://0/x', 'http://localhost/x', 'http://LOCALHOST./x',
  'http://10.0.0.7/hook', 'http://172.16.5.4/hook', 'http://192.168.1.1/hook', 'http://100.64.0.1/x',
  'http://169.254.169.254/latest/meta-data/', 'http://198.18.0.1/x', 'http://224.0.0.1/x', 'http://255.255.255.255/x',
  'http://[::1]/x', 'http://[::]/x', 'http://[::ffff:127.0.0.1]/x', 'http://[::ffff:a9fe:a9fe]/x', 'http://[fd00::1]/x', 'http://[fe80::1]/x',
  'https://127.0.0.1:8443/x', 'http://user:pw@example.com/x',
  'file:///etc/passwd', 'gopher://127.0.0.1:70/_x', 'ftp://10.0.0.1/x',
];

test('webhook and WhatsApp URLs pointing at private or reserved networks are refused', async () => {
  const c = await s.company();
  const secret = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');
  for (const url of PRIVATE_URLS) {
    const hook = await fetch(`${s.url}/admin/companies/${c.companyId}/channel`, {
      method: 'PUT', headers: { authorization: 'Bearer test-admin-token-4Jx9qLw2Zr7Vb5Nc', 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'webhook', url, secret }),
    });
    assert.equal(hook.status, 422, `webhook ${url}: ${hook.status} ${await hook.text()}`);
    const wa = await fetch(`${s.url}/admin/companies/${c.companyId}/channel`, {
      method: 'PUT', headers: { authorization: 'Bearer test-admin-token-4Jx9qLw2Zr7Vb5Nc', 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'whatsapp', phone_number_id: '1234', access_token: 't', api_base_url: url }),
    });
    assert.equal(wa.status, 422, `whatsapp ${url}: ${wa.status} ${await wa.text()}`);
  }
  const company = await s.admin('GET', `/admin/companies/${c.companyId}`);
  assert.deepEqual(company.channel, { provider: 'outbox' }, 'the channel is unchanged');
  assert.equal(receiver.connections, 0, 'checking a URL never connects to it');
});

test('guardedLookup refuses loopback and private answers at connect time', async () => {
  const lookup = guardedLookup(parseAddressPolicy(undefined));
  for (const host of ['localhost', '127.0.0.1', '::1']) {
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookup(host, {}, (e) => resolve(e)));
    assert.equal(err?.code, 'EADDRNOTALLOWED', host);
    const all = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookup(host, { all: true }, (e) => resolve(e)));
    assert.equal(all?.code, 'EADDRNOTALLOWED', `${host} (all)`);
  }
  // Through a real HTTP client using it, as the providers do: no connection reaches the receiver.
  const before = receiver.connections;
  const agent = new Agent({ connect: { lookup } });
  try {
    await assert.rejects(request(`http://localhost:${port}/hook`, { method: 'POST', body: '{}', dispatcher: agent }), (e: Error & { code?: string; cause?: { code?: string } }) => (e.code ?? e.cause?.code) === 'EADDRNOTALLOWED');
  } finally {
    await agent.close();
  }
  assert.equal(receiver.connections, before);
  // An operator's explicit exception is honoured (the same receiver, allowed by name).
  const allowing = new Agent({ connect: { lookup: guardedLookup(parseAddressPolicy('localhost')) } });
  try {
    const ok = await request(`http://localhost:${port}/hook`, { method: 'POST', body: '{}', dispatcher: allowing });
    assert.equal(ok.statusCode, 200);
    await ok.body.text();
  } finally {
    await allowing.close();
  }
});

test('a stored channel that resolves to a private address (DNS rebinding) fails its messages without connecting', async () => {
  const before = receiver.connections;
  const cases = [
    { provider: 'webhook', url: `http://localhost:${port}/hook`, secret_sealed: s.service.secrets.seal('whsec_c2VjcmV0c2VjcmV0c2VjcmV0') },
    { provider: 'whatsapp', phone_number_id: String(100000000 + Math.floor(Math.random() * 899999999)), api_base_url: `http://localhost:${port}/v21.0`, access_token_sealed: s.service.secrets.seal('EAAG-token') },
    { provider: 'webhook', url: `http://127.0.0.1:${port}/hook`, secret_sealed: s.service.secrets.seal('whsec_c2VjcmV0c2VjcmV0c2VjcmV0') },
  ];
  for (const channel of cases) {
    const c = await s.company();
    // Written as the operator API would store it had the name resolved publicly when it was checked.
    await s.service.deps.database.db.updateTable('companies').set({ channel: JSON.stringify(channel) }).where('company_id', '=', c.companyId).execute();
    await approveTemplates(s, c.companyId);
    const auto = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'a', type: 'api', active: true, template: { body: 'Hi', whatsapp: { name: 'hello', language: 'en' } } });
    const sent = await s.api('/api/automations/send', { key: c.key, body: { automation_id: auto.automation_id, contacts: [{ phone: '+4915112345678' }] } });
    assert.equal(sent.status, 200, sent.text);
    await eventually(async () => (await s.admin('GET', `/admin/batches/${sent.json.batch_id}`)).status === 'completed');
    const { messages } = await s.admin('GET', `/admin/batches/${sent.json.batch_id}/messages`);
    assert.equal(messages[0].status, 'failed', JSON.stringify(messages[0]));
    assert.match(messages[0].error, /private or reserved address/, `${channel.provider} ${channel.url ?? channel.api_base_url}`);
  }
  assert.equal(receiver.connections, before, 'no connection reached the private receiver');
});

test('media URLs are passed on, never fetched', async () => {
  const before = receiver.connections;
  const c = await s.company();
  const auto = await s.admin('POST', `/admin/companies/${c.companyId}/automations`, { name: 'm', type: 'api', active: true, template: { header: { type: 'image', url: `http://127.0.0.1:${port}/default.png` }, body: 'Hi' } });
  const image = `http://127.0.0.1:${port}/img.png`;
  const sent = await s.api('/api/automations/send', { key: c.key, body: { automation_id: auto.automation_id, image_url: image, video_url: `http://[::1]:${port}/v.mp4`, contacts: [{ phone: '+4915112345678', image_url: `http://169.254.169.254/latest/meta-data/` }, { phone: '+4915112345679' }] } });
  assert.equal(sent.status, 200, sent.text);
  await eventually(async () => (await s.admin('GET', `/admin/batches/${sent.json.batch_id}`)).status === 'completed');
  const { messages } = await s.admin('GET', `/admin/batches/${sent.json.batch_id}/messages`);
  assert.deepEqual(messages.map((m: { status: string }) => m.status), ['sent', 'sent']);
  assert.ok(messages.some((m: { rendered: { header?: { url?: string } } }) => m.rendered.header?.url === image), 'the media URL is passed on as given');
  assert.equal(receiver.connections, before, 'no media URL was fetched');
});

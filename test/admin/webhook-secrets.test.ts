/**
 * Webhook secrets: a receiver that verifies with the official
 * `standardwebhooks` package, as the README says, accepts every message the webhook provider sends:
 * - a `whsec_` secret: `new Webhook(secret)`;
 * - a secret without the prefix, even one that happens to be valid base64: its UTF-8 bytes are the key,
 *   `new Webhook(secret, { format: 'raw' })` (it used to be silently base64-decoded, and receivers
 *   following the README failed every message with 401);
 * - no secret at all: one is generated (`whsec_` + base64 of 32 random bytes), returned once in the
 *   PUT answer and never again (GET of the company does not show it).
 * A `whsec_` secret whose rest is not base64 is 422 in the admin error shape. Also through the CLI:
 * `cms channel set --provider webhook --url U` prints the generated secret.
 * Through the real server, its worker and the CLI process.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { cliFor } from '../cli/helpers.ts';
import { startReceiver, type Received, type WebhookReceiver } from '../helpers/receiver.ts';
import { ADMIN_TOKEN, eventually, startTestServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
let receiver: WebhookReceiver;
let receiverUrl: string;

before(async () => {
  s = await startTestServer();
  // The shared receiver; the tests verify each request themselves, with the secret format they expect.
  receiver = await startReceiver();
  receiverUrl = receiver.origin;
});
after(async () => {
  await receiver.close();
  await s.close();
});

/** Sets the channel (secret as given, or none), sends one automation message; returns what the receiver got. */
async function sendOne(hookPath: string, secret: string | undefined) {
  const { companyId, key } = await s.company();
  const channel = await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: receiverUrl + hookPath, ...(secret === undefined ? {} : { secret }) });
  const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'hook', type: 'api', active: true, template: { body: 'Hi {{ first_name }}' } }, 201);
  const sent = await s.api('/api/automations/send', { key, body: { automation_id: a.automation_id, contacts: [{ phone: '+14155550123', first_name: 'Ada' }] } });
  assert.equal(sent.status, 200, sent.text);
  const got = await eventually(async () => receiver.seen.find((r) => r.path === hookPath), 30_000);
  return { companyId, channel, got: got! };
}

function verifies(wh: Webhook, got: Received): boolean {
  try {
    wh.verify(got.text, { 'webhook-id': String(got.headers['webhook-id']), 'webhook-timestamp': String(got.headers['webhook-timestamp']), 'webhook-signature': String(got.headers['webhook-signature']) });
    return true;
  } catch {
    return false;
  }
}

test('a whsec_ secret: the standardwebhooks package verifies with new Webhook(secret)', async () => {
  const secret = 'whsec_' + Buffer.from('a-whsec-secret-of-32-bytes-00000').toString('base64');
  const { channel, got } = await sendOne('/whsec', secret);
  assert.deepEqual(Object.keys(channel).sort(), ['channel', 'company_id'], 'a given secret is never echoed');
  assert.ok(verifies(new Webhook(secret), got));
  assert.match(got.text, /Hi Ada/);
});

test('a plain secret that happens to be valid base64 is used as its bytes: verified with format raw', async () => {
  const secret = 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const { got } = await sendOne('/plain-base64', secret);
  assert.ok(verifies(new Webhook(secret, { format: 'raw' }), got), 'the UTF-8 bytes of the secret are the key');
  assert.ok(!verifies(new Webhook(secret), got), 'not the base64-decoded bytes');
  const plain = 'not base64: just a long passphrase';
  const other = await sendOne('/plain', plain);
  assert.ok(verifies(new Webhook(plain, { format: 'raw' }), other.got));
});

test('no secret: a whsec_ secret of at least 24 random bytes is generated and returned once', async () => {
  const { companyId, channel, got } = await sendOne('/generated', undefined);
  assert.match(channel.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  assert.ok(Buffer.from(channel.secret.slice(6), 'base64').length >= 24);
  assert.ok(verifies(new Webhook(channel.secret), got));
  const company = await s.admin('GET', `/admin/companies/${companyId}`);
  assert.ok(!JSON.stringify(company).includes(channel.secret.slice(6)), 'never shown again');
  const again = await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: receiverUrl + '/x' });
  assert.notEqual(again.secret, channel.secret, 'a new one each time');
});

test('a whsec_ secret that is not base64 is 422 in the admin error shape, nothing changed', async () => {
  const { companyId } = await s.company();
  const r = await fetch(`${s.url}/admin/companies/${companyId}/channel`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ provider: 'webhook', url: receiverUrl + '/bad', secret: 'whsec_not base64 at all!!' }),
  });
  assert.equal(r.status, 422);
  const body = await r.json();
  assert.equal(body.detail[0].loc.join('.'), 'body.secret');
  assert.match(body.detail[0].msg, /whsec_/);
  const company = await s.admin('GET', `/admin/companies/${companyId}`);
  assert.notEqual(company.channel?.provider, 'webhook');
});

test('CLI: cms channel set --provider webhook without --secret prints the generated secret', async () => {
  const { companyId } = await s.company();
  const out = await cliFor(s)(['channel', 'set', '--company', String(companyId), '--provider', 'webhook', '--url', receiverUrl + '/cli', '--json']);
  assert.equal(out.code, 0, out.stderr);
  assert.match(JSON.parse(out.stdout).secret, /^whsec_/);
});

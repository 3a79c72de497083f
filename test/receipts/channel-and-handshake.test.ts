/**
 * WhatsApp channel secrets and the verification handshake (docs/decisions.md#9-whatsapp-webhooks-in): `app_secret` and
 * `verify_token` are stored sealed and never echoed; a phone_number_id of another company is 409;
 * GET /webhooks/whatsapp answers the challenge for a known verify token only; the CLI sets the
 * secrets, the opt keywords and shows a contact; the routes are in the OpenAPI document.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomPhoneNumberId } from '../helpers/fake-graph.ts';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts';
import { cliFor } from '../cli/helpers.ts';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

const handshake = (q: Record<string, string>) => fetch(`${s.url}/webhooks/whatsapp?${new URLSearchParams(q)}`);

test('secrets sealed and never echoed; phone_number_id unique across companies (409); handshake', async () => {
  const a = await s.company();
  const b = await s.company();
  const id = randomPhoneNumberId();
  const appSecret = 'app-secret-' + Math.random().toString(36).slice(2);
  const verifyToken = 'verify-token-' + Math.random().toString(36).slice(2);
  const set = await s.admin('PUT', `/admin/companies/${a.companyId}/channel`, { provider: 'whatsapp', phone_number_id: id, access_token: 'EAAG-x', app_secret: appSecret, verify_token: verifyToken });
  assert.ok(!JSON.stringify(set).includes(appSecret) && !JSON.stringify(set).includes(verifyToken));
  const row = await s.service.deps.database.db.selectFrom('companies').select('channel').where('company_id', '=', a.companyId).executeTakeFirstOrThrow();
  const stored = JSON.stringify(row.channel);
  assert.ok(!stored.includes(appSecret) && !stored.includes(verifyToken), 'stored sealed');
  assert.equal(s.service.deps.openSecret((row.channel as any).app_secret_sealed), appSecret);
  const audit = await s.admin('GET', `/admin/audit?company_id=${a.companyId}`);
  assert.ok(!JSON.stringify(audit).includes(appSecret) && !JSON.stringify(audit).includes(verifyToken), 'not in the audit log');

  // Another company cannot take the number: 409 with a detail, nothing changed.
  const res = await fetch(`${s.url}/admin/companies/${b.companyId}/channel`, {
    method: 'PUT', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ provider: 'whatsapp', phone_number_id: id, access_token: 'EAAG-y' }),
  });
  assert.equal(res.status, 409);
  assert.match((await res.json()).detail, /phone_number_id/);
  assert.deepEqual((await s.admin('GET', `/admin/companies/${b.companyId}`)).channel, { provider: 'outbox' });
  // The owner may set it again.
  await s.admin('PUT', `/admin/companies/${a.companyId}/channel`, { provider: 'whatsapp', phone_number_id: id, access_token: 'EAAG-x', app_secret: appSecret, verify_token: verifyToken });

  const ok = await handshake({ 'hub.mode': 'subscribe', 'hub.verify_token': verifyToken, 'hub.challenge': '1158201444' });
  assert.equal(ok.status, 200);
  assert.match(String(ok.headers.get('content-type')), /^text\/plain/);
  assert.equal(await ok.text(), '1158201444');
  for (const q of [
    { 'hub.mode': 'subscribe', 'hub.verify_token': verifyToken + 'x', 'hub.challenge': '1' },
    { 'hub.mode': 'unsubscribe', 'hub.verify_token': verifyToken, 'hub.challenge': '1' },
    { 'hub.mode': 'subscribe', 'hub.verify_token': verifyToken },
    { 'hub.mode': 'subscribe', 'hub.challenge': '1' },
    {},
  ]) {
    const r = await handshake(q as Record<string, string>);
    assert.equal(r.status, 403, JSON.stringify(q));
    assert.ok(!(await r.text()).includes('1158201444'));
  }
});

test('the webhook routes are public and documented in OpenAPI', async () => {
  const doc = await (await fetch(`${s.url}/openapi.json`)).json();
  for (const [path, method, codes] of [['/webhooks/whatsapp', 'get', ['200', '307', '403', '503']], ['/webhooks/whatsapp', 'post', ['200', '307', '400', '401', '413', '503']], ['/webhooks/provider/status', 'post', ['200', '307', '400', '401', '413', '503']]] as const) {
    const op = doc.paths[path]?.[method];
    assert.ok(op, `${method} ${path}`);
    assert.deepEqual(Object.keys(op.responses).sort(), [...codes].sort());
    assert.deepEqual(op.security, []);
  }
  assert.ok(doc.paths['/admin/companies/{company_id}/contacts/{phone}']?.get, 'contact view documented');
});

test('CLI: channel set with --app-secret/--verify-token, company update --opt-out-keywords, contacts show', async () => {
  const { companyId } = await s.company();
  const cms = cliFor(s);
  const id = randomPhoneNumberId();
  const set = await cms(['channel', 'set', '--company', String(companyId), '--provider', 'whatsapp', '--phone-number-id', id, '--access-token', 'EAAG-cli', '--app-secret', 'cli-app-secret-1', '--verify-token', 'cli-verify-token-1', '--json']);
  assert.equal(set.code, 0, set.stderr);
  assert.ok(!set.stdout.includes('cli-app-secret-1'));
  const hs = await handshake({ 'hub.mode': 'subscribe', 'hub.verify_token': 'cli-verify-token-1', 'hub.challenge': 'abc' });
  assert.equal(await hs.text(), 'abc');

  const upd = await cms(['company', 'update', String(companyId), '--opt-out-keywords', 'STOP, Ende ,ABMELDEN', '--opt-in-keywords', 'START', '--json']);
  assert.equal(upd.code, 0, upd.stderr);
  assert.deepEqual(JSON.parse(upd.stdout).opt_out_keywords, ['STOP', 'Ende', 'ABMELDEN']);
  const bad = await cms(['company', 'update', String(companyId), '--opt-out-keywords', ' , ']);
  assert.notEqual(bad.code, 0);

  await s.admin('PUT', `/admin/companies/${companyId}/contacts`, { contacts: [{ phone: '+4915199990001', first_name: 'Ada', opted_out: true }] });
  const show = await cms(['contacts', 'show', '--company', String(companyId), '015199990001']);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /\+4915199990001/);
  assert.match(show.stdout, /operator/);
  const json = JSON.parse((await cms(['contacts', 'show', '--company', String(companyId), '+4915199990001', '--json'])).stdout);
  assert.equal(json.opted_out, true);
  assert.equal(json.opt_out_source, 'operator');
  const missing = await cms(['contacts', 'show', '--company', String(companyId), '+4915199990002']);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /Contact not found/);
});

/**
 * Gateway receipts (docs/decisions.md#10-gateway-receipts): POST /webhooks/provider/status signed as Standard
 * Webhooks sign with the company's webhook-channel secret (signed here with the official
 * `standardwebhooks` library). Delivered / read / failed apply forward-only by message id; a bad
 * signature, a stale timestamp, message ids of two companies or unknown ids are 401 and write nothing;
 * malformed bodies 400.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { completedBatch, messagesByPhone, receiptsSettled } from './helpers.ts';

let s: TestServer;
let receiver: WebhookReceiver;
before(async () => {
  s = await startTestServer();
  receiver = await startReceiver();
});
after(async () => {
  await s.close();
  await receiver.close();
});

/** POSTs `body` signed with `secret` at `at` (ms; default now). */
async function post(body: unknown, secret: string, opts: { at?: number; id?: string; tamper?: boolean } = {}) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const id = opts.id ?? 'msg_' + randomUUID();
  const at = new Date(opts.at ?? Date.now());
  let signature = new Webhook(secret).sign(id, at, raw);
  if (opts.tamper) signature = signature.slice(0, -4) + 'AAAA';
  const res = await fetch(`${s.url}/webhooks/provider/status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature },
    body: raw,
  });
  const text = await res.text();
  return { status: res.status, text };
}

async function webhookCompany(secret = receiver.secret) {
  const { companyId, key } = await s.company();
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'webhook', url: receiver.url, secret });
  const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'gw', type: 'api', active: true, template: { body: 'Hi {{ first_name }}' } }, 201);
  return { companyId, key, automationId: a.automation_id as number };
}

async function sendTo(c: Awaited<ReturnType<typeof webhookCompany>>, phones: string[]) {
  const res = await s.api('/api/automations/send', { key: c.key, body: { automation_id: c.automationId, contacts: phones.map((phone) => ({ phone })) } });
  assert.equal(res.status, 200, res.text);
  await completedBatch(s, res.json.batch_id);
  return { batchId: res.json.batch_id as string, byPhone: await messagesByPhone(s, res.json.batch_id) };
}

const r = () => String(Math.floor(Math.random() * 90_000) + 10_000);

test('delivered, read and failed receipts apply by message id, forward only', async () => {
  const c = await webhookCompany();
  const run = r();
  const phones = [1, 2, 3].map((i) => `+49152${run}80${i}`);
  const { batchId, byPhone } = await sendTo(c, phones);
  const [m1, m2, m3] = phones.map((p) => byPhone.get(p));
  for (const m of [m1, m2, m3]) assert.equal(m.status, 'sent');
  const t = '2026-03-04T12:00:00.000Z';
  const res = await post({ statuses: [
    { message_id: m1.message_id, status: 'delivered', timestamp: t },
    { message_id: m2.message_id, status: 'read', timestamp: '2026-03-04T13:00:00+01:00' },
    { message_id: m3.message_id.toUpperCase(), status: 'failed', timestamp: t, error: { code: 'UNDELIVERABLE', title: 'Handset unreachable' } },
  ] }, receiver.secret);
  assert.equal(res.status, 200, res.text);
  await eventually(async () => {
    const m = await messagesByPhone(s, batchId);
    return m.get(phones[0]).status === 'delivered' && m.get(phones[1]).status === 'read' && m.get(phones[2]).status === 'failed';
  });
  const m = await messagesByPhone(s, batchId);
  assert.equal(m.get(phones[0]).delivered_at, t);
  assert.equal(m.get(phones[1]).read_at, t);
  assert.equal(m.get(phones[1]).delivered_at, t);
  assert.equal(m.get(phones[2]).error_code, 'UNDELIVERABLE');
  assert.equal(m.get(phones[2]).error, 'Handset unreachable');
  // Backwards: delivered after read, read after failed.
  assert.equal((await post({ statuses: [{ message_id: m2.message_id, status: 'delivered', timestamp: t }, { message_id: m3.message_id, status: 'read', timestamp: t }] }, receiver.secret)).status, 200);
  await receiptsSettled(s);
  assert.deepEqual(await messagesByPhone(s, batchId), m);
});

test('bad signature, stale timestamp, ids of two companies or unknown: 401, nothing written; malformed: 400', async () => {
  const a = await webhookCompany();
  const otherSecret = 'whsec_' + Buffer.from('another-company-secret-0123456789').toString('base64');
  const b = await webhookCompany(otherSecret);
  const run = r();
  const sa = await sendTo(a, [`+49152${run}811`]);
  const sb = await sendTo(b, [`+49152${run}812`]);
  const ma = [...sa.byPhone.values()][0];
  const mb = [...sb.byPhone.values()][0];
  const body = (id: string) => ({ statuses: [{ message_id: id, status: 'read', timestamp: new Date().toISOString() }] });
  const cases: [string, Promise<{ status: number; text: string }>][] = [
    ['tampered signature', post(body(ma.message_id), receiver.secret, { tamper: true })],
    ["another company's secret", post(body(ma.message_id), otherSecret)],
    ['stale timestamp (6 min)', post(body(ma.message_id), receiver.secret, { at: Date.now() - 6 * 60_000 })],
    ['ids of two companies', post({ statuses: [...body(ma.message_id).statuses, ...body(mb.message_id).statuses] }, receiver.secret)],
    ['unknown id', post(body(randomUUID()), receiver.secret)],
    ['not a uuid', post(body('wamid.123'), receiver.secret)],
  ];
  for (const [name, p] of cases) assert.equal((await p).status, 401, name);
  const noHeaders = await fetch(`${s.url}/webhooks/provider/status`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body(ma.message_id)) });
  assert.equal(noHeaders.status, 401);
  for (const bad of ['{', '[]', '{"statuses":[]}', JSON.stringify({ statuses: [{ message_id: ma.message_id, status: 'sent', timestamp: new Date().toISOString() }] }),
    JSON.stringify({ statuses: [{ message_id: ma.message_id, status: 'read', timestamp: 'now' }] }), JSON.stringify({ statuses: [{ message_id: ma.message_id, status: 'read', timestamp: new Date().toISOString(), error: 'x' }] })]) {
    assert.equal((await post(bad, receiver.secret)).status, 400, bad);
  }
  await receiptsSettled(s);
  assert.equal((await messagesByPhone(s, sa.batchId)).get(ma.phone).status, 'sent');
  assert.equal((await messagesByPhone(s, sb.batchId)).get(mb.phone).status, 'sent');
  // The right signature applies.
  assert.equal((await post(body(mb.message_id), otherSecret)).status, 200);
  await eventually(async () => (await messagesByPhone(s, sb.batchId)).get(mb.phone).status === 'read');
});

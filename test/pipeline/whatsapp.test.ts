/**
 * The WhatsApp provider against a local fake Graph API (node:http on 127.0.0.1): request bodies have
 * the Cloud API template-message shape (header media, body parameters, URL-button parameters), Graph
 * error codes decide retry or failure, the access token is sent only as a bearer token and never shown,
 * and requests per phone number stay under the configured rate.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestServer } from '../helpers/server.ts';
import { approveTemplates } from '../helpers/whatsapp.ts';
import { completed, messagesOf, phone, startPipelineServer } from './helpers.ts';

interface GraphRequest { at: number; method: string; path: string; headers: IncomingHttpHeaders; body: any }

const TOKEN = 'EAAG-test-access-token-0123456789';
let s: TestServer;
let graph: { url: string; requests: GraphRequest[]; close(): Promise<void> };
let answer: (req: GraphRequest, n: number) => { status: number; body: string } = () => ({ status: 200, body: '{}' });

async function startGraph() {
  const requests: GraphRequest[] = [];
  const counts = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const r: GraphRequest = { at: performance.now(), method: req.method!, path: req.url!, headers: req.headers, body };
      requests.push(r);
      const n = (counts.get(body.to) ?? 0) + 1;
      counts.set(body.to, n);
      const a = answer(r, n);
      res.writeHead(a.status, { 'content-type': 'application/json' });
      res.end(a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v21.0`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const ok = (to: string) => ({ status: 200, body: JSON.stringify({ messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id: `wamid.${to}` }] }) });
const graphError = (status: number, code: number, message: string) => ({ status, body: JSON.stringify({ error: { message, type: 'OAuthException', code, fbtrace_id: 'Axyz' } }) });

before(async () => {
  s = await startPipelineServer('whatsapp', { env: { DELIVERY_RETRY_SCHEDULE: '1ms,1ms,1ms,1ms' } });
  graph = await startGraph();
});
after(async () => {
  await s.close();
  await graph.close();
});

const TEMPLATE = {
  header: { type: 'image', url: 'https://cdn.example/default.png' },
  body: 'Hi {{ first_name }}, your order {{ order_id }} has shipped.',
  buttons: [{ type: 'url', text: 'Track', url: 'https://shop.example/track' }, { type: 'url', text: 'Help', url: 'https://shop.example/help' }],
  whatsapp: { name: 'order_shipped', language: 'en_US' },
};

async function whatsappCompany(phoneNumberId: string) {
  const { companyId, key } = await s.company();
  await s.admin('PUT', `/admin/companies/${companyId}/channel`, { provider: 'whatsapp', phone_number_id: phoneNumberId, access_token: TOKEN, api_base_url: graph.url, throughput_per_second: 20 });
  await approveTemplates(s, companyId);
  const a = await s.admin('POST', `/admin/companies/${companyId}/automations`, { name: 'wa', type: 'api', active: true, template: TEMPLATE }, 201);
  return { companyId, key, automationId: a.automation_id as number };
}

test('template messages in the Cloud API shape; error codes mapped to retry or failure; token never shown', async () => {
  const run = Math.floor(Math.random() * 1000);
  const numberId = '1065' + String(100000000 + Math.floor(Math.random() * 899999999)); // unique: phone_number_id is unique across companies of a shared database
  const { companyId, key, automationId } = await whatsappCompany(numberId);
  const rateLimited = phone(run, 1).slice(1);
  const undeliverable = phone(run, 2).slice(1);
  const flaky = phone(run, 3).slice(1);
  answer = (r, n) => {
    if (r.body.to === rateLimited && n === 1) return graphError(400, 130429, '(#130429) Rate limit hit');
    if (r.body.to === undeliverable) return graphError(400, 131026, 'Message undeliverable');
    if (r.body.to === flaky && n === 1) return { status: 502, body: '<html>bad gateway</html>' };
    return ok(r.body.to);
  };
  const contacts = [0, 1, 2, 3].map((i) => ({ phone: phone(run, i), first_name: `F${i}`, variables: { order_id: `A-${i}` } }));
  (contacts[0] as any).image_url = 'https://cdn.example/own.png';
  const res = await s.api('/api/automations/send', { key, body: { automation_id: automationId, contacts, url: 'https://shop.example/track/ORDER-9' } });
  assert.equal(res.status, 200, res.text);
  const batch = await completed(s, res.json.batch_id);
  assert.deepEqual(batch.counts, { total: 4, sent: 3, delivered: 0, read: 0, failed: 1, skipped: 0, pending: 0 });

  const ours = graph.requests.filter((r) => contacts.some((c) => c.phone.slice(1) === r.body.to));
  for (const r of ours) {
    assert.equal(r.method, 'POST');
    assert.equal(r.path, `/v21.0/${numberId}/messages`);
    assert.equal(r.headers.authorization, `Bearer ${TOKEN}`);
    assert.match(String(r.headers['content-type']), /^application\/json/);
  }
  const first = ours.find((r) => r.body.to === phone(run, 0).slice(1))!;
  assert.deepEqual(first.body, {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: phone(run, 0).slice(1),
    type: 'template',
    template: {
      name: 'order_shipped',
      language: { code: 'en_US' },
      components: [
        { type: 'header', parameters: [{ type: 'image', image: { link: 'https://cdn.example/own.png' } }] },
        { type: 'body', parameters: [{ type: 'text', text: 'F0' }, { type: 'text', text: 'A-0' }] },
        { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '/ORDER-9' }] },
      ],
    },
  });
  const second = ours.find((r) => r.body.to === rateLimited)!;
  assert.deepEqual(second.body.template.components[0], { type: 'header', parameters: [{ type: 'image', image: { link: 'https://cdn.example/default.png' } }] });
  assert.deepEqual(second.body.template.components[1].parameters, [{ type: 'text', text: 'F1' }, { type: 'text', text: 'A-1' }]);

  const byPhone = new Map((await messagesOf(s, res.json.batch_id)).map((m) => [m.phone, m]));
  const view = (i: number) => [byPhone.get(phone(run, i)).status, byPhone.get(phone(run, i)).attempts];
  assert.deepEqual(view(0), ['sent', 1]);
  assert.deepEqual(view(1), ['sent', 2], '130429 is retried');
  assert.deepEqual(view(2), ['failed', 1], '131026 is not retried');
  assert.deepEqual(view(3), ['sent', 2], 'a 502 without a Graph error is retried');
  assert.match(byPhone.get(phone(run, 2)).error, /^whatsapp error 131026: Message undeliverable/);
  assert.equal(byPhone.get(phone(run, 2)).error_code, '131026');
  assert.ok(byPhone.get(phone(run, 2)).failed_at, 'failed_at is kept');
  for (const i of [0, 1, 3]) {
    const m = byPhone.get(phone(run, i));
    assert.equal(m.provider_message_id, `wamid.${phone(run, i).slice(1)}`, 'the wamid of the Graph answer is kept');
    assert.ok(m.sent_at && !m.error && !m.error_code && !m.next_attempt_at, `a sent message has no error or next attempt left: ${JSON.stringify(m)}`);
  }
  assert.equal(ours.filter((r) => r.body.to === undeliverable).length, 1);

  const everything = JSON.stringify(await s.admin('GET', `/admin/companies/${companyId}`)) + JSON.stringify([...byPhone.values()]);
  assert.ok(!everything.includes(TOKEN), 'the access token is never shown');
});

test('requests per phone number stay under the channel\'s throughput_per_second (20/s here), through the real server', async () => {
  const run = Math.floor(Math.random() * 1000);
  const numberId = '555' + String(100000000 + Math.floor(Math.random() * 899999999));
  const { key, automationId } = await whatsappCompany(numberId);
  answer = (r) => ok(r.body.to);
  const contacts = Array.from({ length: 45 }, (_, i) => ({ phone: phone(run, i), first_name: `F${i}`, variables: { order_id: `A-${i}` } }));
  const asked = performance.now();
  const res = await s.api('/api/automations/send', { key, body: { automation_id: automationId, contacts } });
  assert.equal(res.status, 200, res.text);
  assert.equal((await completed(s, res.json.batch_id)).counts.sent, 45);
  const times = graph.requests.filter((r) => r.path === `/v21.0/${numberId}/messages`).map((r) => r.at).sort((a, b) => a - b);
  assert.equal(times.length, 45);
  // Deterministic whatever the machine's load: a request reaches the Graph API only after its slot, and
  // the k-th slot of this (fresh) phone number id is at least k * 50 ms after the send was asked for.
  // So by any moment, at most 20 per second since the start have arrived (2 ms for timer rounding).
  // The slots across processes are checked in test/whatsapp/pacing*.test.ts.
  for (let k = 0; k < times.length; k++) {
    assert.ok(times[k] - asked >= k * 50 - 2, `request ${k} arrived ${(times[k] - asked).toFixed(1)} ms after the send, before its slot at ${k * 50} ms`);
  }
});

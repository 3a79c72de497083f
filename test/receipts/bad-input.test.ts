/**
 * Bad input to POST /webhooks/whatsapp (docs/decisions.md#9-whatsapp-webhooks-in): bad or missing
 * signature, unknown phone_number_id, a payload mixing a known and an unknown number, malformed JSON and
 * wrong shapes, 10 MB (413), 10,000 statuses in one POST (applied), a status for a final message; each
 * gets its documented answer, never a 500, and nothing is written without a valid signature.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { changeValue, hubSignature, newWamid, postPayload, postStatuses, randomPhoneNumberId, startFakeGraph, waStatus, waText, webhookPayload, type FakeGraph } from '../helpers/fake-graph.ts';
import { eventually, startTestServer, type TestServer } from '../helpers/server.ts';
import { messagesByPhone, receiptsSettled, sendAndComplete, whatsappCompany, type WaCompany } from './helpers.ts';

let s: TestServer;
let graph: FakeGraph;
let c: WaCompany;
let batchId: string;
let wamid: string;
const phone = `+49152${String(Math.floor(Math.random() * 90_000) + 10_000)}901`;

before(async () => {
  s = await startTestServer();
  graph = await startFakeGraph();
  c = await whatsappCompany(s, graph);
  const sent = await sendAndComplete(s, graph, c, [phone]);
  batchId = sent.batchId;
  wamid = sent.wamids.get(phone)!;
});
after(async () => {
  await s.close();
  await graph.close();
});

/** What a test may not change without a valid signature: the company's inbound rows, contacts and messages. */
async function footprint() {
  const db = s.service.deps.database.db;
  const { rows } = await sql<{ inbound: number; contacts: number; changed: string }>`
    SELECT (SELECT count(*)::int FROM inbound_messages WHERE company_id = ${c.companyId}) AS inbound,
           (SELECT count(*)::int FROM contacts WHERE company_id = ${c.companyId}) AS contacts,
           (SELECT string_agg(status || coalesce(delivered_at::text, '') || coalesce(read_at::text, ''), ',' ORDER BY message_id) FROM messages WHERE company_id = ${c.companyId}) AS changed`.execute(db);
  return rows[0];
}

test('without a valid signature: 401 and nothing written', async () => {
  const before = await footprint();
  const payload = JSON.stringify(webhookPayload([changeValue(c.phoneNumberId, { statuses: [waStatus(wamid, 'read', phone.slice(1), Date.now())], messages: [waText('4915300000001', 'STOP', Date.now())] })]));
  const cases: [string, Parameters<typeof postPayload>[3]][] = [
    ['no signature', { signature: null }],
    ['wrong secret', { signature: hubSignature('not-the-secret', payload) }],
    ['sha1 prefix', { signature: hubSignature(c.appSecret, payload).replace('sha256=', 'sha1=') }],
    ['truncated', { signature: hubSignature(c.appSecret, payload).slice(0, 40) }],
    ['of another body', { signature: hubSignature(c.appSecret, payload + ' ') }],
    ['garbage', { signature: 'sha256=' + 'zz'.repeat(32) }],
  ];
  for (const [name, opts] of cases) {
    const res = await postPayload(s.url, c.appSecret, payload, opts);
    assert.equal(res.status, 401, `${name}: ${res.text}`);
    assert.deepEqual(res.json, { detail: 'Invalid signature' });
  }
  // An unknown phone_number_id (signed with a real secret), and a payload mixing it with a known one.
  const unknown = randomPhoneNumberId();
  assert.equal((await postStatuses(s.url, c.appSecret, unknown, [waStatus(wamid, 'read', phone.slice(1), Date.now())])).status, 401);
  const mixed = webhookPayload([changeValue(c.phoneNumberId, { statuses: [waStatus(wamid, 'read', phone.slice(1), Date.now())] }), changeValue(unknown, { statuses: [] })]);
  assert.equal((await postPayload(s.url, c.appSecret, mixed)).status, 401);
  // A company without an app secret cannot receive webhooks.
  const bare = await s.company();
  const bareId = randomPhoneNumberId();
  await s.admin('PUT', `/admin/companies/${bare.companyId}/channel`, { provider: 'whatsapp', phone_number_id: bareId, access_token: 'EAAG' });
  assert.equal((await postStatuses(s.url, '', bareId, [waStatus(wamid, 'read', phone.slice(1), Date.now())])).status, 401);
  await receiptsSettled(s);
  assert.deepEqual(await footprint(), before);
});

test('malformed JSON and wrong shapes: 400, nothing written', async () => {
  const before = await footprint();
  const v = (value: unknown) => ({ object: 'whatsapp_business_account', entry: [{ id: '1', changes: [{ field: 'messages', value }] }] });
  const meta = { messaging_product: 'whatsapp', metadata: { display_phone_number: '1555', phone_number_id: c.phoneNumberId } };
  const bodies: (string | object)[] = [
    '', '{', 'null', '[]', '"x"', '{"object":"page","entry":[]}', '\u0000', Buffer.from([0xff, 0xfe, 0x00]).toString('latin1'),
    { object: 'whatsapp_business_account' },
    { object: 'whatsapp_business_account', entry: [] },
    { object: 'whatsapp_business_account', entry: [{ changes: {} }] },
    v(null), v({ messaging_product: 'whatsapp' }), v({ metadata: { phone_number_id: 12345 } }), v({ metadata: { phone_number_id: '../1' } }),
    v({ ...meta, statuses: {} }), v({ ...meta, statuses: [null] }), v({ ...meta, statuses: [{ id: wamid, status: 'read' }] }),
    v({ ...meta, statuses: [{ id: wamid, status: 'read', timestamp: 'yesterday' }] }),
    v({ ...meta, statuses: [{ id: 7, status: 'read', timestamp: '1' }] }),
    v({ ...meta, messages: [{ from: '+49', id: 'x', timestamp: '1', type: 'text' }] }),
    v({ ...meta, messages: [{ from: '4915', id: 'x', type: 'text' }] }),
    v({ ...meta, messages: 'STOP' }),
  ];
  for (const body of bodies) {
    const res = await postPayload(s.url, c.appSecret, body);
    assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
    assert.equal(typeof res.json?.detail, 'string');
  }
  await receiptsSettled(s);
  assert.deepEqual(await footprint(), before);
});

test('a payload over 4 MiB is 413; 10,000 statuses in one POST are applied', async () => {
  // Any Content-Type, even a malformed one, is read as bytes (Meta sends application/json).
  for (const contentType of ['text/plain', 'garbage///', 'application/json; charset=utf-8']) {
    const res = await postPayload(s.url, c.appSecret, webhookPayload([changeValue(c.phoneNumberId, { statuses: [] })]), { contentType });
    assert.equal(res.status, 200, `${contentType}: ${res.text}`);
  }
  const big = Buffer.alloc(10 * 1024 * 1024, 0x20);
  const res = await postPayload(s.url, c.appSecret, big);
  assert.equal(res.status, 413);

  const t = Date.now();
  const statuses = Array.from({ length: 9_999 }, (_, i) => waStatus(newWamid(), i % 2 ? 'delivered' : 'read', '491530000' + String(i).padStart(4, '0'), t));
  statuses.push(waStatus(wamid, 'delivered', phone.slice(1), t));
  const body = JSON.stringify(webhookPayload([changeValue(c.phoneNumberId, { statuses })]));
  assert.ok(body.length > 1_000_000 && body.length < 4 * 1024 * 1024, `${body.length} bytes`);
  const started = performance.now();
  const ok = await postPayload(s.url, c.appSecret, body);
  const took = performance.now() - started;
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(ok.json, { statuses: 10_000, messages: 0 });
  assert.ok(took < 5_000, `answered in ${took} ms`);
  await eventually(async () => (await messagesByPhone(s, batchId)).get(phone).status === 'delivered');
});

test('statuses for a message already failed change nothing (200)', async () => {
  const p = `+49152${String(Math.floor(Math.random() * 90_000) + 10_000)}902`;
  const sent = await sendAndComplete(s, graph, c, [p]);
  const w = sent.wamids.get(p)!;
  assert.equal((await postStatuses(s.url, c.appSecret, c.phoneNumberId, [waStatus(w, 'failed', p.slice(1), Date.now(), [{ code: 131049, title: 'This message was not delivered to maintain healthy ecosystem engagement.' }])])).status, 200);
  await eventually(async () => (await messagesByPhone(s, sent.batchId)).get(p).status === 'failed');
  const failed = (await messagesByPhone(s, sent.batchId)).get(p);
  assert.equal(failed.error_code, '131049');
  for (const st of ['sent', 'delivered', 'read', 'failed']) {
    const res = await postStatuses(s.url, c.appSecret, c.phoneNumberId, [waStatus(w, st, p.slice(1), Date.now(), st === 'failed' ? [{ code: 1, title: 'other' }] : undefined)]);
    assert.equal(res.status, 200);
  }
  await receiptsSettled(s);
  assert.deepEqual((await messagesByPhone(s, sent.batchId)).get(p), failed);
});

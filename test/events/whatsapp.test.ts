/**
 * A send of 50 contacts through the fake WhatsApp Graph API with receipts (docs/decisions.md#7-a-messages-life
 * §1, §3, §5): exactly the expected events arrive — 45 message.sent, 10
 * message.failed (5 refused by the Graph API, 5 failed receipts), 35 message.delivered, 20
 * message.read, one batch.completed, 2 message.received and one contact.opted_out (an inbound STOP) —
 * duplicated receipts add none, every request verifies with `standardwebhooks`, each webhook-id is
 * unique per event and stable across its retries (the receiver fails every first attempt).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { graphError, postInbound, postStatuses, startFakeGraph, waStatus, waText, type FakeGraph } from '../helpers/fake-graph.ts';
import { eventually, FakeClock, type TestServer } from '../helpers/server.ts';
import { startPipelineServer } from '../pipeline/helpers.ts';
import { completedBatch, messagesByPhone, receiptsSettled, whatsappCompany } from '../receipts/helpers.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { addEndpoint, RFC3339_MS, until } from './helpers.ts';

let s: TestServer;
let graph: FakeGraph;
let events: WebhookReceiver;
const clock = new FakeClock();

before(async () => {
  s = await startPipelineServer('events_whatsapp', { clock, env: { EVENT_RETRY_SCHEDULE: '1s,1s,1s' } });
  graph = await startFakeGraph();
  events = await startReceiver();
});
after(async () => {
  await s.close();
  await graph.close();
  await events.close();
});

test('50 contacts through the fake Graph API with receipts: exactly the expected events, ids unique and stable', async () => {
  const c = await whatsappCompany(s, graph);
  const path = `/wa-${c.companyId}`;
  const ep = await addEndpoint(s, events, c.companyId, path);
  // Every event's first attempt fails: the retry must carry the same webhook-id and body.
  events.answer = (seen) => (seen.n === 1 ? 500 : 200);
  const r = Math.floor(Math.random() * 90_000) + 10_000;
  const phones = Array.from({ length: 50 }, (_, i) => `+49157${String(r).padStart(5, '0')}${String(i).padStart(3, '0')}`);
  const refused = new Set(phones.slice(45).map((p) => p.slice(1)));
  graph.script = (req) => (refused.has(String(req.body?.to)) ? graphError(400, 131026, 'Message undeliverable') : undefined);

  const res = await s.api('/api/automations/send', { key: c.key, body: { automation_id: c.automationId, contacts: phones.map((phone, i) => ({ phone, first_name: `F${i}` })) } });
  assert.equal(res.status, 200, res.text);
  const batchId = res.json.batch_id;
  const batch = await completedBatch(s, batchId);
  assert.equal(batch.counts.sent, 45, JSON.stringify(batch.counts));
  assert.equal(batch.counts.failed, 5);
  const wamids = new Map<string, string>();
  for (const [wamid, req] of graph.sent) if (phones.includes('+' + req.body.to)) wamids.set('+' + req.body.to, wamid);
  assert.equal(wamids.size, 45);

  const t0 = clock.now();
  const w = (i: number) => wamids.get(phones[i])!;
  const to = (i: number) => phones[i].slice(1);
  const post = async (statuses: ReturnType<typeof waStatus>[]) => {
    const a = await postStatuses(s.url, c.appSecret, c.phoneNumberId, statuses);
    assert.equal(a.status, 200, a.text);
  };
  const delivered = Array.from({ length: 35 }, (_, i) => waStatus(w(i), 'delivered', to(i), t0 + 5_000));
  await post(delivered);
  await post(delivered.slice(0, 10)); // duplicates: no new events
  await post(Array.from({ length: 5 }, (_, k) => waStatus(w(35 + k), 'failed', to(35 + k), t0 + 6_000,
    [{ code: 131026, title: 'Message undeliverable', message: 'Message undeliverable', error_data: { details: 'Message Undeliverable.' } }])));
  await receiptsSettled(s);
  await eventually(async () => (await messagesByPhone(s, batchId)).get(phones[34]).status === 'delivered');
  await post(Array.from({ length: 20 }, (_, i) => waStatus(w(i), 'read', to(i), t0 + 9_000)));
  await post([waStatus(w(0), 'read', to(0), t0 + 9_000)]); // duplicate
  const inbound = await postInbound(s.url, c.appSecret, c.phoneNumberId, [waText(to(40), 'hello there', t0 + 10_000), waText(to(41), 'STOP', t0 + 11_000)]);
  assert.equal(inbound.status, 200, inbound.text);
  await receiptsSettled(s);
  await eventually(async () => (await messagesByPhone(s, batchId)).get(phones[19]).status === 'read');

  const expected: Record<string, number> = {
    'message.sent': 45, 'message.failed': 10, 'message.delivered': 35, 'message.read': 20,
    'batch.completed': 1, 'message.received': 2, 'contact.opted_out': 1,
  };
  const total = Object.values(expected).reduce((a, b) => a + b, 0);
  // Retries are due 1 s of clock time after the failed first attempts.
  await until(() => {
    clock.advance(1_000);
    return events.delivered(path).size >= total;
  }, 45_000);
  // Every delivery of the endpoint is written delivered (so every request has been answered) and none
  // is left to retry: nothing more can be sent.
  const deliveries = async () => (await sql<{ status: string }>`SELECT status FROM event_deliveries WHERE endpoint_id = ${ep.endpoint_id}`.execute(s.service.deps.database.db)).rows;
  await eventually(async () => (await deliveries()).every((d) => d.status === 'delivered') || undefined);
  assert.equal((await deliveries()).length, total);
  const got = events.delivered(path);
  assert.equal(got.size, total);
  const counts: Record<string, number> = {};
  for (const [, v] of got) counts[v[0].body.type] = (counts[v[0].body.type] ?? 0) + 1;
  assert.deepEqual(counts, expected);
  assert.deepEqual(events.signatureFailures(), []);

  // Each event: one id, delivered exactly once after exactly one failed attempt with the same body.
  const mine = events.seen.filter((x) => x.path === path);
  const byId = new Map<string, typeof mine>();
  for (const x of mine) byId.set(x.id, [...(byId.get(x.id) ?? []), x]);
  assert.equal(byId.size, total, 'webhook-id unique per event');
  for (const [id, tries] of byId) {
    assert.match(id, /^evt_[0-9a-f]{32}$/);
    assert.deepEqual(tries.map((x) => x.answered), [500, 200], id);
    assert.equal(tries[0].text, tries[1].text);
  }
  // One event per message and status: no duplicate (message, type) pair.
  const pairs = new Set<string>();
  for (const [, v] of got) {
    const b = v[0].body;
    if (!b.type.startsWith('message.') || b.type === 'message.received') continue;
    const key = `${b.data.message_id}:${b.type}`;
    assert.ok(!pairs.has(key), key);
    pairs.add(key);
  }
  const find = (type: string, p: string) => [...got.values()].map((v) => v[0].body).find((b) => b.type === type && b.data.phone === p);
  const read0 = find('message.read', phones[0]);
  assert.equal(read0.data.provider_message_id, w(0));
  assert.equal(read0.data.read_at, new Date(t0 + 9_000).toISOString());
  assert.equal(read0.data.delivered_at, new Date(t0 + 5_000).toISOString());
  assert.equal(read0.timestamp, read0.data.read_at);
  const failedReceipt = find('message.failed', phones[36]);
  assert.equal(failedReceipt.data.error_code, '131026');
  assert.ok(failedReceipt.data.error);
  assert.equal(failedReceipt.data.provider_message_id, w(36));
  assert.equal(failedReceipt.data.failed_at, new Date(t0 + 6_000).toISOString());
  const refusedEvent = find('message.failed', phones[47]);
  assert.ok(refusedEvent.data.error);
  assert.equal(refusedEvent.data.provider_message_id, undefined);
  const received = [...got.values()].map((v) => v[0].body).filter((b) => b.type === 'message.received');
  const hello = received.find((b) => b.data.text === 'hello there');
  assert.deepEqual(Object.keys(hello.data).sort(), ['phone', 'provider_message_id', 'received_at', 'text', 'type']);
  assert.equal(hello.data.phone, phones[40]);
  assert.equal(hello.data.type, 'text');
  assert.equal(hello.data.received_at, new Date(t0 + 10_000).toISOString());
  assert.match(hello.timestamp, RFC3339_MS);
  const stop = [...got.values()].map((v) => v[0].body).find((b) => b.type === 'contact.opted_out');
  assert.equal(stop.data.phone, phones[41]);
  assert.equal(stop.data.source, 'keyword');
  const bc = [...got.values()].map((v) => v[0].body).find((b) => b.type === 'batch.completed');
  assert.equal(bc.data.batch_id, batchId);
  assert.equal(bc.data.counts.total, 50);
  assert.equal(bc.data.counts.sent + bc.data.counts.failed, 50);
});

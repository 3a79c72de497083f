/**
 * One event per status reached (docs/whatsapp.md "One event per status", docs/events.md): a `read`
 * that arrives before, or with, its `delivered` writes message.delivered and then message.read, so a
 * subscriber to message.delivered alone sees every delivered message; the late `delivered` adds nothing.
 * The delivered event is created first (its delivery's `seq` is lower) and, with one request in flight
 * per endpoint (EVENT_CONCURRENCY=1), arrives first.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { postStatuses, startFakeGraph, waStatus, type FakeGraph } from '../helpers/fake-graph.ts';
import { eventually, type TestServer } from '../helpers/server.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/receiver.ts';
import { startPipelineServer } from '../pipeline/helpers.ts';
import { addEndpoint, until } from '../events/helpers.ts';
import { messagesByPhone, receiptsSettled, sendAndComplete } from '../receipts/helpers.ts';
import { randomWabaId, wabaCompany } from './webhook-helpers.ts';

let s: TestServer;
let graph: FakeGraph;
let events: WebhookReceiver;

before(async () => {
  s = await startPipelineServer('wa_read_before_delivered', { env: { EVENT_CONCURRENCY: '1' } });
  graph = await startFakeGraph();
  events = await startReceiver();
});
after(async () => {
  await s.close();
  await graph.close();
  await events.close();
});

const iso = (ms: number) => new Date(ms).toISOString();

test('read before or with delivered: message.delivered then message.read, each once; a delivered-only subscriber sees every delivered message', async () => {
  const c = await wabaCompany(s, graph, { wabaId: randomWabaId(), automation: true });
  const both = `/both-${c.companyId}`;
  const deliveredOnly = `/delivered-${c.companyId}`;
  await addEndpoint(s, events, c.companyId, both, ['message.delivered', 'message.read']);
  await addEndpoint(s, events, c.companyId, deliveredOnly, ['message.delivered']);
  const r = Math.floor(Math.random() * 90_000) + 10_000;
  const phones = [0, 1, 2, 3].map((i) => `+49157${r}10${i}`);
  const { batchId, wamids } = await sendAndComplete(s, graph, { ...c, automationId: c.automationId!, verifyToken: '' }, phones);
  const w = (i: number) => wamids.get(phones[i])!;
  const to = (i: number) => phones[i].slice(1);
  const t0 = Date.parse('2026-03-04T10:00:00Z');
  const post = async (statuses: ReturnType<typeof waStatus>[]) => {
    const res = await postStatuses(s.url, c.appSecret, c.phoneNumberId, statuses);
    assert.equal(res.status, 200, res.text);
    await receiptsSettled(s);
  };
  // 0: read alone (delivered comes late); 1: delivered, then read; 2: read and delivered in one payload; 3: delivered only.
  await post([waStatus(w(0), 'read', to(0), t0 + 20_000)]);
  await post([waStatus(w(1), 'delivered', to(1), t0 + 5_000)]);
  await post([waStatus(w(1), 'read', to(1), t0 + 25_000)]);
  await post([waStatus(w(2), 'read', to(2), t0 + 30_000), waStatus(w(2), 'delivered', to(2), t0 + 10_000)]);
  await post([waStatus(w(3), 'delivered', to(3), t0 + 12_000)]);
  await post([waStatus(w(0), 'delivered', to(0), t0 + 15_000)]);
  await eventually(async () => (await messagesByPhone(s, batchId)).get(phones[2]).status === 'read');

  await until(() => events.delivered(both).size >= 7 && events.delivered(deliveredOnly).size >= 4);
  const seen = events.seen.filter((x) => x.path === both && x.answered === 200).map((x) => x.body);
  assert.equal(seen.length, 7, JSON.stringify(seen.map((b) => [b.type, b.data.phone])));
  const of = (i: number) => seen.filter((b) => b.data.phone === phones[i]).map((b) => b.type);
  for (const i of [0, 1, 2]) assert.deepEqual(of(i), ['message.delivered', 'message.read'], `message ${i}: in lifecycle order, once each`);
  assert.deepEqual(of(3), ['message.delivered']);
  const only = [...events.delivered(deliveredOnly).values()].map((v) => v[0].body);
  assert.deepEqual(only.map((b) => b.type), ['message.delivered', 'message.delivered', 'message.delivered', 'message.delivered']);
  assert.deepEqual(new Set(only.map((b) => b.data.phone)), new Set(phones), 'every delivered message, the read-first one too');

  // The delivered event of a read-first message reports the time it was reached (the read's) and the current state.
  const d0 = seen.find((b) => b.type === 'message.delivered' && b.data.phone === phones[0]);
  assert.equal(d0.timestamp, iso(t0 + 20_000));
  assert.equal(d0.data.delivered_at, iso(t0 + 20_000));
  assert.equal(d0.data.status, 'read');
  const d2 = seen.find((b) => b.type === 'message.delivered' && b.data.phone === phones[2]);
  assert.equal(d2.timestamp, iso(t0 + 10_000), 'delivered and read in one payload: each its own time');
  const r2 = seen.find((b) => b.type === 'message.read' && b.data.phone === phones[2]);
  assert.equal(r2.timestamp, iso(t0 + 30_000));

  // Created in that order: the delivered event's deliveries come first.
  const { rows } = await sql<{ type: string; phone: string; seq: string }>`
    SELECT e.type, e.payload -> 'data' ->> 'phone' AS phone, d.seq::text AS seq
    FROM events e JOIN event_deliveries d ON d.event_id = e.event_id JOIN event_endpoints p ON p.endpoint_id = d.endpoint_id
    WHERE e.company_id = ${c.companyId} AND p.url = ${events.origin + both}`.execute(s.service.deps.database.db);
  for (const i of [0, 1, 2]) {
    const seqOf = (type: string) => BigInt(rows.find((x) => x.type === type && x.phone === phones[i])!.seq);
    assert.ok(seqOf('message.delivered') < seqOf('message.read'), `message ${i}`);
  }
});
